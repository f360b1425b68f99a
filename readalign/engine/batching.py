"""Host side of alignment: sort pairs by length, batch them, run a backend, gather results.

A backend aligns one batch at a time: the packed sequences and the batch's
pair indices (sorted by length, so neighbouring lanes do equal work). It
returns a :class:`BatchResult` in batch order; results leave in input order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..kernels.cpu import untraced_spans
from ..kernels.quadrant import FAST_PATH_MAX
from ..kernels.scored_quadrant import MODE_NAMES
from ..kernels.words import pairwise_long
from ..runtime import backends, host_copy
from ..runtime.timing import stage
from . import cpu, flatseq
from .gpu.sizing import HOST_BATCH_CELLS
from .job import BatchResult, Job, check_counts
from .long import align_long
from .order import budget_bounds, counting_order, is_range, is_sorted_pairs, partition_long, scatter_results
from .packing import AnyPacked, Packed
from .pylists import StringRows
from .result import AlignResult

log = logging.getLogger("readalign")

LONG_PAIR = FAST_PATH_MAX
"""Pairs longer than this (read or window) take the long path (:mod:`.long`): row passes
split them into leaves of at most this many symbols a side, which the short path aligns on
the call's backend."""
LONG_BATCH_SYMBOLS = 1 << 24
"""Symbols (reads and windows together) of long pairs aligned as one batch: the long path's
memory is linear in them (:mod:`.long`), and one batch's leaves go to the backend together."""
ROW_PASS_BACKEND = "cpu"
"""Where the long path's row passes run (:data:`.long.rows.ROW_PASSES`)."""
DEFAULT_K = 16
"""Quadrant size unless asked otherwise. Results do not depend on it; on an H100 the API
runs 12% faster at 16 than at 8 for 150 bp reads (fewer strips and boundary values),
and on the CPU the two are within 3% (benchmarks/RESULTS.md)."""
AUTO_K = 0
"""A job's ``k`` when the engine picks it from the batch's lengths (:func:`auto_k`)."""
SHORT_PAIR = 72
MID_PAIR = 128
"""Length classes of :func:`auto_k`, by the batch's longest read or window."""
SCORED_K = 8
"""Quadrant size of scored alignment on the CPU (on the GPU :func:`auto_k` picks it)."""
BATCH_CELLS = {"cpu": 1 << 31, "cuda": HOST_BATCH_CELLS}
"""DP cells per host batch: bounds host memory for CIGAR slots (CPU); the GPU backend
cuts its host batch into device batches that fit device memory (:mod:`.gpu.sizing`)."""


COUNTING_SORT_KEYS = 1 << 24
NARROW_SPREAD = 16
"""Lengths within ``max/NARROW_SPREAD`` of their maximum (both sides) need no sort."""
NARROW_OUTLIERS = 64
"""...except for at most 1/NARROW_OUTLIERS of the pairs, which may be shorter."""


def auto_k(m_max: int, n_max: int, with_cigar: bool) -> int:
    """The fastest quadrant size on the GPU for edit-distance pairs of at most these lengths.

    Measured on an H100, kernel only, reads against windows 20 longer (benchmarks/RESULTS.md):
    with CIGARs k = 8 up to :data:`SHORT_PAIR` (32 bp: 5.15 ms vs 5.83 at 16; the paper's
    32 x 32 pairs 29.9 vs 39.3 ms), 16 up to :data:`MID_PAIR` (100 bp: 941 GCUPS vs 905 at
    24), 24 beyond (150 bp: 1,020 vs 952; 250 bp: 1,185 vs 992); distances alone 16 up to
    :data:`MID_PAIR`, 32 beyond (150 bp: 2,690 vs 2,362).
    """
    longest = max(m_max, n_max)
    if with_cigar:
        return 8 if longest <= SHORT_PAIR else 16 if longest <= MID_PAIR else 24
    return 16 if longest <= MID_PAIR else 32


def scored_auto_k(with_cigar: bool) -> int:
    """The fastest quadrant size on the GPU for scored alignment, whatever the lengths.

    Measured on an H100 (benchmarks/RESULTS.md): 16 with CIGARs (150 bp local 459 GCUPS vs 317
    at 8 and 402 at 24; protein 300 610 vs 392 and 591), 32 for scores alone (150 bp local
    1,053 vs 846 at 16; protein 1,080 vs 943).
    """
    return 16 if with_cigar else 32


