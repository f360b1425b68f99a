"""Stream candidate windows (read, contig, start, end, strand) from PAF, TSV or SAM/BAM.

* **PAF** as minimap2 writes it (with or without ``-c``): the window is the
  target span extended by the query's unaligned ends, so the whole read fits;
  column 12, the mapper's MAPQ, is kept (it caps the MAPQ readalign writes).
* **TSV**: ``read_name  contig  start  end  strand``, 0-based half-open, one
  candidate per line; ``#`` comments and a header line starting with
  ``read_name`` are skipped.
* **SAM/BAM**: every mapped record is a candidate; its window is its
  reference span extended by its clipped ends; its MAPQ is kept as PAF's.

The format comes from the file extension unless given. Coordinates are
checked against the reference; padding and clipping happen in the pair builder.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ._cand_lines import NONAME, NOTINT, QSPAN, SHORT, STRAND, TLEN, UNKNOWN, parse_lines
from ._chunks import ChunkReader
from ._text import as_text, display, gather_spans, line_ends, line_span, open_bytes
from .formats import CANDIDATE_EXTENSIONS, CANDIDATE_FORMATS
from .reference import Reference

log = logging.getLogger("readalign")

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
    mapq: np.ndarray  # uint8: the upstream mapper's MAPQ, 255 when it gave none

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
                              self.strand[lo:hi], self.line[lo:hi], self.mapq[lo:hi])

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
                                for f in ("contig", "start", "end", "strand", "line", "mapq")))


def detect_format(path: str, override: str | None = None) -> str:
    """The candidate format: ``override`` if given, else from the extension
    (:data:`~.formats.CANDIDATE_EXTENSIONS`)."""
    if override:
        if override not in CANDIDATE_FORMATS:
            raise InputError(f"--candidates-format must be one of {', '.join(CANDIDATE_FORMATS)}")
        return override
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    fmt = CANDIDATE_EXTENSIONS.get(ext)
    if fmt is None:
        raise InputError(f"{display(path)}: cannot tell the candidate format from the extension "
                         f"'.{ext}'; use --candidates-format {{{','.join(CANDIDATE_FORMATS)}}}")
    return fmt


class _TextCandidates:
    """Shared driver for the line formats: split lines, then interpret fields."""

    def __init__(self, path: str, ref: Reference, fmt: str) -> None:
        self.path, self.ref, self.fmt = path, ref, fmt
        self.nfields = 9 if fmt == "paf" else 5

    def _err(self, line: int, msg: str) -> InputError:
        return InputError(f"{display(self.path)}: line {line}: {msg}")

    def chunks(self, allow_empty: bool = False) -> Iterator[CandidateChunk]:
        stream = open_bytes(self.path, allow_empty)
        if stream is None:
            log.info("%s: empty file, no candidates (--allow-empty)", display(self.path))
            return
        with stream:
            reader = ChunkReader(stream, self.path, TEXT_CHUNK)
            line0 = 1
            eof = False
            while not eof:
                arr, eof = reader.next()
                ends = line_ends(arr, eof)
                for lo in range(0, ends.shape[0], CHUNK_LINES):
                    hi = min(lo + CHUNK_LINES, ends.shape[0])
                    out = self._interpret(arr, ends, lo, hi, line0 + lo)
                    if len(out):
                        yield out
                line0 += ends.shape[0]
                reader.carry(arr, int(ends[-1]) + 1 if ends.shape[0] else 0)

    def _skip_header(self, arr: np.ndarray, ends: np.ndarray, line0: int) -> bool:
        """Whether the block's first line is a TSV header (first field ``read_name``)."""
        if self.fmt != "tsv" or line0 != 1 or not ends.shape[0]:
            return False
        s, e = line_span(arr, ends, 0)
        return bytes(arr[s:e]).split(b"\t", 1)[0] == b"read_name"

    def _interpret(self, arr, ends, lo: int, hi: int, line0: int) -> CandidateChunk:
        """Candidates of lines ``lo:hi`` (file line ``line0`` first), or the first error."""
        ref = self.ref
        tables = (ref.hashes_sorted, ref.hash_order, ref.name_bytes, ref.name_off, ref.lengths)
        keep, ns, ne, contig, start, end, strand, mapq, (bad, code, detail) = parse_lines(
            arr, ends, lo, hi, self._skip_header(arr, ends, line0), self.fmt == "paf", tables)
        if bad >= 0:
            raise self._line_error(arr, ends, lo + bad, line0 + bad, code, detail, contig[bad])
        rows = np.flatnonzero(keep)
        if rows.shape[0] < keep.shape[0]:  # copy only when comments or blank lines are dropped
            ns, ne, contig, start, end, strand, mapq = (
                x[rows] for x in (ns, ne, contig, start, end, strand, mapq))
        names, name_off = gather_spans(arr, ns, ne)
        return CandidateChunk(names, name_off, contig, start, end, strand,
                              rows.astype(np.int64) + line0, mapq)

    def _line_error(self, arr, ends, i: int, line: int, code: int, detail: int,
                    contig: int) -> InputError:
        """The message for error ``code`` on line index ``i`` (file line ``line``)."""
        s, e = line_span(arr, ends, i)
        fields = bytes(arr[s:e]).split(b"\t")
        spans = np.cumsum([s] + [len(f) + 1 for f in fields])

        def text(col: int) -> str:
            return as_text(arr, int(spans[col]), int(spans[col]) + len(fields[col]))

        ref, tcol = self.ref, 5 if self.fmt == "paf" else 1
        if code == SHORT:
            msg = (f"expected at least {self.nfields} tab-separated fields for "
                   f"{self.fmt.upper()}, got {detail}")
        elif code == NONAME:
            msg = "empty read name"
        elif code == UNKNOWN:
            msg = f"unknown contig '{text(tcol)}' (not in {display(ref.path)})"
        elif code == STRAND:
            msg = f"strand must be '+' or '-', got '{text(4)}'"
        elif code == NOTINT:
            msg = f"field {detail + 1} is not a non-negative integer: '{text(detail)}'"
        elif code == TLEN:
            msg = (f"target length {int(fields[6])} differs from contig '{ref.names[contig]}' "
                   f"({int(ref.lengths[contig])} bp) in {display(ref.path)}: a different reference?")
        elif code == QSPAN:
            msg = "query start/end outside the query length"
        else:
            ts, te = (int(fields[7]), int(fields[8])) if self.fmt == "paf" else \
                (int(fields[2]), int(fields[3]))
            msg = (f"window {ts}-{te} is outside contig '{ref.names[contig]}' "
                   f"(length {int(ref.lengths[contig])}) or empty")
        return self._err(line, msg)


def _sam_chunks(path: str, ref: Reference) -> Iterator[CandidateChunk]:
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

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
                             1 if rec.is_reverse else 0, rec_no, rec.mapping_quality))
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
                          np.array(cols[5], np.int64), np.array(cols[6], np.uint8))


def iter_candidates(path: str, ref: Reference, fmt: str | None = None,
                    allow_empty: bool = False) -> Iterator[CandidateChunk]:
    """Yield candidate chunks in file order (format from the extension unless ``fmt``).

    Each file is opened once (pipes work); an empty file yields nothing with
    ``allow_empty`` and is an error otherwise.
    """
    fmt = detect_format(path, fmt)
    if fmt in ("sam", "bam"):
        if allow_empty and os.path.isfile(path) and os.path.getsize(path) == 0:
            log.info("%s: empty file, no candidates (--allow-empty)", display(path))
            return
        yield from _sam_chunks(path, ref)
    else:
        yield from _TextCandidates(path, ref, fmt).chunks(allow_empty)
