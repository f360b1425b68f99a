"""The parallel FASTQ fast path and the fused PAF/TSV pass agree with the serial/stepwise checks."""

from __future__ import annotations

import numpy as np
import pytest

from readalign.errors import InputError
from readalign.io._fastq_scan import _BLANK, _OK, scan_fast, scan_serial
from readalign.io._text import line_ends
from readalign.io.candidates import iter_candidates
from readalign.io.reads import _scan_chunk, iter_reads
from readalign.io.reference import Reference


def random_fastq(rng: np.random.Generator, n: int, eol: bytes) -> bytes:
    out = []
    for i in range(n):
        k = int(rng.integers(1, 60))
        seq = bytes(rng.choice(list(b"ACGTN"), k).astype(np.uint8))
        qual = bytes(rng.integers(33, 127, k).astype(np.uint8))
        out.append(b"@r%d c%d%s%s%s+%s%s%s" % (i, k, eol, seq, eol, eol, qual, eol))
    return b"".join(out)


def layouts(data: bytes, cap: int, final: bool = True):
    arr = np.frombuffer(data, np.uint8)
    ends = line_ends(arr, final)
    fast = np.empty((cap, 7), np.int64)
    slow = np.empty((cap, 7), np.int64)
    full = min(cap, ends.shape[0] // 4)
    got, code, *_ = scan_fast(arr, ends, 0, full, fast)
    res = scan_serial(arr, ends, 0, final, cap, slow)
    return (got, code, fast[:got]), (res, slow[:res[0]])


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_scan_matches_serial(eol, seed):
    data = random_fastq(np.random.default_rng(seed), 3000, eol)
    (got, code, fast), (res, slow) = layouts(data, 3000)
    assert code == _OK and got == 3000 == res[0] and res[2] == _OK
    assert np.array_equal(fast, slow)


def test_fast_scan_stops_at_blank_header():
    data = random_fastq(np.random.default_rng(4), 10, b"\n")
    data = data.replace(b"@r5 ", b"\n@r5 ")
    (got, code, _), (res, slow) = layouts(data, 10)
    assert (got, code) == (5, _BLANK)
    assert res[0] == 10 and res[2] == _OK


def batches(data: bytes, tmp_path, batch: int):
    path = tmp_path / "x.fq"
    path.write_bytes(data)
    out = []
    for b in iter_reads(str(path), batch):
        out.append((b.names.tobytes(), b.name_off.tolist(), b.seq.tobytes(), b.seq_off.tolist(),
                    b.qual.tobytes(), b.first))
    return out


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_blank_lines_give_same_batches(tmp_path, eol):
    data = random_fastq(np.random.default_rng(5), 500, eol)
    spaced = data.replace(eol + b"@r1", eol + eol + b"@r1") + eol + eol
    assert batches(data, tmp_path, 77) == batches(spaced, tmp_path, 77)


@pytest.mark.parametrize("bad, message", [
    (b"r7 c", r"line 29: expected a FASTQ header starting with '@', got 'r7 c"),
    (b"@", r"line 29: empty read name"),
    (b"@" + b"n" * 300, r"line 29: read name of 300 characters"),
])
def test_fast_scan_header_errors(tmp_path, bad, message):
    data = random_fastq(np.random.default_rng(6), 20, b"\n")
    lines = data.split(b"\n")
    lines[28] = bad
    path = tmp_path / "x.fq"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError, match=message):
        list(iter_reads(str(path), 1000))


def test_first_bad_record_wins(tmp_path):
    data = random_fastq(np.random.default_rng(7), 20, b"\n").split(b"\n")
    data[4 * 9 + 3] = b"\x01" * len(data[4 * 9 + 1])  # bad QUAL in record 9
    data[4 * 12 + 2] = b"x"  # missing '+' in record 12
    path = tmp_path / "x.fq"
    path.write_bytes(b"\n".join(data))
    with pytest.raises(InputError, match=r"line 40: invalid quality byte 0x01 at position 1"):
        list(iter_reads(str(path), 1000))


def test_scan_chunk_partial_record_not_final():
    data = random_fastq(np.random.default_rng(8), 3, b"\n") + b"@r3\nACGT\n"
    arr = np.frombuffer(data, np.uint8)
    lay, nxt = _scan_chunk(arr, line_ends(arr, False), 0, False, 10, "x.fq", 1)
    assert lay.shape[0] == 3 and nxt == 12


@pytest.fixture()
def ref(tmp_path):
    fa = tmp_path / "ref.fa"
    fa.write_text(">chr1\n" + "ACGT" * 25 + "\n>chr2\n" + "A" * 70 + "\n")
    return Reference(str(fa))


GOOD = "r{i}\t20\t2\t18\t+\tchr1\t100\t10\t26\t16\t16\t60"


@pytest.mark.parametrize("bad, message", [
    ("r\t20\t2", r"line 4: expected at least 9"),
    ("\t20\t2\t18\t+\tchr1\t100\t10\t26", r"line 4: empty read name"),
    ("r\t20\t2\t18\t+\tchrZ\t100\t10\t26", r"line 4: unknown contig 'chrZ'"),
    ("r\t20\t2\t18\t.\tchr1\t100\t10\t26", r"line 4: strand must be '\+' or '-', got '.'"),
    ("r\t20\t2\t1x\t+\tchr1\t100\t10\t26", r"line 4: field 4 is not a non-negative integer: '1x'"),
    ("r\t20\t2\t18\t+\tchr1\t90\t10\t26", r"line 4: target length 90 differs"),
    ("r\t20\t2\t28\t+\tchr1\t100\t10\t26", r"line 4: query start/end outside"),
    ("r\t20\t2\t18\t+\tchr1\t100\t10\t126", r"line 4: window 10-126 is outside contig 'chr1'"),
])
def test_fused_pass_errors(ref, tmp_path, bad, message):
    lines = [GOOD.format(i=i) for i in range(8)]
    lines[3] = bad
    lines[6] = "r\t20\t2\t18\t+\tchr1\t100\t10\t126"  # a later error of a lower kind
    paf = tmp_path / "c.paf"
    paf.write_text("\r\n".join(lines) + "\r\n")
    with pytest.raises(InputError, match=message):
        list(iter_candidates(str(paf), ref))


def test_earlier_check_kind_wins_in_a_block(ref, tmp_path):
    lines = [GOOD.format(i=i) for i in range(8)]
    lines[2] = "r\t20\t2\t18\t+\tchr1\t100\t10\t126"  # window error first ...
    lines[5] = "r\t20\t2\t18\t+\tchrZ\t100\t10\t26"  # ... but contig errors are checked first
    paf = tmp_path / "c.paf"
    paf.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"line 6: unknown contig 'chrZ'"):
        list(iter_candidates(str(paf), ref))


def test_fused_pass_keeps_lines_and_windows(ref, tmp_path):
    text = "read_name\tcontig\n#c\n\nq1\tchr2\t5\t9\t-\r\nq2\tchr1\t0\t100\t+\n"
    tsv = tmp_path / "c.tsv"
    tsv.write_text(text)
    (c,) = list(iter_candidates(str(tsv), ref))
    assert [c.name(i) for i in range(len(c))] == ["q1", "q2"]
    assert c.line.tolist() == [4, 5] and c.contig.tolist() == [1, 0]
    assert c.start.tolist() == [5, 0] and c.end.tolist() == [9, 100]
    assert c.strand.tolist() == [1, 0]
