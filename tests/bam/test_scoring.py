"""The BAM stage's scores: soft clips and the clip penalty, AS/XS, -T, MAPQ capped by the
upstream mapper, the edit preset's tie rules, and the options that set them."""

from __future__ import annotations

import random
import subprocess
import sys

import pysam
import pytest
from conftest import HAS_GPU

from readalign.bam.options import Options, read_scoring
from readalign.bam.presets import EDIT, SR
from readalign.bam.run import run
from readalign.cli import main
from readalign.errors import InputError

_rng = random.Random(3)
REF = "".join(_rng.choice("ACGT") for _ in range(400))
ADAPTER = "AGATCGGAAGAGCACACGTCTGAACTCCAGTCAC"
COMP = str.maketrans("ACGT", "TGCA")


def revcomp(s: str) -> str:
    return s.translate(COMP)[::-1]


def other(base: str) -> str:
    return "C" if base != "C" else "G"


@pytest.fixture()
def align(tmp_path):
    """Align (name, read) pairs to their given windows of REF; return the records by name."""
    fa = tmp_path / "ref.fa"
    fa.write_text(">c1\n" + REF + "\n")

    def go(reads, cands, paf_mapq=None, **kw):
        rp = tmp_path / "r.fq"
        rp.write_text("".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads))
        if paf_mapq is None:
            cp = tmp_path / "c.tsv"
            cp.write_text("".join(f"{n}\tc1\t{a}\t{b}\t{st}\n" for n, a, b, st in cands))
        else:
            cp = tmp_path / "c.paf"
            lengths = dict(reads)
            cp.write_text("".join(
                f"{n}\t{len(lengths[n])}\t0\t{len(lengths[n])}\t{st}\tc1\t{len(REF)}\t{a}\t{b}\t"
                f"{b - a}\t{b - a}\t{paf_mapq}\n" for n, a, b, st in cands))
        out = tmp_path / "o.bam"
        opts = dict(reference=str(fa), reads=str(rp), candidates=str(cp), output=str(out),
                    backend="cpu", threads=1, pad=10)
        opts.update(kw)
        run(Options(**opts))
        with pysam.AlignmentFile(str(out), check_sq=False) as fh:
            return {r.query_name: r for r in fh}
    return go


def test_adapter_tail_is_soft_clipped_on_either_strand(align):
    read = REF[100:160] + ADAPTER[:25]
    recs = align([("f", read), ("r", revcomp(read))],
                 [("f", 100, 160, "+"), ("r", 100, 160, "-")])
    f, r = recs["f"], recs["r"]
    assert (f.cigarstring, f.reference_start, f.get_tag("NM"), f.get_tag("MD")) == \
        ("60M25S", 100, 0, "60")
    assert (r.cigarstring, r.reference_start, r.is_reverse) == ("60M25S", 100, True)
    assert f.query_sequence == read and f.get_tag("AS") == 60
    assert r.query_sequence == read  # stored on the forward strand, clipped bases included


def test_clip_penalty_decides_between_a_mismatch_and_a_clip(align):
    one = REF[100:159] + other(REF[159])  # end to end 59 - 4 = 55; clipped 59 - 5 = 54
    two = REF[100:158] + other(REF[158]) + other(REF[159])  # 58 - 8 = 50; clipped 58 - 5 = 53
    cands = [("one", 100, 160, "+"), ("two", 100, 160, "+")]
    recs = align([("one", one), ("two", two)], cands)
    assert recs["one"].cigarstring == "60M" and recs["one"].get_tag("NM") == 1
    assert recs["one"].get_tag("AS") == 55
    assert recs["two"].cigarstring == "58M2S" and recs["two"].get_tag("AS") == 58
    no_penalty = align([("one", one), ("two", two)], cands, scoring=read_scoring("sr", clip=0))
    assert no_penalty["one"].cigarstring == "59M1S"
    never = align([("one", one), ("two", two)], cands, scoring=read_scoring("sr", clip=100))
    assert "S" not in never["two"].cigarstring and never["two"].get_tag("AS") >= 50


def test_min_score_leaves_short_reads_unmapped(align):
    reads = [("short", REF[200:225]), ("long", REF[200:240])]
    cands = [("short", 200, 225, "+"), ("long", 200, 240, "+")]
    recs = align(reads, cands)  # -T 30
    assert recs["short"].is_unmapped and recs["long"].get_tag("AS") == 40
    recs = align(reads, cands, scoring=read_scoring("sr", min_score=20))
    assert not recs["short"].is_unmapped and recs["short"].get_tag("AS") == 25


