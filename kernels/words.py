"""Distance-only Levenshtein for word lists, written once for CPU and GPU.

:func:`build` takes the decorator that compiles a device-level function
(``numba.njit`` for the CPU, ``numba.cuda.jit(device=True)`` for the GPU) and
returns plain per-pair functions: no Python objects, scratch passed in as
arguments. The CPU drivers below and the CUDA kernels of :mod:`.cuda_words`
call the same functions, so both backends run one per-pair loop.

The rule for a pair (global unit-cost edit distance, symmetric in its inputs):

* the shorter side has at most 64 symbols: **Myers' bit-parallel scan**
  (Myers 1999, Hyyrö's formulation, :func:`build`'s ``myers``), that side the
  *pattern*, the other the *text*, one word-sized step per text symbol. The
  match masks ``Peq[c]`` come from a table indexed by symbol code (filled and
  reset in O(m) by ``peq_set``/``peq_clear``, so one zeroed table serves
  every pattern) or, where no table fits, from the pattern's distinct symbols
  sorted with their masks (``peq_sorted``, a binary search per text symbol).
  The text may be strided (symbol e at ``t[tb + e * ts]``) so GPU lanes read
  interleaved lists coalesced, and the loop ends when the warp vote says every
  lane is done (on the CPU each caller votes alone). ``word_bits=32`` builds
  the same source with 32-bit masks for patterns of at most 32 symbols: on a
  GPU a 64-bit mask operation costs two instructions.
* both sides exceed 64 symbols: :data:`LONG`. Such a pair is an alignment:
  ``edit_distance`` hands it to the alignment engine, ``cdist`` (rows of
  every choice, where pairs cannot be regrouped) to :func:`myers_blocks`
  on the CPU.

``max_dist`` (``-1`` = no limit) abandons a pair as soon as its distance
must exceed it. Every function then returns ``max_dist + 1`` for such a
pair, so the results are ``min(distance, max_dist + 1)``: the same clipping
rapidfuzz applies with ``score_cutoff``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit, prange

WORD_BITS = 64
"""Longest pattern the bit-parallel method handles in one machine word."""
SHORT_BITS = 32
"""Patterns up to this length use 32-bit masks (one GPU instruction per mask op)."""
WORD_TYPES = {32: np.uint32, 64: np.uint64}
LONG = -2
"""What :func:`pair_function`'s ``pair`` returns when both sides exceed :data:`WORD_BITS`."""


def word_type(word_bits: int):
    """The unsigned machine word of the bit-parallel masks: ``np.uint32`` or ``np.uint64``."""
    if word_bits not in WORD_TYPES:
        raise ValueError(f"word_bits must be 32 or 64; got {word_bits}")
    return WORD_TYPES[word_bits]


