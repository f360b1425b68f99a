"""Every size the GPU backend picks, in one place: how a call is cut before the kernels run.

A call's pairs are cut four times, coarsest first:

1. *host batches* (:data:`HOST_BATCH_CELLS` DP cells; :mod:`readalign.engine.batching` cuts
   them, with the CPU's own budget beside this one);
2. *device batches* (:func:`device_batches`): pieces whose device buffers fit
   :data:`~readalign.runtime.gpu_memory.MEMORY_FRACTION` of the device memory a call may
   count on (:func:`device_budget`), shared among the chunks in flight; what one lane
   needs is the steps' ``lane_bytes`` (:func:`readalign.engine.gpu.edit.lane_bytes`,
   :func:`readalign.engine.gpu.scored.lane_bytes`), passed in as an argument;
3. *chunks* (:func:`chunk_pairs`): about :data:`CHUNK_BYTES` of sequence each, evened out
   (:func:`even_chunks`), the pieces that the pipeline overlaps on its streams; a device
   batch is never longer than one;
4. the *launch grid*: :data:`THREADS_PER_BLOCK` lanes a block, :func:`blocks` blocks.

Under the CUDA simulator a device batch holds at most :data:`SIM_BATCH` pairs. Nothing
here knows a kernel, and importing it loads no CUDA code.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...kernels.simulator import simulated
from .. import flatseq

HOST_BATCH_CELLS = 1 << 37
"""DP cells per host batch on the GPU backend: bounds host memory for a batch's results; the
device batches below fit its pieces to device memory."""

THREADS_PER_BLOCK = 128
SIM_BATCH = 64
"""Device batch size under the CUDA simulator (it runs one Python thread per lane)."""
MAX_DEVICE_BATCH = 1 << 24

CHUNK_BYTES = 64 << 20
"""Sequence bytes per chunk: large enough to fill the GPU, small enough to overlap. On an H100,
150 bp pairs from S arrays: 1M pairs 35.9-36.0 ms at 64 MB, 37.9-38.0 at 48, 35.6-35.9 at 32
with 4 slots; 2M pairs 72.8-75.8, 75.7-76.2, 77.0-80.4 (benchmarks/RESULTS.md, "Chunk size")."""
MIN_CHUNK = 1 << 14
MAX_CHUNK = 1 << 20
LAST_SHARE = 0.25
"""A remainder of at most this share of a chunk is spread over the other chunks."""


def device_budget(slots: int) -> float:
    """Device bytes each of ``slots`` chunks in flight may use: their share of
    :data:`~readalign.runtime.gpu_memory.MEMORY_FRACTION` of what a call may count on."""
    from ...runtime.gpu_memory import MEMORY_FRACTION, free_device_bytes  # loads numba-cuda

    return free_device_bytes() * MEMORY_FRACTION / slots


def device_batches(m: np.ndarray, n: np.ndarray, lane_bytes: Callable[[int, int], int],
                   slots: int = 1, max_pairs: int | None = None) -> list[tuple[int, int, int, int]]:
    """Split a length-sorted batch so each piece's buffers (``slots`` at once) fit in device memory.

    Returns ``(lo, hi, m_max, n_max)`` per piece, its longest read and window with it.
    ``lane_bytes(m_max, n_max)`` is what one lane of a piece of those longest lengths needs
    (the steps' own count); ``max_pairs`` caps a piece (the chunk size).
    """
    budget = device_budget(slots)
    cap = SIM_BATCH if simulated() else min(max_pairs or MAX_DEVICE_BATCH, MAX_DEVICE_BATCH)
    pieces = []
    lo = 0
    total = m.shape[0]
    while lo < total:
        hi = min(lo + cap, total)
        while True:
            _, m_max, _, n_max = (int(x) for x in flatseq.length_bounds(m[lo:hi], n[lo:hi]))
            if hi - lo <= 32 or (hi - lo) * lane_bytes(m_max, n_max) <= budget:
                break
            hi = lo + (hi - lo) // 2
        pieces.append((lo, hi, m_max, n_max))
        lo = hi
    return pieces


def chunk_pairs(m: np.ndarray, n: np.ndarray, itemsize: int) -> int:
    """Pairs per chunk: about ``CHUNK_BYTES`` of sequence, within ``MIN_CHUNK..MAX_CHUNK``,
    evened out over the batch (:func:`even_chunks`)."""
    count = m.shape[0]
    per_pair = max(flatseq.total_length(m, n) / count * itemsize + 16, 1.0) if count else 1.0
    return even_chunks(count, int(min(max(CHUNK_BYTES // per_pair, MIN_CHUNK), MAX_CHUNK)))


def even_chunks(count: int, most: int) -> int:
    """Pairs per chunk for ``count`` pairs in chunks of about ``most`` (at most a quarter more),
    so that the last chunk is not a small remainder: 1M pairs at 199,728 a chunk ran as five
    chunks and one of 1,360, a whole round of waits, copies and collection for 0.1% of the pairs.
    """
    chunks = max(1, math.ceil(count / max(most, 1) - LAST_SHARE))
    return max(1, -(-count // chunks))


def blocks(count: int) -> int:
    """Blocks of :data:`THREADS_PER_BLOCK` for ``count`` lanes."""
    return (count + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
