"""Stream reads from FASTQ, FASTA (plain or gzip) or unaligned BAM in batches.

Formats are recognised by content: ``@`` starts FASTQ, ``>`` FASTA, and a
BGZF stream holding ``BAM\\1`` an unaligned BAM. CRLF line endings are
accepted. Each batch holds names, bases and qualities as flat ``uint8``
arrays with offsets, so no Python object is built per read on the FASTQ path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InputError
from ._text import as_text, display, gather_spans, line_ends, line_span, open_bytes, read_chunk

FASTQ_CHUNK = 1 << 25
"""Bytes read from a FASTQ at a time."""
MAX_NAME = 254
"""Longest read name BAM allows."""


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


# error codes of the FASTQ scanner
_OK, _HEADER, _PLUS, _LENGTHS, _TRUNC, _SEQCHAR, _QUALCHAR, _NONAME, _LONGNAME, _EMPTY = range(10)


@njit(cache=True, nogil=True)
def _scan_fastq(buf, ends, line, final, cap, hl, ns, ne, ss, se, qs, qe):
    """Find the layout of up to ``cap`` 4-line FASTQ records, from line ``line`` of ``buf``.

    ``ends`` are the line ends of :func:`line_ends`. Checks the structure of
    each record (header, name, '+' line, lengths); the bytes of SEQ and QUAL
    are checked by :func:`_check_bytes`. Fills the header line of each record
    and the spans of its name, SEQ and QUAL. Returns (records, next line,
    error code, error line, detail a, detail b); line numbers are indices of ``ends``.
    """
    nl = ends.shape[0]
    r = 0
    while r < cap:
        while line < nl:  # skip blank lines between records
            s, e = line_span(buf, ends, line)
            if e > s:
                break
            line += 1
        if line >= nl:
            break
        h0, h1 = line_span(buf, ends, line)
        if buf[h0] != 64:  # '@'
            return r, line, _HEADER, line, 0, 0
        k = h0 + 1
        while k < h1 and buf[k] != 32 and buf[k] != 9:
            k += 1
        if k == h0 + 1:
            return r, line, _NONAME, line, 0, 0
        if k - h0 - 1 > MAX_NAME:
            return r, line, _LONGNAME, line, k - h0 - 1, 0
        if line + 1 >= nl:
            if final:
                return r, line, _TRUNC, line, 0, 0
            break
        if line + 2 >= nl:
            if final:
                return r, line, _TRUNC, line + 1, 0, 0
            break
        c0, c1 = line_span(buf, ends, line + 2)
        if c1 == c0 or buf[c0] != 43:  # '+'
            return r, line, _PLUS, line + 2, 0, 0
        if line + 3 >= nl:
            if final:
                return r, line, _TRUNC, line + 2, 0, 0
            break
        s0, s1 = line_span(buf, ends, line + 1)
        q0, q1 = line_span(buf, ends, line + 3)
        if s1 == s0:
            return r, line, _EMPTY, line + 1, 0, 0
        if s1 - s0 != q1 - q0:
            return r, line, _LENGTHS, line + 3, s1 - s0, q1 - q0
        hl[r] = line
        ns[r] = h0 + 1
        ne[r] = k
        ss[r] = s0
        se[r] = s1
        qs[r] = q0
        qe[r] = q1
        r += 1
        line += 4
    return r, line, _OK, 0, 0, 0


@njit(cache=True, nogil=True)
def _bad_byte(span, seq):
    """Position (1-based) and value of the first byte of ``span`` not allowed; (0, 0) if none."""
    bad = False
    for x in range(span.shape[0]):  # branch-free: vectorises; located below only if needed
        c = span[x]
        bad |= (c < 33) | (c > 126) | (seq & ((c == 64) | (c == 43)))
    if not bad:
        return 0, 0
    for x in range(span.shape[0]):
        c = span[x]
        if c < 33 or c > 126 or (seq and (c == 64 or c == 43)):
            return x + 1, c
    return 0, 0


@njit(cache=True, nogil=True, parallel=True)
def _check_bytes(buf, hl, ss, se, qs, qe):
    """The first record with a bad SEQ or QUAL byte: (code, line index, position, byte)."""
    n = ss.shape[0]
    code = np.zeros(n, np.int64)
    pos = np.zeros(n, np.int64)
    byte = np.zeros(n, np.int64)
    for r in prange(n):
        a, c = _bad_byte(buf[ss[r]:se[r]], True)
        if a:
            code[r], pos[r], byte[r] = _SEQCHAR, a, c
            continue
        a, c = _bad_byte(buf[qs[r]:qe[r]], False)
        if a:
            code[r], pos[r], byte[r] = _QUALCHAR, a, c
    for r in range(n):
        if code[r] != _OK:
            return code[r], hl[r] + (1 if code[r] == _SEQCHAR else 3), pos[r], byte[r]
    return _OK, 0, 0, 0


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
        _EMPTY: "empty sequence",
    }[code]
    return InputError(f"{where}: {msg}")


def _concat(parts: list[tuple[np.ndarray, ...]], first: int) -> ReadBatch:
    """Join scanned pieces (names, name_off, seq, seq_off, qual) into one batch."""
    if len(parts) == 1:
        nm, no, sq, so, ql = parts[0]
        return ReadBatch(nm, no, sq, so, ql, first)

    def join(flat_i: int, off_i: int) -> tuple[np.ndarray, np.ndarray]:
        flats = [p[flat_i] for p in parts]
        offs = [p[off_i] for p in parts]
        base = np.cumsum([0] + [f.shape[0] for f in flats[:-1]])
        off = np.concatenate([[0]] + [o[1:] + b for o, b in zip(offs, base, strict=True)])
        return np.concatenate(flats), off.astype(np.int64)

    nm, no = join(0, 1)
    sq, so = join(2, 3)
    ql = np.concatenate([p[4] for p in parts])
    return ReadBatch(nm, no, sq, so, ql, first)


def _scan_chunk(arr: np.ndarray, ends: np.ndarray, line: int, final: bool, cap: int,
                path: str, line0: int) -> tuple[tuple[np.ndarray, ...] | None, int, int]:
    """Up to ``cap`` records from line ``line``: (names, name_off, seq, seq_off, qual), next line."""
    idx = [np.empty(cap, np.int64) for _ in range(7)]
    got, nxt, code, eline, a, b = _scan_fastq(arr, ends, line, final, cap, *idx)
    hl, ns, ne, ss, se, qs, qe = (x[:got] for x in idx)
    bcode, bline, ba, bb = _check_bytes(arr, hl, ss, se, qs, qe)
    if bcode != _OK:
        code, eline, a, b = bcode, bline, ba, bb
    if code != _OK:
        start = line_span(arr, ends, int(eline))[0] if code == _HEADER else 0
        text = as_text(arr, start, start + 40) if code == _HEADER else ""
        raise _fastq_error(path, int(code), line0 + int(eline), int(a), int(b), text)
    if not got:
        return None, 0, int(nxt)
    names, name_off = gather_spans(arr, ns, ne)
    seq, seq_off = gather_spans(arr, ss, se)
    qual, _ = gather_spans(arr, qs, qe)
    return (names, name_off, seq, seq_off, qual), int(got), int(nxt)


def _iter_fastq(stream, path: str, batch_size: int) -> Iterator[ReadBatch]:
    rest = b""
    line0 = 1  # file line number of the buffer's first line
    first = 0
    parts: list[tuple[np.ndarray, ...]] = []
    pending = 0
    while True:
        chunk = read_chunk(stream, path, FASTQ_CHUNK)
        eof = not chunk
        arr = np.frombuffer(rest + chunk if rest else chunk, dtype=np.uint8)
        ends = line_ends(arr, eof)
        line = 0
        while True:
            cap = batch_size - pending
            part, got, line = _scan_chunk(arr, ends, line, eof, cap, path, line0)
            if part is not None:
                parts.append(part)
                pending += got
            if pending == batch_size:
                yield _concat(parts, first)
                first += pending
                parts, pending = [], 0
            if got < cap:
                break
        used = int(ends[line - 1]) + 1 if line > 0 else 0
        rest = arr[used:].tobytes()
        line0 += line
        if eof:
            if parts:
                yield _concat(parts, first)
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
    if not seq:
        raise InputError(f"{display(path)}: {where}: empty sequence")
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


def _iter_bam(path: str, batch_size: int) -> Iterator[ReadBatch]:
    import pysam

    names: list[bytes] = []
    seqs: list[bytes] = []
    quals: list[bytes] = []
    first = 0
    try:
        bam = pysam.AlignmentFile(path, "rb", check_sq=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{display(path)}: cannot read as BAM ({exc})") from None
    with bam:
        try:
            for rec_no, rec in enumerate(bam, start=1):
                if rec.is_secondary or rec.is_supplementary:
                    continue
                where = f"record {rec_no}"
                name = rec.query_name.encode()
                _check_name(path, where, name)
                seq = (rec.query_sequence or "").encode()
                _check_seq(path, where, seq)
                q = rec.query_qualities
                qual = bytes(x + 33 for x in q) if q is not None else b"I" * len(seq)
                if rec.is_reverse:
                    seq = seq.translate(_COMP)[::-1]
                    qual = qual[::-1]
                names.append(name)
                seqs.append(seq)
                quals.append(qual)
                if len(names) == batch_size:
                    yield _batch_from_lists(names, seqs, quals, first)
                    first += len(names)
                    names, seqs, quals = [], [], []
        except OSError as exc:
            raise InputError(f"{display(path)}: truncated or corrupt BAM ({exc})") from None
    if names:
        yield _batch_from_lists(names, seqs, quals, first)


def sniff_reads(path: str) -> str:
    """Return "fastq", "fasta" or "bam" from the first bytes of ``path``."""
    stream = open_bytes(path)
    try:
        head = stream.peek(4)[:4]
    except (OSError, EOFError) as exc:
        raise InputError(f"{display(path)}: corrupt compressed data ({exc})") from None
    finally:
        stream.close()
    if head.startswith(b"BAM\x01"):
        return "bam"
    if head.startswith(b"@"):
        return "fastq"
    if head.startswith(b">"):
        return "fasta"
    text = "".join(chr(c) if 32 <= c < 127 else "?" for c in head)
    raise InputError(f"{display(path)}: line 1: not FASTQ, FASTA or BAM "
                     f"(starts with '{text}')")


def iter_reads(path: str, batch_size: int = 200_000) -> Iterator[ReadBatch]:
    """Yield :class:`ReadBatch` es of at most ``batch_size`` reads, in file order."""
    fmt = sniff_reads(path)
    if fmt == "bam":
        yield from _iter_bam(path, batch_size)
        return
    stream = open_bytes(path)
    with stream:
        if fmt == "fastq":
            yield from _iter_fastq(stream, path, batch_size)
        else:
            yield from _iter_fasta(stream, path, batch_size)
