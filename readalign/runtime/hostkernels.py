"""numba-compiled host helpers for the data paths around the kernels.

Packing and gathering millions of sequences with numpy temporaries costs
seconds; these loops run in parallel over sequences with no temporaries.
Per-sequence copies go through :func:`copy_run` on slices.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(nogil=True, cache=True)
def copy_run(dst, src):
    """``dst[k] = src[k]`` for every k of ``src``.

    A loop over two slices with a non-negative index vectorises (7-15 GB/s per
    core here); numba's slice assignment runs at about 2.5 GB/s and a loop that
    indexes a 2-D row or adds offsets to the index at about 1-2 GB/s.
    """
    for k in range(src.shape[0]):
        dst[k] = src[k]


COPY_BLOCK = 1 << 18
"""Elements per parallel task in :func:`copy_into`."""


@njit(parallel=True, nogil=True, cache=True)
def copy_into(dst, pos, src):
    """``dst[pos:pos + len(src)] = src`` on every core (a fresh ``dst`` takes its page faults in parallel)."""
    n = src.shape[0]
    for b in prange((n + COPY_BLOCK - 1) // COPY_BLOCK):
        lo = b * COPY_BLOCK
        hi = min(lo + COPY_BLOCK, n)
        copy_run(dst[pos + lo:pos + hi], src[lo:hi])


@njit(parallel=True, nogil=True, cache=True)
def fixed_width_lengths(grid):
    """Length of each row of a NUL-padded 2-D symbol grid (position after the last non-NUL)."""
    count, width = grid.shape
    out = np.zeros(count, dtype=np.int64)
    for i in prange(count):
        n = width
        while n > 0 and grid[i, n - 1] == 0:
            n -= 1
        out[i] = n
    return out


@njit(parallel=True, nogil=True, cache=True)
def translate(data, table):
    """``table[data]`` for uint8 data, in parallel."""
    out = np.empty(data.shape[0], dtype=np.uint8)
    for i in prange(data.shape[0]):
        out[i] = table[data[i]]
    return out


@njit(parallel=True, nogil=True, cache=True)
def gather(arr, starts, counts, out_offsets):
    """``out[out_offsets[i]:][:counts[i]] = arr[starts[i]:][:counts[i]]`` for every i."""
    out = np.empty(out_offsets[-1], dtype=arr.dtype)
    for i in prange(starts.shape[0]):
        s = starts[i]
        o = out_offsets[i]
        copy_run(out[o:o + counts[i]], arr[s:s + counts[i]])
    return out


@njit(parallel=True, nogil=True, cache=True)
def scatter(src, counts, dest_starts, dest):
    """Inverse of :func:`gather`: consecutive runs of ``src`` go to ``dest[dest_starts[i]:]``."""
    n = counts.shape[0]
    src_offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        src_offsets[i + 1] = src_offsets[i] + counts[i]
    for i in prange(n):
        s = src_offsets[i]
        d = dest_starts[i]
        copy_run(dest[d:d + counts[i]], src[s:s + counts[i]])


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


@njit(parallel=True, nogil=True, cache=True)
def is_sorted_pairs(m, n):
    """True when pairs already come in (m, n) order (then no reordering is needed)."""
    bad = 0
    for i in prange(1, m.shape[0]):
        if m[i] < m[i - 1] or (m[i] == m[i - 1] and n[i] < n[i - 1]):
            bad += 1
    return bad == 0


@njit(nogil=True, cache=True)
def chunk_offsets(lengths, idx, lo, hi, dst_off):
    """``dst_off[i]``: start of pair ``idx[lo + i]``'s sequence in a chunk; returns the total."""
    dst_off[0] = 0
    for i in range(hi - lo):
        dst_off[i + 1] = dst_off[i] + lengths[idx[lo + i]]
    return dst_off[hi - lo]


@njit(parallel=True, nogil=True, cache=True)
def stage_grid(grid, idx, lo, dst_off, table, use_table, dst):
    """Rows ``idx[lo:]`` of a NUL-padded grid, concatenated at ``dst_off`` (through ``table``)."""
    count = dst_off.shape[0] - 1
    for i in prange(count):
        row = idx[lo + i]
        base = dst_off[i]
        if use_table:
            for j in range(dst_off[i + 1] - base):
                c = grid[row, j]
                if c < 256:
                    dst[base + j] = table[c & 255]
                else:
                    dst[base + j] = table[0]
        else:
            copy_run(dst[base:dst_off[i + 1]], grid[row, :dst_off[i + 1] - base])
    dst[dst_off[count]] = 0


@njit(parallel=True, nogil=True, cache=True)
def stage_flat(data, offsets, idx, lo, dst_off, dst):
    """Sequences ``idx[lo:]`` of a packed array, concatenated at ``dst_off``."""
    count = dst_off.shape[0] - 1
    for i in prange(count):
        src = offsets[idx[lo + i]]
        base = dst_off[i]
        copy_run(dst[base:dst_off[i + 1]], data[src:src + dst_off[i + 1] - base])
    dst[dst_off[count]] = 0


@njit(nogil=True, cache=True)
def cigar_slots(dist, out_off):
    """Slot start per lane for ``2d+1`` runs (none when ``d < 0``); returns the total."""
    total = 0
    for i in range(dist.shape[0]):
        out_off[i] = total
        if dist[i] >= 0:
            total += 2 * dist[i] + 1
    return total


@njit(parallel=True, nogil=True, cache=True)
def scatter_results(idx, dist, ref_start, ref_end, n_ops, out_dist, out_start, out_end, out_nops):
    """``out_x[idx[i]] = x[i]`` for the four per-pair result arrays, in one parallel pass."""
    for i in prange(idx.shape[0]):
        j = idx[i]
        out_dist[j] = dist[i]
        out_start[j] = ref_start[i]
        out_end[j] = ref_end[i]
        out_nops[j] = n_ops[i]


@njit(parallel=True, nogil=True, cache=True)
def is_range(idx, start):
    """True when ``idx`` is ``start, start+1, ..., start+len(idx)-1``."""
    bad = 0
    for i in prange(idx.shape[0]):
        if idx[i] != start + i:
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


@njit(cache=True, nogil=True)
def decimal_digits(v):
    """Number of decimal digits of non-negative ``v``."""
    n = 1
    while v >= 10:
        n += 1
        v //= 10
    return n


@njit(cache=True, nogil=True)
def write_decimal(buf, pos, v):
    """Write non-negative ``v`` in decimal ASCII at ``buf[pos:]``; return the next position."""
    n = decimal_digits(v)
    for k in range(n - 1, -1, -1):
        buf[pos + k] = 48 + v % 10
        v //= 10
    return pos + n
