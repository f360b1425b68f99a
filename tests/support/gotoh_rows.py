"""An independent row pass for the tests: Gotoh's recurrences over one rectangle, row by row.

Written from the definitions, sharing no code with readalign: H, E (gap along the window)
and F (gap along the read) of row ``i`` from row ``i - 1``; scores maximised, a gap of
length L costs ``go + L * ge``. Plain Python over numpy arrays, so the same function runs as
it is on the tiny inputs of the simulator's tests and compiled (:func:`compiled`) on the
long pairs of the device's tests.
"""

from __future__ import annotations

from functools import cache

import numpy as np

NEG = -(1 << 29)


def gotoh_rows(q, t, sub, A, go, ge, top_h, top_f, left_h, left_e, local, bonus):
    """The exit boundary of rectangle ``q`` x ``t`` (codes) from its entry boundary.

    ``top_h``/``top_f``: H and F of the row above (``n + 1``, element 0 the corner);
    ``left_h``/``left_e``: H and E of the column to the left (``m + 1``, element 0 unused).
    Returns ``(row_h, row_f, col_h, col_e, best)``: the last row's H and F (element 0:
    ``left_h[m]`` and NEG), the last column's H and E (element 0: ``top_h[n]`` and NEG), and
    for ``local`` (H floored at 0) ``[score, i, j]`` of the best cell over rows 1..m and
    columns 0..n, the last row counting ``bonus`` more, first in row-major order (NEG at
    (0, 0) without rows)."""
    m = q.shape[0]
    n = t.shape[0]
    h = top_h.astype(np.int64)
    f = top_f.astype(np.int64)
    col_h = np.empty(m + 1, np.int64)
    col_e = np.empty(m + 1, np.int64)
    col_h[0] = top_h[n]
    col_e[0] = NEG
    best = np.array([NEG, 0, 0], np.int64)
    for i in range(1, m + 1):
        extra = bonus if i == m else 0
        new_h = np.empty(n + 1, np.int64)
        new_f = np.empty(n + 1, np.int64)
        new_h[0] = left_h[i]
        new_f[0] = NEG
        e = np.int64(left_e[i])
        if local and new_h[0] + extra > best[0]:
            best[0] = new_h[0] + extra
            best[1] = i
            best[2] = 0
        for j in range(1, n + 1):
            e = max(new_h[j - 1] - go - ge, e - ge)
            fj = max(h[j] - go - ge, f[j] - ge)
            v = max(h[j - 1] + sub[q[i - 1] * A + t[j - 1]], e, fj)
            if local:
                v = max(v, 0)
                if v + extra > best[0]:
                    best[0] = v + extra
                    best[1] = i
                    best[2] = j
            new_h[j] = v
            new_f[j] = fj
        col_h[i] = new_h[n]
        col_e[i] = e
        h = new_h
        f = new_f
    row_f = f.copy()
    row_f[0] = NEG
    return h, row_f, col_h, col_e, best


@cache
def compiled():
    """:func:`gotoh_rows` compiled by numba for the long pairs (minutes of Python otherwise)."""
    from numba import njit

    return njit(cache=False)(gotoh_rows)
