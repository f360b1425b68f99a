"""GPU backend for scored alignment: the kernels of :func:`readalign.kernels.cuda.scored_kernels`.

A host batch (length-sorted) is cut into device batches that fit the free device
memory; each is gathered straight from its input (packed codes, a fixed-width grid or
Python strings) into pinned buffers, copied in, run forward and back, and copied out.
CIGAR slots are sized from the lengths alone (``m + n + 2`` runs), so the traceback is
enqueued right behind the forward pass; the runs are then packed end to end on the
device, so only the CIGARs' real size crosses back to the host.
"""

from __future__ import annotations

import numpy as np

from ..kernels.cuda import compact_runs, scored_boundary_elements, scored_kernels
from ..kernels.quadrant import FAST_PATH_MAX
from ..runtime.gpu_memory import DevicePool, device_pool, pinned
from ..runtime.timing import Tally
from . import flatseq
from .cuda import THREADS_PER_BLOCK, device_batches
from .job import BatchResult, Job, slot_capacity
from .packing import AnyPacked


def lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool) -> int:
    """Device bytes one lane of a scored batch needs (int32 boundaries, CIGAR slots, sequences)."""
    rows, cols = scored_boundary_elements(m_max, n_max, k) if with_cigar else (0, 0)
    cigar = 8 * (m_max + n_max + 2) if with_cigar else 0  # worst-case slots, then packed runs
    return 8 * (rows + cols) + cigar + m_max + n_max + 96


def stage(q: AnyPacked, t: AnyPacked, part: np.ndarray) -> tuple:
    """The sequences of pairs ``part``, gathered into reused pinned buffers.

    Returns ``(q codes, q offsets, t codes, t offsets)``. Each input is read where it
    lives, so a batch is copied once on the host, on every core; the GPU reads pinned
    memory several times faster than pageable memory. The buffers are the calling
    thread's (:func:`readalign.runtime.gpu_memory.pinned`), so threads never share one.
    """
    return (*_stage_side(q, part, "q"), *_stage_side(t, part, "t"))


def _stage_side(src: AnyPacked, part: np.ndarray, name: str) -> tuple:
    key = ("scored", name)
    off = pinned((*key, "offsets"), part.shape[0] + 1, np.int64)
    total = int(flatseq.chunk_offsets(src.lengths, part, 0, part.shape[0], off))
    codes = pinned(key, total + 1, np.uint8)
    src.stage_into(part, 0, off, codes, translate=True)
    return codes, off


def upload(pool: DevicePool, staged: tuple, job: Job) -> tuple:
    """Enqueue the copies of a device batch's staged sequences (:func:`stage`) and the
    substitution table; the caller synchronises before the buffers are reused."""
    qc, qo, tc, to = staged
    return (pool.upload("q", qc), pool.upload("qo", qo), pool.upload("t", tc),
            pool.upload("to", to), pool.upload("sub", job.scores.sub))


def launch_forward(pool: DevicePool, dev: tuple, job: Job, k: int, count: int, m_max: int,
                   n_max: int) -> tuple:
    """Enqueue the scored forward kernel; returns ``(boundaries, score, end_i, end_j)`` on the device."""
    sc = job.scores
    rows, cols = scored_boundary_elements(m_max, n_max, k) if job.with_cigar else (1, 1)
    bufs = tuple(pool.space(name, size * count, np.int32)
                 for name, size in (("rbH", rows), ("rbF", rows), ("cbH", cols), ("cbE", cols)))
    score = pool.get("score", count, np.int32)
    end_i = pool.get("end_i", count, np.int64)
    end_j = pool.get("end_j", count, np.int64)
    *seqs, sub = dev
    scored_kernels(k)[0][_blocks(count), THREADS_PER_BLOCK, pool.stream](
        *seqs, sc.mode, sub, sc.size, sc.gap_open, sc.gap_extend, sc.clip, job.with_cigar, *bufs,
        score, end_i, end_j)
    return bufs, score, end_i, end_j


def launch_traceback(pool: DevicePool, dev: tuple, job: Job, k: int, fwd: tuple, d_off,
                     total_ops: int) -> tuple:
    """Enqueue the scored traceback; returns ``(ops, q_start, ref_start, n_ops, nm)`` on the device."""
    sc = job.scores
    bufs, _score, end_i, end_j = fwd
    count = end_i.shape[0]
    out = (pool.space("ops", total_ops, np.uint32), pool.get("q_start", count, np.int64),
           pool.get("ref_start", count, np.int64), pool.get("n_ops", count, np.int64),
           pool.get("nm", count, np.int64))
    *seqs, sub = dev
    scored_kernels(k)[1][_blocks(count), THREADS_PER_BLOCK, pool.stream](
        *seqs, sc.mode, sub, sc.size, sc.gap_open, sc.gap_extend, job.n_code, job.eqx, *bufs,
        end_i, end_j, d_off, out[0], *out[1:])
    return out


