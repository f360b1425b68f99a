"""Host side of alignment: sort pairs by length, batch them, run a backend, gather results.

Backends see one batch at a time: packed sequences, the batch's pair indices
(sorted by length so neighbouring lanes do equal work) and a CIGAR slot per
pair sized from the worst case. Results return in input order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from . import backends
from .encoding import Packed
from .result import AlignResult

log = logging.getLogger("readalign")

LONG_PAIR = 1024
"""Pairs longer than this (read or window) use quadrants of at least ``LONG_K``."""
LONG_K = 32
SLOT_BUDGET = 1 << 25
"""CIGAR slot elements per CPU batch (uint32): bounds host memory for any input."""


@dataclass(frozen=True)
class Job:
    """What to compute for every pair of a call."""

    infix: bool
    max_distance: int  # -1: no limit
    n_code: int
    eqx: bool
    with_cigar: bool
    k: int


def slot_capacity(m: np.ndarray, n: np.ndarray, max_distance: int) -> np.ndarray:
    """Worst-case CIGAR run count per pair: at most m+n runs and 2*distance+1."""
    worst = np.maximum(m, n)
    if max_distance >= 0:
        worst = np.minimum(worst, max_distance)
    return np.maximum(np.minimum(m + n, 2 * worst + 1), 1)


def length_order(m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Pair indices sorted by (read length, window length): lanes get equal work."""
    return np.lexsort((n, m)).astype(np.int64)


def split_batches(cap: np.ndarray, budget: int, max_pairs: int) -> list[tuple[int, int]]:
    """Cut a sequence of slot capacities into ranges of total <= budget (at least one pair each)."""
    bounds = []
    lo = 0
    total = cap.shape[0]
    csum = np.concatenate(([0], np.cumsum(cap)))
    while lo < total:
        hi = int(np.searchsorted(csum, csum[lo] + budget, side="right")) - 1
        hi = min(max(hi, lo + 1), lo + max_pairs, total)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def gather_ops(slots: np.ndarray, src: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenate ``slots[src[i]:src[i]+counts[i]]`` for every i (vectorised)."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint32)
    starts = np.cumsum(counts) - counts
    within = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    return slots[np.repeat(src, counts) + within]


def _runner(name: str):
    if name == "cuda":
        from . import cuda_backend

        return cuda_backend.align_batch
    from . import cpu_backend

    return cpu_backend.align_batch


def align_packed(q: Packed, t: Packed, job: Job, backend: str = "auto",
                 threads: int | None = None) -> AlignResult:
    """Align pair i = (q[i], t[i]) for every i and return results in input order."""
    if len(q) != len(t):
        raise ValueError(f"got {len(q)} reads/queries but {len(t)} windows/targets: counts must match")
    name = backends.resolve(backend)
    run = _runner(name)
    npairs = len(q)
    m = q.lengths
    n = t.lengths
    dist = np.full(npairs, -1, dtype=np.int32)
    ref_start = np.full(npairs, -1, dtype=np.int64)
    ref_end = np.full(npairs, -1, dtype=np.int64)
    n_ops = np.zeros(npairs, dtype=np.int64)
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    slot_off = np.zeros(npairs, dtype=np.int64)
    order = length_order(m, n)
    long = np.maximum(m[order], n[order]) > LONG_PAIR
    for group, k in ((order[~long], job.k), (order[long], max(job.k, LONG_K))):
        if group.shape[0] == 0:
            continue
        cap = slot_capacity(m[group], n[group], job.max_distance) if job.with_cigar else np.ones(
            group.shape[0], dtype=np.int64)
        for lo, hi in split_batches(cap, SLOT_BUDGET, 1 << 22):
            idx = group[lo:hi]
            starts = np.cumsum(cap[lo:hi]) - cap[lo:hi]
            slot_off[idx] = starts
            slots = np.zeros(int(cap[lo:hi].sum()), dtype=np.uint32)
            run(q, t, idx, job, k, slot_off, slots, dist, ref_start, ref_end, n_ops, threads)
            if job.with_cigar:
                pieces.append((idx, gather_ops(slots, slot_off[idx], n_ops[idx])))
    offsets = np.zeros(npairs + 1, dtype=np.int64)
    np.cumsum(n_ops, out=offsets[1:])
    ops = np.zeros(int(offsets[-1]), dtype=np.uint32)
    for idx, packed_ops in pieces:
        counts = n_ops[idx]
        starts = np.cumsum(counts) - counts
        total = int(counts.sum())
        within = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
        ops[np.repeat(offsets[idx], counts) + within] = packed_ops
    mode = "infix" if job.infix else "global"
    return AlignResult(dist, ref_start, ref_end, ops, offsets, mode, name)
