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
    """Every query against every database sequence; the best hits re-aligned, with BLAST's
    statistics (``readalign.search``).

    Parameters
    ----------
    queries : str, path or list of str or bytes
        A FASTA file (plain or gzip) of protein queries, or the sequences themselves (then
        named by their index, ``"0"``, ``"1"``, ...).
    database : str, path, Database or list of str or bytes
        A database written by ``readalign makedb`` (``.radb``, read memory-mapped), a FASTA
        file, a :class:`~readalign.dbsearch.database.Database`, or the sequences themselves.
    scoring : Scoring, optional
        A :class:`~readalign.Scoring` with a named protein matrix and a gap pair BLAST has
        statistics for (None: BLOSUM62 with ``gap_open=11, gap_extend=1``, BLAST's default;
        a gap of length L costs ``gap_open + L * gap_extend``, BLAST's convention).
    max_hits : int
        The most hits reported per query (the best scores; equal scores in database order).
    evalue : float
        Hits with a larger E-value are left out (BLAST's ``-evalue``).
    backend : {"auto", "cpu", "cuda"}
        Where the score pass and the tracebacks run.
    threads : int, optional
        CPU threads (None: every core).
    progress : callable, optional
        Told of every database chunk scored (``progress(n)``, ``n`` sequences).

    Returns
    -------
    SearchHits
        One row per hit, arrays per column (:class:`~readalign.dbsearch.report.SearchHits`):
        BLAST's twelve tabular columns, the raw score, the CIGAR, and the query's and
        subject's indices.

    Raises
    ------
    InputError
        A bad FASTA or database file (named with the record), an empty sequence, a repeated
        name, a query of more than 65,536 residues, a matrix and gap pair without statistics
        (the message lists the pairs there are).
    TypeError, ValueError
        An argument of the wrong type or value (``max_hits`` below 1, ``evalue`` not above 0).
    BackendUnavailableError
        ``backend="cuda"`` where no CUDA GPU can run the kernels.

    Notes
    -----
    Residues outside the matrix's 24 letters are read as ``X`` (counted and logged once),
    as BLAST reads them. Scores are local affine (Smith–Waterman–Gotoh) scores of the whole
    sequences; a hit needs a score above 0. E-values use BLAST's gapped ``λ`` and ``K`` and its
    effective lengths (:mod:`readalign.dbsearch.statistics`). The score pass runs the database
    in chunks, so a ``.radb`` larger than memory is searched with memory for a chunk.

    Examples
    --------
    >>> import readalign
    >>> hits = readalign.search(["MKTAYIAKQRQISFVKSHFSRQ"],
    ...                         ["MKTAYIAKQRQISFVKSHFSRQ", "MKTAYIAKQRHISFVKSHFSRQ", "WWWW"],
    ...                         backend="cpu")
    >>> hits["sseqid"].tolist(), hits["score"].tolist(), hits["mismatch"].tolist()
    (['0', '1'], [109, 104], [0, 1])
    >>> hits["cigar"].tolist()
    ['22=', '10=1X11=']
    """
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