class Bounds(NamedTuple):
    """Smallest and largest read (``m``) and window (``n``) length of a set of pairs."""

    m_min: int
    m_max: int
    n_min: int
    n_max: int

    @classmethod
    def of(cls, m: np.ndarray, n: np.ndarray) -> Bounds:
        """The bounds of lengths ``m`` and ``n`` (one parallel pass over both)."""
        return cls(*(int(x) for x in flatseq.length_bounds(m, n)))


def _default_k(bounds: Bounds, count: int, job: Job, backend: str) -> int:
    """``k`` of a job that leaves it to the engine: measured per job on the GPU, fixed on the CPU."""
    scored = job.scores is not None
    if backend != "cuda" or count == 0:
        return SCORED_K if scored else DEFAULT_K
    if scored:
        return scored_auto_k(job.with_cigar)
    return auto_k(bounds.m_max, bounds.n_max, job.with_cigar)


def narrow_lengths(m: np.ndarray, n: np.ndarray, bounds: Bounds | None = None) -> bool:
    """True when the pairs' DPs are all about as large as the largest one: no sort needed.

    Fixed-length reads against windows of read length + padding (most
    sequencing runs) are such batches: a sort would buy lanes at most 12%
    more equal work, and costs a sort plus reordering every result and CIGAR.
    A few shorter pairs (a window clipped at a contig end) only idle their
    lanes early, so up to 1/NARROW_OUTLIERS of the pairs may lie below the band.
    """
    b = bounds or Bounds.of(m, n)
    outliers = 0
    for x, low, top in ((m, b.m_min, b.m_max), (n, b.n_min, b.n_max)):
        floor = top - top // NARROW_SPREAD
        if low < floor:
            outliers += int(np.count_nonzero(x < floor))
    return outliers * NARROW_OUTLIERS <= m.shape[0]


def length_order(m: np.ndarray, n: np.ndarray, bounds: Bounds | None = None) -> np.ndarray:
    """Pair indices sorted by (read length, window length), stably: lanes get equal work.

    Input order is kept when it is already sorted or when nearly all lengths
    are within a narrow band (:func:`narrow_lengths`).
    """
    if m.shape[0] == 0:
        return np.arange(0, dtype=np.int64)
    b = bounds or Bounds.of(m, n)
    if narrow_lengths(m, n, b) or is_sorted_pairs(m, n):
        return flatseq.iota(m.shape[0])
    span = b.n_max + 1
    if (b.m_max + 1) * span <= COUNTING_SORT_KEYS:
        return counting_order(m, n, span)
    return np.lexsort((n, m)).astype(np.int64)


def _split_long(order: np.ndarray, m: np.ndarray, n: np.ndarray,
                bounds: Bounds) -> tuple[np.ndarray, np.ndarray]:
    """``order`` split into pairs within :data:`LONG_PAIR` and the rest (no pass when none is long)."""
    if bounds.m_max <= LONG_PAIR and bounds.n_max <= LONG_PAIR:
        return order, order[:0]
    return partition_long(order, m, n, LONG_PAIR)


MAX_BATCH_PAIRS = 1 << 24


def _batch_bounds(group: np.ndarray, m: np.ndarray, n: np.ndarray, bounds: Bounds,
                  budget: int) -> np.ndarray:
    """Host batches of ``group`` within ``budget`` DP cells (one, with no pass, when all fit)."""
    count = group.shape[0]
    if count <= MAX_BATCH_PAIRS and (bounds.m_max + 1) * (bounds.n_max + 1) * count <= budget:
        return np.array([0, count], dtype=np.int64)
    return budget_bounds(group, m, n, budget, MAX_BATCH_PAIRS)


def _in_input_order(pieces: list, npairs: int) -> bool:
    """True when the pieces' pair indices, one after another, are ``0, 1, ..., npairs-1``."""
    start = 0
    for idx, _runs in pieces:
        if not is_range(idx, start):
            return False
        start += idx.shape[0]
    return start == npairs


def _place_ops(pieces: list, n_ops: np.ndarray, offsets: np.ndarray, npairs: int) -> np.ndarray:
    """Every pair's CIGAR runs at ``offsets`` (input order), from the pieces in batch order."""
    in_order = bool(pieces) and _in_input_order(pieces, npairs)
    if in_order and len(pieces) == 1:
        return pieces[0][1]
    ops = np.empty(int(offsets[-1]), dtype=np.uint32)
    if in_order:
        pos = 0
        for _idx, runs in pieces:  # np.concatenate would copy on one core, holding the GIL
            host_copy.copy_into(ops, pos, runs)
            pos += runs.shape[0]
        return ops
    for idx, batch_ops in pieces:
        flatseq.scatter(batch_ops, n_ops[idx], offsets[idx], ops)
    return ops


