"""The long-pair row pass (one pair on the whole GPU): under the simulator with tiny tiles, and
on a device on pairs of 10 to 100 kbp against the independent Gotoh pass compiled for the CPU.
The host-side checks and boundaries need neither."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_CHECKS, HAS_GPU, under_simulator
from readalign.kernels.long_rows_cuda import ring_columns
from readalign.kernels.scored_quadrant import GLOBAL, INFIX, LOCAL, NEG

from readalign.engine.gpu.long_rows import (
    Entry,
    Tiles,
    device_bytes,
    edit_scores,
    entry_for,
    row_pass,
    rows_for,
    score_pair,
)
from readalign.engine.job import Scores
from tests.support import gotoh_rows

gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
DNA_SUB = np.array([[1 if a == b and a < 4 else -4 for b in range(5)] for a in range(5)],
                   np.int32).ravel()


@pytest.mark.slow
def test_row_pass_under_cuda_simulator():
    """Hypothesis's rectangles and whole pairs, strips of 4 lanes crossing every tile edge."""
    out = under_simulator(str(GPU_CHECKS / "long_rows_check.py"), "60", "30")
    assert "identical to the oracles" in out


def test_entry_of_each_mode():
    s = Scores(LOCAL, DNA_SUB, 5, 6, 1, 3)
    glob, inf, loc = (entry_for(mode, 3, 4, s) for mode in (GLOBAL, INFIX, LOCAL))
    assert glob.top_h.tolist() == [0, -7, -8, -9, -10]
    assert glob.left_h.tolist() == [0, -7, -8, -9]
    assert inf.top_h.tolist() == [0] * 5 and inf.left_h.tolist() == glob.left_h.tolist()
    assert loc.top_h.tolist() == [3] * 5 and loc.left_h.tolist() == [0] * 4
    assert set(glob.top_f.tolist()) == {NEG} and set(glob.left_e.tolist()) == {NEG}


def test_rectangles_without_rows_or_columns_match_the_oracle():
    """No kernel runs: the exit is the entry's edge, as the plain pass gives it."""
    rng = np.random.default_rng(3)
    for m, n in ((0, 5), (5, 0), (0, 0)):
        q = rng.integers(0, 5, m).astype(np.uint8)
        t = rng.integers(0, 5, n).astype(np.uint8)
        entry = Entry(*(rng.integers(-20, 20, size).astype(np.int32)
                        for size in (n + 1, n + 1, m + 1, m + 1)))
        for local in (False, True):
            got = row_pass(q, t, Scores(GLOBAL, DNA_SUB, 5, 2, 1), entry, local=local,
                           last_row_bonus=2)
            want = gotoh_rows.gotoh_rows(q, t, DNA_SUB, 5, 2, 1, entry.top_h, entry.top_f,
                                         entry.left_h, entry.left_e, local, 2)
            for a, b in zip((got.row_h, got.row_f, got.col_h, got.col_e), want[:4]):
                assert a.tolist() == b.tolist(), (m, n, local)
            if local:
                assert [got.best.score, got.best.i, got.best.j] == want[4].tolist()


def test_bad_inputs_are_named():
    s = Scores(GLOBAL, DNA_SUB, 5, 6, 1)
    q = np.zeros(4, np.uint8)
    t = np.zeros(3, np.uint8)
    good = entry_for(GLOBAL, 4, 3, s)
    with pytest.raises(ValueError, match="top_h must have 4"):
        row_pass(q, t, s, Entry(good.top_h[:3], good.top_f, good.left_h, good.left_e))
    with pytest.raises(ValueError, match="code 7"):
        row_pass(np.full(4, 7, np.uint8), t, s, good)
    with pytest.raises(ValueError, match="below minus infinity"):
        row_pass(q, t, s, Entry(good.top_h, good.top_f - 5, good.left_h, good.left_e))
    with pytest.raises(ValueError, match="int32"):
        row_pass(q, t, s, Entry(good.top_h + (1 << 28), good.top_f, good.left_h, good.left_e))
    with pytest.raises(ValueError, match="uint8"):
        row_pass(q.astype(np.int32), t, s, good)


def test_edit_scores_count_edits():
    s = edit_scores(GLOBAL)
    table = s.sub.reshape(5, 5)
    assert (s.gap_open, s.gap_extend) == (0, 1)
    assert table[0, 0] == 0 and table[4, 4] == -1 and table[0, 1] == -1


