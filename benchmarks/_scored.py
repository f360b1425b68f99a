"""The scored-alignment rows of ``python -m benchmarks.bench --scored``.

Workloads: 150 bp reads against 170 bp windows (2% substitutions, 0.2% indels, 10% of
reads with a 20-40 bp adapter tail), scoring match 1, mismatch 4, gap open 6, extend 1,
local and global with CIGAR; 300-residue protein pairs, BLOSUM62, gap open 10, extend 1,
local, score only and with CIGAR. Peers on the same pairs: parasail on every host core
(process pool, striped 16-bit kernels with traceback), and GASAL2 on the GPU when
``.peers/gasal2`` is built (``bash .peers/build.sh``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import subprocess
import tempfile
import time

import numpy as np
from readalign.kernels.scored_quadrant import GLOBAL, LOCAL

from readalign.engine.batching import scored_auto_k
from readalign.engine.job import Job
from readalign.engine.packing import pack_with
from readalign.engine.scoring import Scoring

from ._pairs import simulate, time_api

DNA_SCORING = (1, 4, 6, 1)
API_REPEATS = 5
"""GPU API calls timed per row, the best kept (after a warm-up call): the host's speed moves
from call to call by more than the changes these rows judge (benchmarks/RESULTS.md)."""
PROTEIN = "ACDEFGHIKLMNPQRSTVWY"
GASAL2 = os.path.join(".peers", "gasal2", "test_prog", "test_prog.out")


def dna_workload(count: int, seed: int = 150) -> tuple[list[str], list[str]]:
    """Reads and windows as lists of str (what most callers pass)."""
    reads, windows = simulate(count, 150, 10, seed=seed)
    rng = np.random.default_rng(seed)
    acgt = np.array(list("ACGT"))
    out = [r.decode() for r in reads.tolist()]
    for i in np.flatnonzero(rng.random(count) < 0.1).tolist():
        tail = int(rng.integers(20, 41))
        out[i] = out[i][:150 - tail] + "".join(acgt[rng.integers(0, 4, tail)])
    return out, [w.decode() for w in windows.tolist()]


def protein_workload(count: int, seed: int = 300) -> tuple[list[str], list[str]]:
    """Related 300-residue pairs: 30% of residues substituted, a few indels."""
    rng = np.random.default_rng(seed)
    letters = np.array(list(PROTEIN))
    a = letters[rng.integers(0, 20, (count, 300))]
    b = a.copy()
    flip = rng.random(b.shape) < 0.3
    b[flip] = letters[rng.integers(0, 20, int(flip.sum()))]
    return ["".join(x) for x in a.tolist()], ["".join(x) for x in b.tolist()]


def _cells(q: list[str], t: list[str]) -> int:
    return int(sum(len(x) * len(y) for x, y in zip(q, t, strict=True)))


def time_kernels(q, t, mode: int, scoring: Scoring, cigar: bool, k: int = 8,
                 repeats: int = 3, trace: bool | None = None) -> dict:
    """Kernel-only seconds (CUDA events) of the engine's scored launches on the first device batch.

    ``cigar``: the forward pass keeps the quadrant boundaries; ``trace`` (default: ``cigar``)
    runs the traceback too, so ``cigar=True, trace=False`` times the forward pass with its stores.
    """
    trace = cigar if trace is None else trace
    from numba import cuda
    from readalign.kernels.cuda import scored_kernels, scored_packed_kernels

    from readalign.engine.gpu import scored as gpu_scored
    from readalign.engine.gpu.sizing import device_batches
    from readalign.engine.packing import take
    from readalign.runtime.gpu_memory import DevicePool

    job = Job(infix=False, max_distance=-1, n_code=scoring.n_code, eqx=False, with_cigar=cigar,
              k=k, scores=scoring.scores(mode))
    qp, tp = pack_with(q, scoring.codes), pack_with(t, scoring.codes)
    order = np.lexsort((tp.lengths, qp.lengths))
    lo, hi, _, _ = device_batches(
        qp.lengths[order], tp.lengths[order],
        lambda m_max, n_max: gpu_scored.lane_bytes(m_max, n_max, k, cigar, job.scores))[0]
    part = order[lo:hi]
    m, n = qp.lengths[part], tp.lengths[part]
    count = hi - lo
    pool = DevicePool(cuda.stream())
    qs, ts = take(qp, part), take(tp, part)
    dev = tuple(cuda.to_device(a, stream=pool.stream)
                for a in (qs.data, qs.offsets, ts.data, ts.offsets, job.scores.sub))
    m_max, n_max = int(m.max()), int(n.max())
    total = gpu_scored.slot_total(qs.offsets, ts.offsets)

    def run(trace: bool) -> None:
        fwd = gpu_scored.launch_forward(pool, dev, job, k, count, m_max, n_max)
        if trace:
            gpu_scored.launch_traceback(pool, dev, job, k, fwd, total)

    run(trace)
    pool.stream.synchronize()
    times = []
    for _ in range(repeats):
        e0, e1 = cuda.event(), cuda.event()
        e0.record(pool.stream)
        run(trace)
        e1.record(pool.stream)
        e1.synchronize()
        times.append(cuda.event_elapsed_time(e0, e1) / 1e3)
    score_k, store_k, tb_k = scored_kernels(k)
    if gpu_scored.packs(job.scores, m_max, n_max):
        score_k, store_k = scored_packed_kernels(k)
    fwd_k = store_k if cigar else score_k
    report = {"pairs": count, "cells": int((m * n).sum()),
              "seconds": float(np.median(times))}
    for name, kern in (("forward", fwd_k), ("traceback", tb_k)):
        try:
            report[f"{name}_regs"] = list(kern.get_regs_per_thread().values())
            report[f"{name}_local_bytes"] = list(kern.get_local_mem_per_thread().values())
        except Exception as exc:  # report what the compiler would not say
            report[f"{name}_regs"] = f"n/a ({type(exc).__name__})"
    return report


_PEER: dict = {}


def _parasail_chunk(bounds) -> int:
    import parasail

    q, t, fn_name, args = _PEER["q"], _PEER["t"], _PEER["fn"], _PEER["args"]
    fn = getattr(parasail, fn_name)
    matrix = (parasail.blosum62 if args[2] == "blosum62"
              else parasail.matrix_create("ACGTN", args[2][0], -args[2][1]))
    total = 0
    for i in range(*bounds):
        total += fn(q[i], t[i], args[0], args[1], matrix).score
    return total


def time_parasail(q, t, fn_name: str, go: int, ge: int, matrix, workers: int) -> float | None:
    """Seconds of parasail's ``fn_name`` over all pairs on ``workers`` processes (None if absent)."""
    try:
        import parasail  # noqa: F401
    except ImportError:
        return None
    _PEER.update(q=q, t=t, fn=fn_name, args=(go + ge, ge, matrix))
    chunk = max(1, len(q) // (workers * 8))
    tasks = [(lo, min(lo + chunk, len(q))) for lo in range(0, len(q), chunk)]
    with mp.get_context("fork").Pool(workers) as pool:
        pool.map(_parasail_chunk, tasks[:workers])
        t0 = time.perf_counter()
        pool.map(_parasail_chunk, tasks)
        return time.perf_counter() - t0


def time_gasal2(q, t, kind: str, workers: int) -> tuple[float | None, str]:
    """GASAL2's own timer over the pairs (``kind``: local or global, with traceback)."""
    if not os.path.exists(GASAL2):
        return None, "not built (bash .peers/build.sh)"
    with tempfile.TemporaryDirectory() as d:
        for name, seqs in (("q.fa", q), ("t.fa", t)):
            with open(os.path.join(d, name), "w") as fh:
                fh.writelines(f">{i}\n{s}\n" for i, s in enumerate(seqs))
        cmd = [os.path.abspath(GASAL2), "-t", "-y", kind, "-n", str(workers),
               os.path.join(d, "q.fa"), os.path.join(d, "t.fa")]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=d)
    found = re.search(r"Total execution time \(in milliseconds\):\s*([\d.]+)",
                      out.stdout + out.stderr)
    if out.returncode or not found:
        return None, f"failed (exit {out.returncode}): {(out.stderr or out.stdout)[-200:]}"
    return float(found.group(1)) / 1e3, "ok"


