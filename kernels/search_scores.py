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
column and the strip's query codes in arrays of ``STRIP`` entries (registers on the GPU once
the loops are unrolled); only the strip's bottom row (``H`` and the vertical gap ``F``)
goes to memory, one pair of values a column, where the next strip reads it. A cell costs one
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


def padded_query(codes: np.ndarray, size: int) -> np.ndarray:
    """The query's codes padded with the code ``size`` to a whole number of strips (int32)."""
    m = codes.shape[0]
    out = np.full(max(1, -(-m // STRIP)) * STRIP, size, np.int32)
    out[:m] = codes
    return out


def build(device_jit) -> SimpleNamespace:
    """Compile the per-sequence score function with ``device_jit``.

    ``sequence_score(table, width, goe, ge, query, mq, subject, tb, n, hb, fb, base, stride,
    hl, el, qc)``: the best local score of ``query[0:mq]`` (padded, :func:`padded_query`)
    against ``subject[tb:tb + n]``. ``table`` is :func:`extended_table`, ``width`` its row
    length, ``goe = go + ge``. ``hb``/``fb`` hold the strips' bottom rows at ``base + j *
    stride`` (``n`` entries each); ``hl``, ``el``, ``qc`` are scratch of :data:`STRIP`
    entries.
    """
    R = STRIP

    @device_jit
    def sequence_score(table, width, goe, ge, query, mq, subject, tb, n, hb, fb, base, stride,
                       hl, el, qc):
        best = np.int32(0)
        for i0 in range(0, mq, R):
            for r in range(R):
                qc[r] = query[i0 + r] * width
                hl[r] = np.int32(0)
                el[r] = np.int32(NEG)
            diag = np.int32(0)  # H of the row above the strip, previous column
            for j in range(n):
                at = base + j * stride
                if i0 == 0:
                    up = np.int32(0)
                    f = np.int32(NEG)
                else:
                    up = hb[at]
                    f = fb[at]
                sc = subject[tb + j]
                h_diag = diag
                diag = up
                for r in range(R):
                    f = max(np.int32(up - goe), np.int32(f - ge))
                    e = max(np.int32(hl[r] - goe), np.int32(el[r] - ge))
                    h = max(np.int32(h_diag + table[qc[r] + sc]), e, f, np.int32(0))
                    h_diag = hl[r]
                    hl[r] = h
                    el[r] = e
                    up = h
                    best = max(best, h)
                hb[at] = up
                fb[at] = f
        return best

    return SimpleNamespace(sequence_score=sequence_score)


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
        hl = np.empty(STRIP, np.int32)
        el = np.empty(STRIP, np.int32)
        qc = np.empty(STRIP, np.int32)
        for s in range(lo, hi):
            tb = offsets[s]
            out[s] = _score(table, width, goe, ge, query, query.shape[0], subjects, tb,
                            offsets[s + 1] - tb, hb, fb, 0, 1, hl, el, qc)