def test_memory_is_linear_in_the_lengths():
    """Ring and boundaries of a 1 Mbp pair: a few tens of MB, far under the issue's 1 GB."""
    tiles = Tiles(rows_per_lane=4, blocks=132 * 4)
    small = device_bytes(100_000, 100_000, tiles)
    large = device_bytes(1_000_000, 1_000_000, tiles)
    assert large < 100 << 20
    assert large < 11 * small
    assert ring_columns(1_000_000, 2112, 32) < 2_000 + 128
    assert ring_columns(100, 2112, 32) == 1 + 128


def test_strip_height_follows_the_read_length():
    assert rows_for(100_000, lambda rows: 4224 if rows == 1 else 2112) == 1
    assert rows_for(1_000_000, lambda rows: 4224 if rows == 1 else 2112) == 4


# --- on a device: long pairs against the independent pass, compiled for the CPU -------------

def _long_pair(rng, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A window of ``n`` bases and a read of ``m`` drawn from it with 1% substitutions and
    indels (N among them)."""
    t = rng.integers(0, 4, n).astype(np.uint8)
    start = int(rng.integers(0, max(n - m, 0) + 1))
    q = np.resize(t[start:start + m], m).copy()
    flip = rng.random(m) < 0.01
    q[flip] = rng.integers(0, 5, int(flip.sum()))
    cut = rng.random(m) < 0.005
    q = np.resize(q[~cut], m)
    return q.astype(np.uint8), t


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize(("m", "n", "rows"), [(10_000, 10_000, 0), (30_000, 100_000, 1),
                                              (100_000, 30_000, 2), (40_000, 40_000, 4),
                                              (20_000, 50_000, 8)])
def test_long_row_pass_matches_the_cpu(m, n, rows):
    """Every exit value and the local best cell, against the compiled plain pass, with random
    entry boundaries (a rectangle inside a larger matrix)."""
    rng = np.random.default_rng(m + n + rows)
    q, t = _long_pair(rng, m, n)
    scores = Scores(GLOBAL, DNA_SUB, 5, 6, 1)
    entry = Entry(rng.integers(-500, 500, n + 1).astype(np.int32),
                  rng.integers(-600, 0, n + 1).astype(np.int32),
                  rng.integers(-500, 500, m + 1).astype(np.int32),
                  rng.integers(-600, 0, m + 1).astype(np.int32))
    cpu = gotoh_rows.compiled()
    for local in (False, True):
        got = row_pass(q, t, scores, entry, local=local, last_row_bonus=5,
                       tiles=Tiles(rows_per_lane=rows))
        want = cpu(q, t, scores.sub, 5, 6, 1, entry.top_h, entry.top_f, entry.left_h,
                   entry.left_e, local, 5)
        for a, b in zip((got.row_h, got.row_f, got.col_h, got.col_e), want[:4]):
            assert np.array_equal(a, b)
        if local:
            assert [got.best.score, got.best.i, got.best.j] == want[4].tolist()


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("mode", [GLOBAL, INFIX, LOCAL])
def test_long_pair_score_matches_the_cpu(mode):
    """A 50 kbp pair's score and end cell in every mode, and its edit distance."""
    rng = np.random.default_rng(11 + mode)
    q, t = _long_pair(rng, 50_000, 52_000)
    scores = Scores(mode, DNA_SUB, 5, 6, 1, 2 if mode == LOCAL else 0)
    got = score_pair(q, t, scores)
    entry = entry_for(mode, len(q), len(t), scores)
    want = gotoh_rows.compiled()(q, t, scores.sub, 5, 6, 1, entry.top_h, entry.top_f,
                                 entry.left_h, entry.left_e, mode == LOCAL, scores.clip)
    row_h, best = want[0], want[4]
    if mode == GLOBAL:
        assert (got.score, got.end_i, got.end_j) == (row_h[-1], len(q), len(t))
    elif mode == INFIX:
        j = int(np.argmax(row_h))
        assert (got.score, got.end_i, got.end_j) == (row_h[j], len(q), j)
    else:
        assert (got.score, got.end_i, got.end_j) == (best[0] - 2 * scores.clip, best[1],
                                                     best[2])
    if mode != LOCAL:
        unit = edit_scores(mode)
        got = score_pair(q, t, unit)
        entry = entry_for(mode, len(q), len(t), unit)
        row_h = gotoh_rows.compiled()(q, t, unit.sub, 5, 0, 1, entry.top_h, entry.top_f,
                                      entry.left_h, entry.left_e, False, 0)[0]
        assert got.score == (row_h[-1] if mode == GLOBAL else row_h.max())
