"""Stream candidate windows (read, contig, start, end, strand) from PAF, TSV or SAM/BAM.

* **PAF** as minimap2 writes it (with or without ``-c``): the window is the
  target span extended by the query's unaligned ends, so the whole read fits.
* **TSV**: ``read_name  contig  start  end  strand``, 0-based half-open, one
  candidate per line; ``#`` comments and a header line starting with
  ``read_name`` are skipped.
* **SAM/BAM**: every mapped record is a candidate; its window is its
  reference span extended by its clipped ends.

The format comes from the file extension unless given. Coordinates are
checked against the reference; padding and clipping happen in the pair builder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InputError
from ._text import (
    as_text,
    display,
    fnv1a,
    gather_spans,
    line_ends,
    open_bytes,
    parse_int,
    read_chunk,
    split_fields,
)
from .reference import Reference

FORMATS = ("paf", "tsv", "sam", "bam")
CHUNK_LINES = 1 << 17
TEXT_CHUNK = 1 << 25
"""Bytes read from a PAF/TSV at a time."""


@dataclass
class CandidateChunk:
    """Candidates in file order; ``start``/``end`` may reach past the contig (clipped later)."""

    names: np.ndarray
    name_off: np.ndarray
    contig: np.ndarray  # int32
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    strand: np.ndarray  # int8: 0 forward, 1 reverse
    line: np.ndarray  # int64: line (text) or record (SAM/BAM) number

    def __len__(self) -> int:
        return self.contig.shape[0]

    def name(self, i: int) -> str:
        """Candidate ``i``'s read name."""
        return bytes(self.names[self.name_off[i]:self.name_off[i + 1]]).decode("latin-1")

    def take(self, lo: int, hi: int) -> CandidateChunk:
        """Candidates ``lo:hi`` as a new chunk."""
        a, b = self.name_off[lo], self.name_off[hi]
        return CandidateChunk(self.names[a:b], self.name_off[lo:hi + 1] - a,
                              self.contig[lo:hi], self.start[lo:hi], self.end[lo:hi],
                              self.strand[lo:hi], self.line[lo:hi])

    @staticmethod
    def concat(chunks: list[CandidateChunk]) -> CandidateChunk:
        """Join chunks in order."""
        if len(chunks) == 1:
            return chunks[0]
        base = np.cumsum([0] + [c.names.shape[0] for c in chunks[:-1]])
        shifted = [c.name_off[1:] + b for c, b in zip(chunks, base, strict=True)]
        off = np.concatenate([[0]] + shifted)
        return CandidateChunk(np.concatenate([c.names for c in chunks]), off.astype(np.int64),
                              *(np.concatenate([getattr(c, f) for c in chunks])
                                for f in ("contig", "start", "end", "strand", "line")))


def detect_format(path: str, override: str | None = None) -> str:
    """The candidate format: ``override`` if given, else from the extension."""
    if override:
        if override not in FORMATS:
            raise InputError(f"--candidates-format must be one of {', '.join(FORMATS)}")
        return override
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    fmt = {"paf": "paf", "tsv": "tsv", "txt": "tsv", "sam": "sam", "bam": "bam"}.get(ext)
    if fmt is None:
        raise InputError(f"{display(path)}: cannot tell the candidate format from the extension "
                         f"'.{ext}'; use --candidates-format {{{','.join(FORMATS)}}}")
    return fmt


@njit(cache=True, nogil=True, parallel=True)
def _lookup(buf, s, e, hashes_sorted, order, name_bytes, name_off):
    """Contig id of each name span ``buf[s[i]:e[i]]`` (-1 when unknown)."""
    n = s.shape[0]
    out = np.full(n, -1, np.int32)
    for i in prange(n):
        h = fnv1a(buf, s[i], e[i])
        k = np.searchsorted(hashes_sorted, h)
        while k < hashes_sorted.shape[0] and hashes_sorted[k] == h:
            c = order[k]
            a = name_off[c]
            ln = name_off[c + 1] - a
            if ln == e[i] - s[i]:
                same = True
                for x in range(ln):
                    if name_bytes[a + x] != buf[s[i] + x]:
                        same = False
                        break
                if same:
                    out[i] = c
                    break
            k += 1
    return out


