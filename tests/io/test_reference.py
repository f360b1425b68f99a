"""The reference's contigs as loaded: the same bases htslib fetches, upper-cased, whatever the
line width, line ends, case or compression; a byte that is not a base named by contig and
position."""

from __future__ import annotations

import string

import numpy as np
import pysam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.errors import InputError
from readalign.io import reference
from readalign.io.reference import Reference


def write_fasta(path, contigs, width, eol):
    """``contigs`` as (name, bases) in lines of ``width`` bases ending in ``eol``."""
    with open(path, "w", newline="") as fh:
        for name, seq in contigs:
            fh.write(f">{name} some description{eol}")
            for i in range(0, len(seq), width):
                fh.write(seq[i:i + width] + eol)


def loaded(ref: Reference) -> list[str]:
    ref.ensure(np.arange(len(ref.names)))
    return [bytes(ref.flat[ref.offsets[i]:ref.offsets[i + 1]]).decode()
            for i in range(len(ref.names))]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(string.ascii_letters + "*-", min_size=1, max_size=300), min_size=1,
                max_size=5),
       st.integers(1, 70), st.sampled_from(["\n", "\r\n"]), st.sampled_from([1, 3, 64, 1 << 20]))
def test_contigs_load_as_htslib_fetches_them(tmp_path_factory, seqs, width, eol, read_bytes):
    """Random line widths and ends, and reads of a few lines at a time (``UNWRAP_BYTES``
    small) so contigs cross many reads."""
    d = tmp_path_factory.mktemp("ref")
    contigs = [(f"c{i}", s) for i, s in enumerate(seqs)]
    write_fasta(d / "r.fa", contigs, width, eol)
    saved = reference.UNWRAP_BYTES
    reference.UNWRAP_BYTES = read_bytes
    try:
        ref = Reference(str(d / "r.fa"))
        got = loaded(ref)
    finally:
        reference.UNWRAP_BYTES = saved
    with pysam.FastaFile(str(d / "r.fa")) as fa:
        assert got == [fa.fetch(name).upper() for name, _ in contigs]
    assert got == [s.upper() for s in seqs]


def test_a_bgzipped_reference_loads_the_same(tmp_path):
    contigs = [("a", "ACGTacgtNNRY" * 50), ("b", "GGGttt")]
    write_fasta(tmp_path / "r.fa", contigs, 60, "\n")
    pysam.tabix_compress(str(tmp_path / "r.fa"), str(tmp_path / "r.fa.gz"))
    assert loaded(Reference(str(tmp_path / "r.fa.gz"))) == loaded(Reference(str(tmp_path / "r.fa")))


@pytest.mark.parametrize(("body", "bad", "base"), [("ACGT\nA1GT\nAC\n", 0x31, 6),
                                                   ("ACGT\nACGT\nACGT\nAC@T\nA\n", 0x40, 15),
                                                   ("acgt\nacgt\nac.\n", 0x2E, 11)])
def test_a_byte_that_is_not_a_base_is_named(tmp_path, body, bad, base):
    fa = tmp_path / "r.fa"
    fa.write_text(">x\nACGT\n>a\n" + body)
    ref = Reference(str(fa))
    ref.ensure(np.array([0]))  # contig x is fine
    with pytest.raises(InputError, match=f"r.fa: contig 'a': byte 0x{bad:02x} at base {base} "
                                         "is not a base"):
        ref.ensure(np.array([1]))
