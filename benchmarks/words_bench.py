"""Word-list edit distance: rapidfuzz on every host core vs readalign, side by side.

Workloads (same seeded inputs for both tools, results checked for equality):

* ``words``: N random words of 3-15 letters, all against all (``--choices``
  gives a second list instead), dense; with ``--max-distance K`` also the
  dense matrix under that cut-off (rapidfuzz ``score_cutoff``) and
  readalign's sparse form.
* ``paper``: the paper's 12,582,720 pairs of 32-character strings, pairwise
  (rapidfuzz ``process.cpdist`` vs ``readalign.edit_distance``).

Examples::

    python benchmarks/words_bench.py --queries 5000 --backend cpu
    python benchmarks/words_bench.py --queries 50000 --max-distance 2 --backend cuda
    python benchmarks/words_bench.py --workload paper --backend cuda

Timings include packing the strings and, for the GPU, copying results back.
Each measurement is the best of ``--repeat`` runs after one warm-up call.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

PAPER_PAIRS = 12_582_720
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def random_words(rng: np.random.Generator, count: int, lo: int, hi: int, alphabet: str) -> list:
    """``count`` words with lengths uniform in ``lo..hi`` over ``alphabet``."""
    lengths = rng.integers(lo, hi + 1, count)
    symbols = np.array(list(alphabet))[rng.integers(0, len(alphabet), int(lengths.sum()))]
    flat = "".join(symbols.tolist())
    ends = np.cumsum(lengths)
    return [flat[e - n:e] for e, n in zip(ends.tolist(), lengths.tolist(), strict=True)]


def best_time(fn, repeat: int):
    """Run ``fn`` ``repeat`` times; return (best seconds, last result)."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def host_name() -> str:
    """CPU model and core count."""
    model = platform.processor() or "cpu"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} x{os.cpu_count()}"


def device_name(backend: str) -> str:
    """What the readalign backend runs on."""
    from readalign import backends

    if backends.resolve(backend) == "cpu":
        import numba

        return f"CPU, {numba.get_num_threads()} threads"
    return backends.cuda_status()[1]


def words_rows(args, rng) -> list:
    """Measure the all-against-all (or queries x choices) workload; return table rows."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    import readalign

    queries = random_words(rng, args.queries, args.min_len, args.max_len, args.alphabet)
    choices = (random_words(rng, args.choices, args.min_len, args.max_len, args.alphabet)
               if args.choices else None)
    other = queries if choices is None else choices
    pairs = len(queries) * len(other)
    shape = f"{len(queries)}x{len(other)}{' self' if choices is None else ''}"
    warm = queries[:200]
    readalign.cdist(warm, None if choices is None else choices[:200], backend=args.backend)
    rows = []
    cutoffs = [None] + ([args.max_distance] if args.max_distance is not None else [])
    for md in cutoffs:
        label = f"words {shape} dense" + ("" if md is None else f" max_distance={md}")
        rf_t, rf = best_time(lambda md=md: process.cdist(
            queries, other, scorer=Levenshtein.distance, score_cutoff=md, workers=-1,
            dtype=np.uint8), args.repeat)
        ra_t, ra = best_time(lambda md=md: readalign.cdist(
            queries, choices, max_distance=md, backend=args.backend), args.repeat)
        same = bool(np.array_equal(rf, ra))
        rows.append((label, pairs, rf_t, ra_t, same))
        del rf, ra
        if md is not None:
            sp_t, sp = best_time(lambda md=md: readalign.cdist(
                queries, choices, max_distance=md, sparse=True, backend=args.backend),
                args.repeat)
            npairs = pairs if choices is not None else len(queries) * (len(queries) - 1) // 2
            rows.append((f"words {shape} sparse max_distance={md} ({sp.i.shape[0]} hits)",
                         npairs, None, sp_t, None))
    return rows


def paper_rows(args, rng) -> list:
    """Measure the paper's pairwise workload; return table rows."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    import readalign

    n = args.pairs
    a = random_words(rng, n, args.paper_len, args.paper_len, args.paper_alphabet)
    b = random_words(rng, n, args.paper_len, args.paper_len, args.paper_alphabet)
    readalign.edit_distance(a[:1000], b[:1000], backend=args.backend)
    rf_t, rf = best_time(lambda: process.cpdist(a, b, scorer=Levenshtein.distance, workers=-1),
                         args.repeat)
    ra_t, ra = best_time(lambda: readalign.edit_distance(a, b, backend=args.backend),
                         args.repeat)
    same = bool(np.array_equal(np.asarray(rf), ra))
    return [(f"paper {n} pairs of {args.paper_len} chars (pairwise)", n, rf_t, ra_t, same)]


def print_table(rows: list, backend: str) -> None:
    """One line per measurement: pairs/s of both tools and their ratio."""
    print(f"host: {host_name()}; readalign: {device_name(backend)}")
    print("| workload | pairs | rapidfuzz s | rapidfuzz pairs/s | readalign s | "
          "readalign pairs/s | ratio | equal |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for label, pairs, rf_t, ra_t, same in rows:
        rf = "-" if rf_t is None else f"{rf_t:.3f} | {pairs / rf_t:.3e}"
        ratio = "-" if rf_t is None else f"{rf_t / ra_t:.2f}x"
        print(f"| {label} | {pairs} | {rf if rf_t is not None else '- | -'} | {ra_t:.3f} | "
              f"{pairs / ra_t:.3e} | {ratio} | {'-' if same is None else same} |")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", choices=("words", "paper", "both"), default="words")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--queries", type=int, default=5000, help="words in the (first) list")
    p.add_argument("--choices", type=int, default=0,
                   help="words in a second list (0: all against all)")
    p.add_argument("--min-len", type=int, default=3)
    p.add_argument("--max-len", type=int, default=15)
    p.add_argument("--alphabet", default=LETTERS)
    p.add_argument("--max-distance", type=int, default=None,
                   help="also measure with this cut-off (dense and sparse)")
    p.add_argument("--pairs", type=int, default=PAPER_PAIRS, help="pairs of the paper workload")
    p.add_argument("--paper-len", type=int, default=32)
    p.add_argument("--paper-alphabet", default="ACGT")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=6)
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    if args.workload in ("words", "both"):
        rows += words_rows(args, rng)
    if args.workload in ("paper", "both"):
        rows += paper_rows(args, rng)
    print_table(rows, args.backend)


if __name__ == "__main__":
    main()
