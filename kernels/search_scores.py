"""Local alignment scores of one query against many database sequences, written once for CPU
and GPU (the score pass of protein database search).

:func:`build` takes the decorator that compiles a device-level function (``numba.njit`` for
the CPU, ``numba.cuda.jit(device=True)`` for the GPU) and returns ``sequence_score``: the
best Smith–Waterman–Gotoh score of the query against one database sequence, with no
traceback and no end cell. A lane (a GPU thread, or a CPU loop iteration) owns one database
sequence; the query is shared by every lane of a launch, so lanes of sequences of equal
length (the database is in length order) do equal work and take the same branches.

The query is swept in strips of :data:`STRIP` rows. Within a strip a lane walks its sequence
column by column, holding the strip's ``H`` and horizontal-gap ``E`` values of the previous
column and the strip's query codes as named values (registers); only the strip's bottom row
(``H`` and the vertical gap ``F``) goes to memory, one pair of values a column, where the
next strip reads it. A cell costs one
substitution lookup and a handful of integer operations; memory traffic is two words read and
two written per ``STRIP`` cells.

Conventions are the scored engine's (:mod:`.scored_quadrant`): a gap of length L costs
``go + L·ge``; local cells are at least 0; int32 cells. The query is padded to a whole number
of strips with the code ``size`` (one past the alphabet), whose row of the extended table
(:func:`extended_table`) scores :data:`PAD_SCORE` against everything: a padded cell then only
ever holds values derived from real cells by subtracting gap costs, never more than the best
real cell, so padding cannot change the score.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit, prange

STRIP = 8
"""Query rows a lane holds at once."""
PAD_SCORE = -(1 << 29)
"""Score of the padding code against anything: far below any alignment, far from overflow."""
NEG = -(1 << 29)
"""Minus infinity of the gap states before the first column."""


def extended_table(sub: np.ndarray, size: int) -> np.ndarray:
    """``sub`` (``size`` x ``size``, flat) with a padding row and column of :data:`PAD_SCORE`:
    ``(size + 1)²`` int32 entries, ``table[a * (size + 1) + b]``."""
    ext = np.full((size + 1, size + 1), PAD_SCORE, np.int32)
    ext[:size, :size] = np.asarray(sub, np.int32).reshape(size, size)
    return ext.ravel()


def padded_query(codes: np.ndarray, size: int, rows: int = STRIP) -> np.ndarray:
    """The query's codes padded with the code ``size`` to a whole number of ``rows`` (a strip,
    or a pass of the long kernel) (int32)."""
    m = codes.shape[0]
    out = np.full(max(1, -(-m // rows)) * rows, size, np.int32)
    out[:m] = codes
    return out


def build(device_jit) -> SimpleNamespace:
    """Compile the per-sequence score function with ``device_jit``.

    ``sequence_score(table, width, goe, ge, query, qb, mq, subject, tb, n, hb, fb, base,
    stride)``: the best local score of ``query[qb:qb + mq]`` (padded, :func:`padded_query`) against
    ``subject[tb:tb + n]``. ``table`` is :func:`extended_table`, ``width`` its row length,
    ``goe = go + ge``. ``hb``/``fb`` hold the strips' bottom rows at ``base + j * stride``
    (``n`` entries each). The strip's eight rows are eight named values each (written out,
    not an array), so that they live in registers on both targets.
    """

    @device_jit
    def cell(h_diag, h_left, e_left, h_up, f_up, s, goe, ge):
        """One cell: ``(H, E, F)`` from its diagonal, left and upper neighbours."""
        f = max(np.int32(h_up - goe), np.int32(f_up - ge))
        e = max(np.int32(h_left - goe), np.int32(e_left - ge))
        h = max(max(np.int32(h_diag + s), np.int32(0)), max(e, f))
        return h, e, f

    @device_jit
    def column(table, qs, sc, hs, es, up, f, diag, goe, ge):
        """One column of a strip: its eight ``H`` and ``E`` (tuples), the ``F`` leaving its
        bottom and its best ``H``, from the column before (``hs``, ``es``), the row above the
        strip (``up`` and ``f`` in this column, ``diag`` a column earlier), the strip's query
        rows ``qs`` (codes times the table's width) and the column's subject code ``sc``."""
        q0, q1, q2, q3, q4, q5, q6, q7 = qs
        h0, h1, h2, h3, h4, h5, h6, h7 = hs
        e0, e1, e2, e3, e4, e5, e6, e7 = es
        n0, e0, f = cell(diag, h0, e0, up, f, table[q0 + sc], goe, ge)
        n1, e1, f = cell(h0, h1, e1, n0, f, table[q1 + sc], goe, ge)
        n2, e2, f = cell(h1, h2, e2, n1, f, table[q2 + sc], goe, ge)
        n3, e3, f = cell(h2, h3, e3, n2, f, table[q3 + sc], goe, ge)
        n4, e4, f = cell(h3, h4, e4, n3, f, table[q4 + sc], goe, ge)
        n5, e5, f = cell(h4, h5, e5, n4, f, table[q5 + sc], goe, ge)
        n6, e6, f = cell(h5, h6, e6, n5, f, table[q6 + sc], goe, ge)
        n7, e7, f = cell(h6, h7, e7, n6, f, table[q7 + sc], goe, ge)
        best = max(max(max(n0, n1), max(n2, n3)), max(max(n4, n5), max(n6, n7)))
        return (n0, n1, n2, n3, n4, n5, n6, n7), (e0, e1, e2, e3, e4, e5, e6, e7), f, best

    @device_jit
    def strip_rows(query, i0, width):
        """The strip's query rows from ``query[i0]``: codes times the table's width."""
        return (query[i0] * width, query[i0 + 1] * width, query[i0 + 2] * width,
                query[i0 + 3] * width, query[i0 + 4] * width, query[i0 + 5] * width,
                query[i0 + 6] * width, query[i0 + 7] * width)

    @device_jit
    def sequence_score(table, width, goe, ge, query, qb, mq, subject, tb, n, hb, fb, base,
                       stride):
        best = np.int32(0)
        zero, neg = np.int32(0), np.int32(NEG)
        for i0 in range(qb, qb + mq, STRIP):
            qs = strip_rows(query, i0, width)
            hs = (zero, zero, zero, zero, zero, zero, zero, zero)
            es = (neg, neg, neg, neg, neg, neg, neg, neg)
            diag = zero  # H of the row above the strip, previous column
            for j in range(n):
                at = base + j * stride
                up, f = zero, neg
                if i0 > qb:
                    up, f = hb[at], fb[at]
                hs, es, f, top = column(table, qs, subject[tb + j], hs, es, up, f, diag, goe, ge)
                diag = up
                best = max(best, top)
                hb[at] = hs[7]
                fb[at] = f
        return best

    return SimpleNamespace(sequence_score=sequence_score, column=column, strip_rows=strip_rows,
                           cell=cell)


_cpu = build(njit(cache=False, nogil=True))
_score = _cpu.sequence_score


@njit(parallel=True, cache=True, nogil=True)
def scores_cpu(table, width, goe, ge, query, subjects, offsets, blocks, out):
    """``out[s]``: the best local score of ``query`` against subject ``s`` (``offsets``), on
    every core; ``blocks`` cut the subjects into runs a thread takes at a time."""
    for b in prange(blocks.shape[0] - 1):
        lo, hi = blocks[b], blocks[b + 1]
        longest = 0
        for s in range(lo, hi):
            longest = max(longest, offsets[s + 1] - offsets[s])
        hb = np.empty(longest + 1, np.int32)
        fb = np.empty(longest + 1, np.int32)
        for s in range(lo, hi):
            tb = offsets[s]
            out[s] = _score(table, width, goe, ge, query, 0, query.shape[0], subjects, tb,
                            offsets[s + 1] - tb, hb, fb, 0, 1)


# --- two database sequences a lane, in 16-bit halves ----------------------------------------

SPAN16 = 1 << 15
"""Values a half holds: -32768..32767."""
NEG16 = -(1 << 14)
"""Minus infinity of the packed gap states, and the padding code's score: ``NEG16 - ge`` and
``H + NEG16`` stay within a half for any penalty and score :class:`readalign.Scoring`
allows (at most 1000)."""


def fits16(best_sub: int, m: int, n: int) -> bool:
    """Whether every cell of a query of ``m`` residues against a sequence of ``n`` stays within
    a half: a local H is at most ``best_sub`` per aligned pair, ``min(m, n)`` pairs, and a
    diagonal step adds one more substitution before the maximum."""
    return max(best_sub, 0) * (min(m, n) + 1) < SPAN16


def packed_table(table: np.ndarray) -> np.ndarray:
    """:func:`extended_table` with the padding entries at :data:`NEG16` (the packed pass's)."""
    out = np.asarray(table, np.int32).copy()
    out[out == PAD_SCORE] = NEG16
    return out


def build_packed(device_jit, ops, join) -> SimpleNamespace:
    """Compile the two-sequence score function with ``device_jit`` and the lane operations
    ``ops`` (:func:`.lanes16.signed_ops` or :func:`.lanes16.signed_dpx_ops`); ``join(lo,
    hi)`` packs two table entries into a word.

    ``pair_score(table, width, goe2, ge2, query, qb, mq, subject, tb0, n0, tb1, n1, hb, fb,
    base, stride)``: the word of the best local scores of the query against
    ``subject[tb0:tb0 + n0]`` (low half) and ``subject[tb1:tb1 + n1]`` (high half), the
    shorter sequence padded with the padding code (``width - 1``) to the longer one's length.
    ``table`` is :func:`packed_table`; ``goe2``/``ge2`` are ``-(go + ge)`` and ``-ge`` in both
    halves; ``hb``/``fb`` (uint32) hold the strips' bottom rows as :func:`build`'s do. Valid
    for the pairs :func:`fits16` admits (a half wraps past its range otherwise).
    """
    add2, max2, relu3 = ops.add2, ops.max2, ops.relu3
    strip_rows = build(device_jit).strip_rows

    @device_jit
    def cell2(h_diag, h_left, e_left, h_up, f_up, s, goe2, ge2):
        """Two cells: ``(H, E, F)`` words."""
        f = max2(add2(h_up, goe2), add2(f_up, ge2))
        e = max2(add2(h_left, goe2), add2(e_left, ge2))
        return relu3(add2(h_diag, s), e, f), e, f

    @device_jit
    def column2(table, qs, c0, c1, hs, es, up, f, diag, goe2, ge2):
        """:func:`build`'s ``column`` on words: subject codes ``c0`` (low half) and ``c1``."""
        q0, q1, q2, q3, q4, q5, q6, q7 = qs
        h0, h1, h2, h3, h4, h5, h6, h7 = hs
        e0, e1, e2, e3, e4, e5, e6, e7 = es
        n0, e0, f = cell2(diag, h0, e0, up, f, join(table[q0 + c0], table[q0 + c1]), goe2, ge2)
        n1, e1, f = cell2(h0, h1, e1, n0, f, join(table[q1 + c0], table[q1 + c1]), goe2, ge2)
        n2, e2, f = cell2(h1, h2, e2, n1, f, join(table[q2 + c0], table[q2 + c1]), goe2, ge2)
        n3, e3, f = cell2(h2, h3, e3, n2, f, join(table[q3 + c0], table[q3 + c1]), goe2, ge2)
        n4, e4, f = cell2(h3, h4, e4, n3, f, join(table[q4 + c0], table[q4 + c1]), goe2, ge2)
        n5, e5, f = cell2(h4, h5, e5, n4, f, join(table[q5 + c0], table[q5 + c1]), goe2, ge2)
        n6, e6, f = cell2(h5, h6, e6, n5, f, join(table[q6 + c0], table[q6 + c1]), goe2, ge2)
        n7, e7, f = cell2(h6, h7, e7, n6, f, join(table[q7 + c0], table[q7 + c1]), goe2, ge2)
        best = max2(max2(max2(n0, n1), max2(n2, n3)), max2(max2(n4, n5), max2(n6, n7)))
        return (n0, n1, n2, n3, n4, n5, n6, n7), (e0, e1, e2, e3, e4, e5, e6, e7), f, best

    @device_jit
    def pair_score(table, width, goe2, ge2, query, qb, mq, subject, tb0, n0, tb1, n1, hb, fb,
                   base, stride):
        zero = np.uint32(0)
        neg = join(NEG16, NEG16)
        pad = width - 1
        best = zero
        for i0 in range(qb, qb + mq, STRIP):
            qs = strip_rows(query, i0, width)
            hs = (zero, zero, zero, zero, zero, zero, zero, zero)
            es = (neg, neg, neg, neg, neg, neg, neg, neg)
            diag = zero
            for j in range(max(n0, n1)):
                at = base + j * stride
                up, f = zero, neg
                if i0 > qb:
                    up, f = hb[at], fb[at]
                c0 = subject[tb0 + j] if j < n0 else pad
                c1 = subject[tb1 + j] if j < n1 else pad
                hs, es, f, top = column2(table, qs, c0, c1, hs, es, up, f, diag, goe2, ge2)
                diag = up
                best = max2(best, top)
                hb[at] = hs[7]
                fb[at] = f
        return best

    return SimpleNamespace(pair_score=pair_score, column2=column2, cell2=cell2)
