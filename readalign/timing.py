"""Stage timers that cost nothing unless debug logging is on."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

log = logging.getLogger("readalign")


@contextmanager
def stage(name: str, count: int | None = None):
    """Log ``name`` and its wall time at DEBUG level (with a rate when ``count`` is given)."""
    if not log.isEnabledFor(logging.DEBUG):
        yield
        return
    t0 = time.perf_counter()
    yield
    dt = time.perf_counter() - t0
    rate = f" ({count / dt:,.0f}/s)" if count and dt > 0 else ""
    log.debug("%-28s %8.4f s%s", name, dt, rate)
