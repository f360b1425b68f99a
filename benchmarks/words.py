"""Word-list edit distance: rapidfuzz on every host core vs readalign, side by side.

Workloads (same seeded inputs for both tools, results checked for equality):

* ``words``: N random words of 3-15 letters, all against all (``--choices``
  gives a second list instead), dense; with ``--max-distance K`` also the
  dense matrix under that cut-off (rapidfuzz ``score_cutoff``) and
  readalign's sparse form.
* ``paper``: the paper's 12,582,720 pairs of 32-character strings, pairwise
  (rapidfuzz ``process.cpdist`` vs ``readalign.edit_distance``).

Examples::

    python -m benchmarks.words --queries 5000 --backend cpu
    python -m benchmarks.words --queries 50000 --max-distance 2 --backend cuda
    python -m benchmarks.words --workload both --queries 50000 --max-distance 2 \
        --backend cuda --json words.json

Timings go through the public API (``readalign.cdist``, ``readalign.edit_distance``) and
include packing the strings and, for the GPU, copying results back. Each measurement is
the best of ``--repeat`` runs after one warm-up call. On the GPU a kernel-only time (CUDA
events around the package's own launches, inputs resident) is reported beside the
end-to-end one. A failing row prints its error and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import time
import traceback

import numpy as np

from ._host import device_name, host_name
from ._provenance import provenance
from .bench import PAPER_PAIRS

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


def _row(label: str, pairs: int, rf_t, ra_t, same, kernel_t=None) -> dict:
    return {"workload": label, "pairs": pairs, "rapidfuzz_s": rf_t, "readalign_s": ra_t,
            "kernel_s": kernel_t, "equal": same, "error": None}


def _guard(rows: list, label: str, fn) -> None:
    """Append ``fn()``'s rows; on failure print the error and record it, then go on."""
    try:
        rows.extend(fn())
    except Exception as exc:  # a failing row must not end the benchmark
        traceback.print_exc()
        rows.append({"workload": label, "pairs": 0, "rapidfuzz_s": None, "readalign_s": None,
                     "kernel_s": None, "equal": None, "error": f"{type(exc).__name__}: {exc}"})


def _on_gpu(args) -> bool:
    from readalign.runtime import backends

    return backends.resolve(args.backend) == "cuda"


def _event_seconds(launch, stream) -> float:
    """Seconds between CUDA events around ``launch()`` on ``stream`` (after one warm-up)."""
    from numba import cuda

    launch()
    start, stop = cuda.event(), cuda.event()
    start.record(stream)
    launch()
    stop.record(stream)
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / 1e3


def _dense_kernel_time(queries, choices, md) -> float:
    """Kernel-only seconds of every dense row block (``words.gpu_blocks.launch_rows``), no copies."""
    from numba import cuda

    from readalign.words import cdist as words
    from readalign.words import gpu_blocks as cuda_words

    codes = words.prepare(queries, choices)
    md = -1 if md is None else md
    dev = cuda_words.device_lists(codes)
    nq, nc = len(codes.q), len(codes.c)
    dt = words.result_dtype(codes.maxlen, md)
    step = cuda_words.block_rows(nq, nc, np.dtype(dt).itemsize)
    buf = cuda.device_array(step * nc, dtype=dt)
    stream = cuda.stream()

    def launch() -> None:
        for a in range(0, nq, step):
            cuda_words.launch_rows(dev, a, min(a + step, nq), md, buf, stream)

    return _event_seconds(launch, stream)


def _pair_kernel_time(a, b) -> float:
    """Kernel-only seconds of the pairwise kernel over all pairs at once, inputs resident."""
    from numba import cuda
    from readalign.kernels import cuda_words as kcw

    from readalign.engine.packing import pack_text

    arrays = []
    for p in (pack_text(a), pack_text(b)):
        arrays += [cuda.to_device(kcw.int_codes(p.data)), cuda.to_device(p.offsets)]
    out = cuda.device_array(len(a), dtype=np.int32)
    stream = cuda.stream()
    blocks = (len(a) + kcw.PAIR_TPB - 1) // kcw.PAIR_TPB

    def launch() -> None:
        kcw.pair_kernel()[blocks, kcw.PAIR_TPB, stream](*arrays, -1, out)

    return _event_seconds(launch, stream)


