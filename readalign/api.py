"""The public Python API: align read/window pairs, or compute edit distances."""

from __future__ import annotations

import sys

from .distance.pairwise import pairwise
from .engine.batching import AUTO_K, align_packed, align_with
from .engine.job import Job, Scores, check_counts, check_k, check_max_distance
from .engine.packing import N_CODE, NO_N, check_alphabet, match_kinds, pack_dna, pack_text, pack_with
from .engine.result import AlignResult
from .engine.scoring import INVALID, Scoring
from .kernels.scored_quadrant import MODE_NAMES
from .runtime import backends
from .runtime.timing import stage


def align(reads, windows, mode: str = "infix", max_distance: int | None = None,
          backend: str = "auto", *, cigar: bool = True, eqx: bool = False, k: int | None = None,
          threads: int | None = None, scoring: Scoring | None = None) -> AlignResult:
    """Align ``reads[i]`` to ``windows[i]`` for every i; return scores, spans and CIGARs.

    ``reads`` and ``windows`` are equal-length lists (or 1-D arrays) of ``str`` or
    ``bytes``. Without ``scoring`` the cost is the exact edit distance of DNA: bases
    are upper-cased and anything but ACGT becomes N, which never matches; pairs whose
    distance exceeds ``max_distance`` report -1. With a :class:`Scoring` the
    alignment maximises its score (affine gaps; DNA or a protein matrix).
    ``mode="infix"`` aligns the read end to end with free gaps at both ends of the
    window; ``"global"`` aligns both end to end; ``"local"`` (needs ``scoring``) the
    best-scoring parts, the read's unaligned ends soft-clipped. ``cigar=False`` skips
    the traceback; ``eqx`` emits ``=``/``X`` instead of ``M``; ``k`` is the quadrant
    size (default: on the CPU 16, 8 with a scoring; on the GPU the fastest measured for the
    batch's lengths and the job, :func:`readalign.engine.batching.auto_k` and ``scored_auto_k``);
    ``threads`` caps CPU threads.
    """
    if mode not in MODE_NAMES:
        raise ValueError(f"mode must be one of {', '.join(MODE_NAMES)}; got {mode!r}")
    if scoring is not None:
        return _align_scored(reads, windows, mode, max_distance, backend, cigar, eqx, k, threads,
                             scoring)
    if mode == "local":
        raise ValueError("mode='local' needs a scoring, e.g. scoring=readalign.Scoring()")
    job = Job(infix=mode == "infix", max_distance=check_max_distance(max_distance),
              n_code=N_CODE, eqx=bool(eqx), with_cigar=bool(cigar),
              k=AUTO_K if k is None else check_k(k))
    with stage("pack sequences", len(reads)):
        q = pack_dna(reads, "reads", lazy=True)
        t = pack_dna(windows, "windows", lazy=True)
    return align_packed(q, t, job, backend, threads)


def _align_scored(reads, windows, mode: str, max_distance, backend: str, cigar: bool, eqx: bool,
                  k: int, threads: int | None, scoring: Scoring) -> AlignResult:
    """:func:`align` with a :class:`Scoring`: check it, pack through its alphabet, dispatch."""
    if not isinstance(scoring, Scoring):
        raise TypeError(f"scoring must be a readalign.Scoring; got {type(scoring).__name__}")
    if max_distance is not None:
        raise ValueError("max_distance applies to edit distance; with a scoring leave it None")
    if mode == "local":
        scoring.check_local()
    elif scoring.clip_penalty:
        raise ValueError(f"clip_penalty applies to mode='local' (soft clips); got mode={mode!r}")
    scores = Scores(MODE_NAMES.index(mode), scoring.flat(), len(scoring.alphabet), scoring.gap_open,
                    scoring.gap_extend, scoring.clip_penalty)
    job = Job(infix=mode == "infix", max_distance=-1, n_code=scoring.n_code, eqx=bool(eqx),
              with_cigar=bool(cigar), k=AUTO_K if k is None else check_k(k), scores=scores)
    with stage("pack sequences", len(reads)):
        q = pack_with(reads, scoring.codes, "reads", lazy=True)
        t = pack_with(windows, scoring.codes, "windows", lazy=True)
    if not scoring.is_dna:  # a letter outside the matrix is an error, not a silent code
        with stage("check letters", len(reads)):
            check_alphabet(q, INVALID, "reads", scoring.alphabet)
            check_alphabet(t, INVALID, "windows", scoring.alphabet)
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
    qa, qb = pack_text(a, "a", lazy=True), pack_text(b, "b", lazy=True)
    check_counts(qa, qb)
    match_kinds(qa, qb, "a", "b")
    name = backends.resolve(backend)
    if not cigar:
        return pairwise(qa, qb, md, name, threads)
    job = Job(infix=False, max_distance=md, n_code=NO_N, eqx=False, with_cigar=True, k=AUTO_K)
    return align_with(qa, qb, job, name, threads)


def free_gpu_memory() -> None:
    """Give back the GPU memory readalign keeps for the calling thread between calls.

    The GPU backends keep their device buffers and pinned host buffers after a call
    (one set per thread, grown as calls need) so that the next call does not pay to
    allocate them again, as CuPy's and PyTorch's memory pools do. Call this when the GPU
    memory is needed elsewhere; the next GPU call allocates afresh. A no-op when the GPU
    was not used.
    """
    if "readalign.runtime.gpu_memory" in sys.modules:
        sys.modules["readalign.runtime.gpu_memory"].free_gpu_memory()
