"""The work of ``readalign search`` and ``readalign makedb`` (their options, help and checks:
:mod:`readalign.cli.search`, :mod:`readalign.cli.makedb`)."""

from __future__ import annotations

import argparse
import logging
import os
import time

from ..engine.scoring import Scoring
from ..errors import InputError
from ..runtime.outfiles import TempFile, check_outputs, output_error
from ..runtime.progress import Progress
from .api import check_scoring, load_database, load_queries, search
from .columns import parse_columns
from .database import Database, write_database
from .sequences import read_proteins
from .tabular import lines

log = logging.getLogger("readalign")


def scoring_of(args: argparse.Namespace) -> Scoring:
    """The scoring the options name, checked for statistics (one-line errors)."""
    try:
        scoring = Scoring(matrix=args.matrix, gap_open=args.gap_open, gap_extend=args.gap_extend)
    except ValueError as exc:
        raise InputError(f"--matrix/--gap-open/--gap-extend: {exc}") from None
    check_scoring(scoring)
    return scoring


def _write(path: str, text_lines) -> None:
    """The report at ``path`` (a temporary file renamed on success; ``-``: stdout)."""
    tmp = TempFile(path)
    try:
        with os.fdopen(tmp.take_fd(), "w", encoding="utf-8", newline="") as fh:
            fh.writelines(text_lines)
    except OSError as exc:
        tmp.discard()
        raise output_error("stdout" if path == "-" else path, exc) from None
    except BaseException:
        tmp.discard()
        raise
    tmp.commit()


def run_search(args: argparse.Namespace) -> int:
    """``readalign search``: read the queries and the database, search, write the report."""
    check_outputs({"-o": args.output}, {"-q": args.query, "-d": args.db})
    columns = parse_columns(args.outfmt)
    scoring = scoring_of(args)
    queries = load_queries(args.query)
    db = load_database(args.db)
    cells = int(queries.residues) * db.residues
    log.info("%d queries (%d residues) against %d sequences (%d residues), %s, %d/%d gaps",
             len(queries), queries.residues, len(db), db.residues, scoring.name,
             scoring.gap_open, scoring.gap_extend)
    progress = Progress(len(db), "sequences", enabled=None if not args.quiet else False,
                        prefix="readalign: ")
    t0 = time.perf_counter()
    progress.start()
    try:
        hits = search(queries, db, scoring, args.max_hits, evalue=args.evalue,
                      backend=args.backend, threads=args.threads, progress=progress.update)
    finally:
        progress.close()
    secs = time.perf_counter() - t0
    _write(args.output, lines(hits, columns))
    log.info("%d hits in %.2f s (%.2f GCUPS), written to %s", len(hits), secs,
             cells / secs / 1e9 if secs > 0 else 0.0,
             "standard output" if args.output == "-" else args.output)
    return 0


def run_makedb(args: argparse.Namespace) -> int:
    """``readalign makedb``: pack a FASTA database into a ``.radb`` file."""
    check_outputs({"-o": args.output}, {"FASTA": args.fasta})
    if args.output == "-":
        raise InputError("-o: the database needs a file name, not stdout")
    t0 = time.perf_counter()
    db = Database.of(read_proteins(args.fasta))
    if len(db) == 0:
        raise InputError(f"{args.fasta}: no sequences")
    write_database(db, args.output)
    log.info("%d sequences, %d residues packed into %s in %.2f s", len(db), db.residues,
             args.output, time.perf_counter() - t0)
    return 0