def _rapidfuzz_dense(process, scorer, queries, other, md, repeat: int):
    """rapidfuzz's fastest dense call: (seconds, matrix).

    With ``choices is queries`` rapidfuzz takes a symmetric path that computes
    half the matrix without its SIMD kernels; a copy of the list takes the SIMD
    path, which is several times faster. Both are timed and the faster is the peer.
    """
    best = None
    for choices in (other, list(other)):
        t, m = best_time(lambda choices=choices: process.cdist(
            queries, choices, scorer=scorer.distance, score_cutoff=md, workers=-1,
            dtype=np.uint8), repeat)
        print(f"  rapidfuzz cdist, choices {'is' if choices is other else 'is a copy of'} the "
              f"list given: {t:.3f} s", flush=True)
        if best is None or t < best[0]:
            best = (t, m)
    return best


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
    rows = []
    cutoffs = [None] + ([args.max_distance] if args.max_distance is not None else [])
    for md in cutoffs:
        label = f"words {shape} dense" + ("" if md is None else f" max_distance={md}")
        rf_t, rf = _rapidfuzz_dense(process, Levenshtein, queries, other, md, args.repeat)
        def dense(md=md, rf=rf, rf_t=rf_t, label=label):
            readalign.cdist(queries[:200], None if choices is None else choices[:200],
                            max_distance=md, backend=args.backend)
            ra_t, ra = best_time(lambda: readalign.cdist(
                queries, choices, max_distance=md, backend=args.backend), args.repeat)
            same = bool(np.array_equal(rf, ra))
            del ra
            kernel_t = _dense_kernel_time(queries, choices, md) if _on_gpu(args) else None
            return [_row(label, pairs, rf_t, ra_t, same, kernel_t)]
        _guard(rows, label, dense)

        def from_arrays(md=md, rf=rf, label=label):
            """The same call on fixed-width ``S`` arrays: what the lists are measured against."""
            q_arr = np.array([w.encode() for w in queries], dtype="S")
            c_arr = None if choices is None else np.array([w.encode() for w in choices], dtype="S")
            ra_t, ra = best_time(lambda: readalign.cdist(
                q_arr, c_arr, max_distance=md, backend=args.backend), args.repeat)
            return [_row(f"{label}, S arrays", pairs, None, ra_t, bool(np.array_equal(rf, ra)),
                         None)]
        _guard(rows, f"{label}, S arrays", from_arrays)
        del rf
        if md is not None:
            def sparse(md=md):
                sp_t, sp = best_time(lambda: readalign.cdist(
                    queries, choices, max_distance=md, sparse=True, backend=args.backend),
                    args.repeat)
                npairs = pairs if choices is not None else len(queries) * (len(queries) - 1) // 2
                return [_row(f"words {shape} sparse max_distance={md} ({sp.i.shape[0]} hits)",
                             npairs, None, sp_t, None, None)]
            _guard(rows, f"words sparse max_distance={md}", sparse)
    return rows


def paper_rows(args, rng) -> list:
    """Measure the paper's pairwise workload; return table rows."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    import readalign

    n = args.pairs
    a = random_words(rng, n, args.paper_len, args.paper_len, args.paper_alphabet)
    b = random_words(rng, n, args.paper_len, args.paper_len, args.paper_alphabet)
    label = f"paper {n} pairs of {args.paper_len} chars (pairwise)"
    rf_t, rf = best_time(lambda: process.cpdist(a, b, scorer=Levenshtein.distance, workers=-1),
                         args.repeat)
    rf = np.asarray(rf)
    rows = []

    def run():
        readalign.edit_distance(a[:1000], b[:1000], backend=args.backend)
        ra_t, ra = best_time(lambda: readalign.edit_distance(a, b, backend=args.backend),
                             args.repeat)
        kernel_t = _pair_kernel_time(a, b) if _on_gpu(args) else None
        return [_row(label, n, rf_t, ra_t, bool(np.array_equal(rf, ra)), kernel_t)]
    _guard(rows, label, run)
    return rows


def _fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(rows: list, backend: str) -> None:
    """One line per measurement: pairs/s of both tools, their ratio, kernel-only time."""
    print(f"host: {host_name()}; readalign: {device_name(backend)}")
    print("| workload | pairs | rapidfuzz s | rapidfuzz pairs/s | readalign s | "
          "readalign pairs/s | kernel s | kernel pairs/s | ratio | equal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        if r["error"]:
            print(f"| {r['workload']} | ERROR: {r['error']} |")
            continue
        p, rf_t, ra_t, k_t = r["pairs"], r["rapidfuzz_s"], r["readalign_s"], r["kernel_s"]
        print(f"| {r['workload']} | {p} | {_fmt(rf_t, '.3f')} | "
              f"{_fmt(rf_t and p / rf_t, '.3e')} | {ra_t:.3f} | {p / ra_t:.3e} | "
              f"{_fmt(k_t, '.4f')} | {_fmt(k_t and p / k_t, '.3e')} | "
              f"{'-' if rf_t is None else f'{rf_t / ra_t:.2f}x'} | "
              f"{'-' if r['equal'] is None else r['equal']} |")


def write_json(path: str, rows: list, backend: str) -> None:
    """The table as JSON, with where it was measured (``benchmarks._provenance``)."""
    with open(path, "w") as fh:
        json.dump({**provenance(__spec__.name), "device": device_name(backend), "rows": rows},
                  fh, indent=2)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", choices=("words", "paper", "both"), default="words",
                   help="all-against-all word lists, the paper's pairwise workload, or both")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where readalign runs (rapidfuzz always uses every host core)")
    p.add_argument("--queries", type=int, default=5000, help="words in the (first) list")
    p.add_argument("--choices", type=int, default=0,
                   help="words in a second list (0: all against all)")
    p.add_argument("--min-len", type=int, default=3,
                   help="shortest word")
    p.add_argument("--max-len", type=int, default=15,
                   help="longest word")
    p.add_argument("--alphabet", default=LETTERS,
                   help="letters the words are drawn from")
    p.add_argument("--max-distance", type=int, default=None,
                   help="also measure with this cut-off (dense and sparse)")
    p.add_argument("--pairs", type=int, default=PAPER_PAIRS, help="pairs of the paper workload")
    p.add_argument("--paper-len", type=int, default=32,
                   help="string length of the paper workload")
    p.add_argument("--paper-alphabet", default="ACGT",
                   help="letters of the paper workload")
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")
    p.add_argument("--repeat", type=int, default=3,
                   help="timed runs per measurement; the best is reported")
    p.add_argument("--seed", type=int, default=6,
                   help="random seed of the inputs")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    if args.workload in ("words", "both"):
        _guard(rows, "words", lambda: words_rows(args, rng))
    if args.workload in ("paper", "both"):
        _guard(rows, "paper", lambda: paper_rows(args, rng))
    print_table(rows, args.backend)
    if args.json:
        write_json(args.json, rows, args.backend)


if __name__ == "__main__":
    main()
