"""One long pair on the whole GPU: the row pass of a rectangle, and the score of a whole pair.

:func:`row_pass` runs :func:`readalign.kernels.long_rows_cuda.row_pass_kernel` over one
rectangle of the DP matrix (read codes ``q`` by window codes ``t``) from its entry boundary
(:class:`Entry`) and returns its exit boundary (:class:`Exit`); it is the building block of
a linear-memory divide-and-conquer over a long pair (Myers–Miller: a forward pass over the
top half, a backward pass over the reversed bottom half, the split where they meet).
:func:`score_pair` is one row pass over the whole matrix: score and end cell of a pair of
any length in every mode, in device memory linear in ``m + n`` (:func:`device_bytes`).

Conventions are :mod:`readalign.kernels.scored_quadrant`'s (scores maximised, a gap of
length L costs ``gap_open + L * gap_extend``, E the gap along the window, F the gap along
the read, minus infinity :data:`~readalign.kernels.scored_quadrant.NEG`). Edit distance is
the same pass with :func:`edit_scores` (0 for a match, -1 for a mismatch or an N, linear
gaps of 1): the distance is minus the score, the infix end the leftmost best column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kernels.long_rows_cuda import (
    LANES,
    RESIDENT_SHARE,
    SUB_ENTRIES,
    ring_columns,
    row_pass_kernel,
)
from ...kernels.scored_quadrant import GLOBAL, INFIX, LOCAL, MODE_NAMES, NEG
from ...kernels.simulator import simulated
from ..job import Scores
from ..packing import N_CODE

ROWS_PER_LANE = (1, 2, 4, 8)
"""Rows a lane may hold (the kernel is compiled for each one used)."""
WAVES = 2
"""Strips per launched warp below which a strip is made thinner (:func:`rows_for`): the
wavefront keeps every warp busy only while there are strips enough to go round."""
REGISTER_CAP = {1: 64, 2: 128, 4: 128, 8: 128}
"""Registers per thread each strip height is compiled under (sm_90, no spills at these caps):
it fixes how many blocks stay resident on an SM."""
REGISTERS_PER_SM = 65536
WARPS_PER_SM = 64
VALUE_LIMIT = 1 << 28
"""Largest magnitude a cell may reach: far from int32's end and from NEG after a gap."""


@dataclass(frozen=True)
class Tiles:
    """How the rectangle is split on the GPU.

    ``rows_per_lane``: rows each lane holds (a strip is ``lanes * rows_per_lane`` rows; 0:
    :func:`rows_for` picks); ``lanes``: 32 on a device (fewer only under the simulator);
    ``warps_per_block``; ``blocks``: the persistent grid (0: as many as stay resident);
    ``resident_share``: the ring is sized for one launched warp in this many resident
    (:func:`~readalign.kernels.long_rows_cuda.ring_columns`; 1 when all are, as under the
    simulator, gives the smallest ring)."""

    rows_per_lane: int = 0
    lanes: int = LANES
    warps_per_block: int = 4
    blocks: int = 0
    resident_share: int = RESIDENT_SHARE


@dataclass(frozen=True)
class Entry:
    """A rectangle's entry boundary, int32: ``top_h``/``top_f`` H and F of the row above it
    (``n + 1``, element 0 the corner), ``left_h``/``left_e`` H and E of the column left of it
    (``m + 1``, element 0 unused: the corner is ``top_h[0]``). Minus infinity is NEG."""

    top_h: np.ndarray
    top_f: np.ndarray
    left_h: np.ndarray
    left_e: np.ndarray


@dataclass(frozen=True)
class Best:
    """Local mode's best cell of a rectangle: the largest ``H + bonus`` over rows ``1..m``
    and columns ``0..n`` (the left column included), the smallest row on ties, then the
    smallest column; ``score`` counts the last row's bonus. NEG at (0, 0) without rows."""

    score: int
    i: int
    j: int


@dataclass(frozen=True)
class Exit:
    """A rectangle's exit boundary, int32: ``row_h``/``row_f`` of its last row (``n + 1``),
    ``col_h``/``col_e`` of its last column (``m + 1``); element 0 of ``row_h`` is
    ``left_h[m]`` and of ``col_h`` ``top_h[n]``, of ``row_f`` and ``col_e`` NEG (no cell reads
    them). ``best``: local mode's best cell, else None."""

    row_h: np.ndarray
    row_f: np.ndarray
    col_h: np.ndarray
    col_e: np.ndarray
    best: Best | None


