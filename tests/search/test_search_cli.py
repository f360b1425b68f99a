"""``readalign search`` and ``readalign makedb`` end to end: real files in, the report read back
and checked against the API; bad input refused in one line, nothing left behind."""

from __future__ import annotations

import gzip
import logging
import os
import stat

import numpy as np
import pytest

import readalign
from readalign.cli import build_parser, main
from readalign.dbsearch.columns import BLAST_COLUMNS
from readalign.dbsearch.tabular import bitscore_text, evalue_text

AMINO = "ACDEFGHIKLMNPQRSTVWY"


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(4)
    queries = ["".join(rng.choice(list(AMINO), n)) for n in (60, 144, 90)]
    db = ["".join(rng.choice(list(AMINO), int(rng.integers(20, 300)))) for _ in range(80)]
    db[5], db[50] = queries[0][5:55], "MM" + queries[1] + "MM"
    (tmp_path / "q.fa").write_text("".join(f">query{i} desc\n{s}\n" for i, s in enumerate(queries)))
    (tmp_path / "db.fa.gz").write_bytes(gzip.compress(
        "".join(f">sp|S{i}|X\n{s[:50]}\n{s[50:]}\n" for i, s in enumerate(db)).encode()))
    return tmp_path, queries, db


def _rows(path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()]


def test_makedb_then_search_writes_blast_tabular(files):
    folder, queries, db = files
    assert main(["makedb", str(folder / "db.fa.gz"), "-o", str(folder / "db.radb"), "-q"]) == 0
    out = folder / "hits.tsv"
    assert main(["search", "-q", str(folder / "q.fa"), "-d", str(folder / "db.radb"),
                 "-o", str(out), "--backend", "cpu", "--quiet"]) == 0
    rows = _rows(out)
    hits = readalign.search(queries, db, backend="cpu")
    assert len(rows) == len(hits) and all(len(r) == 12 for r in rows)
    for row, i in zip(rows, range(len(hits)), strict=True):
        assert row[0] == f"query{hits.query[i]}" and row[1] == f"sp|S{hits.subject[i]}|X"
        assert row[2] == f"{hits.pident[i]:.3f}"
        assert [int(x) for x in row[3:10]] == [hits[c][i] for c in BLAST_COLUMNS[3:10]]
        assert row[10] == evalue_text(hits.evalue[i]) and row[11] == bitscore_text(hits.bitscore[i])
    first = rows[0]
    assert first[:2] == ["query0", "sp|S5|X"] and first[6:10] == ["6", "55", "1", "50"]
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_fasta_database_outfmt_and_stdout(files, capfd):
    folder, _, _ = files
    assert main(["search", "-q", str(folder / "q.fa"), "-d", str(folder / "db.fa.gz"), "-o", "-",
                 "--backend", "cpu", "--quiet", "--outfmt", "6 qseqid sseqid score cigar",
                 "--max-hits", "2", "--evalue", "1e-5"]) == 0
    rows = [line.split("\t") for line in capfd.readouterr().out.splitlines()]
    assert [r[:2] for r in rows] == [["query0", "sp|S5|X"], ["query1", "sp|S50|X"]]
    assert rows[1][3] == "144="


def test_matrix_and_gaps_change_the_scores(files, capfd):
    folder, queries, db = files
    assert main(["search", "-q", str(folder / "q.fa"), "-d", str(folder / "db.fa.gz"), "-o", "-",
                 "--backend", "cpu", "--quiet", "--outfmt", "qseqid,score", "--matrix", "pam250",
                 "--gap-open", "14", "--gap-extend", "2", "--max-hits", "1"]) == 0
    got = [int(line.split("\t")[1]) for line in capfd.readouterr().out.splitlines()]
    want = readalign.search(queries, db, readalign.Scoring(matrix="PAM250", gap_open=14,
                                                           gap_extend=2), max_hits=1, backend="cpu")
    assert got == want.score.tolist()


@pytest.mark.parametrize(("extra", "message"), [
    (["--gap-open", "12", "--gap-extend", "2"], "error: no E-value statistics for BLOSUM62 with "
     "gap open/extend 12/2; BLOSUM62 has 11/2, 10/2"),
    (["--outfmt", "6 qseqid nope"], "error: --outfmt: unknown column 'nope'; columns: std, "),
    (["--max-hits", "0"], "error: --max-hits must be >= 1; got 0"),
    (["--evalue", "0"], "error: --evalue must be > 0; got 0.0"),
])
def test_bad_options_are_one_line_errors(files, caplog, extra, message):
    folder, _, _ = files
    caplog.set_level(logging.INFO, logger="readalign")
    out = folder / "hits.tsv"
    assert main(["search", "-q", str(folder / "q.fa"), "-d", str(folder / "db.fa.gz"),
                 "-o", str(out), "--backend", "cpu", *extra]) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith(message)
    assert not out.exists()


@pytest.mark.parametrize(("text", "message"), [
    (">a\nMKV\n>a\nMKV\n", "error: bad.fa: record 2 (a): repeats the name of record 1"),
    (">a\n>b\nMKV\n", "error: bad.fa: record 1 (a): empty sequence"),
    ("", "error: bad.fa: empty file"),
])
def test_bad_queries_leave_an_earlier_report(files, caplog, text, message):
    folder, _, _ = files
    out = folder / "hits.tsv"
    out.write_text("earlier\n")
    (folder / "bad.fa").write_text(text)
    caplog.set_level(logging.INFO, logger="readalign")
    assert main(["search", "-q", str(folder / "bad.fa"), "-d", str(folder / "db.fa.gz"),
                 "-o", str(out), "--backend", "cpu"]) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [message]
    assert out.read_text() == "earlier\n"
    assert sorted(p.name for p in folder.iterdir()) == ["bad.fa", "db.fa.gz", "hits.tsv", "q.fa"]


def test_outputs_naming_an_input_are_refused(files, caplog):
    folder, _, _ = files
    before = (folder / "q.fa").read_bytes()
    assert main(["search", "-q", str(folder / "q.fa"), "-d", str(folder / "db.fa.gz"),
                 "-o", str(folder / "q.fa")]) == 1
    assert main(["makedb", str(folder / "q.fa"), "-o", str(folder / "q.fa")]) == 1
    assert (folder / "q.fa").read_bytes() == before


def test_search_takes_q_for_its_queries_and_help_states_the_defaults():
    parser = build_parser()
    args = parser.parse_args(["search", "-q", "a.fa", "-d", "b.fa", "-o", "-", "--quiet"])
    assert (args.query, args.quiet, args.matrix, args.gap_open, args.gap_extend,
            args.max_hits, args.evalue) == ("a.fa", True, "BLOSUM62", 11, 1, 10, 10.0)
    assert parser.parse_args(["distance", "-q", "words.txt", "-o", "x"]).quiet
