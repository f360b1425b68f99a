"""Compiled access to raw memory and to CPython's reference counts.

Used by :mod:`.pyobjects` (letters read where CPython keeps them) and
:mod:`.pyrefs` (references held on every core).
"""

from __future__ import annotations

import ctypes

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _pointer_to(item):
    """A compiled ``f(address)`` that reads the memory at ``address`` as ``item*``."""
    pointer = types.CPointer(item)

    @intrinsic
    def at(typingctx, address):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(pointer))
        return pointer(types.int64), codegen
    return at


def word(address: int) -> int:
    """The 64-bit word at ``address``, read from Python."""
    return ctypes.c_int64.from_address(address).value


bytes_at = _pointer_to(types.uint8)
words_at = _pointer_to(types.int64)


def _count_change(method: str):
    """A compiled ``f(address)`` that calls CPython's ``Py_IncRef``/``Py_DecRef`` on the object
    at ``address`` (the C API's own functions: they know immortal objects)."""

    @intrinsic
    def change(typingctx, address):
        def codegen(context, builder, signature, args):
            api = context.get_python_api(builder)
            getattr(api, method)(builder.inttoptr(args[0], api.pyobj))
            return context.get_dummy_value()
        return types.void(types.int64), codegen
    return change


incref_at = _count_change("incref")
decref_at = _count_change("decref")


_U32 = ir.IntType(32)


@intrinsic
def load_u32(typingctx, address):
    """The 32-bit word at ``address``, read atomically (other threads may change it)."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], _U32.as_pointer())
        return builder.zext(builder.load_atomic(ptr, "monotonic", 4), ir.IntType(64))
    return types.int64(types.int64), codegen


@intrinsic
def add_u32(typingctx, address, value):
    """Atomically add ``value`` to the 32-bit word at ``address``."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], _U32.as_pointer())
        builder.atomic_rmw("add", ptr, builder.trunc(args[1], _U32), "monotonic")
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def swap_u32(typingctx, address, expected, value):
    """Atomically set the 32-bit word at ``address`` to ``value`` if it is ``expected``;
    whether it was."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], _U32.as_pointer())
        pair = builder.cmpxchg(ptr, builder.trunc(args[1], _U32), builder.trunc(args[2], _U32),
                               "monotonic", "monotonic")
        return builder.extract_value(pair, 1)
    return types.boolean(types.int64, types.int64, types.int64), codegen
