"""Compiled loops over flat sequence arrays: translate, measure, gather, scatter, stage.

Packing and gathering millions of sequences with numpy temporaries costs
seconds; these loops run in parallel over sequences with no temporaries.
Per-sequence copies go through :func:`readalign.runtime.host_copy.copy_run`.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..kernels.loops import parallel_loop
from ..runtime.host_copy import copy_run
from ..runtime.prefetch import prefetch_span

STAGE_AHEAD = 8
"""Sequences ahead whose letters a staging loop asks the cache for while it copies the current
one: in length order they lie all over the input (or the heap), each line a miss."""


@parallel_loop(size=0)
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


@parallel_loop(size=0)
def translate(data, table):
    """``table[data]`` for uint8 data, in parallel."""
    out = np.empty(data.shape[0], dtype=np.uint8)
    for i in prange(data.shape[0]):
        out[i] = table[data[i]]
    return out


@parallel_loop(size=1)
def gather_into(arr, starts, counts, out_offsets, out, base):
    """``out[base + out_offsets[i]:][:counts[i]] = arr[starts[i]:][:counts[i]]`` for every i."""
    for i in prange(starts.shape[0]):
        s = starts[i]
        o = base + out_offsets[i]
        copy_run(out[o:o + counts[i]], arr[s:s + counts[i]])


def gather(arr: np.ndarray, starts: np.ndarray, counts: np.ndarray,
           out_offsets: np.ndarray) -> np.ndarray:
    """``out[out_offsets[i]:][:counts[i]] = arr[starts[i]:][:counts[i]]`` for every i."""
    out = np.empty(out_offsets[-1], dtype=arr.dtype)
    gather_into(arr, starts, counts, out_offsets, out, 0)
    return out


@parallel_loop(size=1)
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


SCAN_BLOCK = 1 << 14
"""Elements per parallel task of :func:`_scan_in_place`."""


@parallel_loop(size=0)
def _scan_in_place(values, exclusive):
    """Prefix sums of ``values`` in place: each element becomes the sum of those before it
    (``exclusive``) or up to it; returns the total.

    Two parallel passes over blocks (block sums, then each block from its start), so a
    fresh array also takes its page faults on every core.
    """
    count = values.shape[0]
    blocks = (count + SCAN_BLOCK - 1) // SCAN_BLOCK
    starts = np.zeros(blocks + 1, dtype=np.int64)
    for b in prange(blocks):
        total = 0
        for i in range(b * SCAN_BLOCK, min(count, (b + 1) * SCAN_BLOCK)):
            total += values[i]
        starts[b + 1] = total
    for b in range(blocks):
        starts[b + 1] += starts[b]
    for b in prange(blocks):
        total = starts[b]
        for i in range(b * SCAN_BLOCK, min(count, (b + 1) * SCAN_BLOCK)):
            value = values[i]
            if exclusive:
                values[i] = total
            total += value
            if not exclusive:
                values[i] = total
    return starts[blocks]


@parallel_loop(size=4)
def _lengths_at(lengths, idx, lo, hi, dst_off):
    """``dst_off[i + 1]``: the length of item ``idx[lo + i]`` (``lo + i`` when ``idx`` is None)."""
    dst_off[0] = 0
    for i in prange(hi - lo):
        dst_off[i + 1] = lengths[lo + i] if idx is None else lengths[idx[lo + i]]


def chunk_offsets(lengths: np.ndarray, idx: np.ndarray | None, lo: int, hi: int,
                  dst_off: np.ndarray) -> int:
    """``dst_off[i]``: start of item ``idx[lo + i]`` (``lo + i`` when ``idx`` is None) among
    items ``lo..hi`` laid end to end; returns the total."""
    _lengths_at(lengths, idx, lo, hi, dst_off)
    return _scan_in_place(dst_off[1:hi - lo + 1], False)


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]``: where each item starts when laid end to end (int64)."""
    out = np.empty(lengths.shape[0] + 1, dtype=np.int64)
    chunk_offsets(lengths, None, 0, lengths.shape[0], out)
    return out


def pack_all(rows) -> np.ndarray:
    """Every row of ``rows`` (a packed form with ``offsets``, ``code_dtype`` and ``stage_into``)
    as codes end to end, with one sentinel after the last."""
    data = np.empty(rows.offsets[-1] + 1, dtype=rows.code_dtype)
    rows.stage_into(np.arange(len(rows), dtype=np.int64), 0, rows.offsets, data, translate=True)
    return data


