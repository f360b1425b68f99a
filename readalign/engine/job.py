"""What every pair of a call computes, what a backend hands back, and the checks on both.

Shared by the engine's batching, its CPU and GPU backends and the word-list
products, so that none of them imports another for a type or a check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.scored_quadrant import cigar_slots
from . import flatseq


@dataclass(frozen=True)
class Scores:
    """Scored alignment: the mode and the tables :mod:`kernels.scored_quadrant` reads."""

    mode: int  # kernels.scored_quadrant.GLOBAL, INFIX or LOCAL
    sub: np.ndarray  # int32, sub[a * size + b]
    size: int
    gap_open: int
    gap_extend: int
    clip: int = 0  # local mode: the penalty per clipped read end (BWA's -L)


@dataclass(frozen=True)
class Job:
    """What to compute for every pair of a call (unit edit costs unless ``scores``)."""

    infix: bool
    max_distance: int  # -1: no limit
    n_code: int
    eqx: bool
    with_cigar: bool
    k: int
    scores: Scores | None = None


@dataclass
class BatchResult:
    """One batch's results in batch order.

    ``ops`` is a list of ``(lo, hi, runs)``: the CIGAR runs of batch positions
    ``lo:hi``, concatenated (a backend working in chunks hands them over as they
    are, without one more copy of all runs). ``run_offsets``, where a backend gives
    them, are every pair's first run in ``ops``' one piece (``count + 1``).
    """

    dist: np.ndarray
    ref_start: np.ndarray
    ref_end: np.ndarray
    n_ops: np.ndarray
    ops: list
    score: np.ndarray | None = None  # scored jobs: the score, and the aligned read span
    q_start: np.ndarray | None = None
    q_end: np.ndarray | None = None
    run_offsets: np.ndarray | None = None


def slot_capacity(m: np.ndarray, n: np.ndarray, max_distance: int, scored: bool = False) -> np.ndarray:
    """Worst-case CIGAR run count per pair: at most m+n runs and 2*distance+1 (scored:
    :func:`~readalign.kernels.scored_quadrant.cigar_slots`)."""
    if scored:
        return cigar_slots(m, n)
    worst = np.maximum(m, n)
    if max_distance >= 0:
        worst = np.minimum(worst, max_distance)
    return np.maximum(np.minimum(m + n, 2 * worst + 1), 1)


def gather_slices(arr: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenate ``arr[starts[i]:starts[i]+counts[i]]`` for every i (parallel)."""
    counts = np.asarray(counts, dtype=np.int64)
    out_offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out_offsets[1:])
    return flatseq.gather(arr, np.asarray(starts, dtype=np.int64), counts, out_offsets)


def check_counts(q, t) -> None:
    """Both sides of a pairwise call must hold the same number of sequences."""
    if len(q) != len(t):
        raise ValueError(f"got {len(q)} reads/queries but {len(t)} windows/targets: counts must match")
