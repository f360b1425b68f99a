"""A GPU batch's CIGAR runs, written chunk by chunk where the call returns them.

The pipeline collects its chunks in batch order. Each chunk's runs go straight after
the previous chunk's, and each pair's offset is its chunk's start plus its place in the
chunk, so a batch that is a whole call in input order returns these arrays as they are:
no pass over every run after the GPU's last kernel.
"""

from __future__ import annotations

import numpy as np

from ...runtime import host_copy

HEADROOM = 4
"""On growth, room for the runs so far projected over the batch and a ``1/HEADROOM`` more."""


class RunStore:
    """CIGAR runs of ``count`` pairs end to end in batch order, and every pair's offset."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.offsets = np.empty(count + 1, np.int64)
        self.offsets[0] = 0
        self.runs = np.empty(0, np.uint32)
        self.used = 0

    def space(self, hi: int, total: int) -> tuple[np.ndarray, int]:
        """Room for the next chunk's ``total`` runs (its last pair is ``hi - 1``): the buffer
        and where they start.

        The buffer grows to the runs so far, projected over the batch, plus a margin, or
        to twice its size: one growth (a copy of the runs so far) for batches whose chunks
        are alike. Pages past what is written are never touched.
        """
        need = self.used + total
        if need > self.runs.shape[0]:
            guess = need * self.count // max(hi, 1)
            grown = np.empty(max(need, guess + guess // HEADROOM, 2 * self.runs.shape[0]),
                             np.uint32)
            host_copy.copy_into(grown, 0, self.runs[:self.used])
            self.runs = grown
        base = self.used
        self.used = need
        return self.runs, base

    def pieces(self) -> list:
        """The batch's runs as ``BatchResult.ops`` holds them: one piece of every pair."""
        return [(0, self.count, self.runs[:self.used])]
