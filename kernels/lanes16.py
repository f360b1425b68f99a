"""Two 16-bit cells in one 32-bit word: the lane operations of :mod:`.scored_packed`.

A word holds cell values of two pairs, the first in the low half, the second in the high
half. The scored pass holds signed values: :func:`signed_ops` (each half taken out, worked on
as an integer and put back: the CPU's and the simulator's build) and :func:`signed_dpx_ops`
(``add.s16x2``, ``max.s16x2``, ``max.relu.s16x2``, ``max.u16x2``; sm_90). ``add2`` adds per
half modulo 2**16, ``max2`` and ``relu3`` (the maximum of three and 0) compare the halves as
int16, ``umax2`` as uint16.

Both sets also pack a working-row word of the scored pass, one byte per value:
``row_word(h, d)`` keeps the low byte of each half of ``h`` (a value in ``0..255``) and of
``d`` (in ``-128..127``); ``row_h(w)`` gives back the two ``h`` halves, ``row_d(w)`` the two
``d`` halves sign-extended. On the GPU each is one ``prmt`` (byte permute).

The unsigned minima of the distance-only ablation pass are in
(``benchmarks/ablation/unsigned_lanes.py``), built on :func:`ptx_word_op`.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba.extending import register_jitable

from .disk_cache import named_for

ONE2 = np.uint32(0x00010001)
"""1 in each half."""

_LOW16 = np.uint32(0xFFFF)


def ptx_word_op(instruction: str, immediate: str = ""):
    """A GPU device function ``f(a, b)`` on two words (taken as uint32): one PTX
    ``instruction``, inline (``immediate``: a constant last operand, such as ``", 0x4140"``)."""
    from llvmlite import ir
    from numba import cuda, types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def op(typingctx, a, b):
        sig = types.uint32(types.uint32, types.uint32)

        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            asm = ir.InlineAsm(ir.FunctionType(i32, [i32, i32]),
                               f"{instruction} $0, $1, $2{immediate};", "=r,r,r")
            return builder.call(asm, args)
        return sig, codegen

    def word_op(a, b):
        return op(np.uint32(a), np.uint32(b))

    name = (instruction + immediate).replace(".", "_").replace(", ", "_")
    return cuda.jit(device=True)(named_for(word_op, name))


def _half(x, shift):
    """Half ``shift`` (0 or 16) of ``x`` as an int16 value in an int32."""
    v = np.int32((np.uint32(x) >> np.uint32(shift)) & _LOW16)
    return np.int32(v - ((v & 0x8000) << 1))


@register_jitable
def join_halves(lo, hi):
    """The word of halves ``lo`` and ``hi`` (each taken modulo 2**16); compiled code may call
    it too."""
    return np.uint32(np.uint32(np.int64(lo) & 0xFFFF) | np.uint32((np.int64(hi) & 0xFFFF) << 16))


def _row_word(h, d):
    """Bytes: ``h``'s two low half bytes, then ``d``'s."""
    h = np.uint32(h)
    d = np.uint32(d)
    return np.uint32((h & np.uint32(0xFF)) | ((h >> np.uint32(8)) & np.uint32(0xFF00))
                     | ((d & np.uint32(0xFF)) << np.uint32(16))
                     | (((d >> np.uint32(16)) & np.uint32(0xFF)) << np.uint32(24)))


def _row_h(w):
    """Bytes 0 and 1 of ``w`` as the low and high half."""
    w = np.uint32(w)
    return np.uint32((w & np.uint32(0xFF)) | ((w & np.uint32(0xFF00)) << np.uint32(8)))


def _signed_byte(x):
    """A byte (``0..255``) read as int8."""
    return np.int32(x - ((x & 0x80) << 1))


def signed_ops(device_jit) -> SimpleNamespace:
    """The signed lane operations in plain integer arithmetic, compiled by ``device_jit``."""
    half = device_jit(_half)
    join = device_jit(join_halves)

    def _add2(a, b):
        return join(half(a, 0) + half(b, 0), half(a, 16) + half(b, 16))

    def _max2(a, b):
        return join(max(half(a, 0), half(b, 0)), max(half(a, 16), half(b, 16)))

    def _relu3(a, b, c):
        return join(max(half(a, 0), half(b, 0), half(c, 0), 0),
                    max(half(a, 16), half(b, 16), half(c, 16), 0))

    def _umax2(a, b):
        lo = max(np.uint32(a) & _LOW16, np.uint32(b) & _LOW16)
        return np.uint32(lo | max(np.uint32(a) >> 16, np.uint32(b) >> 16) << 16)

    signed_byte = device_jit(_signed_byte)

    def _row_d(w):
        w = np.uint32(w)
        return join(signed_byte(np.int32((w >> np.uint32(16)) & np.uint32(0xFF))),
                    signed_byte(np.int32(w >> np.uint32(24))))

    return SimpleNamespace(add2=device_jit(_add2), max2=device_jit(_max2),
                           relu3=device_jit(_relu3), umax2=device_jit(_umax2),
                           row_word=device_jit(_row_word), row_h=device_jit(_row_h),
                           row_d=device_jit(_row_d), name="int")


def _ptx_permute(selector: int):
    """A GPU device function ``f(a, b)``: PTX ``prmt.b32`` of words ``a`` and ``b`` (bytes 0-3
    and 4-7) with the constant ``selector``, inline."""
    return ptx_word_op("prmt.b32", f", {selector:#06x}")


def signed_dpx_ops() -> SimpleNamespace:
    """The signed lane operations as Hopper's 16x2 instructions (inline PTX; GPU only)."""
    from numba import cuda

    max2 = ptx_word_op("max.s16x2")
    relu = ptx_word_op("max.relu.s16x2")

    @cuda.jit(device=True)
    def relu3(a, b, c):
        return relu(max2(a, b), c)

    low_bytes = _ptx_permute(0x4140)   # halves: a.0, a.1 (b = 0 pads)
    high_bytes = _ptx_permute(0xB3A2)  # halves: a.2, a.3, sign-extended

    @cuda.jit(device=True)
    def row_h(w):
        return low_bytes(w, np.uint32(0))

    @cuda.jit(device=True)
    def row_d(w):
        return high_bytes(w, np.uint32(0))

    return SimpleNamespace(add2=ptx_word_op("add.s16x2"), max2=max2, relu3=relu3,
                           umax2=ptx_word_op("max.u16x2"),
                           row_word=_ptx_permute(0x6420),  # bytes: a.0, a.2, b.0, b.2
                           row_h=row_h, row_d=row_d, name="dpx")
