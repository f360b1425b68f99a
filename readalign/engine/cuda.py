"""GPU backend, device side: how many pairs fit on the device, and the two kernel launches.

A host batch (length-sorted) is cut into chunks sized from free device memory
(:func:`device_batches`) and run as a pipeline over CUDA streams with pinned
staging buffers (:mod:`.cuda_stream`, which holds the backend's entry point,
``align_batch``). :func:`launch_forward` and :func:`launch_traceback` are the
only places that launch the quadrant kernels; the benchmark times them too.
"""

from __future__ import annotations

import numpy as np

from ..kernels.cuda import BOUNDARY_DTYPE, batch_layout, boundary_elements, kernels, launch
from ..kernels.simulator import simulated
from ..runtime.gpu_memory import MEMORY_FRACTION, DevicePool, free_device_bytes
from .flatseq import length_bounds
from .job import Job

THREADS_PER_BLOCK = 128
SIM_BATCH = 64
"""Device batch size under the CUDA simulator (it runs one Python thread per lane)."""
MAX_DEVICE_BATCH = 1 << 24


def _lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool) -> int:
    rows, cols = boundary_elements(m_max, n_max, k)
    boundary = (rows + cols) * np.dtype(BOUNDARY_DTYPE).itemsize if with_cigar else 0
    cigar = 4 * (2 * max(m_max, n_max) + 1) if with_cigar else 0
    return boundary + cigar + m_max + n_max + 64


def device_batches(m: np.ndarray, n: np.ndarray, k: int, with_cigar: bool, slots: int = 1,
                   max_pairs: int | None = None,
                   lane_bytes=None) -> list[tuple[int, int, int, int]]:
    """Split a length-sorted batch so each piece's buffers (``slots`` at once) fit in device memory.

    Returns ``(lo, hi, m_max, n_max)`` per piece, its longest read and window with it.
    ``lane_bytes(m_max, n_max, k, with_cigar)`` is what one lane needs (default: the
    edit-distance kernels').
    """
    lane_bytes = lane_bytes or _lane_bytes
    budget = free_device_bytes() * MEMORY_FRACTION / slots
    cap = SIM_BATCH if simulated() else min(max_pairs or MAX_DEVICE_BATCH, MAX_DEVICE_BATCH)
    pieces = []
    lo = 0
    total = m.shape[0]
    while lo < total:
        hi = min(lo + cap, total)
        while True:
            _, m_max, _, n_max = (int(x) for x in length_bounds(m[lo:hi], n[lo:hi]))
            if hi - lo <= 32 or (hi - lo) * lane_bytes(m_max, n_max, k, with_cigar) <= budget:
                break
            hi = lo + (hi - lo) // 2
        pieces.append((lo, hi, m_max, n_max))
        lo = hi
    return pieces


def _blocks(count: int) -> int:
    return (count + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK


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
    launch(kernels(k, vote)[0], _blocks(count), THREADS_PER_BLOCK, pool.stream,
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
    launch(kernels(k, vote)[1], _blocks(count), THREADS_PER_BLOCK, pool.stream,
           seqs, (job.infix, job.n_code, job.eqx), bounds, (dist, start, end), (d_off, ops, nops))
    return ops, nops
