"""Run pipeline stages concurrently: a prefetching producer thread and an in-order consumer thread.

The heavy work in every stage is compiled numba code (``nogil``) or htslib
called through ``ctypes``, both of which release the GIL, so the reader, the
kernel and the writer really run at the same time. Errors raised in a
background thread re-raise in the caller, in order.
"""

from __future__ import annotations

import importlib
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numba

from .backends import cpu_threads

_POLL = 0.1


def numba_threads(n: int) -> None:
    """Use ``n`` threads (at most numba's pool) for this thread's parallel regions."""
    numba.set_num_threads(cpu_threads(n))


def concurrent_launches_ok() -> bool:
    """Whether numba parallel regions may start from several threads at once.

    The ``tbb`` and ``omp`` threading layers allow it, ``workqueue`` does not.
    If no layer has started yet, ask for a thread-safe one when one is installed.
    """
    try:
        return numba.threading_layer() in ("tbb", "omp")
    except ValueError:  # no parallel region has run yet: the layer can still be chosen
        pass
    if numba.config.THREADING_LAYER in ("tbb", "omp", "safe", "threadsafe"):
        return True
    if numba.config.THREADING_LAYER != "default":
        return False
    for pool in ("tbbpool", "omppool"):
        try:
            importlib.import_module(f"numba.np.ufunc.{pool}")
        except ImportError:
            continue
        numba.config.THREADING_LAYER = "threadsafe"
        return True
    return False


def _put(q: queue.Queue, item: Any, stop: threading.Event) -> bool:
    """Put ``item`` unless ``stop`` is set first; return whether it went in."""
    while not stop.is_set():
        try:
            q.put(item, timeout=_POLL)
            return True
        except queue.Full:
            continue
    return False


ABANDON_SECONDS = 5.0
"""How long an interrupted or failed run waits for a stage thread before it leaves it behind
(a daemon thread blocked reading a stalled pipe never returns)."""


def prefetch(items: Iterator[Any], threads: int, depth: int = 1,
             name: str = "readalign-reader") -> Iterator[Any]:
    """Yield ``items``, producing the next ones in a background thread (``depth`` ahead)."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        numba_threads(threads)
        try:
            for item in items:
                if not _put(q, (True, item), stop):
                    return
            _put(q, None, stop)
        except BaseException as exc:  # handed to the consumer
            _put(q, (False, exc), stop)

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    finished = False
    try:
        while True:
            got = q.get()
            if got is None:
                finished = True
                return
            ok, item = got
            if not ok:
                finished = True
                raise item
            yield item
    finally:
        stop.set()
        thread.join(None if finished else ABANDON_SECONDS)


class Consumer:
    """Apply ``fn`` to each item put, in order, in a background thread."""

    def __init__(self, fn: Callable[[Any], None], threads: int, depth: int = 2,
                 name: str = "readalign-writer") -> None:
        self._fn = fn
        self._q: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, args=(threads,),
                                        name=name, daemon=True)
        self._thread.start()

    def _work(self, threads: int) -> None:
        numba_threads(threads)
        while True:
            try:
                item = self._q.get(timeout=_POLL)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            if item is None or self._stop.is_set():
                return
            try:
                self._fn(item)
            except BaseException as exc:
                self._error = exc
                self._stop.set()
                return

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def put(self, item: Any) -> None:
        """Queue ``item`` (waits while the queue is full); re-raise an earlier failure."""
        self._raise()
        if not _put(self._q, item, self._stop):
            self._raise()

    def close(self) -> None:
        """Wait until every item is done; re-raise a failure."""
        self._raise()
        _put(self._q, None, self._stop)
        self._thread.join()
        self._raise()

    def abort(self) -> None:
        """Stop after the item in progress and drop the rest (waiting a few seconds at most)."""
        self._stop.set()
        self._thread.join(ABANDON_SECONDS)


class Inline:
    """The :class:`Consumer` interface without a thread (no overlap)."""

    def __init__(self, fn: Callable[[Any], None]) -> None:
        self._fn = fn

    def put(self, item: Any) -> None:
        """Process ``item`` now."""
        self._fn(item)

    def close(self) -> None:
        """Nothing is pending."""

    def abort(self) -> None:
        """Nothing is pending."""
