"""Compile every kernel a run could need into the compile cache, once, and say how long it took.

Run it once where the cache folder is shared (a cluster's nodes, a container
image, a Snakemake workflow before its jobs), so that later processes load the
compiled code instead of each compiling it. The cache folder is
READALIGN_CACHE_DIR when set, else NUMBA_CACHE_DIR, else __pycache__ folders
beside readalign's sources, or a folder of the user's own
($XDG_CACHE_HOME/readalign or ~/.cache/readalign) where the sources are
read-only. Each step's time and the part of it spent compiling go to stdout; a
step already cached only loads its code. Running it again compiles nothing.
"""

from __future__ import annotations

import argparse
import sys

from ..runtime.backends import BACKENDS

NAME = "warmup"
HELP = "compile the kernels into the compile cache once (for clusters and workflows)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``readalign warmup``."""
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="the kernels to compile: cpu, cuda, or auto (the CPU's, and the GPU's "
                        "when there is one)")


def run(args: argparse.Namespace) -> int:
    """Run the warm-up (loaded here so that ``--help`` does not load numba)."""
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile
    from ..runtime.warmup import warm_up

    warm_up(args.backend, sys.stdout)
    return 0
