"""Candidate readers: PAF/TSV/SAM windows, format detection and errors."""

from __future__ import annotations

import importlib.util

import pysam
import pytest
from conftest import REPO

from readalign.errors import InputError
from readalign.io.candidates import detect_format, iter_candidates
from readalign.io.reference import Reference


@pytest.fixture()
def ref(tmp_path):
    fa = tmp_path / "ref.fa"
    fa.write_text(">chr1 first\n" + "ACGT" * 250 + "\n>chr2\n" + "GATTACA" * 10 + "\n")
    return Reference(str(fa))


def rows(path, ref, fmt=None):
    out = []
    for ch in iter_candidates(str(path), ref, fmt):
        for i in range(len(ch)):
            out.append((ch.name(i), ref.names[ch.contig[i]], int(ch.start[i]), int(ch.end[i]),
                        "+-"[ch.strand[i]], int(ch.line[i])))
    return out


def test_reference_index_built(ref, tmp_path):
    assert ref.names == ["chr1", "chr2"]
    assert list(ref.lengths) == [1000, 70]
    assert (tmp_path / "ref.fa.fai").exists()


def test_paf_window_covers_whole_read(ref, tmp_path):
    paf = tmp_path / "c.paf"
    paf.write_text("r1\t100\t10\t90\t+\tchr1\t1000\t500\t580\t70\t80\t60\ttp:A:P\n"
                   "r1\t100\t10\t90\t-\tchr1\t1000\t500\t580\t70\t80\t0\n"
                   "r2\t50\t0\t50\t+\tchr2\t70\t10\t60\t50\t50\t60\r\n")
    assert rows(paf, ref) == [("r1", "chr1", 490, 590, "+", 1), ("r1", "chr1", 490, 590, "-", 2),
                              ("r2", "chr2", 10, 60, "+", 3)]
    paf.write_text("r1\t100\t0\t70\t-\tchr1\t1000\t500\t570\t70\t70\t60\n")
    assert rows(paf, ref) == [("r1", "chr1", 470, 570, "-", 1)]


def test_tsv_header_comments_and_override(ref, tmp_path):
    tsv = tmp_path / "c.txt"
    tsv.write_text("read_name\tcontig\tstart\tend\tstrand\n# a comment\n\nr1\tchr2\t0\t70\t-\n")
    assert rows(tsv, ref) == [("r1", "chr2", 0, 70, "-", 4)]
    assert detect_format("x.PAF.gz") == "paf"
    assert detect_format("x.whatever", "tsv") == "tsv"
    with pytest.raises(InputError, match="cannot tell the candidate format"):
        detect_format("x.csv")


def test_sam_records_define_windows(ref, tmp_path):
    sam = tmp_path / "c.sam"
    sam.write_text("@SQ\tSN:chr1\tLN:1000\n@SQ\tSN:chr2\tLN:70\n"
                   "q1\t16\tchr1\t101\t60\t5S20M3S\t*\t0\t0\t" + "A" * 28 + "\t*\n"
                   "q2\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n")
    assert rows(sam, ref) == [("q1", "chr1", 95, 123, "-", 1)]
    bam = tmp_path / "c.bam"
    pysam.view("-b", "-o", str(bam), str(sam), catch_stdout=False)
    assert rows(bam, ref) == rows(sam, ref)


@pytest.mark.parametrize("line, message", [
    ("r1\tchrX\t0\t10\t+", r"c\.tsv: line 1: unknown contig 'chrX'"),
    ("r1\tchr2\t60\t80\t+",
     r"c\.tsv: line 1: window 60-80 is outside contig 'chr2' \(length 70\)"),
    ("r1\tchr2\t10\t5\t+", r"c\.tsv: line 1: window 10-5 is outside"),
    ("r1\tchr2\t1\t5\t*", r"c\.tsv: line 1: strand must be '\+' or '-'"),
    ("r1\tchr2\t1\tten\t+", r"c\.tsv: line 1: field 4 is not a non-negative integer: 'ten'"),
    ("r1\tchr2\t1", r"c\.tsv: line 1: expected at least 5 tab-separated fields"),
    ("", r"c\.tsv: empty file"),
])
def test_tsv_errors(ref, tmp_path, line, message):
    tsv = tmp_path / "c.tsv"
    tsv.write_text(line + ("\n" if line else ""))
    with pytest.raises(InputError, match=message):
        rows(tsv, ref)


def test_paf_other_reference(ref, tmp_path):
    paf = tmp_path / "c.paf"
    paf.write_text("r\t10\t0\t10\t+\tchr1\t999\t0\t10\t10\t10\t60\n")
    with pytest.raises(InputError, match=r"c\.paf: line 1: target length 999 differs"):
        rows(paf, ref)


@pytest.mark.parametrize("content, message", [
    (b"", "empty file"), (b">chr1\n>chr2\n", "reference has no sequences"),
    (b"\x00\x01bin", "not a FASTA"),
])
def test_reference_errors(tmp_path, content, message):
    fa = tmp_path / "bad.fa"
    fa.write_bytes(content)
    with pytest.raises(InputError, match=rf"bad\.fa: .*{message}"):
        Reference(str(fa))


def test_plain_gzip_reference_is_refused(tmp_path):
    import gzip

    fa = tmp_path / "plain.fa.gz"
    fa.write_bytes(gzip.compress(b">c\nACGT\n"))
    with pytest.raises(InputError, match="plain gzip.*bgzip"):
        Reference(str(fa))
    bgz = tmp_path / "b.fa.gz"
    plain = tmp_path / "x.fa"
    plain.write_text(">c\nacgtNN\n")
    pysam.tabix_compress(str(plain), str(bgz))
    r = Reference(str(bgz))
    r.ensure([0])
    assert bytes(r.flat[:4]) == b"ACGT"



def test_one_format_rule_for_the_command_and_the_workflow(tmp_path):
    """`.tab` is TSV for `readalign align` and the workflow's scatter step alike."""
    spec = importlib.util.spec_from_file_location(
        "scatter", REPO / "workflow" / "scripts" / "scatter.py")
    scatter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scatter)
    for name, want in (("c.tab", "tsv"), ("c.txt.gz", "tsv"), ("c.paf", "paf"), ("c.bam", "bam")):
        assert detect_format(str(tmp_path / name)) == want
        assert scatter.candidates_format(str(tmp_path / name)) == want
    with pytest.raises(scatter.ScatterError, match="cannot tell the candidate format"):
        scatter.candidates_format(str(tmp_path / "c.xyz"))
