"""GPU backend: the quadrant kernels of :mod:`readalign.kernels.cuda` over a host batch.

A host batch (length-sorted) is cut into chunks sized from free device memory
and run as a pipeline over ``SLOTS`` CUDA streams with pinned staging buffers
(:mod:`.cuda_stream`, which also holds the backend's entry point, ``align_batch``).
"""

from __future__ import annotations

import logging

import numpy as np
from numba import config

from ..runtime.gpu_memory import free_device_bytes

log = logging.getLogger("readalign")

THREADS_PER_BLOCK = 128
MEMORY_FRACTION = 0.6
"""Share of free device memory one device batch may use."""
SIM_BATCH = 64
"""Device batch size under the CUDA simulator (it runs one Python thread per lane)."""
MAX_DEVICE_BATCH = 1 << 24


def _lane_bytes(m_max: int, n_max: int, k: int, with_cigar: bool) -> int:
    from ..kernels.cuda import BOUNDARY_DTYPE, boundary_elements

    rows, cols = boundary_elements(m_max, n_max, k)
    boundary = (rows + cols) * np.dtype(BOUNDARY_DTYPE).itemsize if with_cigar else 0
    cigar = 4 * (2 * max(m_max, n_max) + 1) if with_cigar else 0
    return boundary + cigar + m_max + n_max + 64


def device_batches(m: np.ndarray, n: np.ndarray, k: int, with_cigar: bool, slots: int = 1,
                   max_pairs: int | None = None) -> list[tuple[int, int]]:
    """Split a length-sorted batch so each piece's buffers (``slots`` at once) fit in device memory."""
    budget = free_device_bytes() * MEMORY_FRACTION / slots
    cap = SIM_BATCH if config.ENABLE_CUDASIM else min(max_pairs or MAX_DEVICE_BATCH, MAX_DEVICE_BATCH)
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
