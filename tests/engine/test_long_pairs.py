"""Long pairs in linear memory (readalign/engine/long): the oracles, the short path, edlib and
parasail agree with them, with leaves small enough that every split and leaf edge is crossed."""

from __future__ import annotations

import logging
import random
import re
import tracemalloc

import numpy as np
import pytest
from conftest import require_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readalign.kernels.scored_quadrant import INFIX

import readalign
from readalign.engine.batching import LONG_PAIR, align_with
from readalign.engine.job import Job
from readalign.engine.long import align_long
from readalign.engine.matrices import ALPHABET, MATRICES
from readalign.engine.packing import pack_dna, pack_text, pack_with
from readalign.engine.result import cigar_string
from tests.support.mutate import mutate
from tests.support.oracle import dp_distance
from tests.support.oracle import replay as replay_edit
from tests.support.scored_oracle import align as oracle
from tests.support.scored_oracle import dna_scorer, replay, rescore

SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MODES = ("global", "infix", "local")
SCORINGS = [(1, 4, 6, 1), (2, 3, 5, 2), (1, 1, 0, 1), (3, 1, 2, 1), (2, 2, 1, 3)]
"""(match, mismatch, gap_open, gap_extend): BWA-like, others, linear gaps, extension over opening."""
LEAVES = st.sampled_from([1, 2, 3, 5, 8])
BLOSUM62 = MATRICES["BLOSUM62"]
PROTEIN = ALPHABET[:20]


def _leaves(reads, windows, job):
    return align_with(reads, windows, job, "cpu", 1)


def _related(draw, alphabet: str, top: int) -> tuple[str, str]:
    """A window and a read: random, or the window's middle with edits (so alignments are long)."""
    t = draw(st.text(alphabet=alphabet, max_size=top))
    if draw(st.booleans()) and len(t) > 4:
        cut = draw(st.integers(0, 3))
        edits = draw(st.lists(st.tuples(st.integers(0, len(t)), st.sampled_from("sdi"),
                                        st.sampled_from(alphabet)), max_size=6))
        q = list(t[cut:len(t) - cut])
        for pos, kind, c in edits:
            pos = min(pos, len(q))
            if kind == "s" and pos < len(q):
                q[pos] = c
            elif kind == "d" and pos < len(q):
                del q[pos]
            elif kind == "i":
                q.insert(pos, c)
        return "".join(q), t
    return draw(st.text(alphabet=alphabet, max_size=top)), t


@st.composite
def dna_pairs(draw, top: int = 40) -> list[tuple[str, str]]:
    return [_related(draw, draw(st.sampled_from(["ACGT", "ACGTN"])), top)
            for _ in range(draw(st.integers(1, 3)))]


@st.composite
def protein_pairs(draw, top: int = 30) -> list[tuple[str, str]]:
    return [_related(draw, PROTEIN, top) for _ in range(draw(st.integers(1, 3)))]


def _long(pairs, scoring, mode: str, leaf: int):
    """Every field of ``pairs`` aligned by the long path with leaves of ``leaf``."""
    q = pack_with([p[0] for p in pairs], scoring.codes)
    t = pack_with([p[1] for p in pairs], scoring.codes)
    code = MODES.index(mode)
    job = Job(code == INFIX, -1, scoring.n_code, False, True, 0, scoring.scores(code))
    res = align_long(q, t, np.arange(len(pairs)), job, _leaves, leaf, "cpu", 1)
    return [(int(res.score[i]), int(res.q_start[i]), int(res.q_end[i]), int(res.ref_start[i]),
             int(res.ref_end[i]), cigar_string(res.ops[0][2][_runs(res, i)]), int(res.dist[i]))
            for i in range(len(pairs))]


def _runs(res, i: int) -> slice:
    offsets = np.concatenate(([0], np.cumsum(res.n_ops)))
    return slice(int(offsets[i]), int(offsets[i + 1]))


