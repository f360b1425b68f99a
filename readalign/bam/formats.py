"""The output's format: as asked (``--output-format``, ``--sam``), else from the file name.

As samtools does, the name decides: ``.bam`` is BAM, ``.sam`` SAM, ``.cram`` CRAM
(written against the ``-r`` reference). A name with none of these endings, a
pipe or device without one, and ``-`` (stdout) get BAM, the stage's format
since its start (a pipe into ``samtools view -`` reads it). An option that
contradicts the name is refused rather than obeyed: ``--sam -o x.bam`` would
leave SAM text under a BAM name. No numba here: the command checks the rule
before anything loads.
"""

from __future__ import annotations

import os

from ..errors import InputError

FORMATS = ("bam", "sam", "cram")
"""The formats ``readalign align`` writes."""
EXTENSIONS = {".bam": "bam", ".sam": "sam", ".cram": "cram"}
"""File name endings (any case) that name a format."""
DEFAULT = "bam"
"""The format of ``-`` (stdout) and of a name without a known ending."""
INDEX = {"bam": ".bai", "cram": ".crai"}
"""The index ``--sort`` writes beside the output, by format (SAM text gets none)."""


def named_format(path: str) -> str | None:
    """The format ``path``'s ending names, or None."""
    if path == "-":
        return None
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def output_format(path: str, asked: str | None, option: str = "--output-format") -> str:
    """The format to write ``path`` in: ``asked`` (by ``option``) if given, else the name's.

    An ``asked`` format that the name contradicts (``x.bam`` asked as SAM) is an
    :class:`~readalign.errors.InputError` in one line.
    """
    if asked is not None and asked not in FORMATS:
        raise InputError(f"{option} must be one of {', '.join(FORMATS)}; got {asked!r}")
    named = named_format(path)
    if asked is None:
        return named or DEFAULT
    if named is not None and named != asked:
        ext = os.path.splitext(path)[1]
        raise InputError(f"{path}: {option} asks for {asked.upper()} but the name ends in "
                         f"{ext} ({named.upper()}); rename the output or drop {option}")
    return asked


def index_suffix(fmt: str, sort: bool) -> str | None:
    """What ``--sort`` adds to the output's name for its index (None: no index)."""
    return INDEX.get(fmt) if sort else None
