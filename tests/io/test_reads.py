"""Readers of the align pipeline: FASTQ/FASTA/uBAM parsing, streaming and errors."""

from __future__ import annotations

import gzip

import pysam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.errors import InputError
from readalign.io.reads import iter_reads, reads_format


def read_all(path, batch_size=1000):
    out = []
    for b in iter_reads(str(path), batch_size):
        for i in range(len(b)):
            seq = bytes(b.seq[b.seq_off[i]:b.seq_off[i + 1]]).decode()
            qual = (bytes(b.qual[b.seq_off[i]:b.seq_off[i + 1]]).decode()
                    if b.qual is not None else None)
            out.append((b.name(i), seq, qual, b.first + i))
    return out


def fastq(records, eol="\n"):
    return "".join(f"@{n} comment{eol}{s}{eol}+{eol}{q}{eol}" for n, s, q in records)


def test_fastq_crlf_gzip_and_batches(tmp_path):
    recs = [(f"r{i}", "ACGTNacgtRY"[: 1 + i % 11], "I" * (1 + i % 11)) for i in range(50)]
    plain = tmp_path / "a.fq"
    plain.write_text(fastq(recs, "\r\n"))
    gz = tmp_path / "a.fq.gz"
    gz.write_bytes(gzip.compress(fastq(recs).encode()))
    for path in (plain, gz):
        got = read_all(path, batch_size=7)
        assert [(n, s, q) for n, s, q, _ in got] == recs
        assert [i for *_, i in got] == list(range(50))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text("ACGTNacgtMRWSYKV", min_size=1, max_size=40),
                          st.integers(1, 9)), min_size=1, max_size=30),
       st.sampled_from(["\n", "\r\n"]), st.integers(1, 12))
def test_fastq_round_trip(tmp_path_factory, items, eol, batch):
    recs = [(f"read{i}/{k}", s, chr(33 + (i * 7) % 90) * len(s)) for i, (s, k) in enumerate(items)]
    path = tmp_path_factory.mktemp("rt") / "x.fq"
    path.write_text(fastq(recs, eol))
    got = read_all(path, batch)
    assert [(n, s, q) for n, s, q, _ in got] == recs


def test_fasta_multiline_and_ubam(tmp_path):
    fa = tmp_path / "r.fa"
    fa.write_text(">a first\nACGT\nAC\r\n>b\nGGG\n")
    assert [(n, s, q) for n, s, q, _ in read_all(fa)] == [("a", "ACGTAC", None), ("b", "GGG", None)]
    ubam = tmp_path / "r.bam"
    header = pysam.AlignmentHeader.from_dict({"HD": {"VN": "1.6"}})
    with pysam.AlignmentFile(str(ubam), "wb", header=header) as fh:
        for name, seq in (("u1", "ACGTT"), ("u2", "GGA")):
            rec = pysam.AlignedSegment(header)
            rec.query_name, rec.query_sequence, rec.flag = name, seq, 4
            rec.query_qualities = pysam.qualitystring_to_array("I" * len(seq))
            fh.write(rec)
    assert [(n, s, q) for n, s, q, _ in read_all(ubam)] == [("u1", "ACGTT", "IIIII"),
                                                           ("u2", "GGA", "III")]


def test_reads_format_is_told_by_content_not_by_name(tmp_path):
    """What the workflow asks: the format iter_reads reads a file in, whatever its name."""
    recs = [("r1", "ACGT", "IIII")]
    files = {"fastq": ("reads.txt", fastq(recs).encode()),
             "fasta": ("reads.fq", b">r1\nACGT\n"),
             "sam": ("reads.dat", b"r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n"),
             "gzip fastq": ("reads.fa.gz", gzip.compress(fastq(recs).encode()))}
    for want, (name, data) in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert reads_format(str(path)) == want.split()[-1], name
        assert [n for n, *_ in read_all(path)] == ["r1"], name
    ubam = tmp_path / "reads.fq.gz"
    header = pysam.AlignmentHeader.from_dict({"HD": {"VN": "1.6"}})
    with pysam.AlignmentFile(str(ubam), "wb", header=header) as fh:
        rec = pysam.AlignedSegment(header)
        rec.query_name, rec.query_sequence, rec.flag = "u1", "ACGT", 4
        fh.write(rec)
    assert reads_format(str(ubam)) == "bam"
    (tmp_path / "empty.fq").write_bytes(b"")
    assert reads_format(str(tmp_path / "empty.fq")) is None
    (tmp_path / "bad.fq").write_text("hello\n")
    with pytest.raises(InputError, match="bad.fq: line 1: not FASTQ, FASTA, SAM or BAM"):
        reads_format(str(tmp_path / "bad.fq"))


def _sam(*records: str, header: str = "@HD\tVN:1.6\n") -> str:
    return header + "".join(r + "\n" for r in records)


