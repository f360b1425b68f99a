"""Protein sequences read for a search: names, residues as matrix codes, offsets.

Residues are coded in the order of :data:`readalign.engine.matrices.ALPHABET` (the letters of
every matrix :class:`readalign.Scoring` knows by name), either case. A byte outside those 24
letters (``J``, ``O``, ``U``, ``-``, a digit) is read as ``X``, as BLAST reads residues its
matrix does not score; the count is logged once per file. An empty sequence, a repeated
name and a query longer than :data:`MAX_QUERY_LENGTH` are errors naming the file and the
record.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..engine.matrices import ALPHABET
from ..engine.packing import Packed, pack_with
from ..errors import InputError
from ..io._text import display
from ..io.reads import iter_reads

log = logging.getLogger("readalign")

X_CODE = ALPHABET.index("X")
"""Code of ``X``, which every residue outside the alphabet becomes."""
INVALID = 255
VALID_CODES = np.full(256, INVALID, np.uint8)
"""Byte to residue code: the alphabet's letters (either case), :data:`INVALID` for the rest."""
for _code, _letter in enumerate(ALPHABET):
    VALID_CODES[ord(_letter)] = _code
    VALID_CODES[ord(_letter.lower())] = _code
MAX_QUERY_LENGTH = 65_536
"""Longest query a search takes (residues): its traceback against the longest known protein
(about 35,000 residues) keeps boundaries of about ``m · n / 16`` bytes, some 140 MB."""


@dataclass
class Proteins:
    """Named protein sequences as one flat code array (``offsets[i]:offsets[i+1]`` is
    sequence ``i``, one pad code at the end) and their names in input order."""

    names: list[str]
    codes: np.ndarray
    offsets: np.ndarray
    replaced: int = 0  # residues read as X

    def __len__(self) -> int:
        return len(self.names)

    @property
    def lengths(self) -> np.ndarray:
        """Residues of each sequence (int64)."""
        return np.diff(self.offsets)

    @property
    def residues(self) -> int:
        """Residues of all sequences."""
        return int(self.offsets[-1])

    def packed(self) -> Packed:
        """The sequences as the engine reads them."""
        return Packed(self.codes, self.offsets)

    def sequence(self, i: int) -> np.ndarray:
        """Sequence ``i``'s codes."""
        return self.codes[self.offsets[i]:self.offsets[i + 1]]


def to_codes(raw: np.ndarray) -> tuple[np.ndarray, int]:
    """Bytes of residues as codes, every byte outside the alphabet as X; and how many were."""
    codes = VALID_CODES[raw]
    bad = codes == INVALID
    count = int(np.count_nonzero(bad))
    if count:
        codes[bad] = X_CODE
    return codes, count


def _say_replaced(where: str, count: int) -> None:
    if count:
        log.info("%s: %d residue(s) outside %s read as X (as BLAST reads them)", where, count,
                 ALPHABET)


def _check_records(where: str, names: list[str], lengths: np.ndarray, first: int,
                   max_length: int | None) -> None:
    """Empty sequences and (for queries) sequences past ``max_length`` are errors."""
    empty = np.flatnonzero(lengths == 0)
    if empty.size:
        i = int(empty[0])
        raise InputError(f"{where}: record {first + i + 1} ({names[i]}): empty sequence")
    if max_length is not None:
        long = np.flatnonzero(lengths > max_length)
        if long.size:
            i = int(long[0])
            raise InputError(f"{where}: record {first + i + 1} ({names[i]}): {lengths[i]:,} "
                             f"residues; a query may have at most {max_length:,}")


def _check_unique(where: str, names: list[str]) -> None:
    """A name may appear once: the report names hits by it."""
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        j = seen.setdefault(name, i)
        if j != i:
            raise InputError(f"{where}: record {i + 1} ({name}): repeats the name of record "
                             f"{j + 1}")


def read_proteins(path: str, max_length: int | None = None) -> Proteins:
    """Every record of the FASTA file ``path`` (plain or gzip; FASTQ is read too), checked.

    ``max_length``: the longest sequence allowed (queries); None: no limit.
    """
    where = display(path)
    names: list[str] = []
    pieces: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    replaced = 0
    for batch in iter_reads(path):
        batch_names = [batch.name(i) for i in range(len(batch))]
        _check_records(where, batch_names, np.diff(batch.seq_off), batch.first, max_length)
        codes, count = to_codes(batch.seq[:batch.seq_off[-1]])
        replaced += count
        names.extend(batch_names)
        pieces.append(codes)
        lengths.append(np.diff(batch.seq_off))
    _check_unique(where, names)
    _say_replaced(where, replaced)
    offsets = np.zeros(len(names) + 1, np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    codes = np.concatenate([*pieces, np.zeros(1, np.uint8)])
    return Proteins(names, codes, offsets, replaced)


def proteins_of(seqs: object, what: str, max_length: int | None = None) -> Proteins:
    """A list of ``str`` or ``bytes`` sequences (or a fixed-width numpy array) as
    :class:`Proteins` named by their index; the same checks as a file's records."""
    packed = pack_with(seqs, VALID_CODES, what)
    names = [str(i) for i in range(len(packed))]
    _check_records(what, names, packed.lengths, 0, max_length)
    codes = np.array(packed.data, np.uint8)
    bad = codes[:-1] == INVALID
    count = int(np.count_nonzero(bad))
    codes[:-1][bad] = X_CODE
    codes[-1] = 0
    _say_replaced(what, count)
    return Proteins(names, codes, np.asarray(packed.offsets, np.int64), count)
