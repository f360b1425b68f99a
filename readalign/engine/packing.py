"""Turn user sequences into packed integer codes the kernels read.

Sequences of a batch are concatenated into one flat array with an offsets
array (``offsets[i]:offsets[i+1]`` is sequence ``i``), padded by one element
so kernels may read one symbol past an empty sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..runtime.arguments import sequence_list
from . import flatseq
from .pylists import StringRows, read_in_place

N_CODE = 4
"""DNA code of N (and of every non-ACGT symbol); it never matches."""
NO_N = -1
"""``n_code`` for text: every symbol may match."""

DNA_CODES = np.full(256, N_CODE, dtype=np.uint8)
"""Byte to DNA code: A/C/G/T (either case) to 0..3, every other byte to N."""
for _code, _base in enumerate(b"ACGT"):
    DNA_CODES[_base] = _code
    DNA_CODES[_base + 32] = _code


@dataclass(frozen=True)
class Packed:
    """Sequences as one flat code array plus offsets (int64, length count+1)."""

    data: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengths", np.diff(self.offsets))

    @property
    def code_dtype(self) -> np.dtype:
        """dtype of the codes."""
        return self.data.dtype

    def stage_into(self, idx: np.ndarray, lo: int, dst_off: np.ndarray, dst: np.ndarray, *,
                   translate: bool) -> None:
        """Sequences ``idx[lo:]`` concatenated into ``dst`` at ``dst_off`` (they are codes
        already: ``translate`` has nothing to do)."""
        flatseq.stage_flat(self.data, self.offsets, idx, lo, dst_off, dst)

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1


def take(p: Packed, idx: np.ndarray) -> Packed:
    """The sequences ``idx`` of ``p`` as a new packed list."""
    lengths = p.lengths[idx]
    offsets = np.zeros(idx.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.zeros(int(offsets[-1]) + 1, dtype=p.data.dtype)
    data[:-1] = flatseq.gather(p.data, p.offsets[idx], lengths, offsets)
    return Packed(data, offsets)


def _bad_element(seqs: Sequence, kind: type | None, what: str) -> TypeError:
    """The error naming the first element that is not of ``kind`` (the slow path, on failure only)."""
    accepted = (bytes, bytearray) if kind is bytes else kind
    for i, s in enumerate(seqs):
        if kind is None or not isinstance(s, accepted):
            return TypeError(
                f"{what}[{i}]: expected {'str or bytes' if kind is None else kind.__name__}, "
                f"got {type(s).__name__} (all elements must be str, or all bytes)")
    return TypeError(f"{what}: elements must be str, or bytes")


def _joined(seqs: Sequence, what: str) -> tuple[str | bytes, type, np.ndarray]:
    """Every sequence joined, their kind (``str`` or ``bytes``) and their offsets.

    The join checks each element's type in C; a mismatch (or a buffer whose length is
    not its byte count) is then named by a second, Python-level pass.
    """
    if len(seqs) == 0:
        return "", str, _lengths(seqs)
    first = seqs[0]
    kind = str if isinstance(first, str) else bytes if isinstance(first, (bytes, bytearray)) else None
    if kind is None:
        raise _bad_element(seqs, kind, what)
    try:
        raw = ("" if kind is str else b"").join(seqs)
        offsets = _lengths(seqs)
    except TypeError:
        raise _bad_element(seqs, kind, what) from None
    if len(raw) != offsets[-1]:
        raise _bad_element(seqs, kind, what)
    return raw, kind, offsets


def _lengths(seqs: Sequence) -> np.ndarray:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs)), out=offsets[1:])
    return offsets


def _with_pad(flat: np.ndarray) -> np.ndarray:
    out = np.zeros(flat.shape[0] + 1, dtype=flat.dtype)
    out[:-1] = flat
    return out


def _grid(arr: np.ndarray) -> np.ndarray:
    """A 1-D ``S``/``U`` array as a 2-D grid of its symbols (uint8 or uint32), no copy if contiguous."""
    width = arr.dtype.itemsize // (4 if arr.dtype.kind == "U" else 1)
    unit = np.uint32 if arr.dtype.kind == "U" else np.uint8
    return np.ascontiguousarray(arr).view(unit).reshape(arr.shape[0], max(width, 1))


class GridPacked:
    """Fixed-width strings kept as their NUL-padded grid; packed only when ``data`` is read.

    Offers :class:`Packed`'s ``data``/``offsets``/``lengths``; backends that can
    read the grid directly (the GPU stages rows straight into pinned buffers)
    skip the packing pass. numpy pads fixed-width strings with NULs, so a
    string's length is the position after its last non-NUL symbol.
    """

    def __init__(self, arr: np.ndarray, table: np.ndarray | None) -> None:
        self.grid = _grid(arr)
        self.table = table
        width = arr.dtype.itemsize
        self.lengths = (flatseq.fixed_width_lengths(self.grid) if width
                        else np.zeros(arr.shape[0], np.int64))

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each string starts in :attr:`data` (computed on first use; staging needs none)."""
        return flatseq.offsets_of(self.lengths)

    @property
    def code_dtype(self) -> np.dtype:
        """dtype of the packed codes."""
        return np.dtype(np.uint8) if self.table is not None else self.grid.dtype

    def stage_into(self, idx: np.ndarray, lo: int, dst_off: np.ndarray, dst: np.ndarray, *,
                   translate: bool) -> None:
        """Rows ``idx[lo:]`` concatenated into ``dst`` at ``dst_off``, through ``table`` when
        ``translate`` (and there is one), else as their bytes or code points."""
        use = translate and self.table is not None
        flatseq.stage_grid(self.grid, idx, lo, dst_off, self.table if use else DNA_CODES, use, dst)

    @cached_property
    def data(self) -> np.ndarray:
        """The packed codes (computed on first use)."""
        return flatseq.pack_all(self)

    def __len__(self) -> int:
        return self.lengths.shape[0]


