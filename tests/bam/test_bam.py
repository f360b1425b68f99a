"""BAM records: SEQ/QUAL orientation, MD/NM/CIGAR, bins, selection rules, read groups."""

from __future__ import annotations

import numpy as np
import pysam
import pytest

from readalign.bam.bgzf import _htslib, deflate_library
from readalign.bam.header import parse_rg
from readalign.bam.options import Options
from readalign.bam.presets import EDIT
from readalign.bam.records import reg2bin
from readalign.bam.run import run
from readalign.bam.select import NO_SCORE, select_best
from readalign.errors import InputError

REF = ("GATTACAGATTACACCGGTTAAGGCCTTAACGTACGTTGCAACGTAGCTAGCTAGGATCCAGTCAGT"
       "TTGACCATGGCATGCAAGCTTGGCACTGGCCGTCGTTTTACAACGTCGTGACTGGGAAAACCCTGGCG")
COMP = str.maketrans("ACGTRYacgt", "TGCAYRtgca")


def revcomp(s):
    return s.translate(COMP)[::-1]


@pytest.fixture()
def run_tsv(tmp_path):
    fa = tmp_path / "ref.fa"
    fa.write_text(">c1\n" + REF + "\n>c2\n" + REF[::-1] + "\n")

    def go(reads, cands, fasta=False, **kw):
        rp = tmp_path / ("r.fa" if fasta else "r.fq")
        if fasta:
            rp.write_text("".join(f">{n}\n{s}\n" for n, s, _ in reads))
        else:
            rp.write_text("".join(f"@{n}\n{s}\n+\n{q}\n" for n, s, q in reads))
        cp = tmp_path / "c.tsv"
        cp.write_text("".join("\t".join(map(str, c)) + "\n" for c in cands))
        out = tmp_path / "o.bam"
        opts = dict(reference=str(fa), reads=str(rp), candidates=str(cp), output=str(out),
                    backend="cpu", threads=1, pad=5)
        opts.update(kw)
        summary = run(Options(**opts))
        with pysam.AlignmentFile(str(out), check_sq=False) as fh:
            return list(fh), summary
    return go


def test_reverse_strand_seq_qual_and_md(run_tsv):
    # read = REF[20:60] with one substitution, a 2-base deletion and a 1-base insertion
    core = REF[20:30] + "A" + REF[31:40] + REF[42:50] + "T" + REF[50:60]
    read = revcomp(core)
    read = read[:5] + "R" + read[6:]  # IUPAC base, accepted and stored as is
    qual = "".join(chr(33 + i % 40) for i in range(len(read)))
    recs, summary = run_tsv([("r1", read, qual)], [("r1", "c1", 20, 60, "-")], eqx=True,
                            scoring=EDIT)
    (rec,) = recs
    assert rec.flag == 16 and rec.reference_start == 20
    assert rec.query_sequence == revcomp(read)  # stored on the forward strand
    assert pysam.qualities_to_qualitystring(rec.query_qualities) == qual[::-1]
    # forward-strand read index 33 holds the R: reference base 54 (an N-like mismatch)
    assert rec.get_tag("MD") == f"10{REF[30]}9^{REF[40:42]}12{REF[54]}5"
    assert rec.cigarstring == "10=1X9=2D8=1I4=1X5="
    assert rec.get_tag("NM") == 5 == -rec.get_tag("AS")
    assert summary.aligned == 1 and summary.unaligned == 0


def test_fasta_reads_have_no_quality_and_unmapped_records(run_tsv):
    reads = [("a", REF[5:45], ""), ("b", "ACGT" * 10, ""), ("c", REF[50:90], "")]
    recs, summary = run_tsv(reads, [("a", "c1", 5, 45, "+"), ("c", "c1", 50, 90, "+")],
                            fasta=True, rg=r"ID:g1\tSM:x\tPL:ILLUMINA")
    assert [r.query_name for r in recs] == ["a", "b", "c"]
    assert recs[0].query_qualities is None
    assert recs[1].is_unmapped and recs[1].reference_id == -1 and not recs[1].has_tag("NM")
    assert recs[1].bin == 4680
    assert [r.get_tag("RG") for r in recs] == ["g1"] * 3
    assert recs[2].cigarstring == "40M" and recs[2].get_tag("MD") == "40"
    assert summary.unaligned == 1


