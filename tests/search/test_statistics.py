"""Karlin–Altschul statistics: BLAST's parameters, bit scores, E-values and effective lengths
against values worked out by hand from the published formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from readalign.dbsearch.statistics import (
    PARAMETERS,
    bit_scores,
    evalues,
    length_adjustment,
    parameters,
    search_space,
)
from readalign.errors import InputError


def test_blast_defaults_have_their_published_parameters():
    p = parameters("BLOSUM62", 11, 1)
    assert (p.lam, p.k, p.h, p.alpha, p.beta) == (0.267, 0.041, 0.14, 1.9, -30)
    assert parameters("blosum80", 10, 1).lam == 0.299
    assert parameters("BLOSUM45", 14, 2).k == 0.032
    assert parameters("BLOSUM50", 13, 2).lam == 0.193
    assert parameters("PAM250", 14, 2).k == 0.024
    assert len(PARAMETERS) == 13 + 15 + 11 + 9 + 15


def test_bit_score_by_hand():
    # (0.267 * 100 - ln 0.041) / ln 2 = (26.7 + 3.194183) / 0.693147
    p = parameters("BLOSUM62", 11, 1)
    assert bit_scores(p, np.array([100]))[0] == pytest.approx(43.12819, abs=1e-4)
    assert bit_scores(p, np.array([0]))[0] == pytest.approx(4.60823, abs=1e-4)


def test_evalue_by_hand():
    # m = 300, n = 1,000,000 residues in N = 3,000 sequences; l = 81 (below);
    # m' = 219, n' = 1,000,000 - 3,000 * 81 = 757,000
    p = parameters("BLOSUM62", 11, 1)
    space = search_space(p, 300, 1_000_000, 3_000)
    assert (space.length_adjustment, space.effective_query, space.effective_db) == (81, 219, 757_000)
    want = 0.041 * 219 * 757_000 * math.exp(-0.267 * 100)
    assert evalues(p, np.array([100]), space)[0] == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(1.7238e-5, rel=1e-3)


def _fixed_point_floor(p, m: int, n: int, count: int) -> int:
    """The largest whole l with K(m - l)(n - N l) >= max(m, n) and
    (alpha/lambda) ln(K (m - l)(n - N l)) + beta >= l: scanned, no iteration."""
    best = 0
    for ell in range(0, m):
        space = p.k * (m - ell) * (n - count * ell)
        if space < max(m, n):
            break
        if p.alpha / p.lam * math.log(space) + p.beta >= ell:
            best = ell
    return best


@pytest.mark.parametrize(("matrix", "go", "ge"), [("BLOSUM62", 11, 1), ("BLOSUM45", 14, 2),
                                                  ("BLOSUM80", 10, 1), ("PAM250", 14, 2)])
@pytest.mark.parametrize(("m", "n", "count"), [(300, 1_000_000, 3_000), (144, 205_000_000, 570_000),
                                                (5478, 205_000_000, 570_000), (50, 5_000, 20),
                                                (1000, 20_000, 40)])
def test_length_adjustment_is_the_fixed_points_floor(matrix, go, ge, m, n, count):
    p = parameters(matrix, go, ge)
    assert length_adjustment(p, m, n, count) == _fixed_point_floor(p, m, n, count)


def test_a_search_space_too_small_for_one_alignment_has_no_adjustment():
    p = parameters("BLOSUM62", 11, 1)
    assert length_adjustment(p, 10, 100, 2) == 0  # K * 10 * 100 < 100


def test_a_pair_without_statistics_names_the_pairs_there_are():
    with pytest.raises(InputError, match=r"BLOSUM62 with gap open/extend 5/5; BLOSUM62 has "
                       r"11/2, 10/2, .*11/1, 10/1, 9/1$"):
        parameters("BLOSUM62", 5, 5)
    with pytest.raises(InputError, match="no E-value statistics for matrix 'PAM30'"):
        parameters("PAM30", 9, 1)
