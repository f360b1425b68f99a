"""Scored alignment (readalign.Scoring): against parasail, against a plain Gotoh oracle, CPU == GPU."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import GPU_CHECKS, HANG_SECONDS, HAS_GPU, require_module, under_simulator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readalign.kernels.scored_quadrant import INT16_SPAN, MODE_NAMES, fits_int16

import readalign
from readalign.engine.matrices import ALPHABET, MATRICES
from tests.support.scored_oracle import NEG, _matrices, dna_scorer, replay, rescore
from tests.support.scored_oracle import align as oracle

SCORINGS = [(1, 4, 6, 1), (2, 3, 5, 2), (1, 1, 0, 1), (1, 4, 0, 2), (3, 1, 2, 1)]
"""(match, mismatch, gap_open, gap_extend): BWA-like, others, and linear gaps."""
MODES = ("global", "infix", "local")
BLOSUM62 = MATRICES["BLOSUM62"]


def _dna_same(a: str, b: str) -> bool:
    return a == b and a != "N"


def _blosum(a: str, b: str) -> int:
    return BLOSUM62[ALPHABET.index(a)][ALPHABET.index(b)]


def _fields(res, i: int) -> tuple:
    return (int(res.score[i]), int(res.query_start[i]), int(res.query_end[i]),
            int(res.ref_start[i]), int(res.ref_end[i]), res.cigar(i), int(res.distance[i]))


def _want(w) -> tuple:
    return (w.score, w.query_start, w.query_end, w.ref_start, w.ref_end, w.cigar, w.nm)


def _check_pairs(reads, windows, mode, scoring, sub, same, k=16, backend="cpu") -> None:
    res = readalign.align(reads, windows, mode=mode, scoring=scoring, k=k, backend=backend)
    go, ge, clip = scoring.gap_open, scoring.gap_extend, scoring.clip_penalty
    for i, (q, t) in enumerate(zip(reads, windows, strict=True)):
        got = _fields(res, i)
        assert got == _want(oracle(q, t, sub, go, ge, mode, same, clip)), (mode, q, t)
        qa, ta = replay(got[5], q, t, got[1], got[3])
        read_used = sum(int(n) for n, op in re.findall(r"(\d+)([MI=X])", got[5]))
        ref_used = sum(int(n) for n, op in re.findall(r"(\d+)([MD=X])", got[5]))
        assert (got[2] - got[1], got[4] - got[3]) == (read_used, ref_used)
        assert rescore(got[5], q, t, got[3], sub, go, ge, clip) == got[0]
        mismatches = sum(not same(a, b) for a, b in zip(qa, ta, strict=True))
        gaps = sum(int(n) for n, op in re.findall(r"(\d+)([ID])", got[5]))
        assert got[6] == mismatches + gaps, (mode, q, t, got)


dna = st.text(alphabet="ACGTN", max_size=80)


@st.composite
def dna_pairs(draw):
    """A window and a read drawn from it (substitutions, indels, N, a foreign tail) or not."""
    t = draw(st.text(alphabet="ACGTACGTACGTN", max_size=80))
    if t and draw(st.booleans()):
        a = draw(st.integers(0, len(t)))
        b = draw(st.integers(a, len(t)))
        q = list(t[a:b])
        for _ in range(draw(st.integers(0, 4))):
            if q:
                x = draw(st.integers(0, len(q) - 1))
                kind = draw(st.sampled_from("sid"))
                if kind == "s":
                    q[x] = draw(st.sampled_from("ACGTN"))
                elif kind == "i":
                    q.insert(x, draw(st.sampled_from("ACGT")) * draw(st.integers(1, 4)))
                else:
                    del q[x:x + draw(st.integers(1, 4))]
        q = "".join(q) + draw(st.text(alphabet="ACGT", max_size=12))
    else:
        q = draw(dna)
    return q, t


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(dna_pairs(), min_size=1, max_size=6), mode=st.sampled_from(MODES),
       params=st.sampled_from(SCORINGS), k=st.sampled_from([4, 8, 16]),
       clip=st.sampled_from([0, 0, 1, 5, 30]))
def test_dna_equals_the_oracle(pairs, mode, params, k, clip):
    """Score, spans, CIGAR and NM equal a full-matrix Gotoh (local mode with and without a
    clip penalty); CIGARs replay and re-score."""
    scoring = readalign.Scoring(*params, clip_penalty=clip if mode == "local" else 0)
    _check_pairs([p[0] for p in pairs], [p[1] for p in pairs], mode, scoring,
                 dna_scorer(params[0], params[1]), _dna_same, k)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(st.tuples(st.text(alphabet=ALPHABET[:20], max_size=60),
                                st.text(alphabet=ALPHABET[:20], max_size=60)),
                      min_size=1, max_size=5),
       mode=st.sampled_from(MODES))
def test_protein_blosum62_equals_the_oracle(pairs, mode):
    scoring = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    _check_pairs([p[0] for p in pairs], [p[1] for p in pairs], mode, scoring, _blosum,
                 lambda a, b: a == b)


def _parasail_score(parasail, mode: str, q: str, t: str, go: int, ge: int, matrix) -> int:
    fn = {"global": parasail.nw_trace, "infix": parasail.sg_dx_trace, "local": parasail.sw_trace}
    return fn[mode](q, t, go + ge, ge, matrix).score


def test_oracle_and_engine_agree_with_parasail():
    """Scores of N-free DNA (several scorings) and BLOSUM62 protein equal parasail's."""
    parasail = require_module("parasail", "test-extra")
    rng = np.random.default_rng(5)
    dna_q = ["".join(rng.choice(list("ACGT"), rng.integers(0, 120))) for _ in range(60)]
    dna_t = [q[3:] + "".join(rng.choice(list("ACGT"), rng.integers(0, 30))) if i % 2 else
             "".join(rng.choice(list("ACGT"), rng.integers(1, 150))) for i, q in enumerate(dna_q)]
    for match, mismatch, go, ge in SCORINGS[:3]:
        matrix = parasail.matrix_create("ACGT", match, -mismatch)
        scoring = readalign.Scoring(match, mismatch, go, ge)
        for mode in MODES:
            res = readalign.align(dna_q, dna_t, mode=mode, scoring=scoring, backend="cpu")
            want = [_parasail_score(parasail, mode, q, t, go, ge, matrix)
                    for q, t in zip(dna_q, dna_t, strict=True)]
            np.testing.assert_array_equal(res.score, want)
            for q, t, got in zip(dna_q[:10], dna_t[:10], want[:10], strict=True):
                assert oracle(q, t, dna_scorer(match, mismatch), go, ge, mode).score == got
    prot = [("".join(rng.choice(list(ALPHABET[:20]), rng.integers(1, 300))),
             "".join(rng.choice(list(ALPHABET[:20]), rng.integers(1, 300)))) for _ in range(30)]
    scoring = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    for mode in MODES:
        res = readalign.align([p[0] for p in prot], [p[1] for p in prot], mode=mode,
                              scoring=scoring, backend="cpu")
        want = [_parasail_score(parasail, mode, q, t, 10, 1, parasail.blosum62) for q, t in prot]
        np.testing.assert_array_equal(res.score, want)


