"""The alignment engine against an independent DP oracle, edlib, and CIGAR replay."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import require_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import readalign
from tests.support.mutate import mutate
from tests.support.oracle import dna_norm, dp_distance, replay

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def random_pairs(seed: int, count: int, max_len: int, alphabet: str) -> tuple[list, list]:
    rng = random.Random(seed)
    reads, windows = [], []
    for _ in range(count):
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))
        lo = rng.randint(0, len(t))
        hi = rng.randint(lo, len(t))
        reads.append(mutate(rng, t[lo:hi], rng.random() * 0.5, alphabet))
        windows.append(t)
    return reads, windows


def check_alignment(res, i: int, q: str, t: str, mode: str) -> None:
    """Distance equals the oracle; the CIGAR replays to the span at that cost."""
    q, t = dna_norm(q), dna_norm(t)
    d, end = dp_distance(q, t, mode == "infix", n_symbol="N")
    assert res.distance[i] == d, (q, t, mode)
    assert res.ref_end[i] == end
    cost, ref_end = replay(res.cigar(i), q, t, int(res.ref_start[i]))
    assert cost == d
    assert ref_end == res.ref_end[i]
    if mode == "global":
        assert res.ref_start[i] == 0 and res.ref_end[i] == len(t)


@pytest.mark.parametrize("mode", ["infix", "global"])
@pytest.mark.parametrize("alphabet", ["ACGT", "ACGTN", "A", "AC"])
def test_random_pairs_match_oracle(mode, alphabet):
    reads, windows = random_pairs(hash((mode, alphabet)) & 0xFFFF, 400, 120, alphabet)
    res = readalign.align(reads, windows, mode=mode)
    for i, (q, t) in enumerate(zip(reads, windows)):
        check_alignment(res, i, q, t, mode)


@SETTINGS
@given(st.data())
def test_property_oracle_and_replay(data):
    alphabet = data.draw(st.sampled_from(["A", "AC", "ACG", "ACGT", "ACGTN", "ACGTNacgtRY"]))
    mode = data.draw(st.sampled_from(["infix", "global"]))
    seqs = st.text(alphabet=alphabet, max_size=300)
    pairs = data.draw(st.lists(st.tuples(seqs, seqs), min_size=1, max_size=6))
    reads = [p[0] for p in pairs]
    windows = [p[1] for p in pairs]
    res = readalign.align(reads, windows, mode=mode)
    for i, (q, t) in enumerate(pairs):
        check_alignment(res, i, q, t, mode)


def test_tens_of_thousands_against_edlib():
    """Distances agree with edlib (HW = infix, NW = global) on 40,000 pairs."""
    edlib = require_module("edlib", "test-extra")
    for mode, task in (("infix", "HW"), ("global", "NW")):
        reads, windows = random_pairs(7 if mode == "infix" else 8, 20_000, 300, "ACGT")
        res = readalign.align(reads, windows, mode=mode)
        want = np.array([edlib.align(q, t, mode=task)["editDistance"] if q else
                         (0 if mode == "infix" else len(t)) for q, t in zip(reads, windows)])
        np.testing.assert_array_equal(res.distance, want)
        for i in range(0, len(reads), 997):
            check_alignment(res, i, reads[i], windows[i], mode)


@SETTINGS
@given(st.lists(st.tuples(st.text(max_size=40), st.text(max_size=40)), min_size=1, max_size=20))
def test_edit_distance_unicode(pairs):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    got = readalign.edit_distance(a, b)
    want = [dp_distance(x, y, infix=False)[0] for x, y in pairs]
    np.testing.assert_array_equal(got, want)


def test_edit_distance_bytes_and_case():
    assert list(readalign.edit_distance([b"abc", b""], [b"abd", b"xy"])) == [1, 2]
    assert list(readalign.edit_distance(["Ab", "NN"], ["ab", "NN"])) == [1, 0]


def test_edit_distance_cigar_on_request():
    res = readalign.edit_distance(["kitten"], ["sitting"], cigar=True)
    assert res.distance[0] == 3
    assert replay(res.cigar(0), "kitten", "sitting", 0, n_symbol=None)[0] == 3


@pytest.mark.parametrize(("read", "window", "cigar"), [
    ("ACGTTTTA", "ACGTTTA", "3M1I4M"),       # extra T in a homopolymer: the first T
    ("ACGTTA", "ACGTTTA", "3M1D3M"),         # missing T: the deletion sits at the first T
    ("GACACACAT", "GACACAT", "1M2I6M"),      # extra CA in a tandem repeat
    ("GACACAT", "GACACACAT", "1M2D6M"),      # missing CA in a tandem repeat
])
def test_indels_left_aligned(read, window, cigar):
    res = readalign.align([read], [window], mode="global")
    assert res.cigar(0) == cigar


def test_infix_coordinates_and_eqx():
    res = readalign.align(["ACGTAC"], ["TTTTACGAACTTT"], eqx=True)
    assert res.distance[0] == 1
    assert (res.ref_start[0], res.ref_end[0]) == (4, 10)
    assert res.cigar(0) == "3=1X2="


def test_n_never_matches_and_case_folds():
    res = readalign.align(["acgN", "NNNN"], ["ACGN", "NNNN"], mode="global")
    assert list(res.distance) == [1, 4]


def test_empty_sequences():
    res = readalign.align(["", "ACG", ""], ["ACG", "", ""], mode="global")
    assert list(res.distance) == [3, 3, 0]
    assert res.cigars() == ["3D", "3I", ""]
    res = readalign.align(["", "ACG"], ["ACG", ""], mode="infix")
    assert list(res.distance) == [0, 3]
    assert res.cigars() == ["", "3I"]


def test_max_distance_sentinels():
    reads, windows = random_pairs(3, 3000, 150, "ACGT")
    full = readalign.align(reads, windows)
    for cut in (0, 3, 10):
        res = readalign.align(reads, windows, max_distance=cut)
        within = full.distance <= cut
        np.testing.assert_array_equal(res.distance[within], full.distance[within])
        assert (res.distance[~within] == -1).all()
        assert (res.ref_start[~within] == -1).all()
        assert all(res.cigar(i) == "" for i in np.flatnonzero(~within)[:50])
        for i in np.flatnonzero(within)[:50]:
            assert res.cigar(i) == full.cigar(i)


@pytest.mark.slow
def test_quadrant_size_does_not_change_results():
    reads, windows = random_pairs(5, 2000, 200, "ACGT")
    base = readalign.align(reads, windows)
    for k in (4, 16, 32):
        res = readalign.align(reads, windows, k=k)
        np.testing.assert_array_equal(res.distance, base.distance)
        np.testing.assert_array_equal(res.cigar_ops, base.cigar_ops)
        np.testing.assert_array_equal(res.ref_start, base.ref_start)


def test_ten_kilobase_pair():
    edlib = require_module("edlib", "test-extra")
    rng = random.Random(11)
    t = "".join(rng.choice("ACGT") for _ in range(10_000))
    q = mutate(rng, t, 0.05, "ACGT")
    for mode, task in (("global", "NW"), ("infix", "HW")):
        res = readalign.align([q], [t], mode=mode)
        assert res.distance[0] == edlib.align(q, t, mode=task)["editDistance"]
        assert replay(res.cigar(0), q, t, int(res.ref_start[0]))[0] == res.distance[0]


def test_numpy_string_arrays_and_threads():
    reads = np.array(["ACGT", "GGGG"])
    windows = np.array(["AACGTT", "CCGGGGCC"])
    res = readalign.align(reads, windows, threads=1)
    assert list(res.distance) == [0, 0]
    as_bytes = readalign.align(reads.astype("S"), windows.astype("S"), threads=1)
    assert list(as_bytes.distance) == [0, 0]


@pytest.mark.parametrize(("kwargs", "exc", "text"), [
    ({"mode": "semiglobal"}, ValueError, "mode must be one of"),
    ({"mode": "local"}, ValueError, "needs a scoring"),
    ({"max_distance": -1}, ValueError, "max_distance"),
    ({"max_distance": 1.5}, TypeError, "max_distance"),
    ({"backend": "tpu"}, ValueError, "backend must be one of"),
    ({"k": 1}, ValueError, "quadrant size"),
])
def test_invalid_arguments(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        readalign.align(["ACGT"], ["ACGT"], **kwargs)


def test_invalid_inputs():
    with pytest.raises(ValueError, match="counts must match"):
        readalign.align(["A", "C"], ["A"])
    with pytest.raises(TypeError, match=r"reads\[1\]"):
        readalign.align(["A", 3], ["A", "C"])
    with pytest.raises(TypeError, match="single str"):
        readalign.align("ACGT", "ACGT")


def test_length_order_keeps_narrow_batches_and_sorts_wide_ones():
    from readalign.engine.batching import length_order

    rng = np.random.default_rng(3)
    m = np.full(1000, 150, np.int64)
    n = rng.integers(165, 176, 1000)
    assert np.array_equal(length_order(m, n), np.arange(1000))
    n_clipped = n.copy()
    n_clipped[[7, 500]] = 120  # windows clipped at a contig end: too few to sort for
    assert np.array_equal(length_order(m, n_clipped), np.arange(1000))
    n_clipped[:100] = 120  # a tenth of the pairs is no longer a few
    assert not np.array_equal(length_order(m, n_clipped), np.arange(1000))
    m_wide = rng.integers(30, 151, 1000)
    order = length_order(m_wide, n)
    keys = m_wide[order] * 1000 + n[order]
    assert sorted(order.tolist()) == list(range(1000))
    assert np.all(np.diff(keys) >= 0)


def test_narrow_batch_in_input_order_matches_oracle():
    """Fixed-length reads skip the sort; results and CIGARs still land on their pairs."""
    rng = random.Random(11)
    reads = ["".join(rng.choice("ACGT") for _ in range(60)) for _ in range(300)]
    windows = [r[: rng.randint(0, 1)] + "".join(rng.choice("ACGT") for _ in range(rng.randint(0, 1)))
               + r[rng.randint(0, 1):] for r in reads]
    windows[5] = reads[5][::-1]
    windows[9] = windows[9][:20]  # one short window: the batch stays in input order
    from readalign.engine.batching import narrow_lengths

    assert narrow_lengths(np.array([len(r) for r in reads]), np.array([len(w) for w in windows]))
    res = readalign.align(reads, windows, backend="cpu")
    for i, (q, t) in enumerate(zip(reads, windows)):
        check_alignment(res, i, q, t, "infix")


def test_in_order_pieces_are_concatenated():
    from readalign.engine.batching import _place_ops

    runs = [np.array([1, 2], np.uint32), np.array([3], np.uint32), np.array([4, 5, 6], np.uint32)]
    n_ops = np.array([2, 1, 3], np.int64)
    offsets = np.array([0, 2, 3, 6], np.int64)
    in_order = [(np.array([0]), runs[0]), (np.array([1, 2]), np.concatenate(runs[1:]))]
    assert _place_ops(in_order, n_ops, offsets, 3).tolist() == [1, 2, 3, 4, 5, 6]
    swapped = [(np.array([2]), runs[2]), (np.array([0, 1]), np.concatenate(runs[:2]))]
    assert _place_ops(swapped, n_ops, offsets, 3).tolist() == [1, 2, 3, 4, 5, 6]


def test_copy_into_spans_several_blocks():
    from readalign.runtime.host_copy import COPY_BLOCK, copy_into

    src = np.arange(2 * COPY_BLOCK + 5, dtype=np.uint32)
    dst = np.zeros(src.shape[0] + 10, np.uint32)
    copy_into(dst, 7, src)
    assert np.array_equal(dst[7:-3], src)
    assert not dst[:7].any() and not dst[-3:].any()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="abcd\u00e9\U0001f600", min_size=0, max_size=200),
       st.text(alphabet="abcd\u00e9\U0001f600", min_size=0, max_size=200))
def test_block_bit_parallel_distance_matches_plain_dp(a, b):
    """Myers' block algorithm (the long pairs' distance) against the plain DP, any lengths."""
    from readalign.kernels.words import myers_blocks

    codes = [np.frombuffer(s.encode("utf-32-le"), np.uint32) for s in (a, b)]
    want = dp_distance(a, b, infix=False)[0]
    assert myers_blocks(codes[0], 0, len(a), codes[1], 0, len(b), -1) == want
    limit = max(want - 1, 0)
    clipped = myers_blocks(codes[0], 0, len(a), codes[1], 0, len(b), limit)
    assert clipped == (want if want <= limit else limit + 1)


@pytest.mark.slow
def test_long_pairs_distance_only_in_linear_memory():
    """Two 100,000-symbol strings: exact (edlib), bit-parallel, with max_distance and mixed lengths."""
    edlib = require_module("edlib", "test-extra")
    rng = random.Random(8)
    a = "".join(rng.choice("acgt") for _ in range(100_000))
    b = list(a)
    for i in range(0, len(b), 40):
        b[i] = rng.choice("acgtx")
    del b[5_000:5_030]
    b = "".join(b)
    short = ("kitten", "sitting")
    got = readalign.edit_distance([a, short[0], a[:1500]], [b, short[1], b[:2500]], backend="cpu")
    want = [edlib.align(x, y)["editDistance"] for x, y in ((a, b), short, (a[:1500], b[:2500]))]
    assert got.tolist() == want
    capped = readalign.edit_distance([a, a[:1500]], [b, b[:2500]], max_distance=want[2],
                                     backend="cpu")
    assert capped.tolist() == [-1, want[2]]


def test_lists_read_in_place_pack_as_the_general_path_does(monkeypatch):
    """Lists of ASCII str or of bytes, read from the objects, give what the general path gives."""
    from readalign.engine import packing
    from readalign.engine.pylists import pyobjects

    def codes(p):
        return p.data[:-1].tolist(), p.offsets.tolist()

    class Str(str):
        pass

    assert pyobjects.layout() is not None  # CPython, 64-bit: the probe must match
    in_place = [["ACGT", "", "acgtN", "RYKM" * 40], ("TTT", "G"), ["ACG\x00", "A"],
                ["A" * 5000] + ["C"] * 10]
    general = [["ACGÉ", "ÅA"], ["AC", Str("GT")], ["A", "C\u20ac"]]
    for seqs in in_place + general:
        want = codes(packing.Packed(*_general(seqs)))
        assert codes(packing.pack_dna(seqs)) == want, seqs
        lazy = packing.pack_dna(seqs, lazy=True)
        assert codes(lazy) == want, seqs
        assert isinstance(lazy, pyobjects.StringRows) == (seqs in in_place), seqs
        if seqs in in_place:  # every element held while the rows live
            assert lazy.refs.pointers.tolist() == [id(x) for x in seqs]
        as_bytes = [s.encode("latin-1", errors="replace") for s in seqs]
        assert codes(packing.pack_dna(as_bytes)) == want
        text = packing.pack_text(seqs)
        assert text.data[:-1].tolist() == [ord(c) for c in "".join(seqs)], seqs
    with pytest.raises(TypeError, match=r"reads\[2\]: expected str, got bytes"):
        packing.pack_dna(["AC", "G", b"T"], "reads")
    with pytest.raises(TypeError, match=r"reads\[1\]: expected str, got NoneType"):
        packing.pack_dna(["AC", None], "reads")
    res = readalign.align(["ACGTTGCA", "acgN"], ["TTACGTAGCATT", "ACGA"], cigar=True)
    arr = readalign.align(np.array(["ACGTTGCA", "ACGN"], dtype="S"),
                          np.array(["TTACGTAGCATT", "ACGA"], dtype="S"), cigar=True)
    assert res.distance.tolist() == arr.distance.tolist() and res.cigars() == arr.cigars()
    monkeypatch.setattr(pyobjects, "layout", lambda: None)  # another Python: the general path
    assert not isinstance(packing.pack_dna(["AC"], lazy=True), pyobjects.StringRows)
    assert codes(packing.pack_dna(in_place[0])) == codes(packing.Packed(*_general(in_place[0])))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(max_codepoint=0x7F)), min_size=1, max_size=20),
       st.booleans())
def test_strings_read_in_place_equal_their_letters(seqs, as_bytes):
    """Any ASCII text (NUL, control letters, empty strings) reads back letter for letter."""
    from readalign.engine import packing

    items = [s.encode() for s in seqs] if as_bytes else seqs
    text = packing.pack_text(items)
    assert text.data[:-1].tolist() == list("".join(seqs).encode())
    assert np.diff(text.offsets).tolist() == [len(s) for s in seqs]
    dna = packing.pack_dna(items, lazy=True)
    assert dna.data[:-1].tolist() == packing.DNA_CODES[list("".join(seqs).encode())].tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text("ab\x00Z~", max_size=12), st.text("ab\x00Z~", max_size=12)),
                min_size=1, max_size=12),
       st.sampled_from(["list", "U array", "wide list"]), st.booleans())
def test_edit_distance_of_ascii_lists_against_wider_text(pairs, other, cigar):
    """ASCII str read in place as bytes compare by code point against any other str input."""
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    want = [dp_distance(x, y, infix=False)[0] for x, y in pairs]
    if other == "U array":
        b = np.array(b, dtype="U") if any(b) else np.array(b, dtype="U1")
        want = [dp_distance(x, str(y), infix=False)[0] for x, y in zip(a, b.tolist())]
    elif other == "wide list":
        a = a + ["a"]
        b = b + ["\u20aca"]  # a letter beyond one byte: that side keeps code points
        want = want + [1]
    got = readalign.edit_distance(a, b, backend="cpu", cigar=cigar)
    assert (got.distance if cigar else got).tolist() == want


def _general(seqs):
    """The general path's packing (join, Latin-1, translate), written out."""
    from readalign.engine import flatseq
    from readalign.engine.packing import DNA_CODES

    raw = "".join(seqs).encode("latin-1", errors="replace")
    flat = flatseq.translate(np.frombuffer(raw, dtype=np.uint8), DNA_CODES)
    data = np.zeros(flat.shape[0] + 1, np.uint8)
    data[:-1] = flat
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64)
    return data, offsets


