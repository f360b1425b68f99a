"""The public Python API: align read/window pairs, or compute edit distances."""

from __future__ import annotations

from .distance.pairwise import pairwise
from .engine.batching import DEFAULT_K, align_packed, align_with
from .engine.job import Job, check_counts, check_k, check_max_distance
from .engine.packing import N_CODE, NO_N, check_same_kind, pack_dna, pack_text
from .engine.result import AlignResult
from .runtime import backends
from .runtime.timing import stage

MODES = ("infix", "global")


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
    job = Job(infix=mode == "infix", max_distance=check_max_distance(max_distance),
              n_code=N_CODE, eqx=bool(eqx), with_cigar=bool(cigar), k=check_k(k))
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
    md = check_max_distance(max_distance)
    qa, qb = pack_text(a, "a", lazy=bool(cigar)), pack_text(b, "b", lazy=bool(cigar))
    check_counts(qa, qb)
    check_same_kind(qa, qb, "a", "b")
    name = backends.resolve(backend)
    if not cigar:
        return pairwise(qa, qb, md, name, threads)
    job = Job(infix=False, max_distance=md, n_code=NO_N, eqx=False, with_cigar=True, k=DEFAULT_K)
    return align_with(qa, qb, job, name, threads)