AnyPacked = Packed | GridPacked | StringRows
"""Packed sequences in any of their forms: packed codes, a fixed-width grid, Python strings."""


def _fixed_width(arr: np.ndarray, table: np.ndarray | None) -> Packed:
    """Pack a 1-D ``S``/``U`` array without Python objects, through ``table`` if given."""
    lazy = GridPacked(arr, table)
    return Packed(lazy.data, lazy.offsets)


def _is_fixed_width(seqs: object) -> bool:
    return isinstance(seqs, np.ndarray) and seqs.ndim == 1 and seqs.dtype.kind in "SU"


def pack_dna(seqs: object, what: str = "sequences", lazy: bool = False) -> AnyPacked:
    """Pack DNA: case-folded, A/C/G/T to 0..3, anything else to N (4).

    ``lazy``: a fixed-width ``S``/``U`` array comes back as a :class:`GridPacked`, a list
    of ASCII ``str`` or of ``bytes`` as a :class:`~readalign.engine.pylists.StringRows`.
    """
    return pack_with(seqs, DNA_CODES, what, lazy)


def pack_with(seqs: object, table: np.ndarray, what: str = "sequences",
              lazy: bool = False) -> AnyPacked:
    """Pack letters through ``table`` (byte to code; str as Latin-1, anything else as ``?``)."""
    if _is_fixed_width(seqs):
        return GridPacked(seqs, table) if lazy else _fixed_width(seqs, table)
    rows = read_in_place(seqs, table)
    if rows is not None:
        return rows if lazy else Packed(rows.data, rows.offsets)
    raw, kind, offsets = _joined(sequence_list(seqs, what), what)
    if kind is str:
        raw = raw.encode("latin-1", errors="replace")
    flat = flatseq.translate(np.frombuffer(raw, dtype=np.uint8), table)
    return Packed(_with_pad(flat), offsets)


def check_alphabet(p: AnyPacked, invalid: int, what: str, alphabet: str) -> None:
    """ValueError naming the first sequence and position whose code is ``invalid``.

    A list read in place is checked in place, through its table, on every core (it
    stays unpacked: the GPU stages and translates its letters). Anything else is
    packed; ``invalid`` is the largest code (:data:`.scoring.INVALID`, 255), so a
    vectorised maximum finds whether there is one (4 ms for 60 MB on one core; the
    comparison array and its scan took 18 ms), and only then is it looked for.
    """
    if isinstance(p, StringRows) and p.table is not None:
        i, pos = p.first_code(invalid)
    else:
        codes = p.data[:-1]
        if codes.shape[0] == 0 or codes.max() < invalid:
            return
        bad = int(np.argmax(codes == invalid))
        i = int(np.searchsorted(p.offsets, bad, side="right")) - 1
        pos = bad - int(p.offsets[i])
    if i >= 0:
        raise ValueError(f"{what}[{i}]: position {pos} is not one of the scoring's letters "
                         f"({alphabet})")


def match_widths(a: AnyPacked, b: AnyPacked) -> None:
    """Give two text lists compared with each other one code width: ASCII ``str`` read in
    place (bytes) is widened to code points when the other side holds wider ones. Both hold
    the same kind, str or bytes (:func:`readalign.runtime.arguments.check_arguments`)."""
    for narrow, other in ((a, b), (b, a)):
        if isinstance(narrow, StringRows) and other.code_dtype.itemsize > narrow.code_dtype.itemsize:
            narrow.wide = True


def pack_text(seqs: object, what: str = "strings", lazy: bool = False) -> AnyPacked:
    """Pack text: str by Unicode code point (uint32), bytes by byte (uint8).

    ``lazy``: as for :func:`pack_dna`; a list of ASCII ``str`` then comes back as bytes
    (:class:`~readalign.engine.pylists.StringRows`), widened by :func:`match_widths`
    when the other side needs code points.
    """
    if _is_fixed_width(seqs):
        return GridPacked(seqs, None) if lazy else _fixed_width(seqs, None)
    rows = read_in_place(seqs, None)
    if rows is not None:
        if lazy:
            return rows
        rows.wide = rows.kind is str  # packed text keeps str as code points
        return Packed(rows.data, rows.offsets)
    raw, kind, offsets = _joined(sequence_list(seqs, what), what)
    if kind is str:
        flat = np.frombuffer(raw.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
    else:
        flat = np.frombuffer(raw, dtype=np.uint8)
    return Packed(_with_pad(flat), offsets)
