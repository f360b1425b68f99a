"""Host placement of device results: parallel copies on a thread pool.

The work runs in ``nogil`` numba functions on plain Python threads, so it
overlaps with the caller (which keeps feeding the GPU) and never enters a
numba parallel region from two threads at once. The copies into a fresh
result take its page faults on every core at once; spans are page-aligned
so no two threads fault the same page.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from numba import njit, prange

from ..kernels.loops import BYTES_SERIAL_BELOW, parallel_loop
from .backends import usable_cpus


@njit(nogil=True, cache=True)
def copy_run(dst, src):
    """``dst[k] = src[k]`` for every k of ``src``.

    A loop over two slices with a non-negative index vectorises (7-15 GB/s per
    core here); numba's slice assignment runs at about 2.5 GB/s and a loop that
    indexes a 2-D row or adds offsets to the index at about 1-2 GB/s.
    """
    for k in range(src.shape[0]):
        dst[k] = src[k]


COPY_BLOCK = 1 << 16
"""Elements per parallel task in :func:`copy_into`."""


@parallel_loop(size=2, serial_below=BYTES_SERIAL_BELOW)
def copy_into(dst, pos, src):
    """``dst[pos:pos + len(src)] = src`` on every core (a fresh ``dst`` takes its page faults in parallel)."""
    n = src.shape[0]
    for b in prange((n + COPY_BLOCK - 1) // COPY_BLOCK):
        lo = b * COPY_BLOCK
        hi = min(lo + COPY_BLOCK, n)
        copy_run(dst[pos + lo:pos + hi], src[lo:hi])


PAGE = 4096
MIN_SLICE = 1 << 20
"""Smallest share of one task, in bytes."""

_POOLS: dict = {}


def pool(threads: int) -> ThreadPoolExecutor:
    """A shared pool of ``threads`` workers (created once per size)."""
    hit = _POOLS.get(threads)
    if hit is None:
        hit = ThreadPoolExecutor(threads, thread_name_prefix="readalign-place")
        _POOLS[threads] = hit
    return hit


@njit(nogil=True, cache=True)
def copy_span(src, dst, lo, hi, dst_lo):
    """``dst[dst_lo + x - lo] = src[x]`` for ``lo <= x < hi`` (bytes)."""
    copy_run(dst[dst_lo:dst_lo + hi - lo], src[lo:hi])


def spans(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` cut into at most ``parts`` page-aligned spans of at least :data:`MIN_SLICE`."""
    size = hi - lo
    if size <= 0:
        return []
    parts = max(1, min(parts, size // MIN_SLICE))
    step = -(-size // parts)
    step = -(-step // PAGE) * PAGE
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]


class Placer:
    """Moves blocks into ``result`` (any contiguous array) on a pool of threads."""

    def __init__(self, result: np.ndarray, threads: int | None = None):
        self.dst = result.reshape(-1).view(np.uint8)
        self.threads = threads or usable_cpus()
        self.pool = pool(self.threads)

    def copy(self, src: np.ndarray, dst_lo: int) -> list[Future]:
        """Copy the bytes of ``src`` to the result from byte ``dst_lo``; futures of the parts."""
        flat = src.reshape(-1).view(np.uint8)
        return [self.pool.submit(copy_span, flat, self.dst, a, b, dst_lo + a)
                for a, b in spans(0, flat.shape[0], self.threads)]


def wait(futures: list[Future]) -> None:
    """Block until every future is done (re-raising the first error)."""
    for f in futures:
        f.result()
