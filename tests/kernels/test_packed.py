"""The packed distance pass: two pairs a thread, 16-bit cells (issue 16's ablation kernel).

CPU: the plain-arithmetic lane operations against a per-half reference, and the packed pass
(the same source the GPU compiles) against the full-matrix oracle on random pairs of random
shapes and alphabets. CUDA simulator: the CUDA kernel against the CPU backend. GPU: Hopper's
16x2 min instructions against the plain ones, and the packed kernel against the 32-bit one on
a million mixed pairs.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_CHECKS, HAS_GPU, under_simulator
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from benchmarks.ablation import unsigned_lanes
from benchmarks.ablation.packed_pairs import cpu_packed, pair_up
from tests.gpu import packed_check
from tests.support.oracle import dp_distance

gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")

_apply_at = packed_check.apply_at(unsigned_lanes.swar_ops(njit), njit)


@njit
def _apply(a, b, c, out):
    for i in range(a.shape[0]):
        _apply_at(a, b, c, out, i)


def _halves(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return w & 0xFFFF, w >> 16


def test_plain_lane_operations_are_per_half_minima():
    a, b, c = (packed_check.lane_words(200_000, seed) for seed in (1, 2, 3))
    b[::7] = a[::7]
    out = np.empty((3, a.shape[0]), np.uint32)
    _apply(a, b, c, out)
    (alo, ahi), (blo, bhi), (clo, chi) = _halves(a), _halves(b), _halves(c)
    assert np.array_equal(_halves(out[0])[0], np.minimum(alo, blo))
    assert np.array_equal(_halves(out[0])[1], np.minimum(ahi, bhi))
    assert np.array_equal(_halves(out[1])[0], np.minimum(np.minimum(alo, blo), clo))
    assert np.array_equal(_halves(out[1])[1], np.minimum(np.minimum(ahi, bhi), chi))
    xlo, xhi = _halves(a & 0x01FF01FF)
    assert np.array_equal(_halves(out[2])[0], (xlo != 0).astype(np.uint32))
    assert np.array_equal(_halves(out[2])[1], (xhi != 0).astype(np.uint32))


def _flat(seqs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    off = np.zeros(len(seqs) + 1, np.int64)
    off[1:] = np.cumsum([len(s) for s in seqs])
    return np.frombuffer(b"".join(seqs) + b"\0", np.uint8), off


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(data=st.data(), k=st.sampled_from([4, 8, 16]), infix=st.booleans(),
       alphabet=st.sampled_from([b"\x00\x01\x02\x03\x04", b"\x00\x01", bytes(range(256))]),
       max_dist=st.sampled_from([-1, 0, 2, 9]))
def test_packed_pass_equals_the_oracle(data, k, infix, alphabet, max_dist):
    """Shapes shared by several pairs (two per thread) and shapes of their own (alone)."""
    n_code = 4 if len(alphabet) == 5 else -1
    shape = st.tuples(st.integers(0, 40), st.integers(0, 40))
    shapes = data.draw(st.lists(shape, min_size=1, max_size=3))
    sizes = data.draw(st.lists(st.one_of(st.sampled_from(shapes), shape), min_size=1,
                               max_size=24))
    seq = lambda n: data.draw(st.binary(min_size=n, max_size=n).map(  # noqa: E731
        lambda b: bytes(alphabet[x % len(alphabet)] for x in b)))
    reads = [seq(m) for m, _ in sizes]
    windows = [seq(n) for _, n in sizes]
    q, qoff = _flat(reads)
    t, toff = _flat(windows)
    order = np.lexsort((np.diff(toff), np.diff(qoff))).astype(np.int64)
    pair_a, pair_b = pair_up(qoff, toff, order)
    dist = np.full(len(reads), -9, np.int32)
    end = np.full(len(reads), -9, np.int64)
    cpu_packed(k)(q, qoff, t, toff, pair_a, pair_b, infix, max_dist, n_code, dist, end)
    for i, (r, w) in enumerate(zip(reads, windows)):
        d, e = dp_distance(r, w, infix, n_symbol=4 if n_code == 4 else None)
        if max_dist >= 0 and d > max_dist:
            assert dist[i] == -1, i
        else:
            assert (dist[i], end[i]) == (d, e), i


def test_pairs_share_a_thread_only_when_their_shapes_match():
    qoff = np.array([0, 3, 6, 8, 11, 14], np.int64)
    toff = np.array([0, 5, 10, 15, 20, 24], np.int64)
    pair_a, pair_b = pair_up(qoff, toff, np.arange(5, dtype=np.int64))
    assert list(zip(pair_a, pair_b)) == [(0, 1), (2, 2), (3, 3), (4, 4)]


@pytest.mark.slow
def test_packed_kernel_under_cuda_simulator():
    assert "identical to the 32-bit pass" in under_simulator(str(GPU_CHECKS / "packed_check.py"), "24",
                                                             "40")


@pytest.mark.gpu
@gpu
def test_dpx_lane_operations_equal_the_plain_ones():
    assert packed_check.compare_lane_ops(4_000_000) == 4_000_000


@pytest.mark.gpu
@gpu
def test_packed_kernel_equals_the_32_bit_kernel_on_a_million_pairs():
    assert packed_check.compare(1_000_000, seed=1, max_len=250, ks=(32,),
                                backend="cuda") == 6_000_000
