"""CPU batch driver: the quadrant algorithm over a batch of pairs on every core.

Pairs arrive sorted by length and cut into chunks; each chunk allocates its
scratch once, sized for its longest pair, and runs in parallel (``prange``).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit, prange

from .quadrant import build


@njit(cache=True)
def _vote_cpu(done):
    """One lane is its own warp on the CPU: leave the loop when it is done."""
    return done


@cache
def batch_driver(K: int):
    """Return the parallel batch function for quadrant size ``K`` (compiled once)."""
    ns = build(njit(cache=False), _vote_cpu, K)
    forward = ns.forward
    traceback = ns.traceback
    row_size = ns.row_size
    col_size = ns.col_size

    @njit(parallel=True, cache=False)
    def run(q, qoff, t, toff, order, chunk_bounds, infix, max_dist, n_code, eqx,
            with_cigar, slot_off, slots, dist, ref_start, ref_end, n_ops):
        """Align ``order[chunk_bounds[c]:chunk_bounds[c+1]]`` for every chunk c.

        Results go to position ``x`` of the output arrays for pair ``order[x]``;
        its CIGAR to ``slots[slot_off[x]:]``, ``n_ops[x]`` runs long.
        """
        nchunks = chunk_bounds.shape[0] - 1
        for c in prange(nchunks):
            lo = chunk_bounds[c]
            hi = chunk_bounds[c + 1]
            mmax = 0
            nmax = 0
            for x in range(lo, hi):
                p = order[x]
                mmax = max(mmax, qoff[p + 1] - qoff[p])
                nmax = max(nmax, toff[p + 1] - toff[p])
            row = np.empty(nmax + 1, np.int32)
            if with_cigar:
                rbuf = np.empty(row_size(mmax, nmax, K), np.int32)
                cbuf = np.empty(col_size(mmax, nmax, K), np.int32)
            else:
                rbuf = np.empty(1, np.int32)
                cbuf = np.empty(1, np.int32)
            strip = np.empty(K, np.int32)
            qk = np.empty(K, q.dtype)
            quad = np.empty((K + 1) * (K + 1), np.int32)
            for x in range(lo, hi):
                p = order[x]
                qb = qoff[p]
                m = qoff[p + 1] - qb
                tb = toff[p]
                n = toff[p + 1] - tb
                d, end_j = forward(q, qb, 1, m, t, tb, 1, n, infix, max_dist, n_code,
                                   with_cigar, row, 0, 1, rbuf, 0, 1, cbuf, 0, 1, strip, qk)
                dist[x] = d
                ref_start[x] = -1
                ref_end[x] = -1
                n_ops[x] = 0
                if d < 0:
                    continue
                ref_end[x] = end_j
                if with_cigar:
                    start, k_ops = traceback(q, qb, 1, m, t, tb, 1, n, infix, n_code, eqx,
                                             end_j, rbuf, 0, 1, cbuf, 0, 1, quad,
                                             slots, slot_off[x], 1)
                    ref_start[x] = start
                    n_ops[x] = k_ops
                elif not infix:
                    ref_start[x] = 0

    return run
