"""API time of the GPU pipeline over chunk sizes, block sizes and quadrant sizes (one process).

    python benchmarks/chunk_sweep.py --pairs 2000000 --chunk-mb 24,48,96,192
    python benchmarks/chunk_sweep.py --chunk-mb 48 --block 64,128,256 --k 8,16
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench  # noqa: E402

import readalign  # noqa: E402
from readalign.engine import cuda_stream as gpu_pipeline


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2_000_000)
    ap.add_argument("--length", type=int, default=150)
    ap.add_argument("--chunk-mb", default="24,48,96,192", help="sequence MB per chunk (comma-separated)")
    ap.add_argument("--block", default="128", help="threads per block (comma-separated)")
    ap.add_argument("--k", default="8", help="quadrant sizes (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reads, windows = bench.simulate(args.pairs, args.length, 10, seed=1)
    readalign.align(reads[:1000], windows[:1000], backend="cuda")
    for k in (int(x) for x in args.k.split(",")):
        for block in (int(x) for x in args.block.split(",")):
            for mb in (int(x) for x in args.chunk_mb.split(",")):
                gpu_pipeline.THREADS_PER_BLOCK = block
                gpu_pipeline.CHUNK_BYTES = mb << 20
                readalign.align(reads[:1000], windows[:1000], backend="cuda", k=k)
                best = float("inf")
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    readalign.align(reads, windows, backend="cuda", k=k)
                    best = min(best, time.perf_counter() - t0)
                print(f"k {k:2d} block {block:3d} chunk {mb:4d} MB: {best:.3f} s, "
                      f"{args.pairs / best:,.0f} pairs/s", flush=True)

if __name__ == "__main__":
    main()
