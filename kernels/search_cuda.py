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

from . import lanes16
from .disk_cache import cache_by_source
from .search_scores import NEG, STRIP, build, build_packed
from .simulator import simulated

WARP = 32
TPB = 32 if simulated() else 128
"""Threads (database sequences) per block."""
TABLE_CELLS = 1024
"""Shared-memory entries of the extended substitution table (named matrices need 625)."""
PASS_ROWS = WARP * STRIP
"""Query rows a block of :func:`long_score_kernel` covers in one pass over its sequence."""


@cuda.jit(device=True)
def fill_shared(shared, table, cells):
    """Copy ``table[:cells]`` into the block's shared array, every thread a share, and wait
    for the block."""
    for x in range(cuda.threadIdx.x, cells, cuda.blockDim.x):
        shared[x] = table[x]
    cuda.syncthreads()


def lane_lengths(lengths: np.ndarray) -> np.ndarray:
    """Each lane's length in the packed kernel: the longer of its two sequences (``2l`` and
    ``2l + 1``; an odd count's last lane has one)."""
    padded = np.zeros(-(-lengths.shape[0] // 2) * 2, np.int64)
    padded[:lengths.shape[0]] = lengths
    return padded.reshape(-1, 2).max(axis=1)


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
        fill_shared(shared, table, width * width)
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


@cache
def packed_score_kernel():
    """Compile (once) the packed kernel: the arguments of :func:`score_kernel` with
    ``goe2``/``ge2`` words for ``goe``/``ge``, :func:`.search_scores.packed_table` for the
    table and uint32 scratch laid out by :func:`warp_layout` of :func:`lane_lengths`; lane
    ``l`` scores sequences ``2l`` and ``2l + 1`` (Hopper's 16x2 instructions; plain integer
    halves on the simulator). Only pairs :func:`.search_scores.fits16` admits are exact."""
    device = cuda.jit(device=True)
    if simulated():
        ops, join = lanes16.signed_ops(device), device(lanes16.join_halves)
    else:
        ops, join = lanes16.signed_dpx_ops(), lanes16.ptx_word_op("prmt.b32", ", 0x5410")
    pair = build_packed(device, ops, join).pair_score

    @cuda.jit
    def search_scores16(table, width, goe2, ge2, queries, query_offsets, subjects, offsets,
                        warp_base, size, hb, fb, out):
        shared = cuda.shared.array(TABLE_CELLS, int32)
        fill_shared(shared, table, width * width)
        lane = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        q = cuda.blockIdx.y
        count = out.shape[1]
        s0 = 2 * lane
        if s0 >= count:
            return
        tb0 = offsets[s0]
        n0 = offsets[s0 + 1] - tb0
        tb1, n1 = tb0, 0
        if s0 + 1 < count:
            tb1 = offsets[s0 + 1]
            n1 = offsets[s0 + 2] - tb1
        qb = query_offsets[q]
        base = q * size + warp_base[lane // WARP] + lane % WARP
        word = pair(shared, width, goe2, ge2, queries, qb, query_offsets[q + 1] - qb, subjects,
                    tb0, n0, tb1, n1, hb, fb, base, WARP)
        out[q, s0] = int32(word & 0xFFFF)
        if s0 + 1 < count:
            out[q, s0 + 1] = int32(word >> 16)

    if not simulated():
        cache_by_source(search_scores16, "cuda-search-packed")
    return search_scores16


@cache
def long_score_kernel():
    """Compile (once) the kernel for long sequences: one block of :data:`WARP` threads per
    (sequence, query), ``kernel[(sequences, queries), WARP](table, width, goe, ge, queries,
    query_offsets, subjects, offsets, scratch_base, size, hb, fb, out)``.

    Thread ``k`` holds strip ``k`` of the :data:`PASS_ROWS` query rows of a pass and walks the
    sequence one column a step, ``k`` columns behind thread ``k - 1``, whose bottom row it
    takes from shared memory (two buffers, one barrier a step); thread 0 takes the previous
    pass's bottom row from ``hb``/``fb`` (sequence ``s``'s at ``q * size + scratch_base[s]``),
    where the last thread leaves its own. A sequence of ``n`` residues takes ``n + 31`` steps
    a pass, so a long sequence is 32 threads' work instead of one's. Queries are padded to
    whole passes (:func:`.search_scores.padded_query` of :data:`PASS_ROWS`).
    """
    ns = build(cuda.jit(device=True))
    column, strip_rows = ns.column, ns.strip_rows

    @cuda.jit
    def search_scores_long(table, width, goe, ge, queries, query_offsets, subjects, offsets,
                           scratch_base, size, hb, fb, out):
        shared = cuda.shared.array(TABLE_CELLS, int32)
        hand_h = cuda.shared.array((2, WARP), int32)
        hand_f = cuda.shared.array((2, WARP), int32)
        bests = cuda.shared.array(WARP, int32)
        k = cuda.threadIdx.x
        fill_shared(shared, table, width * width)
        s = cuda.blockIdx.x
        q = cuda.blockIdx.y
        tb = offsets[s]
        n = offsets[s + 1] - tb
        qb = query_offsets[q]
        mq = query_offsets[q + 1] - qb
        at = q * size + scratch_base[s]
        zero, neg = int32(0), int32(NEG)
        best = zero
        for p0 in range(qb, qb + mq, PASS_ROWS):
            qs = strip_rows(queries, p0 + k * STRIP, width)
            hs = (zero, zero, zero, zero, zero, zero, zero, zero)
            es = (neg, neg, neg, neg, neg, neg, neg, neg)
            diag = zero
            for t in range(n + WARP - 1):
                j = t - k
                if j >= 0 and j < n:
                    if k == 0:
                        up, f = zero, neg
                        if p0 > qb:
                            up, f = hb[at + j], fb[at + j]
                    else:
                        up, f = hand_h[(t - 1) & 1, k - 1], hand_f[(t - 1) & 1, k - 1]
                    hs, es, f, top = column(shared, qs, subjects[tb + j], hs, es, up, f, diag,
                                            goe, ge)
                    diag = up
                    best = max(best, top)
                    hand_h[t & 1, k] = hs[7]
                    hand_f[t & 1, k] = f
                    if k == WARP - 1:
                        hb[at + j] = hs[7]
                        fb[at + j] = f
                cuda.syncthreads()
        bests[k] = best
        cuda.syncthreads()
        if k == 0:
            for x in range(1, WARP):
                best = max(best, bests[x])
            out[q, s] = best

    if not simulated():
        cache_by_source(search_scores_long, "cuda-search-long")
    return search_scores_long
