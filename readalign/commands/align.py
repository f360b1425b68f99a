"""Align reads to the candidate windows an upstream filter proposed and write a BAM.

Reads (FASTQ/FASTA, plain or gzip, or unaligned BAM) and candidates (PAF as
minimap2 writes it, a TSV of read_name/contig/start/end/strand, or SAM/BAM
records to re-align) stream together: candidates must be grouped by read in
the order of the reads file. Each read is written exactly once, as its best
alignment (primary) or unmapped; other alignments become secondary records
with --secondary. Output is BAM (SAM with --sam), renamed into place only
when complete; --sort adds a coordinate sort and an index.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys

from .._version import __version__
from ..errors import InputError
from ..pipeline.pairs import DEFAULT_BATCH, DEFAULT_PAD
from ..pipeline.stage import Options
from ..pipeline.stage import run as run_pipeline
from ..runtime.backends import BACKENDS, usable_cpus
from ..runtime.outfiles import check_outputs

NAME = "align"
HELP = "align reads to candidate windows (PAF/TSV/SAM) and write BAM"

log = logging.getLogger("readalign")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``readalign align``."""
    p.add_argument("-r", "--reference", required=True,
                   help="reference FASTA (plain or bgzip; .fai built when missing)")
    p.add_argument("--reads", required=True,
                   help="reads: FASTQ or FASTA (plain or gzip) or unaligned BAM")
    p.add_argument("-c", "--candidates", required=True,
                   help="candidate windows: .paf, .tsv, .sam or .bam (grouped by read, "
                        "in the order of the reads)")
    p.add_argument("--candidates-format", choices=("paf", "tsv", "sam", "bam"), default=None,
                   help="candidate format (default: from the file extension)")
    p.add_argument("-o", "--output", required=True, help="output BAM/SAM path, '-' for stdout")
    p.add_argument("--pad", type=int, default=DEFAULT_PAD,
                   help="bases added to each side of a candidate window (clipped to the contig)")
    p.add_argument("--max-distance", type=int, default=None,
                   help="alignments with more edits than this count as failed (default: no limit)")
    p.add_argument("--secondary", action="store_true",
                   help="write non-best alignments as secondary records (flag 256)")
    p.add_argument("--eqx", action="store_true", help="use =/X CIGAR operations instead of M")
    p.add_argument("--sort", action="store_true",
                   help="coordinate-sort the output and write its index (.bai)")
    p.add_argument("--sam", action="store_true", help="write SAM instead of BAM")
    p.add_argument("--rg", default=None,
                   help=r"read group header fields, e.g. 'ID:run1\tSM:sample1'; records get RG")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for parsing, alignment (CPU), record packing and BAM compression "
                        "(default: the CPUs this process may use, here "
                        f"{usable_cpus()})")
    p.add_argument("--compression-level", type=int, default=None, metavar="N",
                   help="BAM (BGZF) compression level 0-9 (default: 1, fast, for a BAM that "
                        "goes on to a sort or merge; 6 is samtools' default: about 7%% smaller, "
                        "2x the CPU); 0 stores uncompressed BGZF blocks")
    p.add_argument("--backend", choices=BACKENDS, default="auto", help="where the kernel runs")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH,
                   help="reads per batch; peak memory grows with it, not with the input (about "
                        "0.54 GB more per 100,000 reads of batch)")
    p.add_argument("--summary-json", default=None,
                   help="also write the run summary here (put in place with the output)")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept an empty reads file (and candidates file): the output is a BAM "
                        "with the header and no records. Without it an empty file is an error; "
                        "workflows that split their input into chunks, some possibly empty, "
                        "pass it")


def run(args: argparse.Namespace) -> int:
    """Run the pipeline; print the summary to stderr."""
    if args.max_distance is not None and args.max_distance < 0:
        raise InputError(f"--max-distance must be >= 0, got {args.max_distance}")
    threads = usable_cpus() if args.threads is None else args.threads
    if threads < 1:
        raise InputError(f"--threads must be >= 1, got {threads}")
    if args.output == "-" and sys.stdout.isatty() and not args.sam:
        raise InputError("refusing to write BAM to a terminal; use -o FILE or a pipe")
    ref = args.reference
    check_outputs({"-o": args.output, "the index (--sort)": args.output + ".bai" if args.sort and
                   args.output != "-" else None, "--summary-json": args.summary_json},
                  {"reads": args.reads, "candidates": args.candidates, "reference": ref,
                   "reference index": ref + ".fai", "reference .gzi": ref + ".gzi"})
    opts = Options(
        reference=args.reference, reads=args.reads, candidates=args.candidates,
        output=args.output, candidates_format=args.candidates_format, pad=args.pad,
        max_distance=args.max_distance, secondary=args.secondary, eqx=args.eqx,
        sort=args.sort, sam=args.sam, rg=args.rg, threads=threads, backend=args.backend,
        compression_level=args.compression_level,
        batch_size=args.batch_size, allow_empty=args.allow_empty,
        progress=sys.stderr.isatty() and not args.quiet,
        command_line="readalign " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "readalign align",
        version=__version__, summary_json=args.summary_json,
    )
    summary = run_pipeline(opts)
    if not args.quiet:
        sys.stderr.write(f"readalign: {summary.text()}\n")
    return 0
