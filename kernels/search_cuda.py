"""The CUDA kernel of protein search's score pass, built from :mod:`.search_scores`.

One thread per database sequence of a chunk (in length order, so a warp's sequences are of
nearly one length) and query: the grid's x runs over the sequences, its y over the queries
of the launch, so that one launch keeps the GPU busy even where a chunk is short, and the
longest sequences' tail is paid once a launch, not once a query. The substitution table is
copied into shared memory by each block. A thread keeps its strips' bottom rows in global
scratch interleaved by warp: column ``j`` of lane ``l`` of warp ``w`` at ``q * size +
warp_base[w] + j * 32 + l`` for the launch's ``q``-th query, so a warp's 32 loads or stores
of one column are one coalesced access (:func:`warp_layout` sizes it from each warp's
longest sequence).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda, int32

from .disk_cache import cache_by_source
from .search_scores import build
from .simulator import simulated

WARP = 32
TPB = 32 if simulated() else 128
"""Threads (database sequences) per block."""
TABLE_CELLS = 1024
"""Shared-memory entries of the extended substitution table (named matrices need 625)."""


def warp_layout(lengths: np.ndarray) -> tuple[np.ndarray, int]:
    """Each warp's first scratch entry and the scratch's size, for sequences of ``lengths``
    (a warp's lanes interleaved, as long as its longest sequence)."""
    count = lengths.shape[0]
    warps = -(-count // WARP)
    padded = np.zeros(warps * WARP, np.int64)
    padded[:count] = lengths
    rows = padded.reshape(warps, WARP).max(axis=1) * WARP
    base = np.zeros(warps + 1, np.int64)
    np.cumsum(rows, out=base[1:])
    return base[:-1], int(base[-1])


@cache
def score_kernel():
    """Compile (once) the kernel ``kernel[(blocks, queries), TPB](table, width, goe, ge,
    queries, query_offsets, subjects, offsets, warp_base, size, hb, fb, out)``: ``out[q,
    s]``, the best local score of query ``q`` (``queries[query_offsets[q]:query_offsets[q +
    1]]``, padded) against subject ``s``."""
    score = build(cuda.jit(device=True)).sequence_score

    @cuda.jit
    def search_scores(table, width, goe, ge, queries, query_offsets, subjects, offsets,
                      warp_base, size, hb, fb, out):
        shared = cuda.shared.array(TABLE_CELLS, int32)
        for x in range(cuda.threadIdx.x, width * width, cuda.blockDim.x):
            shared[x] = table[x]
        cuda.syncthreads()
        s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        q = cuda.blockIdx.y
        if s >= out.shape[1]:
            return
        tb = offsets[s]
        qb = query_offsets[q]
        base = q * size + warp_base[s // WARP] + s % WARP
        out[q, s] = score(shared, width, goe, ge, queries, qb, query_offsets[q + 1] - qb,
                          subjects, tb, offsets[s + 1] - tb, hb, fb, base, WARP)

    if not simulated():
        cache_by_source(search_scores, "cuda-search")
    return search_scores
