"""The reference genome: contig names and lengths, and bases loaded on first use.

Opened with htslib (``pysam.FastaFile``), which builds the ``.fai`` index
when it is missing (and ``.gzi`` for a bgzip-compressed FASTA). A FASTA
compressed with plain gzip cannot be indexed; it gets an error saying to
bgzip it. Contigs are held upper-cased in one flat ``uint8`` array whose
pages are filled only for contigs that candidates use. A plain FASTA's
contigs are read straight from the file where its index (checked against the
file when opened) says their lines are, and unwrapped on every core; a
bgzipped one's through htslib.
"""

from __future__ import annotations

import gzip
import os
import stat

import numpy as np
from numba import njit, prange

from ..errors import InputError
from ..kernels.loops import BYTES_SERIAL_BELOW, parallel_loop
from ..runtime.host_copy import copy_run
from ._fasta_index import fai_entries, refresh_index, seq_end
from ._text import GZIP_MAGIC, display, fnv1a

UNWRAP_BYTES = 1 << 25
"""Bytes of a plain FASTA read at a time when a contig is loaded."""
LINES_PER_TASK = 4096
"""FASTA lines per parallel task when a contig is unwrapped."""
FETCH_LINE = 1 << 12
"""Bases per "line" when htslib's fetched contig (no line ends) goes through :func:`_unwrap`."""


def _is_plain_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(18)
    if not head.startswith(GZIP_MAGIC):
        return False
    has_extra = len(head) > 3 and head[3] & 4
    return not (has_extra and head[12:14] == b"BC")


def _has_bases(path: str) -> bool:
    """Whether a FASTA holds at least one sequence line (read until the first one)."""
    with open(path, "rb") as raw:
        fh = gzip.GzipFile(fileobj=raw) if raw.read(2) == GZIP_MAGIC else raw
        fh.seek(0)
        try:
            return any(line.strip() and not line.startswith(b">") for line in fh)
        except (OSError, EOFError):
            return True


def _check_file(path: str) -> None:
    """A reference must be a non-empty regular file (htslib seeks in it)."""
    name = display(path)
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{name}: is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name}: not a regular file (a reference must be a FASTA file on "
                             "disk, which htslib indexes and seeks in)")
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise InputError(f"{name}: cannot open ({(exc.strerror or str(exc)).lower()})") from None
    if st.st_size == 0:
        raise InputError(f"{name}: empty file")


@njit(cache=True)
def _not_base(u) -> bool:
    """Not an upper-case ASCII letter, ``*`` or ``-`` (one comparison per class, no branch)."""
    return (np.uint8(u - np.uint8(65)) >= np.uint8(26)) & (u != np.uint8(42)) & (u != np.uint8(45))


@parallel_loop(size=3, serial_below=BYTES_SERIAL_BELOW)
def _unwrap(raw, line_bases, line_width, dst):
    """``dst`` = the bases of ``raw`` upper-cased, where ``raw`` holds lines of ``line_bases``
    bases every ``line_width`` bytes (the line end between). Returns the index in ``dst`` of
    the first byte that is not a letter, ``*`` or ``-`` (-1 if none).

    Each task copies its lines end to end, then upper-cases and checks them in one pass
    that LLVM vectorises (lines of 60-80 bases are too short for that one by one).
    """
    n = dst.shape[0]
    lines = (n + line_bases - 1) // line_bases
    tasks = (lines + LINES_PER_TASK - 1) // LINES_PER_TASK
    first = np.full(tasks, -1, np.int64)
    for task in prange(tasks):
        top = min(lines, (task + 1) * LINES_PER_TASK)
        for line in range(task * LINES_PER_TASK, top):
            d = line * line_bases
            k = min(line_bases, n - d)
            copy_run(dst[d:d + k], raw[line * line_width:line * line_width + k])
        lo = task * LINES_PER_TASK * line_bases
        hi = min(n, top * line_bases)
        bad = False
        for i in range(lo, hi):
            b = dst[i]
            u = b - np.uint8(32) if np.uint8(b - np.uint8(97)) < np.uint8(26) else b
            dst[i] = u
            bad |= _not_base(u)
        if bad:
            for i in range(lo, hi):
                if _not_base(dst[i]):
                    first[task] = i
                    break
    for task in range(tasks):
        if first[task] >= 0:
            return first[task]
    return -1


