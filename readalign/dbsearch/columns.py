"""The report's columns and how ``--outfmt`` names them (no numpy: the command's options
read it before anything loads numba)."""

from __future__ import annotations

from ..errors import InputError

BLAST_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
                 "sstart", "send", "evalue", "bitscore")
"""BLAST's tabular columns (``-outfmt 6``, its ``std``), in its order."""
COLUMNS = (*BLAST_COLUMNS, "score", "cigar")
"""Every column ``--outfmt`` may name: BLAST's twelve, the raw score and the CIGAR."""


def parse_columns(text: str) -> tuple[str, ...]:
    """The columns an ``--outfmt`` value names: BLAST's ``6 qseqid sseqid ...`` form, or
    names separated by spaces or commas; ``std`` stands for BLAST's twelve."""
    words = text.replace(",", " ").split()
    if words and words[0] == "6":
        words = words[1:]
    names: list[str] = []
    for word in words or ["std"]:
        if word == "std":
            names.extend(BLAST_COLUMNS)
        elif word in COLUMNS:
            names.append(word)
        else:
            raise InputError(f"--outfmt: unknown column {word!r}; columns: std, "
                             f"{', '.join(COLUMNS)}")
    return tuple(names)
