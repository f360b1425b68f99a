"""readalign's ISA-L BGZF writer against htslib's reader, block by block."""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import subprocess

import numpy as np
import pysam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.bam.bgzf import BgzfWriter, compressor, deflate_threads
from readalign.bam.bgzf_isal import BLOCK, EOF_BLOCK, MAX_BLOCK, IsalBgzfWriter, isal_level
from readalign.bam.options import Options
from readalign.bam.run import run
from readalign.errors import OutputError
from tests.support.simulate import simulate

pytest.importorskip("isal")


def _write(path, pieces, level=1, threads=3, cls=IsalBgzfWriter) -> bytes:
    writer = cls(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), str(path), threads,
                 level)
    for piece in pieces:
        writer.write(piece)
    writer.close()
    return path.read_bytes()


def _blocks(raw: bytes) -> list[tuple[int, int]]:
    """(block size, uncompressed size) of every block, walking the BC fields as htslib does."""
    out, pos = [], 0
    while pos < len(raw):
        id1, id2, cm, flg, _mtime, _xfl, _os, xlen, si1, si2, slen, bsize = \
            struct.unpack_from("<4BI2BH2BHH", raw, pos)
        assert (id1, id2, cm, flg, xlen, si1, si2, slen) == (31, 139, 8, 4, 6, 66, 67, 2)
        size = bsize + 1
        out.append((size, struct.unpack_from("<I", raw, pos + size - 4)[0]))
        pos += size
    assert pos == len(raw)
    return out


def _records_stream(rng, n: int) -> bytes:
    """Bytes that compress like BAM records: repeated fields, random bases, quality runs."""
    parts = []
    for i in range(n):
        parts.append(f"read{i}\t{int(rng.integers(0, 5_000_000))}\t150M\t".encode())
        parts.append(rng.choice(np.frombuffer(b"ACGT", np.uint8), 150).tobytes())
        parts.append(bytes([30 + int(rng.integers(0, 10))]) * 150)
    return b"".join(parts)


@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_htslib_reads_back_every_byte(level, tmp_path):
    data = _records_stream(np.random.default_rng(level), 3000)
    raw = _write(tmp_path / "x.gz", [data[:1000], np.frombuffer(data[1000:], np.uint8)], level)
    assert raw.endswith(EOF_BLOCK)
    blocks = _blocks(raw)
    assert all(size <= MAX_BLOCK and usize <= BLOCK for size, usize in blocks)
    assert [u for _, u in blocks[:-2]] == [BLOCK] * (len(blocks) - 2)  # boundaries every BLOCK
    assert sum(u for _, u in blocks) == len(data)
    assert gzip.decompress(raw) == data
    with pysam.libcbgzf.BGZFile(str(tmp_path / "x.gz"), "rb") as fh:  # htslib's BGZF reader
        assert fh.read() == data
    if level == 0:
        assert len(raw) > len(data)  # stored, not compressed


def test_incompressible_and_empty_streams(tmp_path):
    noise = np.random.default_rng(1).integers(0, 256, 5 * BLOCK + 17, dtype=np.uint8).tobytes()
    raw = _write(tmp_path / "n.gz", [noise], 9)
    assert gzip.decompress(raw) == noise
    assert all(size <= MAX_BLOCK for size, _ in _blocks(raw))
    assert _write(tmp_path / "e.gz", [], 1) == EOF_BLOCK
    assert _write(tmp_path / "e2.gz", [b"", np.zeros(0, np.uint8)], 1) == EOF_BLOCK


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(0, 3 * BLOCK), max_size=6), threads=st.integers(1, 4))
def test_bytes_do_not_depend_on_how_writes_are_cut(cuts, threads, tmp_path_factory):
    data = _records_stream(np.random.default_rng(5), 1500)
    tmp = tmp_path_factory.mktemp("cuts")
    edges = [0, *sorted(min(c, len(data)) for c in cuts), len(data)]
    pieces = [data[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]
    assert _write(tmp / "a.gz", pieces, 1, threads) == _write(tmp / "b.gz", [data], 1, 1)


def test_levels_map_onto_isal():
    assert [isal_level(x) for x in range(10)] == [None, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    with pytest.raises(ValueError, match="0-9"):
        isal_level(10)


def test_a_full_disk_names_the_file(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    writer = IsalBgzfWriter(os.open("/dev/full", os.O_WRONLY), "out.bam", 2, 1)
    with pytest.raises(OutputError, match=r"out.bam: cannot write \(no space left on device\)"):
        writer.write(np.zeros(40 * BLOCK * 16, np.uint8))
        writer.close()
    writer.abandon()


def test_align_bam_equals_htslib_writer_record_for_record(tmp_path):
    """The pipeline's BAM through ISA-L and through htslib: the same records, quickcheck clean."""
    ref, reads, paf, _ = simulate(str(tmp_path), 1200, 50_000, 3)
    got = {}
    for name in ("auto", "htslib"):
        out = str(tmp_path / f"{name}.bam")
        summary = run(Options(reference=ref, reads=reads, candidates=paf, output=out,
                              backend="cpu", threads=2, bgzf_writer=name))
        assert (summary.deflate == "isal") == (name == "auto")
        if shutil.which("samtools"):
            subprocess.run(["samtools", "quickcheck", "-v", out], check=True)
        with pysam.AlignmentFile(out, "rb", check_sq=False) as fh:
            got[name] = (str(fh.header), [r.to_string() for r in fh])
    assert got["auto"] == got["htslib"]
    assert len(got["auto"][1]) == 1200


def test_writer_choice_is_checked(monkeypatch):
    with pytest.raises(ValueError, match="BGZF writer must be one of auto, isal, htslib"):
        compressor("zstd")
    monkeypatch.setattr("readalign.bam.bgzf.bgzf_isal.available", lambda: False)
    assert compressor("auto") in ("zlib", "libdeflate")
    with pytest.raises(ValueError, match="needs the isal package"):
        compressor("isal")


def test_htslib_writer_round_trips_through_the_same_checks(tmp_path):
    data = _records_stream(np.random.default_rng(3), 800)
    raw = _write(tmp_path / "h.gz", [data], 1, 2, cls=BgzfWriter)
    assert gzip.decompress(raw) == data and raw.endswith(EOF_BLOCK)


def test_isal_compresses_on_a_quarter_of_the_threads_htslib_on_all(monkeypatch):
    assert [deflate_threads(n, "isal") for n in (1, 2, 3, 8, 16, 64)] == [1, 2, 2, 2, 4, 16]
    assert [deflate_threads(n, "htslib") for n in (1, 16)] == [1, 16]
    monkeypatch.setattr("readalign.bam.bgzf.bgzf_isal.available", lambda: False)
    assert deflate_threads(16, "auto") == 16  # htslib's writer then


def test_the_pipeline_hands_its_writer_the_deflate_threads(tmp_path, monkeypatch):
    sizes = []
    real = IsalBgzfWriter.__init__

    def spy(self, fd, name, threads, level):
        sizes.append(threads)
        real(self, fd, name, threads, level)
    monkeypatch.setattr(IsalBgzfWriter, "__init__", spy)
    ref, reads, paf, _ = simulate(str(tmp_path), 50, 20_000, 2)
    run(Options(reference=ref, reads=reads, candidates=paf, output=str(tmp_path / "o.bam"),
                backend="cpu", threads=12))
    assert sizes == [3]
