"""The reads count estimate: exact for small files, close for large ones, in every reads format."""

from __future__ import annotations

import gzip

import numpy as np
import pysam
import pytest

from readalign.io import read_count
from readalign.io.read_count import estimate_reads


def fastq(n: int, length: int = 100) -> bytes:
    """``n`` reads of random bases (a run's reads compress alike from start to end)."""
    rng = np.random.default_rng(5)
    seqs = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (n, length))]
    return b"".join(b"@r%d\n%s\n+\n%s\n" % (i, seqs[i].tobytes(), b"I" * length)
                    for i in range(n))


@pytest.mark.parametrize("gz", [False, True])
def test_exact_below_the_sample(tmp_path, gz):
    path = tmp_path / ("r.fq.gz" if gz else "r.fq")
    data = fastq(1234)
    path.write_bytes(gzip.compress(data) if gz else data)
    assert estimate_reads(str(path)) == 1234


@pytest.mark.parametrize("gz", [False, True])
def test_close_past_the_sample(tmp_path, monkeypatch, gz):
    monkeypatch.setattr(read_count, "SAMPLE_BYTES", 1 << 20)
    path = tmp_path / ("r.fq.gz" if gz else "r.fq")
    data = fastq(50_000)
    path.write_bytes(gzip.compress(data, 1) if gz else data)
    assert estimate_reads(str(path)) == pytest.approx(50_000, rel=0.03)


def test_fasta_and_sam(tmp_path):
    fa = tmp_path / "r.fa"
    fa.write_bytes(b"".join(b">r%d\nACGTACGT\nACGT\n" % i for i in range(77)))
    sam = tmp_path / "r.sam"
    sam.write_bytes(b"@HD\tVN:1.6\n" + b"".join(b"r%d\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n" % i
                                                  for i in range(55)))
    assert estimate_reads(str(fa)) == 77
    assert estimate_reads(str(sam)) == 55


def test_unaligned_bam(tmp_path, monkeypatch):
    path = str(tmp_path / "r.bam")
    header = pysam.AlignmentHeader.from_dict({"HD": {"VN": "1.6", "SO": "unsorted"}})
    with pysam.AlignmentFile(path, "wb", header=header) as out:
        for i in range(20_000):
            rec = pysam.AlignedSegment(header)
            rec.query_name, rec.flag = f"r{i}", 4
            rec.query_sequence = "ACGT" * 25
            rec.query_qualities = pysam.qualitystring_to_array("I" * 100)
            out.write(rec)
    assert estimate_reads(path) == 20_000
    monkeypatch.setattr(read_count, "SAMPLE_RECORDS", 5000)
    assert estimate_reads(path) == pytest.approx(20_000, rel=0.1)


def test_empty_file(tmp_path):
    path = tmp_path / "r.fq"
    path.write_bytes(b"")
    assert estimate_reads(str(path)) == 0
