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

from ..engine.job import check_max_distance
from ..engine.packing import Packed, match_kinds, pack_text
from ..runtime import backends
from . import cpu_blocks
from .codes import WordCodes

DIRECT_CODES = 4096
"""Symbol codes below this are used as they are; larger alphabets are renumbered densely."""
BLOCK_CELLS = 1 << 25
"""Dense cells per block when :func:`cdist` builds a sparse result block by block."""


class SparseDistances(NamedTuple):
    """Pairs within the cut-off: ``queries[i[k]]`` vs ``choices[j[k]]`` is ``distance[k]``."""

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


def prepare(queries, choices=None) -> WordCodes:
    """Pack both lists (str by code point, bytes by byte) into shared int32 codes."""
    q = pack_text(queries, "queries")
    if choices is None:
        codes, alphabet = _recode(q.data)
        packed = Packed(codes, q.offsets)
        return WordCodes(packed, packed, alphabet, _maxlen(q), True)
    c = pack_text(choices, "choices")
    match_kinds(q, c, "queries", "choices")
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


def cdist(queries, choices=None, max_distance: int | None = None, backend: str = "auto", *,
          sparse: bool = False, dtype=None, threads: int | None = None):
    """Levenshtein distance of every query against every choice.

    ``queries`` and ``choices`` are lists (or 1-D arrays) of ``str``, compared
    by Unicode code point, or of ``bytes``, compared by byte; no case folding.
    ``choices=None`` compares ``queries`` with itself (dense results are then
    computed as one triangle and mirrored, as when ``choices is queries``).

    Dense (default): a ``(len(queries), len(choices))`` matrix of ``dtype``
    (uint8 when every value fits, else int32). With ``max_distance``,
    values above it are reported as ``max_distance + 1`` (like rapidfuzz's
    ``score_cutoff``), and pairs are abandoned early.

    ``sparse=True`` (needs ``max_distance``) returns :class:`SparseDistances`
    ``(i, j, distance)`` of the pairs within the cut-off, sorted by (i, j),
    computed block by block so the dense matrix never exists. For
    ``choices=None`` it lists each unordered pair once, ``i < j`` (no
    diagonal).

    ``backend`` is ``"auto"``, ``"cpu"`` or ``"cuda"``; ``threads`` caps CPU
    threads. For pairs ``(a[k], b[k])`` use :func:`readalign.edit_distance`.
    """
    md = check_max_distance(max_distance)
    if sparse and md < 0:
        raise ValueError("sparse=True needs max_distance: the pairs within it are returned")
    if choices is queries and not sparse:
        choices = None  # the same matrix, computed as one triangle
    codes = prepare(queries, choices)
    dt = result_dtype(codes.maxlen, md, dtype)
    name = backends.resolve(backend)
    block = block_function(name)
    if sparse:
        return _sparse(codes, block, md, dt, threads)
    return _dense(codes, block, name == "cpu", md, dt, threads)
