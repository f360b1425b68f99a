"""Myers–Miller splits: a global alignment problem cut until its pieces are leaves.

A *problem* is the global alignment of ``q[i0:i1]`` against ``t[j0:j1]`` of one pair, from
a plain start (a gap at its first cell opens there) to any end state. Each level of
:func:`split_all` cuts every open problem of every pair at once, its forward and reverse
half-passes in one batch of :func:`.rows.row_passes`:

* the longer side is halved (rows when ``rows >= cols``, else columns, the same pass on
  the transposed rectangle: substitution tables are symmetric);
* at the middle row, column ``x`` scores ``H_fwd[x] + H_rev[w - x]`` when the optimal
  path crosses it in a cell, and ``F_fwd[x] + F_rev[w - x] + go`` when it crosses inside a
  vertical gap (both halves charged the one opening);
* **tie rule**: the leftmost best ``x``, and at one ``x`` the cell crossing before the gap
  crossing;
* a cell crossing at ``x`` leaves two problems meeting at cell (mid, x); a gap crossing is
  written out whole: the gap opened on row ``a`` (``f_open`` of the forward half) and
  closes on row ``b`` (of the reverse half), so the problems ``q[i0:a] x t[j0:x]`` and
  ``q[b:i1] x t[x:j1]`` are plain again, with ``b - a`` insertions between them
  (deletions for a column split). The parts' optima add up to the problem's: a part that
  ended or started in the same gap would score above the optimum.

A problem with an empty side is one gap run; one with both sides at most ``leaf`` is a
*leaf* (:class:`Leaf`), aligned later with the others in one batch. Every split halves a
side, so a pair takes about ``log2(max(m, n) / leaf)`` levels and about twice its matrix's
cells in passes; the pieces a pair becomes number at most ``m + n``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ...kernels.long_rows import GLOBAL, NEG
from ...kernels.quadrant import OP_D, OP_I
from .rows import PassBatch, PassCosts, gather_pieces, row_passes

GAP = 1
CLIP = 2
"""Kinds of :class:`Run`: an alignment's gap (scored as one), a local alignment's soft clip."""


class Problem(NamedTuple):
    """The global alignment of ``q[i0:i1]`` against ``t[j0:j1]`` of pair ``pair``."""

    pair: int
    i0: int
    i1: int
    j0: int
    j1: int


class Leaf(NamedTuple):
    """A problem small enough for the short path (both sides at most the leaf size)."""

    pair: int
    i0: int
    i1: int
    j0: int
    j1: int


class Run(NamedTuple):
    """A CIGAR run the split writes itself: ``length`` of ``op``, a gap or a clip."""

    kind: int
    op: int
    length: int


class Split(NamedTuple):
    """Where a problem's optimal path crosses its middle: value, position, gap rows."""

    value: int
    x: int
    gap: bool
    a: int
    b: int


def place(problem: Problem, leaf: int) -> list:
    """``problem`` as the pieces it stands for now: nothing, one gap run, a leaf, or itself
    (still to split)."""
    rows = problem.i1 - problem.i0
    cols = problem.j1 - problem.j0
    if rows == 0 and cols == 0:
        return []
    if rows == 0:
        return [Run(GAP, OP_D, cols)]
    if cols == 0:
        return [Run(GAP, OP_I, rows)]
    if rows <= leaf and cols <= leaf:
        return [Leaf(*problem)]
    return [problem]


def by_rows(problem: Problem) -> bool:
    """Whether ``problem`` is cut across its rows (the longer side; rows on a tie)."""
    return problem.i1 - problem.i0 >= problem.j1 - problem.j0


def middle(problem: Problem) -> int:
    """The row (or column) ``problem`` is cut at."""
    if by_rows(problem):
        return problem.i0 + (problem.i1 - problem.i0) // 2
    return problem.j0 + (problem.j1 - problem.j0) // 2


def half_tasks(problem: Problem, qb: int, tb: int) -> tuple[list, list]:
    """The pieces (``(source, start, length, reversed)``, q is source 0) of the two
    half-passes' rows and columns: the forward half, then the reverse half."""
    i0, i1, j0, j1 = problem[1:]
    mid = middle(problem)
    if by_rows(problem):
        rows = [(0, qb + i0, mid - i0, 0), (0, qb + mid, i1 - mid, 1)]
        cols = [(1, tb + j0, j1 - j0, 0), (1, tb + j0, j1 - j0, 1)]
    else:
        rows = [(1, tb + j0, mid - j0, 0), (1, tb + mid, j1 - mid, 1)]
        cols = [(0, qb + i0, i1 - i0, 0), (0, qb + i0, i1 - i0, 1)]
    return rows, cols


