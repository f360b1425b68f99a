"""The row pass seam: a batch of rectangles in, the last row of each DP out.

:func:`row_passes` is the one call the long-pair driver makes for DP work; ``backend``
names the implementation (:data:`ROW_PASSES`). A pass is defined in
:mod:`readalign.kernels.long_rows` (modes, entry boundary, best-cell rule, outputs); this
module lays a batch out and runs the CPU implementation on a thread per core.

The seam, for any implementation::

    row_passes(batch: PassBatch, costs: PassCosts, threads: int | None) -> PassResults

* ``batch.rows`` / ``batch.cols``: every task's row and column codes concatenated (any
  unsigned integer dtype, the same for both), task ``x`` at ``row_offsets[x]:row_offsets[x+1]``
  and ``col_offsets[x]:col_offsets[x+1]`` (int64, ``count + 1``), already cut and reversed
  as the task needs; ``batch.mode``: one pass mode for the whole batch;
* ``costs``: ``sub`` (int32, ``size * size``, row code major; None for unit edit costs),
  ``n_code`` (unit costs: the code that never matches, -1 none), ``gap_open``,
  ``gap_extend``, ``clip``;
* :class:`PassResults`: ``h``, ``f`` (int64) and ``f_open`` (int64), task ``x``'s
  ``n_x + 1`` values at ``offsets[x]:offsets[x+1]`` (``f`` and ``f_open`` None for unit
  costs), and ``best`` (int64, ``count x 3``: value, row, column of the best cell in LOCAL
  and ANCHORED modes).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import njit

from ...kernels.long_rows import affine_rows, unit_rows
from ...runtime.backends import cpu_threads


class PassCosts(NamedTuple):
    """What a pass scores with: a substitution table and affine gaps, or unit edit costs."""

    sub: np.ndarray | None  # int32, sub[a * size + b]; None: unit edit costs
    size: int
    n_code: int
    gap_open: int
    gap_extend: int
    clip: int


class PassBatch(NamedTuple):
    """Rectangles of one pass mode: their row and column codes, concatenated."""

    rows: np.ndarray
    row_offsets: np.ndarray
    cols: np.ndarray
    col_offsets: np.ndarray
    mode: int

    def __len__(self) -> int:
        return self.row_offsets.shape[0] - 1


class PassResults(NamedTuple):
    """The last row of every task of a batch (see the module docstring)."""

    h: np.ndarray
    f: np.ndarray | None
    f_open: np.ndarray | None
    offsets: np.ndarray
    best: np.ndarray


UNIT = PassCosts(None, 0, -1, 0, 1, 0)
"""Unit edit costs, text (no code is N); ``UNIT._replace(n_code=...)`` for DNA."""

MIN_CHUNK_CELLS = 1 << 22
"""Cells below which a chunk of tasks is not split further among threads."""


def _chunks(batch: PassBatch, threads: int) -> list[tuple[int, int]]:
    """Task ranges of about equal cells, at most ``4 * threads`` of them (tasks whole)."""
    m = np.diff(batch.row_offsets)
    n = np.diff(batch.col_offsets)
    cells = np.cumsum((m + 1) * (n + 1))
    count = len(batch)
    if count == 0:
        return []
    total = int(cells[-1])
    parts = max(1, min(count, 4 * threads, total // MIN_CHUNK_CELLS + 1))
    cuts = np.searchsorted(cells, np.linspace(0, total, parts + 1)[1:-1], side="left") + 1
    bounds = np.unique(np.concatenate(([0], np.minimum(cuts, count), [count])))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def cpu_passes(batch: PassBatch, costs: PassCosts, threads: int | None) -> PassResults:
    """:func:`row_passes` on the CPU: chunks of tasks on a thread per core (the compiled
    passes release the GIL)."""
    count = len(batch)
    widths = np.diff(batch.col_offsets) + 1
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(widths, out=offsets[1:])
    h = np.empty(int(offsets[-1]), np.int64)
    best = np.full(3 * count, -1, np.int64)
    seqs = (batch.rows, batch.row_offsets, batch.cols, batch.col_offsets)
    if costs.sub is None:
        f = f_open = None

        def run(span):
            unit_rows(seqs, span[0], span[1], np.int64(costs.n_code), batch.mode, h, offsets)
    else:
        f = np.empty_like(h)
        f_open = np.empty_like(h)
        scoring = (costs.sub, np.int64(costs.size),
                   (np.int64(costs.gap_open), np.int64(costs.gap_extend), np.int64(costs.clip)))

        def run(span):
            affine_rows(seqs, span[0], span[1], scoring, batch.mode, (h, f, f_open, offsets, best))
    use = cpu_threads(threads)
    spans = _chunks(batch, use)
    if use <= 1 or len(spans) <= 1:
        for span in spans:
            run(span)
    else:
        with ThreadPoolExecutor(max_workers=min(use, len(spans))) as pool:
            list(pool.map(run, spans))
    return PassResults(h, f, f_open, offsets, best.reshape(count, 3))


ROW_PASSES = {"cpu": cpu_passes}
"""Row pass implementations by backend name (the driver picks one with :func:`row_passes`)."""


def row_passes(batch: PassBatch, costs: PassCosts, backend: str = "cpu",
               threads: int | None = None) -> PassResults:
    """The last rows of every rectangle of ``batch``, computed by ``backend``'s pass."""
    return ROW_PASSES[backend](batch, costs, threads)


@njit(cache=True, nogil=True)
def _gather(sources, pieces, out_offsets, out):
    """Each piece ``(source, start, length, reversed)`` of ``pieces`` (int64, four a row)
    copied from ``sources[source]`` to ``out`` at ``out_offsets``, backwards if reversed."""
    q, t = sources
    for x in range(pieces.shape[0]):
        src = q if pieces[x, 0] == 0 else t
        start = pieces[x, 1]
        length = pieces[x, 2]
        o = out_offsets[x]
        if pieces[x, 3]:
            for e in range(length):
                out[o + e] = src[start + length - 1 - e]
        else:
            for e in range(length):
                out[o + e] = src[start + e]


def gather_pieces(q: np.ndarray, t: np.ndarray, pieces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pieces of ``q`` (source 0) and ``t`` (source 1) concatenated: ``(codes, offsets)``.

    ``pieces`` holds ``(source, start, length, reversed)`` rows (int64); the codes get one
    element of padding after the last, as :class:`..packing.Packed` keeps it."""
    pieces = np.asarray(pieces, np.int64).reshape(-1, 4)
    offsets = np.zeros(pieces.shape[0] + 1, np.int64)
    np.cumsum(pieces[:, 2], out=offsets[1:])
    out = np.zeros(int(offsets[-1]) + 1, q.dtype)
    _gather((q, t.astype(q.dtype, copy=False)), pieces, offsets, out)
    return out, offsets