def test_long_pairs_take_the_cpu_path_and_stay_exact():
    """Pairs past the 1,024-base fast path: scores equal parasail's, CIGARs re-score."""
    parasail = require_module("parasail", "test-extra")
    rng = np.random.default_rng(8)
    t = "".join(rng.choice(list("ACGT"), 1400))
    q = t[100:1300].replace("ACG", "AG").replace("TTT", "TAT")
    scoring = readalign.Scoring(1, 4, 6, 1)
    matrix = parasail.matrix_create("ACGT", 1, -4)
    for mode in MODES:
        res = readalign.align([q], [t], mode=mode, scoring=scoring, backend="cpu")
        assert int(res.score[0]) == _parasail_score(parasail, mode, q, t, 6, 1, matrix)
        assert rescore(res.cigar(0), q, t, int(res.ref_start[0]), dna_scorer(1, 4), 6, 1) == \
            int(res.score[0])


def test_conventions_by_example():
    s = readalign.Scoring(1, 4, 6, 1)
    # a mismatch on the read's last base stays a mismatch (a gap would cost more)
    res = readalign.align(["ACGTACGTAA"], ["TTACGTACGTACTT"], mode="infix", scoring=s)
    assert res.cigar(0) == "10M" and int(res.distance[0]) == 1
    # a 2-base deletion is one block
    res = readalign.align(["ACGTACGTACGTGGGGCCCC"], ["ACGTACGTACGTGGTTGGCCCC"], mode="global",
                          scoring=s)
    assert res.cigar(0) == "14M2D6M"
    # local: an adapter tail is soft-clipped; N scores as a mismatch, N included
    res = readalign.align(["ACGTTGCATGCAGGGGGGGGGG"], ["TTACGTTGCATGCATT"], mode="local",
                          scoring=s)
    assert res.cigar(0) == "12M10S" and int(res.query_end[0]) == 12
    res = readalign.align(["NNNN"], ["NNNN"], mode="local", scoring=s)
    assert int(res.score[0]) == 0 and res.cigar(0) == "4S"
    # the edit-distance path reports minus the distance as its score, the read end to end
    res = readalign.align(["ACGT", "AAAA"], ["TTACCTTT", "CCCC"], max_distance=1)
    assert res.score.tolist() == [-1, np.iinfo(np.int32).min]
    assert res.query_start.tolist() == [0, -1] and res.query_end.tolist() == [4, -1]


