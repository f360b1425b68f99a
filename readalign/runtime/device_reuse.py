"""A scope in which the GPU backends keep their device buffers from one engine call to the next.

Allocating and freeing gigabytes of boundary buffers for every call costs more than
the kernels of a 100,000-read batch; the align pipeline, which makes one call per
batch, runs inside :func:`keep_buffers` and so allocates once per run. This module
imports nothing from numba, so the CPU path does not load numba's CUDA support.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_KEPT = threading.local()


@contextmanager
def keep_buffers() -> Iterator[None]:
    """Keep this thread's device pools across engine calls until the block ends (then free them)."""
    outer = getattr(_KEPT, "pools", None)
    if outer is None:
        _KEPT.pools = {}
    try:
        yield
    finally:
        if outer is None:
            _KEPT.pools = None


def kept_pools() -> dict | None:
    """This thread's kept pools by key, or None outside :func:`keep_buffers`."""
    return getattr(_KEPT, "pools", None)
