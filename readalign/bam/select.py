"""Best-of-read selection and MAPQ.

For each read, among its candidates that aligned (at least one reference base),
score at least the minimum (``-T``) and have at most ``--max-distance`` edits:

* duplicates (same contig, strand and alignment start) count once: the first is kept;
* the primary has the highest score (in ``sr`` the score less the clip
  penalties, which is what the kernel maximises; in ``edit`` minus the edit
  distance); ties go to the candidate that comes first in the candidate file;
* MAPQ = min(60, 10 * (s1 - s2) // unit), where s1 and s2 are the best and the
  second-best score and a unit is one mismatch's worth (match + mismatch in
  ``sr``, one edit in ``edit``); 0 when tied, 60 when there is no second
  candidate; then never more than the upstream mapper's MAPQ for the read (the
  highest its candidates carry, PAF column 12 or SAM MAPQ; 255 means none): a
  single candidate is no evidence that the locus is unique when the mapper
  itself was unsure.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..engine.result import AlignResult
from ..io._cand_lines import NO_MAPQ
from ..kernels.loops import parallel_loop
from .pairs import Pairs
from .presets import MAPQ_MAX, MAPQ_PER_UNIT, ReadScoring

NO_SCORE = -(1 << 62)
"""The minimum score when none is set."""


@njit(cache=True, nogil=True)
def read_bounds(nreads, read):
    """Pairs of read r are ``lo[r]:hi[r]`` (``read`` is non-decreasing)."""
    lo = np.zeros(nreads, np.int64)
    hi = np.zeros(nreads, np.int64)
    p = 0
    npairs = read.shape[0]
    while p < npairs:
        r = read[p]
        q = p
        while q < npairs and read[q] == r:
            q += 1
        lo[r] = p
        hi[r] = q
        p = q
    return lo, hi


@njit(cache=True, nogil=True)
def _validate(p, q, valid, dist, alscore, ref_start, ref_end, contig, strand, win_start,
              min_score, max_dist):
    """Mark pairs ``p:q`` (one read) valid: aligned, good enough, not a duplicate."""
    for x in range(p, q):
        if dist[x] < 0 or ref_end[x] <= ref_start[x] or alscore[x] < min_score \
                or (max_dist >= 0 and dist[x] > max_dist):
            continue
        dup = False
        pos = win_start[x] + ref_start[x]
        for y in range(p, x):
            if valid[y] and contig[y] == contig[x] and strand[y] == strand[x] \
                    and win_start[y] + ref_start[y] == pos:
                dup = True
                break
        valid[x] = not dup


@njit(cache=True, nogil=True)
def _mapq(s1, s2, has_second, unit, upstream):
    """MAPQ from the score gap to the second best, capped by the upstream mapper's."""
    q = MAPQ_MAX
    if has_second:
        q = min(MAPQ_MAX, MAPQ_PER_UNIT * (s1 - s2) // unit)
    if upstream != NO_MAPQ:
        q = min(q, upstream)
    return q


@parallel_loop(size=0)
def select_best(nreads, read, score, alscore, dist, ref_start, ref_end, contig, strand,
                win_start, upstream, min_score, max_dist, unit):
    """Return (valid per pair, best pair per read or -1, second-best pair or -1, MAPQ).

    ``score`` ranks candidates; ``alscore`` (BAM's AS) must reach ``min_score``.
    Reads are independent: they are processed in parallel.
    """
    npairs = read.shape[0]
    lo, hi = read_bounds(nreads, read)
    valid = np.zeros(npairs, np.bool_)
    best = np.full(nreads, -1, np.int64)
    second = np.full(nreads, -1, np.int64)
    mapq = np.zeros(nreads, np.uint8)
    for r in prange(nreads):
        p = lo[r]
        q = hi[r]
        _validate(p, q, valid, dist, alscore, ref_start, ref_end, contig, strand, win_start,
                  min_score, max_dist)
        b = -1
        cap = NO_MAPQ
        for x in range(p, q):
            if upstream[x] != NO_MAPQ:
                cap = upstream[x] if cap == NO_MAPQ else max(cap, upstream[x])
            if valid[x] and (b < 0 or score[x] > score[b]):
                b = x
        if b < 0:
            continue
        s2 = -1
        for x in range(p, q):
            if valid[x] and x != b and (s2 < 0 or score[x] > score[s2]):
                s2 = x
        best[r] = b
        second[r] = s2
        mapq[r] = _mapq(np.int64(score[b]), np.int64(score[max(s2, 0)]), s2 >= 0, unit, cap)
    return valid, best, second, mapq


class Selection(NamedTuple):
    """The choice for each read of a batch, and where its pairs lie."""

    valid: np.ndarray  # bool per pair: aligned, good enough, not a duplicate of an earlier one
    best: np.ndarray  # int64 per read: its primary pair, -1 when unaligned
    second: np.ndarray  # int64 per read: its second-best pair (XS), -1 when none
    mapq: np.ndarray  # uint8 per read
    lo: np.ndarray  # int64 per read: its first pair
    hi: np.ndarray  # int64 per read: one past its last pair
    alscore: np.ndarray  # int64 per pair: BAM's AS


def alignment_scores(res: AlignResult, scoring: ReadScoring) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's rank score and its AS: the aligned part's score (``sr``, clip penalties
    added back, as BWA reports it) or minus the edit distance (``edit``)."""
    if not scoring.scored:
        minus = -res.distance.astype(np.int64)
        return minus, minus
    score = res.score.astype(np.int64)
    clipped = (res.query_start > 0).astype(np.int64) + (res.query_end < res.read_lengths)
    return score, score + scoring.clip * clipped


def choose(nreads: int, pairs: Pairs, res: AlignResult, scoring: ReadScoring,
           max_distance: int | None) -> Selection:
    """Primary, second best and MAPQ of every read of a batch."""
    score, alscore = alignment_scores(res, scoring)
    min_score = NO_SCORE if scoring.min_score is None else scoring.min_score
    valid, best, second, mapq = select_best(
        nreads, pairs.read, score, alscore, res.distance, res.ref_start, res.ref_end,
        pairs.contig, pairs.strand, pairs.win_start, pairs.upstream_mapq, min_score,
        -1 if max_distance is None else max_distance, scoring.mapq_unit)
    lo, hi = read_bounds(nreads, pairs.read)
    return Selection(valid, best, second, mapq, lo, hi, alscore)
