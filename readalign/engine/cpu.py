"""CPU backend: runs the shared quadrant algorithm on every core (a thread per core)."""

from __future__ import annotations

import numpy as np

from ..kernels.cpu import align_chunks
from ..runtime.backends import cpu_threads
from .job import BatchResult, gather_slices, slot_capacity
from .packing import Packed

CHUNKS_PER_THREAD = 8


def align_batch(q: Packed, t: Packed, idx: np.ndarray, job, k: int,
                threads: int | None) -> BatchResult:
    """Align the pairs ``idx`` (length-sorted) on every core; results in ``idx`` order."""
    count = idx.shape[0]
    use = cpu_threads(threads)
    nchunks = max(1, min(count, use * CHUNKS_PER_THREAD))
    bounds = np.linspace(0, count, nchunks + 1).astype(np.int64)
    m = q.lengths[idx]
    n = t.lengths[idx]
    cap = (slot_capacity(m, n, job.max_distance, job.scores is not None) if job.with_cigar
           else np.ones(count, np.int64))
    slot_off = np.cumsum(cap) - cap
    slots = np.zeros(int(cap.sum()), dtype=np.uint32)
    dist = np.empty(count, dtype=np.int32)
    ref_start = np.empty(count, dtype=np.int64)
    ref_end = np.empty(count, dtype=np.int64)
    n_ops = np.empty(count, dtype=np.int64)
    arrays = (q.data, q.offsets, t.data, t.offsets, idx)
    if job.scores is None:
        align_chunks(k, use, bounds, arrays, (job.infix, job.max_distance, job.n_code, job.eqx,
                     job.with_cigar), (slot_off, slots, dist, ref_start, ref_end, n_ops))
        return BatchResult(dist, ref_start, ref_end, n_ops,
                           [(0, count, gather_slices(slots, slot_off, n_ops))])
    sc = job.scores
    score = np.empty(count, dtype=np.int32)
    q_start = np.empty(count, dtype=np.int64)
    q_end = np.empty(count, dtype=np.int64)
    nm = np.empty(count, dtype=np.int64)
    align_chunks(k, use, bounds, arrays, (sc.mode, sc.sub, sc.size, sc.gap_open, sc.gap_extend,
                 sc.clip), (job.n_code, job.eqx, job.with_cigar), (slot_off, slots, score, q_start,
                 q_end, ref_start, ref_end, n_ops, nm), scored=True)
    return BatchResult(nm.astype(np.int32), ref_start, ref_end, n_ops,
                       [(0, count, gather_slices(slots, slot_off, n_ops))], score, q_start, q_end)