class Reference:
    """Contigs of a FASTA reference: ``names``, ``lengths``, bases on demand."""

    def __init__(self, path: str) -> None:
        import pysam  # loaded on first use, not when readalign is imported (start-up time)

        self.path = path
        name = display(path)
        _check_file(path)
        if _is_plain_gzip(path):
            raise InputError(f"{name}: compressed with plain gzip, which cannot be indexed; "
                             f"recompress with bgzip (gunzip -c {name} | bgzip > ref.fa.gz) "
                             "or decompress it")
        with open(path, "rb") as fh:
            head = fh.read(1)
        if head not in (b">", GZIP_MAGIC[:1]):
            raise InputError(f"{name}: line 1: not a FASTA file (expected '>')")
        try:
            refresh_index(path)
        except InputError:
            if not _has_bases(path):
                raise InputError(f"{name}: reference has no sequences") from None
            raise
        try:
            self._fasta = pysam.FastaFile(path)
        except (OSError, ValueError) as exc:
            if not _has_bases(path):
                raise InputError(f"{name}: reference has no sequences") from None
            raise InputError(f"{name}: cannot index as FASTA ({exc})") from None
        self.names: list[str] = list(self._fasta.references)
        if not self.names:
            raise InputError(f"{name}: reference has no sequences")
        self.lengths = np.asarray(self._fasta.lengths, dtype=np.int64)
        # plain FASTA: where each contig's lines are (name, length, offset, bases, width)
        self._lines = fai_entries(path + ".fai") if head == b">" else None
        self._file = None
        empty = np.flatnonzero(self.lengths == 0)
        if empty.size:
            raise InputError(f"{name}: contig '{self.names[empty[0]]}' has no bases")
        self.offsets = np.zeros(len(self.names) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.offsets[1:])
        self.ids = {n: i for i, n in enumerate(self.names)}
        # np.empty maps pages lazily: untouched contigs cost no memory
        self.flat = np.empty(int(self.offsets[-1]) + 1, dtype=np.uint8)
        self._loaded = np.zeros(len(self.names), dtype=bool)
        self._build_lookup()

    def _build_lookup(self) -> None:
        encoded = [n.encode() for n in self.names]
        self.name_bytes = np.frombuffer(b"".join(encoded), np.uint8).copy()
        self.name_off = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=self.name_off[1:])
        hashes = np.array([fnv1a(self.name_bytes, self.name_off[i], self.name_off[i + 1])
                           for i in range(len(encoded))], dtype=np.uint64)
        self.hash_order = np.argsort(hashes, kind="stable").astype(np.int64)
        self.hashes_sorted = hashes[self.hash_order]

    def ensure(self, contig_ids: np.ndarray) -> None:
        """Load the bases of these contigs (upper-cased) if not loaded yet."""
        wanted = np.unique(contig_ids)
        wanted = wanted[wanted >= 0]
        for c in wanted[~self._loaded[wanted]].tolist():
            dst = self.flat[self.offsets[c]:self.offsets[c + 1]]
            bad = self._read_lines(c, dst) if self._lines else self._fetch(c, dst)
            if bad >= 0:
                raise InputError(f"{display(self.path)}: contig '{self.names[c]}': byte "
                                 f"0x{dst[bad]:02x} at base {bad + 1} is not a base (an out-of-date "
                                 f"index? delete {display(self.path)}.fai to rebuild it)")
            self._loaded[c] = True

    def _read_lines(self, c: int, dst: np.ndarray) -> int:
        """Contig ``c`` of a plain FASTA into ``dst``, read where the index says its lines
        are, a few MB at a time; the first base that is not one, else -1."""
        name, length, offset, bases, width = self._lines[c]
        if name != self.names[c] or length != dst.shape[0]:
            raise InputError(f"{display(self.path)}: contig '{self.names[c]}' is not where "
                             f"the index says (delete {display(self.path)}.fai to rebuild it)")
        per_read = max(1, UNWRAP_BYTES // width)
        buf = np.empty(seq_end(min(length, per_read * bases), 0, bases, width), np.uint8)
        if self._file is None:  # kept open: a draft assembly has many small contigs
            self._file = open(self.path, "rb")  # noqa: SIM115 (closed by close())
        fh = self._file
        for first in range(0, (length + bases - 1) // bases, per_read):
            lo = first * bases
            hi = min(length, lo + per_read * bases)
            need = seq_end(hi - lo, 0, bases, width)
            fh.seek(offset + first * width)
            raw = buf[:need]
            if fh.readinto(memoryview(raw)) < need:
                raise InputError(f"{display(self.path)}: contig '{self.names[c]}' ends "
                                 f"before the index says (delete {display(self.path)}.fai "
                                 "to rebuild it)")
            bad = _unwrap(raw, bases, width, dst[lo:hi])
            if bad >= 0:
                return lo + bad
        return -1

    def _fetch(self, c: int, dst: np.ndarray) -> int:
        """Contig ``c`` through htslib (a bgzipped FASTA) into ``dst``; the first base that
        is not one, else -1."""
        try:
            seq = self._fasta.fetch(self.names[c])
        except (OSError, ValueError) as exc:
            raise InputError(f"{display(self.path)}: cannot read contig "
                             f"'{self.names[c]}' ({exc})") from None
        raw = np.frombuffer(seq.encode("latin-1"), np.uint8)
        if raw.shape[0] != dst.shape[0]:
            raise InputError(f"{display(self.path)}: contig '{self.names[c]}' has "
                             f"{raw.shape[0]} bases but the index says {dst.shape[0]}")
        return _unwrap(raw, FETCH_LINE, FETCH_LINE, dst)  # one run of bases: no line ends

    def close(self) -> None:
        """Release the FASTA handles."""
        self._fasta.close()
        if self._file is not None:
            self._file.close()
            self._file = None
