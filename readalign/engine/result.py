"""The result of aligning a batch: arrays first, strings on request."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cigar_text import CIGAR_CHARS, cigar_strings


def cigar_string(ops: np.ndarray) -> str:
    """BAM-coded uint32 operations (``len << 4 | op``) as a CIGAR string."""
    return "".join(f"{int(o) >> 4}{CIGAR_CHARS[int(o) & 15]}" for o in ops)


@dataclass(frozen=True)
class AlignResult:
    """Per-pair alignment results, in input order.

    ``distance`` is -1 where no alignment lies within ``max_distance``;
    ``ref_start``/``ref_end`` give the aligned window span (0-based,
    end exclusive; -1 when unaligned or not computed). CIGARs are stored
    BAM-style in ``cigar_ops``, pair ``i`` owning
    ``cigar_ops[cigar_offsets[i]:cigar_offsets[i+1]]``.
    """

    distance: np.ndarray
    ref_start: np.ndarray
    ref_end: np.ndarray
    cigar_ops: np.ndarray
    cigar_offsets: np.ndarray
    mode: str
    backend: str
    scores: np.ndarray | None = None  # scored alignment; None: unit edit costs
    read_spans: tuple[np.ndarray, np.ndarray] | None = None
    read_lengths: np.ndarray | None = None

    @property
    def score(self) -> np.ndarray:
        """The optimal score (int32); with unit edit costs, minus the distance.

        A pair without an alignment (past ``max_distance``) scores the int32 minimum.
        """
        if self.scores is not None:
            return self.scores
        return np.where(self.distance >= 0, -self.distance.astype(np.int64),
                        np.iinfo(np.int32).min).astype(np.int32)

    @property
    def query_start(self) -> np.ndarray:
        """First aligned read base (0 unless local mode clips the read; -1 when unaligned)."""
        if self.read_spans is not None:
            return self.read_spans[0]
        return np.where(self.distance >= 0, 0, -1).astype(np.int64)

    @property
    def query_end(self) -> np.ndarray:
        """One past the last aligned read base (the read's length unless clipped; -1 when unaligned)."""
        if self.read_spans is not None:
            return self.read_spans[1]
        return np.where(self.distance >= 0, self.read_lengths, -1).astype(np.int64)

    def __len__(self) -> int:
        return self.distance.shape[0]

    def cigar_array(self, i: int) -> np.ndarray:
        """Pair ``i``'s CIGAR as BAM-coded uint32 operations."""
        return self.cigar_ops[self.cigar_offsets[i]:self.cigar_offsets[i + 1]]

    def cigar(self, i: int) -> str:
        """Pair ``i``'s CIGAR as a string such as ``"10M1I5M"`` ("" when unaligned)."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"pair index {i} out of range for {len(self)} pairs")
        return cigar_string(self.cigar_array(i % len(self)))

    def cigars(self) -> list[str]:
        """Every pair's CIGAR string, in input order (written in one compiled pass)."""
        return cigar_strings(self.cigar_ops, self.cigar_offsets)
