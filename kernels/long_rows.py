"""Linear-memory row passes of long pairs: the last row of a DP, not its matrix (CPU).

A *row pass* runs the DP of one rectangle, a ``rows`` sequence (``m`` codes, the DP's rows)
against a ``cols`` sequence (``n`` codes, its columns), row by row in one working row, and
keeps only what the Myers–Miller split of :mod:`readalign.engine.long` reads: the last row.
The long-pair driver cuts its sequences and reverses them before a pass, so the same pass
serves the forward half and the reverse half of every split, and the ends of infix and local
alignments. Scores are maximised as in :mod:`.scored_quadrant` (gap of length L:
``go + L * ge``; ``H`` any state, ``E`` ending in a move along the columns, ``F`` ending in a
move along the rows); unit edit costs are the scores 0 (match) and -1 (mismatch, N, each gap
symbol), so a distance is minus the pass's score.

The first row and column (the entry boundary) are the mode's:

* :data:`GLOBAL`: ``H[0][0] = 0``, ``H[0][j] = -(go + j ge)``, ``H[i][0] = -(go + i ge)``
  (column 0 is one vertical gap from the corner, so its F is its H, opened on row 0);
* :data:`INFIX`: as GLOBAL, but the first row is free (``H[0][j] = 0``);
* :data:`LOCAL`: Smith–Waterman with the clip bonus of :mod:`.scored_quadrant`: the first
  row holds ``clip``, the first column 0, H is floored at 0; the best cell is tracked;
* :data:`ANCHORED`: GLOBAL's boundary, no floor, and the best cell tracked as in LOCAL
  (the reverse pass that finds where a local alignment starts).

The best cell (LOCAL, ANCHORED) is the forward passes' rule (:func:`.quadrant.first_max`):
each row's first maximum scanning columns ``0..n``, the last row's counting ``clip`` more,
rows top down, a later row winning only when strictly greater; it starts at cell (0, 0)
with value 0 (plus ``clip`` when ``m == 0``).

Outputs, row ``m`` of the rectangle, each ``n + 1`` long at ``out_offsets[task]``:
``h`` (H), ``f`` (F) and ``f_open`` (the row the gap ending in F opened on: its first
inserted symbol is ``rows[f_open]``; a tie between opening and extending extends, the
longer gap). The unit-cost pass keeps no F: with linear gaps a gap crossing a split never
beats a cell crossing it, so the driver never reads one. Values are int64: a 1 Mbp pair's
scores (up to 1,000 a symbol) pass int32's range.

:func:`affine_rows` and :func:`unit_rows` run tasks ``lo..hi`` of a batch laid out as
:class:`readalign.engine.long.rows.PassBatch` describes; the host side
(:func:`readalign.engine.long.rows.row_passes`) hands chunks of tasks to threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .scored_quadrant import GLOBAL as GLOBAL
from .scored_quadrant import INFIX as INFIX
from .scored_quadrant import LOCAL as LOCAL
from .words import block_column, block_masks, fresh_columns

ANCHORED = 3
PASS_MODES = ("global", "infix", "local", "anchored")
"""Each pass mode's name, at its code."""
NEG = -(1 << 60)
"""Minus infinity in int64: far below any score, and still far from overflow after the
gap penalties a pass takes from it."""


@njit(cache=True, nogil=True)
def first_row(mode, go, ge, clip, j):
    """``H[0][j]`` of a pass in ``mode`` (the entry boundary's first row)."""
    if mode == LOCAL:
        return clip
    if mode == INFIX or j == 0:
        return np.int64(0)
    return -(go + j * ge)


