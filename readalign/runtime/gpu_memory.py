"""Each thread's GPU buffers, kept from one call to the next: device pools and pinned staging.

Allocating costs more than the work it serves: numba takes 0.15-0.25 ms per device
buffer (a 1M-pair call uses about 40) and pinning host memory costs far more than
copying into it. So, as CuPy's and PyTorch's memory pools do, the GPU backends keep
their buffers after a call, grown when a call needs more, one set per thread (two
threads never share one). :func:`free_gpu_memory` (``readalign.free_gpu_memory``)
gives this thread's back; the align pipeline calls it when its run ends.

Copies between pinned host arrays and pooled device arrays go straight to the
driver, a prefix of the device array at a time: slicing a numba device array costs
about 33 us and its checked copy about 100 us, against a few us for the copy itself.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from numba import cuda
from numba.cuda.cudadrv.driver import CudaAPIError

from ..errors import GPUMemoryError
from ..kernels.simulator import simulated

MEMORY_FRACTION = 0.6
"""Share of the device memory free to a call (free now plus what this thread keeps) that
one call's buffers may use; the rest stays for the driver, other processes and slack."""
GROWTH = 1.25
"""Headroom when a buffer must grow, so that slowly rising needs do not reallocate every chunk."""

_LOCAL = threading.local()


def _kept() -> dict:
    """This thread's kept buffers: ``"pools"`` (key to :class:`DevicePool`) and ``"pinned"``."""
    kept = getattr(_LOCAL, "kept", None)
    if kept is None:
        kept = _LOCAL.kept = {"pools": {}, "pinned": {}}
    return kept


_POOLS_MADE = threading.Event()
"""Set once any thread has made a device pool (so that there is a CUDA context to flush)."""


def free_gpu_memory() -> None:
    """Give back the device and pinned host memory this thread keeps between calls, and what
    threads that have ended kept (numba frees lazily: this flushes its queue)."""
    had = getattr(_LOCAL, "kept", None)
    _LOCAL.kept = None
    if had:
        had.clear()
    if _POOLS_MADE.is_set() and not simulated():
        cuda.current_context().deallocations.clear()


OUT_OF_MEMORY = 2
"""``CUDA_ERROR_OUT_OF_MEMORY`` (device or pinned memory); numba's ``cudadrv.enums``, which
has it, cannot be imported under the CUDA simulator."""


def _out_of_memory(exc: Exception) -> bool:
    """Whether a driver error is out of memory: its code is the number under numba's ctypes
    binding, an enum member of that name under cuda-python's."""
    code = getattr(exc, "code", None)
    return code == OUT_OF_MEMORY or getattr(code, "name", "") == "CUDA_ERROR_OUT_OF_MEMORY"


F = TypeVar("F", bound=Callable)


def names_out_of_memory(fn: F) -> F:
    """``fn`` with the driver's out-of-memory error raised as a :class:`GPUMemoryError`.

    A call sizes its batches to the memory free when it starts (:data:`MEMORY_FRACTION`), so
    this is what another process taking memory meanwhile looks like: a one-line error that
    says how much is free now, where numba-cuda would raise its driver traceback.
    """

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CudaAPIError as exc:
            if not _out_of_memory(exc):
                raise
            free, total = cuda.current_context().get_memory_info()
            raise GPUMemoryError(
                f"the GPU ran out of memory ({free / 2**20:,.0f} MiB of {total / 2**30:.1f} GiB "
                "free now): another process may be using it; run one GPU job at a time, or "
                "use the CPU backend") from exc
    return wrapped


def keep_only_pools(prefix: tuple) -> None:
    """Give back this thread's device pools whose key does not begin with ``prefix``.

    A call counts what this thread's pools hold as free (:func:`free_device_bytes`), which
    is true only of buffers it will reuse: an edit-distance call's pools hold none of a
    scored call's buffers, so a call gives back the pools of other kinds of call first.
    """
    pools = _kept()["pools"]
    others = [key for key in pools if not (isinstance(key, tuple) and key[:len(prefix)] == prefix)]
    for key in others:
        del pools[key]
    if others and not simulated():
        cuda.current_context().deallocations.clear()


def held_device_bytes() -> int:
    """Device bytes this thread's pools keep."""
    return sum(pool.nbytes() for pool in _kept()["pools"].values())


def free_device_bytes() -> int:
    """Device memory a call on this thread may count on: free now plus what its pools keep
    (a fixed 1 GiB under the CUDA simulator)."""
    if simulated():
        return 1 << 30
    free, _total = cuda.current_context().get_memory_info()
    return int(free) + held_device_bytes()


def pinned(key: tuple, size: int, dtype) -> np.ndarray:
    """A pinned host array of ``size`` elements, this thread's under ``key``, reused across calls."""
    dtype = np.dtype(dtype)
    store = _kept()["pinned"]
    full = (*key, dtype.str)
    buf = store.get(full)
    if buf is None or buf.shape[0] < size:
        store.pop(full, None)
        buf = cuda.pinned_array(max(int(size * GROWTH), 1), dtype=dtype)
        store[full] = buf
    return buf[:size]


