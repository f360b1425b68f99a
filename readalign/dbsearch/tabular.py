"""BLAST's tabular report (``-outfmt 6``): one tab-separated line per hit.

Numbers are written as BLAST's tabular output writes them: ``pident`` with three decimals;
an E-value below 1e-180 as ``0.0``, below 0.0009 in scientific notation with two decimals
(``3.45e-20``), below 0.1 with three decimals, below 1 with two, below 10 with one, and
whole above; a bit score above 99,999 in scientific notation (``1.235e+05``), above 99.9 as
its whole part, else with one decimal in a field of four (``' 7.2'``, with BLAST's
padding space).
"""

from __future__ import annotations

from collections.abc import Iterator

from .columns import BLAST_COLUMNS
from .report import SearchHits


def evalue_text(e: float) -> str:
    """An E-value as BLAST's tabular report writes it."""
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return f"{e:.2e}"
    if e < 0.1:
        return f"{e:.3f}"
    if e < 1.0:
        return f"{e:.2f}"
    if e < 10.0:
        return f"{e:.1f}"
    return f"{e:.0f}"


def bitscore_text(b: float) -> str:
    """A bit score as BLAST's tabular report writes it."""
    if b > 99999:
        return f"{b:5.3e}"
    if b > 99.9:
        return f"{int(b):3d}"
    return f"{b:4.1f}"


def _cells(hits: SearchHits, name: str) -> list[str]:
    col = hits[name]
    if name == "pident":
        return [f"{v:.3f}" for v in col.tolist()]
    if name == "evalue":
        return [evalue_text(v) for v in col.tolist()]
    if name == "bitscore":
        return [bitscore_text(v) for v in col.tolist()]
    return [str(v) for v in col.tolist()]


def lines(hits: SearchHits, columns: tuple[str, ...] = BLAST_COLUMNS) -> Iterator[str]:
    """Every hit's line (with its newline), in the hits' order."""
    cells = [_cells(hits, name) for name in columns]
    for row in zip(*cells, strict=True):
        yield "\t".join(row) + "\n"
