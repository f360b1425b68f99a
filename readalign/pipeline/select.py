"""Best-of-read selection and MAPQ.

For each read, among its candidates aligned within ``max_distance``:

* duplicates (same contig, strand and alignment start) count once: the first is kept;
* the primary is the lowest edit distance; ties go to the candidate that
  comes first in the candidate file;
* MAPQ = min(60, 10 * (d2 - d1)) where d1 is the primary's distance and d2 the
  second best; 0 when tied, 60 when there is no second candidate.

An alignment that consumes no reference base (all insertions) is not an
alignment: it is treated as if the candidate failed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..engine.result import AlignResult
from .pairs import Pairs

MAPQ_MAX = 60
MAPQ_PER_EDIT = 10


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
def _validate(p, q, valid, dist, ref_start, ref_end, contig, strand, win_start):
    """Mark pairs ``p:q`` (one read) valid: aligned, with a reference span, not a duplicate."""
    for x in range(p, q):
        if dist[x] < 0 or ref_end[x] <= ref_start[x]:
            continue
        dup = False
        pos = win_start[x] + ref_start[x]
        for y in range(p, x):
            if valid[y] and contig[y] == contig[x] and strand[y] == strand[x] \
                    and win_start[y] + ref_start[y] == pos:
                dup = True
                break
        valid[x] = not dup


@njit(cache=True, nogil=True, parallel=True)
def select_best(nreads, read, dist, ref_start, ref_end, contig, strand, win_start):
    """Return (valid per pair, best pair per read or -1, second-best distance or -1, MAPQ).

    Reads are independent: they are processed in parallel.
    """
    npairs = read.shape[0]
    lo, hi = read_bounds(nreads, read)
    valid = np.zeros(npairs, np.bool_)
    best = np.full(nreads, -1, np.int64)
    second = np.full(nreads, -1, np.int32)
    mapq = np.zeros(nreads, np.uint8)
    for r in prange(nreads):
        p = lo[r]
        q = hi[r]
        _validate(p, q, valid, dist, ref_start, ref_end, contig, strand, win_start)
        b = -1
        for x in range(p, q):
            if valid[x] and (b < 0 or dist[x] < dist[b]):
                b = x
        if b < 0:
            continue
        d2 = -1
        for x in range(p, q):
            if valid[x] and x != b and (d2 < 0 or dist[x] < d2):
                d2 = dist[x]
        best[r] = b
        second[r] = d2
        if d2 < 0:
            mapq[r] = MAPQ_MAX
        else:
            mapq[r] = min(MAPQ_MAX, MAPQ_PER_EDIT * (d2 - dist[b]))
    return valid, best, second, mapq


class Selection(NamedTuple):
    """The choice for each read of a batch, and where its pairs lie."""

    valid: np.ndarray  # bool per pair: aligned, and not a duplicate of an earlier candidate
    best: np.ndarray  # int64 per read: its primary pair, -1 when unaligned
    second: np.ndarray  # int32 per read: the second-best distance, -1 when none
    mapq: np.ndarray  # uint8 per read
    lo: np.ndarray  # int64 per read: its first pair
    hi: np.ndarray  # int64 per read: one past its last pair


def choose(nreads: int, pairs: Pairs, res: AlignResult) -> Selection:
    """Primary, second best and MAPQ of every read of a batch."""
    valid, best, second, mapq = select_best(nreads, pairs.read, res.distance, res.ref_start,
                                            res.ref_end, pairs.contig, pairs.strand,
                                            pairs.win_start)
    lo, hi = read_bounds(nreads, pairs.read)
    return Selection(valid, best, second, mapq, lo, hi)
