"""Compiled access to raw memory and to CPython's reference counts.

Used by :mod:`readalign.engine.pyobjects` (letters read where CPython keeps
them) and :mod:`readalign.engine.pyrefs` (references held on every core).
"""

from __future__ import annotations

import ctypes

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
halves_at = _pointer_to(types.uint32)
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
