"""Side-by-side benchmark: readalign's kernels and API against edlib and WFA2 on every core.

One run, one table. Workloads: reads of each ``--lengths`` against windows
20 bp longer (10 bp padding each side; 2% substitutions, 0.2% indels), with
CIGAR and distance-only; the paper's 12,582,720 pairs of 32-character
strings (``--paper``); the kernel ablation (warp vote on/off, k = 8/16/24/32, with the
compiler's register and local-memory report; distance-only 32-bit cells against 16-bit
packed cells with and without Hopper's DPX minimum, ``--ablation``).

    python -m benchmarks.bench --pairs 2000000 --paper --ablation --json out.json

GCUPS counts cells as read length x window length. Peers run through a
process pool on every host core over the same pairs: edlib (infix ``HW``,
path) and, when installed, pywfa (WFA2, ends-free on the window, unit costs
as mismatch 1 / gap-open 0 / gap-extend 1, CIGAR).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time

import numpy as np

import readalign
from readalign.engine.batching import DEFAULT_K, auto_k, length_order
from readalign.engine.job import Job
from readalign.engine.packing import N_CODE, pack_dna
from readalign.runtime import backends

from ._host import cpu_model, host_line
from ._packed import time_packed
from ._pairs import ACGT, simulate, time_api
from ._plain_nw import plain_nw_infix
from ._provenance import provenance
from ._scored import rows as scored_rows

PAPER_PAIRS = 12_582_720
"""The paper's workload: this many pairs of random 32-character strings."""


