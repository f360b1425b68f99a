"""The options of the BAM stage (:class:`Options`) and every check of them, in one place.

The command builds the options from its arguments (:func:`read_scoring` for the
scores, :func:`asked_format` for the output's format) and :func:`check` refuses
what the run cannot honour before anything loads numba; :func:`readalign.bam.run.run`
checks again, for callers that build :class:`Options` themselves. Each error is one
line naming the option.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from ..errors import InputError
from ..runtime.host_memory import available_memory
from ..runtime.outfiles import check_outputs
from .bgzf import compressor
from .defaults import BATCH_BYTES_PER_READ, DEFAULT_BATCH, DEFAULT_PAD
from .formats import index_suffix, output_format
from .presets import EDIT, PRESETS, SR, ReadScoring


@dataclass
class Options:
    """Everything ``readalign align`` needs."""

    reference: str
    reads: str
    candidates: str
    output: str
    candidates_format: str | None = None
    pad: int = DEFAULT_PAD
    max_distance: int | None = None
    secondary: bool = False
    eqx: bool = False
    sort: bool = False
    output_format: str | None = None  # "bam", "sam" or "cram"; None: from the output's name
    rg: str | None = None
    threads: int = 1
    compression_level: int | None = None  # BGZF level 0-9; None: DEFAULT_COMPRESSION
    bgzf_writer: str = "auto"  # one of defaults.WRITERS
    backend: str = "auto"
    batch_size: int = DEFAULT_BATCH
    progress: bool = False
    allow_empty: bool = False  # empty reads/candidates files give a header-only BAM
    command_line: str = "readalign align"
    version: str = ""
    summary_json: str | None = None  # also write the summary here (put in place with the output)
    scoring: ReadScoring = SR  # --preset and -A/-B/-O/-E/-L/-T


def check(opts: Options) -> None:
    """Refuse options the run cannot honour, in one line naming the option."""
    if opts.max_distance is not None and opts.max_distance < 0:
        raise InputError(f"--max-distance must be >= 0, got {opts.max_distance}")
    if opts.threads < 1:
        raise InputError(f"--threads must be >= 1, got {opts.threads}")
    fmt = output_format(opts.output, opts.output_format)
    if opts.output == "-" and sys.stdout.isatty() and fmt != "sam":
        raise InputError(f"refusing to write {fmt.upper()} to a terminal; use -o FILE or a pipe")
    if opts.pad < 0:
        raise InputError(f"--pad must be >= 0, got {opts.pad}")
    if opts.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {opts.batch_size}")
    check_batch_memory(opts.batch_size)
    if opts.compression_level is not None and not 0 <= opts.compression_level <= 9:
        raise InputError(f"--compression-level must be 0-9, got {opts.compression_level}")
    try:
        compressor(opts.bgzf_writer)
    except ValueError as exc:
        raise InputError(f"--bgzf-writer: {exc}") from None
    check_files(opts, fmt)


def check_files(opts: Options, fmt: str) -> None:
    """Refuse outputs that would overwrite an input or cannot be written
    (:func:`~readalign.runtime.outfiles.check_outputs`); ``fmt`` is the output's format."""
    ref, suffix = opts.reference, index_suffix(fmt, opts.sort)
    index = opts.output + suffix if suffix and opts.output != "-" else None
    check_outputs({"-o": opts.output, "the index (--sort)": index, "--summary-json": opts.summary_json},
                  {"reads": opts.reads, "candidates": opts.candidates, "reference": ref,
                   "reference index": ref + ".fai", "reference .gzi": ref + ".gzi"})


def check_batch_memory(batch_size: int) -> None:
    """Refuse a batch size whose estimate (:data:`~.defaults.BATCH_BYTES_PER_READ` a read)
    exceeds the memory available, before the first batch is allocated."""
    room = available_memory()
    need = batch_size * BATCH_BYTES_PER_READ
    if room is not None and need > room:
        raise InputError(f"--batch-size {batch_size:,}: a batch needs about {need / 1e9:,.1f} GB "
                         f"of memory ({BATCH_BYTES_PER_READ:,} bytes a read), more than the "
                         f"{room / 1e9:,.1f} GB available; at most "
                         f"{room // BATCH_BYTES_PER_READ:,} reads a batch here")


def asked_format(output: str, asked: str | None, sam: bool) -> str:
    """The output's format from ``--output-format`` (``asked``), ``--sam`` (``--output-format
    sam``) and the name (:func:`~.formats.output_format`)."""
    if sam and asked not in (None, "sam"):
        raise InputError(f"--sam and --output-format {asked} contradict each other")
    if sam:
        return output_format(output, "sam", "--sam")
    return output_format(output, asked)


def read_scoring(preset: str, match: int | None = None, mismatch: int | None = None,
                 gap_open: int | None = None, gap_extend: int | None = None,
                 clip: int | None = None, min_score: int | None = None) -> ReadScoring:
    """The preset with the values given on the command line in place of its own.

    Scores apply to ``sr`` only (``edit`` has unit costs); each must be a whole number from
    0 to :data:`readalign.engine.scoring.MAX_SCORE` (the int32 bound :class:`readalign.Scoring`
    keeps), and an error names the option.
    """
    if preset not in PRESETS:
        raise InputError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    from ..engine.scoring import MAX_SCORE

    given = {"-A": match, "-B": mismatch, "-O": gap_open, "-E": gap_extend, "-L": clip}
    if preset == "edit":
        named = [k for k, v in given.items() if v is not None]
        if named:
            raise InputError(f"{', '.join(named)} set scores, which --preset edit does not use "
                             "(unit edit costs); use them with --preset sr")
        return EDIT if min_score is None else replace(EDIT, min_score=min_score)
    for option, value in given.items():
        if value is not None and not 0 <= value <= MAX_SCORE:
            raise InputError(f"{option} must be between 0 and {MAX_SCORE}; got {value}")
    fields = ("match", "mismatch", "gap_open", "gap_extend", "clip")
    rs = replace(SR, **{f: v for f, v in zip(fields, given.values(), strict=True) if v is not None})
    if min_score is not None:
        rs = replace(rs, min_score=min_score)
    if rs.match < 1:
        raise InputError(f"-A: the match score must be >= 1 for local alignment; got {rs.match}")
    if rs.gap_open + rs.gap_extend < 1:
        raise InputError("-O/-E: a gap must cost something (gap open + extend >= 1)")
    return rs
