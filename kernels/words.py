"""Distance-only Levenshtein for word lists, written once for CPU and GPU.

:func:`build` takes the decorator that compiles a device-level function
(``numba.njit`` for the CPU, ``numba.cuda.jit(device=True)`` for the GPU) and
returns plain per-pair functions: no traceback, no Python objects, scratch
passed in as arguments. The module then builds the CPU flavour and the
multi-core drivers that generate the (i, j) pairs of two packed lists.

Per-pair methods (global unit-cost edit distance, symmetric in its inputs):

* **Bit-parallel** (Myers 1999 in Hyyrö's formulation) when the *pattern*
  (one side of the pair) has at most 64 symbols; the other side, the text,
  may be any length. One 64-bit step per text symbol. The factory also
  builds a 32-bit flavour (``word_bits=32``, patterns of at most 32
  symbols) from the same source: on a GPU a 64-bit mask operation costs two
  32-bit instructions, so short patterns run about twice the mask steps. The match masks
  ``Peq[c]`` of the pattern come from one of three sources:

  - ``table``: a table indexed by symbol code (codes must be dense, e.g.
    remapped to ``0..A-1``). Filled in O(m) by :func:`peq_set` and reset in
    O(m) by :func:`peq_clear`, so one zeroed table serves every pattern;
  - ``sorted``: the pattern's distinct symbols, sorted, with their masks
    (two scratch arrays of 64); each text symbol is a binary search;
  - ``scan``: no scratch at all; each text symbol is compared with every
    pattern symbol (branch-free, uniform across a warp).

* **DP row** for pairs whose both sides exceed 64 symbols: one row of
  ``n + 1`` cells.

GPU forms (also compiled for the CPU, where they are tested):

* :func:`myers_voted`: bit-parallel over a *strided* text (symbol e at
  ``t[tb + e * ts]``, so lanes read interleaved lists coalesced), masks from
  a table or the sorted pair of arrays; the text loop ends when the warp
  vote (``warp_all``) says every lane is done (finished or past the limit).
* :func:`dp_regs`: the register-resident DP of the paper: a pattern of at
  most ``dp_width`` symbols (a compile-time constant) and one row of
  ``dp_width + 1`` cells, every loop over them of constant trip count, so
  the compiler can unroll it and keep the row in registers.

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
"""Patterns up to this length use 32-bit masks on the GPU (one instruction per mask op)."""
WORD_TYPES = {32: np.uint32, 64: np.uint64}

PEQ_TABLE = 0
PEQ_SORTED = 1
PEQ_SCAN = 2
PEQ_MODES = {"table": PEQ_TABLE, "sorted": PEQ_SORTED, "scan": PEQ_SCAN}


def word_type(word_bits: int):
    """The unsigned machine word of the bit-parallel masks: ``np.uint32`` or ``np.uint64``."""
    if word_bits not in WORD_TYPES:
        raise ValueError(f"word_bits must be 32 or 64; got {word_bits}")
    return WORD_TYPES[word_bits]


def build(device_jit, warp_all=None, dp_width: int = WORD_BITS,
          word_bits: int = WORD_BITS) -> SimpleNamespace:
    """Compile the per-pair distance functions with ``device_jit``.

    ``warp_all(done)`` is the warp vote (default: each caller votes alone, as
    on the CPU); ``dp_width`` is the pattern capacity of :func:`dp_regs`;
    ``word_bits`` (32 or 64) the mask word of the bit-parallel functions,
    which then take patterns of at most ``word_bits`` symbols. Numba widens
    integer arithmetic to 64 bits, so every mask expression is cast back to
    the word type: the compiler then narrows the whole expression, and a
    32-bit build runs one 32-bit instruction where the 64-bit one needs two.
    """
    U = word_type(word_bits)
    ZERO = U(0)
    ONE = U(1)
    ALL = U(~U(0))
    WB = int(word_bits)
    W = int(dp_width)
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
    def hopeless(m, n, max_dist):
        """True when the length difference alone exceeds the limit."""
        return max_dist >= 0 and abs(m - n) > max_dist

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
    def give_up(score, left, max_dist):
        """The score can fall by at most one per remaining text symbol."""
        return max_dist >= 0 and score - left > max_dist

    @device_jit
    def shortcut(m, n, max_dist):
        """The distance when no scan is needed (an empty side, or lengths too far apart), else -1."""
        if m == 0 or n == 0:
            return clip(m + n, max_dist)
        if hopeless(m, n, max_dist):
            return max_dist + 1
        return -1

    @device_jit
    def start(m):
        """Initial state of a bit-parallel scan for a pattern of m symbols: (hb, pv, mv, score)."""
        return U(ONE << U(m - 1)), ALL, ZERO, m

    @device_jit
    def advance(eq, pv, mv, hb, score):
        """One text symbol with match mask ``eq``: new (pv, mv, score)."""
        pv, mv, d = step(eq, pv, mv, hb)
        return pv, mv, score + d

    @device_jit
    def peq_set(peq, pb, p, ob, m):
        """OR the pattern's bit k into ``peq[pb + p[k]]`` for every k (table mode)."""
        for k in range(m):
            c = p[ob + k]
            peq[pb + c] |= U(ONE << U(k))

    @device_jit
    def peq_clear(peq, pb, p, ob, m):
        """Zero the table entries :func:`peq_set` touched."""
        for k in range(m):
            peq[pb + p[ob + k]] = ZERO

    @device_jit
    def myers_table(peq, pb, m, t, tb, n, max_dist):
        """Distance of a pattern (in ``peq``, m <= 64 symbols) to ``t[tb:tb+n]``."""
        s = shortcut(m, n, max_dist)
        if s >= 0:
            return s
        hb, pv, mv, score = start(m)
        for j in range(n):
            pv, mv, score = advance(U(peq[pb + t[tb + j]]), pv, mv, hb, score)
            if give_up(score, n - 1 - j, max_dist):
                return max_dist + 1
        return score

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
    def myers_sorted(syms, masks, u, m, t, tb, n, max_dist):
        """As :func:`myers_table`, masks from :func:`peq_sorted`."""
        s = shortcut(m, n, max_dist)
        if s >= 0:
            return s
        hb, pv, mv, score = start(m)
        for j in range(n):
            pv, mv, score = advance(U(lookup_sorted(syms, masks, u, t[tb + j])), pv, mv, hb, score)
            if give_up(score, n - 1 - j, max_dist):
                return max_dist + 1
        return score

    @device_jit
    def myers_scan(p, ob, m, t, tb, n, max_dist):
        """As :func:`myers_table`, each mask built by comparing with every pattern symbol."""
        s = shortcut(m, n, max_dist)
        if s >= 0:
            return s
        hb, pv, mv, score = start(m)
        for j in range(n):
            c = t[tb + j]
            eq = ZERO
            for k in range(m):
                eq = U(eq | U(U(p[ob + k] == c) << U(k)))
            pv, mv, score = advance(eq, pv, mv, hb, score)
            if give_up(score, n - 1 - j, max_dist):
                return max_dist + 1
        return score

    @device_jit
    def dp_row(a, ab, m, b, bb, n, row, rb, max_dist):
        """Distance by one DP row over ``b`` (``row`` holds n+1 cells); any lengths.

        With a limit, a row is abandoned when every cell plus the length
        difference still to cover exceeds it.
        """
        s = shortcut(m, n, max_dist)
        if s >= 0:
            return s
        for j in range(n + 1):
            row[rb + j] = j
        for i in range(1, m + 1):
            ai = a[ab + i - 1]
            diag = row[rb]
            row[rb] = i
            low = i + abs((m - i) - n)
            for j in range(1, n + 1):
                up = row[rb + j]
                v = min(diag + np.int32(ai != b[bb + j - 1]), min(up, row[rb + j - 1]) + 1)
                diag = up
                row[rb + j] = v
                low = min(low, v + abs((m - i) - (n - j)))
            if max_dist >= 0 and low > max_dist:
                return max_dist + 1
        return clip(row[rb + n], max_dist)

    @device_jit
    def pair_generic(a, ab, m, b, bb, n, syms, masks, row, rb, max_dist, sorted_peq):
        """Distance of one pair without a symbol table (the GPU's any-alphabet path).

        Bit-parallel with the shorter side as pattern when it has <= ``word_bits``
        symbols (``sorted`` or ``scan`` masks), else the DP row (``row``
        needs ``min(m, n) + 1`` cells).
        """
        if m > n:
            a, ab, m, b, bb, n = b, bb, n, a, ab, m
        if m <= WB:
            if sorted_peq:
                u = peq_sorted(a, ab, m, syms, masks)
                return myers_sorted(syms, masks, u, m, b, bb, n, max_dist)
            return myers_scan(a, ab, m, b, bb, n, max_dist)
        return dp_row(b, bb, n, a, ab, m, row, rb, max_dist)

    @device_jit
    def myers_voted(peq, pb, syms, masks, u, m, t, tb, ts, n, max_dist):
        """Distance of a pattern (m <= word_bits) to the strided text ``t[tb + e * ts]``, e < n.

        Masks come from ``peq[pb + c]`` (table) when ``u < 0``, else from the
        ``u`` sorted symbols of :func:`peq_sorted`. Lanes that are done idle
        until the warp vote ends the loop for all of them.
        """
        if m == 0 or n == 0:
            return clip(m + n, max_dist)
        hb, pv, mv, score = start(m)
        dead = hopeless(m, n, max_dist)
        e = 0
        while not warp_all(dead or e >= n):
            if not dead and e < n:
                c = t[tb + e * ts]
                eq = U(peq[pb + c]) if u < 0 else U(lookup_sorted(syms, masks, u, c))
                pv, mv, score = advance(eq, pv, mv, hb, score)
                dead = give_up(score, n - 1 - e, max_dist)
            e += 1
        if dead:
            return max_dist + 1
        return clip(score, max_dist)

    @device_jit
    def dp_regs(a, ab, as_, m, b, bb, bs, n, pat, row, max_dist):
        """Distance by a DP row of ``dp_width + 1`` cells; pattern ``a`` (m <= dp_width).

        ``a[ab + k * as_]`` and ``b[bb + e * bs]`` are the symbols; ``pat``
        (dp_width) and ``row`` (dp_width + 1) are scratch. Columns past m are
        computed but never read, so every inner loop has a constant trip count.
        """
        if m == 0 or n == 0:
            return clip(m + n, max_dist)
        for k in range(W):
            pat[k] = a[ab + min(k, m - 1) * as_]
        for k in range(W + 1):
            row[k] = k
        dead = hopeless(m, n, max_dist)
        e = 0
        while not warp_all(dead or e >= n):
            if not dead and e < n:
                c = b[bb + e * bs]
                diag = row[0]
                row[0] = e + 1
                rest = n - 1 - e
                low = e + 1 + abs(m - rest)
                for k in range(1, W + 1):
                    up = row[k]
                    v = min(diag + np.int32(pat[k - 1] != c), min(up, row[k - 1]) + 1)
                    diag = up
                    row[k] = v
                    if k <= m:
                        low = min(low, v + abs((m - k) - rest))
                dead = max_dist >= 0 and low > max_dist
            e += 1
        if dead:
            return max_dist + 1
        d = 0
        for k in range(W + 1):
            if k == m:
                d = row[k]
        return clip(d, max_dist)

    return SimpleNamespace(
        myers_voted=myers_voted, dp_regs=dp_regs, warp_all=warp_all, hopeless=hopeless,
        clip=clip, step=step, peq_set=peq_set, peq_clear=peq_clear, myers_table=myers_table,
        peq_sorted=peq_sorted, lookup_sorted=lookup_sorted, myers_sorted=myers_sorted,
        myers_scan=myers_scan, dp_row=dp_row, pair_generic=pair_generic, word_bits=WB,
    )


