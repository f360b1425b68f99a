"""CPU batch driver: the quadrant algorithm over a batch of pairs on every core.

Pairs arrive sorted by length and cut into chunks. One compiled kernel aligns
one chunk, allocating its scratch once for the chunk's longest pair; a pool of
threads runs the chunks (the kernel releases the GIL). The kernel is serial
on purpose: numba names a parallel loop's inner function after an object
address, so a ``prange`` kernel could not be kept safely in the disk cache
(see :mod:`.disk_cache`); this one is, and a new process loads it instead of
spending seconds compiling it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np
from numba import njit

from . import scored_quadrant
from .disk_cache import cache_by_source, named_for
from .quadrant import build, pair_bounds, pair_spans, tile_size


@njit(cache=True)
def longest(qoff, toff, order, lo, hi):
    """The longest read and window among pairs ``order[lo:hi]`` (a chunk's scratch sizes)."""
    mmax = 0
    nmax = 0
    for x in range(lo, hi):
        p = order[x]
        mmax = max(mmax, qoff[p + 1] - qoff[p])
        nmax = max(nmax, toff[p + 1] - toff[p])
    return mmax, nmax


_pair = njit(cache=True)(pair_bounds)


@njit(cache=True)
def vote_alone(done):
    """One lane is its own warp on the CPU: leave the loop when it is done."""
    return done


_spans = njit(cache=True)(pair_spans)


@njit(cache=True)
def untraced_spans(dist, ends, infix, ref_start, ref_end):
    """``ref_start``/``ref_end`` of pairs aligned without a traceback (:func:`.quadrant.pair_spans`)."""
    for x in range(dist.shape[0]):
        ref_start[x], ref_end[x] = _spans(dist[x], ends[x], -1, False, infix)


def chunk_source(K: int, device_jit=None, vote=vote_alone):
    """The Python function of the edit-distance chunk kernel, size ``K``, on
    ``device_jit`` (default numba's ``njit``) and ``vote`` (as :func:`scored_chunk_source`)."""
    ns = build(device_jit or njit(cache=False), vote, K)
    TILE = tile_size(K)
    forward = ns.forward
    traceback = ns.traceback
    spans = ns.spans
    row_size = ns.row_size
    col_size = ns.col_size

    def align_chunk(seqs, lo, hi, job, outs):
        """Align pairs ``order[lo:hi]`` of ``seqs`` (``(q, qoff, t, toff, order)``) for ``job``
        (``(infix, max_dist, n_code, eqx, with_cigar)``).

        ``outs`` are ``(slot_off, slots, dist, ref_start, ref_end, n_ops)``: results go to
        position ``x`` for pair ``order[x]``; its CIGAR to ``slots[slot_off[x]:]``,
        ``n_ops[x]`` runs long.
        """
        q, qoff, t, toff, order = seqs
        infix, max_dist, n_code, eqx, with_cigar = job
        slot_off, slots, dist, ref_start, ref_end, n_ops = outs
        mmax, nmax = longest(qoff, toff, order, lo, hi)
        row = np.empty(nmax + 1, np.int32)
        if with_cigar:
            rbuf = np.empty(row_size(mmax, nmax, K), np.int32)
            cbuf = np.empty(col_size(mmax, nmax, K), np.int32)
        else:
            rbuf = np.empty(1, np.int32)
            cbuf = np.empty(1, np.int32)
        strip = np.empty(K, np.int32)
        qk = np.empty(K, np.int32)
        tile = np.empty(TILE, np.int32)
        moves = np.empty(K * K, np.uint8)
        for x in range(lo, hi):
            qb, m, tb, n = _pair(qoff, toff, order[x])
            read = (q, qb, 1, m)
            window = (t, tb, 1, n)
            bounds = ((rbuf, cbuf), 0, 1, n + 1, m + 1)
            d, end_j = forward(read, window, infix, max_dist, n_code, with_cigar, (row, 0, 1),
                               bounds, strip, qk)
            start = -1
            k_ops = 0
            traced = with_cigar and d >= 0
            if traced:
                start, k_ops = traceback(read, window, infix, n_code, eqx, end_j, bounds, tile,
                                         moves, (slots, slot_off[x], 1))
            dist[x] = d
            ref_start[x], ref_end[x] = spans(d, end_j, start, traced, infix)
            n_ops[x] = k_ops

    return align_chunk


@cache
def chunk_kernel(K: int):
    """Return the kernel that aligns one chunk of a batch for quadrant size ``K``.

    Compiled once per machine and kept in numba's disk cache, keyed by ``K``
    and the kernel sources.
    """
    kernel = njit(nogil=True, cache=False)(named_for(chunk_source(K), f"k{K}"))
    cache_by_source(kernel, "cpu", K)
    return kernel


@njit(cache=True)
def vote_never(done):
    """A lane that never leaves a loop early: the most a GPU lane beside live ones runs."""
    return False


def scored_finisher(jit, ns):
    """The compiled step that writes pair ``z``'s results: its forward pass's score and end
    cell ``end`` and, with CIGARs, its traceback (``ns.traceback``) from the boundaries
    ``bounds`` (as :mod:`.quadrant` bundles them), into the chunk's outputs ``outs``
    (:func:`scored_chunk_source`'s kernel's).

    Named for ``ns.tag`` as the functions it calls are: two cached kernels compiled in
    different processes may number their functions alike, and a process that loaded both
    linked one kernel's unnamed finisher into the other's code (wrong CIGARs, or a crash).
    """
    traceback = ns.traceback

    def finish(z, read, window, end, scoring, job, bounds, scratch, outs):
        sz, iz, jz = end
        n_code, eqx, with_cigar = job
        slot_off, slots, score, q_start, q_end, ref_start, ref_end, n_ops, nm = outs
        score[z] = sz
        q_end[z] = iz
        ref_end[z] = jz
        if not with_cigar:
            q_start[z] = -1
            ref_start[z] = -1
            n_ops[z] = 0
            nm[z] = -1
            return
        tile, moves = scratch
        si, sj, k_ops, d = traceback(read, window, scoring, n_code, eqx, iz, jz, bounds, tile,
                                     moves, (slots, slot_off[z], 1))
        q_start[z] = si
        ref_start[z] = sj
        n_ops[z] = k_ops
        nm[z] = d

    return jit(named_for(finish, ns.tag))


def scored_chunk_source(K: int, device_jit=None, vote=vote_alone, keyed: bool = False):
    """The Python function of the scored chunk kernel, size ``K``, on ``device_jit``/``vote``.

    ``device_jit`` defaults to numba's ``njit``; ``keyed`` as in
    :func:`.scored_quadrant.build` (the GPU's int16 batches; the tests compare both).
    :func:`scored_chunk_kernel` compiles it with the CPU's vote; the tests also compile
    it with :func:`vote_never` and bounds checks, so every lane runs the traceback's loops
    to their ends as a GPU lane in a live warp does.
    """
    jit = device_jit or njit(cache=False)
    ns = scored_quadrant.build(jit, vote, K, keyed)
    return scored_chunk(K, ns, scored_finisher(jit, ns))


def scored_chunk(K: int, ns, finish):
    """:func:`scored_chunk_source`'s kernel over the per-pair functions ``ns`` (of
    :func:`.scored_quadrant.build`) and ``finish`` (:func:`scored_finisher`)."""
    forward = ns.forward
    row_size = ns.row_size
    col_size = ns.col_size
    TILE = scored_quadrant.tile_size(K)

    def align_scored_chunk(seqs, lo, hi, scoring, job, outs):
        """Align pairs ``order[lo:hi]`` of ``seqs`` (``(q, qoff, t, toff, order)``) with
        ``scoring`` (``(mode, sub, A, go, ge, clip)``) for ``job`` (``(n_code, eqx,
        with_cigar)``). ``outs`` are ``(slot_off, slots, score, q_start, q_end, ref_start,
        ref_end, n_ops, nm)``: results at ``x`` for pair ``order[x]``."""
        q, qoff, t, toff, order = seqs
        with_cigar = job[2]
        mmax, nmax = longest(qoff, toff, order, lo, hi)
        rowH = np.empty(nmax + 1, np.int32)
        rowF = np.empty(nmax + 1, np.int32)
        rs = row_size(mmax, nmax, K) if with_cigar else 1
        cs = col_size(mmax, nmax, K) if with_cigar else 1
        arrays = (np.empty(rs, np.int32), np.empty(rs, np.int32), np.empty(cs, np.int32),
                  np.empty(cs, np.int32))
        work = np.empty(5 * K, np.int32)
        scratch = (np.empty(TILE, np.int32), np.empty(K * K, np.uint8))
        for x in range(lo, hi):
            qb, m, tb, n = _pair(qoff, toff, order[x])
            read = (q, qb, 1, m)
            window = (t, tb, 1, n)
            bounds = (arrays, 0, 1, n + 1, m + 1)
            end = forward(read, window, scoring, with_cigar, (rowH, rowF, 0, 1), bounds, work,
                          scored_quadrant.NEG)
            finish(x, read, window, end, scoring, job, bounds, scratch, outs)

    return align_scored_chunk


@cache
def scored_chunk_kernel(K: int):
    """Return the kernel that aligns one chunk with scores (:mod:`.scored_quadrant`), size ``K``."""
    kernel = njit(nogil=True, cache=False)(named_for(scored_chunk_source(K), f"k{K}"))
    cache_by_source(kernel, "cpu-scored", K)
    return kernel


def align_chunks(K: int, threads: int, chunk_bounds: np.ndarray, seqs: tuple, *rest,
                 scored: bool = False) -> None:
    """Run :func:`chunk_kernel` over ``order[chunk_bounds[c]:chunk_bounds[c+1]]`` for every c.

    ``seqs`` are ``(q, qoff, t, toff, order)``, ``rest`` the kernel's arguments after
    ``hi``. Chunks are handed out in order to ``threads`` threads as each finishes its last one.
    """
    kernel = scored_chunk_kernel(K) if scored else chunk_kernel(K)
    spans = zip(chunk_bounds[:-1].tolist(), chunk_bounds[1:].tolist())
    if threads <= 1:
        for lo, hi in spans:
            kernel(seqs, lo, hi, *rest)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for _ in pool.map(lambda span: kernel(seqs, *span, *rest), spans):
            pass
