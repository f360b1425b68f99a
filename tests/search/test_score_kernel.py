"""The search's score kernel (kernels/search_scores.py) against the pair engine, on lengths
around its strip size and past the engine's fast path; on the GPU (simulator) against the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_CHECKS, under_simulator
from readalign.kernels.search_scores import STRIP

import readalign
from readalign.dbsearch import scan
from readalign.dbsearch.api import default_scoring, load_database, load_queries

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


def _packed_cpu():
    from numba import njit
    from readalign.kernels import lanes16
    from readalign.kernels.search_scores import build_packed

    device = njit(cache=False)
    return build_packed(device, lanes16.signed_ops(device), device(lanes16.join_halves)).pair_score


@pytest.mark.parametrize("scoring", [default_scoring(),
                                     readalign.Scoring(matrix="BLOSUM45", gap_open=19, gap_extend=1)])
def test_packed_pairs_equal_the_32_bit_kernel(scoring):
    """Two sequences a lane in 16-bit halves (the GPU's packed pass, built here with plain
    integer halves): each half equals the 32-bit kernel, unequal lengths and a lone lane too."""
    from readalign.kernels.search_scores import (
        extended_table,
        fits16,
        packed_table,
        padded_query,
        scores_cpu,
    )

    pair = _packed_cpu()
    rng = np.random.default_rng(5)
    size = len(scoring.alphabet)
    table = extended_table(scoring.flat(), size)
    goe, ge = scoring.gap_open + scoring.gap_extend, scoring.gap_extend
    word = lambda v: np.uint32((v & 0xFFFF) | (v & 0xFFFF) << 16)  # noqa: E731
    seqs = _proteins(rng, [0, 1, 5, 17, 40, 120, 300, 301, 2000])
    codes = [load_queries([s]).sequence(0) if s else np.zeros(0, np.uint8) for s in seqs]
    data = np.concatenate([*codes, np.zeros(1, np.uint8)])
    offsets = np.zeros(len(codes) + 1, np.int64)
    np.cumsum([c.shape[0] for c in codes], out=offsets[1:])
    for m in (1, STRIP, STRIP + 3, 90, 2500):
        query = padded_query(load_queries(_proteins(rng, [m])).sequence(0), size)
        want = np.empty(len(codes), np.int32)
        scores_cpu(table, size + 1, goe, ge, query, data, offsets,
                   np.array([0, len(codes)], np.int64), want)
        for a in range(len(codes)):
            for b in (a, (a + 3) % len(codes)):
                n0, n1 = offsets[a + 1] - offsets[a], offsets[b + 1] - offsets[b]
                longest = max(n0, n1) + 1
                hb, fb = np.zeros(longest, np.uint32), np.zeros(longest, np.uint32)
                got = pair(packed_table(table), size + 1, word(-goe), word(-ge), query, 0,
                           query.shape[0], data, offsets[a], n0, offsets[b], n1, hb, fb, 0, 1)
                if fits16(scoring.best_substitution, m, n0):
                    assert int(got & 0xFFFF) == want[a], (m, a, b)
                if fits16(scoring.best_substitution, m, n1):
                    assert int(got >> 16) == want[b], (m, a, b)
