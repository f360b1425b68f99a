"""Single ``readalign.align`` calls on the scored benchmark's DNA pairs, timed one by one.

    python -m benchmarks.probes.api_calls [--pairs 1000000] [--runs 5] [--mode local] [--backend auto]

150 bp reads against 170 bp windows (:func:`benchmarks._scored.dna_workload`), scoring
1/4/6/1 with CIGARs (``--mode edit``: edit distance, infix, with CIGARs), from lists of ``str``
and from ``S`` arrays, each after a 2,000-pair warm-up call: the best and the median of
``--runs`` calls. This is the "best of 5" of benchmarks/RESULTS.md's API A/Bs. To compare two
trees, run it in a process per tree, the tree first on ``PYTHONPATH``, in a balanced order
(old, new, new, old): the first process on a fresh H100 machine ran fastest whatever its tree
(RESULTS.md, 2026-11-26, branch ``lists-in-place-gil``). To compare settings of one tree,
``--alternate`` times each value in one process (``--alternate pipeline-lag=1,2``,
``--alternate chunk-mb=32,64,128``; :mod:`benchmarks._knobs`).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import readalign

from .. import _knobs
from .._host import device_name, host_name
from .._pairs import api_times
from .._scored import DNA_SCORING, dna_workload


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000, help="pairs per call")
    ap.add_argument("--runs", type=int, default=5, help="timed calls per input form")
    ap.add_argument("--mode", choices=("local", "global", "infix", "edit"), default="local",
                    help="scored mode, or edit distance (infix)")
    ap.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--alternate", default=None, metavar="KNOB=V1,V2,...", type=_knobs.checked,
                    help="time each value in one process, in the order V1..Vn Vn..V1, --runs "
                         f"calls each time (KNOB one of {', '.join(_knobs.KNOBS)})")
    return ap.parse_args(argv)


def timings(q, t, runs: int, alternate: str | None, **kw) -> dict[str | None, list[float]]:
    """Call times per value of the alternated knob (one entry, None, without one)."""
    if alternate is None:
        return {None: api_times(q, t, runs, **kw)}
    knob, values = _knobs.parse(alternate)
    times: dict[str | None, list[float]] = {v: [] for v in values}
    for value in values + values[::-1]:
        with _knobs.KNOBS[knob](value):
            times[value] += api_times(q, t, runs, **kw)
    return times


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
        for value, times in timings(q, t, args.runs, args.alternate, backend=args.backend,
                                    **kw).items():
            best, median = min(times), statistics.median(times)
            under = "" if value is None else f" ({args.alternate.partition('=')[0]}={value})"
            print(f"{args.mode} from {form}{under}: best {best * 1e3:.1f} ms "
                  f"({args.pairs / best / 1e6:.2f}M pairs/s), median {median * 1e3:.1f} ms "
                  f"of {len(times)}", flush=True)


if __name__ == "__main__":
    main()
