"""A minimal progress bar on stderr (no dependency): shown only on a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    """Count units of work and redraw one status line, at most 5 times/s.

    With a ``total`` the line is a bar with the time left; without one (a
    stream of unknown length) it is a running count and rate.
    """

    def __init__(self, total: int | None, unit: str = "rows", enabled: bool | None = None,
                 stream=None, prefix: str = "") -> None:
        self.total = None if total is None else max(int(total), 0)
        self.unit = unit
        self.prefix = prefix
        self.note = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.start = time.monotonic()
        self._last = 0.0

    def update(self, n: int, note: str = "") -> None:
        """Add ``n`` finished units (``note`` is shown after the count); redraw if due."""
        self.done += n
        self.note = note
        now = time.monotonic()
        finished = self.total is not None and self.done >= self.total
        if self.enabled and (now - self._last >= 0.2 or finished):
            self._last = now
            self.stream.write("\r" + self.line(now))
            self.stream.flush()

    def line(self, now: float) -> str:
        """``[#####.....]  50% 500/1000 rows, 12 s left``, or ``1,000 reads, 500 reads/s``."""
        elapsed = now - self.start
        if self.total is None:
            rate = self.done / elapsed if elapsed > 0 else 0.0
            return f"{self.prefix}{self.done:,} {self.unit}{self.note}, {rate:,.0f} {self.unit}/s "
        frac = self.done / self.total if self.total else 1.0
        width = 30
        filled = int(frac * width)
        left = elapsed * (1 - frac) / frac if frac > 0 else 0.0
        return (f"{self.prefix}[{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} "
                f"{self.done}/{self.total} {self.unit}, {left:.0f} s left ")

    def close(self) -> None:
        """End the status line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
