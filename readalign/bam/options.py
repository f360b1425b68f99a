"""The options of the BAM stage (:class:`Options`) and their checks (:func:`check`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..runtime.host_memory import available_memory
from .bgzf import compressor
from .defaults import BATCH_BYTES_PER_READ, DEFAULT_BATCH, DEFAULT_PAD
from .presets import SR, ReadScoring


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
    bgzf_writer: str = "auto"  # "auto", "isal" or "htslib" (bam.bgzf.WRITERS)
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
