"""A minimal progress bar on stderr (no dependency): shown only on a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    """Count units of work towards ``total`` and redraw one status line, at most 5 times/s."""

    def __init__(self, total: int, unit: str = "rows", enabled: bool | None = None,
                 stream=None) -> None:
        self.total = max(int(total), 0)
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.start = time.monotonic()
        self._last = 0.0

    def update(self, n: int) -> None:
        """Add ``n`` finished units; redraw if enough time has passed."""
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last >= 0.2 or self.done >= self.total):
            self._last = now
            self.stream.write("\r" + self.line(now))
            self.stream.flush()

    def line(self, now: float) -> str:
        """``[#####.....]  50% 500/1000 rows, 12 s left``."""
        frac = self.done / self.total if self.total else 1.0
        width = 30
        filled = int(frac * width)
        elapsed = now - self.start
        left = elapsed * (1 - frac) / frac if frac > 0 else 0.0
        return (f"[{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} "
                f"{self.done}/{self.total} {self.unit}, {left:.0f} s left ")

    def close(self) -> None:
        """End the status line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
