"""The long-pair driver: ends, splits, one batch of leaves, CIGARs joined.

:func:`align_long` aligns a batch of pairs of any length: :mod:`.ends` finds each pair's
score and spans, :mod:`.split` cuts the global part between them into leaves and gap runs,
``align_leaves`` (the engine's short path, on the call's backend) aligns every leaf of the
batch in global mode as one batch, and :func:`join_runs` writes each pair's CIGAR from its
pieces in order, adjacent runs of one operation merged.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from ...kernels.long_rows import GLOBAL, INFIX, LOCAL
from ...kernels.quadrant import pair_spans
from ...kernels.scored_quadrant import OP_S
from ..job import BatchResult, Job, Scores, gather_slices
from ..packing import Packed
from .ends import NO_CORE, Ends, find_ends
from .rows import UNIT, PassCosts, gather_pieces
from .split import CLIP, GAP, Leaf, Problem, Run, Sequences, split_all

LEAF_PIECE = 0
"""Kind of a piece that is a leaf (:class:`.split.Run` kinds are the others)."""


def pass_costs(job: Job) -> PassCosts:
    """The row passes' costs for ``job``: its scoring, or unit edit costs with its N code."""
    sc = job.scores
    if sc is None:
        return UNIT._replace(n_code=job.n_code)
    table = np.asarray(sc.sub, np.int32).reshape(sc.size, sc.size)
    if not np.array_equal(table, table.T):
        raise ValueError("long pairs need a symmetric substitution matrix (columns are split "
                         "on the transposed rectangle)")
    return PassCosts(np.ascontiguousarray(sc.sub, dtype=np.int32), sc.size, -1, sc.gap_open,
                     sc.gap_extend, sc.clip)


def leaf_job(job: Job) -> Job:
    """The job that aligns leaves: ``job``'s costs in global mode, with CIGARs, no limit."""
    sc = job.scores
    scores = None if sc is None else Scores(GLOBAL, sc.sub, sc.size, sc.gap_open,
                                            sc.gap_extend, 0)
    return Job(False, -1, job.n_code, job.eqx, True, job.k, scores)


def _initial_pieces(ends: Ends, m: np.ndarray, local: bool) -> list[list]:
    """Each pair's pieces before splitting: its global part, local mode's clips around it."""
    out = []
    for p in range(m.shape[0]):
        core = Problem(p, int(ends.q_start[p]), int(ends.q_end[p]), int(ends.ref_start[p]),
                       int(ends.ref_end[p]))
        if local:
            out.append([Run(CLIP, OP_S, core.i0), core, Run(CLIP, OP_S, int(m[p]) - core.i1)])
        else:
            out.append([core])
    return out


@njit(cache=True, nogil=True)
def join_runs(pieces, piece_off, leaf_ops, leaf_off, slot_off, out, n_ops):
    """Pair ``p``'s CIGAR from its pieces ``pieces[piece_off[p]:piece_off[p+1]]`` (rows of
    ``(kind, value)``: a leaf's index into ``leaf_ops``/``leaf_off``, or a run ``len << 4 |
    op``) into ``out`` from ``slot_off[p]``, adjacent runs of one op merged; ``n_ops[p]``
    runs."""
    for p in range(piece_off.shape[0] - 1):
        base = slot_off[p]
        count = 0
        for x in range(piece_off[p], piece_off[p + 1]):
            if pieces[x, 0] == LEAF_PIECE:
                lo = leaf_off[pieces[x, 1]]
                hi = leaf_off[pieces[x, 1] + 1]
            else:
                lo = -1
                hi = 0
            for r in range(lo, hi):
                run = np.uint32(pieces[x, 1]) if r < 0 else leaf_ops[r]
                if run >> 4 == 0:
                    continue
                if count > 0 and (out[base + count - 1] & 15) == (run & 15):
                    out[base + count - 1] += run & np.uint32(0xFFFFFFF0)
                else:
                    out[base + count] = run
                    count += 1
        n_ops[p] = count


