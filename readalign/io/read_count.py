"""About how many reads a reads file holds, from its size and its first few megabytes.

The workflow splits the reads into chunks before any job runs, so it needs the number of
reads when it builds its jobs: reading a file of hundreds of millions of reads to count
them would cost as much as a job. The file's size over the bytes its first records take
(compressed bytes, for gzip and BGZF files) is within a few percent for the uniform reads
of a sequencing run, and exact when the sample reaches the end of the file.
"""

from __future__ import annotations

import math
import os
import zlib

from .reads import reads_format

SAMPLE_BYTES = 4 << 20
"""Decompressed bytes read from the start of a text file (FASTQ, FASTA, SAM)."""

SAMPLE_RECORDS = 20_000
"""Records read from the start of a BAM file."""


def estimate_reads(path: str) -> int:
    """About how many reads ``path`` holds (exact for a file smaller than the sample).

    Parameters
    ----------
    path
        A reads file as ``readalign align`` reads it: FASTQ or FASTA (plain or gzip), SAM
        text or unaligned BAM.

    Returns
    -------
    int
        The estimate, 0 for an empty file.
    """
    fmt = reads_format(path)
    if fmt is None:
        return 0
    records, consumed, whole = (_bam_sample(path) if fmt == "bam" else _text_sample(path, fmt))
    if whole or records == 0:
        return records
    return math.ceil(os.path.getsize(path) * records / consumed)


def _text_sample(path: str, fmt: str) -> tuple[int, int, bool]:
    """(records, file bytes they took, whether the sample holds the whole file)."""
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        data, consumed, whole = _gzip_head(raw) if gz else _plain_head(raw)
    sampled = len(data)
    if not whole:
        data = data[:data.rfind(b"\n") + 1]  # whole lines only
    if fmt == "fastq":
        records = data.count(b"\n") // 4
    elif fmt == "fasta":
        records = data.count(b"\n>") + data.startswith(b">")
    else:  # SAM text: every line that is not a header
        records = data.count(b"\n") - data.count(b"\n@") - data.startswith(b"@")
    if whole:
        return records, consumed, True
    return records, max(1, consumed * len(data) // max(1, sampled)), False


def _plain_head(raw) -> tuple[bytes, int, bool]:
    """The first :data:`SAMPLE_BYTES` of a plain file, the bytes they took, whether that is all."""
    data = raw.read(SAMPLE_BYTES)
    return data, len(data), not raw.read(1)


FEED = 1 << 13
"""Compressed bytes fed to the decompressor at a time: the precision of the bytes taken."""


def _gzip_head(raw) -> tuple[bytes, int, bool]:
    """The first :data:`SAMPLE_BYTES` (or so) of a gzip or BGZF file decompressed, the
    compressed bytes they took, whether that is the whole file (members one after another)."""
    out: list[bytes] = []
    got = fed = 0
    inflate = zlib.decompressobj(31)
    while got < SAMPLE_BYTES:
        chunk = raw.read(FEED)
        if not chunk:
            return b"".join(out), fed, True
        fed += len(chunk)
        while chunk:
            piece = inflate.decompress(chunk)
            out.append(piece)
            got += len(piece)
            chunk = b""
            if inflate.eof:  # the next member starts in what is left
                chunk, inflate = inflate.unused_data, zlib.decompressobj(31)
    whole = not raw.read(1) and not inflate.unconsumed_tail
    return b"".join(out), fed, whole


def _bam_sample(path: str) -> tuple[int, int, bool]:
    """(records, compressed bytes they took, whether the sample holds the whole file)."""
    import pysam

    with pysam.AlignmentFile(path, "rb", check_sq=False) as bam:
        records, taken = 0, 0
        for _ in bam:
            if records == SAMPLE_RECORDS:  # one more record: the sample is not the whole file
                return records, max(1, taken), False
            records += 1
            taken = bam.tell() >> 16  # the compressed offset of the block the next one is in
    return records, 1, True
