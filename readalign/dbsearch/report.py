"""The hits of a search: the best records re-aligned with traceback, statistics, columns.

After the score pass, each query's best records with a positive score and an E-value within
the cut-off are aligned again by the engine, this time with the traceback (local mode,
``=``/``X`` CIGARs), on the backend the score pass ran on. The alignment gives the
columns of BLAST's tabular report: identities, mismatches, gap openings, aligned length and
1-based inclusive spans of query and subject.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.batching import align_with
from ..engine.packing import take
from ..engine.result import AlignResult, cigar_string
from ..engine.scoring import Scoring
from .database import Database
from .scan import Best, local_job
from .sequences import Proteins
from .statistics import Parameters, bit_scores, evalues, search_space

OP_EQUAL, OP_DIFF, OP_INS, OP_DEL, OP_CLIP = 7, 8, 1, 2, 4
"""BAM CIGAR codes of ``=``, ``X``, ``I``, ``D`` and ``S``."""


@dataclass(frozen=True)
class SearchHits:
    """The hits of :func:`readalign.search`: one row per hit, arrays per column.

    Rows run query by query (in input order); a query's hits run from the highest score
    down, equal scores in database order.

    Attributes
    ----------
    query, subject : numpy.ndarray
        int64: the query's index and the database sequence's record (0-based, file order).
    qseqid, sseqid : numpy.ndarray
        Their names (object arrays of ``str``; an index as text for sequences given as a list).
    score : numpy.ndarray
        int32 raw alignment scores.
    bitscore, evalue : numpy.ndarray
        float64 bit scores and E-values (Karlin–Altschul, BLAST's parameters and lengths).
    pident : numpy.ndarray
        float64: identities per aligned column, in percent.
    length, mismatch, gapopen : numpy.ndarray
        int64: aligned columns (gaps included), substitutions, gap openings.
    qstart, qend, sstart, send : numpy.ndarray
        int64: the aligned spans, 1-based and inclusive, as BLAST writes them.
    cigar : numpy.ndarray
        object array of ``str``: the alignment's CIGAR (``=``, ``X``, ``I`` a query residue
        against a gap, ``D`` a subject residue against a gap), without clipped ends.

    Examples
    --------
    >>> import readalign
    >>> hits = readalign.search(["MKTAYIAKQR"], ["GGMKTAYIAKQRGG", "PPPP"], backend="cpu")
    >>> len(hits), hits.columns[:3]
    (1, ('qseqid', 'sseqid', 'pident'))
    >>> hits["sseqid"].tolist(), hits["qstart"].tolist(), hits["sstart"].tolist()
    (['0'], [1], [3])
    """

    query: np.ndarray
    subject: np.ndarray
    qseqid: np.ndarray
    sseqid: np.ndarray
    score: np.ndarray
    bitscore: np.ndarray
    evalue: np.ndarray
    pident: np.ndarray
    length: np.ndarray
    mismatch: np.ndarray
    gapopen: np.ndarray
    qstart: np.ndarray
    qend: np.ndarray
    sstart: np.ndarray
    send: np.ndarray
    cigar: np.ndarray

    columns = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
               "sstart", "send", "evalue", "bitscore", "score", "cigar", "query", "subject")
    """Every column's name."""

    def __len__(self) -> int:
        return self.query.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        return getattr(self, name)


@dataclass
class Candidates:
    """The hits kept from the score pass, before their traceback."""

    query: np.ndarray
    subject: np.ndarray
    score: np.ndarray
    bitscore: np.ndarray
    evalue: np.ndarray


def candidates(queries: Proteins, db: Database, best: list[Best], params: Parameters,
               cutoff: float) -> Candidates:
    """Each query's best records with a score above 0 and an E-value of at most ``cutoff``."""
    query, subject, score, ev = [], [], [], []
    for qi, keep in enumerate(best):
        space = search_space(params, int(queries.lengths[qi]), db.residues, len(db))
        e = evalues(params, keep.scores, space)
        kept = (keep.scores > 0) & (e <= cutoff)
        query.append(np.full(int(kept.sum()), qi, np.int64))
        subject.append(keep.records[kept])
        score.append(keep.scores[kept])
        ev.append(e[kept])
    scores = np.concatenate([np.zeros(0, np.int32), *score]).astype(np.int32)
    return Candidates(np.concatenate([np.zeros(0, np.int64), *query]),
                      np.concatenate([np.zeros(0, np.int64), *subject]), scores,
                      bit_scores(params, scores), np.concatenate([np.zeros(0), *ev]))


def _per_pair(ops: np.ndarray, offsets: np.ndarray, code: int, runs: bool = False) -> np.ndarray:
    """Per pair: the residues of CIGAR operation ``code`` (``runs``: how many runs of it)."""
    pair = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    hit = (ops & 15) == code
    weight = hit.astype(np.int64) if runs else np.where(hit, ops >> 4, 0).astype(np.int64)
    return np.bincount(pair, weights=weight, minlength=offsets.shape[0] - 1).astype(np.int64)


def _cigars(res: AlignResult) -> np.ndarray:
    """Each pair's CIGAR without its clipped ends."""
    out = np.empty(len(res), dtype=object)
    for i in range(len(res)):
        ops = res.cigar_ops[res.cigar_offsets[i]:res.cigar_offsets[i + 1]]
        out[i] = cigar_string(ops[(ops & 15) != OP_CLIP])
    return out


def traceback(queries: Proteins, db: Database, found: Candidates, scoring: Scoring, backend: str,
              threads: int | None) -> SearchHits:
    """Align every candidate with its traceback and fill the report's columns."""
    q = take(queries.packed(), found.query)
    t = db.records(found.subject)
    res = align_with(q, t, local_job(scoring, with_cigar=True), backend, threads)
    if not np.array_equal(res.score, found.score):
        raise RuntimeError("a traceback's score differs from the score pass's (an engine defect)")
    ops, off = res.cigar_ops, res.cigar_offsets
    ident = _per_pair(ops, off, OP_EQUAL)
    diff = _per_pair(ops, off, OP_DIFF)
    ins, dels = _per_pair(ops, off, OP_INS), _per_pair(ops, off, OP_DEL)
    length = ident + diff + ins + dels
    gapopen = _per_pair(ops, off, OP_INS, runs=True) + _per_pair(ops, off, OP_DEL, runs=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        pident = np.where(length > 0, 100.0 * ident / np.maximum(length, 1), 0.0)
    qnames = np.array([queries.names[i] for i in found.query.tolist()], dtype=object)
    snames = np.array([db.names[i] for i in found.subject.tolist()], dtype=object)
    return SearchHits(found.query, found.subject, qnames, snames, found.score, found.bitscore,
                      found.evalue, pident, length, diff, gapopen, res.query_start + 1,
                      res.query_end.astype(np.int64), res.ref_start + 1,
                      res.ref_end.astype(np.int64), _cigars(res))