def build(device_jit, warp_all=None, word_bits: int = WORD_BITS) -> SimpleNamespace:
    """Compile the per-pair distance functions with ``device_jit``.

    ``warp_all(done)`` is the warp vote (default: each caller votes alone, as
    on the CPU); ``word_bits`` (32 or 64) the mask word, so ``myers`` takes
    patterns of at most ``word_bits`` symbols. Numba widens integer
    arithmetic to 64 bits, so every mask expression is cast back to the word
    type: the compiler then narrows the whole expression, and a 32-bit build
    runs one 32-bit instruction where the 64-bit one needs two.
    """
    U = word_type(word_bits)
    ZERO = U(0)
    ONE = U(1)
    ALL = U(~U(0))
    if warp_all is None:
        @device_jit
        def warp_all(done):
            return done

    @device_jit
    def clip(d, max_dist):
        """``max_dist + 1`` for a distance past the limit, else ``d``."""
        if max_dist >= 0 and d > max_dist:
            return max_dist + 1
        return d

    @device_jit
    def step(eq, pv, mv, hb):
        """One text symbol: new vertical deltas and the change of the last row's score."""
        xv = U(eq | mv)
        xh = U(U(U(U(eq & pv) + pv) ^ pv) | eq)
        ph = U(mv | U(~U(xh | pv)))
        mh = U(pv & xh)
        d = np.int32(U(ph & hb) != ZERO) - np.int32(U(mh & hb) != ZERO)
        ph = U(U(ph << ONE) | ONE)
        mh = U(mh << ONE)
        return U(mh | U(~U(xv | ph))), U(ph & xv), d

    @device_jit
    def peq_set(peq, pb, p, ob, m):
        """OR the pattern's bit k into ``peq[pb + p[k]]`` for every k (table masks)."""
        for k in range(m):
            c = p[ob + k]
            peq[pb + c] |= U(ONE << U(k))

    @device_jit
    def peq_clear(peq, pb, p, ob, m):
        """Zero the table entries :func:`peq_set` touched."""
        for k in range(m):
            peq[pb + p[ob + k]] = ZERO

    @device_jit
    def peq_sorted(p, ob, m, syms, masks):
        """Sorted distinct symbols of the pattern and their masks; returns their count."""
        u = 0
        for k in range(m):
            c = p[ob + k]
            pos = 0
            while pos < u and syms[pos] < c:
                pos += 1
            if pos < u and syms[pos] == c:
                masks[pos] |= U(ONE << U(k))
            else:
                for x in range(u, pos, -1):
                    syms[x] = syms[x - 1]
                    masks[x] = masks[x - 1]
                syms[pos] = c
                masks[pos] = U(ONE << U(k))
                u += 1
        return u

    @device_jit
    def lookup_sorted(syms, masks, u, c):
        """Binary search for ``c`` among ``u`` sorted symbols; its mask or 0."""
        lo = 0
        hi = u
        while lo < hi:
            mid = (lo + hi) >> 1
            if syms[mid] < c:
                lo = mid + 1
            else:
                hi = mid
        if lo < u and syms[lo] == c:
            return masks[lo]
        return ZERO

    @device_jit
    def myers(peq, pb, syms, masks, u, m, t, tb, ts, n, max_dist):
        """Distance of a pattern (m <= word_bits) to the strided text ``t[tb + e * ts]``, e < n.

        Masks come from ``peq[pb + c]`` (table) when ``u < 0``, else from the
        ``u`` sorted symbols of :func:`peq_sorted`. A lane that is done (at
        the text's end, or past the limit: the score falls by at most one per
        remaining symbol) idles until the warp vote ends the loop for all.
        """
        if m == 0 or n == 0:
            return clip(m + n, max_dist)
        hb = U(ONE << U(m - 1))
        pv = ALL
        mv = ZERO
        score = m
        dead = max_dist >= 0 and abs(m - n) > max_dist
        e = 0
        while not warp_all(dead or e >= n):
            if not dead and e < n:
                c = t[tb + e * ts]
                eq = U(peq[pb + c]) if u < 0 else U(lookup_sorted(syms, masks, u, c))
                pv, mv, d = step(eq, pv, mv, hb)
                score += d
                dead = max_dist >= 0 and score - (n - 1 - e) > max_dist
            e += 1
        if dead:
            return max_dist + 1
        return clip(score, max_dist)

    return SimpleNamespace(myers=myers, warp_all=warp_all, clip=clip, step=step,
                           peq_set=peq_set, peq_clear=peq_clear, peq_sorted=peq_sorted,
                           lookup_sorted=lookup_sorted, word_bits=int(word_bits))


def pair_function(device_jit, wide: SimpleNamespace, short: SimpleNamespace):
    """The per-pair rule over two lists, from a 64-bit and a 32-bit :func:`build`.

    ``pair(a, ab, m, b, bb, n, syms, masks, max_dist)``: the shorter side is
    the pattern, its masks sorted into ``syms``/``masks`` (64 entries each);
    32-bit masks up to :data:`SHORT_BITS` symbols, 64-bit up to
    :data:`WORD_BITS`, else :data:`LONG`.
    """
    peq_sorted, myers64, myers32 = wide.peq_sorted, wide.myers, short.myers

    @device_jit
    def pair(a, ab, m, b, bb, n, syms, masks, max_dist):
        if m > n:
            a, ab, m, b, bb, n = b, bb, n, a, ab, m
        if m > WORD_BITS:
            return LONG
        u = peq_sorted(a, ab, m, syms, masks)
        if m <= SHORT_BITS:
            return myers32(masks, 0, syms, masks, u, m, b, bb, 1, n, max_dist)
        return myers64(masks, 0, syms, masks, u, m, b, bb, 1, n, max_dist)

    return pair


_cpu = build(njit(cache=False))
_pair = pair_function(njit(cache=False), _cpu, build(njit(cache=False), word_bits=SHORT_BITS))
_myers = _cpu.myers
_peq_set = _cpu.peq_set
_peq_clear = _cpu.peq_clear


