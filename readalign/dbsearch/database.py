"""A protein database packed once: residues as codes in length order, names kept apart.

``readalign makedb`` writes it (``.radb``); a search reads it memory-mapped and copies one
chunk of residues at a time, so host memory holds a chunk, not the database. A FASTA
database is packed in memory the same way before a search.

The file is a header and five arrays, each starting at a multiple of 64 bytes:

- 8 bytes of magic, ``RADB\\x89\\r\\n\\x1a``, a little-endian uint32 format version
  (:data:`VERSION`) and a uint32 length, then that many bytes of JSON: the alphabet the codes
  index, the sequence and residue counts, and each array's offset, dtype and length;
- ``offsets`` (int64, sequences + 1): where each sequence starts in ``codes``, shortest
  first (equal lengths in file order), so that neighbouring sequences are equal work on
  the GPU;
- ``index`` (int64): the file record of each sequence in that order;
- ``codes`` (uint8, residues + 1): the residues, one pad code at the end;
- ``name_offsets`` (int64, sequences + 1) and ``names`` (UTF-8 bytes): the names in file
  order, read only for the hits a report names.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

from ..engine.matrices import ALPHABET
from ..engine.packing import Packed, take
from ..errors import InputError
from ..io._text import display
from ..runtime.outfiles import TempFile, output_error
from .sequences import Proteins

MAGIC = b"RADB\x89\r\n\x1a"
VERSION = 1
"""Format version: a reader refuses any other."""
ALIGN = 64
HEADER_ROOM = 1024
"""Bytes before the first array: the prefix and the JSON (a few hundred bytes)."""
_PREFIX = struct.Struct("<8sII")
SECTIONS = (("offsets", "<i8"), ("index", "<i8"), ("codes", "u1"), ("name_offsets", "<i8"),
            ("names", "u1"))


class Names:
    """Names as one UTF-8 byte array with offsets, read one at a time."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob = blob
        self.offsets = offsets

    @classmethod
    def of(cls, names: list[str]) -> Names:
        """Names from a list of ``str``."""
        encoded = [n.encode() for n in names]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), np.uint8), offsets)

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __getitem__(self, i: int) -> str:
        return bytes(self.blob[self.offsets[i]:self.offsets[i + 1]]).decode()


class Database:
    """Protein sequences in length order with their file records and names.

    Attributes
    ----------
    codes : numpy.ndarray
        uint8 residue codes (:data:`~readalign.engine.matrices.ALPHABET` order), shortest
        sequence first, one pad code at the end; memory-mapped when read from a file.
    offsets : numpy.ndarray
        int64, sequences + 1: ``codes[offsets[i]:offsets[i + 1]]`` is the ``i``-th shortest.
    index : numpy.ndarray
        int64: the file record (0-based) of each sequence in that order.
    names : Names
        The names in file order.
    path : str or None
        The ``.radb`` file it was read from.
    """

    def __init__(self, codes: np.ndarray, offsets: np.ndarray, index: np.ndarray, names: Names,
                 path: str | None = None) -> None:
        self.codes = codes
        self.offsets = np.asarray(offsets, np.int64)
        self.index = np.asarray(index, np.int64)
        self.names = names
        self.path = path
        self._positions: np.ndarray | None = None

    @classmethod
    def of(cls, proteins: Proteins) -> Database:
        """``proteins`` put in length order (ties in file order)."""
        order = np.argsort(proteins.lengths, kind="stable").astype(np.int64)
        packed = take(proteins.packed(), order)
        return cls(packed.data, packed.offsets, order, Names.of(proteins.names))

    def __len__(self) -> int:
        return self.index.shape[0]

    @property
    def residues(self) -> int:
        """Residues of all sequences."""
        return int(self.offsets[-1])

    @property
    def positions(self) -> np.ndarray:
        """The length-order position of each file record (the inverse of :attr:`index`)."""
        if self._positions is None:
            pos = np.empty(len(self), np.int64)
            pos[self.index] = np.arange(len(self), dtype=np.int64)
            self._positions = pos
        return self._positions

    def lengths_of(self, records: np.ndarray) -> np.ndarray:
        """Lengths of the file records ``records``."""
        pos = self.positions[records]
        return self.offsets[pos + 1] - self.offsets[pos]

    def chunk_bounds(self, max_residues: int) -> list[tuple[int, int]]:
        """Runs ``(lo, hi)`` of length-order positions holding at most ``max_residues``
        residues each (a longer sequence is a chunk of its own)."""
        bounds, lo, count = [], 0, len(self)
        while lo < count:
            limit = self.offsets[lo] + max_residues
            hi = int(np.searchsorted(self.offsets, limit, side="right")) - 1
            hi = min(max(hi, lo + 1), count)
            bounds.append((lo, hi))
            lo = hi
        return bounds

    def chunk(self, lo: int, hi: int) -> Packed:
        """Sequences ``lo:hi`` of the length order, copied into memory."""
        a, b = int(self.offsets[lo]), int(self.offsets[hi])
        data = np.empty(b - a + 1, np.uint8)
        data[:-1] = self.codes[a:b]
        data[-1] = 0
        return Packed(data, self.offsets[lo:hi + 1] - a)

    def records(self, records: np.ndarray) -> Packed:
        """The file records ``records``, in that order, copied into memory."""
        return take(Packed(self.codes, self.offsets), self.positions[records])