def _host_to_device(dev, host: np.ndarray, stream) -> None:
    """Enqueue ``dev[:len(host)] = host`` (``dev`` may be longer)."""
    if not host.shape[0]:
        return
    if simulated():
        dev[:host.shape[0]].copy_to_device(host, stream=stream)
        return
    from numba.cuda.cudadrv import driver

    driver.host_to_device(dev, host, host.nbytes, stream=stream)


def download(dev, host: np.ndarray, stream) -> None:
    """Enqueue ``host[:] = dev[:len(host)]`` (``dev`` may be longer; ``host`` pinned to overlap)."""
    if not host.shape[0]:
        return
    if simulated():
        dev[:host.shape[0]].copy_to_host(host, stream=stream)
        return
    from numba.cuda.cudadrv import driver

    driver.device_to_host(host, dev, host.nbytes, stream=stream)


class DevicePool:
    """Device arrays by name, reused while big enough, with the stream they are used on.

    A name's memory is one byte buffer, viewed as whatever type the caller asks for: a
    scored call's boundaries are int16 for its short pairs and int32 for its long ones,
    and two buffers kept by type would hold both sizes at once, past the budget the call
    was sized for (:data:`MEMORY_FRACTION`).
    """

    def __init__(self, stream) -> None:
        self.stream = stream
        self._arrays: dict[str, object] = {}
        self._typed: dict[str, object] = {}
        self._views: dict[str, object] = {}
        self._filled: dict[str, object] = {}

    def nbytes(self) -> int:
        """Device bytes this pool holds."""
        return sum(int(a.nbytes) for a in self._arrays.values())

    def _array(self, name: str, size: int, dtype):
        """The whole buffer under ``name`` as ``dtype``: at least ``size`` elements, reallocated
        (with :data:`GROWTH` headroom) if its bytes are too few."""
        dtype = np.dtype(dtype)
        typed = self._typed.get(name)
        if typed is not None and typed.dtype == dtype and typed.shape[0] >= size:
            return typed
        store = self._arrays.get(name)
        need = size * dtype.itemsize
        if store is None or store.nbytes < need:
            self._arrays.pop(name, None)
            self._views.pop(name, None)
            self._filled.pop(name, None)
            whole = -(-max(int(need * GROWTH), 1) // 8) * 8  # any element type divides it
            store = cuda.device_array(whole, dtype=np.uint8, stream=self.stream)
            self._arrays[name] = store
        typed = self._typed[name] = store.view(dtype)
        return typed

    def get(self, name: str, size: int, dtype):
        """A device array of exactly ``max(size, 1)`` elements (a view, cached for the next call)."""
        size = max(int(size), 1)
        view = self._views.get(name)
        if view is not None and view.shape[0] == size and view.dtype == np.dtype(dtype):
            return view
        arr = self._array(name, size, dtype)
        view = arr if arr.shape[0] == size else arr[:size]
        self._views[name] = view
        return view

    def space(self, name: str, size: int, dtype):
        """A device array of at least ``size`` elements, for kernels that do not read its length."""
        return self._array(name, max(int(size), 1), dtype)

    def cleared(self, name: str, size: int, dtype):
        """:meth:`space` with its first ``size`` elements set to 0 on the pool's stream: for a
        buffer that kernels fill in part and that is copied back whole (every byte a copy
        reads is then defined, as compute-sanitizer's initcheck wants)."""
        count = max(int(size), 1)
        arr = self.space(name, count, dtype)
        if simulated():
            arr[:count] = 0
        else:
            from numba.cuda.cudadrv import driver

            driver.device_memset(arr, 0, count * arr.dtype.itemsize, stream=self.stream)
        return arr

    def upload(self, name: str, host: np.ndarray):
        """Enqueue the copy of ``host`` into the array ``name``; returns the whole array."""
        dev = self._array(name, max(host.shape[0], 1), host.dtype)
        _host_to_device(dev, host, self.stream)
        return dev

    def constant(self, name: str, host: np.ndarray):
        """The array ``name`` holding ``host`` (uploaded only when ``host`` is not the array it
        last held); ``host`` must not change while the pool lives."""
        dev = self._array(name, max(host.shape[0], 1), host.dtype)
        if self._filled.get(name) is not host:
            _host_to_device(dev, host, self.stream)
            self._filled[name] = host
        return dev

    def iota(self, name: str, size: int):
        """A device array whose first ``size`` elements are ``0, 1, ..., size - 1`` (int64)."""
        before = self._typed.get(name)
        dev = self._array(name, max(size, 1), np.int64)
        if dev is not before:  # a new buffer, or the name's bytes last held another type
            _host_to_device(dev, np.arange(dev.shape[0], dtype=np.int64), self.stream)
        return dev


def device_pool(key: object) -> DevicePool:
    """This thread's pool under ``key``, with its own stream (kept until :func:`free_gpu_memory`)."""
    pools = _kept()["pools"]
    pool = pools.get(key)
    if pool is None:
        pool = pools[key] = DevicePool(cuda.stream())
        _POOLS_MADE.set()
    return pool
