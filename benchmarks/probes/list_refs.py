"""How long a call spends keeping a list's elements alive: the take and the drop.

    python -m benchmarks.probes.list_refs [--pairs 1000000] [--runs 7]

Reads both lists of the scored benchmark's DNA pairs in place (``read_strings``: the
references taken on helper threads, each element's header read in the same visit) and lets
them go (``release``), ``--runs`` times after a warm-up: the best and the median of each
step, for the two lists together. These are the take and drop rows of benchmarks/RESULTS.md
(2026-11-26, ``bcd7eb0``).
"""

from __future__ import annotations

import argparse
import statistics
import time

from readalign.engine.pylists.pyobjects import read_strings

from .._host import host_name
from .._scored import dna_workload


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000, help="elements per list")
    ap.add_argument("--runs", type=int, default=7, help="timed takes and drops")
    return ap.parse_args(argv)


def times(lists: tuple[list[str], ...], runs: int) -> tuple[list[float], list[float], int]:
    """Seconds to take both lists' references and to drop them, per run; the helper threads."""
    takes, drops, parts = [], [], 1
    for run in range(runs + 1):  # the first run loads the compiled code
        t0 = time.perf_counter()
        rows = [read_strings(seqs, None) for seqs in lists]
        t1 = time.perf_counter()
        for r in rows:
            r.release()
        t2 = time.perf_counter()
        parts = rows[0].refs.parts
        if run:
            takes.append(t1 - t0)
            drops.append(t2 - t1)
    return takes, drops, parts


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    takes, drops, parts = times(dna_workload(args.pairs), args.runs)
    print(f"host: {host_name()}; {parts} thread(s) a list", flush=True)
    for step, seconds in (("take with the header look", takes), ("drop", drops)):
        print(f"{step}: best {min(seconds) * 1e3:.1f} ms, median "
              f"{statistics.median(seconds) * 1e3:.1f} ms of {len(seconds)}", flush=True)


if __name__ == "__main__":
    main()
