"""Both builds of a parallel loop give the same results, and each call runs the build its size picks."""

from __future__ import annotations

import numpy as np
import pytest
from readalign.kernels import loops

from readalign.engine import flatseq
from readalign.engine.order import is_range


@pytest.fixture(scope="module")
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_scan_builds_agree_with_numpy(rng):
    values = rng.integers(0, 1000, 3 * flatseq.SCAN_BLOCK + 17).astype(np.int64)
    want = np.cumsum(values)
    for build in (flatseq._scan_in_place.serial, flatseq._scan_in_place.parallel):
        got = values.copy()
        assert build(got, False) == want[-1]
        assert np.array_equal(got, want)
        got = values.copy()
        build(got, True)
        assert np.array_equal(got, np.concatenate([[0], want[:-1]]))


def test_reductions_agree(rng):
    m = rng.integers(1, 500, 50_000)
    n = rng.integers(1, 500, 50_000)
    want = (m.min(), m.max(), n.min(), n.max())
    assert flatseq.length_bounds.serial(m, n) == want
    assert flatseq.length_bounds.parallel(m, n) == want
    idx = np.arange(5, 50_005, dtype=np.int64)
    for build in (is_range.serial, is_range.parallel):
        assert build(idx, 5)
        idx[-1] += 1
        assert not build(idx, 5)
        idx[-1] -= 1


def test_size_picks_the_build(monkeypatch):
    seen = []
    loop = flatseq.iota
    monkeypatch.setattr(loop, "serial", lambda count: seen.append("serial") or np.arange(count))
    monkeypatch.setattr(loop, "parallel", lambda count: seen.append("parallel") or np.arange(count))
    loop(loops.SERIAL_BELOW - 1)
    loop(loops.SERIAL_BELOW)
    loop(np.int64(3))
    assert seen == ["serial", "parallel", "serial"]


def test_builds_are_cached_apart():
    loop = flatseq.iota
    assert loop.serial.py_func.__qualname__ == "iota__serial"
    assert loop.parallel.py_func.__qualname__ == "iota"
    assert loop.__doc__ == loop.parallel.py_func.__doc__