@njit(parallel=True, cache=True)
def pairwise(ad, ao, bd, bo, max_dist, out):
    """``out[p]``: distance of ``a[p]`` and ``b[p]``, or :data:`LONG` when both exceed 64 symbols."""
    total = out.shape[0]
    step = 4096
    for c in prange((total + step - 1) // step):
        syms = np.empty(WORD_BITS, np.int64)
        masks = np.empty(WORD_BITS, np.uint64)
        for p in range(c * step, min(total, (c + 1) * step)):
            out[p] = _pair(ad, ao[p], ao[p + 1] - ao[p], bd, bo[p], bo[p + 1] - bo[p], syms,
                           masks, max_dist)


@njit(cache=True)
def _row_pair(qd, qb, m, cd, cb, n, peq, max_dist):
    """One cdist pair on the CPU: the query's masks are already in ``peq`` when m <= 64."""
    if m <= WORD_BITS:
        return _myers(peq, 0, peq, peq, -1, m, cd, cb, 1, n, max_dist)
    if n <= WORD_BITS:
        _peq_set(peq, 0, cd, cb, n)
        d = _myers(peq, 0, peq, peq, -1, n, qd, qb, 1, m, max_dist)
        _peq_clear(peq, 0, cd, cb, n)
        return d
    return myers_blocks(qd, qb, m, cd, cb, n, max_dist)


@njit(parallel=True, cache=True)
def dense_rows(qd, qo, cd, co, rows, bounds, row0, upper, max_dist, alphabet, out):
    """Fill ``out[i - row0, j]`` for every query row ``i`` in ``rows`` and every choice j.

    ``rows[bounds[c]:bounds[c+1]]`` is the share of parallel task c (each
    task allocates its mask table once). With ``upper`` (queries are the
    choices) only ``j > i`` is computed; other cells are left untouched.
    ``qd``/``cd`` hold symbol codes below ``alphabet``.
    """
    ntasks = bounds.shape[0] - 1
    nc = co.shape[0] - 1
    for c in prange(ntasks):
        peq = np.zeros(alphabet, np.uint64)
        for x in range(bounds[c], bounds[c + 1]):
            i = rows[x]
            qb = qo[i]
            m = qo[i + 1] - qb
            r = i - row0
            table = m <= WORD_BITS
            if table:
                _peq_set(peq, 0, qd, qb, m)
            for j in range(i + 1 if upper else 0, nc):
                cb = co[j]
                out[r, j] = _row_pair(qd, qb, m, cd, cb, co[j + 1] - cb, peq, max_dist)
            if table:
                _peq_clear(peq, 0, qd, qb, m)


@njit(parallel=True, cache=True)
def count_within(block, row0, upper, max_dist, counts):
    """``counts[r]``: cells of block row r within ``max_dist`` (j > row0 + r with ``upper``)."""
    for r in prange(block.shape[0]):
        k = 0
        for j in range(row0 + r + 1 if upper else 0, block.shape[1]):
            k += block[r, j] <= max_dist
        counts[r] = k


@njit(parallel=True, cache=True)
def fill_within(block, row0, upper, max_dist, starts, ii, jj, dd):
    """Write the cells :func:`count_within` counted as ``(i, j, d)`` from ``starts[r]``."""
    for r in prange(block.shape[0]):
        k = starts[r]
        for j in range(row0 + r + 1 if upper else 0, block.shape[1]):
            v = block[r, j]
            if v <= max_dist:
                ii[k] = row0 + r
                jj[k] = j
                dd[k] = v
                k += 1


@njit(parallel=True, cache=True)
def mirror_upper(out, tile):
    """Copy the upper triangle onto the lower one and zero the diagonal (square ``out``)."""
    n = out.shape[0]
    nt = (n + tile - 1) // tile
    for bi in prange(nt):
        i0 = bi * tile
        for bj in range(bi + 1):
            j0 = bj * tile
            for i in range(i0, min(i0 + tile, n)):
                for j in range(j0, min(j0 + tile, i)):
                    out[i, j] = out[j, i]
        for i in range(i0, min(i0 + tile, n)):
            out[i, i] = 0


@njit(cache=True, nogil=True)
def block_masks(p, never):
    """The match masks of pattern ``p`` in 64-bit blocks: ``(symbols, masks)``, the sorted
    distinct symbols and ``masks[k, b]``, the bits of block ``b`` where ``p`` holds symbol
    ``k``. Positions holding ``never`` (an N code; -1: none) match nothing."""
    m = p.shape[0]
    syms = np.unique(p)
    peq = np.zeros((syms.shape[0], (m + 63) // 64), np.uint64)
    for i in range(m):
        if np.int64(p[i]) != never:
            peq[np.searchsorted(syms, p[i]), i // 64] |= np.uint64(1) << np.uint64(i % 64)
    return syms, peq


@njit(cache=True, nogil=True)
def block_column(masks, c, columns, hin):
    """Advance the pattern's column of vertical deltas by text symbol ``c``.

    ``columns`` is ``(pv, mv, last)``: a word of each per block, and the bit of the
    pattern's last row in the last block (:func:`fresh_columns`); ``hin`` the top row's
    horizontal delta (+1 for a global alignment, 0 for a free top row). Returns the bottom
    row's horizontal delta."""
    syms, peq = masks
    pv, mv, last = columns
    nb = pv.shape[0]
    k = np.searchsorted(syms, c)
    row = k if k < syms.shape[0] and syms[k] == c else -1
    one = np.uint64(1)
    high = np.uint64(1) << np.uint64(63)
    for b in range(nb):
        eq = peq[row, b] if row >= 0 else np.uint64(0)
        pvb, mvb = pv[b], mv[b]
        xv = eq | mvb
        if hin < 0:
            eq |= one
        xh = (((eq & pvb) + pvb) ^ pvb) | eq
        ph = mvb | ~(xh | pvb)
        mh = pvb & xh
        bit = last if b == nb - 1 else high
        hout = 1 if ph & bit else (-1 if mh & bit else 0)
        ph <<= one
        mh <<= one
        if hin < 0:
            mh |= one
        elif hin > 0:
            ph |= one
        pv[b] = mh | ~(xv | ph)
        mv[b] = ph & xv
        hin = hout
    return hin


@njit(cache=True, nogil=True)
def fresh_columns(m):
    """A pattern of ``m >= 1`` symbols' column at the text's start (``D[i][0] = i``): every
    vertical delta +1, with the bit of the pattern's last row."""
    nb = (m + 63) // 64
    return (np.full(nb, ~np.uint64(0), np.uint64), np.zeros(nb, np.uint64),
            np.uint64(1) << np.uint64((m - 1) % 64))


@njit(cache=True, nogil=True)
def myers_blocks(p, pb, m, t, tb, n, max_dist):
    """Global edit distance of ``p[pb:pb+m]`` and ``t[tb:tb+n]``, bit-parallel over 64-bit blocks.

    Myers' algorithm in Hyyrö's block form for patterns of any length: the
    pattern's column of the DP is ``ceil(m / 64)`` words of vertical deltas,
    advanced by one text symbol at a time, the horizontal delta carried from
    block to block (:func:`block_column`). O(n * m / 64) time and O(m / 64 + alphabet)
    memory, so two 100,000-symbol strings take a fraction of a second and a few MB.
    Returns ``max_dist + 1`` for a distance past ``max_dist`` (``-1``: no limit).
    """
    if m == 0 or n == 0:
        d = max(m, n)
        return max_dist + 1 if max_dist >= 0 and d > max_dist else d
    masks = block_masks(p[pb:pb + m], -1)
    columns = fresh_columns(m)
    score = m
    for j in range(n):
        score += block_column(masks, t[tb + j], columns, 1)  # global: D[0][j] = j
        if max_dist >= 0 and score - (n - 1 - j) > max_dist:
            return max_dist + 1  # even matching every remaining text symbol cannot get back
    return max_dist + 1 if max_dist >= 0 and score > max_dist else score


@njit(parallel=True, cache=True)
def pairwise_long(a, ao, b, bo, pairs, max_dist, out):
    """``out[x]``: distance of pair ``pairs[x]`` (``a[i]`` against ``b[i]``), on every core."""
    for x in prange(pairs.shape[0]):
        i = pairs[x]
        m, n = ao[i + 1] - ao[i], bo[i + 1] - bo[i]
        if m <= n:
            out[x] = myers_blocks(a, ao[i], m, b, bo[i], n, max_dist)
        else:
            out[x] = myers_blocks(b, bo[i], n, a, ao[i], m, max_dist)
