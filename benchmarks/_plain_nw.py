"""Baseline for the CPU cost question: a plain full-matrix NW with traceback (numba, all cores).

Same recurrence, infix mode, unit costs and tie rule as readalign, but the
whole (m+1) x (n+1) matrix is kept and traced directly: what the quadrant
algorithm replaces. Returns distances and CIGAR run counts (not strings).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def plain_nw_infix(q, qoff, t, toff, n_code):
    """Distance and CIGAR run count of every pair, full matrix per pair."""
    count = qoff.shape[0] - 1
    dist = np.empty(count, np.int32)
    runs = np.empty(count, np.int32)
    for p in prange(count):
        qb, m = qoff[p], qoff[p + 1] - qoff[p]
        tb, n = toff[p], toff[p + 1] - toff[p]
        D = np.empty((m + 1, n + 1), np.int32)
        for j in range(n + 1):
            D[0, j] = 0
        for i in range(1, m + 1):
            D[i, 0] = i
            a = q[qb + i - 1]
            for j in range(1, n + 1):
                c = np.int32((a != t[tb + j - 1]) | (a == n_code))
                D[i, j] = min(D[i - 1, j - 1] + c, min(D[i - 1, j], D[i, j - 1]) + 1)
        best = m
        j = 0
        for k in range(n + 1):
            if D[m, k] < best:
                best = D[m, k]
                j = k
        dist[p] = best
        i = m
        last = -1
        nruns = 0
        while i > 0:
            if j > 0:
                c = np.int32((q[qb + i - 1] != t[tb + j - 1]) | (q[qb + i - 1] == n_code))
                if D[i, j] == D[i - 1, j - 1] + c:
                    op = 0
                    i -= 1
                    j -= 1
                elif D[i, j] == D[i - 1, j] + 1:
                    op = 1
                    i -= 1
                else:
                    op = 2
                    j -= 1
            else:
                op = 1
                i -= 1
            if op != last:
                nruns += 1
                last = op
        runs[p] = nruns
    return dist, runs
