"""numba's disk cache for kernels built by factories, keyed by what their code depends on.

numba keys a cached closure by the pickled contents of its cells. The kernel
factories (:func:`kernels.cpu.batch_driver`, :func:`kernels.cuda.kernels`)
close over other dispatchers, whose pickles differ from process to process,
so every process compiled the kernels again and added a cache entry it never
read. Their code depends only on the factory's arguments and on the kernel
sources, so that is the key used here instead.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

SOURCES = ("quadrant.py", "cpu.py", "cuda.py", "disk_cache.py")
"""The files in this folder that the factory-built kernels are compiled from."""


@functools.cache
def sources_hash() -> str:
    """SHA-256 of the kernel sources."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()


@functools.cache
def _keyed(base: type) -> type:
    """``base`` (the dispatcher's cache class) with the index key replaced."""

    class Keyed(base):
        def _index_key(self, sig, codegen):
            key = (sig, codegen.magic_tuple(), self.source_key)
            launch = getattr(self, "_launch_config_key", None)  # newer numba-cuda
            return key if launch is None else key + (("launch_config", launch),)

    Keyed.__name__ = Keyed.__qualname__ = f"SourceKeyed{base.__name__}"
    return Keyed


def cache_by_source(dispatcher, *factory_args) -> None:
    """Turn on ``dispatcher``'s disk cache, keyed by ``factory_args`` and the kernel sources."""
    dispatcher.enable_caching()
    cache = dispatcher._cache
    cache.__class__ = _keyed(type(cache))
    cache.source_key = (*factory_args, sources_hash())