_cpu = build(njit(cache=False))
_cpu32 = build(njit(cache=False), word_bits=SHORT_BITS)
"""The 32-bit build on the CPU (compiled on first use): the tests run the GPU's short forms."""
_peq_set = _cpu.peq_set
_peq_clear = _cpu.peq_clear
_myers_table = _cpu.myers_table
_dp_row = _cpu.dp_row
_pair_generic = _cpu.pair_generic


@njit(cache=True)
def _pair_table(qd, qb, m, cd, cb, n, peq, row, max_dist):
    """One pair on the CPU: the query's masks are already in ``peq`` when m <= 64."""
    if m <= WORD_BITS:
        return _myers_table(peq, 0, m, cd, cb, n, max_dist)
    if n <= WORD_BITS:
        _peq_set(peq, 0, cd, cb, n)
        d = _myers_table(peq, 0, n, qd, qb, m, max_dist)
        _peq_clear(peq, 0, cd, cb, n)
        return d
    return _dp_row(qd, qb, m, cd, cb, n, row, 0, max_dist)


@njit(parallel=True, cache=True)
def dense_rows(qd, qo, cd, co, rows, bounds, row0, upper, max_dist, alphabet, maxlen,
               peq_mode, out):
    """Fill ``out[i - row0, j]`` for every query row ``i`` in ``rows`` and every choice j.

    ``rows[bounds[c]:bounds[c+1]]`` is the share of parallel task c (each
    task allocates its scratch once). With ``upper`` (queries are the
    choices) only ``j > i`` is computed; other cells are left untouched.
    ``qd``/``cd`` hold symbol codes below ``alphabet`` (needed for the
    ``table`` mode); ``maxlen`` is the longest string of either list.
    """
    ntasks = bounds.shape[0] - 1
    nc = co.shape[0] - 1
    for c in prange(ntasks):
        peq = np.zeros(alphabet if peq_mode == PEQ_TABLE else 1, np.uint64)
        syms = np.zeros(WORD_BITS, qd.dtype)
        masks = np.zeros(WORD_BITS, np.uint64)
        row = np.empty(maxlen + 1, np.int32)
        for x in range(bounds[c], bounds[c + 1]):
            i = rows[x]
            qb = qo[i]
            m = qo[i + 1] - qb
            r = i - row0
            table = peq_mode == PEQ_TABLE and m <= WORD_BITS
            if table:
                _peq_set(peq, 0, qd, qb, m)
            for j in range(i + 1 if upper else 0, nc):
                cb = co[j]
                n = co[j + 1] - cb
                if peq_mode == PEQ_TABLE:
                    d = _pair_table(qd, qb, m, cd, cb, n, peq, row, max_dist)
                else:
                    d = _pair_generic(qd, qb, m, cd, cb, n, syms, masks, row, 0, max_dist,
                                      peq_mode == PEQ_SORTED)
                out[r, j] = d
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
def myers_blocks(p, pb, m, t, tb, n, max_dist):
    """Global edit distance of ``p[pb:pb+m]`` and ``t[tb:tb+n]``, bit-parallel over 64-bit blocks.

    Myers' algorithm in Hyyrö's block form for patterns of any length: the
    pattern's column of the DP is ``ceil(m / 64)`` words of vertical deltas,
    advanced by one text symbol at a time, the horizontal delta carried from
    block to block. O(n * m / 64) time and O(m / 64 + alphabet) memory, so two
    100,000-symbol strings take a fraction of a second and a few MB. Returns
    ``max_dist + 1`` for a distance past ``max_dist`` (``-1``: no limit).
    """
    if m == 0 or n == 0:
        d = max(m, n)
        return max_dist + 1 if max_dist >= 0 and d > max_dist else d
    nb = (m + 63) // 64
    syms = np.unique(p[pb:pb + m])
    peq = np.zeros((syms.shape[0], nb), np.uint64)
    for i in range(m):
        k = np.searchsorted(syms, p[pb + i])
        peq[k, i // 64] |= np.uint64(1) << np.uint64(i % 64)
    pv = np.full(nb, ~np.uint64(0), np.uint64)
    mv = np.zeros(nb, np.uint64)
    last = np.uint64(1) << np.uint64((m - 1) % 64)
    high = np.uint64(1) << np.uint64(63)
    one = np.uint64(1)
    score = m
    for j in range(n):
        c = t[tb + j]
        k = np.searchsorted(syms, c)
        row = k if k < syms.shape[0] and syms[k] == c else -1
        hin = 1  # the top row of a global alignment: D[0][j] = j
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
        score += hin
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
