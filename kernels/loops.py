"""Parallel loops built twice from one source: serial for small inputs, parallel for large.

numba compiles a ``parallel=True`` function through its parfor passes, which costs two to
three times the time of the same loop compiled serially (``_fill`` of the BAM records:
17 s against 6 s on two cores), and its first call starts numba's thread pool. A run over
a few thousand reads gains nothing from that pool. :func:`parallel_loop` therefore keeps two
builds of every such loop, both from the one Python source (``prange`` is ``range`` in the
serial build): a call with fewer items than :data:`SERIAL_BELOW` runs the serial build, a
larger one the parallel build. Each build compiles (or loads from the cache) on its first
call, so a small run never compiles a parallel region and a large one never compiles the
serial twin of a loop whose every call is large. Both builds give the same results: the
loops write disjoint elements, and their reductions are exact integer ones.

The builds are cached under different names (the serial one's name ends in
``__serial``), so numba's disk cache never hands one build's code to the other.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit

SERIAL_BELOW = 1 << 15
"""Items below which a loop runs its serial build (a parallel region's start and join cost
tens of microseconds a call; 32,768 items of the lightest loop take about that on one core)."""

BYTES_SERIAL_BELOW = 1 << 20
"""The same bound for loops whose items are bytes (copies, line scans)."""


class ParallelLoop:
    """A compiled loop with a serial and a parallel build, picked by the size of one argument.

    Call it like the function it wraps. ``size`` is the position of the argument that
    counts the loop's items: an array (its length) or an integer; calls over fewer than
    ``serial_below`` items run the serial build.
    """

    def __init__(self, fn, size: int, serial_below: int, options: dict):
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.size = size
        self.serial_below = serial_below
        self.parallel = njit(parallel=True, nogil=True, cache=True, **options)(fn)
        self.serial = njit(nogil=True, cache=True, **options)(_twin(fn))

    def build(self, items: int):
        """The build a call over ``items`` items runs."""
        return self.serial if items < self.serial_below else self.parallel

    def __call__(self, *args):
        count = args[self.size]
        items = count.shape[0] if isinstance(count, np.ndarray) else int(count)
        return self.build(items)(*args)


def _twin(fn):
    """A copy of ``fn`` under its own name (``<name>__serial``), for a cache entry of its own."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "__serial",
                              fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "__serial"
    twin.__module__ = fn.__module__
    twin.__doc__ = fn.__doc__
    return twin


def parallel_loop(size: int = 0, serial_below: int = SERIAL_BELOW, **options):
    """Decorate a ``prange`` loop as a :class:`ParallelLoop` (``size``: the argument that
    counts its items; ``serial_below``: the count below which the serial build runs;
    ``options``: further :func:`numba.njit` options).

    The loop must not be called from other compiled code (a :class:`ParallelLoop` is a
    Python object); compiled callers call ``loop.serial`` or ``loop.parallel``.
    """

    def build(fn) -> ParallelLoop:
        return ParallelLoop(fn, size, serial_below, options)

    return build
