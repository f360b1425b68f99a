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

from ..errors import InputError
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


def check(args: argparse.Namespace) -> None:
    """Refuse option values and combinations the command cannot honour, in one line."""
    if args.max_distance is not None and args.max_distance < 0:
        raise InputError(f"--max-distance must be >= 0; got {args.max_distance}")
    if args.dense and args.max_distance is None:
        raise InputError("--dense only applies with --max-distance")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be >= 1; got {args.threads}")
    if args.chunk_rows < 0:
        raise InputError(f"--chunk-rows must be >= 0; got {args.chunk_rows}")
    if args.format == "npy" and args.output == "-":
        raise InputError("--format npy needs an output file, not stdout")


def run(args: argparse.Namespace) -> int:
    """Check the options, then compute and write the distances (the work lives in
    :mod:`readalign.words.run`, loaded here so that ``--help`` does not load numba)."""
    check(args)
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile
    from ..words.run import run as write_distances

    return write_distances(args)
