"""The GPU pipeline's early release of list inputs (simulator in CI)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import HANG_SECONDS, HAS_GPU, under_simulator

from readalign.engine.pylists import read_in_place


def test_released_strings_refuse_to_be_read():
    seqs = ["ACGT" * 10, "GATTACA"]
    before = [sys.getrefcount(s) for s in seqs]
    rows = read_in_place(seqs, None)
    rows.release()
    assert [sys.getrefcount(s) for s in seqs] == before
    with pytest.raises(RuntimeError, match="after release"):
        rows.stage_into(np.arange(2), 0, np.array([0, 40, 47]), np.empty(48, np.uint8),
                        translate=False)


CHECK = """
import numpy as np, readalign
from readalign.engine import pylists
from tests.gpu.gpu_check import mixed_pairs
released = []
real = pylists.StringRows.release
pylists.StringRows.release = lambda self: (released.append(len(self)), real(self))[0]
q, t = mixed_pairs(300, 7, 60)
q = [x.decode() for x in q]
t = [x.decode() for x in t]
s = readalign.Scoring(2, 3, 4, 1)
for kw in (dict(mode="infix"), dict(mode="local", scoring=s), dict(mode="global", scoring=s)):
    released.clear()
    g = readalign.align(q, t, backend="cuda", **kw)
    c = readalign.align(q, t, backend="cpu", **kw)
    assert released == [300, 300], released
    assert (g.distance == c.distance).all() and g.cigars() == c.cigars(), kw
    if "scoring" in kw:
        assert (g.score == c.score).all() and (g.query_start == c.query_start).all(), kw
print("ok")
"""


@pytest.mark.slow
def test_pipeline_with_early_release_equals_the_cpu():
    assert under_simulator("-c", CHECK, timeout=HANG_SECONDS).strip() == "ok"


THREADED_CODE = """
import sys
import numpy as np, readalign
from readalign.engine.pylists import pyrefs
rng = np.random.default_rng(3)
codes = np.frombuffer(b"ACGT", np.uint8)
reads = [codes[rng.integers(0, 4, 150)].tobytes().decode() for _ in range(600_000)]
wins = [codes[rng.integers(0, 4, 170)].tobytes().decode() for _ in range(600_000)]
wins[::7] = wins[:len(wins[::7])]  # one object in several places, on different threads
assert pyrefs.helper_threads(len(reads)) > 1
before = [sys.getrefcount(x) for x in reads[:2000] + wins[:2000]]
s = readalign.Scoring(1, 4, 6, 1)
for kw in ({}, dict(mode="local", scoring=s)):
    g = readalign.align(reads, wins, backend="cuda", **kw)
    assert [sys.getrefcount(x) for x in reads[:2000] + wins[:2000]] == before, kw
    c = readalign.align(reads[:20_000], wins[:20_000], backend="cpu", **kw)
    assert (g.distance[:20_000] == c.distance).all() and g.cigars()[:20_000] == c.cigars(), kw
print("ok")
"""


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_long_lists_held_on_helper_threads_through_the_gpu_keep_their_counts():
    """Two lists of 600,000, their references taken and dropped on helper threads around a
    GPU call (some objects held in several places): every count is back afterwards, and the
    results equal the CPU's."""
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", THREADED_CODE],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