def _check_scored(pairs, scoring, mode: str, leaf: int, sub, same) -> None:
    """Long path == oracle (score, end cell), its CIGAR rescored to the score, spans and NM
    from the CIGAR; the short path's score and end cell are the same."""
    go, ge, clip = scoring.gap_open, scoring.gap_extend, scoring.clip_penalty
    short = readalign.align([p[0] for p in pairs], [p[1] for p in pairs], mode=mode,
                            scoring=scoring, backend="cpu")
    for i, ((q, t), got) in enumerate(zip(pairs, _long(pairs, scoring, mode, leaf), strict=True)):
        score, q0, q1, r0, r1, cigar, nm = got
        want = oracle(q, t, sub, go, ge, mode, same, clip)
        assert (score, q1, r1) == (want.score, want.query_end, want.ref_end), (mode, q, t, got)
        assert (score, q1, r1) == (int(short.score[i]), int(short.query_end[i]),
                                   int(short.ref_end[i]))
        qa, ta = replay(cigar, q, t, q0, r0)
        used = [sum(int(k) for k, op in re.findall(r"(\d+)([" + ops + "])", cigar))
                for ops in ("MI", "MD")]
        assert (q1 - q0, r1 - r0) == tuple(used), (cigar, got)
        if mode == "global":
            assert (q0, q1, r0, r1) == (0, len(q), 0, len(t))
        if mode == "local" and q0 == q1:
            assert cigar == (f"{len(q)}S" if q else "")
        else:
            assert rescore(cigar, q, t, r0, sub, go, ge, clip) == score, (mode, q, t, got)
        gaps = sum(int(k) for k, op in re.findall(r"(\d+)([ID])", cigar))
        assert nm == sum(not same(a, b) for a, b in zip(qa, ta, strict=True)) + gaps


def _dna_same(a: str, b: str) -> bool:
    return a == b and a != "N"


@SETTINGS
@given(dna_pairs(), st.sampled_from(SCORINGS), st.sampled_from(MODES), LEAVES,
       st.sampled_from([0, 0, 3]))
def test_scored_dna_matches_the_oracle_across_splits_and_leaves(pairs, costs, mode, leaf, clip):
    scoring = readalign.Scoring(*costs, clip_penalty=clip if mode == "local" else 0)
    _check_scored(pairs, scoring, mode, leaf, dna_scorer(costs[0], costs[1]), _dna_same)


@SETTINGS
@given(protein_pairs(), st.sampled_from(MODES), LEAVES)
def test_protein_matrix_matches_the_oracle_across_splits_and_leaves(pairs, mode, leaf):
    scoring = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    sub = lambda a, b: BLOSUM62[ALPHABET.index(a)][ALPHABET.index(b)]  # noqa: E731
    _check_scored(pairs, scoring, mode, leaf, sub, lambda a, b: a == b)


def _edit(pairs, infix: bool, leaf: int, max_distance: int = -1, text: bool = False):
    pack = pack_text if text else pack_dna
    q = pack([p[0] for p in pairs])
    t = pack([p[1] for p in pairs])
    job = Job(infix, max_distance, -1 if text else 4, True, True, 0, None)
    return align_long(q, t, np.arange(len(pairs)), job, _leaves, leaf, "cpu", 1)


@SETTINGS
@given(dna_pairs(), st.booleans(), LEAVES, st.sampled_from([-1, 0, 2, 5]))
def test_edit_distance_matches_the_oracle_across_splits_and_leaves(pairs, infix, leaf, limit):
    """Distances and end columns of the plain DP, =/X CIGARs replayed to the distance, spans
    from the replay; ``max_distance`` turns a pair past it into -1 with no CIGAR."""
    res = _edit(pairs, infix, leaf, limit)
    for i, (q, t) in enumerate(pairs):
        d, end = dp_distance(q, t, infix, "N")
        cigar = cigar_string(res.ops[0][2][_runs(res, i)])
        if 0 <= limit < d:
            assert (int(res.dist[i]), int(res.ref_start[i]), int(res.ref_end[i]), cigar) == \
                (-1, -1, -1, "")
            continue
        assert (int(res.dist[i]), int(res.ref_end[i])) == (d, end), (q, t, infix)
        assert replay_edit(cigar, q, t, int(res.ref_start[i])) == (d, end)
        if not infix:
            assert int(res.ref_start[i]) == 0