def test_mapq_capped_by_the_upstream_mapper(align):
    read = REF[100:160]
    cands = [("a", 100, 160, "+"), ("a", 300, 360, "+")]
    recs = align([("a", read)], cands)
    assert recs["a"].mapping_quality == 60 and recs["a"].reference_start == 100
    assert not recs["a"].has_tag("XS")  # the far window holds no alignment of score >= 30
    assert align([("a", read)], cands, paf_mapq=7)["a"].mapping_quality == 7
    assert align([("a", read)], cands, paf_mapq=255)["a"].mapping_quality == 60  # 255: none


def test_xs_mapq_from_the_score_gap_and_duplicates(tmp_path, align):
    copy = REF[100:160]
    diverged = copy[:20] + other(copy[20]) + copy[21:40] + other(copy[40]) + copy[41:]
    ref = REF + diverged  # the read's locus and a copy with 2 mismatches at 400
    (tmp_path / "ref.fa").write_text(">c1\n" + ref + "\n")
    recs = align([("a", copy)], [("a", 400, 460, "+"), ("a", 100, 160, "+"),
                                 ("a", 95, 165, "+")], reference=str(tmp_path / "ref.fa"))
    a = recs["a"]
    assert (a.reference_start, a.get_tag("AS"), a.get_tag("XS")) == (100, 60, 50)
    assert a.mapping_quality == 10 * 10 // 5  # 10 points = two mismatches' worth
    recs = align([("a", copy)], [("a", 100, 160, "+"), ("a", 100, 160, "+")])
    assert not recs["a"].has_tag("XS")  # the same locus twice counts once


def test_edit_preset_writes_one_gap_block_and_keeps_end_mismatches(tmp_path):
    left, right = REF[:40], REF[60:100]
    ref = left + "AAG" + right
    fa = tmp_path / "ref.fa"
    fa.write_text(">c1\n" + ref + "\n")
    deletion = left + "A" + right  # 1D1M1D and 1M2D both cost 2 edits
    end = ref[:79] + other(ref[79])  # a last-base mismatch; 79M1I also costs 1
    rp = tmp_path / "r.fa"
    rp.write_text(f">del\n{deletion}\n>end\n{end}\n")
    cp = tmp_path / "c.tsv"
    cp.write_text(f"del\tc1\t0\t{len(ref)}\t+\nend\tc1\t0\t80\t+\n")
    out = tmp_path / "o.bam"
    run(Options(reference=str(fa), reads=str(rp), candidates=str(cp), output=str(out),
                backend="cpu", threads=1, pad=10, scoring=EDIT))
    with pysam.AlignmentFile(str(out), check_sq=False) as fh:
        recs = {r.query_name: r for r in fh}
    assert recs["del"].cigarstring == "41M2D40M" and recs["del"].get_tag("NM") == 2
    assert recs["del"].get_tag("AS") == -2
    assert recs["end"].cigarstring == "80M" and recs["end"].get_tag("NM") == 1


def test_options_and_their_errors():
    assert read_scoring("sr") == SR
    custom = read_scoring("sr", 2, 8, 12, 2, 10, 40)
    assert custom.describe() == "--preset sr -A 2 -B 8 -O 12 -E 2 -L 10 -T 40"
    assert read_scoring("edit").describe() == "--preset edit"
    assert read_scoring("edit", min_score=-5).describe() == "--preset edit -T -5"
    with pytest.raises(InputError, match="-A, -L set scores, which --preset edit does not use"):
        read_scoring("edit", match=2, clip=3)
    with pytest.raises(InputError, match="-B must be between 0 and 1000; got -1"):
        read_scoring("sr", mismatch=-1)
    with pytest.raises(InputError, match="-A: the match score must be >= 1"):
        read_scoring("sr", match=0)
    with pytest.raises(InputError, match="-O/-E: a gap must cost something"):
        read_scoring("sr", gap_open=0, gap_extend=0)