def _layout(db: Database) -> tuple[dict, list[np.ndarray]]:
    """The header's JSON and the arrays in file order."""
    arrays = [db.offsets, db.index, np.asarray(db.codes[:db.residues + 1]), db.names.offsets,
              db.names.blob]
    head = {"format": "readalign protein database", "version": VERSION, "alphabet": ALPHABET,
            "sequences": len(db), "residues": db.residues, "order": "length", "sections": {}}
    return head, arrays


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def write_database(db: Database, path: str) -> None:
    """Write ``db`` to ``path`` (under a temporary name, renamed once complete)."""
    head, arrays = _layout(db)
    start = HEADER_ROOM  # the JSON lists the sections' offsets, so they start past its room
    for (name, dtype), arr in zip(SECTIONS, arrays, strict=True):
        head["sections"][name] = [start, dtype, int(arr.shape[0])]
        start = _aligned(start + arr.shape[0] * np.dtype(dtype).itemsize)
    text = json.dumps(head).encode()
    first = head["sections"]["offsets"][0]
    if _PREFIX.size + len(text) > first:
        raise AssertionError("database header outgrew its room")
    tmp = TempFile(path)
    try:
        with os.fdopen(tmp.take_fd(), "wb") as fh:
            fh.write(_PREFIX.pack(MAGIC, VERSION, len(text)) + text)
            for (name, dtype), arr in zip(SECTIONS, arrays, strict=True):
                fh.seek(head["sections"][name][0])
                fh.write(np.ascontiguousarray(arr, dtype=dtype).tobytes())
            fh.truncate(start)
    except OSError as exc:
        tmp.discard()
        raise output_error(path, exc) from None
    except BaseException:
        tmp.discard()
        raise
    tmp.commit()


def is_database(path: str) -> bool:
    """Whether ``path`` starts with the packed database's magic."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _header(path: str) -> dict:
    where = display(path)
    try:
        with open(path, "rb") as fh:
            prefix = fh.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size or prefix[:8] != MAGIC:
                raise InputError(f"{where}: not a readalign protein database")
            _, version, size = _PREFIX.unpack(prefix)
            if version != VERSION:
                raise InputError(f"{where}: database format version {version}; this readalign "
                                 f"reads version {VERSION} (run readalign makedb again)")
            text = fh.read(size)
        head = json.loads(text)
    except InputError:
        raise
    except OSError as exc:
        raise InputError(f"{where}: cannot read ({(exc.strerror or str(exc)).lower()})") from None
    except (ValueError, UnicodeDecodeError):
        raise InputError(f"{where}: corrupt database header") from None
    if head.get("alphabet") != ALPHABET:
        raise InputError(f"{where}: residues coded over {head.get('alphabet')!r}, not {ALPHABET}")
    return head


def open_database(path: str) -> Database:
    """The database in ``path``, memory-mapped (only the offsets and record index are read)."""
    where = display(path)
    head = _header(path)
    size = os.path.getsize(path)
    arrays = {}
    try:
        for name, dtype in SECTIONS:
            start, _, count = head["sections"][name]
            if start + count * np.dtype(dtype).itemsize > size:
                raise InputError(f"{where}: truncated (section {name} ends past the file's end)")
            arrays[name] = np.memmap(path, dtype=dtype, mode="r", offset=start, shape=(count,))
    except InputError:
        raise
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}: corrupt database header") from None
    count, residues = head["sequences"], head["residues"]
    offsets = np.array(arrays["offsets"], np.int64)
    if offsets.shape[0] != count + 1 or offsets[-1] != residues or np.any(np.diff(offsets) < 0):
        raise InputError(f"{where}: corrupt database (sequence offsets)")
    names = Names(arrays["names"], np.array(arrays["name_offsets"], np.int64))
    return Database(arrays["codes"], offsets, np.array(arrays["index"], np.int64), names, path)
