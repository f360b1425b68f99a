"""Strong references to every element of a list, taken and dropped on every core.

The GPU staging reads a list's strings where CPython keeps them, long after
the call that read their lengths, so the call must keep every element alive.
``tuple(list)`` does that, but its reference counting visits every object
twice on one core: for 2M strings 38-54 ms on the H100 host (taking 21-29 ms,
dropping 17-26), as long as the GPU needs to align 1M pairs from fixed-width
arrays. Here helper threads change the counts while the calling thread keeps
the GIL, so no Python code runs meanwhile: one compiled call (without
``nogil``) starts them with ``pthread_create``, does a part itself and joins
them, running no Python bytecode in between, where the interpreter could hand
the GIL to another thread (numba's parallel regions release it, so they cannot
be used for this); joining the threads also makes their writes visible to it.
Each thread takes a range of the list's elements. One object may be in
several ranges (a list may hold it more than once), so every count changes
atomically: a thread first asks the cache for the object some elements ahead,
then adds to (or, dropping, compares and swaps) the low 32 bits of its count,
as CPython's own macros change a mortal object's count in every version with
the GIL. Before, each thread took the objects whose address fell in its share
of the address space, which kept the changes plain but made every thread scan
the whole list: for two lists of a million on the H100 host the take (with the
look at each header) took 9.4-10.5 ms and the drop 8.4-8.7, by ranges 4.4-5.5
and 3.1-3.9 (benchmarks/RESULTS.md, 2026-11-26, ``bcd7eb0``). Any other count (an
immortal object's, from 3.12) goes through ``Py_IncRef``/``Py_DecRef``, which
change nothing there. A helper thread never frees an object: where a count
could reach zero (the list let go of the element meanwhile), the calling thread
drops that reference afterwards.

Where that reasoning does not hold (a debug build, whose counting touches
per-thread state; a build without the GIL), where ``pthread_create`` is not
found, and for lists too short to share out, the references are a ``tuple``.
"""

from __future__ import annotations

import ctypes
import sys
import sysconfig
import weakref
from dataclasses import dataclass
from functools import cache

import numba
import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, prange, types
from numba.extending import intrinsic

from ...runtime.prefetch import prefetch, prefetch_read
from .rawmemory import (
    add_u32,
    bytes_at,
    decref_at,
    incref_at,
    load_u32,
    swap_u32,
    word,
    words_at,
)

THREADED_FROM = 1 << 19
"""Fewer elements are counted on the calling thread alone: helper threads share the cores
with numba's workers, which spin for a while after each parallel region: to take and drop
200,000 strings right after one, one thread took 3.0 ms and four 6.2 (H100 host)."""
PER_THREAD = 1 << 15
"""Elements per helper thread at least."""

_TAKE, _DROP = 0, 1
_COUNTED, _LOOK, _ROW = 7, 8, 14
"""Fields of a block (:func:`_blocks`): where its thread leaves its count, where the look's
fields (:class:`HeaderLook`) begin, and how many there are in all."""
AHEAD = 32
"""Elements ahead whose object a thread asks the cache for while it counts the current one:
each count is an atomic change of a line that is usually not in the cache."""
ORDINARY = 1 << 30
"""Counts below this are plain numbers in every CPython with the GIL; an immortal object's
count (3.12 on) is above it, and only the C API's own functions change those (for an
immortal object they change nothing)."""


@njit(cache=True)
def _header_size(obj, want_type, type_at, size_at, state_at, state_mask):
    """The size word of ``obj`` if its type word is ``want_type`` and its state byte has every
    bit of ``state_mask``, else -1 (:class:`HeaderLook`)."""
    if words_at(obj + type_at)[0] != want_type:
        return -1
    if state_mask and (bytes_at(obj + state_at)[0] & state_mask) != state_mask:
        return -1
    return words_at(obj + size_at)[0]


@njit(parallel=True, nogil=True, cache=True)
def _look_all(objects, want_type, type_at, size_at, state_at, state_mask, sizes):
    """:func:`_header_size` of every object into ``sizes`` (0 for a miss), on every core; the
    count of misses (the one-thread take's second pass)."""
    misses = 0
    for i in prange(objects.shape[0]):
        size = _header_size(objects[i], want_type, type_at, size_at, state_at, state_mask)
        sizes[i] = max(size, 0)
        misses += 1 if size < 0 else 0
    return misses


@njit(cache=True)
def _take_range(items, pointers, lo, hi, look):
    """Copy the item pointers ``lo:hi`` and take a reference to each object (an atomic add: the
    same object may be in another thread's range too); read its header as ``look`` asks
    (:class:`HeaderLook`; ``look[0] == 0``: not at all). The misses."""
    sizes = carray(words_at(look[0]), pointers.shape[0])  # read only when look[0] is an address
    misses = 0
    for i in range(lo, hi):
        if i + AHEAD < hi:
            ahead = words_at(items + 8 * (i + AHEAD))[0]
            prefetch(ahead)
            if look[0]:  # the state byte, read only, may be on the next line (a str's header
                prefetch_read(ahead + look[4])  # is 40 bytes)
        obj = words_at(items + 8 * i)[0]
        pointers[i] = obj
        if 0 < load_u32(obj) < ORDINARY:
            add_u32(obj, 1)
        else:
            incref_at(obj)
        if look[0]:
            size = _header_size(obj, look[1], look[2], look[3], look[4], look[5])
            sizes[i] = max(size, 0)
            misses += 1 if size < 0 else 0
    return misses


