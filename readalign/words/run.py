"""The work of ``readalign distance``: read the lists, compute block by block, write
(its options, help and checks: :mod:`readalign.cli.distance`)."""

from __future__ import annotations

import argparse
import logging
import time

from ..errors import ReadalignError
from ..runtime import backends
from ..runtime.outfiles import check_outputs, output_error
from ..runtime.progress import Progress
from .cdist import block_function, prepare, result_dtype, row_chunks
from .codes import WordCodes
from .wordfiles import read_words
from .writers import open_output

log = logging.getLogger("readalign")


def compute(codes: WordCodes, writer, block, *, max_distance: int, sparse: bool, dtype,
            threads: int | None, chunk_rows: int, progress: Progress) -> None:
    """Run every block of query rows through ``block`` and hand it to ``writer``."""
    upper = sparse and codes.same
    progress.start()
    for r0, r1 in row_chunks(len(codes.q), len(codes.c), rows=chunk_rows):
        res = block(codes, r0, r1, upper=upper, max_distance=max_distance, sparse=sparse,
                    dtype=dtype, threads=threads)
        writer.write(res, r0)
        progress.update(r1 - r0)


def run(args: argparse.Namespace) -> int:
    """``readalign distance``: read the lists, compute block by block, write."""
    check_outputs({"-o": args.output}, {"WORDS": args.words, "OTHER": args.other})
    words = read_words(args.words)
    other = read_words(args.other) if args.other is not None else None
    codes = prepare(words, other)
    md = -1 if args.max_distance is None else args.max_distance
    sparse = md >= 0 and not args.dense
    dtype = result_dtype(codes.maxlen, md)
    block = block_function(backends.resolve(args.backend))
    shape = (len(codes.q), len(codes.c))
    log.info("%d x %d words, %s", shape[0], shape[1],
             f"pairs within {md}" if sparse else f"dense {dtype} matrix")
    t0 = time.perf_counter()
    progress = Progress(shape[0], enabled=None if not args.quiet else False)
    try:
        with open_output(args.output, args.format, sparse, shape, dtype) as writer:
            compute(codes, writer, block, max_distance=md, sparse=sparse, dtype=dtype,
                    threads=args.threads or backends.usable_cpus(), chunk_rows=args.chunk_rows,
                    progress=progress)
    except ReadalignError:
        raise
    except OSError as exc:
        raise output_error("stdout" if args.output == "-" else args.output, exc) from None
    finally:
        progress.close()
    secs = time.perf_counter() - t0
    log.info("wrote %s in %.2f s", "to standard output" if args.output == "-" else args.output, secs)
    return 0