@dataclass(frozen=True)
class PairScore:
    """A pair's score and the cell its alignment ends in (:mod:`.scored_quadrant`'s end
    rules: global ``(m, n)``, infix the leftmost best column of the last row, local the best
    cell, smallest row then smallest column)."""

    score: int
    end_i: int
    end_j: int


def edit_scores(mode: int = GLOBAL, n_code: int = N_CODE, size: int = 5) -> Scores:
    """Unit edit costs as a scoring for the row pass: 0 for equal codes other than
    ``n_code``, -1 otherwise, linear gaps of 1 (``gap_open`` 0). Minus the score is the
    distance."""
    sub = np.full((size, size), -1, np.int32)
    np.fill_diagonal(sub, 0)
    if 0 <= n_code < size:
        sub[n_code, n_code] = -1
    return Scores(mode, sub.ravel(), size, 0, 1)


def entry_for(mode: int, m: int, n: int, scores: Scores) -> Entry:
    """The whole matrix's entry boundary in ``mode``: row 0 a leading gap (global), free
    (infix) or the clip bonus (local); column 0 a leading gap, or 0 in local mode."""
    go, ge = scores.gap_open, scores.gap_extend
    gap_j = -(go + ge * np.arange(n + 1, dtype=np.int64))
    gap_i = -(go + ge * np.arange(m + 1, dtype=np.int64))
    gap_j[0] = gap_i[0] = 0
    if mode == GLOBAL:
        top = gap_j
    elif mode == INFIX:
        top = np.zeros(n + 1, np.int64)
    else:
        top = np.full(n + 1, scores.clip, np.int64)
    left = np.zeros(m + 1, np.int64) if mode == LOCAL else gap_i
    return Entry(top.astype(np.int32), np.full(n + 1, NEG, np.int32), left.astype(np.int32),
                 np.full(m + 1, NEG, np.int32))


def _check(q: np.ndarray, t: np.ndarray, scores: Scores, entry: Entry, bonus: int) -> None:
    """Raise a ValueError naming what is wrong with a row pass's inputs."""
    m, n = len(q), len(t)
    for name, arr, size in (("q", q, m), ("t", t, n)):
        if arr.dtype != np.uint8 or arr.ndim != 1:
            raise ValueError(f"row pass: {name} must be a 1-D uint8 array of codes")
        if size and int(arr.max()) >= scores.size:
            raise ValueError(f"row pass: {name} holds code {int(arr.max())}, outside the "
                             f"scoring's {scores.size} letters")
    if scores.size * scores.size > SUB_ENTRIES or len(scores.sub) != scores.size ** 2:
        raise ValueError(f"row pass: the substitution table must be size x size with size <= "
                         f"{int(SUB_ENTRIES ** 0.5)}")
    wanted = {"top_h": n + 1, "top_f": n + 1, "left_h": m + 1, "left_e": m + 1}
    largest = 0
    for name, size in wanted.items():
        arr = getattr(entry, name)
        if arr.shape != (size,):
            raise ValueError(f"row pass: entry.{name} must have {size} elements; got {arr.shape}")
        if arr.size and int(arr.min()) < NEG:
            raise ValueError(f"row pass: entry.{name} holds {int(arr.min())}, below minus "
                             f"infinity ({NEG})")
        finite = np.abs(arr[arr > NEG].astype(np.int64))
        largest = max(largest, int(finite.max(initial=0)))
    growth = ((m + n) * (scores.gap_open + scores.gap_extend)
              + min(m, n) * int(np.abs(scores.sub).max(initial=0)) + abs(bonus))
    if largest + growth >= VALUE_LIMIT:
        raise ValueError(f"row pass: scores of a {m} x {n} rectangle may reach {largest + growth},"
                         f" beyond the int32 cells' limit {VALUE_LIMIT}")