@pytest.mark.parametrize("kwargs, match", [
    ({"gap_open": -1}, "gap_open must be >= 0"),
    ({"gap_extend": 10**6}, "gap_extend must be <= 1000"),
    ({"matrix": [[5000, 0], [0, 1]], "alphabet": "AB"}, "within"),
    ({"mismatch": 1.5}, "mismatch must be a whole number"),
    ({"gap_open": 0, "gap_extend": 0}, "gap_open \\+ gap_extend must be > 0"),
    ({"matrix": "BLOSUM99"}, "matrix: unknown name"),
    ({"matrix": [[1, 2], [3, 1]], "alphabet": "AB"}, "matrix must be symmetric"),
    ({"matrix": [[1, 2, 3], [2, 1, 0]], "alphabet": "AB"}, "matrix must be square"),
    ({"matrix": [[1, 0], [0, 1]]}, "alphabet must be given"),
])
def test_bad_scoring_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        readalign.Scoring(**kwargs)


def _as_form(seqs: list[str], form: str):
    """``seqs`` as a caller may pass them: a list of str (read in place), of bytes, an ``S`` array."""
    if form == "bytes":
        return [x.encode() for x in seqs]
    if form == "S":
        return np.array([x.encode() for x in seqs], dtype="S")
    return seqs


@settings(max_examples=60, deadline=None)
@given(seqs=st.lists(st.text(alphabet="ACDEFGHIKLMNPQRSTVWY", max_size=12), min_size=1, max_size=8),
       form=st.sampled_from(["str", "bytes", "S"]), data=st.data())
def test_a_letter_outside_the_matrix_is_named_by_sequence_and_position(seqs, form, data):
    blosum = readalign.Scoring(matrix="BLOSUM62")
    same = _as_form(seqs, form)  # both sides of one kind, str or bytes
    good = readalign.align(_as_form(seqs, form), same, scoring=blosum, backend="cpu")
    assert good.score.tolist() == readalign.align(seqs, seqs, scoring=blosum,
                                                   backend="cpu").score.tolist()
    i = data.draw(st.integers(0, len(seqs) - 1))
    pos = data.draw(st.integers(0, len(seqs[i])))
    bad = [*seqs[:i], seqs[i][:pos] + "J" + seqs[i][pos:], *seqs[i + 1:]]
    with pytest.raises(ValueError, match=rf"^reads\[{i}\]: position {pos} is not one of"):
        readalign.align(_as_form(bad, form), same, scoring=blosum, backend="cpu")
    with pytest.raises(ValueError, match=rf"^windows\[{i}\]: position {pos} is not one of"):
        readalign.align(same, _as_form(bad, form), scoring=blosum, backend="cpu")


def test_bad_calls_name_the_problem():
    with pytest.raises(ValueError, match="match must be > 0 for mode='local'"):
        readalign.align(["A"], ["A"], mode="local", scoring=readalign.Scoring(match=0))
    with pytest.raises(ValueError, match="mode='local' needs a scoring"):
        readalign.align(["A"], ["A"], mode="local")
    with pytest.raises(ValueError, match="max_distance applies to edit distance"):
        readalign.align(["A"], ["A"], max_distance=2, scoring=readalign.Scoring())
    with pytest.raises(ValueError, match=r"windows\[1\]: position 2 is not one of"):
        readalign.align(["AR", "ND"], ["AR", "NDJ"], scoring=readalign.Scoring(matrix="BLOSUM62"))
    user = readalign.Scoring(matrix={("A", "A"): 2, ("A", "B"): -1, ("B", "B"): 3}, alphabet="AB")
    assert int(readalign.align(["AB"], ["AB"], mode="global", scoring=user).score[0]) == 5


