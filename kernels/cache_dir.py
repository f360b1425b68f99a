"""Where numba keeps readalign's compiled code: ``READALIGN_CACHE_DIR``, else numba's rules.

The rules, first match wins:

1. ``READALIGN_CACHE_DIR`` (set and not empty): that folder, handed to numba as
   ``NUMBA_CACHE_DIR`` (so child processes inherit it);
2. ``NUMBA_CACHE_DIR`` (set and not empty): numba's own setting, left as it is;
3. the sources' folders are writable: ``__pycache__`` folders beside the sources
   (numba's default);
4. otherwise (a read-only install): a folder of the user's own,
   ``$XDG_CACHE_HOME/readalign`` or ``~/.cache/readalign``, said once on the log.

:func:`apply` runs before numba compiles anything: the compile notice
(:mod:`readalign.kernels.compile_notice`) calls it at import, and every path to a
compile imports that module first. This module does not import numba.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger("readalign")

ENV = "READALIGN_CACHE_DIR"
NUMBA_ENV = "NUMBA_CACHE_DIR"

KERNELS = Path(__file__).resolve().parent
"""This folder: ``readalign/kernels`` when installed, ``kernels`` beside ``readalign`` in a
checkout."""


class CacheDir(NamedTuple):
    """Where compiled code goes (``path`` None: ``__pycache__`` beside the sources) and which
    rule chose it: ``"READALIGN_CACHE_DIR"``, ``"NUMBA_CACHE_DIR"``, ``"sources"`` or ``"user"``."""

    path: str | None
    rule: str


def user_cache_dir(environ: Mapping[str, str]) -> str:
    """``$XDG_CACHE_HOME/readalign``, or ``~/.cache/readalign`` without that variable."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "readalign")


def writable(folder: Path) -> bool:
    """Whether numba can keep ``__pycache__`` in ``folder`` (the one there, or a new one)."""
    pycache = folder / "__pycache__"
    target = pycache if pycache.is_dir() else folder
    return os.access(target, os.W_OK | os.X_OK)


def source_folders() -> tuple[Path, ...]:
    """The folders whose ``__pycache__`` numba uses by default: the kernels' and the
    package's (a checkout keeps them side by side, an install one inside the other)."""
    package = Path(sys.modules["readalign"].__file__).resolve().parent
    return (KERNELS, package)


def resolve(environ: Mapping[str, str], sources_writable: Callable[[], bool]) -> CacheDir:
    """The cache folder the rules give for ``environ`` (see the module docstring).

    ``sources_writable`` is asked only when no variable decides, so a run with a cache
    folder set never looks at the install.
    """
    for name in (ENV, NUMBA_ENV):
        if environ.get(name):
            return CacheDir(os.path.abspath(os.path.expanduser(environ[name])), name)
    if sources_writable():
        return CacheDir(None, "sources")
    return CacheDir(user_cache_dir(environ), "user")


_applied: list[CacheDir] = []


def apply() -> CacheDir:
    """Resolve the cache folder once per process and hand it to numba (``NUMBA_CACHE_DIR``,
    and numba's config when numba is already loaded); log the read-only fallback once."""
    if _applied:
        return _applied[0]
    found = resolve(os.environ, lambda: all(writable(f) for f in source_folders()))
    if found.path is not None and found.rule != NUMBA_ENV:
        os.environ[NUMBA_ENV] = found.path
        config = sys.modules.get("numba.core.config")
        if config is not None:
            config.reload_config()
    if found.rule == "user":
        log.info("readalign's sources are read-only: compiled code is cached in %s "
                 "(set %s to choose the folder)", found.path, ENV)
    _applied.append(found)
    return found
