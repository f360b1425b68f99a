"""CUDA kernels for word-list distances, built from the per-pair source of :mod:`.words`.

Dense kernel (:func:`dense_kernel`): a 2-D grid over (query rows) x (choices).
Block ``(bx, by)`` takes ``qb`` query rows from ``r0 + by * qb`` and the
``tpb`` choices from ``bx * tpb``; each thread owns one choice and loops over
the block's rows, so the pairs are generated on the device. With the
``myers`` method the block first builds the rows' match masks (``Peq``) in
shared memory, indexed by the dense per-call alphabet (``alpha`` entries per
row); short choices are read from an interleaved copy (symbol e of choice j
at ``e * nc + j``, coalesced across a warp). Results go to a row-major block
``out[(i - r0) * nc + j]`` (coalesced stores). Rows of at most 32 symbols
use 32-bit masks (:data:`.words.SHORT_BITS`), with a 32-bit shared table when
every row of the launch is that short. Pairs whose both words exceed
64 symbols are left to the host (:func:`.words.myers_blocks`), which patches
them in; the kernel writes ``max_dist + 1`` there so sparse counts skip them.

Sparse helpers count (:func:`scan_kernels`) the cells of each row within the
cut-off, then write their ``(j, d)`` in row order at the row's start.

Pairwise kernel (:func:`pair_kernel`): one thread per pair ``(a[p], b[p])``,
the per-pair rule of :func:`.words.pair_function` (the CPU runs the same).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda, int32, int64, uint32, uint64

from .cuda import vote_helper
from .simulator import simulated
from .words import SHORT_BITS, WORD_BITS, build, pair_function

SIM = simulated()
TPB = 32 if SIM else 128
"""Threads (choices) per block of the dense kernel."""
SCAN_TPB = 32 if SIM else 256
"""Threads per row of the sparse count/fill kernels."""
PAIR_TPB = 32 if SIM else 128
SMEM_PEQ_BYTES = 16384
"""Shared memory of one block's match-mask tables."""
MAX_TABLE_ALPHA = 1024
"""Alphabets larger than this use sorted per-thread masks instead of the shared table."""


def table_alpha(alphabet: int) -> int:
    """Entries per row of the shared mask table (a power of two >= alphabet), 0 for none."""
    if alphabet > MAX_TABLE_ALPHA:
        return 0
    size = 32
    while size < alphabet:
        size *= 2
    return size


