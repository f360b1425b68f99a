"""The first call of each kind in a new process against the same call once warm.

Each kind runs in a process of its own (that is the point: a script's first call pays for
cache loads, the thread pool, the CUDA context and first-use buffers), on the scored
benchmark's DNA pairs (150 bp reads against 170 bp windows): the first call is timed, then
``--runs`` more, and the ratio of the first to the best of the rest is printed. Run it twice
on a fresh machine: the first run fills the compile cache.

    python -m benchmarks.probes.first_calls [--pairs 1000000] [--backend auto] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from .._provenance import provenance

KINDS = {
    "align, edit, lists of str": "readalign.align(reads, windows, backend=backend)",
    "align, edit, S arrays": "readalign.align(np.array(reads, 'S'), np.array(windows, 'S'), "
                             "backend=backend)",
    "edit_distance": "readalign.edit_distance(reads, windows, backend=backend)",
    "align, scored local": "readalign.align(reads, windows, scoring=readalign.Scoring(*DNA), "
                           "mode='local', backend=backend)",
}

CHILD = """
import json, time
t0 = time.perf_counter()
import numpy as np
import readalign
from benchmarks._scored import DNA_SCORING as DNA, dna_workload
reads, windows = dna_workload({pairs})
backend = {backend!r}
times = []
for _ in range({runs} + 1):
    t = time.perf_counter()
    {call}
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""


def one_kind(call: str, pairs: int, runs: int, backend: str) -> list[float]:
    """Call times in a new process: the first, then ``runs`` more."""
    code = CHILD.format(pairs=pairs, runs=runs, backend=backend, call=call)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3, help="warm calls after the first")
    ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    rows = []
    print(f"{'kind':<28} {'first s':>8} {'steady s':>9} {'ratio':>6}")
    for kind, call in KINDS.items():
        t = time.perf_counter()
        times = one_kind(call, args.pairs, args.runs, args.backend)
        first, steady = times[0], min(times[1:])
        rows.append({"kind": kind, "first_s": first, "steady_s": steady, "ratio": first / steady,
                     "process_s": time.perf_counter() - t})
        print(f"{kind:<28} {first:>8.3f} {steady:>9.3f} {first / steady:>6.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**provenance("benchmarks.probes.first_calls"), "pairs": args.pairs,
                       "backend": args.backend, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
