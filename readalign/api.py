"""The public Python API: align read/window pairs, or compute edit distances."""

from __future__ import annotations

import numpy as np

from . import backends
from .encoding import N_CODE, NO_N, check_same_kind, pack_dna, pack_text
from .engine import DEFAULT_K, Job, align_packed, align_with, check_counts
from .result import AlignResult
from .timing import stage

MODES = ("infix", "global")


def _check_max_distance(max_distance: object) -> int:
    if max_distance is None:
        return -1
    if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)):
        raise TypeError(f"max_distance must be None or a non-negative int; got {max_distance!r}")
    if max_distance < 0:
        raise ValueError(f"max_distance must be None or a non-negative int; got {max_distance}")
    return int(max_distance)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= 64:
        raise ValueError(f"k (quadrant size) must be an int between 2 and 64; got {k!r}")
    return int(k)


def align(reads, windows, mode: str = "infix", max_distance: int | None = None,
          backend: str = "auto", *, cigar: bool = True, eqx: bool = False, k: int = DEFAULT_K,
          threads: int | None = None) -> AlignResult:
    """Align ``reads[i]`` to ``windows[i]`` for every i; return distances, spans and CIGARs.

    ``reads`` and ``windows`` are equal-length lists (or 1-D arrays) of DNA as
    ``str`` or ``bytes``; bases are upper-cased and anything but ACGT becomes
    N, which never matches. ``mode="infix"`` aligns the read end to end with
    free gaps at both ends of the window; ``"global"`` aligns both end to end.
    Pairs whose distance exceeds ``max_distance`` report -1. ``cigar=False``
    skips the traceback (distances and end columns only; ``ref_start`` is -1
    in infix mode). ``eqx`` emits ``=``/``X`` instead of ``M``; ``k`` is the
    quadrant size; ``threads`` caps CPU threads.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    job = Job(infix=mode == "infix", max_distance=_check_max_distance(max_distance),
              n_code=N_CODE, eqx=bool(eqx), with_cigar=bool(cigar), k=_check_k(k))
    with stage("pack sequences", len(reads)):
        q = pack_dna(reads, "reads", lazy=True)
        t = pack_dna(windows, "windows", lazy=True)
    return align_packed(q, t, job, backend, threads)


def edit_distance(a, b, max_distance: int | None = None, backend: str = "auto", *,
                  cigar: bool = False, threads: int | None = None):
    """Pairwise global Levenshtein distance of ``a[i]`` and ``b[i]`` (int32 array).

    Strings compare by Unicode code point, bytes by byte value; no case
    folding. Distances above ``max_distance`` are -1. With ``cigar=True`` an
    :class:`AlignResult` with alignments is returned instead. For every
    ``a`` against every ``b`` (a distance matrix) use :func:`readalign.cdist`.
    """
    md = _check_max_distance(max_distance)
    qa, qb = pack_text(a, "a", lazy=bool(cigar)), pack_text(b, "b", lazy=bool(cigar))
    check_counts(qa, qb)
    check_same_kind(qa, qb, "a", "b")
    name = backends.resolve(backend)
    if not cigar and name == "cuda":
        from .cuda_words import pairwise_gpu

        return pairwise_gpu(qa, qb, md)
    job = Job(infix=False, max_distance=md, n_code=NO_N, eqx=False, with_cigar=bool(cigar), k=DEFAULT_K)
    res = align_with(qa, qb, job, name, threads)
    return res if cigar else res.distance
