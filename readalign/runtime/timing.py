"""Stage timers that cost nothing unless debug logging is on."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

log = logging.getLogger("readalign")


def _log(name: str, dt: float, count: int | None) -> None:
    rate = f" ({count / dt:,.0f}/s)" if count and dt > 0 else ""
    log.debug("%-28s %8.4f s%s", name, dt, rate)


@contextmanager
def stage(name: str, count: int | None = None):
    """Log ``name`` and its wall time at DEBUG level (with a rate when ``count`` is given)."""
    if not log.isEnabledFor(logging.DEBUG):
        yield
        return
    t0 = time.perf_counter()
    yield
    _log(name, time.perf_counter() - t0, count)


class Tally:
    """Host time summed per stage over many chunks of a pipeline; logged once by :meth:`report`."""

    def __init__(self) -> None:
        self.on = log.isEnabledFor(logging.DEBUG)
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}

    @contextmanager
    def stage(self, name: str, count: int = 0):
        """Add this block's wall time to ``name``."""
        if not self.on:
            yield
            return
        t0 = time.perf_counter()
        yield
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
        self.counts[name] = self.counts.get(name, 0) + count

    def report(self, prefix: str = "  ") -> None:
        """Log every stage's summed time (host time; GPU work overlaps it)."""
        for name, dt in self.seconds.items():
            _log(prefix + name, dt, self.counts[name])
