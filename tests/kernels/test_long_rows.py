"""The long path's row passes (kernels/long_rows.py through engine/long/rows.row_passes)
against the full Gotoh matrices of the plain oracle: last rows, gap openings, best cells."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readalign.kernels.long_rows import ANCHORED, GLOBAL, INFIX, LOCAL

from readalign.engine.long.rows import UNIT, PassBatch, PassCosts, gather_pieces, row_passes
from tests.support.scored_oracle import NEG, _matrices

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CODES = "ACGTN"
PAIRS = st.lists(st.tuples(st.text(alphabet=CODES, max_size=150), st.text(alphabet=CODES,
                                                                           max_size=40)),
                 min_size=1, max_size=4)
"""Rows up to 150 long: the bit-parallel unit pass crosses its 64-bit blocks."""


def _batch(pairs, mode: int) -> PassBatch:
    q = np.frombuffer("".join(p[0] for p in pairs).encode() + b"\0", np.uint8)
    t = np.frombuffer("".join(p[1] for p in pairs).encode() + b"\0", np.uint8)
    qo = np.cumsum([0] + [len(p[0]) for p in pairs])
    to = np.cumsum([0] + [len(p[1]) for p in pairs])
    rows = [(0, qo[x], len(p[0]), 0) for x, p in enumerate(pairs)]
    cols = [(1, to[x], len(p[1]), 0) for x, p in enumerate(pairs)]
    return PassBatch(*gather_pieces(q, t, np.array(rows)), *gather_pieces(q, t, np.array(cols)),
                     mode)


def _sub(match: int, mismatch: int):
    table = np.full((256, 256), -mismatch, np.int32)
    for c in "ACGT":
        table[ord(c), ord(c)] = match
    return table.ravel(), lambda a, b: int(table[ord(a), ord(b)])


def _best(H, m: int, clip: int) -> tuple[int, int, int]:
    """The best cell by the forward passes' rule (cell (0, 0) first, rows top down, each row's
    first maximum, the last row counting ``clip`` more)."""
    best, bi, bj = H[0][0] + (clip if m == 0 else 0), 0, 0
    for i in range(1, m + 1):
        for j, v in enumerate(H[i]):
            v += clip if i == m else 0
            if v > best:
                best, bi, bj = v, i, j
    return best, bi, bj


@SETTINGS
@given(PAIRS, st.sampled_from([(1, 4, 6, 1), (2, 3, 5, 2), (1, 1, 0, 1)]),
       st.sampled_from([GLOBAL, INFIX, LOCAL, ANCHORED]), st.sampled_from([0, 3]))
def test_affine_pass_gives_the_last_row_and_where_its_gaps_opened(pairs, costs, mode, clip):
    match, mismatch, go, ge = costs
    table, sub = _sub(match, mismatch)
    res = row_passes(_batch(pairs, mode), PassCosts(table, 256, -1, go, ge, clip))
    oracle_mode = {GLOBAL: "global", INFIX: "infix", LOCAL: "local", ANCHORED: "global"}[mode]
    for x, (q, t) in enumerate(pairs):
        m = len(q)
        H, _E, F = _matrices(q, t, sub, go, ge, oracle_mode, clip)
        lo, hi = res.offsets[x], res.offsets[x + 1]
        h, f, f_open = res.h[lo:hi], res.f[lo:hi], res.f_open[lo:hi]
        want_h = list(H[m])
        if mode == LOCAL:
            want_h[0] = clip if m == 0 else 0
        assert h.tolist() == want_h
        for j in range(1 if mode == LOCAL or m == 0 else 0, len(t) + 1):
            want_f = F[m][j] if j else H[m][0]
            if m == 0 or want_f <= NEG // 2:
                continue
            assert f[j] == want_f
            a = int(f_open[j])  # the gap opened on row a: H there, the opening, the extensions
            assert 0 <= a < m and H[a][j] - go - (m - a) * ge == want_f
        if mode in (LOCAL, ANCHORED):
            want = _best(H, m, clip)
            if mode == LOCAL:
                want = _best([[0] * len(H[0])] + H[1:], m, clip) if m else (0, 0, 0)
            assert tuple(res.best[x]) == want


@SETTINGS
@given(PAIRS, st.sampled_from([GLOBAL, INFIX]))
def test_unit_pass_gives_the_edit_distances_of_the_last_row(pairs, mode):
    res = row_passes(_batch(pairs, mode), UNIT._replace(n_code=ord("N")))
    assert res.f is None and res.f_open is None

    def unit(a: str, b: str) -> int:
        return 0 if a == b and a != "N" else -1
    for x, (q, t) in enumerate(pairs):
        H = _matrices(q, t, unit, 0, 1, "global" if mode == GLOBAL else "infix", 0)[0]
        want = H[len(q)] if q else [0 if mode == INFIX else -j for j in range(len(t) + 1)]
        assert res.h[res.offsets[x]:res.offsets[x + 1]].tolist() == want
