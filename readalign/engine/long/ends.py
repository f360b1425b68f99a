"""Where a long pair's alignment starts and ends, by row passes, before it is split.

Global alignments run corner to corner. An infix alignment ends on the read's last row at
the leftmost best column (a forward INFIX pass), and starts where a reverse pass from that
end, anchored there, scores best on its last row (the leftmost such column of the reversed
window: the shortest window span). A local alignment ends at the forward LOCAL pass's best
cell (the scored kernel's rule, clip bonus on the last row) and starts at the best cell of a
reverse ANCHORED pass from that end (the same rule on the reversed sequences, the clip bonus
where the alignment takes the read's first base). Ends and scores are the short path's;
among co-optimal starts the reverse pass picks the one nearest the end.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...kernels.long_rows import ANCHORED, GLOBAL, INFIX, LOCAL
from .rows import PassBatch, PassCosts, gather_pieces, row_passes
from .split import Sequences


class Ends(NamedTuple):
    """Every pair's score and spans (int64 arrays, batch order); ``core``: the score the
    global part between the spans must reach (``NO_CORE`` where the splits tell it)."""

    score: np.ndarray
    q_start: np.ndarray
    q_end: np.ndarray
    ref_start: np.ndarray
    ref_end: np.ndarray
    core: np.ndarray


NO_CORE = np.iinfo(np.int64).min


def _passes(seqs: Sequences, spans: tuple, reverse: bool, mode: int, costs: PassCosts,
            backend: str, threads: int | None):
    """One pass per pair over ``q[0:i] x t[0:j]`` (``spans = (i, j)`` arrays), reversed or not."""
    i, j = spans
    count = i.shape[0]
    flag = int(reverse)
    rows = np.stack([np.zeros(count, np.int64), seqs.qb, i, np.full(count, flag)], axis=1)
    cols = np.stack([np.ones(count, np.int64), seqs.tb, j, np.full(count, flag)], axis=1)
    row_codes, row_off = gather_pieces(seqs.q, seqs.t, rows)
    col_codes, col_off = gather_pieces(seqs.q, seqs.t, cols)
    return row_passes(PassBatch(row_codes, row_off, col_codes, col_off, mode), costs, backend,
                      threads)


def _last_row_best(res, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Each task's leftmost best column of its last row, and that value."""
    col = np.array([int(np.argmax(res.h[res.offsets[x]:res.offsets[x + 1]]))
                    for x in range(count)], np.int64)
    return col, res.h[res.offsets[:-1] + col]


def find_ends(seqs: Sequences, lengths: tuple, mode: int, costs: PassCosts, starts: bool,
              backend: str = "cpu", threads: int | None = None) -> Ends:
    """Scores and spans of every pair in ``mode`` (a :mod:`readalign.kernels.long_rows` pass
    mode: GLOBAL, INFIX or LOCAL). ``starts``: also find where infix and local alignments
    start (for their CIGARs); otherwise starts are -1 (0 in global mode) and
    global scores come from a forward pass."""
    m, n = (np.asarray(x, np.int64) for x in lengths)
    count = m.shape[0]
    zero = np.zeros(count, np.int64)
    core = np.full(count, NO_CORE, np.int64)
    if mode == GLOBAL:
        score = np.full(count, NO_CORE, np.int64)
        if not starts:
            res = _passes(seqs, (m, n), False, GLOBAL, costs, backend, threads)
            score = res.h[res.offsets[1:] - 1].copy()
        return Ends(score, zero, m.copy(), zero, n.copy(), core)
    none = np.full(count, -1, np.int64)
    if mode == INFIX:
        res = _passes(seqs, (m, n), False, INFIX, costs, backend, threads)
        end, score = _last_row_best(res, count)
        if not starts:
            return Ends(score, zero, m.copy(), none, end, core)
        rev = _passes(seqs, (m, end), True, GLOBAL, costs, backend, threads)
        back, value = _last_row_best(rev, count)
        _agree(value, score, "infix")
        return Ends(score, zero, m.copy(), end - back, end, score.copy())
    if mode != LOCAL:
        raise ValueError(f"no long-pair ends for pass mode {mode}")
    clip = costs.clip
    res = _passes(seqs, (m, n), False, LOCAL, costs, backend, threads)
    best, bi, bj = (res.best[:, c].copy() for c in range(3))
    score = np.where(m > 0, best - 2 * clip, 0)
    if not starts:
        return Ends(score, none, bi, none, bj, core)
    at_end = best - np.where(bi == m, clip, 0)  # H of the end cell
    rev = _passes(seqs, (bi, bj), True, ANCHORED, costs, backend, threads)
    empty = (bi == 0) | (bj == 0)  # no aligned pair: the alignment starts where it ends
    value, back_i, back_j = (np.where(empty, (at_end, 0, 0)[c], rev.best[:, c]) for c in range(3))
    _agree(value, at_end, "local")
    si = bi - back_i
    core = value - np.where(si == 0, clip, 0)
    core[empty] = 0
    return Ends(score, si, bi, bj - back_j, bj, core)


def _agree(value: np.ndarray, want: np.ndarray, mode: str) -> None:
    """The reverse pass's best must be the forward pass's: anything else is a defect."""
    bad = np.flatnonzero(value != want)
    if bad.shape[0]:
        x = int(bad[0])
        raise RuntimeError(f"long-pair {mode} start: reverse pass scores {int(value[x])}, "
                           f"forward pass {int(want[x])} (pair {x} of the batch)")
