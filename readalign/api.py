"""The public Python API: align read/window pairs, or compute edit distances."""

from __future__ import annotations

import sys

import numpy as np

from .engine.batching import AUTO_K, align_packed, align_with
from .engine.job import Job
from .engine.packing import N_CODE, NO_N, check_alphabet, match_widths, pack_dna, pack_text, pack_with
from .engine.result import AlignResult
from .engine.scoring import INVALID, Scoring
from .kernels.scored_quadrant import MODE_NAMES
from .runtime import backends
from .runtime.arguments import Arguments, Sequences, check_arguments, check_k
from .runtime.timing import stage
from .words.pairwise import pairwise


def align(reads: Sequences, windows: Sequences, mode: str = "infix", max_distance: int | None = None,
          backend: str = "auto", *, cigar: bool = True, eqx: bool = False, k: int | None = None,
          threads: int | None = None, scoring: Scoring | None = None) -> AlignResult:
    """Align ``reads[i]`` to ``windows[i]`` for every i: distances or scores, spans and CIGARs.

    Without ``scoring`` the cost is the exact edit distance of DNA (unit costs); with a
    :class:`~readalign.Scoring` the alignment maximises its score (affine gaps, DNA or a
    protein matrix). The same pairs give the same results, CIGAR for CIGAR, on the CPU and
    on the GPU.

    Parameters
    ----------
    reads : list, tuple or 1-D array of str or bytes
        The reads (queries). A fixed-width ``S``/``U`` numpy array is read without a Python
        object per sequence; a list or tuple of ASCII ``str`` or of ``bytes`` is read where
        Python keeps the letters. Any other iterable is read into a list first.
    windows : list, tuple or 1-D array of str or bytes
        The windows (targets), as many as ``reads`` and of the same kind (``str`` or
        ``bytes``) as them.
    mode : {"infix", "global", "local"}
        ``"infix"``: the read end to end against any part of the window (free gaps at both
        ends of the window); ``"global"``: both end to end (Needleman-Wunsch); ``"local"``:
        the best-scoring parts (Smith-Waterman), the read's unaligned ends soft-clipped;
        needs ``scoring``.
    max_distance : int, optional
        Edit distance only: a pair whose distance exceeds it reports distance -1, no span and
        no CIGAR, and is abandoned early. None: no limit.
    backend : {"auto", "cpu", "cuda"}
        Where the kernels run: ``"auto"`` uses the GPU when numba finds one, else every CPU
        core (the choice and the reason are logged on the ``readalign`` logger).
    cigar : bool
        False skips the traceback: distances (or scores) and window ends only.
    eqx : bool
        Write ``=``/``X`` CIGAR operations instead of ``M``.
    k : int, optional
        Quadrant size, 2-64. Results do not depend on it. None: on the CPU 16 (8 with a
        scoring); on the GPU the fastest measured for the batch's lengths and the job
        (:func:`readalign.engine.batching.auto_k`).
    threads : int, optional
        CPU threads, at least 1 (None: numba's, every core).
    scoring : Scoring, optional
        Scored alignment. None: exact edit distance.

    Returns
    -------
    AlignResult
        Per-pair arrays in input order: ``distance``, ``ref_start``/``ref_end`` (the aligned
        window span), ``score``, ``query_start``/``query_end`` and the CIGARs.

    Raises
    ------
    TypeError
        An argument of the wrong type, named (``reads``, ``windows``, ``threads``, ...);
        a bad element named with its index (``reads[2]: expected str, got NoneType``);
        ``str`` on one side and ``bytes`` on the other.
    ValueError
        ``reads`` and ``windows`` of different lengths; an unknown ``mode`` or ``backend``;
        ``max_distance`` below 0 or given with a ``scoring``; ``threads`` below 1; ``k``
        outside 2-64; ``mode="local"`` without a ``scoring``; a letter outside a protein
        scoring's alphabet (named by sequence and position).
    BackendUnavailableError
        ``backend="cuda"`` where no CUDA GPU can run the kernels.
    GPUMemoryError
        The GPU ran out of memory (another process holds it).

    See Also
    --------
    edit_distance : global Levenshtein distance of arbitrary text, pair by pair.
    cdist : every query against every choice.

    Notes
    -----
    **Costs.** Without a scoring, reads and windows are upper-cased and every letter but
    A, C, G and T becomes N, which never matches, not even N (as BWA counts NM).

    **Ties.** Of equal-cost alignments the traceback, from the end, prefers a match or
    mismatch, then an insertion (a read base against a gap), then a deletion, which puts
    indels at their leftmost position in repeats; inside a gap it extends rather than
    re-opens. In infix mode the alignment ends at the leftmost window column holding the
    best value; a local alignment ends at the best cell with the smallest read end, then the
    smallest window end.

    **Lengths.** Any length works, empty sequences included. Pairs with a read or window
    longer than 1,024 symbols run on the CPU with quadrants of at least 32 (logged); their
    boundaries take about ``m * n / 16`` bytes.

    **Spans.** ``ref_start``/``ref_end`` are 0-based, end exclusive. With ``cigar=False``
    infix mode knows only where the alignment ends: ``ref_start`` is -1.

    Examples
    --------
    >>> import readalign
    >>> res = readalign.align(["ACGTTGCA", "GGGTTT"], ["TTACGTAGCATT", "AAGGGTTTAA"])
    >>> res.distance.tolist(), res.ref_start.tolist(), res.ref_end.tolist()
    ([1, 0], [2, 2], [10, 8])
    >>> res.cigars()
    ['8M', '6M']
    >>> readalign.align(["ACGTTGCA"], ["TTACGTAGCATT"], eqx=True).cigar(0)
    '4=1X3='
    >>> readalign.align(["ACGTTTTA"], ["ACGTTTA"], mode="global").cigar(0)
    '3M1I4M'
    >>> readalign.align(["ACGT"], ["TTTT"], max_distance=1).distance.tolist()
    [-1]
    """
    args = check_arguments(("reads", reads), ("windows", windows), paired=True,
                           max_distance=max_distance, threads=threads, backend=backend)
    if mode not in MODE_NAMES:
        raise ValueError(f"mode must be one of {', '.join(MODE_NAMES)}; got {mode!r}")
    k = AUTO_K if k is None else check_k(k)
    if scoring is not None:
        return _align_scored(args, mode, cigar, eqx, k, scoring)
    if mode == "local":
        raise ValueError("mode='local' needs a scoring, e.g. scoring=readalign.Scoring()")
    job = Job(infix=mode == "infix", max_distance=args.max_distance, n_code=N_CODE,
              eqx=bool(eqx), with_cigar=bool(cigar), k=k)
    with stage("pack sequences", len(args.first)):
        q = pack_dna(args.first, "reads", lazy=True)
        t = pack_dna(args.second, "windows", lazy=True)
    return align_packed(q, t, job, args.backend, args.threads)


