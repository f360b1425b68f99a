"""GPU steps for scored alignment: the kernels of :func:`readalign.kernels.cuda.scored_kernels`.

A host batch (length-sorted) runs through the same chunked pipeline over CUDA
streams as edit distance (:mod:`.pipeline`: chunks staged straight from their
input into pinned buffers while earlier chunks run), with the scored kernels' steps
(:class:`ScoredSteps`).
"""

from __future__ import annotations

import functools

import numpy as np

from ...kernels import scored_packed
from ...kernels.cuda import (
    batch_layout,
    compact_scored_runs,
    even_lanes,
    launch,
    running_offsets,
    scored_boundary_elements,
    scored_kernels,
    scored_packed_kernels,
)
from ...kernels.scored_quadrant import cigar_slots, fits_int16
from ...runtime import host_copy
from ...runtime.gpu_memory import DevicePool, download
from .. import flatseq
from ..job import BatchResult, Job
from .chunks import Chunk, Slot, Staged, upload_side
from .run_store import RunStore
from .sizing import THREADS_PER_BLOCK, blocks


def _narrow(sc, m_max: int, n_max: int) -> bool:
    """Whether a batch's scores and boundaries fit int16 (:func:`fits_int16`)."""
    return fits_int16(sc.mode, sc.gap_open, sc.gap_extend, int(sc.sub.max()), sc.clip, m_max,
                      n_max)


PACKED = True
"""Whether batches that admit it take the packed local pass (False: the 32-bit pass for every
batch, the benchmarks' ablation)."""


def packs(sc, m_max: int, n_max: int) -> bool:
    """Whether a batch takes the packed local pass, two pairs per thread
    (:func:`~readalign.kernels.scored_packed.packs`)."""
    return PACKED and _narrow(sc, m_max, n_max) and scored_packed.packs(
        sc.mode, sc.size, int(sc.sub.max()), int(sc.sub.min()), sc.gap_open, sc.gap_extend,
        sc.clip, m_max, n_max)


@functools.lru_cache(maxsize=16)
def _pair_table(sub: bytes, size: int) -> np.ndarray:
    return scored_packed.pair_table(np.frombuffer(sub, np.int32), size)


def lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool, scores=None) -> int:
    """Device bytes one lane of a scored batch needs: CIGAR slots, sequences, and boundaries
    (two arrays each way) of int16 where ``scores`` (a job's) fit them, else of int32."""
    rows, cols = scored_boundary_elements(m_max, n_max, k) if with_cigar else (0, 0)
    cell = 2 if scores is not None and _narrow(scores, m_max, n_max) else 4
    cigar = 8 * cigar_slots(m_max, n_max) if with_cigar else 0  # worst-case slots, then runs
    return 2 * cell * (rows + cols) + cigar + m_max + n_max + 96