class _Flat:
    """Every pair's pieces as rows ``(kind, value, pair, length)``: a leaf's index, or a
    run's ``length << 4 | op`` and length; ``offsets``: each pair's first row."""

    def __init__(self, pieces: list[list]) -> None:
        rows, offsets, self.leaves = [], [0], []
        for p, items in enumerate(pieces):
            for item in items:
                if isinstance(item, Leaf):
                    rows.append((LEAF_PIECE, len(self.leaves), p, 0))
                    self.leaves.append(item)
                else:
                    rows.append((item.kind, item.length << 4 | item.op, p, item.length))
            offsets.append(len(rows))
        self.rows = np.array(rows, np.int64).reshape(-1, 4)
        self.offsets = np.array(offsets, np.int64)

    def leaf_pairs(self, seqs: Sequences) -> tuple[Packed, Packed]:
        """The leaves' reads and windows, packed."""
        lv = np.array(self.leaves, np.int64).reshape(-1, 5)
        zeros = np.zeros(lv.shape[0], np.int64)
        sides = []
        for source, base, a, b in ((0, seqs.qb, 1, 2), (1, seqs.tb, 3, 4)):
            cut = np.stack([zeros + source, base[lv[:, 0]] + lv[:, a], lv[:, b] - lv[:, a],
                            zeros], axis=1)
            sides.append(Packed(*gather_pieces(seqs.q, seqs.t, cut)))
        return sides[0], sides[1]

    def of_kind(self, kind: int) -> np.ndarray:
        """The rows of the pieces of ``kind``."""
        return self.rows[self.rows[:, 0] == kind]

    def slots(self, leaf_off: np.ndarray, count: int) -> np.ndarray:
        """CIGAR runs each pair may need before merging: its leaves' runs and its own."""
        leaf = self.rows[:, 0] == LEAF_PIECE
        runs = np.ones(self.rows.shape[0], np.int64)
        runs[leaf] = np.diff(leaf_off)[self.rows[leaf, 1]]
        return np.bincount(self.rows[:, 2], weights=runs, minlength=count).astype(np.int64)


def _sums(flat: _Flat, leaves: tuple, count: int, costs: PassCosts) -> tuple:
    """Every pair's global part's score and its NM (mismatches and gap symbols), from its
    leaves' (``leaves``: their scores and NM) and its gap runs'."""
    leaf_rows = flat.of_kind(LEAF_PIECE)
    gap_rows = flat.of_kind(GAP)
    score = np.zeros(count, np.int64)
    nm = np.zeros(count, np.int64)
    np.add.at(score, leaf_rows[:, 2], leaves[0][leaf_rows[:, 1]])
    np.add.at(nm, leaf_rows[:, 2], leaves[1][leaf_rows[:, 1]])
    np.add.at(score, gap_rows[:, 2], -(costs.gap_open + costs.gap_extend * gap_rows[:, 3]))
    np.add.at(nm, gap_rows[:, 2], gap_rows[:, 3])
    return score, nm


def _check_core(core: np.ndarray, want: np.ndarray, failed: np.ndarray) -> None:
    """The parts' scores must add up to the optimum the passes found: anything else is a defect."""
    bad = np.flatnonzero(~failed & (want != NO_CORE) & (core != want))
    if bad.shape[0]:
        x = int(bad[0])
        raise RuntimeError(f"long pair {x} of the batch: its parts score {int(core[x])}, "
                           f"the passes found {int(want[x])}")


def _past(score: np.ndarray, limit: int) -> np.ndarray:
    """Pairs whose known distance (minus ``score``) is past ``limit`` (-1: none)."""
    known = score != NO_CORE
    return known & (limit >= 0) & (-np.where(known, score, 0) > limit)