def rows(pairs: int, protein_pairs: int, workers: int, peer_pairs: int, gpu: bool, row,
         ablation_k: tuple[int, ...] = ()) -> None:
    """Measure every scored workload; ``row(name, pairs, cells, seconds, group, peer=, detail=)``
    records one (``peer``: the peer's name, its rate the ratios' base)."""
    q, t = dna_workload(pairs)
    cells = _cells(q, t)
    dna = Scoring(*DNA_SCORING)
    npeer = min(peer_pairs, pairs)
    pcells = _cells(q[:npeer], t[:npeer])
    for mode, code, peer_fn, gasal_kind in (("local", LOCAL, "sw_trace_striped_16", "local"),
                                            ("global", GLOBAL, "nw_trace_striped_16", "global")):
        group = f"scored 150bp {mode}"
        sec = time_parasail(q[:npeer], t[:npeer], peer_fn, DNA_SCORING[2], DNA_SCORING[3],
                            DNA_SCORING[:2], workers)
        row(f"{group} parasail ({workers} procs, CIGAR)", npeer, pcells, sec, group,
            peer="parasail")
        row(f"{group} readalign CPU API ({os.cpu_count()} thr, CIGAR)", npeer, pcells,
            time_api(q[:npeer], t[:npeer], 2, mode=mode, scoring=dna, backend="cpu"), group)
        if gpu:
            sec, why = time_gasal2(q, t, gasal_kind, workers)
            row(f"{group} GASAL2 GPU ({why})", pairs, cells, sec, group, peer="gasal2")
            for cigar, trace in ((False, False), (True, False), (True, True)):
                kr = time_kernels(q, t, code, dna, cigar, trace=trace, k=scored_auto_k(cigar))
                kind = ("CIGAR" if trace else "boundaries, no traceback") if cigar else "score"
                row(f"{group} readalign GPU kernel-only ({kind})", kr["pairs"], kr["cells"],
                    kr["seconds"], group, detail=kr)
            row(f"{group} readalign GPU API, lists of str (CIGAR)", pairs, cells,
                time_api(q, t, API_REPEATS, mode=mode, scoring=dna), group)
    for k in ablation_k if gpu else ():
        kr = time_kernels(q, t, LOCAL, dna, True, k=k)
        row(f"ablation scored 150bp local k={k} (CIGAR)", kr["pairs"], kr["cells"], kr["seconds"],
            "scored ablation", detail=kr)
    pq, pt = protein_workload(protein_pairs)
    blosum = Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    pc = _cells(pq, pt)
    npeer = min(peer_pairs, protein_pairs)
    group = "protein 300 local"
    row(f"{group} parasail ({workers} procs, score)", npeer, _cells(pq[:npeer], pt[:npeer]),
        time_parasail(pq[:npeer], pt[:npeer], "sw_striped_16", 10, 1, "blosum62", workers),
        group, peer="parasail")
    if gpu:
        for cigar in (False, True):
            kind = "CIGAR" if cigar else "score"
            kr = time_kernels(pq, pt, LOCAL, blosum, cigar, k=scored_auto_k(cigar))
            row(f"{group} readalign GPU kernel-only ({kind})", kr["pairs"], kr["cells"],
                kr["seconds"], group, detail=kr)
            row(f"{group} readalign GPU API ({kind})", protein_pairs, pc,
                time_api(pq, pt, API_REPEATS, mode="local", scoring=blosum, cigar=cigar), group)
