"""Simulated read/window pairs and the API timer, shared by the pair-engine benchmarks."""

from __future__ import annotations

import time

import numpy as np

import readalign

ACGT = np.frombuffer(b"ACGT", dtype=np.uint8)


def simulate(count: int, read_len: int, pad: int, seed: int,
             sub: float = 0.02, indel: float = 0.002) -> tuple[np.ndarray, np.ndarray]:
    """Reads and windows as fixed-width ``S`` arrays (vectorised; no Python loop per read)."""
    rng = np.random.default_rng(seed)
    win_len = read_len + 2 * pad
    windows = ACGT[rng.integers(0, 4, (count, win_len))]
    reads = windows[:, pad:pad + read_len].copy()
    flip = rng.random(reads.shape) < sub
    reads[flip] = ACGT[(np.searchsorted(ACGT, reads[flip]) + rng.integers(1, 4, flip.sum())) % 4]
    event = rng.random(reads.shape)
    keep = np.where(event < indel / 2, 0, 1)          # deletion: drop the base
    keep += (event > 1 - indel / 2).astype(np.int64)  # insertion: a second base after it
    keep = keep.ravel()
    flat = np.repeat(reads.ravel(), keep)
    second = np.cumsum(keep)[keep == 2] - 1
    flat[second] = ACGT[rng.integers(0, 4, second.size)]
    keep = keep.reshape(reads.shape)
    lens = keep.sum(axis=1)
    width = int(lens.max())
    grid = np.zeros((count, width), dtype=np.uint8)
    grid[np.arange(width) < lens[:, None]] = flat
    return grid.view(f"S{width}").ravel(), windows.view(f"S{win_len}").ravel()


def api_times(reads, windows, repeats: int = 3, **kwargs) -> list[float]:
    """Wall time of each of ``repeats`` calls ``readalign.align(reads, windows, **kwargs)``,
    after a 2,000-pair warm-up call."""
    readalign.align(reads[:2000], windows[:2000], **kwargs)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        readalign.align(reads, windows, **kwargs)
        times.append(time.perf_counter() - t0)
    return times


def time_api(reads, windows, repeats: int = 3, **kwargs) -> float:
    """Best-of wall time of ``readalign.align(reads, windows, **kwargs)`` after a warm-up call."""
    return min(api_times(reads, windows, repeats, **kwargs))
