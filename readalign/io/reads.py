"""Stream reads from FASTQ, FASTA, SAM text (plain or gzip) or unaligned BAM in batches.

Formats are recognised by content: ``@`` starts FASTQ, ``>`` FASTA, a SAM
header line (``@HD``, ``@SQ``, ``@RG``, ``@PG``, ``@CO`` and a tab) or a line
of SAM's eleven fields SAM text (what ``samtools import`` writes), and a BGZF
stream holding ``BAM\\1`` an unaligned BAM. SAM and BAM records are read
by one convention (:func:`_unaligned_record`). CRLF line endings are
accepted. Each batch holds names, bases and qualities as flat ``uint8``
arrays with offsets, so no Python object is built per read on the FASTQ path.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ._chunks import ChunkReader
from ._fastq_batch import BatchBuilder
from ._fastq_scan import (
    _BLANK,
    _HEADER,
    _LENGTHS,
    _LONGNAME,
    _NONAME,
    _OK,
    _PLUS,
    _QUALCHAR,
    _SEQCHAR,
    _TRUNC,
    MAX_NAME,
    scan_fast,
    scan_serial,
)
from ._text import as_text, display, line_ends, line_span, open_bytes

log = logging.getLogger("readalign")

FASTQ_CHUNK = 1 << 25
"""Bytes read from a FASTQ at a time."""


@dataclass
class ReadBatch:
    """A batch of reads as flat byte arrays (``*_off[i]:*_off[i+1]`` is read i)."""

    names: np.ndarray
    name_off: np.ndarray
    seq: np.ndarray
    seq_off: np.ndarray
    qual: np.ndarray | None  # phred+33 bytes, same offsets as seq; None for FASTA
    first: int  # index in the file of the batch's first read

    def __len__(self) -> int:
        return self.name_off.shape[0] - 1

    def name(self, i: int) -> str:
        """Read ``i``'s name as text."""
        return bytes(self.names[self.name_off[i]:self.name_off[i + 1]]).decode("latin-1")


def _fastq_error(path: str, code: int, line: int, a: int, b: int, text: str) -> InputError:
    where = f"{display(path)}: line {line}"
    msg = {
        _HEADER: f"expected a FASTQ header starting with '@', got '{text}'",
        _PLUS: "missing '+' separator line",
        _LENGTHS: f"SEQ and QUAL lengths differ ({a} vs {b})",
        _TRUNC: "truncated FASTQ record (file ends inside the record)",
        _SEQCHAR: f"invalid byte 0x{b:02x} at position {a} of SEQ",
        _QUALCHAR: f"invalid quality byte 0x{b:02x} at position {a} (not in '!'..'~')",
        _NONAME: "empty read name",
        _LONGNAME: f"read name of {a} characters (BAM allows at most {MAX_NAME})",
    }[code]
    return InputError(f"{where}: {msg}")