def rows_per_block(alpha: int, table_bits: int = WORD_BITS) -> int:
    """Query rows one block shares (its mask tables fill :data:`SMEM_PEQ_BYTES`)."""
    if SIM:
        return 4
    if alpha == 0:
        return 16
    return max(1, min(32, SMEM_PEQ_BYTES // (table_bits // 8 * alpha)))


def table_bits_for(longest_row: int) -> int:
    """Mask word of a launch's shared table: 32 bits when every row has <= 32 symbols."""
    return SHORT_BITS if longest_row <= SHORT_BITS else WORD_BITS


@cache
def device_functions(word_bits: int = WORD_BITS):
    """The per-pair functions compiled as CUDA device functions, with the warp vote."""
    return build(cuda.jit(device=True), vote_helper(True), word_bits)


@cache
def dense_kernel(alpha: int, qb: int, tpb: int = TPB, table_bits: int = WORD_BITS):
    """Compile (once per configuration) the dense-block kernel.

    ``table_bits`` is the word of the shared mask table: 32 when every row of
    the launch has at most 32 symbols (half the shared memory, no bank
    conflicts for alphabets up to 32). Whatever the table, rows of at most
    32 symbols run the 32-bit Myers step (the branch is uniform: a block's
    threads share their rows), rows of 33-64 the 64-bit one.
    """
    ns = device_functions()
    short = device_functions(SHORT_BITS)
    myers64, myers32 = ns.myers, short.myers
    peq_sorted = ns.peq_sorted
    peq_set = short.peq_set if table_bits == SHORT_BITS else ns.peq_set
    use_table = alpha > 0
    peq_cells = qb * alpha if use_table else 1
    table_t = uint32 if table_bits == SHORT_BITS else uint64
    TB = table_bits

    @cuda.jit
    def kernel(qd, qo, cd, co, ct, short_c, r0, r1, max_dist, out):
        """``out[(i - r0) * nc + j]`` for rows ``i`` of this block and choice ``j``."""
        tid = cuda.threadIdx.x
        j = cuda.blockIdx.x * tpb + tid
        i0 = r0 + cuda.blockIdx.y * qb
        nrows = min(qb, r1 - i0)
        nc = co.shape[0] - 1
        peq = cuda.shared.array(peq_cells, table_t)
        if use_table:
            for x in range(tid, peq_cells, tpb):
                peq[x] = 0
            cuda.syncthreads()
            if tid < nrows:
                b = qo[i0 + tid]
                m = qo[i0 + tid + 1] - b
                if m <= TB:
                    peq_set(peq, tid * alpha, qd, b, m)
            cuda.syncthreads()
        if j >= nc:
            return
        syms = cuda.local.array(WORD_BITS, int32)
        masks = cuda.local.array(WORD_BITS, uint64)
        cb = co[j]
        n = co[j + 1] - cb
        short = n <= short_c
        t = ct if short else cd
        tb = j if short else cb
        ts = nc if short else 1
        for k in range(nrows):
            i = i0 + k
            b = qo[i]
            m = qo[i + 1] - b
            if m <= WORD_BITS:
                if use_table and m <= SHORT_BITS:
                    d = myers32(peq, k * alpha, syms, masks, -1, m, t, tb, ts, n, max_dist)
                elif use_table and m <= TB:
                    d = myers64(peq, k * alpha, syms, masks, -1, m, t, tb, ts, n, max_dist)
                else:
                    u = peq_sorted(qd, b, m, syms, masks)
                    if m <= SHORT_BITS:
                        d = myers32(peq, 0, syms, masks, u, m, t, tb, ts, n, max_dist)
                    else:
                        d = myers64(peq, 0, syms, masks, u, m, t, tb, ts, n, max_dist)
            elif n <= WORD_BITS:
                u = peq_sorted(cd, cb, n, syms, masks)
                d = myers64(peq, 0, syms, masks, u, n, qd, b, 1, m, max_dist)
            else:
                d = max_dist + 1  # both long: the host computes it (never a sparse hit)
            out[(i - r0) * nc + j] = d

    return kernel


@cache
def scan_kernels(tpb: int = SCAN_TPB):
    """Compile the sparse count and fill kernels (one block of ``tpb`` threads per row)."""

    @cuda.jit
    def count_kernel(block, nc, r0, upper, max_dist, counts):
        """``counts[r]``: cells of block row r within ``max_dist`` (only j > r0 + r if upper)."""
        r = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        total = cuda.shared.array(1, int64)
        if tid == 0:
            total[0] = 0
        cuda.syncthreads()
        start = r0 + r + 1 if upper else 0
        k = 0
        for j in range(start + tid, nc, tpb):
            if block[r * nc + j] <= max_dist:
                k += 1
        cuda.atomic.add(total, 0, k)
        cuda.syncthreads()
        if tid == 0:
            counts[r] = total[0]

    @cuda.jit
    def fill_kernel(block, nc, r0, upper, max_dist, starts, jj, dd):
        """Write row r's cells within the cut-off as ``(j, d)`` from ``starts[r]``, in order."""
        r = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        scan = cuda.shared.array((2, tpb), int32)
        base = starts[r]
        start = r0 + r + 1 if upper else 0
        for c0 in range(start, nc, tpb):
            j = c0 + tid
            v = block[r * nc + j] if j < nc else 0
            f = 1 if j < nc and v <= max_dist else 0
            scan[0, tid] = f
            cuda.syncthreads()
            src = 0
            off = 1
            while off < tpb:
                x = scan[src, tid]
                if tid >= off:
                    x += scan[src, tid - off]
                scan[1 - src, tid] = x
                cuda.syncthreads()
                src = 1 - src
                off *= 2
            if f:
                pos = base + scan[src, tid] - 1
                jj[pos] = j
                dd[pos] = v
            base += scan[src, tpb - 1]
            cuda.syncthreads()

    return count_kernel, fill_kernel


@cache
def pair_kernel():
    """Compile the pairwise kernel: lane p computes ``a[p]`` vs ``b[p]`` (distance only)."""
    pair = pair_function(cuda.jit(device=True), device_functions(), device_functions(SHORT_BITS))

    @cuda.jit
    def kernel(ad, ao, bd, bo, max_dist, out):
        """``out[p]``: distance (clipped at ``max_dist + 1``), ``LONG`` if both exceed 64."""
        p = cuda.grid(1)
        if p >= out.shape[0]:
            return
        syms = cuda.local.array(WORD_BITS, int32)
        masks = cuda.local.array(WORD_BITS, uint64)
        out[p] = pair(ad, ao[p], ao[p + 1] - ao[p], bd, bo[p], bo[p + 1] - bo[p], syms, masks,
                      max_dist)

    return kernel


def int_codes(data: np.ndarray) -> np.ndarray:
    """Symbol codes as the int32 the kernels' scratch arrays hold."""
    return np.ascontiguousarray(data, dtype=np.int32)
