"""The long-pair row pass on the GPU against an independent Gotoh pass and the plain DP oracles.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``, tiny tiles)::

    python tests/gpu/long_rows_check.py [EXAMPLES] [MAX_LEN]

Under the simulator the strips are 4 lanes of 1 or 2 rows, 1 to 3 warps share the block and
the ring is the smallest that cannot stall (so it wraps and holds strips back), on random
rectangles up to MAX_LEN a side: Hypothesis draws their codes, scorings and entry boundaries
(NEG included) for :func:`readalign.engine.gpu.long_rows.row_pass`, whose exit must equal
:func:`tests.support.gotoh_rows.gotoh_rows` element for element; then whole pairs of DNA
in every mode (:func:`~readalign.engine.gpu.long_rows.score_pair`) against
``tests.support.scored_oracle`` and edit distances against ``tests.support.oracle``. On a
GPU the tiles are the device's (32 lanes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from readalign.kernels.scored_quadrant import GLOBAL, INFIX, LOCAL, MODE_NAMES, NEG
from readalign.kernels.simulator import simulated

from readalign.engine.gpu.long_rows import (
    Entry,
    Tiles,
    edit_scores,
    row_pass,
    score_pair,
)
from readalign.engine.job import Scores

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests' support package
from tests.support import oracle, scored_oracle  # noqa: E402
from tests.support.gotoh_rows import gotoh_rows  # noqa: E402

DNA = "ACGTN"


def tiles_for(rows: int, warps: int) -> Tiles:
    """Tiny tiles under the simulator (4 lanes, one block, the smallest ring), else the
    device's with ``rows`` rows a lane."""
    if simulated():
        return Tiles(rows_per_lane=rows, lanes=4, warps_per_block=warps, blocks=1,
                     resident_share=1)
    return Tiles(rows_per_lane=rows)


def boundary(draw, size: int, neg_share: float) -> np.ndarray:
    """A boundary vector of ``size`` values, some of them minus infinity."""
    values = draw(st.lists(st.integers(-60, 60), min_size=size, max_size=size))
    out = np.array(values, np.int32)
    holes = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    if neg_share:
        out[np.array(holes, bool)] = NEG
    return out


@st.composite
def rectangles(draw, max_len: int):
    """Codes, scoring, entry boundary, local flag and bonus of one random rectangle."""
    A = draw(st.integers(2, 6))
    m = draw(st.integers(0, max_len))
    n = draw(st.integers(0, max_len))
    q = np.array(draw(st.lists(st.integers(0, A - 1), min_size=m, max_size=m)), np.uint8)
    t = np.array(draw(st.lists(st.integers(0, A - 1), min_size=n, max_size=n)), np.uint8)
    sub = np.array(draw(st.lists(st.integers(-6, 5), min_size=A * A, max_size=A * A)), np.int32)
    go, ge = draw(st.integers(0, 7)), draw(st.integers(1, 3))
    entry = Entry(boundary(draw, n + 1, 0.0), boundary(draw, n + 1, 0.5),
                  boundary(draw, m + 1, 0.0), boundary(draw, m + 1, 0.5))
    return q, t, Scores(GLOBAL, sub, A, go, ge), entry, draw(st.booleans()), draw(
        st.integers(0, 4))


def same_rows(q, t, scores: Scores, entry: Entry, local: bool, bonus: int, tiles: Tiles) -> None:
    """The GPU's exit boundary equals the independent pass's, element for element."""
    got = row_pass(q, t, scores, entry, local=local, last_row_bonus=bonus, tiles=tiles)
    want = gotoh_rows(q, t, scores.sub, scores.size, scores.gap_open, scores.gap_extend,
                      entry.top_h, entry.top_f, entry.left_h, entry.left_e, local, bonus)
    shape = f"{len(q)}x{len(t)} {tiles}"
    for name, a, b in zip(("row_h", "row_f", "col_h", "col_e"),
                          (got.row_h, got.row_f, got.col_h, got.col_e), want[:4]):
        assert np.array_equal(a, b), f"{name} differs on {shape}: {a} != {b}"
    if local:
        best = [got.best.score, got.best.i, got.best.j]
        assert best == want[4].tolist(), f"best cell {best} != {want[4].tolist()} on {shape}"
    else:
        assert got.best is None


def check_rows(examples: int, max_len: int) -> None:
    """Random rectangles through every strip height and warp count."""
    @settings(max_examples=examples, deadline=None, database=None)
    @given(rectangles(max_len), st.sampled_from([1, 2]), st.integers(1, 3))
    def run(case, rows, warps):
        same_rows(*case, tiles_for(rows, warps))

    run()


def dna_codes(s: str) -> np.ndarray:
    return np.array([DNA.index(c) for c in s], np.uint8)


def related(rng, n: int) -> tuple[str, str]:
    """A window of ``n`` bases and a read drawn from part of it with a few edits."""
    w = "".join(rng.choice(list("ACGT"), n, p=[0.25] * 4)) if n else ""
    a = int(rng.integers(0, n + 1))
    r = list(w[a:int(rng.integers(a, n + 1))])
    for _ in range(int(rng.integers(0, 4))):
        if r:
            r[int(rng.integers(0, len(r)))] = "ACGTN"[int(rng.integers(0, 5))]
    if rng.random() < 0.3:
        r += list(rng.choice(list("ACGT"), int(rng.integers(1, 6))))
    return "".join(r), w


def check_pairs(count: int, max_len: int, seed: int = 7) -> None:
    """Whole pairs, every mode (local also with a clip penalty), and edit distances."""
    rng = np.random.default_rng(seed)
    for x in range(count):
        read, window = related(rng, int(rng.integers(0, max_len + 1)))
        q, t = dna_codes(read), dna_codes(window)
        tiles = tiles_for(1 + x % 2, 1 + x % 3)
        for mode in (GLOBAL, INFIX, LOCAL):
            clip = 3 if mode == LOCAL and x % 2 else 0
            match, mismatch, go, ge = (2, 3, 4, 1) if x % 2 else (1, 4, 6, 1)
            sub = np.array([[match if a == b and a != "N" else -mismatch for b in DNA]
                            for a in DNA], np.int32).ravel()
            got = score_pair(q, t, Scores(mode, sub, 5, go, ge, clip), tiles=tiles)
            want = scored_oracle.align(read, window, scored_oracle.dna_scorer(match, mismatch),
                                       go, ge, MODE_NAMES[mode], clip=clip)
            assert (got.score, got.end_i, got.end_j) == (want.score, want.query_end,
                                                         want.ref_end), (
                f"{MODE_NAMES[mode]} {read!r} {window!r}: {got} != {want}")
        for mode in (GLOBAL, INFIX):
            got = score_pair(q, t, edit_scores(mode), tiles=tiles)
            dist, end = oracle.dp_distance(read, window, mode == INFIX, n_symbol="N")
            assert (-got.score, got.end_j) == (dist, end), (read, window, got, dist, end)


def main(argv: list[str]) -> None:
    examples = int(argv[1]) if len(argv) > 1 else 40
    max_len = int(argv[2]) if len(argv) > 2 else 24
    check_rows(examples, max_len)
    check_pairs(max(examples // 2, 1), max_len)
    print(f"long rows identical to the oracles on {examples} rectangles and "
          f"{max(examples // 2, 1)} pairs")


if __name__ == "__main__":
    main(sys.argv)
