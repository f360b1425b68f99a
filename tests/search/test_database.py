"""The packed database: makedb's file read back memory-mapped, record for record; FASTA read
as BLAST reads it (X for unknown letters); bad files refused in one line."""

from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest

from readalign.dbsearch.database import (
    HEADER_ROOM,
    MAGIC,
    Database,
    is_database,
    open_database,
    write_database,
)
from readalign.dbsearch.sequences import MAX_QUERY_LENGTH, read_proteins
from readalign.engine.matrices import ALPHABET
from readalign.errors import InputError

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def _records(rng: np.random.Generator, count: int) -> list[tuple[str, str]]:
    return [(f"sp|P{i:05d}|PROT_{i}", "".join(rng.choice(list(AMINO), int(rng.integers(1, 300)))))
            for i in range(count)]


def _fasta(records: list[tuple[str, str]], width: int = 60) -> str:
    out = []
    for name, seq in records:
        out.append(f">{name} some description\n")
        out.extend(seq[i:i + width] + "\n" for i in range(0, len(seq), width))
    return "".join(out)


def _text(db: Database, record: int) -> str:
    packed = db.records(np.array([record]))
    return "".join(ALPHABET[c] for c in packed.data[:packed.lengths[0]])


@pytest.mark.parametrize("compress", [False, True])
def test_makedb_round_trip(tmp_path, compress):
    records = _records(np.random.default_rng(1), 300)
    text = _fasta(records).encode()
    src = tmp_path / ("db.fa.gz" if compress else "db.fa")
    src.write_bytes(gzip.compress(text) if compress else text)
    built = Database.of(read_proteins(str(src)))
    write_database(built, str(tmp_path / "db.radb"))
    assert is_database(str(tmp_path / "db.radb")) and not is_database(str(src))
    db = open_database(str(tmp_path / "db.radb"))
    assert isinstance(db.codes, np.memmap)
    assert len(db) == 300 and db.residues == sum(len(s) for _, s in records)
    for i, (name, seq) in enumerate(records):
        assert db.names[i] == name.split()[0]
        assert _text(db, i) == seq
    lengths = np.diff(db.offsets)
    assert np.all(np.diff(lengths) >= 0)  # length order
    same = lengths[:-1] == lengths[1:]
    assert np.all(db.index[:-1][same] < db.index[1:][same])  # ties in file order
    assert sorted(db.index.tolist()) == list(range(300))


def test_chunks_cover_the_database_once(tmp_path):
    db = Database.of(read_proteins(_write(tmp_path, _fasta(_records(np.random.default_rng(2), 200)))))
    for budget in (1, 299, 1000, 10**9):
        bounds = db.chunk_bounds(budget)
        assert bounds[0][0] == 0 and bounds[-1][1] == len(db)
        assert all(a[1] == b[0] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
        for lo, hi in bounds:
            assert hi - lo == 1 or db.offsets[hi] - db.offsets[lo] <= budget
            chunk = db.chunk(lo, hi)
            assert chunk.offsets[0] == 0
            np.testing.assert_array_equal(chunk.data[:-1], db.codes[db.offsets[lo]:db.offsets[hi]])


def _write(tmp_path, text: str, name: str = "x.fa") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_letters_outside_the_matrix_are_read_as_x_and_counted(tmp_path, caplog):
    caplog.set_level("INFO", logger="readalign")
    p = read_proteins(_write(tmp_path, ">a\nMKUOJ-1x\n>b\nacde\n"))
    assert "".join(ALPHABET[c] for c in p.sequence(0)) == "MKXXXXXX"
    assert "".join(ALPHABET[c] for c in p.sequence(1)) == "ACDE"
    assert p.replaced == 5
    said = [r.getMessage() for r in caplog.records if "read as X" in r.getMessage()]
    assert said == [f"x.fa: 5 residue(s) outside {ALPHABET} read as X (as BLAST reads them)"]


@pytest.mark.parametrize(("text", "message"), [
    (">a\nMK\n>b\n>c\nMK\n", r"^x\.fa: record 2 \(b\): empty sequence$"),
    (">a\nMK\n>b\nMK\n>a\nMK\n", r"^x\.fa: record 3 \(a\): repeats the name of record 1$"),
    ("MKV\n", r"^x\.fa: line 1: .*"),
])
def test_bad_records_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_proteins(_write(tmp_path, text))


def test_a_query_past_the_limit_is_refused(tmp_path):
    path = _write(tmp_path, ">long\n" + "A" * (MAX_QUERY_LENGTH + 1) + "\n")
    with pytest.raises(InputError, match=r"record 1 \(long\): 65,537 residues; a query may "
                       r"have at most 65,536"):
        read_proteins(path, MAX_QUERY_LENGTH)
    assert len(read_proteins(path)) == 1  # a database sequence may be as long


def _radb(tmp_path) -> str:
    db = Database.of(read_proteins(_write(tmp_path, _fasta(_records(np.random.default_rng(3), 20)))))
    out = str(tmp_path / "db.radb")
    write_database(db, out)
    return out


def test_a_truncated_database_is_refused(tmp_path):
    path = _radb(tmp_path)
    with open(path, "r+b") as fh:
        fh.truncate(HEADER_ROOM + 100)
    with pytest.raises(InputError, match=r"^db\.radb: truncated \(section .* ends past the "
                       r"file's end\)$"):
        open_database(path)


def test_another_format_version_is_refused(tmp_path):
    path = _radb(tmp_path)
    with open(path, "r+b") as fh:
        fh.seek(len(MAGIC))
        fh.write(struct.pack("<I", 7))
    with pytest.raises(InputError, match=r"^db\.radb: database format version 7; this "
                       r"readalign reads version 1 \(run readalign makedb again\)$"):
        open_database(path)


def test_the_header_states_the_layout(tmp_path):
    path = _radb(tmp_path)
    with open(path, "rb") as fh:
        raw = fh.read()
    size = struct.unpack("<I", raw[12:16])[0]
    head = json.loads(raw[16:16 + size])
    assert head["version"] == 1 and head["alphabet"] == ALPHABET and head["sequences"] == 20
    assert all(start % 64 == 0 for start, _, _ in head["sections"].values())
