"""Levenshtein distances between the words of one list (all against all) or of two lists.

WORDS and OTHER are UTF-8 text files with one word per line, compared by
Unicode code point without case folding. A trailing CR (CRLF files) is
removed from each line, a final newline does not add an empty word, and any
other empty line is an empty word. Indices are 0-based line numbers.

Output without --max-distance: the dense matrix, row i holding WORDS[i]
against every word of OTHER (or of WORDS): tab-separated rows for tsv, a 2-D
array for npy (uint8 when every distance fits, else int32). With
--max-distance K: the pairs within K, as "i<TAB>j<TAB>distance" lines (tsv)
or a structured npy array with fields i, j, distance; a single list reports
each unordered pair once (i < j). --dense keeps the dense matrix under a
cut-off, where distances above K are written as K+1.

Rows are computed and written in blocks, so the matrix is never held in
memory. The output is written under a temporary name and renamed when the
run succeeds; -o - writes tsv to stdout.
"""

from __future__ import annotations

import argparse

from ..runtime import backends

NAME = "distance"
HELP = "edit distances between word lists (dense matrix, or pairs within a cut-off)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``readalign distance``."""
    parser.add_argument("words", metavar="WORDS", help="word list, one word per line")
    parser.add_argument("other", metavar="OTHER", nargs="?", default=None,
                        help="second word list (default: WORDS against itself)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="output file ('-': stdout, tsv only)")
    parser.add_argument("--max-distance", type=int, default=None, metavar="K",
                        help="report only pairs within K edits (and abandon the others early)")
    parser.add_argument("--dense", action="store_true",
                        help="with --max-distance: write the dense matrix (K+1 above K)")
    parser.add_argument("--format", choices=("tsv", "npy"), default="tsv", help="output format")
    parser.add_argument("--backend", choices=backends.BACKENDS, default="auto",
                        help="where the distances are computed")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="CPU threads (default: the CPUs this process may use)")
    parser.add_argument("--chunk-rows", type=int, default=0, metavar="N",
                        help="query rows per block (0: about 32M matrix cells per block)")


def run(args: argparse.Namespace) -> int:
    """Compute and write the distances (the work lives in :mod:`readalign.words.command`,
    loaded here so that ``--help`` does not load numba)."""
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile
    from ..words import command

    return command.run(args)
