"""The reference genome: contig names and lengths, and bases loaded on first use.

Opened with htslib (``pysam.FastaFile``), which builds the ``.fai`` index
when it is missing (and ``.gzi`` for a bgzip-compressed FASTA). A FASTA
compressed with plain gzip cannot be indexed; it gets an error saying to
bgzip it. Contigs are held upper-cased in one flat ``uint8`` array whose
pages are filled only for contigs that candidates use.
"""

from __future__ import annotations

import gzip
import os
import stat

import numpy as np
from numba import njit

from ..errors import InputError
from ._fasta_index import refresh_index
from ._text import GZIP_MAGIC, display, fnv1a


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
def _first_non_letter(data: np.ndarray) -> int:
    """Index of the first byte that is not an ASCII letter, ``*`` or ``-``; -1 if none."""
    for i in range(data.shape[0]):
        b = data[i]
        if not (65 <= b <= 90 or 97 <= b <= 122 or b == 42 or b == 45):
            return i
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
        for c in np.unique(contig_ids):
            c = int(c)
            if c < 0 or self._loaded[c]:
                continue
            try:
                seq = self._fasta.fetch(self.names[c])
            except (OSError, ValueError) as exc:
                raise InputError(f"{display(self.path)}: cannot read contig "
                                 f"'{self.names[c]}' ({exc})") from None
            data = np.frombuffer(seq.upper().encode("latin-1"), np.uint8)
            if data.shape[0] != self.lengths[c]:
                raise InputError(f"{display(self.path)}: contig '{self.names[c]}' has "
                                 f"{data.shape[0]} bases but the index says {self.lengths[c]}")
            bad = _first_non_letter(data)
            if bad >= 0:
                raise InputError(f"{display(self.path)}: contig '{self.names[c]}': byte "
                                 f"0x{data[bad]:02x} at base {bad + 1} is not a base (an out-of-date "
                                 f"index? delete {display(self.path)}.fai to rebuild it)")
            self.flat[self.offsets[c]:self.offsets[c + 1]] = data
            self._loaded[c] = True

    def close(self) -> None:
        """Release the FASTA handle."""
        self._fasta.close()
