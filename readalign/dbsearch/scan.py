"""The score pass: every query against every database sequence, best scores kept per query.

Each chunk of the database (:data:`CHUNK_RESIDUES` residues, in length order) is copied into
memory once (and onto the GPU once) and scored against every query: local mode, affine
gaps, scores only. Two kernels can score it (:data:`KERNEL`):

- ``"search"`` (the default): the search's own kernels (:mod:`.scores`,
  :mod:`readalign.kernels.search_scores`, :mod:`readalign.kernels.search_cuda`), a lane per
  database sequence and query (on the GPU two sequences a lane in 16-bit halves, and a
  block a sequence past 2,048 residues), any length on the CPU and on the GPU;
- ``"engine"``: the pair engine (:func:`readalign.engine.batching.align_with`), which aligns
  pairs, so a query is laid out once per database sequence of a block, a block holding at
  most :data:`PAIR_BYTES` of those copies (pairs longer than the engine's fast path run on
  the CPU's long path even on a GPU). It stays as the reference the tests hold the search
  kernel to.

Host memory is bounded by a chunk, a group of queries' scores against it
(:data:`SCORE_BYTES`) and, for the engine, a block, whatever the database's size. After each
chunk (block) a query keeps its ``max_hits`` best records: the highest scores, equal scores
in database (file) order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine.batching import AUTO_K, align_with
from ..engine.job import Job
from ..engine.packing import Packed
from ..engine.scoring import Scoring
from ..kernels.scored_quadrant import MODE_NAMES
from .database import Database
from .scores import Tables, chunk_scorer
from .sequences import Proteins

CHUNK_RESIDUES = 1 << 24
"""Database residues copied into memory at a time."""
PAIR_BYTES = 1 << 26
"""Bytes of query copies one engine call holds at most (query length times block sequences)."""
LOCAL = MODE_NAMES.index("local")
SCORE_BYTES = 1 << 28
"""Host memory for one chunk's scores (4 bytes a query and sequence): queries are scored
against a chunk in groups that fit it."""
KERNEL = "search"
"""What scores the chunks: ``"search"`` (the search's own kernel) or ``"engine"``."""


def local_job(scoring: Scoring, with_cigar: bool) -> Job:
    """The engine's job for a search: local alignment with ``scoring``; ``with_cigar`` adds
    the traceback (CIGARs with ``=``/``X``)."""
    return Job(infix=False, max_distance=-1, n_code=scoring.n_code, eqx=True,
               with_cigar=with_cigar, k=AUTO_K, scores=scoring.scores(LOCAL))


class Best:
    """The ``k`` best records of one query so far: highest score first, then file order."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.scores = np.zeros(0, np.int32)
        self.records = np.zeros(0, np.int64)

    def add(self, scores: np.ndarray, records: np.ndarray) -> None:
        """Fold in the ``scores`` of file records ``records``."""
        if scores.shape[0] > self.k:  # keep only what can enter: at least the k-th score
            floor = np.partition(scores, scores.shape[0] - self.k)[scores.shape[0] - self.k]
            if self.scores.shape[0] == self.k:
                floor = max(floor, self.scores[-1])
            keep = scores >= floor
            scores, records = scores[keep], records[keep]
        scores = np.concatenate([self.scores, scores])
        records = np.concatenate([self.records, records])
        order = np.lexsort((records, -scores.astype(np.int64)))[:self.k]
        self.scores, self.records = scores[order], records[order]


def tiled(query: np.ndarray, count: int) -> Packed:
    """``count`` copies of ``query``'s codes, one pair's read each."""
    m = query.shape[0]
    data = np.empty(m * count + 1, np.uint8)
    data[:-1].reshape(count, m)[:] = query
    data[-1] = 0
    return Packed(data, np.arange(count + 1, dtype=np.int64) * m)


def block_bounds(count: int, query_length: int) -> list[tuple[int, int]]:
    """Blocks of a chunk's ``count`` sequences, each within :data:`PAIR_BYTES` of query copies."""
    size = max(1, PAIR_BYTES // max(query_length, 1))
    return [(lo, min(lo + size, count)) for lo in range(0, count, size)]


def score_block(query: np.ndarray, targets: Packed, lo: int, hi: int, job: Job, backend: str,
                threads: int | None) -> np.ndarray:
    """Local scores of ``query`` against ``targets`` ``lo:hi`` (int32)."""
    t = Packed(targets.data, targets.offsets[lo:hi + 1])
    return align_with(tiled(query, hi - lo), t, job, backend, threads).score


def score_pass(queries: Proteins, db: Database, scoring: Scoring, max_hits: int, backend: str,
               threads: int | None, done: Callable[[int], None] | None = None) -> list[Best]:
    """Every query against every sequence of ``db``; each query's ``max_hits`` best records.

    ``backend`` is resolved (``"cpu"`` or ``"cuda"``); ``done(n)`` is told of every chunk
    of ``n`` database sequences finished.
    """
    best = [Best(max_hits) for _ in range(len(queries))]
    run = _engine_chunk if KERNEL == "engine" else _search_chunk
    for lo, hi in db.chunk_bounds(CHUNK_RESIDUES):
        run(queries, db.chunk(lo, hi), db.index[lo:hi], best, scoring, backend, threads)
        if done is not None:
            done(hi - lo)
    return best


def _search_chunk(queries: Proteins, targets: Packed, records: np.ndarray, best: list[Best],
                  scoring: Scoring, backend: str, threads: int | None) -> None:
    """One chunk against every query with the search's own kernel."""
    scorer = chunk_scorer(backend, Tables(scoring), targets, threads)
    group = max(1, SCORE_BYTES // (4 * max(len(targets), 1)))
    try:
        for lo in range(0, len(best), group):
            hi = min(lo + group, len(best))
            scores = scorer([queries.sequence(qi) for qi in range(lo, hi)])
            for qi in range(lo, hi):
                best[qi].add(scores[qi - lo], records)
    finally:
        scorer.close()


def _engine_chunk(queries: Proteins, targets: Packed, records: np.ndarray, best: list[Best],
                  scoring: Scoring, backend: str, threads: int | None) -> None:
    """One chunk against every query through the pair engine, block by block."""
    job = local_job(scoring, with_cigar=False)
    for qi, keep in enumerate(best):
        query = queries.sequence(qi)
        for a, b in block_bounds(len(targets), query.shape[0]):
            keep.add(score_block(query, targets, a, b, job, backend, threads), records[a:b])
