"""CUDA kernels: one thread per pair, driving the per-pair functions of :mod:`.quadrant`.

Quadrant boundaries live in global memory, interleaved so that lane ``p``
reads element ``e`` at ``e * batch + p`` (coalesced across a warp). The
working row and the quadrant under traceback are thread-local; the K cells
of a strip are compile-time sized so they can stay in registers.

The warp vote (``all_sync(activemask(), done)``) sits in :func:`vote_helper`;
under the CUDA simulator, which lacks warp intrinsics, each lane votes alone.
"""

from __future__ import annotations

import math
import threading
import warnings
from functools import cache

import numpy as np
from numba import cuda, int16, int32, int64, uint8, uint32

from . import lanes16, scored_packed, scored_quadrant
from .disk_cache import cache_by_source, named_for
from .quadrant import (
    FAST_PATH_MAX,
    boundary_col_size,
    boundary_row_size,
    build,
    pair_bounds,
    tile_size,
)
from .simulator import simulated

BOUNDARY_DTYPE = np.int16
"""Boundary cells on the device: distances of pairs within :data:`.quadrant.FAST_PATH_MAX`."""


LAUNCH_LOCK = threading.Lock()
"""numba-cuda loads a kernel's module into the context on its first launch without a lock: two
threads launching one kernel for the first time at once both load it, and the second fails.
Every launch takes this lock (a launch only enqueues: well under a millisecond)."""


SMALL_GRID = 128
"""numba-cuda warns of low occupancy below this many blocks, at every such launch."""
LOW_OCCUPANCY = r".*Grid size \d+ will likely result in GPU under-utilization"
"""That warning's message, as a filter matches it from its start (by text: numba-cuda has its
own warning classes, apart from numba's, in some versions, and may highlight the text)."""


def launch(kernel, grid, block, stream, *args) -> None:
    """Enqueue ``kernel[grid, block, stream](*args)`` under :data:`LAUNCH_LOCK`.

    A small grid is this package's choice (a batch of a few pairs, the one-block scan of
    a chunk's run counts), not a user's mistake, so numba-cuda's low-occupancy warning
    is kept from the user there; other warnings pass."""
    blocks = grid if isinstance(grid, int) else math.prod(grid)
    with LAUNCH_LOCK:
        if blocks >= SMALL_GRID:
            kernel[grid, block, stream](*args)
            return
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=LOW_OCCUPANCY)
            kernel[grid, block, stream](*args)


lane_pair = cuda.jit(device=True)(pair_bounds)
"""A lane's pair: read start and length, window start and length (:func:`.quadrant.pair_bounds`)."""


def vote_helper(enabled: bool = True):
    """The warp-vote device function: all active lanes done? (``enabled=False``: never)."""
    if not enabled:
        @cuda.jit(device=True)
        def never(done):
            return False
        return never
    if simulated():
        @cuda.jit(device=True)
        def alone(done):
            return done
        return alone

    @cuda.jit(device=True)
    def warp_all(done):
        return cuda.all_sync(cuda.activemask(), done)
    return warp_all


