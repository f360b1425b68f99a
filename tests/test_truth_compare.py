"""The truth benchmark's pure-Python pieces: read-name origins, VCF comparison, the clip scorer."""

from __future__ import annotations

from benchmarks.truth import (
    Variant,
    compare_indels,
    compare_snps,
    is_placed,
    parse_origin,
    parse_vcf,
    should_clip,
    split_variants,
    tail_scores,
)

M, I, D, S = 0, 1, 2, 4
REF = "ACGTTGCAAGCTTAGCCATGGATCCGTACGATCGATTGCA" * 3


def test_dwgsim_forward_name() -> None:
    o = parse_origin("NC_008253.1_186717_1_0_1_0_0_0:0:0_0:0:0_0/1")
    assert o is not None
    assert (o.contig, o.starts, o.reverse, o.adapter) == ("NC_008253.1", (186716,), False, 0)


def test_dwgsim_reverse_name_with_adapter_moves_start_right() -> None:
    o = parse_origin("NC_008253.1_first500k_144030_1_1_0_0_0_0:1:0_0:0:0_1a7f_ad33")
    assert o is not None
    assert (o.contig, o.starts, o.reverse, o.adapter) == ("NC_008253.1_first500k", (144029 + 33,), True, 33)


def test_dwgsim_forward_name_with_adapter_keeps_start() -> None:
    o = parse_origin("chr_1_1000_1_0_1_0_0_2:0:1_0:0:0_ff_ad20")
    assert o is not None and o.contig == "chr_1" and o.starts == (999,)


def test_contig_end_name_has_two_right_starts() -> None:
    o = parse_origin("NC_008253.1_cend_4938870_50_1_12")
    assert o is not None and o.starts == (4938870, 0) and o.reverse
    assert is_placed(o, "NC_008253.1", 4938880)
    assert is_placed(o, "NC_008253.1", 3)
    assert not is_placed(o, "NC_008253.1", 4938840)
    assert not is_placed(o, "other", 0)


def test_unknown_and_random_names() -> None:
    assert parse_origin("read1") is None
    assert parse_origin("chr1_100_1_0_1_1_0_0:0:0_0:0:0_3") is None  # dwgsim's random read
    assert not is_placed(None, "chr1", 99)


def test_placement_tolerance() -> None:
    o = parse_origin("chr1_100_1_0_1_0_0_0:0:0_0:0:0_3")
    assert is_placed(o, "chr1", 99 + 20) and not is_placed(o, "chr1", 99 + 21)


def test_parse_vcf_qual_filter_and_multiallelic() -> None:
    lines = ["##fileformat=VCFv4.2", "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO",
             "c\t10\t.\tA\tG\t50\tPASS\t.", "c\t20\t.\tC\tT\t10\tPASS\t.",
             "c\t30\t.\tG\tT,<*>\t.\tPASS\t.", "c\t40\t.\tAC\tA,ACC\t99\t.\t."]
    assert parse_vcf(lines, 20) == [Variant("c", 10, "A", "G"), Variant("c", 30, "G", "T"),
                                    Variant("c", 40, "AC", "A"), Variant("c", 40, "AC", "ACC")]


def test_compare_snps_and_indels() -> None:
    truth = [Variant("c", 100, "A", "G"), Variant("c", 200, "C", "T"), Variant("c", 300, "ACG", "A"),
             Variant("c", 400, "T", "TAA"), Variant("c", 600, "G", "GT")]
    calls = [Variant("c", 100, "A", "G"),   # TP
             Variant("c", 200, "C", "A"),   # wrong allele: FP, and the truth SNP is FN
             Variant("c", 300, "ACG", "A"),  # TP: same place, type and length
             Variant("c", 403, "T", "TCC"),  # insertion 2 bp, 3 bp away: FP exact, TP loose
             Variant("c", 600, "GA", "G"),   # deletion where an insertion is: FP
             Variant("c", 700, "TAC", "GAG")]  # MNP: two SNPs, both FP
    t_snps, t_indels = split_variants(truth)
    c_snps, c_indels = split_variants(calls)
    assert Variant("c", 702, "C", "G") in c_snps and len(c_snps) == 4
    snp = compare_snps(t_snps, c_snps)
    assert (snp.tp, snp.fp, snp.fn) == (1, 3, 1)
    assert snp.precision == 0.25 and snp.recall == 0.5
    exact, loose = compare_indels(t_indels, c_indels)
    assert (exact.tp, exact.fp, exact.fn) == (1, 2, 2)
    assert loose == 2
    assert compare_indels(t_indels, c_indels, window=2)[1] == 1


def test_loose_indel_match_is_one_to_one() -> None:
    truth = [Variant("c", 50, "AT", "A")]
    calls = [Variant("c", 49, "GT", "G"), Variant("c", 52, "CT", "C")]
    assert compare_indels(truth, calls)[1] == 1


def _mismatch(base: str) -> str:
    return "A" if base != "A" else "C"


def test_tail_of_mismatches_should_be_clipped() -> None:
    start = 5
    ref = REF[start:start + 40]
    query = ref[:34] + "".join(_mismatch(b) for b in ref[34:])
    s = tail_scores([(M, 40)], query, REF, start)
    assert s.prefix_min == 1 and s.suffix_min == -24 and s.edits == 6
    assert should_clip(s)


def test_one_mismatch_at_the_end_is_not_clipped() -> None:
    ref = REF[:40]
    for pos in (0, 39, 38):
        query = ref[:pos] + _mismatch(ref[pos]) + ref[pos + 1:]
        s = tail_scores([(M, 40)], query, REF, 0)
        assert s.edits == 1 and min(s.prefix_min, s.suffix_min) >= -4
        assert not should_clip(s)


def test_two_close_mismatches_at_the_start_are_clipped() -> None:
    ref = REF[10:50]
    query = _mismatch(ref[0]) + ref[1] + _mismatch(ref[2]) + ref[3:]
    s = tail_scores([(M, 40)], query, REF, 10)
    assert s.prefix_min == -7 and should_clip(s)


def test_gap_at_an_end_counts_open_plus_length() -> None:
    ref = REF[:30]
    s = tail_scores([(I, 1), (M, 30)], "T" + ref, REF, 0)
    assert s.prefix_min == -7 and s.edits == 1 and should_clip(s)
    s = tail_scores([(M, 30), (D, 2)], ref, REF, 0)
    assert s.suffix_min == -8 and s.edits == 2 and should_clip(s)


def test_inner_deletion_and_soft_clips() -> None:
    ref = REF[3:50]
    query = "GGGG" + ref[:15] + ref[17:32] + "TT"
    s = tail_scores([(S, 4), (M, 15), (D, 2), (M, 15), (S, 2)], query, REF, 3)
    assert s == (1, 1, 2)
    assert not should_clip(s)


def test_mismatches_after_a_long_match_stay_if_matches_pay_for_them() -> None:
    ref = REF[:40]
    query = ref[:30] + _mismatch(ref[30]) + ref[31:37] + _mismatch(ref[37]) + ref[38:]
    s = tail_scores([(M, 40)], query, REF, 0)
    assert s.suffix_min == -4 + 2 and not should_clip(s)
