"""Which pairs share a thread in the packed pass (:mod:`.packed`), and its CPU driver."""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit
from readalign.kernels.cpu import vote_alone
from readalign.kernels.quadrant import FAST_PATH_MAX

from . import packed, unsigned_lanes


@njit(cache=True)
def pair_up(qoff, toff, order):
    """Threads of two pairs of equal read and window length, walking ``order`` (length-sorted):
    neighbours of one shape share a thread; a pair left alone is its own partner.
    Returns ``(pair_a, pair_b)``."""
    count = order.shape[0]
    pair_a = np.empty(count, np.int64)
    pair_b = np.empty(count, np.int64)
    threads = 0
    x = 0
    while x < count:
        a = order[x]
        b = a
        if x + 1 < count:
            c = order[x + 1]
            if (qoff[c + 1] - qoff[c] == qoff[a + 1] - qoff[a]
                    and toff[c + 1] - toff[c] == toff[a + 1] - toff[a]):
                b = c
        pair_a[threads] = a
        pair_b[threads] = b
        threads += 1
        x += 1 if b == a else 2
    return pair_a[:threads], pair_b[:threads]


@cache
def cpu_packed(K: int):
    """The packed pass on the CPU with the plain-arithmetic lane operations: the same source
    the GPU compiles, so tests can hold it against the 32-bit pass and an oracle."""
    thread2 = packed.build(njit, vote_alone, unsigned_lanes.swar_ops(njit), K).thread2

    @njit
    def run(q, qoff, t, toff, pair_a, pair_b, infix, max_dist, n_code, dist, ref_end):
        row = np.empty(FAST_PATH_MAX + 1, np.uint32)
        strip = np.empty(K, np.uint32)
        qk = np.empty(K, np.uint32)
        for p in range(pair_a.shape[0]):
            thread2(q, qoff, t, toff, pair_a, pair_b, p, infix, max_dist, n_code, dist, ref_end,
                    row, strip, qk)

    return run
