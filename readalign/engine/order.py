"""Compiled helpers that order pairs by length and cut them into batches.

Pairs of near-equal lengths run side by side (a warp's lanes, a CPU chunk's
scratch), so a batch is sorted by length first; long pairs go their own way.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.loops import parallel_loop


@njit(cache=True, nogil=True)
def counting_order(m, n, n_span):
    """Stable order of pairs by key ``m * n_span + n`` (small non-negative ints), in O(pairs)."""
    count = m.shape[0]
    keys = m * n_span + n
    hist = np.zeros(keys.max() + 2 if count else 1, dtype=np.int64)
    for i in range(count):
        hist[keys[i] + 1] += 1
    for k in range(1, hist.shape[0]):
        hist[k] += hist[k - 1]
    order = np.empty(count, dtype=np.int64)
    for i in range(count):
        order[hist[keys[i]]] = i
        hist[keys[i]] += 1
    return order


@parallel_loop(size=0)
def is_sorted_pairs(m, n):
    """True when pairs already come in (m, n) order (then no reordering is needed)."""
    bad = 0
    for i in prange(1, m.shape[0]):
        if m[i] < m[i - 1] or (m[i] == m[i - 1] and n[i] < n[i - 1]):
            bad += 1
    return bad == 0


@njit(cache=True, nogil=True)
def partition_long(order, m, n, limit):
    """Split ``order`` into (pairs with both lengths <= limit, the rest), keeping its order."""
    count = order.shape[0]
    short = np.empty(count, dtype=np.int64)
    long = np.empty(count, dtype=np.int64)
    ns = 0
    nl = 0
    for x in range(count):
        p = order[x]
        if m[p] > limit or n[p] > limit:
            long[nl] = p
            nl += 1
        else:
            short[ns] = p
            ns += 1
    return short[:ns], long[:nl]


@njit(cache=True, nogil=True)
def budget_bounds(idx, m, n, budget, max_items):
    """Cut ``idx`` into ranges of at most ``budget`` DP cells and ``max_items`` pairs (>= 1 each)."""
    bounds = np.empty(idx.shape[0] + 1, dtype=np.int64)
    nb = 0
    bounds[0] = 0
    cells = 0
    start = 0
    for x in range(idx.shape[0]):
        c = (m[idx[x]] + 1) * (n[idx[x]] + 1)
        if x > start and (cells + c > budget or x - start >= max_items):
            nb += 1
            bounds[nb] = x
            start = x
            cells = 0
        cells += c
    nb += 1
    bounds[nb] = idx.shape[0]
    return bounds[: nb + 1]


@parallel_loop(size=0)
def scatter_results(idx, dist, ref_start, ref_end, n_ops, out_dist, out_start, out_end, out_nops):
    """``out_x[idx[i]] = x[i]`` for the four per-pair result arrays, in one parallel pass."""
    for i in prange(idx.shape[0]):
        j = idx[i]
        out_dist[j] = dist[i]
        out_start[j] = ref_start[i]
        out_end[j] = ref_end[i]
        out_nops[j] = n_ops[i]


@parallel_loop(size=0)
def is_range(idx, start):
    """True when ``idx`` is ``start, start+1, ..., start+len(idx)-1``."""
    bad = 0
    for i in prange(idx.shape[0]):
        if idx[i] != start + i:
            bad += 1
    return bad == 0
