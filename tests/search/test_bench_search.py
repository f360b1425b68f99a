"""benchmarks/search.py's synthetic database: Swiss-Prot's composition and mean length, and
planted homologs that a small search on the CPU reports at their exact scores."""

from __future__ import annotations

import numpy as np
from conftest import require_module

import readalign
from benchmarks.search import (
    COMPOSITION,
    MEAN_LENGTH,
    check_evalues,
    check_planted,
    exact_scores,
    lengths,
    residue_codes,
    synthetic,
    synthetic_queries,
    texts,
)
from readalign.engine.matrices import ALPHABET


def test_composition_and_lengths_follow_swissprot():
    rng = np.random.default_rng(0)
    codes = residue_codes(rng, 400_000)
    share = np.bincount(codes, minlength=len(ALPHABET)) / codes.shape[0] * 100
    for letter, percent in COMPOSITION.items():
        assert abs(share[ALPHABET.index(letter)] - percent) < 0.25, letter
    n = lengths(rng, 200_000)
    assert abs(n.mean() - MEAN_LENGTH) / MEAN_LENGTH < 0.02 and n.min() >= 2


def test_planted_homologs_are_found_at_their_exact_scores():
    require_module("parasail", "test-extra")
    rng = np.random.default_rng(3)
    queries = synthetic_queries(rng, 2)
    db, planted = synthetic(rng, 400, queries)
    hits = readalign.search(queries, db, backend="cpu")
    exact = exact_scores(texts(queries), texts(db), planted)
    report = check_planted(hits, planted, exact)
    assert report["wrong"] == [] and report["reported"] == len(planted) == 6
    assert check_evalues(hits, queries, db, "BLOSUM62", 11, 1) < 1e-9
    # a wrong score is caught
    qi, record, _ = planted[0]
    assert check_planted(hits, planted, {**exact, (qi, record): exact[(qi, record)] + 1})["wrong"]