def test_ties_duplicates_secondary_and_max_distance(run_tsv):
    read = REF[10:50]
    other = REF[10:30] + "A" + REF[31:50]  # 1 mismatch vs c1:10-50 when REF[30] != 'A'
    assert REF[30] != "A"
    reads = [("t", read, "I" * 40), ("m", other, "I" * 40)]
    cands = [("t", "c1", 10, 50, "+"), ("t", "c1", 8, 52, "+"),  # same locus twice: one alignment
             ("m", "c1", 10, 50, "+"), ("m", "c2", 0, 60, "-")]
    recs, summary = run_tsv(reads, cands, secondary=True)
    t = [r for r in recs if r.query_name == "t"]
    assert len(t) == 1 and t[0].mapping_quality == 60 and not t[0].has_tag("XS")
    m = [r for r in recs if r.query_name == "m"]
    assert m[0].get_tag("NM") == 1 and m[0].reference_name == "c1"
    assert all(r.is_secondary for r in m[1:])
    for r in m[1:]:
        assert r.mapping_quality == 0
    recs, _ = run_tsv(reads, cands, max_distance=0)
    assert [r.is_unmapped for r in recs] == [False, True]


def test_select_rules():
    # read 0: tie between pairs 0 and 1 -> first wins, MAPQ 0; pair 2 all-insertion (no ref span)
    # read 1: only an all-insertion alignment -> unmapped
    read = np.array([0, 0, 0, 1])
    dist = np.array([3, 3, 1, 2], np.int32)
    score = np.array([30, 30, 50, 40], np.int64)
    start = np.array([0, 0, 5, 4], np.int64)
    end = np.array([40, 40, 5, 4], np.int64)
    contig = np.array([0, 1, 0, 0], np.int32)
    strand = np.zeros(4, np.int8)
    win = np.array([0, 100, 0, 0], np.int64)
    upstream = np.full(4, 255, np.uint8)

    def select(min_score=NO_SCORE, max_dist=-1, unit=5):
        return select_best(2, read, score, score, dist, start, end, contig, strand, win,
                           upstream, min_score, max_dist, unit)

    valid, best, second, mapq = select()
    assert valid.tolist() == [True, True, False, False]
    assert best.tolist() == [0, -1] and second.tolist() == [1, -1] and mapq.tolist() == [0, 0]
    score[1] = 22  # 8 points below: 10 * 8 // 5 = 16
    valid, best, second, mapq = select()
    assert best[0] == 0 and second[0] == 1 and mapq[0] == 16
    upstream[1] = 3  # the upstream mapper's MAPQ (the highest of the read's candidates) caps it
    assert select()[3][0] == 3
    upstream[:] = 255
    score[1] = 0  # 30 below: 10 * 30 // 5 = 60, the most
    assert select()[3][0] == 60
    valid, best, _, _ = select(min_score=31)  # -T: both fall short
    assert best[0] == -1 and not valid.any()
    valid, best, _, _ = select(max_dist=2)  # both have 3 edits
    assert best[0] == -1


def test_reg2bin_and_read_groups():
    assert reg2bin(-1, 0) == 4680
    assert reg2bin(0, 1) == 4681
    assert reg2bin(16384, 16385) == 4682
    assert reg2bin(16000, 17000) == 585
    assert parse_rg(r"ID:a\tSM:b\tPL:ILLUMINA") == ("@RG\tID:a\tSM:b\tPL:ILLUMINA", "a")
    with pytest.raises(InputError, match="no ID"):
        parse_rg(r"SM:b")


def test_deflate_library_matches_htslib_feature_string():
    import ctypes

    lib = _htslib()
    lib.hts_feature_string.restype = ctypes.c_char_p
    features = lib.hts_feature_string().decode().split()
    assert ("libdeflate=yes" in features) == (deflate_library() == "libdeflate")
    assert ("libdeflate=no" in features) == (deflate_library() == "zlib")


def test_options_built_by_a_caller_get_the_command_s_checks(run_tsv, tmp_path):
    """run() checks its Options as the command does (bam/options.check): an output naming an
    input is refused before anything is written, and the input is left as it was."""
    reads = [("r1", REF[10:40], "I" * 30)]
    cands = [("r1", "c1", 5, 45, "+")]
    run_tsv(reads, cands)
    before = (tmp_path / "r.fq").read_bytes()
    with pytest.raises(InputError, match="refusing to overwrite"):
        run_tsv(reads, cands, output=str(tmp_path / "r.fq"))
    assert (tmp_path / "r.fq").read_bytes() == before
    with pytest.raises(InputError, match="--max-distance must be >= 0"):
        run_tsv(reads, cands, max_distance=-1)