@parallel_loop(size=0)
def length_bounds(m, n):
    """``(min m, max m, min n, max n)`` in one parallel pass (zeros when empty)."""
    count = m.shape[0]
    if count == 0:
        return 0, 0, 0, 0
    m_lo = m[0]
    m_hi = m[0]
    n_lo = n[0]
    n_hi = n[0]
    for i in prange(count):
        m_lo = min(m_lo, m[i])
        m_hi = max(m_hi, m[i])
        n_lo = min(n_lo, n[i])
        n_hi = max(n_hi, n[i])
    return m_lo, m_hi, n_lo, n_hi


@parallel_loop(size=0)
def total_length(m, n):
    """``m.sum() + n.sum()`` in one parallel pass (numpy's sum runs on one core)."""
    total = 0
    for i in prange(m.shape[0]):
        total += m[i] + n[i]
    return total


@parallel_loop(size=0)
def iota(count):
    """``np.arange(count)`` (int64), its pages first touched on every core."""
    out = np.empty(count, dtype=np.int64)
    for i in prange(count):
        out[i] = i
    return out


@parallel_loop(size=3)
def stage_grid(grid, idx, lo, dst_off, table, use_table, dst):
    """Rows ``idx[lo:]`` of a NUL-padded grid, concatenated at ``dst_off`` (through ``table``)."""
    count = dst_off.shape[0] - 1
    rows_at, row_bytes = grid.ctypes.data, grid.strides[0]
    for i in prange(count):
        if i + STAGE_AHEAD < count:
            ahead = i + STAGE_AHEAD
            prefetch_span(rows_at + idx[lo + ahead] * row_bytes,
                          (dst_off[ahead + 1] - dst_off[ahead]) * grid.itemsize)
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


@parallel_loop(size=4)
def stage_flat(data, offsets, idx, lo, dst_off, dst):
    """Sequences ``idx[lo:]`` of a packed array, concatenated at ``dst_off``."""
    count = dst_off.shape[0] - 1
    data_at = data.ctypes.data
    for i in prange(count):
        if i + STAGE_AHEAD < count:
            ahead = i + STAGE_AHEAD
            prefetch_span(data_at + offsets[idx[lo + ahead]] * data.itemsize,
                          (dst_off[ahead + 1] - dst_off[ahead]) * data.itemsize)
        src = offsets[idx[lo + i]]
        base = dst_off[i]
        copy_run(dst[base:dst_off[i + 1]], data[src:src + dst_off[i + 1] - base])
    dst[dst_off[count]] = 0


@parallel_loop(size=0)
def _slot_sizes(dist, out_off):
    """``2d+1`` runs per lane (none when ``d < 0``)."""
    for i in prange(dist.shape[0]):
        out_off[i] = 2 * dist[i] + 1 if dist[i] >= 0 else 0


def cigar_slots(dist: np.ndarray, out_off: np.ndarray) -> int:
    """Slot start per lane for ``2d+1`` runs (none when ``d < 0``); returns the total."""
    _slot_sizes(dist, out_off)
    return _scan_in_place(out_off, True)


@parallel_loop(size=1)
def place_lanes(lo, dist, start, end, n_ops, out_dist, out_start, out_end, out_nops):
    """A chunk's per-lane results at ``out_x[lo + i]``, in one parallel pass (no runs when
    ``n_ops`` is None); a fresh result takes its page faults on every core."""
    for i in prange(dist.shape[0]):
        out_dist[lo + i] = dist[i]
        out_start[lo + i] = start[i]
        out_end[lo + i] = end[i]
        out_nops[lo + i] = 0 if n_ops is None else n_ops[i]


@parallel_loop(size=2)
def place_offsets(lo, base, run_off, out_off):
    """A chunk's pairs' run offsets (``run_off``, from 0) at ``out_off[lo + 1:]``, from ``base``."""
    for i in prange(run_off.shape[0] - 1):
        out_off[lo + i + 1] = base + run_off[i + 1]


@parallel_loop(size=2)
def place_scored(lo, base, score, end_i, q_start, nm, ref_start, end_j, run_off, out_score,
                 out_q_end, out_q_start, out_dist, out_ref_start, out_ref_end, out_nops, out_off):
    """A scored chunk's per-lane results, run counts and run offsets (``run_off``, from 0; placed
    from ``base``) at ``out_x[lo + i]``, in one parallel pass (a fresh result takes its page
    faults on every core)."""
    for i in prange(score.shape[0]):
        out_score[lo + i] = score[i]
        out_q_end[lo + i] = end_i[i]
        out_q_start[lo + i] = q_start[i]
        out_dist[lo + i] = nm[i]
        out_ref_start[lo + i] = ref_start[i]
        out_ref_end[lo + i] = end_j[i]
        out_nops[lo + i] = run_off[i + 1] - run_off[i]
        out_off[lo + i + 1] = base + run_off[i + 1]
