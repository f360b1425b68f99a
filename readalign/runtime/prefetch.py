"""Compiled cache hints: ask the CPU for the lines a loop reads or writes a few steps ahead.

A loop over addresses the hardware prefetcher cannot guess (one string object after another,
the rows of a grid in length order, reference counts) waits on memory at every step; asking
for the line some steps ahead overlaps those waits. A hint never faults.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_U32 = ir.IntType(32)


def _prefetcher(write: bool):
    """A compiled ``f(address)`` asking the CPU to bring the line at ``address`` into its
    caches, to be written (``write``) or read (a hint: it never faults)."""

    @intrinsic
    def prefetch(typingctx, address):
        def codegen(context, builder, signature, args):
            byte_ptr = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [byte_ptr, _U32, _U32, _U32])
            name = "llvm.prefetch.p0i8"  # LLVM renames it to its own form where pointers are opaque
            fn = builder.module.globals.get(name) or ir.Function(builder.module, fnty, name=name)
            builder.call(fn, [builder.inttoptr(args[0], byte_ptr), ir.Constant(_U32, int(write)),
                              ir.Constant(_U32, 3), ir.Constant(_U32, 1)])
            return context.get_dummy_value()
        return types.void(types.int64), codegen
    return prefetch


prefetch = _prefetcher(True)
"""The line at an address, to be written (a reference count)."""
prefetch_read = _prefetcher(False)
"""The line at an address, to be read (a string's letters)."""


LINE = 64
"""Bytes of a cache line."""


@njit(inline="always")
def prefetch_span(address, nbytes):
    """Ask for every cache line of ``nbytes`` from ``address``, to be read."""
    for at in range(address & -LINE, address + nbytes, LINE):
        prefetch_read(at)
