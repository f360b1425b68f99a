"""Per-stage timing of one ``readalign.align`` call (debug log), for finding host overhead.

    python benchmarks/profile_api.py --pairs 2000000 --length 150 --backend cuda
    python benchmarks/profile_api.py --paper --backend cuda

With the GPU backend, the lines indented under "gpu pipeline, N chunk(s)" are the
host time summed over chunks per pipeline step (stage into pinned buffers,
enqueue copy in + forward, wait forward + traceback, wait chunk + collect); GPU
copies and kernels overlap them, so the per-batch "align batch (cuda)" line is
the wall time that counts.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench  # noqa: E402

import readalign  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--length", type=int, default=150)
    ap.add_argument("--pad", type=int, default=10)
    ap.add_argument("--mode", default="infix")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--as-str", action="store_true", help="pass lists of str instead of S arrays")
    ap.add_argument("--paper", action="store_true",
                    help="the paper's workload instead: 12,582,720 random 32-char pairs, global")
    args = ap.parse_args()
    if args.paper:
        args.pairs, args.mode = bench.PAPER_PAIRS, "global"
        reads, windows = bench.paper_pairs(args.pairs, seed=1)
    else:
        reads, windows = bench.simulate(args.pairs, args.length, args.pad, seed=1)
    if args.as_str:
        reads = [r.decode() for r in reads.tolist()]
        windows = [w.decode() for w in windows.tolist()]
    readalign.align(reads[:1000], windows[:1000], mode=args.mode, backend=args.backend)
    logging.basicConfig(level=logging.DEBUG, format="%(message)s", stream=sys.stderr)
    logging.getLogger("numba").setLevel(logging.WARNING)
    for _ in range(2):
        t0 = time.perf_counter()
        readalign.align(reads, windows, mode=args.mode, backend=args.backend)
        dt = time.perf_counter() - t0
        print(f"total {dt:.3f} s, {args.pairs / dt:,.0f} pairs/s", file=sys.stderr)


if __name__ == "__main__":
    main()
