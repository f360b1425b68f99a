"""Align reads to the candidate windows an upstream filter proposed and write a BAM.

Reads (FASTQ/FASTA or SAM text as samtools import writes it, plain or gzip,
or unaligned BAM) and candidates (PAF as minimap2 writes it, a TSV of
read_name/contig/start/end/strand, or SAM/BAM records to re-align) stream
together: candidates must be grouped by read in the order of the reads file.
Each read is written exactly once, as its best alignment (primary) or
unmapped; other alignments become secondary records with --secondary. The
output's format follows its name, as samtools' does (.bam BAM, .sam SAM,
.cram CRAM against the reference; any other name and '-' for stdout: BAM)
unless --output-format (or --sam) says otherwise; an option that
contradicts the name is refused. The output is renamed into place only when
complete; --sort adds a coordinate sort and an index.

Scoring: --preset sr (the default) scores as BWA-MEM does for short reads and
soft-clips read ends where that scores better by more than the clip penalty;
--preset edit aligns the whole read at the least edit distance.
-A/-B/-O/-E/-L/-T override the sr preset's values.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys

from .._version import __version__
from ..bam.defaults import (
    BATCH_BYTES_PER_READ,
    DEFAULT_BATCH,
    DEFAULT_COMPRESSION,
    DEFAULT_PAD,
    ISAL_SHARE,
    WRITERS,
    isal_threads,
)
from ..bam.formats import DEFAULT as DEFAULT_FORMAT
from ..bam.formats import EXTENSIONS, FORMATS
from ..bam.presets import EDIT, PRESETS, SR
from ..io.formats import CANDIDATE_FORMATS, candidate_extensions
from ..runtime.backends import BACKENDS, usable_cpus

NAME = "align"
HELP = "align reads to candidate windows (PAF/TSV/SAM) and write BAM"

log = logging.getLogger("readalign")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``readalign align``."""
    p.add_argument("-r", "--reference", required=True,
                   help="reference FASTA (plain or bgzip; .fai built when missing)")
    p.add_argument("--reads", required=True,
                   help="reads: FASTQ, FASTA or SAM text of unaligned reads (plain or gzip), "
                        "or unaligned BAM; SAM/BAM mates (flags 0x40/0x80) get /1 and /2")
    p.add_argument("-c", "--candidates", required=True,
                   help=f"candidate windows: {candidate_extensions()}, plain or gzip (grouped by "
                        "read, in the order of the reads)")
    p.add_argument("--candidates-format", choices=CANDIDATE_FORMATS, default=None,
                   help="candidate format (default: from the file extension)")
    p.add_argument("-o", "--output", required=True,
                   help=f"output path, '-' for stdout; its name gives the format "
                        f"({', '.join(EXTENSIONS)}; anything else and stdout: "
                        f"{DEFAULT_FORMAT.upper()}) unless --output-format says")
    p.add_argument("--pad", type=int, default=DEFAULT_PAD,
                   help="bases added to each side of a candidate window (clipped to the contig)")
    s = p.add_argument_group(
        "scoring", f"--preset {SR.preset}: BWA-MEM's short-read scores "
        f"({SR.describe().removeprefix(f'--preset {SR.preset} ')}; a gap "
        "of length L costs O + L*E), local with soft clips. --preset edit: "
        "the whole read at the least edit distance; of equal-distance alignments the one "
        "with the fewest gap openings (a 2 bp deletion is 2D, not 1D1M1D; a last-base "
        f"mismatch stays a mismatch). -A/-B/-O/-E/-L apply to {SR.preset}.")
    s.add_argument("--preset", choices=PRESETS, default=SR.preset,
                   help=f"scoring preset (default: {SR.preset})")
    s.add_argument("-A", "--match", type=int, default=None, metavar="INT",
                   help=f"match score (sr: {SR.match})")
    s.add_argument("-B", "--mismatch", type=int, default=None, metavar="INT",
                   help=f"mismatch penalty (sr: {SR.mismatch}); N mismatches everything")
    s.add_argument("-O", "--gap-open", type=int, default=None, metavar="INT",
                   help=f"gap open penalty; a gap of length L costs O + L*E (sr: {SR.gap_open})")
    s.add_argument("-E", "--gap-extend", type=int, default=None, metavar="INT",
                   help=f"gap extension penalty (sr: {SR.gap_extend})")
    s.add_argument("-L", "--clip-penalty", type=int, default=None, metavar="INT",
                   help=f"penalty for soft-clipping a read end (sr: {SR.clip}); a large value "
                        "aligns reads to their ends")
    s.add_argument("-T", "--min-score", type=int, default=None, metavar="INT",
                   help=f"alignments with a lower AS are not written (sr: {SR.min_score}; edit: "
                        f"{'no minimum' if EDIT.min_score is None else EDIT.min_score})")
    p.add_argument("--max-distance", type=int, default=None,
                   help="alignments with more edits (NM) than this count as failed "
                        "(default: no limit)")
    p.add_argument("--secondary", action="store_true",
                   help="write non-best alignments as secondary records (flag 256)")
    p.add_argument("--eqx", action="store_true", help="use =/X CIGAR operations instead of M")
    p.add_argument("--sort", action="store_true",
                   help="coordinate-sort the output and write its index (.bai for BAM, .crai "
                        "for CRAM; SAM text gets none)")
    p.add_argument("--output-format", choices=FORMATS, default=None,
                   help=f"{', '.join(FORMATS)} (CRAM is written against the -r reference; "
                        f"default: from the -o name, {DEFAULT_FORMAT.upper()} for stdout); refused "
                        "when the name says otherwise")
    p.add_argument("--sam", action="store_true", help="write SAM: --output-format sam")
    p.add_argument("--rg", default=None,
                   help=r"read group header fields, e.g. 'ID:run1\tSM:sample1'; records get RG")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for parsing, alignment (CPU), record packing and BAM compression "
                        "(default: the CPUs this process may use, here "
                        f"{usable_cpus()})")
    p.add_argument("--compression-level", type=int, default=None, metavar="N",
                   help=f"BAM (BGZF) compression level 0-9 (default: {DEFAULT_COMPRESSION}, fast, "
                        "for a BAM that goes on to a sort or merge; 6 is samtools' default: about "
                        "7%% smaller, 2x the CPU); 0 stores uncompressed BGZF blocks")
    p.add_argument("--bgzf-writer", choices=WRITERS, default=WRITERS[0],
                   help="what compresses the BAM: readalign's ISA-L writer (about 10x faster "
                        f"than zlib) on 1/{ISAL_SHARE} of --threads, at least 2 (here, with "
                        f"--threads unset, {isal_threads(usable_cpus())} of {usable_cpus()}), or "
                        "htslib's own on "
                        "every thread (zlib in PyPI's pysam, libdeflate in bioconda's); auto: "
                        "isal when the isal package is installed")
    p.add_argument("--backend", choices=BACKENDS, default="auto", help="where the kernel runs")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH,
                   help="reads per batch; peak memory grows with it, not with the input (about "
                        f"{BATCH_BYTES_PER_READ * 100_000 / 1e9:.1f} GB more per 100,000 reads of "
                        "batch); a size whose estimate exceeds the memory available is refused")
    p.add_argument("--summary-json", default=None,
                   help="also write the run summary here (put in place with the output; a "
                        "pipe or device is written to, never replaced)")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept an empty reads file (and candidates file): the output is a BAM "
                        "with the header and no records. Without it an empty file is an error; "
                        "workflows that split their input into chunks, some possibly empty, "
                        "pass it")


