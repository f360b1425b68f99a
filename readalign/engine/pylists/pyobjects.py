"""Read a list of Python strings where CPython keeps their letters, on every core.

Handing numpy a list of ``str`` costs CPython 70-150 ns a string (one object
visit, one encode, one copy, on one core), which is more than the GPU spends
aligning the pair. A compact ASCII ``str`` and a ``bytes`` keep their letters
inline after a fixed header, so compiled loops can read each element's type,
length and letters straight from memory, in parallel. The only per-element
work outside them is keeping every element alive while the loops and the GPU
staging read it: :class:`.pyrefs.References`, which counts on
every core while this thread keeps the GIL (``tuple(list)`` did it on one core).

The header layout is probed once per process against what Python itself
reports (offsets, the compact/ASCII flags, a list's and a tuple's item
pointers). Where it does not match (another implementation or build) nothing
here is used; where an element is not an exact ``str`` of ASCII letters (or an
exact ``bytes``) the caller takes its general path, which names a bad element
by index.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
from numba import carray, njit, prange

from ...runtime.host_copy import copy_run
from ...runtime.prefetch import prefetch_span
from ..flatseq import STAGE_AHEAD, offsets_of, pack_all
from .pyrefs import HeaderLook, References, items_of
from .rawmemory import bytes_at, word

COMPACT_ASCII = 0x60
"""The ``compact`` and ``ascii`` bits of a ``str``'s state byte: its letters are inline bytes."""


@dataclass(frozen=True)
class Layout:
    """Byte offsets in CPython's objects (64-bit builds)."""

    type_at: int = 8
    size_at: int = 16
    state_at: int = 32
    items_at: int = 24
    str_data: int = 0
    bytes_data: int = 0


@njit(parallel=True, nogil=True, cache=True)
def _stage(objects, data_at, idx, lo, dst_off, table, use_table, dst):
    """Elements ``idx[lo:]`` concatenated at ``dst_off`` (through ``table``), as ``flatseq.stage_grid``."""
    count = dst_off.shape[0] - 1
    for i in prange(count):
        if i + STAGE_AHEAD < count:
            ahead = i + STAGE_AHEAD
            prefetch_span(objects[idx[lo + ahead]] + data_at, dst_off[ahead + 1] - dst_off[ahead])
        base = dst_off[i]
        n = dst_off[i + 1] - base
        src = carray(bytes_at(objects[idx[lo + i]] + data_at), (n,))
        if use_table:
            for j in range(n):
                dst[base + j] = table[src[j]]
        else:
            copy_run(dst[base:base + n], src)
    dst[dst_off[count]] = 0


@njit(parallel=True, nogil=True, cache=True)
def _first_code(objects, data_at, lengths, table, code):
    """``(i, pos)`` of the first element (lowest index) with a letter that ``table`` maps to
    ``code``, and that letter's position; ``(-1, -1)`` when there is none."""
    count = lengths.shape[0]
    where = np.full(count, -1, dtype=np.int64)
    for i in prange(count):
        src = carray(bytes_at(objects[i] + data_at), (lengths[i],))
        for j in range(lengths[i]):
            if table[src[j]] == code:
                where[i] = j
                break
    for i in range(count):
        if where[i] >= 0:
            return i, where[i]
    return -1, -1


def _matches(lay: Layout) -> bool:
    """Whether ``lay`` reads back what Python reports for sample objects."""
    samples = ("ACGT" * 9, "", "n", "\u00e9" * 3, "\u20ac")
    for s in samples:
        state = ctypes.c_uint8.from_address(id(s) + lay.state_at).value & COMPACT_ASCII
        if (word(id(s) + lay.type_at) != id(str) or word(id(s) + lay.size_at) != len(s)
                or (state == COMPACT_ASCII) != s.isascii()):
            return False
        if s.isascii() and ctypes.string_at(id(s) + lay.str_data, len(s)) != s.encode():
            return False
    for b in (b"ACGT" * 9, b"", b"\xff\x00"):
        if (word(id(b) + lay.type_at) != id(bytes) or word(id(b) + lay.size_at) != len(b)
                or ctypes.string_at(id(b) + lay.bytes_data, len(b)) != b):
            return False
    items = samples + (b"x",)
    listed = list(items)
    return all(word(items_of(items, lay.items_at) + 8 * i) == id(x)
               and word(items_of(listed, lay.items_at) + 8 * i) == id(x)
               for i, x in enumerate(items))