def rows_for(m: int, resident_warps) -> int:
    """Rows per lane for a rectangle of ``m`` rows: the most of :data:`ROWS_PER_LANE` that
    still leaves :data:`WAVES` strips per resident warp (``resident_warps(rows)``), else 1.
    More rows per lane cost fewer shuffles per cell; fewer rows give more strips at once."""
    best = ROWS_PER_LANE[0]
    for rows in ROWS_PER_LANE:
        if -(-m // (LANES * rows)) >= WAVES * resident_warps(rows):
            best = rows
    return best


def _resident_blocks(rows: int, tiles: Tiles) -> int:
    """Blocks that stay resident on the whole device at once (simulator: one, as it runs one
    block at a time)."""
    if simulated():
        return 1
    from numba import cuda

    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    threads = tiles.lanes * tiles.warps_per_block
    per_sm = min(REGISTERS_PER_SM // (REGISTER_CAP[rows] * threads),
                 WARPS_PER_SM // tiles.warps_per_block)
    return sms * per_sm


def layout(m: int, n: int, tiles: Tiles) -> tuple[int, int, int, int]:
    """``(rows_per_lane, blocks, warps, ring slot columns)`` of an ``m`` x ``n`` rectangle
    split by ``tiles`` (what :func:`row_pass` launches; the benchmark reports it)."""
    rows = tiles.rows_per_lane or rows_for(
        m, lambda r: _resident_blocks(r, tiles) * tiles.warps_per_block)
    if rows not in ROWS_PER_LANE:
        raise ValueError(f"rows_per_lane must be one of {ROWS_PER_LANE}; got {rows}")
    strips = -(-m // (tiles.lanes * rows))
    blocks = tiles.blocks or _resident_blocks(rows, tiles)
    blocks = max(1, min(blocks, -(-strips // tiles.warps_per_block)))
    warps = blocks * tiles.warps_per_block
    return rows, blocks, warps, ring_columns(n, warps, tiles.lanes, tiles.resident_share)


def device_bytes(m: int, n: int, tiles: Tiles = Tiles(), local: bool = False) -> int:
    """Device memory of one row pass over ``m`` x ``n``: codes, entry and exit boundaries,
    local mode's per-row best, and the ring (``warps + 1`` slots of :func:`ring_columns`),
    about ``m + n + 16 (m + n) + 8 m + 32 n`` bytes: linear in ``m + n``."""
    _rows, _blocks, warps, cols = layout(max(m, 1), n, tiles)
    return (m + n + 16 * (m + n + 2) + (8 * (m + 1) if local else 0)
            + 8 * (warps + 1) * cols + 8 * (warps + 1) + 4)


def _degenerate(entry: Entry, m: int, n: int, local: bool, bonus: int) -> Exit:
    """The exit of a rectangle without rows or without columns (no kernel runs)."""
    neg = np.int32(NEG)
    if m == 0:
        row_f = entry.top_f.copy()
        row_f[0] = neg
        return Exit(entry.top_h.copy(), row_f, np.array([entry.top_h[n]], np.int32),
                    np.array([neg], np.int32), Best(NEG, 0, 0) if local else None)
    col_h = entry.left_h.copy()
    col_h[0] = entry.top_h[0]
    col_e = entry.left_e.copy()
    col_e[0] = neg
    best = None
    if local:
        best = _best_cell(entry.left_h, np.zeros(m + 1, np.int32), bonus)
    return Exit(np.array([entry.left_h[m]], np.int32), np.array([neg], np.int32), col_h, col_e,
                best)


def _best_cell(best_h: np.ndarray, best_j: np.ndarray, bonus: int) -> Best:
    """The best of the rows' best cells (rows 1..m; the last row counts ``bonus`` more): the
    first row holding the largest value."""
    values = best_h[1:].astype(np.int64)
    values[-1] += bonus
    k = int(np.argmax(values))
    return Best(int(values[k]), k + 1, int(best_j[k + 1]))


def row_pass(q: np.ndarray, t: np.ndarray, scores: Scores, entry: Entry, *,
             local: bool = False, last_row_bonus: int = 0, tiles: Tiles = Tiles()) -> Exit:
    """Gotoh's matrices over the rectangle ``q`` x ``t`` on the GPU, from ``entry`` to its exit.

    Parameters
    ----------
    q, t : numpy.ndarray
        The rectangle's read rows and window columns as codes (uint8, below ``scores.size``).
    scores : Scores
        ``sub``, ``size``, ``gap_open``, ``gap_extend`` (``mode`` and ``clip`` are not read:
        the entry boundary carries the mode).
    entry : Entry
        H and F of the row above, H and E of the column to the left.
    local : bool
        Floor H at 0 and find the best cell (:class:`Best`).
    last_row_bonus : int
        Local mode: added to the last row's cells when the best cell is chosen (the clip
        penalty a read end avoids, :mod:`readalign.kernels.scored_quadrant`).
    tiles : Tiles
        The GPU split (default: chosen from the device).

    Returns
    -------
    Exit
        The last row's H and F, the last column's H and E, and in local mode the best cell.

    Raises
    ------
    ValueError
        Codes outside the scoring, boundaries of the wrong length, values below NEG, or
        scores that could leave int32's safe range (:data:`VALUE_LIMIT`).
    """
    q = np.ascontiguousarray(q)
    t = np.ascontiguousarray(t)
    _check(q, t, scores, entry, last_row_bonus)
    m, n = len(q), len(t)
    if m == 0 or n == 0:
        return _degenerate(entry, m, n, local, last_row_bonus)
    from numba import cuda

    from ...kernels.cuda import launch

    rows, blocks, warps, cols = layout(m, n, tiles)
    kernel = row_pass_kernel(rows, tiles.lanes, local, REGISTER_CAP[rows])
    slots = warps + 1
    dev = cuda.to_device
    seqs = (dev(q), dev(t))
    scoring = (dev(np.ascontiguousarray(scores.sub, np.int32)), scores.size, scores.gap_open,
               scores.gap_extend)
    ent = tuple(dev(np.ascontiguousarray(a, np.int32))
                for a in (entry.top_h, entry.top_f, entry.left_h, entry.left_e))
    ring = (cuda.device_array(slots * cols, np.int32), cuda.device_array(slots * cols, np.int32),
            dev(np.zeros(slots, np.int64)), dev(np.zeros(1, np.int32)), cols)
    best_len = m + 1 if local else 1
    outs = tuple(cuda.device_array(size, np.int32)
                 for size in (n + 1, n + 1, m + 1, m + 1, best_len, best_len))
    launch(kernel, blocks, tiles.lanes * tiles.warps_per_block, 0, seqs, scoring, ent, ring, outs)
    row_h, row_f, col_h, col_e, best_h, best_j = (a.copy_to_host() for a in outs)
    row_h[0] = entry.left_h[m]
    row_f[0] = NEG
    col_h[0] = entry.top_h[n]
    col_e[0] = NEG
    best = None
    if local:
        best_h[0] = NEG
        best = _best_cell(best_h, best_j, last_row_bonus)
    return Exit(row_h, row_f, col_h, col_e, best)


def score_pair(q: np.ndarray, t: np.ndarray, scores: Scores, *, tiles: Tiles = Tiles()) -> PairScore:
    """Score and end cell of read ``q`` against window ``t`` (codes) in ``scores.mode``, one
    row pass over the whole matrix on the GPU (memory linear in ``m + n``).

    The same score and end cell as :func:`readalign.kernels.scored_quadrant.build`'s forward
    pass: global ``(m, n)``; infix the leftmost best column of the last row; local the best
    cell (smallest row, then smallest column) with ``clip`` per clipped read end, a pair with
    no positive cell scoring ``-2 clip`` at (0, 0) as there. For edit distance pass
    :func:`edit_scores` and negate the score.
    """
    mode = scores.mode
    if mode not in (GLOBAL, INFIX, LOCAL):
        raise ValueError(f"mode must be one of {MODE_NAMES}; got {mode}")
    m, n = len(q), len(t)
    local = mode == LOCAL
    out = row_pass(q, t, scores, entry_for(mode, m, n, scores), local=local,
                   last_row_bonus=scores.clip if local else 0, tiles=tiles)
    if mode == GLOBAL:
        return PairScore(int(out.row_h[n]), m, n)
    if mode == INFIX:
        if m == 0:
            return PairScore(0, 0, 0)
        j = int(np.argmax(out.row_h))
        return PairScore(int(out.row_h[j]), m, j)
    if m == 0:
        return PairScore(0, 0, 0)
    best = out.best
    if best.score > 0:
        return PairScore(best.score - 2 * scores.clip, best.i, best.j)
    return PairScore(-2 * scores.clip, 0, 0)
