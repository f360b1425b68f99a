"""``readalign.search``: protein queries against a database, the best hits with statistics."""

from __future__ import annotations

import logging
import os

import numpy as np

from ..engine.scoring import Scoring
from ..errors import InputError
from ..runtime import backends
from ..runtime.arguments import check_threads
from ..runtime.timing import stage
from . import defaults
from .database import Database, is_database, open_database
from .report import SearchHits, candidates, traceback
from .scan import score_pass
from .sequences import MAX_QUERY_LENGTH, Proteins, proteins_of, read_proteins
from .statistics import Parameters, parameters

log = logging.getLogger("readalign")


def default_scoring() -> Scoring:
    """BLAST's protein default: BLOSUM62, a gap of length L costing ``11 + L``."""
    return Scoring(matrix=defaults.MATRIX, gap_open=defaults.GAP_OPEN,
                   gap_extend=defaults.GAP_EXTEND)


def check_scoring(scoring: Scoring) -> Parameters:
    """The statistics of ``scoring``: a named protein matrix with a gap pair BLAST tabulates."""
    if not isinstance(scoring, Scoring):
        raise TypeError(f"scoring must be a readalign.Scoring; got {type(scoring).__name__}")
    if scoring.is_dna or scoring.name == "user":
        raise InputError(f"search needs a named protein matrix ({', '.join(defaults.MATRIX_NAMES)});"
                         f" got {scoring!r}")
    if scoring.clip_penalty:
        raise InputError("search takes no clip_penalty (local alignments are scored as BLAST's)")
    return parameters(scoring.name, scoring.gap_open, scoring.gap_extend)


def load_queries(queries: object) -> Proteins:
    """Queries from a FASTA path, a list of sequences, or :class:`Proteins` as they are."""
    if isinstance(queries, Proteins):
        return queries
    if isinstance(queries, (str, os.PathLike)):
        return read_proteins(os.fspath(queries), MAX_QUERY_LENGTH)
    return proteins_of(queries, "queries", MAX_QUERY_LENGTH)


def load_database(database: object) -> Database:
    """A database from a ``.radb`` or FASTA path, a list of sequences, or a :class:`Database`."""
    if isinstance(database, Database):
        return database
    if isinstance(database, (str, os.PathLike)):
        path = os.fspath(database)
        if is_database(path):
            return open_database(path)
        with stage("read database", 0):
            return Database.of(read_proteins(path))
    return Database.of(proteins_of(database, "database"))


def _check_counts(max_hits: object, evalue: object) -> tuple[int, float]:
    if isinstance(max_hits, bool) or not isinstance(max_hits, (int, np.integer)):
        raise TypeError(f"max_hits must be an int; got {type(max_hits).__name__}")
    if max_hits < 1:
        raise ValueError(f"max_hits must be >= 1; got {max_hits}")
    if isinstance(evalue, bool) or not isinstance(evalue, (int, float, np.floating, np.integer)):
        raise TypeError(f"evalue must be a number; got {type(evalue).__name__}")
    if not evalue > 0:
        raise ValueError(f"evalue must be > 0; got {evalue}")
    return int(max_hits), float(evalue)


def search(queries: object, database: object, scoring: Scoring | None = None,
           max_hits: int = defaults.MAX_HITS, *, evalue: float = defaults.EVALUE,
           backend: str = "auto", threads: int | None = None, progress=None) -> SearchHits:
    """The body of :func:`readalign.search` (documented there); ``progress`` is told of
    every database chunk scored (``progress(n)``, ``n`` sequences)."""
    scoring = default_scoring() if scoring is None else scoring
    params = check_scoring(scoring)
    max_hits, evalue = _check_counts(max_hits, evalue)
    threads = check_threads(threads)
    name = backends.resolve(backends.check_backend(backend))
    q = load_queries(queries)
    db = load_database(database)
    if len(db) == 0:
        raise InputError("the database holds no sequences")
    log.debug("%d queries against %d sequences (%d residues) on %s", len(q), len(db),
              db.residues, name)
    with stage("score pass", len(q)):
        best = score_pass(q, db, scoring, max_hits, name, threads, progress)
    found = candidates(q, db, best, params, evalue)
    with stage("align hits", len(found.query)):
        return traceback(q, db, found, scoring, name, threads)
