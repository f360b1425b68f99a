"""Read a list of Python strings where CPython keeps their letters, on every core.

Handing numpy a list of ``str`` costs CPython 70-150 ns a string (one object
visit, one encode, one copy, on one core), which is more than the GPU spends
aligning the pair. A compact ASCII ``str`` and a ``bytes`` keep their letters
inline after a fixed header, so one compiled call reads each element's type,
length and letters straight from memory, in parallel, and lays the letters end
to end. The calling thread holds the GIL through that call, so no other thread
can change the list or free an element while it is read; no per-element Python
work is done (an earlier version took a ``tuple(list)`` to keep the elements
alive: its reference counting touched every object twice on one core, about
20 ns a string on the H100 host).

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
from numba import carray, njit, prange, types
from numba.extending import intrinsic

from ..runtime.host_copy import copy_run
from .flatseq import chunk_offsets

COMPACT_ASCII = 0x60
"""The ``compact`` and ``ascii`` bits of a ``str``'s state byte: its letters are inline bytes."""


def _pointer_to(item):
    """A compiled ``f(address)`` that reads the memory at ``address`` as ``item*``."""
    pointer = types.CPointer(item)

    @intrinsic
    def at(typingctx, address):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(pointer))
        return pointer(types.int64), codegen
    return at


_bytes_at = _pointer_to(types.uint8)
_words_at = _pointer_to(types.int64)


@dataclass(frozen=True)
class Layout:
    """Byte offsets in CPython's objects (64-bit builds)."""

    type_at: int = 8
    size_at: int = 16
    state_at: int = 32
    items_at: int = 24
    str_data: int = 0
    bytes_data: int = 0


@njit(parallel=True, cache=True)
def _copy_holding_gil(seq, is_list, want_type, ascii_only, type_at, size_at, state_at, data_at,
                      items_at):
    """The letters of every element of the list or tuple at ``seq``, laid end to end.

    Compiled without ``nogil``: the calling thread keeps the GIL from reading the container's
    items to the last copied letter (the loops run on numba's workers), so no other thread
    can change the container or free an element meanwhile. Returns ``(offsets, letters,
    bad)``; ``bad`` counts elements that do not qualify (nothing copied then).
    """
    count = _words_at(seq + size_at)[0]
    items = _words_at(seq + items_at)[0] if is_list else seq + items_at
    lengths = np.empty(count, dtype=np.int64)
    sources = np.empty(count, dtype=np.int64)
    bad = 0
    for i in prange(count):
        obj = _words_at(items + 8 * i)[0]
        ok = _words_at(obj + type_at)[0] == want_type
        if ok and ascii_only:
            ok = (_bytes_at(obj + state_at)[0] & COMPACT_ASCII) == COMPACT_ASCII
        sources[i] = obj + data_at
        lengths[i] = _words_at(obj + size_at)[0] if ok else 0
        bad += 0 if ok else 1
    offsets = np.zeros(count + 1, dtype=np.int64)
    if bad:
        return offsets, np.empty(1, dtype=np.uint8), bad
    total = chunk_offsets(lengths, None, 0, count, offsets)
    letters = np.empty(total + 1, dtype=np.uint8)
    for i in prange(count):
        n = lengths[i]
        copy_run(letters[offsets[i]:offsets[i] + n], carray(_bytes_at(sources[i]), (n,)))
    letters[total] = 0
    return offsets, letters, bad


@njit(parallel=True, nogil=True, cache=True)
def _stage(letters, offsets, idx, lo, dst_off, table, use_table, dst):
    """Elements ``idx[lo:]`` of ``letters`` concatenated at ``dst_off`` (through ``table``)."""
    count = dst_off.shape[0] - 1
    for i in prange(count):
        base = dst_off[i]
        n = dst_off[i + 1] - base
        src = offsets[idx[lo + i]]
        if use_table:
            for j in range(n):
                dst[base + j] = table[letters[src + j]]
        else:
            copy_run(dst[base:base + n], letters[src:src + n])
    dst[dst_off[count]] = 0


def _word(address: int) -> int:
    return ctypes.c_int64.from_address(address).value