def align_long(q: Packed, t: Packed, idx: np.ndarray, job: Job,
               align_leaves: Callable, leaf: int, backend: str = "cpu",
               threads: int | None = None) -> BatchResult:
    """Align pairs ``idx`` of any length in memory linear in their lengths; results in
    ``idx`` order, as the short path gives them.

    ``align_leaves(reads, windows, job)`` aligns the leaves (at most ``leaf`` symbols a
    side) and returns an :class:`~readalign.engine.result.AlignResult`; ``backend`` names
    the row passes' implementation (:data:`.rows.ROW_PASSES`).
    """
    count = idx.shape[0]
    m = q.lengths[idx].astype(np.int64)
    n = t.lengths[idx].astype(np.int64)
    seqs = Sequences(q.data, t.data, q.offsets[idx].astype(np.int64),
                     t.offsets[idx].astype(np.int64))
    costs = pass_costs(job)
    scored = job.scores is not None
    mode = job.scores.mode if scored else (INFIX if job.infix else GLOBAL)
    ends = find_ends(seqs, (m, n), mode, costs, job.with_cigar, backend, threads)
    limit = -1 if scored else job.max_distance
    failed = _past(ends.score, limit)
    if not job.with_cigar:
        return _untraced(ends, failed, job)
    root = np.full(count, NO_CORE, np.int64)

    def on_root(p: int, value: int) -> bool:
        root[p] = value
        return limit < 0 or -value <= limit

    start = [[] if failed[p] else items
             for p, items in enumerate(_initial_pieces(ends, m, mode == LOCAL))]
    flat = _Flat(split_all(start, seqs, costs, leaf, backend, threads, on_root))
    leaf_ops, leaf_off = np.zeros(0, np.uint32), np.zeros(1, np.int64)
    leaves = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if flat.leaves:
        res = align_leaves(*flat.leaf_pairs(seqs), leaf_job(job))
        leaf_ops, leaf_off = res.cigar_ops, res.cigar_offsets.astype(np.int64)
        leaves = (res.score.astype(np.int64), res.distance.astype(np.int64))
    core, nm = _sums(flat, leaves, count, costs)
    failed |= _past(root, limit) | _past(core, limit)
    _check_core(core, ends.core, failed)
    _check_core(core, root, failed)
    cap = flat.slots(leaf_off, count)
    slot_off = np.zeros(count, np.int64)
    np.cumsum(cap[:-1], out=slot_off[1:])
    slots = np.zeros(int(cap.sum()), np.uint32)
    n_ops = np.zeros(count, np.int64)
    join_runs(np.ascontiguousarray(flat.rows[:, :2]), flat.offsets, leaf_ops, leaf_off,
              slot_off, slots, n_ops)
    n_ops[failed] = 0
    ops = [(0, count, gather_slices(slots, slot_off, n_ops))]
    ref_start = np.where(failed, -1, ends.ref_start)
    ref_end = np.where(failed, -1, ends.ref_end)
    if not scored:
        dist = np.where(failed, -1, -core).astype(np.int32)
        return BatchResult(dist, ref_start, ref_end, n_ops, ops)
    score = core if mode == GLOBAL else ends.score
    return BatchResult(nm.astype(np.int32), ref_start, ref_end, n_ops, ops,
                       score.astype(np.int32), ends.q_start.copy(), ends.q_end.copy())


def _untraced(ends: Ends, failed: np.ndarray, job: Job) -> BatchResult:
    """The batch's results without CIGARs: scores and ends from the forward passes."""
    count = failed.shape[0]
    n_ops = np.zeros(count, np.int64)
    if job.scores is None:
        dist = np.where(failed, -1, -ends.score).astype(np.int32)
        ref_start = np.empty(count, np.int64)
        ref_end = np.empty(count, np.int64)
        for x in range(count):
            ref_start[x], ref_end[x] = pair_spans(int(dist[x]), int(ends.ref_end[x]), -1, False,
                                                  job.infix)
        return BatchResult(dist, ref_start, ref_end, n_ops, [])
    none = np.full(count, -1, np.int64)
    return BatchResult(np.full(count, -1, np.int32), none, ends.ref_end.copy(), n_ops, [],
                       ends.score.astype(np.int32), none.copy(), ends.q_end.copy())
