"""The alignment kernels are compiled once per machine and kept in numba's disk cache.

Each test process gets a cache folder of its own (``NUMBA_CACHE_DIR``), so what it
asserts does not depend on what earlier runs left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import readalign.kernels.disk_cache as disk_cache
from conftest import HAS_GPU

from tests.support.oracle import dp_distance, replay
from tests.support.scored_oracle import align as oracle
from tests.support.scored_oracle import dna_scorer

pytestmark = pytest.mark.slow  # each case compiles the kernels afresh in new processes

SCRIPT = """
import json, random, sys
import readalign
rng = random.Random(5)
reads = ["".join(rng.choice("ACGT") for _ in range(rng.randint(1, 90))) for _ in range(60)]
windows = ["".join(rng.choice("ACGT") for _ in range(rng.randint(1, 120))) for _ in range(60)]
out = {}
backend, mode = sys.argv[1:3]
scoring = readalign.Scoring(1, 4, 6, 1) if mode == "local" else None
for k in map(int, sys.argv[3:]):
    r = readalign.align(reads, windows, k=k, backend=backend, mode=mode, scoring=scoring)
    out[k] = [[int(r.distance[i]), int(r.ref_start[i]), r.cigar(i)]
              + ([int(r.score[i]), int(r.query_start[i])] if scoring else [])
              for i in range(len(reads))]
print(json.dumps({"reads": reads, "windows": windows, "results": out}))
"""


def _run(cache_dir, *ks: int, backend: str = "cpu", kernel: str = "align_chunk",
         mode: str = "infix") -> tuple[dict, list[str]]:
    """Align the script's pairs with quadrant sizes ``ks`` in a new process (``mode`` "local":
    scored, with the BWA-like scoring).

    Returns the results and numba's cache log lines that name ``kernel``.
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "NUMBA_DEBUG_CACHE": "1"}
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT, backend, mode,
                          *map(str, ks)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    log = [ln for ln in lines + out.stderr.splitlines() if kernel in ln]
    return json.loads(lines[-1]), log


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("numba-cache")


def test_second_process_loads_the_kernel_from_the_disk_cache(cache_dir):
    _, first = _run(cache_dir, 16)
    assert any("saved" in ln for ln in first), first
    _, second = _run(cache_dir, 16)
    assert any("data loaded from" in ln for ln in second), second
    assert not any("saved" in ln for ln in second), second


def test_kernels_cached_by_separate_processes_load_side_by_side(cache_dir):
    """Quadrant sizes compiled in look-alike processes, then loaded into one, stay apart.

    The processes for k = 4 and k = 32 compile the same functions in the same order, so
    numba numbers their inner functions alike: only the per-size names keep one size's
    kernel from calling the other's code once both are loaded.
    """
    _run(cache_dir, 16)  # everything but the kernels below is cached from here on
    for k in (4, 32):
        _, log = _run(cache_dir, k)
        assert any("saved" in ln for ln in log), log
    data, log = _run(cache_dir, 4, 32, 16)
    assert not any("saved" in ln for ln in log), log
    results = data["results"]
    for i, (q, t) in enumerate(zip(data["reads"], data["windows"])):
        want = dp_distance(q, t, infix=True)[0]
        for k in ("4", "32", "16"):
            dist, start, cigar = results[k][i]
            assert dist == want, (k, q, t)
            assert replay(cigar, q, t, start)[0] == want, (k, q, t, cigar)
        assert results["4"][i] == results["16"][i] == results["32"][i]


def test_scored_kernels_cached_by_separate_processes_load_side_by_side(cache_dir):
    """The same for the scored kernels, every function they call named for their size.

    Before the result writer they share was named too, the k = 4 and k = 32 kernels each
    linked in a ``finish`` of the same number: loaded into one process, one kernel ran the
    other's traceback (wrong CIGARs in one order of loading, a crash in the other).
    """
    _run(cache_dir, 16, mode="local", kernel="align_scored_chunk")
    for k in (4, 32):
        _, log = _run(cache_dir, k, mode="local", kernel="align_scored_chunk")
        assert any("saved" in ln for ln in log), log
    for order in ((4, 32, 16), (32, 4, 16)):
        data, log = _run(cache_dir, *order, mode="local", kernel="align_scored_chunk")
        assert not any("saved" in ln for ln in log), log
        results = data["results"]
        for i, (q, t) in enumerate(zip(data["reads"], data["windows"])):
            want = oracle(q, t, dna_scorer(1, 4), 6, 1, "local")
            for k in map(str, order):
                nm, ref_start, cigar, score, query_start = results[k][i]
                assert (score, query_start, ref_start, cigar, nm) == (
                    want.score, want.query_start, want.ref_start, want.cigar, want.nm), (k, q, t)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_second_process_loads_the_cuda_kernels_from_the_disk_cache(tmp_path):
    first, log = _run(tmp_path, 16, backend="cuda", kernel="_kernel")
    assert sum("data saved" in ln for ln in log) == 2, log  # forward and traceback
    second, log = _run(tmp_path, 16, backend="cuda", kernel="_kernel")
    assert sum("data loaded" in ln for ln in log) == 2, log
    assert not any("saved" in ln for ln in log), log
    assert second == first
    for i, (q, t) in enumerate(zip(second["reads"], second["windows"])):
        assert second["results"]["16"][i][0] == dp_distance(q, t, infix=True)[0]


def test_a_change_to_any_kernel_source_makes_new_cache_entries(tmp_path):
    """The cache key covers every file the kernels may be compiled from (the packed pass's
    16-bit lane operations in ``lanes16.py`` were not covered before)."""
    folder = Path(disk_cache.__file__).parent
    copy = shutil.copytree(folder, tmp_path / "same", ignore=shutil.ignore_patterns("__pycache__"))
    assert disk_cache.sources_hash(copy) == disk_cache.sources_hash(folder)
    for name in ("lanes16.py", "scored_packed.py", "cpu.py"):
        changed = shutil.copytree(copy, tmp_path / name)
        (changed / name).write_text((changed / name).read_text() + "\n# changed\n")
        assert disk_cache.sources_hash(changed) != disk_cache.sources_hash(folder), name