def _matches(lay: Layout) -> bool:
    """Whether ``lay`` reads back what Python reports for sample objects."""
    samples = ("ACGT" * 9, "", "n", "\u00e9" * 3, "\u20ac")
    for s in samples:
        state = ctypes.c_uint8.from_address(id(s) + lay.state_at).value & COMPACT_ASCII
        if (_word(id(s) + lay.type_at) != id(str) or _word(id(s) + lay.size_at) != len(s)
                or (state == COMPACT_ASCII) != s.isascii()):
            return False
        if s.isascii() and ctypes.string_at(id(s) + lay.str_data, len(s)) != s.encode():
            return False
    for b in (b"ACGT" * 9, b"", b"\xff\x00"):
        if (_word(id(b) + lay.type_at) != id(bytes) or _word(id(b) + lay.size_at) != len(b)
                or ctypes.string_at(id(b) + lay.bytes_data, len(b)) != b):
            return False
    items = samples + (b"x",)
    listed = list(items)
    listed_at = _word(id(listed) + lay.items_at)
    return (_word(id(items) + lay.size_at) == len(items)
            and _word(id(listed) + lay.size_at) == len(listed)
            and all(_word(id(items) + lay.items_at + 8 * i) == id(x)
                    and _word(listed_at + 8 * i) == id(x) for i, x in enumerate(items)))


@cache
def layout() -> Layout | None:
    """CPython's object layout if this process's objects follow it, else None (probed once)."""
    if sys.implementation.name != "cpython" or struct.calcsize("P") != 8:
        return None
    lay = Layout(str_data=sys.getsizeof("") - 1, bytes_data=sys.getsizeof(b"") - 1)
    return lay if _matches(lay) else None


class StringRows:
    """A list of ASCII ``str`` (or of ``bytes``): its letters end to end, as they were read.

    Offers :class:`readalign.engine.packing.Packed`'s ``data``/``offsets``/``lengths``
    and ``stage_into``, with which the GPU stages the raw letters into pinned buffers
    (and translates them on the device). ``table`` maps bytes to codes; without one,
    letters stay their bytes: the code points of ASCII ``str`` fit a byte, so text is a
    quarter of the size of uint32 code points (``wide`` stages them as uint32, to match
    another input that needs them).
    """

    wide: bool = False

    def __init__(self, letters: np.ndarray, offsets: np.ndarray, kind: type,
                 table: np.ndarray | None) -> None:
        self.letters = letters
        self.offsets = offsets
        self.lengths = np.diff(offsets)
        self.kind = kind
        self.table = table

    @property
    def code_dtype(self) -> np.dtype:
        """dtype of the packed codes."""
        return np.dtype(np.uint32 if self.wide else np.uint8)

    def stage_into(self, idx: np.ndarray, lo: int, dst_off: np.ndarray, dst: np.ndarray, *,
                   translate: bool) -> None:
        """Elements ``idx[lo:]`` concatenated into ``dst`` at ``dst_off``, through ``table``
        when ``translate`` (and there is one), else as their bytes."""
        use = translate and self.table is not None
        _stage(self.letters, self.offsets, idx, lo, dst_off, self.table if use else _NO_TABLE,
               use, dst)

    @cached_property
    def data(self) -> np.ndarray:
        """The packed codes, one sentinel after the last (the letters themselves when neither
        a table nor widening applies)."""
        if self.table is None and not self.wide:
            return self.letters
        data = np.empty(self.offsets[-1] + 1, dtype=self.code_dtype)
        self.stage_into(np.arange(len(self), dtype=np.int64), 0, self.offsets, data, translate=True)
        return data

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
    return _copied(seqs, kind, lay, table)


def _copied(seqs: list | tuple, kind: type, lay: Layout, table: np.ndarray | None
            ) -> StringRows | None:
    """``seqs``'s letters copied end to end while this thread holds the GIL, as rows."""
    is_str = kind is str
    offsets, letters, bad = _copy_holding_gil(id(seqs), isinstance(seqs, list), id(kind), is_str,
                                              lay.type_at, lay.size_at, lay.state_at,
                                              lay.str_data if is_str else lay.bytes_data,
                                              lay.items_at)
    if bad:
        return None
    return StringRows(letters, offsets, kind, table)