def _align_scored(args: Arguments, mode: str, cigar: bool, eqx: bool, k: int,
                  scoring: Scoring) -> AlignResult:
    """:func:`align` with a :class:`Scoring`: check it, pack through its alphabet, dispatch."""
    if not isinstance(scoring, Scoring):
        raise TypeError(f"scoring must be a readalign.Scoring; got {type(scoring).__name__}")
    if args.max_distance >= 0:  # -1: None
        raise ValueError("max_distance applies to edit distance; with a scoring leave it None")
    if mode == "local":
        scoring.check_local()
    elif scoring.clip_penalty:
        raise ValueError(f"clip_penalty applies to mode='local' (soft clips); got mode={mode!r}")
    job = Job(infix=mode == "infix", max_distance=-1, n_code=scoring.n_code, eqx=bool(eqx),
              with_cigar=bool(cigar), k=k, scores=scoring.scores(MODE_NAMES.index(mode)))
    with stage("pack sequences", len(args.first)):
        q = pack_with(args.first, scoring.codes, "reads", lazy=True)
        t = pack_with(args.second, scoring.codes, "windows", lazy=True)
    if not scoring.is_dna:  # a letter outside the matrix is an error, not a silent code
        with stage("check letters", len(args.first)):
            check_alphabet(q, INVALID, "reads", scoring.alphabet)
            check_alphabet(t, INVALID, "windows", scoring.alphabet)
    return align_packed(q, t, job, args.backend, args.threads)


