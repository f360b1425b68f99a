"""The unsigned lane operations of the packed distance pass (:mod:`.packed`).

Two 16-bit cells in one 32-bit word, as in :mod:`readalign.kernels.lanes16`. Every value the
packed pass keeps is in ``0..0x7FFF`` (edit distances of the fast path,
:data:`readalign.kernels.quadrant.FAST_PATH_MAX` plus two), so a plain 32-bit add or subtract
of a value that keeps each half in that range never carries from one half into the other;
only the minimum needs per-half work.

Two ways to take it, one contract (per half, values in ``0..0x7FFF``):

* :func:`swar_ops` — plain integer arithmetic (SIMD within a register). This is the CPU's
  build and the CUDA simulator's, and the GPU's "DPX off" ablation.
* :func:`dpx_ops` — Hopper's 16x2 min instructions through inline PTX (``min.s16x2``,
  ``min.u16x2``; ``ptxas`` fuses two of them into one ``VIMNMX3.S16x2``). Needs sm_90.

``min2(a, b)`` and ``min3(a, b, c)`` are the per-half minima; ``ne2(x)`` is 1 in each half
where ``x``'s half is not zero, else 0 (the mismatch cost of an XOR of codes).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from readalign.kernels.lanes16 import ONE2, ptx_word_op

_HIGH = np.uint32(0x80008000)
_FILL = np.uint32(0x7FFF7FFF)
_LOW16 = np.uint32(0xFFFF)


def _swar_min2(a, b):
    """Per-half minimum: bit 15 of ``(a | 0x8000) - b`` says ``a >= b`` in that half."""
    ge = np.uint32((np.uint32(np.uint32(a) | _HIGH) - np.uint32(b)) & _HIGH)
    mask = np.uint32(np.uint32(ge >> 15) * _LOW16)
    return np.uint32(a ^ np.uint32(np.uint32(a ^ b) & mask))


def _swar_ne2(x):
    """1 in each half that is not zero: adding 0x7FFF sets bit 15 exactly then."""
    return np.uint32((np.uint32(np.uint32(x) + np.uint32(_FILL)) >> 15) & ONE2)


def swar_ops(device_jit) -> SimpleNamespace:
    """The lane operations in plain integer arithmetic, compiled by ``device_jit``."""
    min2 = device_jit(_swar_min2)

    def _min3(a, b, c):
        return min2(min2(a, b), c)

    return SimpleNamespace(min2=min2, min3=device_jit(_min3), ne2=device_jit(_swar_ne2),
                           name="swar")


def dpx_ops() -> SimpleNamespace:
    """The lane operations as Hopper's 16x2 min instructions (inline PTX; GPU only)."""
    from numba import cuda

    min2 = ptx_word_op("min.s16x2")
    umin = ptx_word_op("min.u16x2")

    @cuda.jit(device=True)
    def min3(a, b, c):
        return min2(min2(a, b), c)

    @cuda.jit(device=True)
    def ne2(x):
        return umin(x, ONE2)

    return SimpleNamespace(min2=min2, min3=min3, ne2=ne2, name="dpx")
