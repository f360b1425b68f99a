"""Pairwise edit distance without alignments: ``a[p]`` against ``b[p]`` for every p.

One rule for both backends. A pair whose shorter side has at most 64 symbols
runs Myers' bit-parallel scan (:func:`readalign.kernels.words.pair_function`:
one source, compiled for the CPU's cores and the GPU's lanes). A pair whose
both sides are longer is an alignment problem: it goes to the alignment
engine (quadrant kernel on the chosen backend, bit-parallel blocks past the
fast path), distance only.
"""

from __future__ import annotations

import numpy as np

from ..engine.batching import AUTO_K, align_with
from ..engine.job import Job
from ..engine.packing import NO_N, Packed, take
from ..kernels import words
from . import cpu_blocks

__all__ = ["pairwise"]


def _short_pairs(a: Packed, b: Packed, max_distance: int, backend: str,
                 threads: int | None) -> np.ndarray:
    """Distances clipped at ``max_distance + 1``, ``words.LONG`` where both sides are long."""
    if backend == "cuda":  # numba-cuda is imported only when the GPU is used (start-up time)
        from .gpu_blocks import pairwise_gpu

        return pairwise_gpu(a, b, max_distance)
    return cpu_blocks.pairwise(a, b, max_distance, threads)


def pairwise(a: Packed, b: Packed, max_distance: int, backend: str,
             threads: int | None = None) -> np.ndarray:
    """Global Levenshtein distance of every pair (int32; -1 above ``max_distance`` >= 0).

    ``backend`` is a resolved backend (``"cpu"`` or ``"cuda"``). Pairs whose both
    sides are long get their distance from the alignment engine (the bit-parallel pass
    marks them ``LONG``); when every pair is long the inputs go there as they are, with
    no bit-parallel pass and no gather.
    """
    long = np.flatnonzero(np.minimum(a.lengths, b.lengths) > words.WORD_BITS)
    job = Job(infix=False, max_distance=max_distance, n_code=NO_N, eqx=False,
              with_cigar=False, k=AUTO_K)
    if long.shape[0] == len(a):
        return align_with(a, b, job, backend, threads).distance
    out = _short_pairs(a, b, max_distance, backend, threads)
    if max_distance >= 0:
        out[out > max_distance] = -1
    if long.shape[0]:
        out[long] = align_with(take(a, long), take(b, long), job, backend, threads).distance
    return out
