"""readalign.search: scores equal parasail's striped Smith–Waterman, alignments equal the plain
Gotoh oracle's, the best hits ranked by score then database order, chunking invisible."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import require_module
from hypothesis import given, settings
from hypothesis import strategies as st

import readalign
from readalign.dbsearch import scan
from readalign.dbsearch.api import default_scoring, load_database, load_queries
from readalign.engine.matrices import ALPHABET, MATRICES
from readalign.errors import InputError
from tests.support.scored_oracle import align as oracle

AMINO = "ACDEFGHIKLMNPQRSTVWY"
BLOSUM62 = MATRICES["BLOSUM62"]


def _blosum62(a: str, b: str) -> int:
    return BLOSUM62[ALPHABET.index(a)][ALPHABET.index(b)]


def _random(rng: np.random.Generator, count: int, lo: int, hi: int) -> list[str]:
    return ["".join(rng.choice(list(AMINO), int(rng.integers(lo, hi)))) for _ in range(count)]


def _mutated(rng: np.random.Generator, seq: str, rate: float) -> str:
    out = []
    for c in seq:
        r = rng.random()
        if r < rate / 2:
            out.append(str(rng.choice(list(AMINO))))
        elif r < rate * 0.75:
            continue  # a deletion
        elif r < rate:
            out.append(c + str(rng.choice(list(AMINO))))  # an insertion
        else:
            out.append(c)
    return "".join(out)


def _database(seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    queries = _random(rng, 3, 40, 250)
    db = _random(rng, 120, 1, 400)
    for i, q in enumerate(queries):  # homologs among random sequences
        db[10 + 30 * i] = _mutated(rng, q, 0.2)
        db[11 + 30 * i] = "".join(_random(rng, 1, 5, 40)) + _mutated(rng, q, 0.4)
    return queries, db


def _every_hit(queries, db, **kw) -> readalign.SearchHits:
    return readalign.search(queries, db, max_hits=len(db), evalue=1e300, backend="cpu", **kw)


def test_scores_equal_parasail_sw_striped():
    parasail = require_module("parasail", "test-extra")
    queries, db = _database(7)
    hits = _every_hit(queries, db)
    got = {(q, s): v for q, s, v in zip(hits.query.tolist(), hits.subject.tolist(),
                                        hits.score.tolist(), strict=True)}
    for qi, q in enumerate(queries):
        for si, s in enumerate(db):
            want = parasail.sw_striped_32(q, s, 12, 1, parasail.blosum62).score
            assert got.get((qi, si), 0) == want, (qi, si)


def test_hits_rank_by_score_then_database_order():
    queries, db = _database(8)
    db += db[:40]  # equal scores: the first copy ranks first
    hits = _every_hit(queries, db)
    for qi in range(len(queries)):
        rows = hits.query == qi
        key = list(zip((-hits.score[rows]).tolist(), hits.subject[rows].tolist(), strict=True))
        assert key == sorted(key)
        top = readalign.search(queries[qi:qi + 1], db, max_hits=5, backend="cpu", evalue=1e300)
        np.testing.assert_array_equal(top.subject, hits.subject[rows][:5])


def test_chunks_and_blocks_do_not_change_the_report(monkeypatch):
    queries, db = _database(9)
    whole = _every_hit(queries, db)
    monkeypatch.setattr(scan, "CHUNK_RESIDUES", 997)
    monkeypatch.setattr(scan, "PAIR_BYTES", 2000)
    monkeypatch.setattr(scan, "SCORE_BYTES", 1)  # one query at a time
    cut = readalign.search(queries, db, max_hits=len(db), evalue=1e300, backend="cpu")
    for name in readalign.SearchHits.columns:
        np.testing.assert_array_equal(cut[name], whole[name])


def _as_m(cigar: str) -> str:
    """``=``/``X`` runs merged into ``M`` runs, as the oracle writes them."""
    runs = [(int(n), "M" if op in "=X" else op) for n, op in re.findall(r"(\d+)([=XID])", cigar)]
    merged: list[list] = []
    for n, op in runs:
        if merged and merged[-1][1] == op:
            merged[-1][0] += n
        else:
            merged.append([n, op])
    return "".join(f"{n}{op}" for n, op in merged)


@settings(max_examples=40)
@given(query=st.text(alphabet=AMINO, min_size=1, max_size=40),
       db=st.lists(st.text(alphabet=AMINO, min_size=1, max_size=40), min_size=1, max_size=6))
def test_short_proteins_equal_the_gotoh_oracle(query, db):
    hits = _every_hit([query], db)
    want = {i: oracle(query, s, _blosum62, 11, 1, "local") for i, s in enumerate(db)}
    assert sorted(hits.subject.tolist()) == sorted(i for i, a in want.items() if a.score > 0)
    for row in range(len(hits)):
        a = want[int(hits.subject[row])]
        assert hits.score[row] == a.score
        assert (hits.qstart[row], hits.qend[row]) == (a.query_start + 1, a.query_end)
        assert (hits.sstart[row], hits.send[row]) == (a.ref_start + 1, a.ref_end)
        assert _as_m(hits.cigar[row]) == re.sub(r"\d+S", "", a.cigar)
        gaps = sum(int(n) for n, op in re.findall(r"(\d+)([ID])", hits.cigar[row]))
        assert hits.mismatch[row] + gaps == a.nm
        identities = hits.length[row] - hits.mismatch[row] - gaps
        assert hits.pident[row] == pytest.approx(100 * identities / hits.length[row])


def test_columns_of_a_gapped_alignment():
    query = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQ"
    subject = query[:30] + "WWW" + query[30:40] + "C" + query[41:]
    hits = readalign.search([query], ["PPPP", subject], backend="cpu")
    assert hits["sseqid"].tolist() == ["1"]
    assert len(query) == 66 and hits["cigar"].tolist() == ["30=3D10=1X25="]
    assert (hits.length[0], hits.mismatch[0], hits.gapopen[0]) == (69, 1, 1)
    assert hits.pident[0] == pytest.approx(100 * 65 / 69)
    assert (hits.qstart[0], hits.qend[0], hits.sstart[0], hits.send[0]) == (1, 66, 1, 69)


def test_evalue_cut_off_and_max_hits():
    queries, db = _database(10)
    every = _every_hit(queries, db)
    cut = readalign.search(queries, db, max_hits=len(db), evalue=1e-3, backend="cpu")
    np.testing.assert_array_equal(cut.subject, every.subject[every.evalue <= 1e-3])
    assert np.all(cut.evalue <= 1e-3) and len(cut) >= len(queries)
    few = readalign.search(queries, db, max_hits=1, evalue=1e300, backend="cpu")
    assert few.query.tolist() == [0, 1, 2]


def test_inputs_as_files_lists_and_objects(tmp_path):
    queries, db = _database(11)
    (tmp_path / "q.fa").write_text("".join(f">q{i}\n{s}\n" for i, s in enumerate(queries)))
    (tmp_path / "d.fa").write_text("".join(f">d{i}\n{s}\n" for i, s in enumerate(db)))
    from_files = readalign.search(str(tmp_path / "q.fa"), tmp_path / "d.fa", backend="cpu")
    from_objects = readalign.search(load_queries(queries), load_database(db), backend="cpu")
    np.testing.assert_array_equal(from_files.score, from_objects.score)
    assert from_files.sseqid.tolist() == [f"d{i}" for i in from_objects.subject.tolist()]


def test_bad_arguments():
    with pytest.raises(InputError, match="no E-value statistics for BLOSUM62 with gap "
                       "open/extend 12/2"):
        readalign.search(["MK"], ["MK"], readalign.Scoring(matrix="BLOSUM62", gap_open=12,
                                                           gap_extend=2), backend="cpu")
    with pytest.raises(InputError, match="search needs a named protein matrix"):
        readalign.search(["MK"], ["MK"], readalign.Scoring(), backend="cpu")
    with pytest.raises(ValueError, match="max_hits must be >= 1"):
        readalign.search(["MK"], ["MK"], max_hits=0)
    with pytest.raises(ValueError, match="evalue must be > 0"):
        readalign.search(["MK"], ["MK"], evalue=0)
    with pytest.raises(InputError, match=r"^queries: record 2 \(1\): empty sequence$"):
        readalign.search(["MK", ""], ["MK"], backend="cpu")
    with pytest.raises(InputError, match="the database holds no sequences"):
        readalign.search(["MK"], [], backend="cpu")
    assert default_scoring() == readalign.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
