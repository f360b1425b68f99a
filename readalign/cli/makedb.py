"""Pack a protein FASTA file (plain or gzip) into a database for `readalign search`.

The residues are coded once, the sequences put in length order (so that the GPU's lanes get
equal work) with their names kept apart; `readalign search -d DB.radb` then reads it
memory-mapped, one chunk at a time, without parsing FASTA. Residues outside the matrices'
letters are stored as X (counted in the log); an empty sequence or a repeated name is an
error. The output is written under a temporary name and renamed once complete.
"""

from __future__ import annotations

import argparse

NAME = "makedb"
HELP = "pack a protein FASTA file into a database for readalign search"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``readalign makedb``."""
    parser.add_argument("fasta", metavar="FASTA", help="protein sequences (FASTA, plain or gzip)")
    parser.add_argument("-o", "--output", required=True, metavar="DB",
                        help="the database file (.radb)")


def run(args: argparse.Namespace) -> int:
    """Pack the database (the work lives in :mod:`readalign.dbsearch.run`)."""
    from ..dbsearch.run import run_makedb
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile

    return run_makedb(args)