@cache
def layout() -> Layout | None:
    """CPython's object layout if this process's objects follow it, else None (probed once)."""
    if sys.implementation.name != "cpython" or struct.calcsize("P") != 8:
        return None
    lay = Layout(str_data=sys.getsizeof("") - 1, bytes_data=sys.getsizeof(b"") - 1)
    return lay if _matches(lay) else None


class StringRows:
    """A list of ASCII ``str`` (or of ``bytes``) read in place; packed only when ``data`` is read.

    Offers :class:`readalign.engine.packing.Packed`'s ``data``/``offsets``/``lengths``
    and ``stage_into``, with which the GPU stages the letters straight from the objects
    into pinned buffers. ``table`` maps bytes to codes; without one, letters stay their
    bytes: the code points of ASCII ``str`` fit a byte, so text is a quarter of the
    size of uint32 code points (``wide`` stages them as uint32, to match another
    input that needs them).
    """

    wide: bool = False

    def __init__(self, refs: References, kind: type, data_at: int, lengths: np.ndarray,
                 table: np.ndarray | None) -> None:
        self.refs = refs  # keeps every element alive while its letters may be read
        self.released = False
        self.kind = kind
        self.objects = refs.pointers  # element i's letters start at objects[i] + data_at
        self.data_at = data_at
        self.lengths = lengths
        self.table = table

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each string starts in :attr:`data` (computed on first use; staging needs none)."""
        return offsets_of(self.lengths)

    @property
    def code_dtype(self) -> np.dtype:
        """dtype of the packed codes."""
        return np.dtype(np.uint32 if self.wide else np.uint8)

    def stage_into(self, idx: np.ndarray, lo: int, dst_off: np.ndarray, dst: np.ndarray, *,
                   translate: bool) -> None:
        """Elements ``idx[lo:]`` concatenated into ``dst`` at ``dst_off``, through ``table``
        when ``translate`` (and there is one), else as their bytes."""
        self._check_held()
        use = translate and self.table is not None
        _stage(self.objects, self.data_at, idx, lo, dst_off, self.table if use else _NO_TABLE,
               use, dst)

    def first_code(self, code: int) -> tuple[int, int]:
        """``(element, position)`` of the first letter whose code is ``code`` (the table's code for
        letters it lacks), read in place on every core; ``(-1, -1)`` when none is."""
        self._check_held()
        i, pos = _first_code(self.objects, self.data_at, self.lengths, self.table, code)
        return int(i), int(pos)

    def _check_held(self) -> None:
        if self.released:
            raise RuntimeError("StringRows read after release(): its elements may be gone")

    def release(self) -> None:
        """Let go of the elements now: the caller reads no more letters (the GPU pipeline,
        once its last chunk is staged, so the references drop while the GPU still works)."""
        self.refs.drop()
        self.released = True

    @cached_property
    def data(self) -> np.ndarray:
        """The packed codes, one sentinel after the last (computed on first use)."""
        return pack_all(self)

    def __len__(self) -> int:
        return self.lengths.shape[0]


_NO_TABLE = np.arange(256, dtype=np.uint8)
"""Stands in for the table where none is applied (the compiled loop takes an array either way)."""


def read_strings(seqs: object, table: np.ndarray | None) -> StringRows | None:
    """``seqs`` read in place if it is a non-empty list or tuple of ASCII ``str`` or of ``bytes``.

    None when it is not (or the layout probe failed): the caller packs it the general way.
    """
    if not isinstance(seqs, (list, tuple)) or not seqs:
        return None
    kind = type(seqs[0])
    if kind is not str and kind is not bytes:
        return None
    lay = layout()
    if lay is None:
        return None
    if type(seqs) is not list and type(seqs) is not tuple:
        seqs = tuple(seqs)  # a subclass may iterate differently from its item pointers
    is_str = kind is str
    look = HeaderLook(id(kind), lay.type_at, lay.size_at, lay.state_at,
                      COMPACT_ASCII if is_str else 0)
    refs = References(seqs, lay.items_at, look=look)
    if refs.misses:
        refs.drop()
        return None
    return StringRows(refs, kind, lay.str_data if is_str else lay.bytes_data, refs.sizes, table)