def _on_gpu(q: AnyPacked, t: AnyPacked, idx: np.ndarray, job: Job, k: int,
            threads: int | None = None,
            done_reading: Callable[[], None] | None = None) -> BatchResult:
    """The GPU backend: the job's kernels' steps (edit or scored) handed to the one pipeline
    over CUDA streams (:func:`.gpu.pipeline.run_pipeline`); results in ``idx`` order."""
    from .gpu import pipeline  # numba-cuda only when the GPU is used

    if job.scores is not None:
        from .gpu.scored import ScoredSteps as steps_type
    else:
        from .gpu.edit import EditSteps as steps_type
    return pipeline.run_pipeline(q, t, idx, steps_type(job, k, idx.shape[0]), done_reading,
                                 threads)


def _bit_parallel(job: Job) -> bool:
    """Whether a job is plain Levenshtein distance without alignments (what Myers' algorithm gives)."""
    return job.scores is None and not job.with_cigar and not job.infix and job.n_code < 0


def _long_distances(q: Packed, t: Packed, idx: np.ndarray, job: Job, k: int,
                    threads: int | None) -> BatchResult:
    """Distances of long pairs, bit-parallel (linear memory; :func:`kernels.words.myers_blocks`)."""
    count = idx.shape[0]
    dist = np.empty(count, np.int32)
    pairwise_long(q.data, q.offsets, t.data, t.offsets, idx, job.max_distance, dist)
    if job.max_distance >= 0:
        dist[dist > job.max_distance] = -1
    res = BatchResult(dist, np.empty(count, np.int64), np.empty(count, np.int64),
                      np.zeros(count, np.int64), [])
    untraced_spans(dist, t.lengths[idx], job.infix, res.ref_start, res.ref_end)
    return res


class _ScoredArrays:
    """The extra per-pair results of a scored call, in input order."""

    def __init__(self, npairs: int) -> None:
        self.score = np.empty(npairs, dtype=np.int32)
        self.q_start = np.empty(npairs, dtype=np.int64)
        self.q_end = np.empty(npairs, dtype=np.int64)

    def put(self, idx: np.ndarray, res: BatchResult, whole: bool) -> None:
        """Place a batch's results (batch order) at the pairs ``idx``; ``whole``: the batch is
        every pair in input order, so its arrays are taken as they are."""
        if whole:
            self.score, self.q_start, self.q_end = res.score, res.q_start, res.q_end
            return
        self.score[idx] = res.score
        self.q_start[idx] = res.q_start
        self.q_end[idx] = res.q_end


def _long_pairs(name: str):
    """The runner of long pairs on backend ``name``: :func:`.long.align_long`, its leaves
    aligned by :func:`align_with` (the short path) on ``name``, its row passes on
    :data:`ROW_PASS_BACKEND`."""
    def run(q: Packed, t: Packed, idx: np.ndarray, job: Job, k: int,
            threads: int | None) -> BatchResult:
        def leaves(reads: Packed, windows: Packed, leaf_job: Job) -> AlignResult:
            return align_with(reads, windows, leaf_job, name, threads)
        return align_long(q, t, idx, job, leaves, LONG_PAIR, ROW_PASS_BACKEND, threads)
    return run