def _scan_chunk(arr: np.ndarray, ends: np.ndarray, line: int, final: bool, cap: int,
                path: str, line0: int) -> tuple[np.ndarray, int]:
    """Layout (records x 7) of up to ``cap`` checked records from line ``line``, and the next line.

    The parallel fast path covers the whole 4-line records ahead; a blank
    header line sends the scan to the serial scanner, which skips blank lines.
    """
    lay = np.empty((cap, 7), np.int64)
    full = min(cap, (ends.shape[0] - line) // 4)
    got, code, eline, a, b = scan_fast(arr, ends, line, full, lay)
    nxt = line + 4 * got
    if code == _BLANK:
        got, nxt, code, eline, a, b = scan_serial(arr, ends, line, final, cap, lay)
    elif code == _OK and got < cap:  # the last lines: an incomplete record or blank lines
        more, nxt, code, eline, a, b = scan_serial(arr, ends, nxt, final, cap - got, lay[got:])
        got += more
    if code != _OK:
        start = line_span(arr, ends, int(eline))[0] if code == _HEADER else 0
        text = as_text(arr, start, start + 40) if code == _HEADER else ""
        raise _fastq_error(path, int(code), line0 + int(eline), int(a), int(b), text)
    return lay[:got], int(nxt)


def _iter_fastq(stream, path: str, batch_size: int) -> Iterator[ReadBatch]:
    reader = ChunkReader(stream, path, FASTQ_CHUNK)
    line0 = 1  # file line number of the buffer's first line
    first = 0
    batch = BatchBuilder(batch_size)
    while True:
        arr, eof = reader.next()
        ends = line_ends(arr, eof)
        line = 0
        while True:
            cap = batch_size - batch.n
            lay, line = _scan_chunk(arr, ends, line, eof, cap, path, line0)
            batch.add(arr, lay)
            if batch.n == batch_size:
                yield ReadBatch(*batch.arrays(), first)
                first += batch.n
                batch = BatchBuilder(batch_size)
            if lay.shape[0] < cap:
                break
        used = int(ends[line - 1]) + 1 if line > 0 else 0
        reader.carry(arr, used)
        line0 += line
        if eof:
            if batch.n:
                yield ReadBatch(*batch.arrays(), first)
            return


def _batch_from_lists(names: list[bytes], seqs: list[bytes], quals: list[bytes] | None,
                      first: int) -> ReadBatch:
    def flat(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        off = np.zeros(len(items) + 1, np.int64)
        np.cumsum([len(x) for x in items], out=off[1:])
        return np.frombuffer(b"".join(items), np.uint8).copy(), off

    nm, no = flat(names)
    sq, so = flat(seqs)
    ql = flat(quals)[0] if quals is not None else None
    return ReadBatch(nm, no, sq, so, ql, first)


def _check_name(path: str, where: str, name: bytes) -> None:
    if not name:
        raise InputError(f"{display(path)}: {where}: empty read name")
    if len(name) > MAX_NAME:
        raise InputError(f"{display(path)}: {where}: read name of {len(name)} characters "
                         f"(BAM allows at most {MAX_NAME})")


def _check_seq(path: str, where: str, seq: bytes) -> None:
    """Bytes a sequence may not hold (an empty sequence is a read of length 0: unmapped)."""
    arr = np.frombuffer(seq, np.uint8)
    bad = np.flatnonzero((arr < 33) | (arr > 126) | (arr == 62))
    if bad.size:
        raise InputError(f"{display(path)}: {where}: invalid byte 0x{arr[bad[0]]:02x} "
                         f"at position {bad[0] + 1} of the sequence")


def _iter_fasta(stream, path: str, batch_size: int) -> Iterator[ReadBatch]:
    names: list[bytes] = []
    seqs: list[bytes] = []
    first = 0
    name: bytes | None = None
    name_line = 0
    parts: list[bytes] = []

    def finish() -> None:
        seq = b"".join(parts)
        _check_seq(path, f"line {name_line}", seq)
        names.append(name)
        seqs.append(seq)

    for lineno, raw in enumerate(stream, start=1):
        line = raw.rstrip(b"\r\n")
        if line.startswith(b">"):
            if name is not None:
                finish()
                if len(names) == batch_size:
                    yield _batch_from_lists(names, seqs, None, first)
                    first += len(names)
                    names, seqs = [], []
            name = line[1:].split(None, 1)[0] if line[1:].strip() else b""
            name_line = lineno
            _check_name(path, f"line {lineno}", name)
            parts = []
        elif name is None:
            if line.strip():
                text = line[:40].decode("latin-1")
                text = "".join(c if c.isprintable() else "?" for c in text)
                raise InputError(f"{display(path)}: line {lineno}: expected a FASTA header "
                                 f"starting with '>', got '{text}'")
        else:
            parts.append(line.strip())
    if name is not None:
        finish()
    if names:
        yield _batch_from_lists(names, seqs, None, first)


_COMP = bytes.maketrans(b"ACGTMRWSYKVHDBNacgtmrwsykvhdbn", b"TGCAKYWSRMBDHVNtgcakywsrmbdhvn")
NOT_PRIMARY = 0x900
"""SAM flags of secondary and supplementary records: not reads of their own, skipped."""
MATES = 0xC0
"""SAM flags of the first (0x40) and last (0x80) read of a template."""
MATE_SUFFIX = {0x40: b"/1", 0x80: b"/2"}
"""What a read's name gets for its mate flag (:func:`_unaligned_record`)."""
SAM_HEADER = re.compile(rb"@(HD|SQ|RG|PG|CO)\t")
"""A SAM header line's start (a FASTQ header is ``@`` and a name, without these tags)."""
SAM_RECORD = re.compile(rb"[!-?A-~]+\t\d+\t[^\t\n]*\t\d+\t\d+\t[^\t\n]*\t[^\t\n]*\t-?\d+\t-?\d+\t")
"""The start of a SAM record line, its first nine fields (SAM text without a header): QNAME
(never ``@`` or ``>``), FLAG, RNAME, POS, MAPQ, CIGAR, RNEXT, PNEXT, TLEN."""


Record = tuple[bytes, bytes, bytes]
"""A read as the readers hand it on: name, bases and phred+33 qualities, as sequenced."""


def _unaligned_record(path: str, where: str, name: bytes, flag: int, seq: bytes,
                      qual: bytes | None) -> Record | None:
    """A BAM or SAM record as the read it holds (None for a secondary or supplementary one).

    The inverse of ``samtools import``, as ``samtools fastq`` reads it: a record
    flagged first of a pair (0x40 alone) is named with ``/1`` appended, last of a
    pair (0x80 alone) ``/2``, which ``samtools import`` took off the FASTQ's names
    (so candidates a mapper found for that FASTQ name their reads); bases and
    qualities turned back to the sequenced strand when flag 16 is set; qualities of
    Q40 (``I``) where the record has none.
    """
    if flag & NOT_PRIMARY:
        return None
    name += MATE_SUFFIX.get(flag & MATES, b"")
    _check_name(path, where, name)
    _check_seq(path, where, seq)
    qual = b"I" * len(seq) if qual is None else qual
    if flag & 16:
        seq = seq.translate(_COMP)[::-1]
        qual = qual[::-1]
    return name, seq, qual


def _batches(records: Iterator[Record | None], batch_size: int) -> Iterator[ReadBatch]:
    """Records gathered into batches of ``batch_size`` (None entries skipped)."""
    names: list[bytes] = []
    seqs: list[bytes] = []
    quals: list[bytes] = []
    first = 0
    for rec in records:
        if rec is None:
            continue
        names.append(rec[0])
        seqs.append(rec[1])
        quals.append(rec[2])
        if len(names) == batch_size:
            yield _batch_from_lists(names, seqs, quals, first)
            first += len(names)
            names, seqs, quals = [], [], []
    if names:
        yield _batch_from_lists(names, seqs, quals, first)


def _bam_records(path: str) -> Iterator[Record | None]:
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

    try:
        bam = pysam.AlignmentFile(path, "rb", check_sq=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{display(path)}: cannot read as BAM ({exc})") from None
    with bam:
        try:
            for rec_no, rec in enumerate(bam, start=1):
                q = rec.query_qualities
                yield _unaligned_record(path, f"record {rec_no}", rec.query_name.encode(),
                                        rec.flag, (rec.query_sequence or "").encode(),
                                        bytes(x + 33 for x in q) if q is not None else None)
        except OSError as exc:
            raise InputError(f"{display(path)}: truncated or corrupt BAM ({exc})") from None


def _sam_field_error(path: str, lineno: int, what: str) -> InputError:
    return InputError(f"{display(path)}: line {lineno}: {what} (reading SAM text)")


def _sam_records(stream, path: str) -> Iterator[Record | None]:
    """The reads of SAM text (what ``samtools import`` writes): header lines, then records."""
    in_header = True
    for lineno, raw in enumerate(stream, start=1):
        line = raw.rstrip(b"\r\n")
        if line.startswith(b"@"):
            if not in_header:
                raise _sam_field_error(path, lineno, "header line after the first record")
            continue
        in_header = False
        if not line:
            continue
        f = line.split(b"\t", 11)
        if len(f) < 11:
            raise _sam_field_error(path, lineno, f"{len(f)} tab-separated fields where a "
                                                 "record has at least 11")
        if not f[1].isdigit():
            flag = as_text(np.frombuffer(f[1], np.uint8), 0, len(f[1]), 40)
            raise _sam_field_error(path, lineno, f"FLAG '{flag}' is not a number")
        seq = b"" if f[9] == b"*" else f[9]
        qual = None if f[10] == b"*" else f[10]
        if qual is not None:
            _check_sam_qual(path, lineno, seq, qual)
        yield _unaligned_record(path, f"line {lineno}", f[0], int(f[1]), seq, qual)


def _check_sam_qual(path: str, lineno: int, seq: bytes, qual: bytes) -> None:
    if len(qual) != len(seq):
        raise _sam_field_error(path, lineno, f"SEQ and QUAL lengths differ ({len(seq)} vs "
                                             f"{len(qual)})")
    arr = np.frombuffer(qual, np.uint8)
    bad = np.flatnonzero((arr < 33) | (arr > 126))
    if bad.size:
        raise _sam_field_error(path, lineno, f"invalid quality byte 0x{arr[bad[0]]:02x} at "
                                             f"position {bad[0] + 1} (not in '!'..'~')")


def _sniff(stream, path: str) -> str:
    """"fastq", "fasta", "sam" or "bam" from the first bytes of the (decompressed) stream."""
    try:
        start = stream.peek(1 << 12)
    except (OSError, EOFError) as exc:
        raise InputError(f"{display(path)}: corrupt compressed data ({exc})") from None
    head = start[:4]
    if head.startswith(b"BAM\x01"):
        return "bam"
    if SAM_HEADER.match(start) or SAM_RECORD.match(start):
        return "sam"
    if head.startswith(b"@"):
        return "fastq"
    if head.startswith(b">"):
        return "fasta"
    text = "".join(chr(c) if 32 <= c < 127 else "?" for c in head)
    raise InputError(f"{display(path)}: line 1: not FASTQ, FASTA, SAM or BAM "
                     f"(starts with '{text}')")


def reads_format(path: str) -> str | None:
    """The format :func:`iter_reads` reads ``path`` in, told by its content as it does: one of
    :data:`~.formats.READ_FORMATS` (plain or gzip), or None for an empty file (no reads).

    :class:`~readalign.errors.InputError` for content that is none of them.
    """
    stream = open_bytes(path, allow_empty=True)
    if stream is None:
        return None
    with stream:
        return _sniff(stream, path)


def iter_reads(path: str, batch_size: int = 200_000,
               allow_empty: bool = False) -> Iterator[ReadBatch]:
    """Yield :class:`ReadBatch` es of at most ``batch_size`` reads, in file order.

    The file is opened once, so pipes work; an empty file yields nothing with
    ``allow_empty`` and is an error otherwise.
    """
    stream = open_bytes(path, allow_empty)
    if stream is None:
        log.info("%s: empty file, no reads (--allow-empty)", display(path))
        return
    with stream:
        fmt = _sniff(stream, path)
        if fmt == "fastq":
            yield from _iter_fastq(stream, path, batch_size)
        elif fmt == "fasta":
            yield from _iter_fasta(stream, path, batch_size)
        elif fmt == "sam":
            yield from _batches(_sam_records(stream, path), batch_size)
        elif not os.path.isfile(path):
            raise InputError(f"{display(path)}: unaligned BAM must be read from a file, "
                             "not a pipe")
    if fmt == "bam":
        yield from _batches(_bam_records(path), batch_size)