def test_sam_text_with_and_without_a_header(tmp_path):
    """SAM text of unaligned reads: reverse-strand records turned back, secondary and
    supplementary ones skipped, QUAL '*' read as Q40, mates named /1 and /2 from flags
    0x40 and 0x80 (as samtools fastq names them)."""
    records = ("a\t4\t*\t0\t0\t*\t*\t0\t0\tACGTT\t!#%')",
               "b\t20\t*\t0\t0\t*\t*\t0\t0\tAACGG\tABCDE\tXX:i:1",
               "b\t2048\t*\t0\t0\t*\t*\t0\t0\tAAAAA\tIIIII",
               "c\t77\t*\t0\t0\t*\t*\t0\t0\tGGA\t*",
               "c\t141\t*\t0\t0\t*\t*\t0\t0\tTTC\t*",
               "d\t256\t*\t0\t0\t*\t*\t0\t0\t*\t*")
    want = [("a", "ACGTT", "!#%')"), ("b", "CCGTT", "EDCBA"), ("c/1", "GGA", "III"),
            ("c/2", "TTC", "III")]
    for header in ("@HD\tVN:1.6\n@RG\tID:x\n@PG\tID:p\n", "@CO\tfree text\n", ""):
        path = tmp_path / "r.sam"
        path.write_text(_sam(*records, header=header))
        assert [(n, s, q) for n, s, q, _ in read_all(path, batch_size=3)] == want, header
    assert [i for *_, i in read_all(path, batch_size=3)] == [0, 1, 2, 3]


def test_ubam_mates_are_named_as_sam_text(tmp_path):
    ubam = tmp_path / "r.bam"
    header = pysam.AlignmentHeader.from_dict({"HD": {"VN": "1.6"}})
    with pysam.AlignmentFile(str(ubam), "wb", header=header) as fh:
        for flag in (77, 141):
            rec = pysam.AlignedSegment(header)
            rec.query_name, rec.query_sequence, rec.flag = "m", "ACG", flag
            fh.write(rec)
    assert [n for n, *_ in read_all(ubam)] == ["m/1", "m/2"]


@pytest.mark.parametrize("content, message", [
    (_sam("r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT"),
     r"x\.sam: line 2: 10 tab-separated fields where a record has at least 11 \(reading SAM"),
    (_sam("r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIII"),
     r"x\.sam: line 2: SEQ and QUAL lengths differ \(4 vs 3\)"),
    (_sam("r1\tfour\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII"),
     r"x\.sam: line 2: FLAG 'four' is not a number"),
    (_sam("r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tII I"),
     r"x\.sam: line 2: invalid quality byte 0x20 at position 3"),
    (_sam("r1\t4\t*\t0\t0\t*\t*\t0\t0\tAC>T\tIIII"),
     r"x\.sam: line 2: invalid byte 0x3e at position 3 of the sequence"),
    (_sam("r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII", "@CO\tlate"),
     r"x\.sam: line 3: header line after the first record"),
])
def test_sam_text_errors(tmp_path, content, message):
    path = tmp_path / "x.sam"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_all(path)


@pytest.mark.parametrize("content, message", [
    ("@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n",
     r"x\.fq: line 8: SEQ and QUAL lengths differ \(4 vs 3\)"),
    ("@r1\nACGT\nIIII\n@r2\n", r"x\.fq: line 3: missing '\+' separator line"),
    ("@r1\nACGT\n+\nIIII\n@r2\nACG", r"x\.fq: line 6: truncated FASTQ record"),
    ("@r1\nACGT\n+\nIIII\nr2\nACGT\n+\nIIII\n", r"x\.fq: line 5: expected a FASTQ header"),
    ("", r"x\.fq: empty file"),
    ("\x00\x01\x02garbage\xff", r"x\.fq: line 1: not FASTQ, FASTA, SAM or BAM"),
    ("@r1\nAC\x01T\n+\nIIII\n", r"x\.fq: line 2: invalid byte 0x01"),
])
def test_fastq_errors(tmp_path, content, message):
    path = tmp_path / "x.fq"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(InputError, match=message):
        read_all(path)


def test_error_line_numbers_cross_chunks(tmp_path):
    """A bad record deep in a large file is reported at its own line."""
    recs = [(f"r{i}", "ACGT" * 30, "I" * 120) for i in range(40_000)]
    text = fastq(recs) + "@bad\nACGT\n+\nIII\n"
    path = tmp_path / "big.fq"
    path.write_text(text)
    with pytest.raises(InputError, match=rf"big\.fq: line {4 * 40_000 + 4}: SEQ and QUAL"):
        read_all(path, batch_size=100_000)


@pytest.mark.parametrize("damage", ["truncated", "deflate", "crc"])
def test_damaged_gzip_is_an_error_naming_the_file(tmp_path, damage):
    """Whichever inflater runs (ISA-L on its own thread, or zlib), damaged data stops the run
    with the file's name; nothing is returned as if the file had ended."""
    data = gzip.compress(fastq([(f"r{i}", "ACGTACGTAC", "IIIIIIIIII") for i in range(20_000)]).encode())
    bad = bytearray(data)
    if damage == "truncated":
        bad = bad[:len(bad) // 2]
    elif damage == "deflate":  # bytes that are no deflate block
        bad[20:60] = bytes(range(40, 80))
    else:  # a valid stream with other contents: the CRC fails
        bad[len(bad) // 2:len(bad) // 2 + 50] = bytes(50)
    path = tmp_path / "x.fq.gz"
    path.write_bytes(bytes(bad))
    with pytest.raises(InputError, match=r"x\.fq\.gz: corrupt"):
        read_all(path)