@cache
def kernels(K: int, vote: bool = True):
    """The forward and traceback kernels for quadrant size ``K``.

    Compiled lazily, once per machine: numba keeps them in its disk cache,
    keyed by ``K``, ``vote`` and the kernel sources (the simulator compiles nothing).
    """
    ns = build(cuda.jit(device=True), vote_helper(vote), K)
    forward = ns.forward
    traceback = ns.traceback
    spans = ns.spans
    TILE = tile_size(K)
    MOVES = K * K
    ROW = FAST_PATH_MAX + 1

    @cuda.jit
    def forward_kernel(seqs, job, bounds, outs):
        """Distances and spans of pairs ``order[p]``; boundaries when ``store``.

        ``seqs`` are ``(q, qoff, t, toff, order)``, ``job`` is ``(infix, max_dist, n_code,
        store)``, ``bounds`` ``(rbuf, cbuf, rlen, clen)`` (``rlen``/``clen``: the boundaries'
        strip and column lengths for the whole batch, :func:`batch_layout`) and ``outs``
        ``(dist, ref_start, ref_end)``. Lane ``p`` takes pair ``order[p]`` (length-sorted, so
        a warp's lanes do near-equal work); outputs are indexed by lane.
        """
        q, qoff, t, toff, order = seqs
        infix, max_dist, n_code, store = job
        rbuf, cbuf, rlen, clen = bounds
        dist, ref_start, ref_end = outs
        p = cuda.grid(1)
        B = dist.shape[0]
        if p >= B:
            return
        row = cuda.local.array(ROW, int16)
        strip = cuda.local.array(K, int32)
        qk = cuda.local.array(K, int32)
        qb, m, tb, n = lane_pair(qoff, toff, order[p])
        d, e = forward((q, qb, 1, m), (t, tb, 1, n), infix, max_dist, n_code, store, (row, 0, 1),
                       ((rbuf, cbuf), p, B, rlen, clen), strip, qk)
        dist[p] = d
        ref_start[p], ref_end[p] = spans(d, e, -1, False, infix)

    @cuda.jit
    def traceback_kernel(seqs, job, bounds, outs, cigar):
        """CIGAR runs of lane ``p``'s pair ``order[p]`` into ``out[out_off[p]:]``; its start.

        ``seqs``, ``bounds`` and ``outs`` as :func:`forward_kernel`'s, ``job`` is ``(infix,
        n_code, eqx)``, ``cigar`` ``(out_off, out, n_ops)``."""
        q, qoff, t, toff, order = seqs
        infix, n_code, eqx = job
        rbuf, cbuf, rlen, clen = bounds
        dist, ref_start, ref_end = outs
        out_off, out, n_ops = cigar
        p = cuda.grid(1)
        B = dist.shape[0]
        if p >= B:
            return
        d = dist[p]
        if d < 0:
            n_ops[p] = 0
            return
        tile = cuda.local.array(TILE, int32)
        moves = cuda.local.array(MOVES, uint8)
        qb, m, tb, n = lane_pair(qoff, toff, order[p])
        s, k = traceback((q, qb, 1, m), (t, tb, 1, n), infix, n_code, eqx, ref_end[p],
                         ((rbuf, cbuf), p, B, rlen, clen), tile, moves, (out, out_off[p], 1))
        ref_start[p], ref_end[p] = spans(d, ref_end[p], s, True, infix)
        n_ops[p] = k

    if not simulated():
        for kernel in (forward_kernel, traceback_kernel):
            cache_by_source(kernel, "cuda", K, vote)
    return forward_kernel, traceback_kernel, ns


CIGAR_MAX_REGISTERS = 128
"""Register cap of the 32-bit scored kernels of the CIGAR path (the forward pass that keeps
boundaries, the traceback): 16 warps per SM (the packed pass takes none:
:func:`scored_packed_kernels`). The forward pass uses 168 registers uncapped at k = 16
(capped, ptxas spills 140 bytes, none in the column loops): on the H100 the CIGAR rows gained
5% while the same cap made the score-only kernel 2.7x slower, so that one is not capped
(benchmarks/RESULTS.md, 2026-11-25, ``3c04da0``). The traceback fits 128 without spills (139
uncapped since the batch-wide boundary layout)."""


def _jit_capped(fn):
    """``fn`` as a kernel of at most :data:`CIGAR_MAX_REGISTERS` registers (the simulator
    takes no cap)."""
    return cuda.jit(fn) if simulated() else cuda.jit(max_registers=CIGAR_MAX_REGISTERS)(fn)


@cuda.jit(device=True)
def fill_shared(dst, src, count):
    """Copy ``count`` entries of a scoring table into the block's shared ``dst`` (read once per
    cell)."""
    for x in range(cuda.threadIdx.x, count, cuda.blockDim.x):
        dst[x] = src[x]
    cuda.syncthreads()


_cigar_slots = cuda.jit(device=True)(scored_quadrant.cigar_slots)


@cuda.jit(device=True)
def scored_slot(qoff, toff, p):
    """Lane ``p``'s first CIGAR slot when every lane has
    :func:`.scored_quadrant.cigar_slots` slots: from the sums of the staged offsets, so no
    slot offsets cross to the device."""
    return _cigar_slots(qoff[p], toff[p], p)


