"""The alignment kernels are compiled once per machine and kept in numba's disk cache.

Each test process gets a cache folder of its own (``NUMBA_CACHE_DIR``), so what it
asserts does not depend on what earlier runs left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import HAS_GPU
from oracle import dp_distance, replay

SCRIPT = """
import json, random, sys
import readalign
rng = random.Random(5)
reads = ["".join(rng.choice("ACGT") for _ in range(rng.randint(1, 90))) for _ in range(60)]
windows = ["".join(rng.choice("ACGT") for _ in range(rng.randint(1, 120))) for _ in range(60)]
out = {}
for k in map(int, sys.argv[2:]):
    r = readalign.align(reads, windows, k=k, backend=sys.argv[1])
    out[k] = [[int(r.distance[i]), int(r.ref_start[i]), r.cigar(i)] for i in range(len(reads))]
print(json.dumps({"reads": reads, "windows": windows, "results": out}))
"""


def _run(cache_dir, *ks: int, backend: str = "cpu",
         kernel: str = "align_chunk") -> tuple[dict, list[str]]:
    """Align the script's pairs with quadrant sizes ``ks`` in a new process.

    Returns the results and numba's cache log lines that name ``kernel``.
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "NUMBA_DEBUG_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", SCRIPT, backend, *map(str, ks)], env=env,
                         capture_output=True, text=True, check=True)
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
