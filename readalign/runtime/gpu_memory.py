"""Reusable host and device buffers for the GPU pipeline.

Pinning host memory costs far more than copying into it, so pinned staging
buffers live at module level and are reused by every call (grown when a call
needs more). Device buffers belong to one call's pipeline slot and are reused
by every chunk that slot runs; inside :func:`.device_reuse.keep_buffers` (the align pipeline,
which makes one engine call per batch of reads) they also outlive the call, so
a run allocates its device memory once rather than once per batch.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda

from ..kernels.simulator import simulated
from .device_reuse import kept_pools

MEMORY_FRACTION = 0.6
"""Share of the free device memory one call's buffers may use (the rest stays for the
driver, other processes and allocation slack)."""
GROWTH = 1.25
"""Headroom when a buffer must grow, so that slowly rising needs do not reallocate every chunk."""

_PINNED: dict[tuple, np.ndarray] = {}
_LOCK = threading.Lock()


def free_device_bytes() -> int:
    """Free memory of the current device (a fixed 1 GiB under the CUDA simulator)."""
    if simulated():
        return 1 << 30
    free, _total = cuda.current_context().get_memory_info()
    return int(free)


def pinned(key: tuple, size: int, dtype) -> np.ndarray:
    """A pinned host array of ``size`` elements, reused across calls under ``key``."""
    dtype = np.dtype(dtype)
    full = (*key, dtype.str)
    with _LOCK:
        buf = _PINNED.get(full)
        if buf is None or buf.shape[0] < size:
            _PINNED.pop(full, None)
            buf = cuda.pinned_array(max(int(size * GROWTH), 1), dtype=dtype)
            _PINNED[full] = buf
    return buf[:size]


class DevicePool:
    """Device arrays by name, reused while big enough (one pool per pipeline slot)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._arrays: dict[str, object] = {}

    def get(self, name: str, size: int, dtype):
        """A device array of at least ``size`` elements (``max(size, 1)``), sliced to ``size``."""
        arr = self._arrays.get(name)
        size = max(int(size), 1)
        if arr is None or arr.shape[0] < size or arr.dtype != np.dtype(dtype):
            self._arrays.pop(name, None)
            arr = cuda.device_array(int(size * GROWTH), dtype=dtype, stream=self.stream)
            self._arrays[name] = arr
        return arr[:size]


def device_pool(key: object) -> DevicePool:
    """The pool of ``key`` (with its own stream): kept inside :func:`.device_reuse.keep_buffers`,
    else new."""
    pools = kept_pools()
    if pools is None:
        return DevicePool(cuda.stream())
    pool = pools.get(key)
    if pool is None:
        pool = pools[key] = DevicePool(cuda.stream())
    return pool
