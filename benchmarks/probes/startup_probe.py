"""What a new `readalign align` process spends before and around its pipeline.

Run it as a process of its own (that is the point): it times numba's import,
the import of readalign's command line, one `readalign align` run over the
files that ``tests/support/simulate.py`` writes, and every load from numba's disk
cache during that run (CPU functions and CUDA kernels; "MISS" means compiled).

    python -m benchmarks.probes.startup_probe --dir /tmp/probe --reads 2000000 --simulate
    python -m benchmarks.probes.startup_probe --dir /tmp/probe -- --backend cuda

The first command writes the files; run the second one twice, since the first
run on a machine fills the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

T_START = time.perf_counter()


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="where the simulated files are (or go)")
    ap.add_argument("--reads", type=int, default=2_000_000, help="reads to simulate")
    ap.add_argument("--simulate", action="store_true", help="write the files and stop")
    ap.add_argument("align_args", nargs="*", help="further `readalign align` options (after --)")
    return ap.parse_args()


def timed_loads(cache_class, label: str, loads: list) -> None:
    """Wrap ``cache_class.load_overload`` to append (seconds, label + function, hit) to ``loads``."""
    original = cache_class.load_overload

    def load_overload(self, sig, target_context):
        t = time.perf_counter()
        got = original(self, sig, target_context)
        loads.append((time.perf_counter() - t, f"{label}{self._name}", got is not None))
        return got

    cache_class.load_overload = load_overload


def main() -> None:
    args = parse_args()
    if args.simulate:
        from tests.support.simulate import simulate  # imported here: the probe times imports itself

        print(f"simulated {simulate(args.dir, args.reads, 5_000_000, 1)[3]:,} pairs")
        return
    from numba.core import caching

    loads: list = []
    timed_loads(caching.Cache, "", loads)
    t_numba = time.perf_counter()
    try:
        from numba.cuda.core import caching as cuda_caching
    except ImportError:  # numba's own cuda (the CPU-only install) caches through numba.core
        cuda_caching = None
    if cuda_caching is not None:
        timed_loads(cuda_caching.Cache, "CUDA ", loads)
    t_cuda = time.perf_counter()
    from readalign.cli import main as cli_main
    t_cli = time.perf_counter()
    summary = os.path.join(args.dir, "probe.json")
    rc = cli_main(["align", "-q", "-r", os.path.join(args.dir, "ref.fa"),
                   "--reads", os.path.join(args.dir, "reads.fq"),
                   "-c", os.path.join(args.dir, "cand.paf"),
                   "-o", os.path.join(args.dir, "probe.bam"),
                   "--summary-json", summary, *args.align_args])
    if rc:
        sys.exit(rc)
    t_end = time.perf_counter()
    with open(summary) as fh:
        s = json.load(fh)
    print(f"import numba {t_numba - T_START:.2f} s, numba-cuda {t_cuda - t_numba:.2f} s, "
          f"readalign.cli {t_cli - t_cuda:.2f} s")
    print(f"align command {t_end - t_cli:.2f} s; its pipeline {s['seconds']:.2f} s "
          f"(stage seconds {s['stage_seconds']})")
    print(f"cache loads: {len(loads)}, {sum(x[0] for x in loads):.2f} s in all")
    for dt, name, hit in sorted(loads, reverse=True):
        print(f"  {dt * 1e3:7.1f} ms {'hit ' if hit else 'MISS'} {name}")


if __name__ == "__main__":
    main()