def _command_line(scoring: str) -> str:
    """The command as typed, then the scores in effect (the ``@PG`` line's CL)."""
    typed = "readalign " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "readalign align"
    return f"{typed} {scoring}"


def _probe_gpu_meanwhile() -> None:
    """Start the CUDA probe (numba.cuda's import, the driver, the GPU's context) on a thread
    of its own, so that its driver calls, which release the GIL, overlap the pipeline's
    imports; the run's backend choice waits for its answer (``backends.cuda_status``)."""
    import threading

    from ..runtime.backends import cuda_status

    threading.Thread(target=cuda_status, name="readalign-cuda-probe", daemon=True).start()


def run(args: argparse.Namespace) -> int:
    """Build and check the options (:mod:`readalign.bam.options`), run the BAM stage, print the
    summary to stderr."""
    from ..bam.options import Options, asked_format, check, read_scoring

    scoring = read_scoring(args.preset, args.match, args.mismatch, args.gap_open,
                           args.gap_extend, args.clip_penalty, args.min_score)
    opts = Options(
        reference=args.reference, reads=args.reads, candidates=args.candidates,
        output=args.output, candidates_format=args.candidates_format, pad=args.pad,
        max_distance=args.max_distance, secondary=args.secondary, eqx=args.eqx,
        sort=args.sort, output_format=asked_format(args.output, args.output_format, args.sam),
        rg=args.rg, threads=usable_cpus() if args.threads is None else args.threads,
        backend=args.backend, compression_level=args.compression_level,
        bgzf_writer=args.bgzf_writer, batch_size=args.batch_size, allow_empty=args.allow_empty,
        progress=sys.stderr.isatty() and not args.quiet,
        command_line=_command_line(scoring.describe()), version=__version__,
        summary_json=args.summary_json, scoring=scoring,
    )
    check(opts)  # before numba loads
    if opts.backend != "cpu":
        _probe_gpu_meanwhile()
    from ..bam.run import run as run_pipeline
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile

    summary = run_pipeline(opts)
    if not args.quiet:
        sys.stderr.write(f"readalign: {summary.text()}\n")
    return 0
