"""GPU backend: the quadrant kernels of :mod:`readalign.kernels.cuda` over a host batch.

A host batch is cut into device batches sized from free device memory. Each
device batch: copy the pairs' packed sequences in, run the forward kernel
(distances, end columns, boundaries), size every pair's CIGAR slot from its
distance (``2d+1`` runs), run the traceback kernel, copy back only the
distances, spans and the run-length-encoded CIGARs.
"""

from __future__ import annotations

import logging

import numpy as np
from numba import config, cuda

from .encoding import Packed
from .engine import BatchResult, gather_slices
from .timing import stage

log = logging.getLogger("readalign")

THREADS_PER_BLOCK = 128
MEMORY_FRACTION = 0.6
"""Share of free device memory one device batch may use."""
SIM_BATCH = 64
"""Device batch size under the CUDA simulator (it runs one Python thread per lane)."""
MAX_DEVICE_BATCH = 1 << 24


def _free_bytes() -> int:
    if config.ENABLE_CUDASIM:
        return 1 << 30
    free, _total = cuda.current_context().get_memory_info()
    return int(free)


def _lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool) -> int:
    from .kernels.cuda import BOUNDARY_DTYPE, boundary_elements

    rows, cols = boundary_elements(m_max, n_max, k)
    boundary = (rows + cols) * np.dtype(BOUNDARY_DTYPE).itemsize if with_cigar else 0
    cigar = 4 * (2 * max(m_max, n_max) + 1) if with_cigar else 0
    return boundary + cigar + m_max + n_max + 64


def device_batches(m: np.ndarray, n: np.ndarray, k: int, with_cigar: bool) -> list[tuple[int, int]]:
    """Split a length-sorted batch so each piece's buffers fit in free device memory."""
    budget = _free_bytes() * MEMORY_FRACTION
    cap = SIM_BATCH if config.ENABLE_CUDASIM else MAX_DEVICE_BATCH
    bounds = []
    lo = 0
    total = m.shape[0]
    while lo < total:
        hi = min(lo + cap, total)
        while hi - lo > 32:
            need = (hi - lo) * _lane_bytes(int(m[lo:hi].max()), int(n[lo:hi].max()), k, with_cigar)
            if need <= budget:
                break
            hi = lo + (hi - lo) // 2
        bounds.append((lo, hi))
        lo = hi
    return bounds


def _upload(q: Packed, t: Packed, idx: np.ndarray, stream) -> dict:
    """Copy the packed sequences and the length-sorted pair order to the device once."""
    return {name: cuda.to_device(arr, stream=stream) for name, arr in
            (("q", q.data), ("qo", q.offsets), ("t", t.data), ("to", t.offsets), ("order", idx))}


def _run_device_batch(dev: dict, lo: int, hi: int, m_max: int, n_max: int, job, k: int,
                      stream) -> BatchResult:
    """Align lanes ``lo:hi`` of the uploaded order: forward, slot sizing, traceback."""
    from .kernels.cuda import BOUNDARY_DTYPE, boundary_elements, kernels

    forward_kernel, traceback_kernel, _ = kernels(k)
    count = hi - lo
    order = dev["order"][lo:hi]
    seqs = (dev["q"], dev["qo"], dev["t"], dev["to"], order)
    rows, cols = boundary_elements(m_max, n_max, k) if job.with_cigar else (1, 1)
    d_rbuf = cuda.device_array(max(rows * count, 1), dtype=BOUNDARY_DTYPE, stream=stream)
    d_cbuf = cuda.device_array(max(cols * count, 1), dtype=BOUNDARY_DTYPE, stream=stream)
    d_dist = cuda.device_array(count, dtype=np.int32, stream=stream)
    d_end = cuda.device_array(count, dtype=np.int64, stream=stream)
    blocks = (count + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    with stage("gpu forward + copy back", count):
        forward_kernel[blocks, THREADS_PER_BLOCK, stream](
            *seqs, job.infix, job.max_distance, job.n_code, job.with_cigar, d_rbuf, d_cbuf,
            d_dist, d_end)
        dist = d_dist.copy_to_host(stream=stream)
        ref_end = d_end.copy_to_host(stream=stream)
        stream.synchronize()
    ref_end[dist < 0] = -1
    if not job.with_cigar:
        start = np.where(dist >= 0, 0, -1) if not job.infix else np.full(count, -1)
        return BatchResult(dist, start.astype(np.int64), ref_end, np.zeros(count, np.int64),
                           np.zeros(0, np.uint32))
    cap = np.where(dist >= 0, 2 * dist.astype(np.int64) + 1, 0)
    out_off = np.cumsum(cap) - cap
    d_out = cuda.device_array(max(int(cap.sum()), 1), dtype=np.uint32, stream=stream)
    d_off = cuda.to_device(out_off, stream=stream)
    d_start = cuda.device_array(count, dtype=np.int64, stream=stream)
    d_nops = cuda.device_array(count, dtype=np.int64, stream=stream)
    with stage("gpu traceback + copy back", count):
        traceback_kernel[blocks, THREADS_PER_BLOCK, stream](
            *seqs, job.infix, job.n_code, job.eqx, d_rbuf, d_cbuf, d_dist, d_end, d_off, d_out,
            d_start, d_nops)
        out = d_out.copy_to_host(stream=stream)
        ref_start = d_start.copy_to_host(stream=stream)
        n_ops = d_nops.copy_to_host(stream=stream)
        stream.synchronize()
    with stage("compact CIGARs", count):
        ops = gather_slices(out, out_off, n_ops)
    return BatchResult(dist, ref_start, ref_end, n_ops, ops)


def align_batch(q: Packed, t: Packed, idx: np.ndarray, job, k: int,
                threads: int | None = None) -> BatchResult:
    """Align the pairs ``idx`` (length-sorted) on the GPU; results in ``idx`` order."""
    m = q.lengths[idx]
    n = t.lengths[idx]
    stream = cuda.stream()
    with stage("upload to GPU", idx.shape[0]):
        dev = _upload(q, t, idx, stream)
        stream.synchronize()
    parts = [_run_device_batch(dev, lo, hi, int(m[lo:hi].max()), int(n[lo:hi].max()), job, k,
                               stream)
             for lo, hi in device_batches(m, n, k, job.with_cigar)]
    if len(parts) == 1:
        return parts[0]
    return BatchResult(*(np.concatenate([getattr(p, f) for p in parts])
                         for f in ("dist", "ref_start", "ref_end", "n_ops", "ops")))