def test_cigars_equal_cigar_of_each_pair():
    """The compiled all-pairs CIGAR text equals the per-pair strings (empty, S, =/X, long runs)."""
    s = readalign.Scoring(1, 4, 6, 1, clip_penalty=5)
    reads = ["", "ACGTTTTTTTTTGGGGGGGGGGGGGGGGG", "A" * 1234, "ACGT", "TTTTTTTTTTTTACGTACGTAAAA"]
    windows = ["ACGT", "ACGTTTTTTGGGGGGGGGGGGGGGGG", "A" * 1234, "", "ACGTACGTA"]
    for kwargs in ({"mode": "local", "scoring": s, "eqx": True}, {"mode": "global"},
                   {"mode": "infix", "eqx": True}):
        res = readalign.align(reads, windows, backend="cpu", **kwargs)
        assert res.cigars() == [res.cigar(i) for i in range(len(res))]
        assert "1234" in "".join(res.cigars())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-1, 300), max_size=40_000), st.integers(0, 2**31 - 1))
def test_parallel_scans_equal_numpy(values, seed):
    """The block-parallel prefix sums, bounds, sums and ranges equal numpy's, at any length (block
    edges too)."""
    from readalign.engine import flatseq

    rng = np.random.default_rng(seed)
    big = rng.integers(-1, 300, 50_001)  # several scan blocks, whatever hypothesis drew
    values = values + big[: int(rng.integers(0, 50_001))].tolist()
    v = np.array(values, dtype=np.int64).clip(0)
    count = v.shape[0]
    want = np.concatenate([[0], np.cumsum(v)])
    assert flatseq.offsets_of(v).tolist() == want.tolist()
    idx = rng.permutation(count).astype(np.int64)
    lo = int(rng.integers(0, count + 1))
    out = np.empty(count - lo + 1, np.int64)
    total = flatseq.chunk_offsets(v, idx, lo, count, out)
    assert out.tolist() == np.concatenate([[0], np.cumsum(v[idx[lo:]])]).tolist()
    assert total == int(v[idx[lo:]].sum())
    d = np.array(values, dtype=np.int32)
    slots = np.empty(count, np.int64)
    cap = np.where(d >= 0, 2 * d.astype(np.int64) + 1, 0)
    assert flatseq.cigar_slots(d, slots) == cap.sum()
    assert slots.tolist() == (np.cumsum(cap) - cap).tolist()
    w = v[::-1].copy()
    if count:
        assert flatseq.length_bounds(v, w) == (v.min(), v.max(), w.min(), w.max())
    assert flatseq.total_length(v, w) == int(v.sum() + w.sum())
    assert flatseq.iota(count).tolist() == list(range(count))
