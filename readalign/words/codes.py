"""Two word lists packed as shared int32 codes: what every word-list backend takes."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.packing import Packed


@dataclass(frozen=True)
class WordCodes:
    """Two packed lists as int32 codes below ``alphabet``; ``same``: choices are the queries."""

    q: Packed
    c: Packed
    alphabet: int
    maxlen: int
    same: bool