def edit_distance(a: Sequences, b: Sequences, max_distance: int | None = None,
                  backend: str = "auto", *, cigar: bool = False,
                  threads: int | None = None) -> np.ndarray | AlignResult:
    """Global Levenshtein distance of ``a[i]`` and ``b[i]`` for every i.

    Any text: strings compare by Unicode code point, bytes by byte value, with no case
    folding and no special letters. For every ``a`` against every ``b`` (a distance
    matrix) use :func:`cdist`.

    Parameters
    ----------
    a, b : list, tuple or 1-D array of str or bytes
        Equal-length lists, both of ``str`` or both of ``bytes`` (any other iterable is read
        into a list first).
    max_distance : int, optional
        Distances above it are reported as -1 (and the pair is abandoned early). None: no
        limit.
    backend : {"auto", "cpu", "cuda"}
        Where the distances are computed (``"auto"``: the GPU when there is one).
    cigar : bool
        True returns an :class:`AlignResult` with the alignments (global mode) instead of
        the distances alone.
    threads : int, optional
        CPU threads, at least 1 (None: numba's, every core).

    Returns
    -------
    numpy.ndarray or AlignResult
        The distances (int32, one per pair), or with ``cigar=True`` an :class:`AlignResult`.

    Raises
    ------
    TypeError
        An argument of the wrong type, named (``a``, ``b``, ``threads``, ...); a bad element
        named with its index (``a[1]: expected str, got int``); ``str`` on one side and
        ``bytes`` on the other.
    ValueError
        ``a`` and ``b`` of different lengths; ``max_distance`` below 0; ``threads`` below
        1; an unknown ``backend``.
    BackendUnavailableError
        ``backend="cuda"`` where no CUDA GPU can run the kernels.

    See Also
    --------
    cdist : every query against every choice.
    align : DNA alignment to windows, with modes and scores.

    Notes
    -----
    A pair whose shorter side has at most 64 symbols runs Myers' bit-parallel scan; a pair
    whose both sides are longer goes to the alignment engine, distance only (bit-parallel
    blocks in linear memory past 1,024 symbols). Every path gives the exact distance. With
    ``cigar=True`` ties break as in :func:`align`.

    Examples
    --------
    >>> import readalign
    >>> readalign.edit_distance(["kitten", "flaw"], ["sitting", "lawn"]).tolist()
    [3, 2]
    >>> readalign.edit_distance([b"kitten"], [b"sitting"], max_distance=2).tolist()
    [-1]
    >>> readalign.edit_distance(["\u00e9t\u00e9"], ["ete"]).tolist()
    [2]
    >>> readalign.edit_distance(["kitten"], ["sitting"], cigar=True).cigar(0)
    '6M1D'
    """
    args = check_arguments(("a", a), ("b", b), paired=True, max_distance=max_distance,
                           threads=threads, backend=backend)
    qa, qb = pack_text(args.first, "a", lazy=True), pack_text(args.second, "b", lazy=True)
    match_widths(qa, qb)
    name = backends.resolve(args.backend)
    if not cigar:
        return pairwise(qa, qb, args.max_distance, name, args.threads)
    job = Job(infix=False, max_distance=args.max_distance, n_code=NO_N, eqx=False,
              with_cigar=True, k=AUTO_K)
    return align_with(qa, qb, job, name, args.threads)


def free_gpu_memory() -> None:
    """Give back the GPU memory readalign keeps for the calling thread between calls.

    The GPU backends keep their device buffers and pinned host buffers after a call (one
    set per thread, grown as calls need), so that the next call does not pay to allocate
    them again, as CuPy's and PyTorch's memory pools do. Call this when the GPU memory is
    needed elsewhere; the next GPU call allocates afresh. A no-op (and no error) when the
    GPU was not used in this process.

    Notes
    -----
    Buffers are kept per thread: this gives back the calling thread's, and those of threads
    that have ended.

    Examples
    --------
    >>> import readalign
    >>> readalign.free_gpu_memory()
    """
    if "readalign.runtime.gpu_memory" in sys.modules:
        sys.modules["readalign.runtime.gpu_memory"].free_gpu_memory()