@pytest.mark.slow
def test_cuda_simulator_equals_cpu():
    """The scored CUDA kernels under numba's simulator give the CPU's results, pair for pair."""
    out = under_simulator(str(GPU_CHECKS / "scored_gpu_check.py"), "40", "70")
    assert "identical on CPU and GPU" in out
    assert int(re.search(r"(\d+) pairs took the packed pass", out).group(1)) > 0


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_gpu_equals_cpu_on_many_mixed_pairs():
    check = GPU_CHECKS / "scored_gpu_check.py"  # a crash prints its Python stack
    out = subprocess.run([sys.executable, "-X", "faulthandler", str(check), "200000", "300"],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "identical on CPU and GPU" in out.stdout
    assert int(re.search(r"(\d+) pairs took the packed pass", out.stdout).group(1)) > 0


def _assert_in_int16_span(q, t, sub, go, ge, mode, clip):
    """Every H, E and F of the plain Gotoh matrices (minus infinity aside) is inside INT16_SPAN."""
    matrices = _matrices(q, t, sub, go, ge, mode, clip if mode == "local" else 0)
    values = [v for grid in matrices for row in grid for v in row if v != NEG]
    assert min(values) > -INT16_SPAN and max(values) < INT16_SPAN, (len(q), len(t), go, ge, clip)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), m=st.integers(0, 40), n=st.integers(0, 40), go=st.integers(0, 1000),
       mismatch=st.integers(0, 1000), clip=st.integers(0, 1000), mode=st.sampled_from(MODES),
       gap_edge=st.booleans())
def test_int16_bound_holds_every_value(data, m, n, go, mismatch, clip, mode, gap_edge):
    """Where fits_int16 lets the GPU keep rows and boundaries in int16, every H, E and F of
    the plain Gotoh matrices (minus infinity aside) is inside INT16_SPAN. Either the gap
    extension or the match score is among the largest that fits_int16 accepts, where the
    all-gap paths (letters that never match) or the all-match paths come closest."""
    code = MODE_NAMES.index(mode)
    if gap_edge:
        match = data.draw(st.integers(1, 1000), label="match")
        accepted = [g for g in range(1001) if fits_int16(code, go, g, match, clip, m, n)]
        ge = data.draw(st.sampled_from(accepted[-3:] or [0]), label="ge")
    else:
        ge = data.draw(st.integers(0, 1000), label="ge")
        accepted = [x for x in range(1, 1001) if fits_int16(code, go, ge, x, clip, m, n)]
        match = data.draw(st.sampled_from(accepted[-3:] or [1]), label="match")
    if not fits_int16(code, go, ge, match, clip, m, n):
        return
    q_letters, t_letters = data.draw(st.sampled_from([("ACGTN", "ACGTN"), ("AC", "GT"),
                                                      ("A", "A")]))
    q = data.draw(st.text(q_letters, min_size=m, max_size=m), label="q")
    t = data.draw(st.text(t_letters, min_size=n, max_size=n), label="t")
    _assert_in_int16_span(q, t, dna_scorer(match, mismatch), go, ge, mode, clip)


@pytest.mark.parametrize("mode", MODES)
def test_int16_bound_at_its_extremes(mode):
    """The worst cases of fits_int16 by construction: letters that never match under the
    largest mismatch (all-gap paths) at the largest accepted gap extension, and equal
    letters with the largest clip at the largest accepted match score."""
    code = MODE_NAMES.index(mode)
    for m, n, go in itertools.product((1, 7, 40), (1, 7, 40), (0, 500, 1000)):
        ge = max([g for g in range(1001) if fits_int16(code, go, g, 1, 0, m, n)], default=None)
        match = max([x for x in range(1, 1001) if fits_int16(code, go, 1, x, 1000, m, n)],
                    default=None)
        cases = [("A" * m, "C" * n, dna_scorer(1, 1000), ge, 0)] if ge is not None else []
        if match is not None:
            cases.append(("A" * m, "A" * n, dna_scorer(match, 1000), 1, 1000))
        for q, t, sub, gap_extend, clip in cases:
            _assert_in_int16_span(q, t, sub, go, gap_extend, mode, clip)