@njit(cache=True)
def _drop_range(pointers, lo, hi, last):
    """Drop the references ``lo:hi`` (atomically: the same object may be in another range),
    leaving (marked in ``last``) any that could free an object; how many it left."""
    marked = 0
    for i in range(lo, hi):
        if i + AHEAD < hi:
            prefetch(pointers[i + AHEAD])
        obj = pointers[i]
        while True:
            low = load_u32(obj)
            if low <= 1:
                last[i] = 1
                marked += 1
                break
            if low >= ORDINARY:
                decref_at(obj)
                break
            if swap_u32(obj, low, low - 1):
                break
    return marked


@njit(cache=True)
def _drop_marked(pointers, last):
    """Drop the marked references on the calling thread (which holds the GIL: objects may go)."""
    for i in range(pointers.shape[0]):
        if last[i]:
            decref_at(pointers[i])


@njit(cache=True)
def _run_part(block):
    """One thread's range of a take or a drop, as described by ``block`` (see :func:`_blocks`);
    its count (a take's misses, a drop's marked references) goes to ``block[_COUNTED]``."""
    op, items, count, parts, part = block[0], block[1], block[2], block[4], block[5]
    pointers = carray(words_at(block[3]), count)
    lo, hi = part * count // parts, (part + 1) * count // parts
    if op == _TAKE:
        block[_COUNTED] = _take_range(items, pointers, lo, hi, block[_LOOK:])
    else:
        block[_COUNTED] = _drop_range(pointers, lo, hi, carray(bytes_at(block[6]), count))


def _thread_main(arg):
    """A helper thread's start routine: its range of the work, described at ``arg``."""
    _run_part(carray(arg, _ROW, np.int64))
    return arg


@cache
def _start_routine() -> int:
    """Address of :func:`_thread_main` compiled as a C function, on first use.

    A ``cfunc`` compiles (or loads from numba's cache) when it is made: made at import,
    it cost every process about 0.1 s, threads or not.
    """
    return cfunc(types.voidptr(types.voidptr), cache=True)(_thread_main).address


def _c_function(arity: int):
    """A compiled ``f(address, *args)`` calling the C function at ``address`` with ``arity``
    pointer-sized arguments, returning its ``int``."""

    @intrinsic
    def call(typingctx, address, args):
        word = ir.IntType(64)

        def codegen(context, builder, signature, llargs):
            fnty = ir.FunctionType(ir.IntType(32), [word] * arity)
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            values = [builder.extract_value(llargs[1], i) for i in range(arity)]
            return builder.sext(builder.call(fn, values), word)
        return types.int64(types.int64, types.UniTuple(types.int64, arity)), codegen
    return call


_call2, _call4 = _c_function(2), _c_function(4)


@njit(cache=True)
def _run_all(blocks, handles, create, join, start_routine):
    """Every row of ``blocks`` on a thread of its own, the first on this one.

    Compiled without ``nogil`` and running no Python code, so the calling thread
    keeps the GIL from the first thread started to the last one joined. A row
    whose thread cannot be started runs here once the others are done.
    """
    parts = blocks.shape[0]
    row = blocks.strides[0]
    for w in range(1, parts):
        handles[w] = 0
        if _call4(create, (handles[w:].ctypes.data, 0, start_routine,
                           blocks.ctypes.data + w * row)) != 0:
            handles[w] = -1
    _run_part(blocks[0])
    for w in range(1, parts):
        if handles[w] != -1:
            _call2(join, (handles[w], 0))
    for w in range(1, parts):
        if handles[w] == -1:
            _run_part(blocks[w])


@cache
def _pthreads() -> tuple[int, int] | None:
    """Addresses of ``pthread_create`` and ``pthread_join``, or None where helper threads
    would be unsafe (a debug build, a build without the GIL) or are not found."""
    if hasattr(sys, "gettotalrefcount") or sysconfig.get_config_var("Py_GIL_DISABLED"):
        return None
    try:
        lib = ctypes.CDLL(None)
        return tuple(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                     for name in ("pthread_create", "pthread_join"))
    except (OSError, AttributeError, TypeError):
        return None


