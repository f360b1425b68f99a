"""What a run of the BAM stage reports: counts and timings (compile time apart), for stderr and as JSON."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

from ..kernels.compile_notice import compile_seconds

STAGES = ("read", "pairs", "align", "assemble", "write")
"""The stages a run times, in the order a batch passes them."""


@dataclass
class Summary:
    """Counts and timings of a run (printed to stderr, optionally saved as JSON)."""

    reads_in: int = 0
    aligned: int = 0
    unaligned: int = 0
    secondary: int = 0
    pairs: int = 0
    pairs_aligned: int = 0
    records: int = 0
    repeated_names: int = 0  # reads named like the read before them (written unmapped)
    scoring: str = ""  # the scores in effect, as options
    backend: str = ""
    deflate: str = ""
    seconds: float = 0.0
    compile_seconds: float = 0.0  # of ``seconds``: numba compiling (a first run on a machine)
    reads_per_second: float = 0.0  # over ``seconds`` less ``compile_seconds``
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    """Each stage's time while nothing was compiling."""

    def text(self) -> str:
        """A few lines for stderr."""
        st = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_seconds.items())
        rate = f"{self.reads_per_second:,.0f} reads/s"
        if self.compile_seconds > 0:
            took = (f"{self.seconds:.2f}s, {self.compile_seconds:.2f}s of it compiling the kernels "
                    f"for this machine (once: later runs load them) ({rate} without the compiling; "
                    f"stages without it: {st})")
        else:
            took = f"{self.seconds:.2f}s ({rate}; {st})"
        return (f"reads in {self.reads_in}, aligned {self.aligned}, unaligned {self.unaligned}, "
                f"secondary {self.secondary}; pairs {self.pairs}, aligned {self.pairs_aligned}; "
                f"scoring {self.scoring}; backend {self.backend}; BGZF deflate {self.deflate}; "
                f"{took}")

    def json(self) -> str:
        """The summary as a JSON document."""
        return json.dumps(asdict(self), indent=2) + "\n"

    def finish(self, start: tuple[float, float]) -> None:
        """Set the run's time, compile time and rate from its start (:func:`clock`)."""
        self.seconds = time.perf_counter() - start[0]
        self.compile_seconds = round(min(compile_seconds() - start[1], self.seconds), 4)
        working = self.seconds - self.compile_seconds
        self.reads_per_second = self.reads_in / max(working, 1e-9)
        self.stage_seconds = {k: round(v, 4) for k, v in self.stage_seconds.items()}


def clock() -> tuple[float, float]:
    """Now, and the time spent compiling so far: a run's or a stage's start."""
    return time.perf_counter(), compile_seconds()


def since(start: tuple[float, float]) -> float:
    """Seconds since ``start`` (:func:`clock`) during which nothing was compiling: a first run's
    compiles would otherwise land in whichever stage first calls each function, or waits for
    the thread that compiles it."""
    return time.perf_counter() - start[0] - (compile_seconds() - start[1])