def slot_offsets(m: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, int]:
    """Each pair's first CIGAR slot (``m + n + 2`` runs each, for lengths ``m``, ``n``) and the total."""
    cap = slot_capacity(m, n, -1, scored=True)
    return np.cumsum(cap) - cap, int(cap.sum())


def _blocks(count: int) -> int:
    return (count + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK


def _run(pool: DevicePool, q: AnyPacked, t: AnyPacked, part: np.ndarray, job: Job, k: int,
         out: BatchResult, lo: int, hi: int, nm: np.ndarray, tally: Tally) -> np.ndarray | None:
    """Align the pairs ``part`` (batch positions ``lo:hi``); returns their runs."""
    count = hi - lo
    m, n = q.lengths[part], t.lengths[part]
    m_max, n_max = int(m.max()), int(n.max())
    assert m_max <= FAST_PATH_MAX and n_max <= FAST_PATH_MAX, "long pairs go to the CPU"
    with tally.stage("gather into pinned memory, enqueue the upload", count):
        dev = upload(pool, stage(q, t, part), job)
    fwd = launch_forward(pool, dev, job, k, count, m_max, n_max)
    _bufs, score, end_i, end_j = fwd
    score.copy_to_host(out.score[lo:hi], stream=pool.stream)
    end_i.copy_to_host(out.q_end[lo:hi], stream=pool.stream)
    end_j.copy_to_host(out.ref_end[lo:hi], stream=pool.stream)
    if not job.with_cigar:
        pool.stream.synchronize()
        out.q_start[lo:hi] = -1
        out.ref_start[lo:hi] = -1
        out.n_ops[lo:hi] = 0
        nm[lo:hi] = -1
        return None
    with tally.stage("kernels and small copies", count):
        slot_off, total = slot_offsets(m, n)
        d_slot = pool.upload("slot_off", slot_off)
        ops, q_start, ref_start, n_ops, d_nm = launch_traceback(pool, dev, job, k, fwd, d_slot,
                                                                total)
        q_start.copy_to_host(out.q_start[lo:hi], stream=pool.stream)
        ref_start.copy_to_host(out.ref_start[lo:hi], stream=pool.stream)
        n_ops.copy_to_host(out.n_ops[lo:hi], stream=pool.stream)
        d_nm.copy_to_host(nm[lo:hi], stream=pool.stream)
        pool.stream.synchronize()
    with tally.stage("pack CIGAR runs, copy back", count):
        counts = out.n_ops[lo:hi]
        out_off = np.zeros(count, np.int64)
        np.cumsum(counts[:-1], out=out_off[1:])
        used = int(counts.sum())
        runs = pool.get("runs", used, np.uint32)
        compact_runs(ops, d_slot, n_ops, pool.upload("out_off", out_off), runs, pool.stream)
        host = runs.copy_to_host(stream=pool.stream)
        pool.stream.synchronize()
    return host[:used]


def align_batch(q: AnyPacked, t: AnyPacked, idx: np.ndarray, job: Job, k: int,
                threads: int | None = None) -> BatchResult:
    """The scored GPU backend: align the pairs ``idx`` (length-sorted); results in ``idx`` order."""
    count = idx.shape[0]
    out = BatchResult(np.empty(count, np.int32), np.empty(count, np.int64),
                      np.empty(count, np.int64), np.empty(count, np.int64), [],
                      np.empty(count, np.int32), np.empty(count, np.int64),
                      np.empty(count, np.int64))
    nm = np.empty(count, np.int64)
    pool = device_pool("scored")
    tally = Tally()
    m, n = q.lengths[idx], t.lengths[idx]
    for lo, hi, _m_max, _n_max in device_batches(m, n, k, job.with_cigar, lane_bytes=lane_bytes):
        runs = _run(pool, q, t, idx[lo:hi], job, k, out, lo, hi, nm, tally)
        if runs is not None:
            out.ops.append((lo, hi, runs))
    out.dist[:] = nm
    tally.report("  scored gpu backend: ")
    return out
