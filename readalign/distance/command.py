"""The work of ``readalign distance`` (its options and help: :mod:`readalign.commands.distance`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time

from ..errors import InputError, ReadalignError
from ..runtime import backends
from ..runtime.outfiles import atomic, check_outputs, is_stream, open_stream, output_error
from ..runtime.progress import Progress
from .cdist import block_function, prepare, result_dtype, row_chunks
from .codes import WordCodes
from .output import DenseNpy, DenseTsv, TriplesNpy, TriplesTsv
from .wordfiles import read_words

log = logging.getLogger("readalign")


def _check(args: argparse.Namespace) -> None:
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


def _writer(path: str, fmt: str, sparse: bool, shape: tuple[int, int], dtype, fh):
    if fmt == "npy":
        return TriplesNpy(path, dtype) if sparse else DenseNpy(path, shape, dtype)
    return TriplesTsv(fh) if sparse else DenseTsv(fh)


@contextlib.contextmanager
def open_output(out: str, fmt: str, sparse: bool, shape: tuple[int, int], dtype):
    """Yield a writer for ``out``; a file appears under its name only if the block succeeds.

    TSV to stdout or to a named pipe or device is written there as it comes; a ``.npy``
    (filled in place) is made under a temporary name and then renamed onto a file or
    copied to a stream (:func:`~readalign.runtime.outfiles.atomic`).
    """
    if fmt == "tsv" and (out == "-" or is_stream(out)):  # written, never replaced
        with contextlib.ExitStack() as stack:
            fh = (sys.stdout.buffer if out == "-"
                  else stack.enter_context(os.fdopen(open_stream(out), "wb")))
            writer = _writer(out, fmt, sparse, shape, dtype, fh)
            yield writer
            writer.close()
        return
    with atomic(out) as tmp, contextlib.ExitStack() as stack:
        fh = stack.enter_context(open(tmp, "wb")) if fmt == "tsv" else None
        writer = _writer(tmp, fmt, sparse, shape, dtype, fh)
        try:
            yield writer
        except BaseException:
            writer.discard()
            raise
        writer.close()


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
    _check(args)
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