@cache
def scored_kernels(K: int, vote: bool = True, narrow: bool = True):
    """The scored kernels (:mod:`.scored_quadrant`) for quadrant size ``K``:
    ``(forward, forward_store, traceback)``.

    ``forward`` computes scores and end cells only; ``forward_store`` also keeps the
    quadrant boundaries for the traceback (compiled apart, so each has its own
    registers: see :data:`CIGAR_MAX_REGISTERS`). Boundaries (H and F on strip rows,
    H and E on quadrant columns) are lane-interleaved like the edit kernels'; the
    working row and the quadrant under traceback are thread-local. ``narrow``: the
    working row is int16 and the boundaries must be too (half the bytes; for batches
    where :func:`.scored_quadrant.fits_int16`), else int32. The traceback takes
    either (numba compiles it per boundary type).
    """
    ns = scored_quadrant.build(cuda.jit(device=True), vote_helper(vote), K, keyed=narrow)
    forward = ns.forward
    traceback = ns.traceback
    TILE = scored_quadrant.tile_size(K)
    MOVES = K * K
    ROW = FAST_PATH_MAX + 1
    SUB = scored_quadrant.MAX_ALPHABET * scored_quadrant.MAX_ALPHABET
    WORK = 5 * K
    CELL = int16 if narrow else int32
    NEG = scored_quadrant.NEG16 if narrow else scored_quadrant.NEG

    def make_forward(store: bool):
        def scored_forward_kernel(seqs, scoring, bounds, outs):
            """Score and end cell of lane ``p``'s pair; its boundaries too (``store``, a
            constant of the kernel), lane ``p`` of ``lanes`` (:func:`even_lanes`).

            ``seqs`` are ``(q, qoff, t, toff)``, ``scoring`` ``(mode, sub, A, go, ge, clip)``,
            ``bounds`` ``(rbH, rbF, cbH, cbE, rlen, clen, lanes)`` and ``outs`` ``(score,
            end_i, end_j)``."""
            q, qoff, t, toff = seqs
            mode, sub, A, go, ge, clip = scoring
            rbH, rbF, cbH, cbE, rlen, clen, lanes = bounds
            score, end_i, end_j = outs
            p = cuda.grid(1)
            B = score.shape[0]
            shared = cuda.shared.array(SUB, int32)
            fill_shared(shared, sub, A * A)
            if p >= B:
                return
            rowH = cuda.local.array(ROW, CELL)
            rowF = cuda.local.array(ROW, CELL)
            work = cuda.local.array(WORK, int32)
            qb, m, tb, n = lane_pair(qoff, toff, p)
            sc, ei, ej = forward((q, qb, 1, m), (t, tb, 1, n), (mode, shared, A, go, ge, clip),
                                 store, (rowH, rowF, 0, 1), ((rbH, rbF, cbH, cbE), p, lanes, rlen,
                                                             clen), work, NEG)
            score[p] = sc
            end_i[p] = ei
            end_j[p] = ej

        fn = named_for(scored_forward_kernel, "store" if store else "score",
                       "int16" if narrow else "int32")
        return _jit_capped(fn) if store else cuda.jit(fn)

    forward_score = make_forward(False)
    forward_store = make_forward(True)

    def scored_traceback_kernel(seqs, scoring, job, bounds, ends, outs):
        """CIGAR runs of lane ``p``'s pair into its slots of ``out`` (:func:`scored_slot`);
        its starts and NM.

        ``seqs``, ``scoring`` and ``bounds`` as the forward kernel's; ``job`` is ``(n_code,
        eqx)``, ``ends`` the forward pass's ``(end_i, end_j)``, ``outs`` ``(out, q_start,
        ref_start, n_ops, nm)``."""
        q, qoff, t, toff = seqs
        mode, sub, A, go, ge, clip = scoring
        n_code, eqx = job
        rbH, rbF, cbH, cbE, rlen, clen, lanes = bounds
        end_i, end_j = ends
        out, q_start, ref_start, n_ops, nm = outs
        p = cuda.grid(1)
        B = end_i.shape[0]
        shared = cuda.shared.array(SUB, int32)
        fill_shared(shared, sub, A * A)
        if p >= B:
            return
        tile = cuda.local.array(TILE, int32)
        moves = cuda.local.array(MOVES, uint8)
        qb, m, tb, n = lane_pair(qoff, toff, p)
        si, sj, k, d = traceback((q, qb, 1, m), (t, tb, 1, n), (mode, shared, A, go, ge, clip),
                                 n_code, eqx, end_i[p], end_j[p],
                                 ((rbH, rbF, cbH, cbE), p, lanes, rlen, clen), tile, moves,
                                 (out, scored_slot(qoff, toff, p), 1))
        q_start[p] = si
        ref_start[p] = sj
        n_ops[p] = k
        nm[p] = d

    traceback_kernel = _jit_capped(named_for(scored_traceback_kernel,
                                             "int16" if narrow else "int32"))
    kernels = (forward_score, forward_store, traceback_kernel)
    if not simulated():
        for kernel, role in zip(kernels, ("score", "store", "traceback"), strict=True):
            cache_by_source(kernel, "cuda-scored", K, vote, narrow, role)
    return kernels


