"""The search's score kernel (kernels/search_scores.py) against the pair engine, on lengths
around its strip size and past the engine's fast path; on the GPU (simulator) against the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_CHECKS, under_simulator
from readalign.kernels.search_scores import STRIP

import readalign
from readalign.search import scan
from readalign.search.api import default_scoring, load_database, load_queries

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _proteins(rng, lengths) -> list[str]:
    return ["".join(rng.choice(list(AMINO), int(n))) for n in lengths]


@pytest.mark.parametrize("scoring", [default_scoring(),
                                     readalign.Scoring(matrix="PAM250", gap_open=17, gap_extend=1),
                                     readalign.Scoring(matrix="BLOSUM80", gap_open=25, gap_extend=2)])
def test_search_kernel_equals_the_engine(monkeypatch, scoring):
    rng = np.random.default_rng(21)
    qlens = [1, STRIP - 1, STRIP, STRIP + 1, 3 * STRIP, 200, 1100]
    queries = load_queries(_proteins(rng, qlens))
    seqs = _proteins(rng, rng.integers(1, 400, 150)) + _proteins(rng, [1030, 1500])
    seqs[7] = "".join(reversed(seqs[7]))
    db = load_database(seqs)
    every = len(db)
    monkeypatch.setattr(scan, "KERNEL", "engine")
    want = scan.score_pass(queries, db, scoring, every, "cpu", None)
    monkeypatch.setattr(scan, "KERNEL", "search")
    got = scan.score_pass(queries, db, scoring, every, "cpu", None)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.records, b.records)


@pytest.mark.slow
def test_search_kernel_under_simulator():
    """Tiny queries and database: the GPU's scores and whole report == the CPU's."""
    out = under_simulator(str(GPU_CHECKS / "search_check.py"), "2", "40", "20", "--report")
    assert "scores identical on CPU and GPU" in out
