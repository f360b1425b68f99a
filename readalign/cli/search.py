"""Search protein queries against a protein database: the best hits per query, re-aligned,
with BLAST's E-values, as BLAST's tabular report.

QUERIES and DB are FASTA files (plain or gzip); DB may also be a database packed by
`readalign makedb`, read memory-mapped in chunks. Every query is aligned to every database
sequence (local alignment, affine gaps: a gap of length L costs OPEN + L * EXTEND, as in
BLAST); each query's best MAX_HITS sequences (ties in database order) with an E-value within
the cut-off are aligned again with their traceback and reported, one tab-separated line each,
best first: qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue
bitscore (1-based coordinates, numbers written as BLAST writes them). --outfmt chooses the
columns, among them score and cigar. Residues outside the matrix's letters are read as X.
The report is written under a temporary name and renamed when the run succeeds.
"""

from __future__ import annotations

import argparse

from ..dbsearch import defaults
from ..dbsearch.columns import COLUMNS, parse_columns
from ..errors import InputError
from ..runtime import backends

NAME = "search"
HELP = "protein queries against a protein database: best hits, E-values, BLAST tabular output"
QUIET_FLAGS = ("--quiet",)
"""``-q`` names the queries here, as in BLAST-like tools."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``readalign search``."""
    parser.add_argument("-q", "--query", required=True, metavar="QUERIES",
                        help="protein queries (FASTA, plain or gzip)")
    parser.add_argument("-d", "--db", required=True, metavar="DB",
                        help="protein database: FASTA, or a .radb from readalign makedb")
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="tabular report ('-': stdout)")
    parser.add_argument("--matrix", choices=defaults.MATRIX_NAMES, default=defaults.MATRIX,
                        type=str.upper, help="substitution matrix")
    parser.add_argument("--gap-open", type=int, default=defaults.GAP_OPEN, metavar="OPEN",
                        help="gap opening cost (BLAST's -gapopen)")
    parser.add_argument("--gap-extend", type=int, default=defaults.GAP_EXTEND, metavar="EXTEND",
                        help="cost per gap residue (BLAST's -gapextend)")
    parser.add_argument("--max-hits", type=int, default=defaults.MAX_HITS, metavar="N",
                        help="hits reported per query at most")
    parser.add_argument("--evalue", type=float, default=defaults.EVALUE, metavar="E",
                        help="report hits with an E-value of at most E")
    parser.add_argument("--outfmt", default="std", metavar="COLUMNS",
                        help=f"report columns, e.g. '6 qseqid sseqid evalue' or "
                        f"'std,cigar' (std: BLAST's twelve; also {', '.join(COLUMNS[12:])})")
    parser.add_argument("--backend", choices=backends.BACKENDS, default="auto",
                        help="where the alignments run")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="CPU threads (default: the CPUs this process may use)")


def check(args: argparse.Namespace) -> None:
    """Refuse option values the command cannot honour, in one line."""
    if args.max_hits < 1:
        raise InputError(f"--max-hits must be >= 1; got {args.max_hits}")
    if not args.evalue > 0:
        raise InputError(f"--evalue must be > 0; got {args.evalue}")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be >= 1; got {args.threads}")
    parse_columns(args.outfmt)


def run(args: argparse.Namespace) -> int:
    """Check the options, then search (the work lives in :mod:`readalign.dbsearch.run`, loaded
    here so that ``--help`` does not load numba)."""
    check(args)
    from ..dbsearch.run import run_search
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile

    return run_search(args)
