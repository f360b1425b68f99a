"""Assemble FASTQ records, scanned piece by piece, straight into one batch's flat arrays."""

from __future__ import annotations

import numpy as np

from ._fastq_scan import gather_records


class BatchBuilder:
    """Flat name/SEQ/QUAL arrays of one batch, grown as scanned records are copied in."""

    def __init__(self, cap: int) -> None:
        self.n = 0
        self.name_off = np.zeros(cap + 1, np.int64)
        self.seq_off = np.zeros(cap + 1, np.int64)
        self.names = np.empty(0, np.uint8)
        self.seq = np.empty(0, np.uint8)
        self.qual = np.empty(0, np.uint8)
        self._cap = cap

    def add(self, buf: np.ndarray, lay: np.ndarray) -> None:
        """Copy the records laid out in ``lay`` (rows of 7 spans into ``buf``)."""
        if not lay.shape[0]:
            return
        name_len = int((lay[:, 2] - lay[:, 1]).sum())
        seq_len = int((lay[:, 4] - lay[:, 3]).sum())
        left = self._cap - self.n - lay.shape[0]  # reads still to come, sized like these
        scale = 1.0 + left / lay.shape[0]
        self.names = _room(self.names, int(self.name_off[self.n]), name_len, scale)
        self.seq = _room(self.seq, int(self.seq_off[self.n]), seq_len, scale)
        self.qual = _room(self.qual, int(self.seq_off[self.n]), seq_len, scale)
        gather_records(buf, lay, self.names, self.name_off, self.seq, self.qual, self.seq_off,
                       self.n)
        self.n += lay.shape[0]

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(names, name_off, seq, seq_off, qual), trimmed to the records added."""
        n = self.n
        name_end, seq_end = int(self.name_off[n]), int(self.seq_off[n])
        return (self.names[:name_end], self.name_off[:n + 1], self.seq[:seq_end],
                self.seq_off[:n + 1], self.qual[:seq_end])


def _room(arr: np.ndarray, used: int, more: int, scale: float) -> np.ndarray:
    """``arr`` with room for ``more`` bytes after ``used``; grown to fit ``scale`` x ``more``."""
    if used + more <= arr.shape[0]:
        return arr
    grown = np.empty(max(used + int(more * scale) + 1024, 2 * arr.shape[0]), np.uint8)
    grown[:used] = arr[:used]
    return grown
