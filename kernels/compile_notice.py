"""Say once, when numba starts compiling readalign's code, that this first run is compiling;
and count the time spent compiling, so that a run's figures can leave it out.

numba compiles readalign's functions on first use and keeps them in its disk
cache (``cache=True``); on a new machine that is a minute or two with
nothing else to show. numba fires its ``numba:compile`` event only when a
function misses the disk cache and is compiled (a cache load fires
nothing), so a listener that sees the event for a cached readalign function
knows, before the compile starts, that the cache is cold. numba-cuda
compiles kernels without that event: :func:`announce_if_cold` covers them by
looking for the cache's index file, which the first compile writes, and then
counts that kernel's compiles itself.

The notice is logged at INFO on the ``readalign`` logger, once per process:
the command line prints it on stderr (not with ``-q``), Python callers see
it when they log at INFO.

:func:`compile_seconds` is the wall time so far during which some thread
compiled readalign's code (a compile that triggers another, a function and its
callees, counts once; a load from the disk cache is no compile). Its growth over
an interval is the part of the interval spent compiling, which a run's total,
speed and stage times leave out: a first run's compiles would otherwise land in
whichever stage first calls each function, and a thread waiting for another
thread's compile would count it as its own work.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from numba.core import config, event
from numba.core.caching import NullCache

from . import cache_dir

log = logging.getLogger("readalign")

MESSAGE = "compiling the alignment kernels for this machine (once; a minute or two; cached in %s)"

_lock = threading.Lock()
_state = {"said": False, "active": 0, "installed": False, "since": 0.0, "seconds": 0.0}
_thread = threading.local()  # depth: this thread's compiles in progress, one inside another


def compiling() -> bool:
    """Whether numba is compiling one of readalign's cached functions right now."""
    return _state["active"] > 0


def compile_seconds() -> float:
    """Wall time so far in this process during which some thread compiled readalign's code."""
    with _lock:
        ongoing = time.perf_counter() - _state["since"] if _state["active"] else 0.0
        return _state["seconds"] + ongoing


def _begin() -> None:
    """A compile starts in this thread (one inside another counts once)."""
    depth = getattr(_thread, "depth", 0)
    _thread.depth = depth + 1
    if depth:
        return
    with _lock:
        if _state["active"] == 0:
            _state["since"] = time.perf_counter()
        _state["active"] += 1


def _end() -> None:
    """The compile that :func:`_begin` counted is over (none was, when the listener came in
    while a compile ran: then there is nothing to end)."""
    depth = getattr(_thread, "depth", 0)
    if depth == 0:
        return
    _thread.depth = depth - 1
    if depth > 1:
        return
    with _lock:
        _state["active"] -= 1
        if _state["active"] == 0:
            _state["seconds"] += time.perf_counter() - _state["since"]


def cache_location(cache_path: str) -> str:
    """Where numba keeps readalign's compiled code, given one function's cache folder."""
    if config.CACHE_DIR:
        return config.CACHE_DIR
    if os.path.basename(cache_path) != "__pycache__":  # numba's user-wide cache folder
        return os.path.dirname(cache_path)
    # the folder holding readalign/ and kernels/ (a checkout), or the installed readalign/
    return f"__pycache__ folders under {Path(__file__).resolve().parent.parent}"


def announce(cache_path: str) -> None:
    """Log the notice, unless this process has already."""
    with _lock:
        if _state["said"]:
            return
        _state["said"] = True
    log.info(MESSAGE, cache_location(cache_path))


def announce_if_cold(dispatcher) -> None:
    """Announce when ``dispatcher``'s disk cache has no index file yet, and count the time its
    compiles take (numba-cuda's fire no event; numba's CPU ones also count through the event,
    once)."""
    cache = dispatcher._cache
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if index is not None and not os.path.exists(index):
        announce(cache.cache_path)
        _count_compiles(dispatcher)


@contextlib.contextmanager
def counted_as_compiling() -> Iterator[None]:
    """Count the block's time as compiling (:func:`compile_seconds`)."""
    _begin()
    try:
        yield
    finally:
        _end()


def _count_compiles(dispatcher) -> None:
    """Count the time of ``dispatcher``'s compiles (numba compiles through its ``compile``)."""
    compile_signature = dispatcher.compile

    def counted(*args, **kwargs):
        with counted_as_compiling():
            return compile_signature(*args, **kwargs)

    dispatcher.compile = counted


def _ours(dispatcher) -> bool:
    """A readalign function whose compiled code numba keeps on disk."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    cache = getattr(dispatcher, "_cache", None)
    return module.split(".")[0] == "readalign" and cache is not None and not isinstance(cache, NullCache)


class _CompileListener(event.Listener):
    """Announce the first compile of a cached readalign function; count its time."""

    def on_start(self, ev: event.Event) -> None:
        dispatcher = (ev.data or {}).get("dispatcher")
        if _ours(dispatcher):
            announce(dispatcher._cache.cache_path)
            _begin()

    def on_end(self, ev: event.Event) -> None:
        if _ours((ev.data or {}).get("dispatcher")):
            _end()


def install() -> None:
    """Listen to numba's compile events (once per process)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    event.register("numba:compile", _CompileListener())


cache_dir.apply()  # READALIGN_CACHE_DIR and the read-only fallback, before any compile
install()  # at import: readalign/__init__ imports this module before anything can compile