@njit(cache=True, nogil=True)
def choose(fwd, rev, go, affine):
    """The crossing of the middle by :mod:`.split`'s tie rule: ``(value, x, gap, a, b)``.

    ``fwd`` and ``rev`` are the halves' ``(h, f, f_open)``, all ``w + 1`` long; ``a`` and
    ``b`` are the gap's ``f_open`` in each half (0 for a cell crossing)."""
    hf, ff, of = fwd
    hr, fr, orv = rev
    w = hf.shape[0] - 1
    best = np.int64(NEG)
    bx = -1
    gap = False
    for x in range(w + 1):
        v = hf[x] + hr[w - x]
        if v > best:
            best = v
            bx = x
            gap = False
        if affine:
            g = ff[x] + fr[w - x] + go
            if g > best:
                best = g
                bx = x
                gap = True
    if gap:
        return best, bx, gap, of[bx], orv[w - bx]
    return best, bx, gap, 0, 0


def parts(problem: Problem, cut: Split) -> list[Problem | Run]:
    """The problems (and the gap run) ``problem`` becomes at ``cut``."""
    p, i0, i1, j0, j1 = problem
    mid = middle(problem)
    if by_rows(problem):
        j = j0 + cut.x
        if not cut.gap:
            return [Problem(p, i0, mid, j0, j), Problem(p, mid, i1, j, j1)]
        a, b = i0 + cut.a, i1 - cut.b
        return [Problem(p, i0, a, j0, j), Run(GAP, OP_I, b - a), Problem(p, b, i1, j, j1)]
    i = i0 + cut.x
    if not cut.gap:
        return [Problem(p, i0, i, j0, mid), Problem(p, i, i1, mid, j1)]
    a, b = j0 + cut.a, j1 - cut.b
    return [Problem(p, i0, i, j0, a), Run(GAP, OP_D, b - a), Problem(p, i, i1, b, j1)]


class Sequences(NamedTuple):
    """The pairs' codes: ``q`` and ``t`` flat, pair ``p``'s read at ``qb[p]``, window at ``tb[p]``."""

    q: np.ndarray
    t: np.ndarray
    qb: np.ndarray
    tb: np.ndarray


def _cut_level(open_problems: list[Problem], seqs: Sequences, costs: PassCosts, backend: str,
               threads: int | None) -> list[Split]:
    """One level: both half-passes of every open problem in one batch, and each one's cut."""
    rows, cols = [], []
    for problem in open_problems:
        r, c = half_tasks(problem, int(seqs.qb[problem.pair]), int(seqs.tb[problem.pair]))
        rows += r
        cols += c
    row_codes, row_off = gather_pieces(seqs.q, seqs.t, np.array(rows, np.int64))
    col_codes, col_off = gather_pieces(seqs.q, seqs.t, np.array(cols, np.int64))
    res = row_passes(PassBatch(row_codes, row_off, col_codes, col_off, GLOBAL), costs, backend,
                     threads)
    affine = res.f is not None
    cuts = []
    for x in range(len(open_problems)):
        halves = []
        for task in (2 * x, 2 * x + 1):
            lo, hi = res.offsets[task], res.offsets[task + 1]
            h = res.h[lo:hi]
            halves.append((h, res.f[lo:hi], res.f_open[lo:hi]) if affine else (h, h, h))
        cuts.append(Split(*(int(v) for v in choose(halves[0], halves[1],
                                                   np.int64(costs.gap_open), affine))))
    return cuts


def split_all(pieces: list[list], seqs: Sequences, costs: PassCosts, leaf: int,
              backend: str = "cpu", threads: int | None = None,
              on_root=None) -> list[list]:
    """Every pair's pieces with each :class:`Problem` split until none is left.

    ``pieces[p]`` is pair ``p``'s list in alignment order (problems, leaves, runs). After
    the first level, ``on_root(pair, value)`` (when given) hears each pair's optimum from
    its first split and returns False to drop the pair (its list emptied: a distance past
    the limit needs no alignment).
    """
    pieces = [[x for item in items for x in (place(item, leaf) if isinstance(item, Problem)
                                             else [item])] for items in pieces]
    first = True
    while True:
        open_problems = [item for items in pieces for item in items if isinstance(item, Problem)]
        if not open_problems:
            return pieces
        cuts = iter(_cut_level(open_problems, seqs, costs, backend, threads))
        dropped = set()
        out = []
        for p, items in enumerate(pieces):
            new = []
            for item in items:
                if not isinstance(item, Problem):
                    new.append(item)
                    continue
                cut = next(cuts)
                if first and on_root is not None and not on_root(p, cut.value):
                    dropped.add(p)
                for part in parts(item, cut):
                    new.extend(place(part, leaf) if isinstance(part, Problem) else [part])
            out.append([] if p in dropped else new)
        pieces = out
        first = False