def launch_forward(pool: DevicePool, dev: tuple, job: Job, k: int, count: int, m_max: int,
                   n_max: int) -> tuple:
    """Enqueue the scored forward kernel; returns ``(boundaries, score, end_i, end_j)`` on the device.

    ``boundaries`` are ``(rbH, rbF, cbH, cbE, rlen, clen, lanes)``
    (:func:`~readalign.kernels.cuda.batch_layout`, :func:`~readalign.kernels.cuda.even_lanes`).
    They and the working row are int16 where the batch's values provably fit
    (:func:`~readalign.kernels.scored_quadrant.fits_int16`), else int32. Batches that
    :func:`packs` admits run two pairs per thread."""
    sc = job.scores
    narrow = _narrow(sc, m_max, n_max)
    cell = np.int16 if narrow else np.int32
    rows, cols = scored_boundary_elements(m_max, n_max, k) if job.with_cigar else (1, 1)
    lanes = even_lanes(count)
    arrays = tuple(pool.space(name, size * lanes, cell)
                   for name, size in (("rbH", rows), ("rbF", rows), ("cbH", cols), ("cbE", cols)))
    layout = (*batch_layout(m_max, n_max), lanes)
    score = pool.get("score", count, np.int32)
    end_i = pool.get("end_i", count, np.int64)
    end_j = pool.get("end_j", count, np.int64)
    *seqs, sub = dev
    role = 1 if job.with_cigar else 0
    if packs(sc, m_max, n_max):
        table = pool.constant("sub2", _pair_table(sc.sub.astype(np.int32).tobytes(), sc.size))
        words = tuple(a[:size * lanes].view(np.uint32)
                      for a, size in zip(arrays, (rows, rows, cols, cols), strict=True))
        launch(scored_packed_kernels(k)[role], blocks((count + 1) // 2), THREADS_PER_BLOCK,
               pool.stream, tuple(seqs), (sc.mode, table, sc.size, sc.gap_open, sc.gap_extend,
                                          sc.clip), words + layout, (score, end_i, end_j))
    else:
        launch(scored_kernels(k, narrow=narrow)[role], blocks(count), THREADS_PER_BLOCK,
               pool.stream, tuple(seqs), (sc.mode, sub, sc.size, sc.gap_open, sc.gap_extend,
                                          sc.clip), arrays + layout, (score, end_i, end_j))
    return arrays + layout, score, end_i, end_j


def slot_total(q_off: np.ndarray, t_off: np.ndarray) -> int:
    """CIGAR slots of a chunk (:func:`~readalign.kernels.scored_quadrant.cigar_slots` a
    lane), from the staged offsets (one more than the lanes): the traceback kernel finds each
    lane's first slot the same way (:func:`~readalign.kernels.cuda.scored_slot`)."""
    lanes = q_off.shape[0] - 1
    return cigar_slots(int(q_off[lanes]), int(t_off[lanes]), lanes)


def launch_traceback(pool: DevicePool, dev: tuple, job: Job, k: int, fwd: tuple,
                     total_ops: int) -> tuple:
    """Enqueue the scored traceback into ``total_ops`` slots (:func:`slot_total`); returns
    ``(ops, q_start, ref_start, n_ops, nm)`` on the device."""
    sc = job.scores
    bufs, _score, end_i, end_j = fwd
    count = end_i.shape[0]
    out = (pool.space("ops", total_ops, np.uint32), pool.get("q_start", count, np.int64),
           pool.get("ref_start", count, np.int64), pool.get("n_ops", count, np.int64),
           pool.get("nm", count, np.int64))
    *seqs, sub = dev
    narrow = bufs[0].dtype == np.int16
    launch(scored_kernels(k, narrow=narrow)[2], blocks(count), THREADS_PER_BLOCK, pool.stream,
           tuple(seqs), (sc.mode, sub, sc.size, sc.gap_open, sc.gap_extend, sc.clip),
           (job.n_code, job.eqx), bufs, (end_i, end_j), out)
    return out


class ScoredSteps:
    """Steps 2-4 of :func:`.pipeline.run_pipeline` for scored alignment (:class:`.pipeline.Steps`).

    CIGAR slots are sized from the lengths (``cigar_slots`` runs a lane, found by each
    lane from the staged offsets), so the traceback is enqueued right behind the
    forward pass, and the runs are packed end to end on the device behind it (their
    offsets scanned there too); once the offsets are back, only the runs' real size
    crosses to the host.
    """

    def __init__(self, job: Job, k: int, count: int) -> None:
        self.job, self.k = job, k
        self.res = BatchResult(np.empty(count, np.int32), np.empty(count, np.int64),
                               np.empty(count, np.int64), np.empty(count, np.int64), [],
                               np.empty(count, np.int32), np.empty(count, np.int64),
                               np.empty(count, np.int64))
        self.runs = RunStore(count)

    def lane_bytes(self, m_max: int, n_max: int) -> int:
        """What one lane of a piece needs on the device (:func:`lane_bytes`, for the job's
        scores)."""
        return lane_bytes(m_max, n_max, self.k, self.job.with_cigar, self.job.scores)

    def launch(self, c: Chunk, slot: Slot, staged: tuple[Staged, Staged]) -> None:
        """Enqueue: copy in, forward kernel, (CIGARs) the traceback, the runs' offsets and
        packing, and every result but the runs back.

        Nothing sits between the two kernels on the stream: a copy in between waited for the
        next chunk's copy in on the copy engine, and the GPU idled 0.7-1.3 ms a chunk
        (benchmarks/RESULTS.md, 2026-11-26, ``043bb04``)."""
        job, pool, n, stream = self.job, slot.dev, c.count, slot.stream
        slot.mark(c, "start")
        q_codes, q_off = upload_side(slot, staged[0], "q")
        t_codes, t_off = upload_side(slot, staged[1], "t")
        dev = (q_codes, q_off, t_codes, t_off, pool.upload("sub", job.scores.sub))
        slot.mark(c, "copied in")
        c.bufs = launch_forward(pool, dev, job, self.k, n, c.m_max, c.n_max)
        slot.mark(c, "forward done")
        if job.with_cigar:
            slot.mark(c, "traceback start")
            total = slot_total(staged[0].offsets, staged[1].offsets)
            ops, q_start, ref_start, n_ops, nm = launch_traceback(pool, dev, job, self.k, c.bufs,
                                                                  total)
            run_off = pool.get("run_off", n + 1, np.int64)
            running_offsets(n_ops, run_off, stream)
            c.runs = pool.space("runs", total, np.uint32)
            compact_scored_runs(ops, q_off, t_off, run_off, c.runs, stream)
            slot.mark(c, "traceback done")
            download(run_off, slot.host("run_off", n + 1, np.int64), stream)
            download(q_start, slot.host("q_start", n, np.int64), stream)
            download(ref_start, slot.host("ref_start", n, np.int64), stream)
            download(nm, slot.host("nm", n, np.int64), stream)
        _bufs, score, end_i, end_j = c.bufs
        download(score, slot.host("score", n, np.int32), stream)
        download(end_i, slot.host("end_i", n, np.int64), stream)
        download(end_j, slot.host("end_j", n, np.int64), stream)

    def follow(self, c: Chunk, slot: Slot) -> None:
        """Wait for the runs' offsets; enqueue the copy of the packed runs back."""
        slot.stream.synchronize()
        if self.job.with_cigar:
            n = c.count
            c.total_ops = int(slot.host("run_off", n + 1, np.int64)[n])
            download(c.runs, slot.host("ops", c.total_ops, np.uint32), slot.stream)
        slot.mark(c, "end")

    def collect(self, c: Chunk, slot: Slot) -> None:
        """Wait for the chunk and copy its results out of the pinned buffers."""
        slot.stream.synchronize()
        n, res, lo, hi = c.count, self.res, c.lo, c.hi
        if not self.job.with_cigar:
            res.score[lo:hi] = slot.host("score", n, np.int32)
            res.q_end[lo:hi] = slot.host("end_i", n, np.int64)
            res.ref_end[lo:hi] = slot.host("end_j", n, np.int64)
            res.q_start[lo:hi] = -1
            res.ref_start[lo:hi] = -1
            res.dist[lo:hi] = -1
            res.n_ops[lo:hi] = 0
            return
        runs, base = self.runs.space(hi, c.total_ops)
        flatseq.place_scored(lo, base, slot.host("score", n, np.int32),
                             slot.host("end_i", n, np.int64), slot.host("q_start", n, np.int64),
                             slot.host("nm", n, np.int64), slot.host("ref_start", n, np.int64),
                             slot.host("end_j", n, np.int64),
                             slot.host("run_off", n + 1, np.int64), res.score, res.q_end,
                             res.q_start, res.dist, res.ref_start, res.ref_end, res.n_ops,
                             self.runs.offsets)
        host_copy.copy_into(runs, base, slot.host("ops", c.total_ops, np.uint32))
