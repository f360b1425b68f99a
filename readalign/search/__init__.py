"""Protein database search: every query against every database sequence, the best hits
re-aligned, with BLAST's statistics.

``readalign.search(queries, database, scoring=None, max_hits=10, *, evalue=10.0,
backend="auto", threads=None)`` calls this package: the package is callable, so that the
public function and the package that holds its parts share the name ``readalign.search``.

Parameters
----------
queries : str, path or list of str or bytes
    A FASTA file (plain or gzip) of protein queries, or the sequences themselves (then
    named by their index, ``"0"``, ``"1"``, ...).
database : str, path, Database or list of str or bytes
    A database written by ``readalign makedb`` (``.radb``, read memory-mapped), a FASTA
    file, a :class:`~readalign.search.database.Database`, or the sequences themselves.
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

Returns
-------
SearchHits
    One row per hit, arrays per column (:class:`~readalign.search.report.SearchHits`):
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
effective lengths (:mod:`readalign.search.statistics`). The score pass runs the database
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

from __future__ import annotations

import sys
import types


class _CallableModule(types.ModuleType):
    """The package's module type: calling it runs :func:`readalign.search.api.search`."""

    def __call__(self, *args, **kwargs):
        from .api import search

        return search(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
