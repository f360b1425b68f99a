"""Decimal numbers written into byte buffers from compiled code (MD tags, distance tables)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def decimal_digits(v):
    """Number of decimal digits of non-negative ``v``."""
    n = 1
    while v >= 10:
        n += 1
        v //= 10
    return n


@njit(cache=True, nogil=True)
def write_decimal(buf, pos, v):
    """Write non-negative ``v`` in decimal ASCII at ``buf[pos:]``; return the next position."""
    n = decimal_digits(v)
    for k in range(n - 1, -1, -1):
        buf[pos + k] = 48 + v % 10
        v //= 10
    return pos + n