@cache
def scored_packed_kernels(K: int, strip: int | None = None):
    """The packed local forward kernels (:mod:`.scored_packed`) for quadrant size ``K``:
    ``(forward, forward_store)``, as :func:`scored_kernels`' first two. Thread ``x`` takes
    lanes ``2x`` and ``2x + 1`` (the last lane of an odd batch twice, its results once); the
    boundaries are the int16 lanes' arrays seen as words. Hopper's 16x2 instructions (sm_90);
    under the simulator the plain-arithmetic operations. ``strip``: read rows per strip of
    the pass with stores (default :func:`.scored_packed.store_strip`; other heights are for
    timing them).

    Neither kernel takes :data:`CIGAR_MAX_REGISTERS`: the pass with stores in strips of 32
    rows ran 1M pairs of the scored benchmark in 14.6 ms uncapped, 18.0 ms at 168 registers
    and 22.3 ms at 128; in strips of 16 at 128 registers, 17.9 ms (an H100,
    benchmarks/RESULTS.md, 2026-11-26, ``043bb04``)."""
    S = strip or scored_packed.store_strip(K)
    device = cuda.jit(device=True)
    ops = lanes16.signed_ops(device) if simulated() else lanes16.signed_dpx_ops()
    forward2 = scored_packed.build(device, ops, K).forward2
    forward2_store = scored_packed.build(device, ops, K, S).forward2
    ROW2 = scored_packed.KEY_COLUMNS16
    TABLE = scored_packed.PAIR_TABLE

    def make_forward(store: bool):
        fwd = forward2_store if store else forward2
        WORK2 = 4 * (S if store else K)

        def scored_forward2_kernel(seqs, scoring, bounds, outs):
            """Scores and end cells of lanes ``2x`` and ``2x + 1``; their boundaries too
            (``store``). The arguments are :func:`scored_kernels`' forward kernel's, with
            :func:`.scored_packed.pair_table`'s table as ``sub`` and the boundaries' arrays
            seen as words."""
            q, qoff, t, toff = seqs
            mode, sub2, A, go, ge, clip = scoring
            rbH, rbF, cbH, cbE, rlen, clen, lanes = bounds
            score, end_i, end_j = outs
            x = cuda.grid(1)
            B = score.shape[0]
            shared = cuda.shared.array(TABLE, uint32)
            fill_shared(shared, sub2, A * A * (A + 1) * (A + 1))
            a = 2 * x
            if a >= B:
                return
            b = a + 1 if a + 1 < B else a
            qa, ma, ta, na = lane_pair(qoff, toff, a)
            qb, mb, tb, nb = lane_pair(qoff, toff, b)
            half = lanes // 2
            sa, ia, ja, sb, ib, jb = fwd(
                (q, qa, qb, ma, mb), (t, ta, tb, na, nb), (mode, shared, A, go, ge, clip), store,
                cuda.local.array(ROW2, uint32), ((rbH, rbF, cbH, cbE), x, half, rlen, clen),
                cuda.local.array(WORK2, uint32))
            score[a] = sa
            end_i[a] = ia
            end_j[a] = ja
            if b != a:
                score[b] = sb
                end_i[b] = ib
                end_j[b] = jb

        return cuda.jit(named_for(scored_forward2_kernel, f"store_s{S}" if store else "score"))

    kernels = (make_forward(False), make_forward(True))
    if not simulated():
        for kernel, role in zip(kernels, ("score", "store"), strict=True):
            cache_by_source(kernel, "cuda-scored-packed", K, S, role)
    return kernels


SCAN_THREADS = 1024
"""Threads of the block that turns a chunk's run counts into offsets."""


