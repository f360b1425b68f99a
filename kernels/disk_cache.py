"""numba's disk cache for kernels built by factories, keyed by what their code depends on.

numba keys a cached closure by the pickled contents of its cells. The kernel
factories (:func:`kernels.cpu.chunk_kernel`, :func:`kernels.cuda.kernels`)
close over other dispatchers, whose pickles differ from process to process,
so every process would compile the kernels again and add an entry it never
reads. Their code depends only on the factory's arguments and on the kernel
sources, so that is the key used here instead.

On the CPU, entries are safe to load side by side only because every
function whose code depends on the quadrant size carries it in its name (see
:func:`kernels.quadrant.build`): numba numbers functions per process, and a
cached entry's callees are weak symbols, so two entries compiled in
different processes could otherwise define the same symbol and the process
that loads both would link one entry's calls into the other's code. Each
CUDA kernel is loaded as a module of its own, so symbols cannot meet there.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from .compile_notice import announce_if_cold

HERE = Path(__file__).parent


@functools.cache
def sources_hash(folder: Path = HERE) -> str:
    """SHA-256 of every Python file in ``folder`` (this one): the factory-built kernels are
    compiled from several of them (the scored ones from five), so a change to any file here
    makes new entries, and a list of the files could miss one that a kernel starts to use."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
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
    """Turn on ``dispatcher``'s disk cache, keyed by ``factory_args`` and the kernel sources.

    A factory builds its kernel just before the kernel's first call, so a
    cache without an index file yet means a compile is coming: say so, and count
    its time (numba-cuda compiles without the event that announces CPU compiles).
    """
    dispatcher.enable_caching()
    cache = dispatcher._cache
    cache.__class__ = _keyed(type(cache))
    cache.source_key = (*factory_args, sources_hash())
    announce_if_cold(dispatcher)


def named_for(fn, *factory_args):
    """``fn`` renamed ``<name>_<arg>_<arg>...``, so its compiled symbols differ per factory call."""
    suffix = "_".join(str(a) for a in factory_args)
    fn.__name__ = f"{fn.__name__}_{suffix}"
    fn.__qualname__ = f"{fn.__qualname__}_{suffix}"
    return fn