@njit(cache=True, nogil=True)
def affine_pass(a, b, sub, size, costs, mode, h, f, fo):
    """One affine pass of ``a`` (rows) against ``b`` (columns); Gotoh's recurrences.

    ``sub[x * size + y]`` scores row code ``x`` against column code ``y``; ``costs`` is
    ``(go, ge, clip)``; ``h``, ``f``, ``fo`` (``len(b) + 1`` each) are the working row and,
    on return, row ``len(a)``. Returns the best cell ``(value, i, j)`` (LOCAL, ANCHORED;
    else ``(NEG, -1, -1)``).
    """
    go, ge, clip = costs
    m = a.shape[0]
    n = b.shape[0]
    oe = go + ge
    local = mode == LOCAL
    track = local or mode == ANCHORED
    for j in range(n + 1):
        h[j] = first_row(mode, go, ge, clip, j)
        f[j] = NEG
        fo[j] = 0
    best = np.int64(NEG)
    bi = -1
    bj = -1
    if track:
        best = clip if m == 0 and not local else np.int64(0)
        bi = 0
        bj = 0
    for i in range(1, m + 1):
        row = np.int64(a[i - 1]) * size
        diag = h[0]
        left = np.int64(0) if local else -(go + i * ge)
        h[0] = left
        if not local:
            f[0] = left
        e = np.int64(NEG)
        row_best = left
        row_j = 0
        for j in range(1, n + 1):
            up = h[j]
            ext = f[j] - ge
            opened = up - oe
            if ext >= opened:
                fv = ext
            else:
                fv = opened
                fo[j] = i - 1
            e = max(left - oe, e - ge)
            v = max(diag + sub[row + np.int64(b[j - 1])], max(e, fv))
            if local and v < 0:
                v = np.int64(0)
            if track and v > row_best:
                row_best = v
                row_j = j
            diag = up
            h[j] = v
            f[j] = fv
            left = v
        if track:
            if i == m:
                row_best += clip
            if row_best > best:
                best = row_best
                bi = i
                bj = row_j
    return best, bi, bj


@njit(cache=True, nogil=True)
def unit_pass(a, b, n_code, mode, h):
    """One unit-cost pass (edit distance as scores 0/-1; ``n_code`` never matches) of ``a``
    against ``b`` in GLOBAL or INFIX mode; ``h`` as in :func:`affine_pass`.

    Bit-parallel: Myers' algorithm in Hyyrö's block form (:func:`.words.block_column`),
    ``a`` the pattern down the rows in 64-bit blocks of vertical deltas, one step per column;
    the bottom row's distance moves by the last block's horizontal delta, so the whole last
    row comes out in ``O(m n / 64)`` time and ``O(m / 64)`` words besides the match masks.
    """
    m = a.shape[0]
    n = b.shape[0]
    top = 0 if mode == INFIX else 1  # D[0][j] - D[0][j-1]
    h[0] = -m
    if m == 0:
        for j in range(1, n + 1):
            h[j] = -top * j
        return
    masks = block_masks(a, n_code)
    columns = fresh_columns(m)
    score = m
    for j in range(n):
        score += block_column(masks, b[j], columns, top)
        h[j + 1] = -score


@njit(cache=True, nogil=True)
def affine_rows(seqs, lo, hi, scoring, mode, outs):
    """:func:`affine_pass` for tasks ``lo..hi``: ``seqs`` is ``(rows, row_offsets, cols,
    col_offsets)``, ``scoring`` ``(sub, size, (go, ge, clip))``, ``outs`` ``(h, f, f_open,
    out_offsets, best)`` (``best``: int64, three per task)."""
    rows, roff, cols, coff = seqs
    sub, size, costs = scoring
    h, f, fo, hoff, best = outs
    for x in range(lo, hi):
        o0 = hoff[x]
        o1 = hoff[x + 1]
        v, bi, bj = affine_pass(rows[roff[x]:roff[x + 1]], cols[coff[x]:coff[x + 1]], sub, size,
                                costs, mode, h[o0:o1], f[o0:o1], fo[o0:o1])
        best[3 * x] = v
        best[3 * x + 1] = bi
        best[3 * x + 2] = bj


@njit(cache=True, nogil=True)
def unit_rows(seqs, lo, hi, n_code, mode, h, hoff):
    """:func:`unit_pass` for tasks ``lo..hi`` (``seqs`` as in :func:`affine_rows`)."""
    rows, roff, cols, coff = seqs
    for x in range(lo, hi):
        unit_pass(rows[roff[x]:roff[x + 1]], cols[coff[x]:coff[x + 1]], n_code, mode,
                  h[hoff[x]:hoff[x + 1]])
