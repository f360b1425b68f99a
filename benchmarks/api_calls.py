"""Single ``readalign.align`` calls on the scored benchmark's DNA pairs, timed one by one.

    python -m benchmarks.api_calls [--pairs 1000000] [--runs 5] [--mode local] [--backend auto]

150 bp reads against 170 bp windows (:func:`benchmarks._scored.dna_workload`), scoring
1/4/6/1 with CIGARs (``--mode edit``: edit distance, infix, with CIGARs), from lists of ``str``
and from ``S`` arrays, each after a 2,000-pair warm-up call: the best and the median of
``--runs`` calls. This is the "best of 5" of benchmarks/RESULTS.md's API A/Bs. To compare two
trees, run it in a process per tree, the tree first on ``PYTHONPATH``, in a balanced order
(old, new, new, old): the first process on a fresh H100 machine ran fastest whatever its tree
(RESULTS.md, twenty-first session).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import readalign

from ._host import device_name, host_name
from ._pairs import api_times
from ._scored import DNA_SCORING, dna_workload


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000, help="pairs per call")
    ap.add_argument("--runs", type=int, default=5, help="timed calls per input form")
    ap.add_argument("--mode", choices=("local", "global", "infix", "edit"), default="local",
                    help="scored mode, or edit distance (infix)")
    ap.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    reads, windows = dna_workload(args.pairs)
    forms = {"lists": (reads, windows),
             "S arrays": (np.array(reads, dtype="S"), np.array(windows, dtype="S"))}
    if args.mode == "edit":
        kw = dict(mode="infix")
    else:
        kw = dict(mode=args.mode, scoring=readalign.Scoring(*DNA_SCORING))
    print(f"device: {device_name(args.backend)}; host: {host_name()}", flush=True)
    for form, (q, t) in forms.items():
        times = api_times(q, t, args.runs, backend=args.backend, **kw)
        best, median = min(times), statistics.median(times)
        print(f"{args.mode} from {form}: best {best * 1e3:.1f} ms "
              f"({args.pairs / best / 1e6:.2f}M pairs/s), median {median * 1e3:.1f} ms "
              f"of {args.runs}", flush=True)


if __name__ == "__main__":
    main()
