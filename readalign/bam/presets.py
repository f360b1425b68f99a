"""How ``readalign align`` scores a read against its candidate windows: the presets and ``-A/-B/-O/-E/-L/-T``.

* ``sr`` (the default): the short-read scores of BWA-MEM (match 1, mismatch 4, a
  gap of length L costs 6 + L, clip penalty 5, minimum score 30), aligned
  locally: a read end is soft clipped only when clipping scores better than
  aligning to the end by more than the clip penalty, and the alignment is the
  exact optimum of that rule (``readalign.Scoring(clip_penalty=...)``).
* ``edit``: the read end to end at the least edit distance (unit costs, as
  readalign did before it scored). Among alignments of equal distance the
  fewest gap openings win: a 2 bp deletion is one ``2D``, not two ``1D`` pieces,
  and a mismatch on the read's last base stays a mismatch rather than a
  one-base insertion. It runs on the scored kernel with a mismatch and a gap
  base costing W and a gap opening 1, where W exceeds any read's length, so the
  optimum is the least distance first, then the fewest openings.

Each preset is a :class:`ReadScoring`; ``-A/-B/-O/-E/-L/-T`` override the ``sr``
values as BWA and minimap2 name them (:func:`readalign.bam.options.read_scoring`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from ..engine.job import Job, Scores

PRESETS = ("sr", "edit")
MAPQ_MAX = 60
MAPQ_PER_UNIT = 10
"""MAPQ per score unit between the best and the second-best candidate (a unit is one
mismatch's worth: match + mismatch in ``sr``, one edit in ``edit``)."""
EDIT_LIMIT = 1 << 27
"""Bound on W x (read + window length) in the edit preset: the int32 cells stay far from
the kernel's minus infinity."""


@dataclass(frozen=True)
class ReadScoring:
    """The scores of the BAM stage: a preset with its values (``-A/-B/-O/-E/-L/-T``)."""

    preset: str
    match: int = 1
    mismatch: int = 4
    gap_open: int = 6
    gap_extend: int = 1
    clip: int = 5
    min_score: int | None = 30  # -T: alignments scoring less are not alignments

    @property
    def scored(self) -> bool:
        """True for the affine, locally clipped scores (``sr``); False for edit distance."""
        return self.preset != "edit"

    @property
    def mapq_unit(self) -> int:
        """Score difference worth one mismatch (:data:`MAPQ_PER_UNIT` MAPQ)."""
        return self.match + self.mismatch if self.scored else 1

    def describe(self) -> str:
        """The scores as options, for the log, the summary and the ``@PG`` line."""
        text = f"--preset {self.preset}"
        if self.scored:
            text += (f" -A {self.match} -B {self.mismatch} -O {self.gap_open} "
                     f"-E {self.gap_extend} -L {self.clip}")
        return text if self.min_score is None else f"{text} -T {self.min_score}"

    def job(self, eqx: bool, k: int, read_lengths: np.ndarray,
            window_lengths: np.ndarray) -> Job:
        """The engine job for one batch (the edit preset's W depends on its longest read)."""
        from ..engine.job import Job
        from ..engine.packing import N_CODE
        from ..engine.scoring import Scoring
        from ..kernels.scored_quadrant import LOCAL

        if self.scored:
            scores = Scoring(self.match, self.mismatch, self.gap_open, self.gap_extend,
                             clip_penalty=self.clip).scores(LOCAL)
        else:
            scores = edit_scores(read_lengths, window_lengths)
        return Job(infix=not self.scored, max_distance=-1, n_code=N_CODE, eqx=eqx,
                   with_cigar=True, k=k, scores=scores)


def edit_scores(read_lengths: np.ndarray, window_lengths: np.ndarray) -> Scores:
    """Least edits first, then fewest gap openings: mismatch and gap base W, opening 1."""
    import numpy as np

    from ..engine.job import Scores
    from ..kernels.scored_quadrant import INFIX, NEG

    m = int(read_lengths.max(initial=0))
    n = int(window_lengths.max(initial=0))
    w = m + 1  # more than the gap openings of any alignment of at most m edits
    if w * (m + n + 2) >= min(EDIT_LIMIT, -NEG):
        raise InputError(f"--preset edit aligns reads up to about {int((EDIT_LIMIT / 2) ** 0.5):,} "
                         f"bases; this batch has a {m:,}-base read (use --preset sr)")
    sub = np.full((5, 5), -w, np.int32)
    np.fill_diagonal(sub[:4, :4], 0)
    return Scores(INFIX, sub.ravel(), 5, 1, w)


SR = ReadScoring("sr")
EDIT = ReadScoring("edit", 0, 1, 0, 1, 0, None)
