"""The input formats readalign reads, by name and by file extension.

No numpy here: the command's ``--help`` lists these without loading the readers.
"""

READ_FORMATS = ("fastq", "fasta", "sam", "bam")
"""Reads formats, told apart by the file's content (:func:`readalign.io.reads.reads_format`)."""
CANDIDATE_FORMATS = ("paf", "tsv", "sam", "bam")
"""Candidate formats (``--candidates-format``)."""
CANDIDATE_EXTENSIONS = {"paf": "paf", "tsv": "tsv", "txt": "tsv", "tab": "tsv", "sam": "sam",
                        "bam": "bam"}
"""Candidate formats by file extension (after an optional ``.gz``): the one rule, which the
workflow's scatter step and its chunk names use too."""


def candidate_extensions() -> str:
    """The extensions of each candidate format, for help texts: ``.paf, .tsv/.txt/.tab, ...``."""
    return ", ".join("/".join(f".{ext}" for ext, fmt in CANDIDATE_EXTENSIONS.items() if fmt == name)
                     for name in CANDIDATE_FORMATS)