def _long_bounds(group: np.ndarray, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Batches of long pairs of at most :data:`LONG_BATCH_SYMBOLS` symbols (one pair at least)."""
    total = np.cumsum(m[group] + n[group])
    cuts = [0]
    while cuts[-1] < group.shape[0]:
        before = int(total[cuts[-1] - 1]) if cuts[-1] else 0
        nxt = int(np.searchsorted(total, before + LONG_BATCH_SYMBOLS, side="right"))
        cuts.append(max(nxt, cuts[-1] + 1))
    return np.array(cuts, np.int64)


def _long_route(job: Job, name: str) -> str:
    """Where long pairs of ``job`` go, in words (the log says it)."""
    if _bit_parallel(job):
        return "distances by Myers' bit-parallel scan on the CPU"
    return (f"linear-memory splits (row passes on the {ROW_PASS_BACKEND.upper()}), leaves of "
            f"at most {LONG_PAIR} symbols aligned on {name}")


def _plan_batches(groups, m: np.ndarray, n: np.ndarray, every: Bounds, job: Job) -> list:
    """``(runner, pair indices, k, backend)`` of every host batch, in the order they run;
    ``groups``: ``(pair indices, k, backend, long)`` (long pairs: :func:`_long_pairs`, or
    bit-parallel distances)."""
    plan = []
    for group, k, where, is_long in groups:
        if group.shape[0] == 0:
            continue
        if is_long:
            run = _long_distances if _bit_parallel(job) else _long_pairs(where)
            bounds = _long_bounds(group, m, n)
        else:
            run = _on_gpu if where == "cuda" else cpu.align_batch
            bounds = _batch_bounds(group, m, n, every, BATCH_CELLS[where])
        plan.extend((run, group[lo:hi], k, where) for lo, hi in zip(bounds[:-1], bounds[1:]))
    return plan


def _releaser(q, t):
    """A call that lets go of ``q``'s and ``t``'s list elements (inputs read in place), or None.

    The GPU pipeline calls it once its last chunk is staged, so the references drop while
    the GPU still aligns (for two lists of a million str on the H100 host the call ended 3-4 ms
    sooner: benchmarks/RESULTS.md, 2026-11-26, ``5e76f41``).
    """
    held = [x for x in (q, t) if isinstance(x, StringRows)]
    if not held:
        return None

    def release() -> None:
        for x in held:
            x.release()
    return release


def align_packed(q: Packed, t: Packed, job: Job, backend: str = "auto",
                 threads: int | None = None) -> AlignResult:
    """Align pair i = (q[i], t[i]) for every i and return results in input order."""
    return align_with(q, t, job, backends.resolve(backend), threads)


def align_with(q: Packed, t: Packed, job: Job, name: str, threads: int | None = None) -> AlignResult:
    """:func:`align_packed` on an already resolved backend (``"cpu"`` or ``"cuda"``)."""
    check_counts(q, t)
    npairs = len(q)
    m = q.lengths
    n = t.lengths
    dist = np.empty(npairs, dtype=np.int32)  # every pair is written by exactly one batch
    ref_start = np.empty(npairs, dtype=np.int64)
    ref_end = np.empty(npairs, dtype=np.int64)
    n_ops = np.empty(npairs, dtype=np.int64)
    scored = _ScoredArrays(npairs) if job.scores is not None else None
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    offsets = None  # the backend's run offsets, where one batch is the whole call in order
    with stage("sort by length", npairs):
        every = Bounds.of(m, n)
        order = length_order(m, n, every)
        short, long = _split_long(order, m, n, every)
    if long.shape[0]:
        log.info("%d pair(s) with a side longer than %d symbols take the long path: %s",
                 long.shape[0], LONG_PAIR, _long_route(job, name))
    short_bounds = every if short is order else Bounds.of(m[short], n[short])
    k_short = job.k or _default_k(short_bounds, short.shape[0], job, name)
    plan = _plan_batches(((short, k_short, name, False), (long, job.k, name, True)),
                         m, n, every, job)
    for i, (run, idx, k, where) in enumerate(plan):
        last_gpu = run is _on_gpu and i == len(plan) - 1
        extra = {"done_reading": _releaser(q, t)} if last_gpu else {}
        with stage(f"align batch ({where})", idx.shape[0]):
            res = run(q, t, idx, job, k, threads, **extra)
        with stage("results to input order", idx.shape[0]):
            whole = idx.shape[0] == npairs and is_range(idx, 0)
            if whole:
                dist, ref_start, ref_end, n_ops = res.dist, res.ref_start, res.ref_end, res.n_ops
                offsets = res.run_offsets
            else:
                scatter_results(idx, res.dist, res.ref_start, res.ref_end, res.n_ops, dist,
                                ref_start, ref_end, n_ops)
            if scored is not None:
                scored.put(idx, res, whole)
        if job.with_cigar:
            pieces.extend((idx[lo:hi], runs) for lo, hi, runs in res.ops)
    with stage("CIGARs to input order", npairs):
        if offsets is None:
            offsets = flatseq.offsets_of(n_ops)
        ops = _place_ops(pieces, n_ops, offsets, npairs)
    if scored is None:
        mode = "infix" if job.infix else "global"
        return AlignResult(dist, ref_start, ref_end, ops, offsets, mode, name,
                           read_lengths=q.lengths)
    return AlignResult(dist, ref_start, ref_end, ops, offsets, MODE_NAMES[job.scores.mode], name,
                       scored.score, (scored.q_start, scored.q_end), q.lengths)
