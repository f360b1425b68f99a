"""numba-compiled host helpers for the data paths around the kernels.

Packing and gathering millions of sequences with numpy temporaries costs
seconds; these loops run in parallel over sequences with no temporaries.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
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


@njit(parallel=True, cache=True)
def pack_rows(grid, offsets, table, use_table):
    """Concatenate the rows of ``grid`` (``offsets`` from their lengths), through ``table``."""
    count = grid.shape[0]
    out = np.zeros(offsets[count] + 1, dtype=grid.dtype)
    for i in prange(count):
        base = offsets[i]
        for j in range(offsets[i + 1] - base):
            v = grid[i, j]
            out[base + j] = table[min(v, 255)] if use_table else v
    return out


@njit(parallel=True, cache=True)
def translate(data, table):
    """``table[data]`` for uint8 data, in parallel."""
    out = np.empty(data.shape[0], dtype=np.uint8)
    for i in prange(data.shape[0]):
        out[i] = table[data[i]]
    return out


@njit(parallel=True, cache=True)
def gather(arr, starts, counts, out_offsets):
    """``out[out_offsets[i]:][:counts[i]] = arr[starts[i]:][:counts[i]]`` for every i."""
    out = np.zeros(out_offsets[-1], dtype=arr.dtype)
    for i in prange(starts.shape[0]):
        s = starts[i]
        o = out_offsets[i]
        for j in range(counts[i]):
            out[o + j] = arr[s + j]
    return out


@njit(parallel=True, cache=True)
def scatter(src, counts, dest_starts, dest):
    """Inverse of :func:`gather`: consecutive runs of ``src`` go to ``dest[dest_starts[i]:]``."""
    n = counts.shape[0]
    src_offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        src_offsets[i + 1] = src_offsets[i] + counts[i]
    for i in prange(n):
        s = src_offsets[i]
        d = dest_starts[i]
        for j in range(counts[i]):
            dest[d + j] = src[s + j]