@SETTINGS
@given(st.lists(st.tuples(st.text(alphabet="ab\u00e9\U0001f600", max_size=30),
                          st.text(alphabet="ab\u00e9\U0001f600", max_size=30)),
                min_size=1, max_size=3), st.booleans(), LEAVES)
def test_edit_distance_of_text_code_points(pairs, infix, leaf):
    res = _edit(pairs, infix, leaf, text=True)
    for i, (q, t) in enumerate(pairs):
        d, end = dp_distance(q, t, infix)
        assert (int(res.dist[i]), int(res.ref_end[i])) == (d, end)
        cigar = cigar_string(res.ops[0][2][_runs(res, i)])
        assert replay_edit(cigar, q, t, int(res.ref_start[i]), n_symbol=None) == (d, end)


def _long_dna(seed: int, count: int) -> tuple[list[str], list[str]]:
    """Reads and windows past the short path's limit: a window's middle with 5% edits, and
    a read longer than its window."""
    rng = random.Random(seed)
    reads, windows = [], []
    for x in range(count):
        t = "".join(rng.choice("ACGT") for _ in range(rng.randint(LONG_PAIR + 1, 2_600)))
        q = mutate(rng, t[rng.randint(0, 200):len(t) - rng.randint(0, 200)], 0.05, "ACGT", 4)
        reads.append(q if x % 3 else t + q[:300])
        windows.append(t)
    return reads, windows


def _parasail_score(parasail, mode: str, q: str, t: str, go: int, ge: int, matrix) -> int:
    fn = {"global": parasail.nw_stats, "infix": parasail.sg_dx_stats, "local": parasail.sw_stats}
    return fn[mode](q, t, go + ge, ge, matrix).score


def test_long_pairs_through_the_api_equal_parasail_and_rescore():
    """Scored DNA and protein pairs past the short path's limit, every mode: parasail's scores,
    CIGARs that rescore to them, short pairs of the same call as they are alone."""
    parasail = require_module("parasail", "test-extra")
    reads, windows = _long_dna(4, 4)
    reads += ["ACGTTGCA", "GGAT"]
    windows += ["TTACGTAGCATT", "CCGGATCC"]
    scoring = readalign.Scoring(1, 4, 6, 1)
    matrix = parasail.matrix_create("ACGT", 1, -4)
    sub = dna_scorer(1, 4)
    for mode in MODES:
        res = readalign.align(reads, windows, mode=mode, scoring=scoring, backend="cpu")
        alone = readalign.align(reads[-2:], windows[-2:], mode=mode, scoring=scoring,
                                backend="cpu")
        assert [res.cigar(i) for i in (-2, -1)] == alone.cigars()
        np.testing.assert_array_equal(res.score[-2:], alone.score)
        for i, (q, t) in enumerate(zip(reads, windows, strict=True)):
            assert int(res.score[i]) == _parasail_score(parasail, mode, q, t, 6, 1, matrix)
            assert rescore(res.cigar(i), q, t, int(res.ref_start[i]), sub, 6, 1) == res.score[i]
    rng = random.Random(9)
    t = "".join(rng.choice(PROTEIN) for _ in range(1_500))
    q = mutate(rng, t[100:1_400], 0.1, PROTEIN)
    scoring = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    blosum = lambda a, b: BLOSUM62[ALPHABET.index(a)][ALPHABET.index(b)]  # noqa: E731
    for mode in MODES:
        res = readalign.align([q], [t], mode=mode, scoring=scoring, backend="cpu")
        assert int(res.score[0]) == _parasail_score(parasail, mode, q, t, 10, 1,
                                                    parasail.blosum62)
        assert rescore(res.cigar(0), q, t, int(res.ref_start[0]), blosum, 10, 1) == res.score[0]


