"""A minimal progress line on stderr (no dependency): shown only on a terminal.

Work arrives in large batches (500,000 reads, or a block of matrix rows), so
counts alone can stand still for many seconds, and the first run compiles
for a minute or two before any count moves. Once started, the line is
therefore redrawn four times a second by a timer thread with the elapsed time and,
while numba compiles, ``compiling``, so it always shows that the run is alive.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from ..kernels import compile_notice

REDRAW_SECONDS = 0.25
"""How often the timer redraws the line: the elapsed time it shows moves every second, even
when a busy machine delays the timer thread by half a second."""


def clock_text(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on."""
    s = int(seconds)
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


class _ClearLine(logging.Filter):
    """Erase the progress line before a log record is printed over it (the timer redraws it)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def filter(self, record: logging.LogRecord) -> bool:
        self.progress.clear()
        return True


class Progress:
    """Count units of work and keep one status line on stderr up to date.

    With a ``total`` the line is a bar with the time left; without one (a
    stream of unknown length) it is a running count and rate. Both show the
    elapsed time. :meth:`start` starts the timer that redraws the line until
    :meth:`close`; :meth:`update` adds finished work.
    """

    def __init__(self, total: int | None, unit: str = "rows", enabled: bool | None = None,
                 stream=None, prefix: str = "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = None if total is None else max(int(total), 0)
        self.unit = unit
        self.prefix = prefix
        self.note = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.clock = clock
        self.start_time = clock()
        self._last = 0.0
        self._drawn = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self._log_filter = _ClearLine(self)

    def start(self) -> None:
        """Draw the line now and keep redrawing it until :meth:`close` (on a terminal only)."""
        if not self.enabled or self._timer is not None:
            return
        logging.getLogger("readalign").addFilter(self._log_filter)
        self._timer = threading.Thread(target=self._tick, name="readalign-progress", daemon=True)
        self._timer.start()
        self.redraw()

    def _tick(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            self.redraw()

    def update(self, n: int, note: str = "") -> None:
        """Add ``n`` finished units (``note`` is shown after the count); redraw if due."""
        self.done += n
        self.note = note
        finished = self.total is not None and self.done >= self.total
        if self.enabled and (self.clock() - self._last >= 0.2 or finished):
            self.redraw()

    def redraw(self) -> None:
        """Write the current line over the previous one."""
        if not self.enabled:
            return
        with self._lock:
            now = self.clock()
            self._last = now
            self.stream.write("\r" + self.line(now) + "\x1b[K")
            self.stream.flush()
            self._drawn = True

    def clear(self) -> None:
        """Erase the line, so that other output starts at the left margin."""
        with self._lock:
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._drawn = False

    def line(self, now: float) -> str:
        """``[#####.....]  50% 500/1,000 rows, 0:06 elapsed, 6 s left``, or
        ``1,000 reads, 500 reads/s, 0:02 elapsed``; ``, compiling`` while numba compiles."""
        elapsed = now - self.start_time
        if self.total is None:
            rate = f", {self.done / elapsed:,.0f} {self.unit}/s" if self.done and elapsed > 0 else ""
            text = f"{self.prefix}{self.done:,} {self.unit}{self.note}{rate}, {clock_text(elapsed)} elapsed"
        else:
            frac = self.done / self.total if self.total else 1.0
            width = 30
            filled = int(frac * width)
            left = f", {elapsed * (1 - frac) / frac:.0f} s left" if 0 < frac < 1 else ""
            text = (f"{self.prefix}[{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} "
                    f"{self.done:,}/{self.total:,} {self.unit}, {clock_text(elapsed)} elapsed{left}")
        return text + (", compiling" if compile_notice.compiling() else "")

    def close(self) -> None:
        """Stop the timer and end the status line with its final state."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
            logging.getLogger("readalign").removeFilter(self._log_filter)
        if self.enabled and (self._drawn or self.done):
            self.redraw()
            self.stream.write("\n")
            self.stream.flush()