@njit(cache=True, nogil=True, parallel=True)
def _ints(buf, fs, fe, cols):
    """Parse the integer fields ``cols`` of every line; return (values, first bad line, col)."""
    n = fs.shape[0]
    out = np.zeros((n, cols.shape[0]), np.int64)
    bad = np.full(n, -1, np.int64)
    for i in prange(n):
        for j in range(cols.shape[0]):
            v, ok = parse_int(buf, fs[i, cols[j]], fe[i, cols[j]])
            if not ok:
                bad[i] = cols[j]
                break
            out[i, j] = v
    for i in range(n):
        if bad[i] >= 0:
            return out, i, bad[i]
    return out, -1, -1


_PAF_INTS = np.array([1, 2, 3, 6, 7, 8], dtype=np.int64)


def _strands(arr, fs, fe, col: int) -> tuple[np.ndarray, int]:
    """Strand codes of column ``col``: 0 for '+', 1 for '-'; -1 and the line when bad."""
    s = fs[:, col]
    ok_len = (fe[:, col] - s) == 1
    ch = arr[s]
    strand = np.where(ch == ord("-"), 1, 0).astype(np.int8)
    bad = np.flatnonzero(~ok_len | ((ch != ord("+")) & (ch != ord("-"))))
    return strand, int(bad[0]) if bad.size else -1


class _TextCandidates:
    """Shared driver for the line formats: split lines, then interpret fields."""

    def __init__(self, path: str, ref: Reference, fmt: str) -> None:
        self.path, self.ref, self.fmt = path, ref, fmt
        self.nfields = 9 if fmt == "paf" else 5

    def _err(self, line: int, msg: str) -> InputError:
        return InputError(f"{display(self.path)}: line {line}: {msg}")

    def chunks(self) -> Iterator[CandidateChunk]:
        stream = open_bytes(self.path)
        with stream:
            rest = b""
            line0 = 1
            eof = False
            while not eof:
                chunk = read_chunk(stream, self.path, TEXT_CHUNK)
                eof = not chunk
                arr = np.frombuffer(rest + chunk if rest else chunk, np.uint8)
                ends = line_ends(arr, eof)
                for lo in range(0, ends.shape[0], CHUNK_LINES):
                    hi = min(lo + CHUNK_LINES, ends.shape[0])
                    fs, fe, nf, ls = split_fields(arr, ends, lo, hi, self.nfields)
                    out = self._interpret(arr, fs, fe, nf, ls, line0 + lo)
                    if len(out):
                        yield out
                line0 += ends.shape[0]
                used = int(ends[-1]) + 1 if ends.shape[0] else 0
                rest = arr[used:].tobytes()

    def _interpret(self, arr, fs, fe, nf, ls, line0: int) -> CandidateChunk:
        keep = nf > 0
        first = arr[ls]
        keep &= first != ord("#")
        if self.fmt == "tsv" and line0 == 1 and nf.shape[0] and nf[0] > 0:
            head = bytes(arr[fs[0, 0]:fe[0, 0]])
            if head == b"read_name":
                keep[0] = False
        rows = np.flatnonzero(keep)
        lineno = rows.astype(np.int64) + line0
        if rows.shape[0] < keep.shape[0]:  # copy only when comments or blank lines are dropped
            fs, fe, nf = fs[rows], fe[rows], nf[rows]
        short = np.flatnonzero(nf < self.nfields)
        if short.size:
            i = short[0]
            raise self._err(int(lineno[i]), f"expected at least {self.nfields} tab-separated "
                            f"fields for {self.fmt.upper()}, got {int(nf[i])}")
        names, name_off = gather_spans(arr, fs[:, 0], fe[:, 0])
        empty = np.flatnonzero(np.diff(name_off) == 0)
        if empty.size:
            raise self._err(int(lineno[empty[0]]), "empty read name")
        tcol = 5 if self.fmt == "paf" else 1
        contig = _lookup(arr, fs[:, tcol], fe[:, tcol], self.ref.hashes_sorted,
                         self.ref.hash_order, self.ref.name_bytes, self.ref.name_off)
        unknown = np.flatnonzero(contig < 0)
        if unknown.size:
            i = unknown[0]
            contig_name = as_text(arr, fs[i, tcol], fe[i, tcol])
            raise self._err(int(lineno[i]), f"unknown contig '{contig_name}' "
                            f"(not in {display(self.ref.path)})")
        scol = 4
        strand, bad = _strands(arr, fs, fe, scol)
        if bad >= 0:
            raise self._err(int(lineno[bad]), "strand must be '+' or '-', got "
                            f"'{as_text(arr, fs[bad, scol], fe[bad, scol])}'")
        cols = _PAF_INTS if self.fmt == "paf" else np.array([2, 3], np.int64)
        vals, bad, col = _ints(arr, fs, fe, cols)
        if bad >= 0:
            raise self._err(int(lineno[bad]), f"field {int(col) + 1} is not a non-negative "
                            f"integer: '{as_text(arr, fs[bad, col], fe[bad, col])}'")
        clen = self.ref.lengths[contig]
        if self.fmt == "paf":
            qlen, qs, qe, tlen, ts, te = vals.T
            wrong_len = np.flatnonzero(tlen != clen)
            if wrong_len.size:
                i = wrong_len[0]
                raise self._err(int(lineno[i]), f"target length {int(tlen[i])} differs from "
                                f"contig '{self.ref.names[contig[i]]}' ({int(clen[i])} bp) in "
                                f"{display(self.ref.path)}: a different reference?")
            badq = np.flatnonzero((qs > qe) | (qe > qlen))
            if badq.size:
                raise self._err(int(lineno[badq[0]]), "query start/end outside the query length")
        else:
            ts, te = vals.T
        outside = np.flatnonzero((ts >= te) | (te > clen))
        if outside.size:
            i = outside[0]
            raise self._err(int(lineno[i]), f"window {int(ts[i])}-{int(te[i])} is outside contig "
                            f"'{self.ref.names[contig[i]]}' (length {int(clen[i])}) or empty")
        if self.fmt == "paf":
            left = np.where(strand == 0, qs, qlen - qe)
            right = np.where(strand == 0, qlen - qe, qs)
            start, end = ts - left, te + right
        else:
            start, end = ts, te
        return CandidateChunk(names, name_off, contig, start.astype(np.int64),
                              end.astype(np.int64), strand, lineno)


