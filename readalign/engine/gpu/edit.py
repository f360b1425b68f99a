"""GPU steps for edit distance: how much a lane needs on the device, and the two kernel launches.

:class:`EditSteps` runs them in the pipeline over CUDA streams with pinned staging
buffers (:mod:`.pipeline`). :func:`launch_forward` and :func:`launch_traceback` are the
only places that launch the quadrant kernels; the benchmark times them too.
"""

from __future__ import annotations

import numpy as np

from ...kernels.cuda import BOUNDARY_DTYPE, batch_layout, boundary_elements, kernels, launch
from ...runtime.gpu_memory import DevicePool, download
from .. import flatseq
from ..job import BatchResult, Job
from .chunks import Chunk, Slot, Staged, upload_side
from .run_store import RunStore
from .sizing import THREADS_PER_BLOCK, blocks


def lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool) -> int:
    """Device bytes one lane of an edit-distance piece needs: boundaries and CIGAR slots (with
    CIGARs) and the sequences (:func:`.sizing.device_batches` sizes pieces by it)."""
    rows, cols = boundary_elements(m_max, n_max, k)
    boundary = (rows + cols) * np.dtype(BOUNDARY_DTYPE).itemsize if with_cigar else 0
    cigar = 4 * (2 * max(m_max, n_max) + 1) if with_cigar else 0
    return boundary + cigar + m_max + n_max + 64


def launch_forward(pool: DevicePool, seqs: tuple, job: Job, k: int, count: int, m_max: int,
                   n_max: int, vote: bool = True) -> tuple:
    """Enqueue the forward kernel on ``pool.stream`` for ``count`` lanes.

    ``seqs`` are the device arrays ``(q, qoff, t, toff, order)``. Returns the
    device outputs ``(boundaries, dist, ref_start, ref_end)``, taken from ``pool``,
    ``boundaries`` being ``(rbuf, cbuf, rlen, clen)`` (:func:`batch_layout`); the
    traceback takes the four as they are. ``vote=False`` runs the kernel without
    the warp vote (the benchmark's ablation).
    """
    rows, cols = boundary_elements(m_max, n_max, k) if job.with_cigar else (1, 1)
    bounds = (pool.space("rbuf", rows * count, BOUNDARY_DTYPE),
              pool.space("cbuf", cols * count, BOUNDARY_DTYPE), *batch_layout(m_max, n_max))
    dist = pool.get("dist", count, np.int32)
    start = pool.get("start", count, np.int64)
    end = pool.get("end", count, np.int64)
    launch(kernels(k, vote)[0], blocks(count), THREADS_PER_BLOCK, pool.stream,
           seqs, (job.infix, job.max_distance, job.n_code, job.with_cigar), bounds,
           (dist, start, end))
    return bounds, dist, start, end


def upload_slots(pool: DevicePool, out_off: np.ndarray):
    """Enqueue the copy of the CIGAR slot offsets (``out_off[p]``: lane p's first slot)."""
    return pool.upload("out_off", out_off)


def launch_traceback(pool: DevicePool, seqs: tuple, job: Job, k: int, outs: tuple, d_off,
                     total_ops: int, vote: bool = True) -> tuple:
    """Enqueue the traceback on ``pool.stream``.

    ``outs`` is what :func:`launch_forward` returned; ``d_off`` the slot
    offsets on the device (:func:`upload_slots`), ``total_ops`` slots in all.
    Returns the device arrays ``(ops, n_ops)`` (at least as long as needed);
    ``ref_start``/``ref_end`` of ``outs`` are updated.
    """
    bounds, dist, start, end = outs
    count = dist.shape[0]
    ops = pool.cleared("out", total_ops, np.uint32)  # lanes write part of their slots; all come back
    nops = pool.space("nops", count, np.int64)
    launch(kernels(k, vote)[1], blocks(count), THREADS_PER_BLOCK, pool.stream,
           seqs, (job.infix, job.n_code, job.eqx), bounds, (dist, start, end), (d_off, ops, nops))
    return ops, nops


