"""CPU backend for word-list distances: one block of query rows on every core."""

from __future__ import annotations

import numpy as np

from ..engine.packing import Packed
from ..kernels import words as kw
from ..runtime.backends import parallel_threads

TASKS_PER_THREAD = 8


def balanced_rows(r0: int, r1: int, upper: bool) -> np.ndarray:
    """Query rows in processing order; for the upper triangle, long and short rows alternate.

    Row i of the upper triangle has ``nc - i - 1`` pairs, so folding the range
    (r0, r1-1, r0+1, r1-2, ...) gives every contiguous share about equal work.
    """
    rows = np.arange(r0, r1, dtype=np.int64)
    if not upper or rows.shape[0] < 3:
        return rows
    half = (rows.shape[0] + 1) // 2
    folded = np.empty_like(rows)
    folded[0::2] = rows[:half]
    folded[1::2] = rows[half:][::-1]
    return folded


def dense_block(codes, r0: int, r1: int, *, upper: bool, max_distance: int, dtype,
                threads: int | None = None) -> np.ndarray:
    """Distances of query rows ``r0:r1`` against every choice, shape ``(r1-r0, nc)``.

    With ``upper`` only cells ``j > i`` are computed; the others are left
    as allocated (the caller fills them).
    """
    nc = len(codes.c)
    out = np.empty((r1 - r0, nc), dtype=dtype)
    if r1 <= r0 or nc == 0:
        return out
    rows = balanced_rows(r0, r1, upper)
    with parallel_threads(threads) as use:
        ntasks = max(1, min(rows.shape[0], use * TASKS_PER_THREAD))
        bounds = np.linspace(0, rows.shape[0], ntasks + 1).astype(np.int64)
        kw.dense_rows(codes.q.data, codes.q.offsets, codes.c.data, codes.c.offsets, rows, bounds,
                      r0, upper, max_distance, max(codes.alphabet, 1), out)
    return out


def pairwise(a: Packed, b: Packed, max_distance: int, threads: int | None = None) -> np.ndarray:
    """Distances of ``a[p]``, ``b[p]`` clipped at ``max_distance + 1``; ``LONG`` if both are long."""
    out = np.empty(len(a), dtype=np.int32)
    with parallel_threads(threads):
        kw.pairwise(a.data, a.offsets, b.data, b.offsets, max_distance, out)
    return out


def sparse_from_block(block: np.ndarray, r0: int, upper: bool, max_distance: int, dtype):
    """The ``(i, j, d)`` cells of a dense block within ``max_distance``, row-major."""
    counts = np.zeros(block.shape[0], dtype=np.int64)
    kw.count_within(block, r0, upper, max_distance, counts)
    starts = np.cumsum(counts) - counts
    total = int(counts.sum())
    ii = np.empty(total, dtype=np.int64)
    jj = np.empty(total, dtype=np.int64)
    dd = np.empty(total, dtype=dtype)
    kw.fill_within(block, r0, upper, max_distance, starts, ii, jj, dd)
    return ii, jj, dd


def block(codes, r0: int, r1: int, *, upper: bool, max_distance: int, sparse: bool, dtype,
          threads: int | None = None):
    """The backend contract: rows ``r0:r1`` as a dense block, or as ``(i, j, d)`` when sparse."""
    if not sparse:
        return dense_block(codes, r0, r1, upper=upper, max_distance=max_distance, dtype=dtype,
                           threads=threads)
    work = np.uint8 if max_distance < 255 else np.int32
    dense = dense_block(codes, r0, r1, upper=upper, max_distance=max_distance, dtype=work,
                        threads=threads)
    return sparse_from_block(dense, r0, upper, max_distance, dtype)


def mirror(out: np.ndarray) -> None:
    """Complete a square matrix whose upper triangle is filled (zero diagonal)."""
    if out.shape[0] > 0:
        kw.mirror_upper(out, 64)
