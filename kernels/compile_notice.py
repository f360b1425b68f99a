"""Say once, when numba starts compiling readalign's code, that this first run is compiling.

numba compiles readalign's functions on first use and keeps them in its disk
cache (``cache=True``); on a new machine that is a minute or two with
nothing else to show. numba fires its ``numba:compile`` event only when a
function misses the disk cache and is compiled (a cache load fires
nothing), so a listener that sees the event for a cached readalign function
knows, before the compile starts, that the cache is cold. numba-cuda
compiles kernels without that event: :func:`announce_if_cold` covers them by
looking for the cache's index file, which the first compile writes.

The notice is logged at INFO on the ``readalign`` logger, once per process:
the command line prints it on stderr (not with ``-q``), Python callers see
it when they log at INFO.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from numba.core import config, event
from numba.core.caching import NullCache

log = logging.getLogger("readalign")

MESSAGE = "compiling the alignment kernels for this machine (once; a minute or two; cached in %s)"

_lock = threading.Lock()
_state = {"said": False, "active": 0, "installed": False}


def compiling() -> bool:
    """Whether numba is compiling one of readalign's cached functions right now."""
    return _state["active"] > 0


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


def announce_if_cold(cache) -> None:
    """Announce when ``cache`` (a dispatcher's disk cache) has no index file yet."""
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if index is not None and not os.path.exists(index):
        announce(cache.cache_path)


def _ours(dispatcher) -> bool:
    """A readalign function whose compiled code numba keeps on disk."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    cache = getattr(dispatcher, "_cache", None)
    return module.split(".")[0] == "readalign" and cache is not None and not isinstance(cache, NullCache)


class _CompileListener(event.Listener):
    """Announce the first compile of a cached readalign function; count those in progress."""

    def on_start(self, ev: event.Event) -> None:
        dispatcher = (ev.data or {}).get("dispatcher")
        if _ours(dispatcher):
            _state["active"] += 1
            announce(dispatcher._cache.cache_path)

    def on_end(self, ev: event.Event) -> None:
        if _ours((ev.data or {}).get("dispatcher")):
            _state["active"] -= 1


def install() -> None:
    """Listen to numba's compile events (once per process)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    event.register("numba:compile", _CompileListener())


install()  # at import: readalign/__init__ imports this module before anything can compile
