"""Where do the threads of a run spend their wall time? A sampling profiler for the benchmarks.

Every few milliseconds a background thread looks at every other Python
thread's stack and counts its innermost frame in readalign (or the standard
library frame it waits in: a queue, a lock). Compiled numba code and htslib
calls show as the Python line that called them. A thread that is runnable but
waiting for the GIL shows at the line it is on, so a stage with many samples
but little CPU is held up by Python, not by its compiled loops. How late the sampler
itself wakes up measures that wait: a thread that wants the GIL every few milliseconds
gets it that much later than it asked.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
from types import FrameType

_OWN = ("readalign", "benchmarks")


def _where(frame: FrameType | None) -> str:
    """A stack's innermost readalign frame, and the library frame below it if any."""
    inner = ""
    wait = ""
    while frame is not None and not inner:
        code = frame.f_code
        path = code.co_filename
        here = f"{path.rsplit('/', 1)[-1]}:{frame.f_lineno} {code.co_name}"
        if any(f"/{own}/" in path for own in _OWN):
            inner = here
        elif not wait:
            wait = here
        frame = frame.f_back
    return f"{inner} [{wait}]" if wait else inner


class StackSampler:
    """Count where each thread is, every ``interval`` seconds, while in a ``with`` block."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.counts: collections.Counter = collections.Counter()
        self.samples = 0
        self.late: list[float] = []  # seconds each wake-up came after it was due
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stack-sampler", daemon=True)

    def _run(self) -> None:
        me = threading.get_ident()
        names = {}
        due = time.perf_counter() + self.interval
        while not self._stop.wait(self.interval):
            self.late.append(time.perf_counter() - due)
            names.update({t.ident: t.name for t in threading.enumerate()})
            for ident, frame in sys._current_frames().items():
                if ident != me:
                    self.counts[(names.get(ident, "?"), _where(frame))] += 1
            self.samples += 1
            due = time.perf_counter() + self.interval

    def __enter__(self) -> StackSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def report(self, top: int = 40, out=sys.stdout) -> None:
        """The ``top`` most frequent (thread, place), as a share of samples."""
        n = max(self.samples, 1)
        print(f"stack samples: {self.samples} every {self.interval * 1e3:.0f} ms "
              f"(share = fraction of samples a thread was there)", file=out)
        for (thread, place), c in self.counts.most_common(top):
            print(f"{c / n:6.1%}  {thread:<20} {place}", file=out)
        if self.late:
            late = sorted(self.late)
            at = [late[min(len(late) - 1, int(q * len(late)))] * 1e3 for q in (0.5, 0.9, 0.99)]
            print(f"GIL and scheduler wait of a thread that asks every {self.interval * 1e3:.0f} ms: "
                  f"median {at[0]:.2f} ms, p90 {at[1]:.2f}, p99 {at[2]:.2f}, max {late[-1] * 1e3:.2f}",
                  file=out)