class EditSteps:
    """Steps 2-4 of :func:`.pipeline.run_pipeline` for edit distance (:class:`.pipeline.Steps`):
    distances back after the forward pass size each lane's CIGAR slots (``2d+1`` runs) for the
    traceback."""

    def __init__(self, job: Job, k: int, count: int) -> None:
        self.job, self.k = job, k
        self.res = BatchResult(np.empty(count, np.int32), np.empty(count, np.int64),
                               np.empty(count, np.int64), np.empty(count, np.int64), [])
        self.runs = RunStore(count)

    def lane_bytes(self, m_max: int, n_max: int) -> int:
        """What one lane of a piece needs on the device (:func:`lane_bytes`)."""
        return lane_bytes(m_max, n_max, self.k, self.job.with_cigar)

    def launch(self, c: Chunk, slot: Slot, staged: tuple[Staged, Staged]) -> None:
        """Enqueue: copy the chunk in, forward kernel, distances (and spans) back."""
        job, pool = self.job, slot.dev
        slot.mark(c, "start")
        c.seqs = (*upload_side(slot, staged[0], "q"), *upload_side(slot, staged[1], "t"),
                  pool.iota("order", c.count))
        slot.mark(c, "copied in")
        c.bufs = launch_forward(pool, c.seqs, job, self.k, c.count, c.m_max, c.n_max)
        slot.mark(c, "forward done")
        _, dist, start, end = c.bufs
        download(dist, slot.host("dist", c.count, np.int32), slot.stream)
        if not job.with_cigar:
            download(start, slot.host("start", c.count, np.int64), slot.stream)
            download(end, slot.host("end", c.count, np.int64), slot.stream)

    def follow(self, c: Chunk, slot: Slot) -> None:
        """Wait for the distances, size CIGAR slots, enqueue traceback and the copies back."""
        slot.stream.synchronize()
        if not self.job.with_cigar:
            slot.mark(c, "end")
            return
        n = c.count
        out_off = slot.host("out_off", n, np.int64)
        c.total_ops = int(flatseq.cigar_slots(slot.host("dist", n, np.int32), out_off))
        slot.mark(c, "traceback start")
        d_off = upload_slots(slot.dev, out_off)
        ops, nops = launch_traceback(slot.dev, c.seqs, self.job, self.k, c.bufs, d_off,
                                     c.total_ops)
        slot.mark(c, "traceback done")
        _, _, start, end = c.bufs
        download(start, slot.host("start", n, np.int64), slot.stream)
        download(end, slot.host("end", n, np.int64), slot.stream)
        download(nops, slot.host("nops", n, np.int64), slot.stream)
        download(ops, slot.host("ops", c.total_ops, np.uint32), slot.stream)
        slot.mark(c, "end")

    def collect(self, c: Chunk, slot: Slot) -> None:
        """Wait for the chunk and copy its results out of the pinned buffers."""
        slot.stream.synchronize()
        n, res = c.count, self.res
        nops = slot.host("nops", n, np.int64) if self.job.with_cigar else None
        flatseq.place_lanes(c.lo, slot.host("dist", n, np.int32), slot.host("start", n, np.int64),
                            slot.host("end", n, np.int64), nops, res.dist, res.ref_start,
                            res.ref_end, res.n_ops)
        if nops is not None:
            self._place_runs(c, slot, nops)

    def _place_runs(self, c: Chunk, slot: Slot, counts: np.ndarray) -> None:
        """A chunk's CIGAR runs, lane after lane, out of the lanes' slots in pinned ``ops``
        into the batch's runs, and the lanes' offsets."""
        n = c.count
        run_off = slot.host("run_off", n + 1, np.int64)
        total = int(flatseq.chunk_offsets(counts, None, 0, n, run_off))
        runs, base = self.runs.space(c.hi, total)
        flatseq.gather_into(slot.host("ops", c.total_ops, np.uint32),
                            slot.host("out_off", n, np.int64), counts, run_off, runs, base)
        flatseq.place_offsets(c.lo, base, run_off, self.runs.offsets)