def helper_threads(count: int) -> int:
    """How many threads share the counting of ``count`` references (a power of two)."""
    if _pthreads() is None or count < THREADED_FROM:
        return 1
    n = max(1, min(numba.get_num_threads(), count // PER_THREAD))
    return 1 << (n.bit_length() - 1)


@dataclass
class HeaderLook:
    """What a threaded take also reads of each object it counts, in the same visit (a second
    pass over millions of objects misses the cache again): its type word at ``type_at``, the
    state byte at ``state_at`` and its size word at ``size_at``. An object whose type is
    ``want_type`` and whose state byte has every bit of ``state_mask`` gets its size in
    :attr:`References.sizes`; any other gets 0 and counts in :attr:`References.misses`."""

    want_type: int
    type_at: int
    size_at: int
    state_at: int
    state_mask: int

    def fields(self, sizes: np.ndarray) -> tuple[int, ...]:
        """What :func:`_take_range` reads as ``look``."""
        return (sizes.ctypes.data, self.want_type, self.type_at, self.size_at, self.state_at,
                self.state_mask)


def _blocks(op: int, items: int, pointers: np.ndarray, parts: int,
            last: np.ndarray | None = None, look: tuple[int, ...] | None = None) -> np.ndarray:
    """One row per thread: what :func:`_run_part` reads (``items``: a take's source, ``last``:
    a drop's marks)."""
    blocks = np.zeros((parts, _ROW), dtype=np.int64)
    blocks[:, :_LOOK] = (op, items, pointers.shape[0], pointers.ctypes.data, parts, 0,
                         0 if last is None else last.ctypes.data, 0)
    blocks[:, 5] = np.arange(parts)
    if look is not None:
        blocks[:, _LOOK:] = look
    return blocks


def _run(blocks: np.ndarray) -> None:
    """Each row of ``blocks`` on a thread of its own (or all here, where there are no threads)."""
    threads = _pthreads()
    if len(blocks) == 1 or threads is None:
        for block in blocks:
            _run_part(block)
        return
    _run_all(blocks, np.zeros(len(blocks), dtype=np.int64), *threads, _start_routine())


def _drop(pointers: np.ndarray, parts: int) -> None:
    if pointers.shape[0] == 0:
        return
    last = np.zeros(pointers.shape[0], dtype=np.uint8)
    blocks = _blocks(_DROP, 0, pointers, parts, last)
    _run(blocks)
    if blocks[:, _COUNTED].any():
        _drop_marked(pointers, last)


def items_of(seq: list | tuple, items_at: int) -> int:
    """Address of the item pointers of an exact ``list`` (held apart) or ``tuple`` (inline);
    ``items_at`` is their offset in the object (``ob_item``)."""
    at = id(seq) + items_at
    return word(at) if type(seq) is list else at


class References:
    """Every element of ``seq`` (an exact list or tuple) kept alive until :meth:`drop` or
    until this object is collected, whichever comes first.

    :attr:`pointers` holds the elements' addresses as they were when taken; a change
    to ``seq`` afterwards does not change what is held. With one thread (a short
    list, or no helper threads here) the references are a ``tuple``: CPython's own
    loop is as fast as a compiled one on one core. ``items_at`` is the offset of a
    list's or tuple's ``ob_item``. With ``look`` each element's header is read too
    (:class:`HeaderLook`) into :attr:`sizes` and :attr:`misses`: by the helper threads
    as they take the references, or in one parallel pass when there are none.
    """

    def __init__(self, seq: list | tuple, items_at: int, parts: int | None = None,
                 look: HeaderLook | None = None) -> None:
        count = len(seq)
        self.parts = helper_threads(count) if parts is None else parts
        if sys.byteorder != "little":
            self.parts = 1  # the threads change the low half of a count: little-endian only
        self._tuple: tuple | None = None
        self._finalizer = None
        self.sizes: np.ndarray | None = None
        self.misses: int | None = None
        if self.parts == 1:
            self._tuple = tuple(seq)  # an exact tuple is itself: immutable, it keeps its items
            if self._tuple is not seq:
                _gc_untrack(self._tuple)
            self.pointers = np.ctypeslib.as_array(
                (ctypes.c_int64 * count).from_address(items_of(self._tuple, items_at)))
            if look is not None:
                self.sizes = np.empty(count, dtype=np.int64)
                self.misses = int(_look_all(self.pointers, look.want_type, look.type_at,
                                            look.size_at, look.state_at, look.state_mask,
                                            self.sizes))
            return
        self.pointers = np.empty(count, dtype=np.int64)
        sizes = np.empty(count if look is not None else 0, dtype=np.int64)
        blocks = _blocks(_TAKE, items_of(seq, items_at), self.pointers, self.parts,
                         look=None if look is None else look.fields(sizes))
        if count:  # the GIL is kept from here to the last reference taken
            _run(blocks)
        if look is not None:
            self.sizes, self.misses = sizes, int(blocks[:, _COUNTED].sum())
        self._finalizer = weakref.finalize(self, _drop, self.pointers, self.parts)

    def drop(self) -> None:
        """Let go of the elements now (only the first call does anything)."""
        if self._finalizer is not None:
            self._finalizer()
        self._tuple = None
        self.pointers = self.pointers[:0]

    def __len__(self) -> int:
        return self.pointers.shape[0]


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
