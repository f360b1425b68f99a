"""Read a list of Python strings where CPython keeps their letters, on every core.

Handing numpy a list of ``str`` costs CPython 70-150 ns a string (one object
visit, one encode, one copy, on one core), which is more than the GPU spends
aligning the pair. A compact ASCII ``str`` and a ``bytes`` keep their letters
inline after a fixed header, so compiled loops can read each element's type,
length and letters straight from memory, in parallel: the only per-element
work on the Python side is one C-level ``tuple(list)``, which also keeps every
element alive while the loops and the GPU staging read it (and, its elements being
strings, is taken off the cycle collector's lists, which would otherwise visit each one).

The header layout is probed once per process against what Python itself
reports (offsets, the compact/ASCII flags, a tuple's item pointers). Where it
does not match (another implementation or build) nothing here is used; where
an element is not an exact ``str`` of ASCII letters (or an exact ``bytes``)
the caller takes its general path, which names a bad element by index.
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
from .flatseq import offsets_of

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


@njit(parallel=True, nogil=True, cache=True)
def _scan(items, count, want_type, ascii_only, type_at, size_at, state_at, data_at):
    """Each element's letter address and length; the count of elements that do not qualify."""
    addresses = np.empty(count, dtype=np.int64)
    lengths = np.empty(count, dtype=np.int64)
    bad = 0
    for i in prange(count):
        obj = _words_at(items + 8 * i)[0]
        ok = _words_at(obj + type_at)[0] == want_type
        if ok and ascii_only:
            ok = (_bytes_at(obj + state_at)[0] & COMPACT_ASCII) == COMPACT_ASCII
        addresses[i] = obj + data_at
        lengths[i] = _words_at(obj + size_at)[0] if ok else 0
        bad += 0 if ok else 1
    return addresses, lengths, bad


@njit(parallel=True, nogil=True, cache=True)
def _stage(addresses, idx, lo, dst_off, table, use_table, dst):
    """Elements ``idx[lo:]`` concatenated at ``dst_off`` (through ``table``), as ``flatseq.stage_grid``."""
    count = dst_off.shape[0] - 1
    for i in prange(count):
        base = dst_off[i]
        n = dst_off[i + 1] - base
        src = carray(_bytes_at(addresses[idx[lo + i]]), (n,))
        if use_table:
            for j in range(n):
                dst[base + j] = table[src[j]]
        else:
            copy_run(dst[base:base + n], src)
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
    return all(_word(id(items) + lay.items_at + 8 * i) == id(x) for i, x in enumerate(items))


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

    def __init__(self, items: tuple, kind: type, addresses: np.ndarray, lengths: np.ndarray,
                 table: np.ndarray | None) -> None:
        self.items = items
        self.kind = kind
        self.addresses = addresses
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
        use = translate and self.table is not None
        _stage(self.addresses, idx, lo, dst_off, self.table if use else _NO_TABLE, use, dst)

    @cached_property
    def data(self) -> np.ndarray:
        """The packed codes, one sentinel after the last (computed on first use)."""
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
    items = tuple(seqs)
    is_str = kind is str
    addresses, lengths, bad = _scan(id(items) + lay.items_at, len(items), id(kind), is_str,
                                    lay.type_at, lay.size_at, lay.state_at,
                                    lay.str_data if is_str else lay.bytes_data)
    if bad:
        return None
    _gc_untrack(items)
    return StringRows(items, kind, addresses, lengths, table)


def _gc_untrack(items: tuple) -> None:
    """Take a tuple of ``str``/``bytes`` off the cycle collector's lists.

    Strings cannot form cycles, and CPython's collector untracks such a tuple
    itself, but only after visiting every element once per collection it
    survives: millions of cache misses inside the caller's timed work (0.12 s
    for two lists of a million 150-letter reads on the H100 host).
    """
    _untrack()(items)


@cache
def _untrack():
    """CPython's ``PyObject_GC_UnTrack``, typed once."""
    untrack = ctypes.pythonapi.PyObject_GC_UnTrack
    untrack.argtypes = [ctypes.py_object]
    untrack.restype = None
    return untrack
