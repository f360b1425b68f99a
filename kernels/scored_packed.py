"""Scored local alignment of two pairs at once, 16 bits per cell: the packed forward pass.

The forward pass of :mod:`.scored_quadrant` (local mode) over words that hold one cell of
each of two pairs, the first pair in the low half and the second in the high half
(:mod:`.lanes16`'s signed operations). Per two cells the inner loop is a substitution
lookup, Gotoh's three maxima with their gap penalties and a best-cell key: on Hopper
``add.s16x2``/``max.s16x2``/``max.relu.s16x2``/``max.u16x2``, about as many instructions
as the 32-bit pass spends on one cell. The working row holds both pairs' H and F of a
column in one word, a byte each (``row_store``/``row_load`` of :func:`build`).

The two pairs are neighbouring lanes of a batch, so their boundaries sit side by side in
the batch-wide layout (``e * lanes + p``): one 32-bit store keeps both, and the
traceback of :mod:`.scored_quadrant` reads them per lane as int16, unchanged.

**Pairs of different shapes.** A thread computes both pairs over the larger read and the
larger window. Cells inside a pair's own matrix depend only on cells inside it, so
they equal the 32-bit pass's. Rows past a read's end are never read. Columns past a
window's end score :data:`PAD` against every letter, and a key drops their H
(``ragged`` sweep), so no such cell can be a pair's best. Boundaries past a pair's
matrix are written but never read.

**Where it applies** (:func:`packs`): local mode, an alphabet of at most
:data:`PACK_ALPHABET` letters (DNA), windows shorter than :data:`KEY_COLUMNS16` and scores
that stay below it, so that ``H * 256 + (255 - j)``, the best-cell key of
:mod:`.scored_quadrant` in 16 bits, fits each half; penalties and substitution scores within
:data:`SPAN`, so that no half leaves int16 (16-bit adds wrap). The packed rows' minus
infinity is :data:`NEG_P`, which loses every maximum as :data:`.scored_quadrant.NEG16` does;
gap open at most :data:`ROW_GAP_OPEN`, so that the working row's F fits its byte. The
working row, and so the strips' top rows, keep F only down to ``H - go - 1``: the next F,
``max(H - go - ge, F - ge)``, is ``H - go - ge`` either way, and F still loses to opening the
gap, so the traceback's moves, and every result, are the 32-bit pass's.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .disk_cache import named_for
from .lanes16 import ONE2, join_halves
from .quadrant import column_key, first_max, key_column
from .scored_quadrant import LOCAL, column_store

PACK_ALPHABET = 5
"""Most letters of a packed scoring (DNA's ACGTN): the table of letter pairs against letter
pairs (:func:`pair_table`) has ``A * A * (A + 1) ** 2`` words."""
PAIR_TABLE = PACK_ALPHABET * PACK_ALPHABET * (PACK_ALPHABET + 1) ** 2
KEY_COLUMNS16 = 256
"""Columns a 16-bit key tells apart, and the bound on every H it holds."""
SPAN = 16000
"""Bound on penalties and on substitution scores (as :data:`NEG_P` minus a gap extension
must stay inside int16)."""
NEG_P = -16384
"""Minus infinity of the packed rows: below every E and F of local mode (at least
``-(go + ge)``) and still inside int16 after one more gap extension."""
PAD = NEG_P
"""Substitution score of any read letter against a column past the window's end."""
NO_CELL2 = np.uint32(0x00FF00FF)
"""Both halves' key of H 0 at column 0 (a row with no positive cell)."""
_LOW = np.uint32(0xFFFF)
_HIGH = np.uint32(0xFFFF0000)
_NONE = np.uint32(0)

ROW_GAP_OPEN = 127
"""Largest gap open of a packed scoring: the working row keeps ``max(F - H, -(go + 1))`` in
a signed byte."""

STORE_STRIP_ROWS = 32
"""Read rows per strip of the pass with stores, rounded to a multiple of the quadrant size: a
strip's per-column work (the row above, the window letters) is shared by more cells."""


def store_strip(K: int) -> int:
    """Read rows per strip of the pass with stores at quadrant size ``K``."""
    return max(K, STORE_STRIP_ROWS // K * K)


def packs(mode: int, alphabet: int, best_sub: int, worst_sub: int, go: int, ge: int,
          clip: int, m_max: int, n_max: int) -> bool:
    """Whether pairs up to ``m_max`` x ``n_max`` can take the packed pass (module docstring).

    Every H is at most ``clip`` (row 0) plus the best substitution per aligned pair.
    """
    return (mode == LOCAL and alphabet <= PACK_ALPHABET and n_max < KEY_COLUMNS16
            and max(best_sub, 0) * min(m_max, n_max) + clip < KEY_COLUMNS16
            and worst_sub > -SPAN and go + 2 * ge < SPAN and go <= ROW_GAP_OPEN)


def pair_table(sub: np.ndarray, alphabet: int) -> np.ndarray:
    """Substitution scores of two pairs in one word, for every read-letter pair against every
    window-letter pair: entry ``(qa * A + qb) * (A + 1) ** 2 + ta * (A + 1) + tb`` holds
    ``sub[qa * A + ta]`` in its low half and ``sub[qb * A + tb]`` in its high half, :data:`PAD`
    where the window letter is ``A`` (past the window's end). Plain loops, so numba compiles
    it too."""
    a = alphabet
    a1 = a + 1
    out = np.empty(a * a * a1 * a1, np.uint32)
    for qa in range(a):
        for qb in range(a):
            for ta in range(a1):
                for tb in range(a1):
                    low = sub[qa * a + ta] if ta < a else PAD
                    high = sub[qb * a + tb] if tb < a else PAD
                    out[((qa * a + qb) * a1 + ta) * a1 + tb] = join_halves(low, high)
    return out


def build(device_jit, ops, K: int, S: int | None = None) -> SimpleNamespace:
    """Compile the packed local forward pass for quadrant size ``K`` with ``ops``
    (:func:`.lanes16.signed_ops` or :func:`.lanes16.signed_dpx_ops`): ``forward2``, and the
    working row's ``row_store(h, f, cap2)`` and ``row_load(w) -> (h, f)``.

    ``S`` (a multiple of ``K``, default ``K``) is the read rows of one strip: a strip of
    ``S`` rows keeps the top row of each of its ``S / K`` quadrant rows, so the boundaries,
    and every result, are those of strips of ``K``."""
    S = S or K
    if S % K:
        raise ValueError(f"strip height {S} is not a multiple of the quadrant size {K}")
    add2 = ops.add2
    max2 = ops.max2
    relu3 = ops.relu3
    umax2 = ops.umax2
    row_word = ops.row_word
    row_h = ops.row_h
    row_d = ops.row_d
    tag = f"scored2_k{K}_s{S}_{ops.name}"

    join = device_jit(join_halves)
    ahead = device_jit(first_max)
    key_of = device_jit(column_key)
    column_of = device_jit(key_column)
    store_column = column_store(device_jit, S, tag)

    @device_jit
    def row_store(h, f, cap2):
        """The working-row word of a column's H and F (both pairs): both H (``0..255``), then
        both ``max(F - H, -(go + 1))`` (``cap2`` is ``-(go + 1)`` in both halves), a byte each.
        One load and one store a column instead of two each (the pass with boundaries about
        0.7 of 15 ms per 1M pairs faster on an H100: benchmarks/RESULTS.md, 2026-11-27,
        ``9458648``)."""
        return row_word(h, max2(add2(f, add2(~h, ONE2)), cap2))

    @device_jit
    def row_load(w):
        """H and F of a working-row word, F as ``max(F, H - go - 1)``."""
        h = row_h(w)
        return h, add2(h, row_d(w))

    @device_jit
    def column(t, ta, tb, na, nb, A, j):
        """The table column of window letters ``j`` (1-based) of both windows; ``A`` past an end."""
        ca = np.uint32(t[np.uint64(ta + j - 1)]) if j <= na else np.uint32(A)
        cb = np.uint32(t[np.uint64(tb + j - 1)]) if j <= nb else np.uint32(A)
        return np.uint32(ca * np.uint32(A + 1) + cb)

    def make_sweep(ragged: bool, store: bool):
        """One strip over every window column. ``ragged``: the windows differ in length, so
        each column's keys keep only the halves whose window it is in.
        With ``store`` the strip's top row, the top row of each further quadrant row in it
        (row ``K``, ``2K``, ... of the strip, ``quad_row`` elements on, where the read has
        them) and every K-th column go to the boundaries, as in :mod:`.scored_quadrant`'s
        sweep. ``row`` holds ``row_store``'s words; ``words`` are the pass's constant words
        ``(oe2, ge2, neg2, cap2, edge)``: the gap costs, minus infinity, ``row_store``'s bound
        and the row word of column 0 (H 0, F minus infinity)."""
        def sweep2(windows, N, table, words, row, work, i0, h, bounds):
            t, ta, tb, na, nb = windows
            sub2, A = table
            oe2, ge2, neg2, cap2, edge = words
            arrays, base, stride, rlen, clen = bounds
            rbH, rbF, _cbH, _cbE = arrays
            cb0 = base + (i0 + 1) * stride
            col_stride = clen * stride
            diag, corner_f = row_load(row[0])
            rbj = np.uint64(base + (i0 // K) * rlen * stride)
            step = np.uint64(stride)
            qstep = np.uint64(rlen * stride)
            if store:
                rbH[rbj] = diag
                rbF[rbj] = corner_f
                for r in range(K - 1, S - 1, K):  # column 0 of the strip's inner quadrant rows
                    if r + 1 < h:
                        inner = rbj + np.uint64((r + 1) // K) * qstep
                        rbH[inner] = np.uint32(0)
                        rbF[inner] = neg2
            row[0] = edge
            first = min(1, N)
            nextW = np.uint32(row[first])
            nextC = column(t, ta, tb, na, nb, A, 1)
            keep = np.uint32(0xFFFFFFFF)
            for j in range(1, N + 1):
                later = np.uint32(np.uint32(key_of(j, KEY_COLUMNS16 - 1)) * ONE2)
                if ragged:
                    keep = np.uint32((_LOW if j <= na else _NONE) | (_HIGH if j <= nb else _NONE))
                aboveH, aboveF = row_load(nextW)
                col = nextC
                ahead = min(j + 1, N)  # the next column's loads, issued a column early
                nextW = np.uint32(row[ahead])
                nextC = column(t, ta, tb, na, nb, A, ahead)
                if store:
                    rbj += step
                    rbH[rbj] = aboveH
                    rbF[rbj] = aboveF
                pd = diag
                diag = aboveH
                for r in range(S):
                    leftH = work[r]
                    e = max2(add2(leftH, oe2), add2(work[S + r], ge2))
                    f = max2(add2(aboveH, oe2), add2(aboveF, ge2))
                    v = relu3(add2(pd, sub2[np.uint32(work[2 * S + r] + col)]), e, f)
                    x = np.uint32(v & keep) if ragged else v
                    work[3 * S + r] = umax2(work[3 * S + r],
                                            np.uint32(np.uint32(x << 8) + later))
                    if store and (r + 1) % K == 0 and r + 1 < S and r + 1 < h:
                        inner = rbj + np.uint64((r + 1) // K) * qstep
                        rbH[inner] = v
                        rbF[inner] = f
                    pd = leftH
                    work[r] = v
                    work[S + r] = e
                    aboveH = v
                    aboveF = f
                row[j] = row_store(aboveH, aboveF, cap2)
                if store and j % K == 0 and j < N:
                    store_column(arrays, work, cb0 + (j // K) * col_stride, stride, h)

        kind = ("ragged" if ragged else "even") + ("_store" if store else "")
        return device_jit(named_for(sweep2, f"{tag}_{kind}"))

    even_fill = make_sweep(False, False)
    ragged_fill = make_sweep(True, False)
    even_store = make_sweep(False, True)
    ragged_store = make_sweep(True, True)

    @device_jit
    def best_of_rows(work, i0, m, clip, shift, best, bi, bj):
        """The best cell so far of one half (``shift`` 0 or 16) after a strip: rows past the
        read's end do not count; the read's last row earns the clip bonus."""
        for r in range(S):
            key = np.int32((np.uint32(work[3 * S + r]) >> np.uint32(shift)) & _LOW)
            row_best = (key >> 8) + (clip if i0 + r + 1 == m else np.int32(0))
            if i0 + r < m and ahead(row_best, best):
                best = row_best
                bi = i0 + r + 1
                bj = column_of(key, np.int32(KEY_COLUMNS16 - 1))
        return best, bi, bj

    def forward2(reads, windows, scoring, store, row, bounds, work):
        """Local scores and end cells of pairs ``(q[qa:qa+ma], t[ta:ta+na])`` and
        ``(q[qb:qb+mb], t[tb:tb+nb])`` (``reads`` are ``(q, qa, qb, ma, mb)``, ``windows``
        ``(t, ta, tb, na, nb)``): ``(score_a, i_a, j_a, score_b, i_b, j_b)``, as
        :mod:`.scored_quadrant`'s ``forward`` returns each.

        ``scoring`` is ``(mode, sub2, A, go, ge, clip)`` as :mod:`.scored_quadrant` bundles it,
        with :func:`pair_table`'s ``sub2``; ``row`` holds one row (a word per column: both H
        and both F, ``row_store``'s words), ``work`` 4S
        words: the strip's column of H and of E, its letter pairs' table rows and its rows'
        best-cell keys. Boundaries (``bounds``, bundled as :mod:`.quadrant` describes) are
        words, one per element of both lanes, laid out as :mod:`.scored_quadrant` lays out one
        lane's (when ``store``).
        """
        q, qa, qb, ma, mb = reads
        t, ta, tb, na, nb = windows
        _mode, sub2, A, go, ge, clip = scoring
        (rbH, rbF, cbH, cbE), base, stride, _rlen, clen = bounds
        M = max(ma, mb)
        N = max(na, nb)
        A1 = np.uint32(A + 1)
        oe2 = join(-(go + ge), -(go + ge))
        ge2 = join(-ge, -ge)
        neg2 = join(NEG_P, NEG_P)
        top2 = join(clip, clip)
        cap2 = join(-(go + 1), -(go + 1))
        top_word = row_store(top2, neg2, cap2)
        edge = row_store(np.uint32(0), neg2, cap2)
        table = (sub2, A)
        words = (oe2, ge2, neg2, cap2, edge)
        clip = np.int32(clip)
        for j in range(N + 1):
            row[j] = top_word
        if store:
            for i in range(M + 1):
                cbH[np.uint64(base + i * stride)] = top2 if i == 0 else np.uint32(0)
                cbE[np.uint64(base + i * stride)] = neg2
            for b in range(1, max((N + K - 1) // K, 1)):  # row 0 of each quadrant column:
                cbH[np.uint64(base + b * clen * stride)] = top2  # an empty read's lane reads it
                cbE[np.uint64(base + b * clen * stride)] = neg2
            if M == 0:
                for j in range(N + 1):
                    rbH[np.uint64(base + j * stride)] = top2
                    rbF[np.uint64(base + j * stride)] = neg2
        best_a = np.int32(0)
        best_b = np.int32(0)
        ia = 0
        ja = 0
        ib = 0
        jb = 0
        for s in range((M + S - 1) // S):
            i0 = s * S
            h = min(S, M - i0)
            for r in range(S):
                work[r] = np.uint32(0)
                work[S + r] = neg2
                ca = np.uint32(q[np.uint64(qa + min(i0 + r, ma - 1))]) if ma > 0 else 0
                cb = np.uint32(q[np.uint64(qb + min(i0 + r, mb - 1))]) if mb > 0 else 0
                work[2 * S + r] = np.uint32((ca * np.uint32(A) + cb) * A1 * A1)
                work[3 * S + r] = NO_CELL2
            if na == nb and store:
                even_store(windows, N, table, words, row, work, i0, h, bounds)
            elif na == nb:
                even_fill(windows, N, table, words, row, work, i0, h, bounds)
            elif store:
                ragged_store(windows, N, table, words, row, work, i0, h, bounds)
            else:
                ragged_fill(windows, N, table, words, row, work, i0, h, bounds)
            best_a, ia, ja = best_of_rows(work, i0, ma, clip, 0, best_a, ia, ja)
            best_b, ib, jb = best_of_rows(work, i0, mb, clip, 16, best_b, ib, jb)
        score_a = np.int32(best_a - 2 * clip) if ma > 0 else np.int32(0)
        score_b = np.int32(best_b - 2 * clip) if mb > 0 else np.int32(0)
        return score_a, ia, ja, score_b, ib, jb

    return SimpleNamespace(forward2=device_jit(named_for(forward2, tag)), row_store=row_store,
                           row_load=row_load, K=K, S=S)