def test_long_edit_pairs_equal_edlib_and_say_where_they_go(caplog):
    edlib = require_module("edlib", "test-extra")
    reads, windows = _long_dna(5, 3)
    for mode, task in (("global", "NW"), ("infix", "HW")):
        with caplog.at_level(logging.INFO, logger="readalign"):
            res = readalign.align(reads, windows, mode=mode, backend="cpu")
        assert "3 pair(s) with a side longer than 1024 symbols take the long path" in caplog.text
        for i, (q, t) in enumerate(zip(reads, windows, strict=True)):
            want = edlib.align(q, t, mode=task)
            assert int(res.distance[i]) == want["editDistance"]
            assert replay_edit(res.cigar(i), q, t, int(res.ref_start[i])) == \
                (want["editDistance"], int(res.ref_end[i]))
        capped = readalign.align(reads, windows, mode=mode, backend="cpu",
                                 max_distance=int(res.distance.min()))
        past = res.distance > res.distance.min()
        assert past.any() and (capped.distance[past] == -1).all()
        np.testing.assert_array_equal(capped.distance[~past], res.distance[~past])
        assert capped.cigars() == [("" if x else c) for x, c in zip(past, res.cigars(),
                                                                    strict=True)]


def test_scores_without_cigars_are_the_traced_ones():
    reads, windows = _long_dna(6, 3)
    for mode in MODES:
        scoring = readalign.Scoring(2, 3, 5, 2, clip_penalty=4 if mode == "local" else 0)
        traced = readalign.align(reads, windows, mode=mode, scoring=scoring, backend="cpu")
        plain = readalign.align(reads, windows, mode=mode, scoring=scoring, backend="cpu",
                                cigar=False)
        np.testing.assert_array_equal(plain.score, traced.score)
        np.testing.assert_array_equal(plain.ref_end, traced.ref_end)
        np.testing.assert_array_equal(plain.query_end, traced.query_end)


def test_memory_is_linear_in_the_lengths():
    """A 20,000 x 20,000 pair: what the long path allocates from Python (every array it keeps
    between passes) peaks under 64 bytes a symbol, where its matrix would take 400 million
    cells."""
    reads, windows = _long_dna(7, 1)
    readalign.align(reads, windows, mode="global", backend="cpu")  # compiled and cached
    rng = random.Random(7)
    t = "".join(rng.choice("ACGT") for _ in range(20_000))
    q = mutate(rng, t, 0.01, "ACGT")
    scoring = readalign.Scoring(1, 4, 6, 1)
    readalign.align(reads, windows, mode="global", scoring=scoring, backend="cpu")
    tracemalloc.start()
    try:
        res = readalign.align([q], [t], mode="global", scoring=scoring, backend="cpu")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rescore(res.cigar(0), q, t, 0, dna_scorer(1, 4), 6, 1) == res.score[0]
    assert peak < 64 * (len(q) + len(t))


def _kilobases(length: int = 100_000) -> tuple[str, str]:
    """A random window of ``length`` bases and a read drawn from it 1% apart."""
    rng = random.Random(12)
    t = "".join(rng.choice("ACGT") for _ in range(length))
    return mutate(rng, t, 0.01, "ACGT"), t


def test_hundred_kilobase_pair_edit_distance_with_cigar():
    """Two 100 kbp sequences 1% apart: edlib's distance, both modes, CIGARs replayed."""
    edlib = require_module("edlib", "test-extra")
    q, t = _kilobases()
    for mode, task in (("global", "NW"), ("infix", "HW")):
        res = readalign.align([q], [t], mode=mode, backend="cpu")
        want = edlib.align(q, t, mode=task)
        assert int(res.distance[0]) == want["editDistance"]
        assert replay_edit(res.cigar(0), q, t, int(res.ref_start[0])) == \
            (want["editDistance"], int(res.ref_end[0]))


@pytest.mark.slow
def test_thirty_kilobase_pair_affine_with_cigar():
    """A 30 kbp pair, affine global and local: the CIGARs rescore to the scores, which a
    global alignment's own optimum bounds (the local one is at least the global one). (The
    affine row passes run cell by cell on the CPU: 100 kbp takes minutes there.)"""
    q, t = _kilobases(30_000)
    scoring = readalign.Scoring(1, 4, 6, 1)
    scores = {}
    for mode in ("global", "local"):
        res = readalign.align([q], [t], mode=mode, scoring=scoring, backend="cpu")
        assert rescore(res.cigar(0), q, t, int(res.ref_start[0]), dna_scorer(1, 4), 6, 1) == \
            res.score[0]
        scores[mode] = int(res.score[0])
    assert scores["local"] >= scores["global"] > 0
