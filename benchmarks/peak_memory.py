"""Peak RSS of `readalign align` as a new process, over input sizes and batch sizes.

Simulates reads and candidates with the tests' generator, tests/support/simulate.py (150 bp
reads, 1-3 candidates each, a 5 Mb random genome), then runs the command once per (batch size,
input size) and prints the child's peak resident set size. Memory that is bounded by the
batch size shows as a flat row; memory that grows with the input, as a rising one.

    python -m benchmarks.peak_memory --reads 500000,1000000,2000000 --batch 100000,500000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from tests.support.simulate import simulate


def peak_kib(cmd: list[str], env: dict[str, str]) -> tuple[int, int]:
    """(exit status, peak RSS in KiB) of ``cmd`` run in a fresh child of a fresh Python."""
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[0]), int(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reads", default="500000,1000000,2000000", help="input sizes (reads)")
    ap.add_argument("--batch", default="100000,500000", help="--batch-size values")
    ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.reads.split(",")]
    work = args.dir or tempfile.mkdtemp(prefix="readalign-mem-")
    for n in sizes:
        os.makedirs(f"{work}/{n}", exist_ok=True)
        simulate(f"{work}/{n}", n, 5_000_000, 1)
    print(f"{'batch':>8} {'reads':>9} {'peak RSS MiB':>13} {'wall s':>7}")
    for b in (int(x) for x in args.batch.split(",")):
        for n in sizes:
            d = f"{work}/{n}"
            t = time.perf_counter()
            rc, kib = peak_kib([sys.executable, "-m", "readalign", "align", "-q", "-r", f"{d}/ref.fa",
                                "--reads", f"{d}/reads.fq", "-c", f"{d}/cand.paf", "-o",
                                f"{d}/out.bam", "--batch-size", str(b), "--backend", args.backend],
                               dict(os.environ))
            status = "" if rc == 0 else f"  (exit {rc})"
            print(f"{b:>8} {n:>9} {kib / 1024:>13.0f} {time.perf_counter() - t:>7.1f}{status}",
                  flush=True)


if __name__ == "__main__":
    main()