def _sam_chunks(path: str, ref: Reference) -> Iterator[CandidateChunk]:
    import pysam

    name = display(path)
    try:
        aln = pysam.AlignmentFile(path, "r" if path.lower().endswith(".sam") else "rb",
                                  check_sq=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: cannot read as SAM/BAM ({exc})") from None
    with aln:
        tid_map = []
        for tname, tlen in zip(aln.references, aln.lengths, strict=True):
            c = ref.ids.get(tname, -1)
            tid_map.append(c)
            if c >= 0 and ref.lengths[c] != tlen:
                raise InputError(f"{name}: header: contig '{tname}' has length {tlen} but "
                                 f"{int(ref.lengths[c])} in {display(ref.path)}")
        rows: list[tuple] = []
        try:
            for rec_no, rec in enumerate(aln, start=1):
                if rec.is_unmapped:
                    continue
                c = tid_map[rec.reference_id]
                if c < 0:
                    raise InputError(f"{name}: record {rec_no}: unknown contig "
                                     f"'{rec.reference_name}' (not in {display(ref.path)})")
                cig = rec.cigartuples or []
                lead = sum(n for op, n in cig[:2] if op in (4, 5)) if cig else 0
                trail = sum(n for op, n in cig[-2:] if op in (4, 5)) if len(cig) > 1 else 0
                rs, re_ = rec.reference_start, rec.reference_end
                if re_ is None or re_ > ref.lengths[c]:
                    raise InputError(f"{name}: record {rec_no}: alignment outside contig "
                                     f"'{ref.names[c]}'")
                rows.append((rec.query_name.encode(), c, rs - lead, re_ + trail,
                             1 if rec.is_reverse else 0, rec_no))
                if len(rows) == CHUNK_LINES:
                    yield _rows_chunk(rows)
                    rows = []
        except OSError as exc:
            raise InputError(f"{name}: truncated or corrupt ({exc})") from None
        if rows:
            yield _rows_chunk(rows)


def _rows_chunk(rows: list[tuple]) -> CandidateChunk:
    names = [r[0] for r in rows]
    off = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(n) for n in names], out=off[1:])
    cols = list(zip(*rows, strict=True))
    return CandidateChunk(np.frombuffer(b"".join(names), np.uint8).copy(), off,
                          np.array(cols[1], np.int32), np.array(cols[2], np.int64),
                          np.array(cols[3], np.int64), np.array(cols[4], np.int8),
                          np.array(cols[5], np.int64))


def iter_candidates(path: str, ref: Reference, fmt: str | None = None) -> Iterator[CandidateChunk]:
    """Yield candidate chunks in file order (format from the extension unless ``fmt``)."""
    fmt = detect_format(path, fmt)
    if fmt in ("sam", "bam"):
        yield from _sam_chunks(path, ref)
    else:
        yield from _TextCandidates(path, ref, fmt).chunks()
