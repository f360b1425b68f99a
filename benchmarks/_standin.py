"""A stand-in for the alignment kernel, so a benchmark can time every other stage.

Each pair gets the ungapped alignment of the read at offset ``pad`` of its
window (where the simulated candidates put it): a valid alignment with a real
CIGAR, NM and MD, computed in microseconds, so assembly and writing do the
same work as after the real kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from readalign.engine.packing import Packed
from readalign.engine.result import AlignResult


@njit(cache=True, nogil=True, parallel=True)
def _ungapped(q, q_off, t, t_off, pad, n_code, sub, size):
    npairs = q_off.shape[0] - 1
    dist = np.full(npairs, -1, np.int32)
    score = np.full(npairs, np.iinfo(np.int32).min, np.int32)
    start = np.full(npairs, -1, np.int64)
    end = np.full(npairs, -1, np.int64)
    ops = np.zeros(npairs, np.uint32)
    n_ops = np.zeros(npairs, np.int64)
    for p in prange(npairs):
        m = q_off[p + 1] - q_off[p]
        n = t_off[p + 1] - t_off[p]
        if n < m:
            continue
        o = min(pad, n - m)
        d = 0
        sc = 0
        for k in range(m):
            a = q[q_off[p] + k]
            b = t[t_off[p] + o + k]
            if a != b or a == n_code:
                d += 1
            if size:
                sc += sub[a * size + b]
        dist[p] = d
        score[p] = sc
        start[p] = o
        end[p] = o + m
        ops[p] = np.uint32(m << 4)
        n_ops[p] = 1
    return dist, score, start, end, ops, n_ops


_NO_SUB = np.zeros(1, np.int32)


def ungapped_aligner(pad: int):
    """An ``Aligner`` for ``readalign.bam.run.run`` that places each read at ``pad``.

    For a scored job (a preset such as ``sr``) each pair also gets the ungapped alignment's
    score and the whole read as its aligned span, as the scored kernels report them.
    """

    def align(q: Packed, t: Packed, job, backend: str, threads: int) -> AlignResult:
        scored = job.scores
        sub, size = (scored.sub, scored.size) if scored is not None else (_NO_SUB, 0)
        dist, score, start, end, ops, n_ops = _ungapped(q.data, q.offsets, t.data, t.offsets,
                                                        pad, job.n_code, sub, size)
        if job.max_distance >= 0:
            dist[dist > job.max_distance] = -1
        keep = dist >= 0
        n_ops = np.where(keep, n_ops, 0)
        offsets = np.zeros(len(q) + 1, np.int64)
        np.cumsum(n_ops, out=offsets[1:])
        if scored is None:
            return AlignResult(dist, start, end, ops[keep], offsets, "infix", "standin",
                               read_lengths=q.lengths)
        lengths = q.lengths.astype(np.int64)
        spans = (np.where(keep, 0, -1).astype(np.int64), np.where(keep, lengths, -1))
        return AlignResult(dist, start, end, ops[keep], offsets, "infix", "standin",
                           scores=np.where(keep, score, np.iinfo(np.int32).min).astype(np.int32),
                           read_spans=spans, read_lengths=q.lengths)

    return align
