"""CPU backend: runs the shared quadrant algorithm on every core (numba prange)."""

from __future__ import annotations

import numba
import numpy as np

from .encoding import Packed

CHUNKS_PER_THREAD = 8


def align_batch(q: Packed, t: Packed, idx: np.ndarray, job, k: int, slot_off: np.ndarray,
                slots: np.ndarray, dist: np.ndarray, ref_start: np.ndarray, ref_end: np.ndarray,
                n_ops: np.ndarray, threads: int | None) -> None:
    """Align the pairs ``idx`` (length-sorted) and write their results in place."""
    from .kernels.cpu import batch_driver

    nthreads = numba.get_num_threads()
    use = nthreads if threads is None else max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    nchunks = max(1, min(idx.shape[0], use * CHUNKS_PER_THREAD))
    bounds = np.linspace(0, idx.shape[0], nchunks + 1).astype(np.int64)
    run = batch_driver(k)
    numba.set_num_threads(use)
    try:
        run(q.data, q.offsets, t.data, t.offsets, idx, bounds, job.infix, job.max_distance,
            job.n_code, job.eqx, job.with_cigar, slot_off, slots, dist, ref_start, ref_end, n_ops)
    finally:
        numba.set_num_threads(nthreads)