def test_cli_scoring_reaches_the_header_and_the_summary(tmp_path, capsys):
    fa = tmp_path / "ref.fa"
    fa.write_text(">c1\n" + REF + "\n")
    rp = tmp_path / "r.fq"
    rp.write_text(f"@a\n{REF[50:150]}\n+\n{'I' * 100}\n")
    cp = tmp_path / "c.tsv"
    cp.write_text("a\tc1\t50\t150\t+\n")
    out = tmp_path / "o.bam"
    assert main(["align", "-r", str(fa), "--reads", str(rp), "-c", str(cp), "-o", str(out),
                 "--backend", "cpu", "-B", "6"]) == 0
    with pysam.AlignmentFile(str(out), check_sq=False) as fh:
        pg = fh.header.to_dict()["PG"][0]["CL"]
        (rec,) = list(fh)
    assert pg.endswith("--preset sr -A 1 -B 6 -O 6 -E 1 -L 5 -T 30")
    assert rec.get_tag("AS") == 100
    assert "scoring --preset sr -A 1 -B 6" in capsys.readouterr().err
    res = subprocess.run([sys.executable, "-m", "readalign", "align", "-r", str(fa), "--reads",
                          str(rp), "-c", str(cp), "-o", str(tmp_path / "x.bam"), "--preset",
                          "edit", "-E", "2"], capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stderr.strip() == ("readalign: error: -E set scores, which --preset edit does not "
                                  "use (unit edit costs); use them with --preset sr")
    assert not (tmp_path / "x.bam").exists()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_gpu_and_cpu_write_the_same_bam_bytes(tmp_path):
    """Both presets: the GPU's BAM equals the CPU's byte for byte (with the same @PG)."""
    from tests.support.simulate import simulate

    fa, reads, cands, _n = simulate(str(tmp_path), 20_000, 2_000_000, seed=4)
    for preset in ("sr", "edit"):
        outs = []
        for backend in ("cpu", "cuda"):
            out = tmp_path / f"{preset}.{backend}.bam"
            run(Options(reference=fa, reads=reads, candidates=cands, output=str(out),
                        backend=backend, threads=4, scoring=read_scoring(preset),
                        command_line="test", compression_level=6))
            outs.append(out.read_bytes())
        if outs[0] != outs[1]:  # name the first record that differs, for the failure's report
            recs = [_records(tmp_path / f"{preset}.{b}.bam") for b in ("cpu", "cuda")]
            first = next((i for i, (c, g) in enumerate(zip(*recs)) if c != g), None)
            pytest.fail(f"{preset}: BAMs differ; record {first}: cpu {recs[0][first]!r} "
                        f"cuda {recs[1][first]!r}" if first is not None else
                        f"{preset}: BAMs differ in bytes, not in records ({len(recs[0])} each)")


def _records(path) -> list[str]:
    with pysam.AlignmentFile(str(path), "rb", check_sq=False) as fh:
        return [r.to_string() for r in fh]


def test_edit_preset_refuses_reads_too_long_for_its_costs():
    """W x (read + window) must stay far from the kernel's minus infinity: a clear error."""
    import numpy as np

    from readalign.bam.presets import edit_scores

    assert edit_scores(np.array([150]), np.array([190])).gap_extend == 151
    with pytest.raises(InputError, match="--preset edit aligns reads up to about .* this batch "
                                         "has a 20,000-base read"):
        edit_scores(np.array([20_000]), np.array([20_040]))


@pytest.mark.parametrize("preset", ["sr", "edit"])
def test_the_benchmarks_kernel_stand_in_serves_both_presets(tmp_path, preset):
    """``benchmarks.pipeline --skip-align`` times every stage but the kernel: its stand-in
    places each read ungapped at the pad and must give what assembly needs for either preset
    (the scored preset needs scores and read spans)."""
    from benchmarks._standin import ungapped_aligner
    from tests.support.simulate import simulate

    fa, reads, cands, _n = simulate(str(tmp_path), 2_000, 200_000, seed=5)
    out = tmp_path / f"{preset}.bam"
    opts = Options(reference=fa, reads=reads, candidates=cands, output=str(out), backend="cpu",
                   threads=2, scoring=read_scoring(preset), command_line="test")
    run(opts, aligner=ungapped_aligner(opts.pad))
    ref = pysam.FastaFile(fa)
    with pysam.AlignmentFile(str(out), "rb") as bam:
        recs = [r for r in bam if not r.is_secondary]
    mapped = [r for r in recs if not r.is_unmapped]
    assert len(recs) == 2_000 and len(mapped) >= 1_990  # a read may sit off its pad
    for r in mapped[:300]:
        window = ref.fetch(r.reference_name, r.reference_start, r.reference_end)
        mism = sum(a != b for a, b in zip(r.query_sequence, window, strict=True))
        assert r.cigarstring == f"{r.query_length}M" and r.get_tag("NM") == mism
        if preset == "sr":
            assert r.get_tag("AS") == (r.query_length - mism) * 1 - 4 * mism