@cuda.jit
def _running_offsets_kernel(counts, out):
    """``out[0] = 0``, ``out[i + 1] = out[i] + counts[i]`` in one block: each thread sums its
    share of ``counts``, the block scans the shares' sums, and each thread writes its share."""
    n = counts.shape[0]
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    share = (n + threads - 1) // threads
    lo = min(t * share, n)
    hi = min(lo + share, n)
    own = int64(0)
    for i in range(lo, hi):
        own += counts[i]
    sums = cuda.shared.array(SCAN_THREADS, int64)
    sums[t] = own
    cuda.syncthreads()
    step = 1
    while step < threads:
        add = sums[t - step] if t >= step else int64(0)
        cuda.syncthreads()
        sums[t] += add
        cuda.syncthreads()
        step *= 2
    run = sums[t] - own
    if t == 0:
        out[0] = 0
    for i in range(lo, hi):
        run += counts[i]
        out[i + 1] = run


def running_offsets(counts, out, stream) -> None:
    """Enqueue ``out[:n + 1]``: the offsets of ``n = len(counts)`` lanes' runs end to end (their
    total last), so the runs are packed without the counts' trip to the host and back."""
    launch(_running_offsets_kernel, 1, 32 if simulated() else SCAN_THREADS, stream, counts, out)


@cuda.jit
def _compact_scored_kernel(ops, qoff, toff, run_off, out):
    """Lane p's runs from its slots in ``ops`` (:func:`scored_slot`) to ``out[run_off[p]:]``."""
    p = cuda.grid(1)
    if p < run_off.shape[0] - 1:
        src = scored_slot(qoff, toff, p)
        dst = run_off[p]
        for x in range(run_off[p + 1] - dst):
            out[dst + x] = ops[src + x]


def compact_scored_runs(ops, qoff, toff, run_off, out, stream) -> None:
    """Pack each lane's CIGAR runs end to end on the device (worst-case slots to exact size);
    ``run_off`` from :func:`running_offsets`."""
    n = run_off.shape[0] - 1
    if n:
        launch(_compact_scored_kernel, (n + 127) // 128, 128, stream, ops, qoff, toff, run_off,
               out)


@cuda.jit
def _translate_kernel(codes, table, n):
    """``codes[i] = table[codes[i]]`` in place for ``i < n`` (ASCII bytes to DNA codes)."""
    i = cuda.grid(1)
    if i < n:
        codes[i] = table[codes[i]]


def translate_codes(codes, table, n: int, stream) -> None:
    """Translate the first ``n`` raw bytes of a device array to codes through ``table``."""
    if n:
        launch(_translate_kernel, (n + 255) // 256, 256, stream, codes, table, n)


def batch_layout(m_max: int, n_max: int) -> tuple[int, int]:
    """``(rlen, clen)`` of a device batch: every lane's strip rows are ``n_max + 1`` elements
    apart and its quadrant columns ``m_max + 1``, whatever its own lengths.

    With each lane's own lengths (as on the CPU), the lanes of a warp whose reads differ
    by a base stored their columns at different offsets: 32 sectors per store instead of
    two. Pairs kept in input order (reads of 148-152 bases) made the scored forward pass
    1.44x slower than length-sorted lanes on an H100 (benchmarks/RESULTS.md, 2026-11-26,
    ``523f33f``)."""
    return n_max + 1, m_max + 1


def even_lanes(count: int) -> int:
    """Lanes of a scored batch's boundaries (element ``e`` of lane ``p`` at ``e * lanes + p``):
    ``count`` rounded up to even, so that two neighbouring lanes' int16 elements are one
    aligned word (:func:`scored_packed_kernels`)."""
    return count + (count & 1)


def boundary_elements(m_max: int, n_max: int, K: int) -> tuple[int, int]:
    """Per-lane boundary-row and boundary-column elements for a batch's longest pair."""
    return boundary_row_size(m_max, n_max, K), boundary_col_size(m_max, n_max, K)


def scored_boundary_elements(m_max: int, n_max: int, K: int) -> tuple[int, int]:
    """Per-lane elements of each scored row array (H, F) and column array (H, E)."""
    return (scored_quadrant.boundary_row_size(m_max, n_max, K),
            scored_quadrant.boundary_col_size(m_max, n_max, K))
