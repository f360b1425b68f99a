"""The pair builder: each candidate's oriented read and padded, clipped window, as engine codes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.bam.pairs import _encode, _encode_rc, build_pairs
from readalign.engine.packing import DNA_CODES
from readalign.io.reference import Reference

EVERY_BYTE = np.arange(256, dtype=np.uint8)


def revcomp_codes(src: np.ndarray) -> np.ndarray:
    """The oracle: the table's codes, reversed, A<->T and C<->G, N staying N."""
    codes = DNA_CODES[src][::-1]
    return np.where(codes < 4, 3 - codes, codes).astype(np.uint8)


def test_encoding_is_the_table_for_every_byte():
    dst = np.empty(256, np.uint8)
    _encode(dst, EVERY_BYTE)
    assert np.array_equal(dst, DNA_CODES)
    _encode_rc(dst, EVERY_BYTE)
    assert np.array_equal(dst, revcomp_codes(EVERY_BYTE))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40))
def test_reverse_complement_of_any_length(data):
    src = np.frombuffer(data, np.uint8)
    dst = np.full(src.shape[0] + 1, 99, np.uint8)  # one byte past the end stays untouched
    _encode_rc(dst[:-1], src)
    assert np.array_equal(dst[:-1], revcomp_codes(src)) and dst[-1] == 99


def test_pairs_orient_reads_and_pad_and_clip_windows(tmp_path):
    """Against Python slicing: reads reverse-complemented on '-', windows padded and clipped
    at both contig ends, lower-case and IUPAC bases in reads and reference."""
    rng = np.random.default_rng(11)
    letters = np.frombuffer(b"ACGTNacgtRY", np.uint8)
    contigs = [letters[rng.integers(0, 11, n)].tobytes() for n in (300, 57)]
    fasta = tmp_path / "ref.fa"
    fasta.write_bytes(b"".join(b">c%d\n%s\n" % (i, s) for i, s in enumerate(contigs)))
    ref = Reference(str(fasta))
    lens = rng.integers(0, 30, 40)
    seq_off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    seq = letters[rng.integers(0, 11, seq_off[-1])]
    read = np.sort(rng.integers(0, 40, 120)).astype(np.int64)
    contig = rng.integers(0, 2, 120).astype(np.int32)
    clen = np.array([len(c) for c in contigs])[contig]
    start = rng.integers(-5, clen)  # candidate spans may reach past the contig (PAF clips)
    end = np.minimum(start + rng.integers(1, 40, 120), clen + 5)
    strand = rng.integers(0, 2, 120).astype(np.int8)
    pad = 7
    pairs = build_pairs(seq, seq_off, read, contig, start, end, strand, ref, pad,
                        np.full(120, 255, np.uint8))
    for p in range(120):
        r = seq[seq_off[read[p]]:seq_off[read[p] + 1]]
        want_q = revcomp_codes(r) if strand[p] else DNA_CODES[r]
        ws, we = max(start[p] - pad, 0), min(end[p] + pad, clen[p])
        window = np.frombuffer(contigs[contig[p]].upper(), np.uint8)[ws:we]
        assert np.array_equal(pairs.q.data[pairs.q.offsets[p]:pairs.q.offsets[p + 1]], want_q)
        assert np.array_equal(pairs.t.data[pairs.t.offsets[p]:pairs.t.offsets[p + 1]],
                              DNA_CODES[window])
        assert pairs.win_start[p] == ws
