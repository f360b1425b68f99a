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

import numpy as np
from numba import njit

MAPQ_MAX = 60
MAPQ_PER_EDIT = 10


@njit(cache=True, nogil=True)
def select_best(nreads, read, dist, ref_start, ref_end, contig, strand, win_start):
    """Return (valid per pair, best pair per read or -1, second-best distance or -1, MAPQ)."""
    npairs = read.shape[0]
    valid = np.zeros(npairs, np.bool_)
    best = np.full(nreads, -1, np.int64)
    second = np.full(nreads, -1, np.int32)
    mapq = np.zeros(nreads, np.uint8)
    p = 0
    while p < npairs:
        r = read[p]
        q = p
        while q < npairs and read[q] == r:
            q += 1
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
        b = -1
        for x in range(p, q):
            if valid[x] and (b < 0 or dist[x] < dist[b]):
                b = x
        if b >= 0:
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
        p = q
    return valid, best, second, mapq
