"""What a run of the BAM stage reports: counts and timings, for stderr and as JSON."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

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
    reads_per_second: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def text(self) -> str:
        """A few lines for stderr."""
        st = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_seconds.items())
        return (f"reads in {self.reads_in}, aligned {self.aligned}, unaligned {self.unaligned}, "
                f"secondary {self.secondary}; pairs {self.pairs}, aligned {self.pairs_aligned}; "
                f"scoring {self.scoring}; backend {self.backend}; BGZF deflate {self.deflate}; "
                f"{self.seconds:.2f}s ({self.reads_per_second:,.0f} reads/s; {st})")

    def json(self) -> str:
        """The summary as a JSON document."""
        return json.dumps(asdict(self), indent=2) + "\n"

    def finish(self, start: float) -> None:
        """Set the run's time and rate from its ``time.perf_counter()`` start."""
        self.seconds = time.perf_counter() - start
        self.reads_per_second = self.reads_in / max(self.seconds, 1e-9)
        self.stage_seconds = {k: round(v, 4) for k, v in self.stage_seconds.items()}
