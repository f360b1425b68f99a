"""Compiled loops over flat sequence arrays: translate, measure, gather, scatter, stage.

Packing and gathering millions of sequences with numpy temporaries costs
seconds; these loops run in parallel over sequences with no temporaries.
Per-sequence copies go through :func:`readalign.runtime.host_copy.copy_run`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..runtime.host_copy import copy_run


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
