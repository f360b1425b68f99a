"""Edit distances between word lists: :func:`cdist`, dense or sparse.

The lists are packed once (:func:`prepare`) into int32 symbol codes; a
backend then computes *blocks* of query rows. A backend's block function is
called as ``block(codes, r0, r1, upper=..., max_distance=..., sparse=...,
dtype=..., threads=...)`` and returns either the dense rows ``r0:r1``
(shape ``(r1 - r0, len(choices))``) or, when ``sparse``, the arrays
``(i, j, d)`` of the pairs within ``max_distance`` in row-major order. With
``upper`` (queries are the choices) only pairs ``j > i`` are wanted; the
dense cells ``j <= i`` may hold anything. The CPU block lives in
:mod:`readalign.words.cpu_blocks`, the GPU one is ``readalign.words.gpu_blocks.cdist_gpu``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..engine.packing import Packed, match_widths, pack_text
from ..runtime import backends
from ..runtime.arguments import Sequences, check_arguments
from . import cpu_blocks
from .codes import WordCodes

DIRECT_CODES = 4096
"""Symbol codes below this are used as they are; larger alphabets are renumbered densely."""
BLOCK_CELLS = 1 << 25
"""Dense cells per block when :func:`cdist` builds a sparse result block by block."""


class SparseDistances(NamedTuple):
    """The pairs within a cut-off, from :func:`cdist` with ``sparse=True``.

    Pair ``k`` is ``queries[i[k]]`` against ``choices[j[k]]`` at ``distance[k]``, sorted by
    ``(i, j)``. A named tuple: it unpacks as ``i, j, distance = result``.

    Attributes
    ----------
    i : numpy.ndarray
        The query index of each pair (int64).
    j : numpy.ndarray
        The choice index of each pair (int64).
    distance : numpy.ndarray
        The distance of each pair, at most the cut-off (the dtype :func:`cdist` chose or was
        given).

    Examples
    --------
    >>> import readalign
    >>> i, j, d = readalign.cdist(["kitten", "sitting", "mitten"], max_distance=1, sparse=True)
    >>> i.tolist(), j.tolist(), d.tolist()
    ([0], [2], [1])
    """

    i: np.ndarray
    j: np.ndarray
    distance: np.ndarray


def _recode(data: np.ndarray) -> tuple[np.ndarray, int]:
    """Map symbols to int32 codes, densely when the alphabet is large; return (codes, size)."""
    top = int(data.max()) if data.shape[0] else 0
    if top < DIRECT_CODES:
        return data.astype(np.int32), top + 1
    uniq, inverse = np.unique(data, return_inverse=True)
    return inverse.astype(np.int32).reshape(-1), int(uniq.shape[0])


def prepare(queries: Sequences, choices: Sequences | None = None) -> WordCodes:
    """Pack both lists (str by code point, bytes by byte; both checked, of one kind, by
    :func:`readalign.runtime.arguments.check_arguments`) into shared int32 codes."""
    q = pack_text(queries, "queries")
    if choices is None:
        codes, alphabet = _recode(q.data)
        packed = Packed(codes, q.offsets)
        return WordCodes(packed, packed, alphabet, _maxlen(q), True)
    c = pack_text(choices, "choices")
    match_widths(q, c)
    split = q.data.shape[0]
    codes, alphabet = _recode(np.concatenate((q.data, c.data)))
    return WordCodes(Packed(codes[:split], q.offsets), Packed(codes[split:], c.offsets),
                     alphabet, max(_maxlen(q), _maxlen(c)), False)


def _maxlen(p: Packed) -> int:
    return int(p.lengths.max()) if len(p) else 0


def result_dtype(maxlen: int, max_distance: int, dtype=None) -> np.dtype:
    """uint8 when every value fits (distance <= longest string; ``max_distance + 1`` with a
    cut-off), else int32; a requested ``dtype`` must be an integer type that fits them."""
    bound = maxlen if max_distance < 0 else min(maxlen, max_distance + 1)
    if dtype is None:
        return np.dtype(np.uint8 if bound <= 255 else np.int32)
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"dtype must be an integer type; got {dt}")
    if bound > np.iinfo(dt).max:
        raise ValueError(f"dtype {dt} cannot hold distances up to {bound}; use a wider type")
    return dt


def block_function(name: str):
    """The block function of a resolved backend (``"cpu"`` or ``"cuda"``)."""
    if name == "cpu":
        return cpu_blocks.block
    from . import gpu_blocks  # numba-cuda is imported only when the GPU is used (start-up time)

    return gpu_blocks.cdist_gpu


def row_chunks(nrows: int, ncols: int, cells: int = BLOCK_CELLS, rows: int = 0):
    """Yield ``(r0, r1)`` row ranges of about ``cells`` cells each (or ``rows`` rows)."""
    step = rows if rows > 0 else max(1, cells // max(ncols, 1))
    for r0 in range(0, nrows, step):
        yield r0, min(r0 + step, nrows)


def _dense(codes: WordCodes, block, is_cpu: bool, max_distance: int, dt, threads):
    nq = len(codes.q)
    upper = codes.same and is_cpu
    out = block(codes, 0, nq, upper=upper, max_distance=max_distance, sparse=False, dtype=dt,
                threads=threads)
    if upper:
        cpu_blocks.mirror(out)
    return out


def _sparse(codes: WordCodes, block, max_distance: int, dt, threads) -> SparseDistances:
    parts = [block(codes, r0, r1, upper=codes.same, max_distance=max_distance, sparse=True,
                   dtype=dt, threads=threads)
             for r0, r1 in row_chunks(len(codes.q), len(codes.c))]
    if not parts:
        return SparseDistances(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dt))
    return SparseDistances(*(np.concatenate([p[k] for p in parts]) for k in range(3)))


def cdist(queries: Sequences, choices: Sequences | None = None, max_distance: int | None = None,
          backend: str = "auto", *, sparse: bool = False, dtype=None,
          threads: int | None = None) -> np.ndarray | SparseDistances:
    """Levenshtein distance of every query against every choice.

    Any text: strings compare by Unicode code point, bytes by byte value, with no case
    folding. Rows are computed in blocks; with ``sparse=True`` the dense matrix never
    exists.

    Parameters
    ----------
    queries : list, tuple or 1-D array of str or bytes
        The rows (any other iterable is read into a list first).
    choices : list, tuple or 1-D array of str or bytes, optional
        The columns, of the same kind (``str`` or ``bytes``) as ``queries``. None compares
        ``queries`` with itself (a dense result is computed as one triangle and mirrored, as
        when ``choices is queries``).
    max_distance : int, optional
        The cut-off: pairs past it are abandoned early. In a dense result their cells hold
        ``max_distance + 1`` (as RapidFuzz's ``score_cutoff``). None: no cut-off.
    backend : {"auto", "cpu", "cuda"}
        Where the distances are computed (``"auto"``: the GPU when there is one).
    sparse : bool
        Return the pairs within ``max_distance`` (which it needs) instead of the matrix.
    dtype : numpy integer dtype, optional
        The type of the distances. None: uint8 when every value fits, else int32.
    threads : int, optional
        CPU threads, at least 1 (None: numba's, every core).

    Returns
    -------
    numpy.ndarray or SparseDistances
        Dense: a ``(len(queries), len(choices))`` matrix. Sparse: the pairs ``(i, j,
        distance)`` within the cut-off, sorted by ``(i, j)``; with ``choices=None`` each
        unordered pair once, ``i < j`` (no diagonal).

    Raises
    ------
    TypeError
        An argument of the wrong type, named (``queries``, ``choices``, ``threads``, ...); a
        bad element named with its index (``queries[3]: expected str, got NoneType``); ``str``
        on one side and ``bytes`` on the other; a ``dtype`` that is not an integer type.
    ValueError
        ``max_distance`` below 0; ``sparse=True`` without ``max_distance``; ``threads`` below
        1; an unknown ``backend``; a ``dtype`` too narrow for the distances.
    BackendUnavailableError
        ``backend="cuda"`` where no CUDA GPU can run the kernels.

    See Also
    --------
    edit_distance : the distance of ``a[i]`` and ``b[i]``, pair by pair.

    Notes
    -----
    Each row runs Myers' bit-parallel algorithm (one 64-bit word per query of up to 64
    symbols, blocks of words beyond); large alphabets are renumbered densely. The results
    are exact on every backend.

    Examples
    --------
    >>> import readalign
    >>> readalign.cdist(["kitten", "flaw"], ["sitting", "lawn", "flaws"]).tolist()
    [[3, 5, 6], [7, 2, 1]]
    >>> readalign.cdist(["kitten", "sitting"]).tolist()
    [[0, 3], [3, 0]]
    >>> readalign.cdist(["kitten"], ["sitting", "kitchen"], max_distance=2).tolist()
    [[3, 2]]
    """
    args = check_arguments(("queries", queries), ("choices", choices), paired=False,
                           max_distance=max_distance, threads=threads, backend=backend)
    md = args.max_distance
    if sparse and md < 0:
        raise ValueError("sparse=True needs max_distance: the pairs within it are returned")
    same = choices is queries and not sparse  # the same matrix, computed as one triangle
    codes = prepare(args.first, None if same else args.second)
    dt = result_dtype(codes.maxlen, md, dtype)
    name = backends.resolve(args.backend)
    block = block_function(name)
    if sparse:
        return _sparse(codes, block, md, dt, args.threads)
    return _dense(codes, block, name == "cpu", md, dt, args.threads)