def paper_pairs(count: int = PAPER_PAIRS, seed: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """The paper's workload: ``count`` pairs of random 32-character DNA strings (``S32``)."""
    rng = np.random.default_rng(seed)
    return tuple(ACGT[rng.integers(0, 4, (count, 32))].view("S32").ravel() for _ in range(2))


def cells(reads: np.ndarray, windows: np.ndarray) -> int:
    q = pack_dna(reads)
    t = pack_dna(windows)
    return int((q.lengths * t.lengths).sum())


# ---- peers (module-level so the process pool can pickle them) --------------------------------
_PEER_DATA: dict = {}


def _edlib_chunk(bounds):
    import edlib

    reads, windows = _PEER_DATA["reads"], _PEER_DATA["windows"]
    out = 0
    for i in range(*bounds):
        out += edlib.align(reads[i], windows[i], mode="HW", task="path")["editDistance"]
    return out


def _wfa_chunk(bounds):
    from pywfa import WavefrontAligner

    reads, windows = _PEER_DATA["reads"], _PEER_DATA["windows"]
    lo, hi = bounds
    free = min(len(w) for w in windows[lo:hi])
    aligner = WavefrontAligner(span="ends-free", mismatch=1, gap_opening=0, gap_extension=1,
                               pattern_begin_free=0, pattern_end_free=0,
                               text_begin_free=free, text_end_free=free)
    out = 0
    for i in range(lo, hi):
        out -= aligner(windows[i], reads[i], clip_cigar=False).score
    return out


def run_peer(name: str, reads: list[str], windows: list[str], workers: int) -> float | None:
    """Seconds for a peer over all pairs on ``workers`` processes (None if unavailable)."""
    try:
        __import__({"edlib": "edlib", "wfa2": "pywfa"}[name])
    except ImportError:
        return None
    _PEER_DATA["reads"], _PEER_DATA["windows"] = reads, windows
    chunk = max(1, len(reads) // (workers * 16))
    tasks = [(lo, min(lo + chunk, len(reads))) for lo in range(0, len(reads), chunk)]
    fn = _edlib_chunk if name == "edlib" else _wfa_chunk
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        pool.map(fn, tasks[:workers])  # warm the workers
        t0 = time.perf_counter()
        pool.map(fn, tasks)
        return time.perf_counter() - t0


# ---- readalign -----------------------------------------------------------------------------
def time_kernels(reads, windows, infix: bool, cigar: bool, k: int = DEFAULT_K, vote: bool = True,
                 repeats: int = 5) -> dict:
    """Kernel-only time (CUDA events) of the engine's own launches, pairs resident on the device.

    The first device batch of the length-sorted pairs is uploaded once; the
    forward and traceback launches of ``readalign.engine.gpu.edit`` are timed
    separately (median of ``repeats``).
    """
    from numba import cuda
    from readalign.kernels.cuda import kernels

    from readalign.engine.flatseq import cigar_slots
    from readalign.engine.gpu import edit, sizing
    from readalign.runtime.gpu_memory import DevicePool

    job = Job(infix=infix, max_distance=-1, n_code=N_CODE, eqx=False, with_cigar=cigar, k=k)
    q, t = pack_dna(reads), pack_dna(windows)
    idx = length_order(q.lengths, t.lengths)
    m, n = q.lengths[idx], t.lengths[idx]
    lo, hi, m_max, n_max = sizing.device_batches(
        m, n, lambda m_max, n_max: edit.lane_bytes(m_max, n_max, k, cigar))[0]
    count = hi - lo
    pool = DevicePool(cuda.stream())
    seqs = tuple(cuda.to_device(a, stream=pool.stream)
                 for a in (q.data, q.offsets, t.data, t.offsets, idx[lo:hi]))

    def forward():
        return edit.launch_forward(pool, seqs, job, k, count, m_max, n_max, vote)

    outs = forward()
    pool.stream.synchronize()
    out_off = np.empty(count, np.int64)
    total = int(cigar_slots(outs[1].copy_to_host(), out_off))
    d_off = edit.upload_slots(pool, out_off)

    def traceback():
        edit.launch_traceback(pool, seqs, job, k, outs, d_off, total, vote)

    if cigar:
        traceback()
    pool.stream.synchronize()
    times = []
    for _ in range(repeats):
        e0, e1, e2 = cuda.event(), cuda.event(), cuda.event()
        e0.record(pool.stream)
        forward()
        e1.record(pool.stream)
        if cigar:
            traceback()
        e2.record(pool.stream)
        e2.synchronize()
        times.append((cuda.event_elapsed_time(e0, e1) / 1e3, cuda.event_elapsed_time(e1, e2) / 1e3))
    f, b = np.median([x[0] for x in times]), np.median([x[1] for x in times])
    used_cells = int((m[lo:hi] * n[lo:hi]).sum())
    report = {"pairs": count, "cells": used_cells, "forward_s": f, "traceback_s": b,
              "seconds": f + b}
    fwd, tb, _ = kernels(k, vote)
    for name, kern in (("forward", fwd), ("traceback", tb)):
        for attr in ("get_regs_per_thread", "get_local_mem_per_thread"):
            try:
                val = getattr(kern, attr)()
                report[f"{name}_{attr[4:]}"] = val if not isinstance(val, dict) else list(val.values())
            except Exception as exc:  # report what the compiler would not say
                report[f"{name}_{attr[4:]}"] = f"n/a ({type(exc).__name__})"
    return report


def time_call(fn, repeats: int = 3) -> float:
    """Best-of wall time of ``fn()`` after one untimed call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def list_overhead_ns(reads: np.ndarray, windows: np.ndarray) -> float:
    """Nanoseconds a sequence that packing a list of ``str`` costs over a fixed-width array."""
    lists = [[x.decode() for x in a.tolist()] for a in (reads, windows)]
    as_list = time_call(lambda: [pack_dna(x, lazy=True) for x in lists])
    as_array = time_call(lambda: [pack_dna(x, lazy=True) for x in (reads, windows)])
    return (as_list - as_array) * 1e9 / (reads.shape[0] + windows.shape[0])


def time_plain_nw(reads, windows) -> float:
    """Seconds for the plain full-matrix NW baseline (benchmarks/_plain_nw.py) on every core."""
    q, t = pack_dna(reads), pack_dna(windows)
    plain_nw_infix(q.data, q.offsets[:3], t.data, t.offsets[:3], 4)
    t0 = time.perf_counter()
    plain_nw_infix(q.data, q.offsets, t.data, t.offsets, 4)
    return time.perf_counter() - t0


def device_name() -> str:
    ok, why = backends.cuda_status()
    return f"{why if ok else 'no GPU'}; host {os.cpu_count()} cores ({cpu_model()})"


def row(table: list, name: str, pairs: int, ncells: int, seconds: float | None, **extra) -> dict:
    rec = {"name": name, "pairs": pairs, "cells": ncells, "seconds": seconds,
           "pairs_per_s": pairs / seconds if seconds else None,
           "gcups": ncells / seconds / 1e9 if seconds else None, **extra}
    table.append(rec)
    return rec


def print_table(table: list, peers: dict) -> None:
    head = f"{'workload':<44}{'pairs':>11}{'seconds':>10}{'pairs/s':>14}{'GCUPS':>9}"
    for p in peers:
        head += f"{'x ' + p:>11}"
    print(head)
    for rec in table:
        if rec["seconds"] is None:
            print(f"{rec['name']:<44}{rec['pairs']:>11}{'n/a':>10}")
            continue
        line = (f"{rec['name']:<44}{rec['pairs']:>11}{rec['seconds']:>10.3f}"
                f"{rec['pairs_per_s']:>14,.0f}{rec['gcups']:>9.1f}")
        group = rec.get("group")
        for p in peers:
            base = peers[p].get(group)
            line += f"{rec['pairs_per_s'] / base:>11.1f}" if base else f"{'':>11}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200_000, help="pairs per read length")
    ap.add_argument("--lengths", default="100,150,250", help="read lengths (comma-separated)")
    ap.add_argument("--peer-pairs", type=int, default=None,
                    help="pairs given to each CPU peer (default: --pairs)")
    ap.add_argument("--cpu-pairs", type=int, default=20_000,
                    help="pairs for readalign's own CPU backend (0: skip)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="peer processes")
    ap.add_argument("--paper", action="store_true", help="12,582,720 pairs of 32-char strings")
    ap.add_argument("--paper-pairs", type=int, default=PAPER_PAIRS)
    ap.add_argument("--ablation", action="store_true",
                    help="warp vote on/off, k = 8/16/32 (with --scored: k = 8/16/32 of the scored kernel)")
    ap.add_argument("--scored", action="store_true",
                    help="scored alignment: 150 bp local/global (1,4,6,1) and 300-residue protein "
                         "(BLOSUM62 10,1) against parasail and GASAL2")
    ap.add_argument("--scored-only", action="store_true",
                    help="run only the --scored rows (no edit-distance rows)")
    ap.add_argument("--protein-pairs", type=int, default=200_000,
                    help="protein pairs of the --scored rows")
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args()
    started = provenance(__spec__.name)

    gpu = backends.cuda_status()[0]
    table: list = []
    peers: dict = {"edlib": {}, "wfa2": {}, "parasail": {}, "gasal2": {}}
    print(f"device: {device_name()}", flush=True)
    print(host_line(), flush=True)
    if args.scored or args.scored_only:
        def scored_row(name, pairs, ncells, seconds, group, peer=None, detail=None):
            rec = row(table, name, pairs, ncells, seconds, group=group, detail=detail)
            if peer and seconds:
                peers[peer][group] = rec["pairs_per_s"]
            print_table(table[-1:], peers)

        scored_rows(args.pairs, args.protein_pairs, args.workers,
                    args.peer_pairs or args.pairs, gpu, scored_row,
                    (8, 16, 32) if args.ablation else ())
    lengths = [] if args.scored_only else [int(x) for x in args.lengths.split(",")]
    for L in lengths:
        reads, windows = simulate(args.pairs, L, 10, seed=L)
        nc = cells(reads, windows)
        group = f"{L}bp"
        npeer = min(args.peer_pairs or args.pairs, args.pairs)
        pr = [r.decode() for r in reads[:npeer].tolist()]
        pw = [w.decode() for w in windows[:npeer].tolist()]
        pc = nc * npeer // args.pairs
        for peer in ("edlib", "wfa2"):
            sec = run_peer(peer, pr, pw, args.workers)
            rec = row(table, f"{group} {peer} ({args.workers} procs, CIGAR)", npeer, pc, sec,
                      group=group)
            if sec:
                peers[peer][group] = rec["pairs_per_s"]
        if gpu:
            for cigar in (True, False):
                kind = "CIGAR" if cigar else "distance"
                kr = time_kernels(reads, windows, True, cigar,  # k as the API picks it
                                  k=auto_k(reads.dtype.itemsize, windows.dtype.itemsize, cigar))
                row(table, f"{group} readalign GPU kernel-only ({kind})", kr["pairs"], kr["cells"],
                    kr["seconds"], group=group, detail=kr)
                sec = time_api(reads, windows, mode="infix", cigar=cigar, backend="cuda")
                row(table, f"{group} readalign GPU API ({kind})", args.pairs, nc, sec, group=group)
            lists = ([r.decode() for r in reads.tolist()], [w.decode() for w in windows.tolist()])
            sec = time_api(*lists, mode="infix", backend="cuda")
            row(table, f"{group} readalign GPU API, lists of str (CIGAR)", args.pairs, nc, sec,
                group=group)
            sec = time_call(lambda pair=lists: readalign.align(*pair, backend="cuda").cigars())
            row(table, f"{group} readalign GPU API, lists of str to res.cigars()", args.pairs, nc,
                sec, group=group)
            for form, pair in (("S arrays", (reads, windows)), ("lists of str", lists)):
                sec = time_call(lambda p=pair: readalign.edit_distance(*p, backend="cuda"))
                row(table, f"{group} readalign GPU edit_distance (global, distance), {form}",
                    args.pairs, nc, sec, group=group)
        print(f"{group}: a list of str costs {list_overhead_ns(reads, windows):.0f} ns a sequence "
              "more than an S array (packing as readalign.align does, this host)")
        if args.cpu_pairs:
            n = min(args.cpu_pairs, args.pairs)
            sec = time_api(reads[:n], windows[:n], 1, mode="infix", backend="cpu")
            row(table, f"{group} readalign CPU API ({os.cpu_count()} thr, CIGAR)", n,
                nc * n // args.pairs, sec, group=group)
            sec = time_plain_nw(reads[:n], windows[:n])
            row(table, f"{group} plain full-matrix NW CPU ({os.cpu_count()} thr, CIGAR)", n,
                nc * n // args.pairs, sec, group=group)
        print_table(table, peers)
        print(flush=True)
    if args.paper and not args.scored_only:
        a, b = paper_pairs(args.paper_pairs, seed=32)
        nc = args.paper_pairs * 32 * 32
        if gpu:
            kr = time_kernels(a, b, False, True, k=auto_k(32, 32, True))  # the API's choice
            row(table, "paper 32x32 GPU kernel-only (global, CIGAR)", kr["pairs"], kr["cells"],
                kr["seconds"], group="paper", detail=kr)
            sec = time_api(a, b, 2, mode="global", backend="cuda")
            rec = row(table, "paper 32x32 GPU API (global, CIGAR)", args.paper_pairs, nc, sec,
                      group="paper")
            lists = ([x.decode() for x in a.tolist()], [x.decode() for x in b.tolist()])
            row(table, "paper 32x32 GPU API, lists of str (global, CIGAR)", args.paper_pairs, nc,
                time_api(*lists, 2, mode="global", backend="cuda"), group="paper")
            rec["speedup_vs_gtx275_6.95s"] = 6.95 * (PAPER_PAIRS / args.paper_pairs) / sec
            print(f"paper workload: {sec:.3f} s for {args.paper_pairs} pairs = "
                  f"{rec['speedup_vs_gtx275_6.95s']:.0f}x the paper's 6.95 s")
    if args.ablation and gpu and not args.scored_only:
        reads, windows = simulate(min(args.pairs, 1_000_000), 150, 10, seed=7)
        for k in (8, 16, 24, 32):
            for vote in (True, False):
                kr = time_kernels(reads, windows, True, True, k=k, vote=vote)
                row(table, f"ablation 150bp k={k} vote={'on' if vote else 'off'}", kr["pairs"],
                    kr["cells"], kr["seconds"], group="ablation", detail=kr)
                print(f"k={k:<3} vote={'on ' if vote else 'off'} fwd {kr['forward_s']*1e3:8.2f} ms"
                      f"  tb {kr['traceback_s']*1e3:8.2f} ms  regs fwd/tb "
                      f"{kr['forward_regs_per_thread']}/{kr['traceback_regs_per_thread']}  local "
                      f"fwd/tb {kr['forward_local_mem_per_thread']}/"
                      f"{kr['traceback_local_mem_per_thread']}",
                      flush=True)
        for k in (16, 32):
            pr = time_packed(reads, windows, True, k)
            row(table, f"ablation 150bp distance k={k} 32-bit", pr["pairs"], pr["cells"],
                pr["wide_s"], group="ablation")
            for dpx in (True, False):
                lanes = "16-bit packed, DPX" if dpx else "16-bit packed, no DPX"
                row(table, f"ablation 150bp distance k={k} {lanes}", pr["pairs"], pr["cells"],
                    pr["packed_s"][dpx], group="ablation",
                    detail={**pr, "packed_s": pr["packed_s"][dpx], "regs": pr["regs"][dpx],
                            "differ": pr["differ"][dpx]})
                print(f"distance k={k:<3} 32-bit {pr['wide_s']*1e3:8.2f} ms  {lanes} "
                      f"{pr['packed_s'][dpx]*1e3:8.2f} ms  regs {pr['regs'][dpx]}  pairs "
                      f"differing {pr['differ'][dpx]}", flush=True)
    print()
    print_table(table, peers)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**started, "device": device_name(), "args": vars(args),
                       "rows": table}, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
