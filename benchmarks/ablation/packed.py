"""Edit distance of two pairs at once, 16 bits per cell: the packed forward pass.

The same strip sweep as :mod:`readalign.kernels.quadrant`'s distance-only forward pass, over words that hold
one cell of each of two pairs of equal shape (read length and window length): the first pair
in the low half, the second in the high half (:mod:`.unsigned_lanes`). Per two cells the inner loop
is an XOR of the codes, a per-half "not equal", a subtract-add, a three-way per-half minimum
and an add: with Hopper's 16x2 min instructions, five instructions for two cells where the
32-bit pass spends about five on one.

The strip keeps ``w = D + 1`` rather than ``D``: ``w`` is at once the "above + 1" of the next
row and the "left + 1" of the next column, and the diagonal term ``D[i-1][j-1] + cost`` is
``w_left_of_above + cost - 1``.

Written once, like :mod:`readalign.kernels.quadrant`: :func:`build` takes the decorator that compiles a device
function, the warp-vote helper, the lane operations and ``K``. Results equal the 32-bit pass's
distance and end column (leftmost minimum of the last row in infix mode); boundaries are not
kept, so this pass serves distance-only jobs.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from readalign.kernels.disk_cache import named_for
from readalign.kernels.lanes16 import ONE2

READ_N = np.uint32(0x100)
"""A read's ``n_code`` in its half: codes are bytes, so no window code equals it."""

_LOW = np.uint32(0xFFFF)


def build(device_jit, vote_all, ops, K: int) -> SimpleNamespace:
    """Compile the packed distance-only forward pass for quadrant size ``K`` with ``ops``.

    ``ops`` is one of :mod:`.unsigned_lanes`' lane-operation sets. Returns a namespace with
    ``forward2`` (two pairs) and ``thread2`` (what one thread of the pass does: both backends
    call it).
    """
    min3 = ops.min3
    min2 = ops.min2
    ne2 = ops.ne2
    tag = f"k{K}_{ops.name}"

    def make_sweep(partial: bool):
        """One strip over every window column; returns the packed bottom row's minima and,
        per half, the leftmost minimum of the bottom row and its column. The row above
        and the window letters of column j+1 are loaded while column j is computed."""
        def sweep2(t, ta, tb, n, i0, h, row, strip, qk):
            diag = np.uint32(row[0])
            left0 = np.uint32((i0 + h) * ONE2)
            row[0] = left0
            rowmin = left0
            best_a = np.int32(i0 + h)
            best_b = np.int32(i0 + h)
            end_a = 0
            end_b = 0
            nextTop = np.uint32(row[min(1, n)])
            nextT = np.uint32(0)
            if n > 0:
                nextT = np.uint32(np.uint32(t[ta]) | np.uint32(np.uint32(t[tb]) << 16))
            for j in range(1, n + 1):
                tj = nextT
                top = nextTop
                ahead = min(j + 1, n)  # the next column's loads, issued a column early
                nextTop = np.uint32(row[ahead])
                nextT = np.uint32(np.uint32(t[ta + ahead - 1])
                                  | np.uint32(np.uint32(t[tb + ahead - 1]) << 16))
                above = np.uint32(top + ONE2)
                pd = diag
                bottom = top
                for r in range(K):
                    left = strip[r]
                    v = min3(np.uint32(pd + ne2(np.uint32(qk[r] ^ tj))), above, left)
                    pd = np.uint32(left - ONE2)
                    above = np.uint32(v + ONE2)
                    strip[r] = above
                    if partial and r == h - 1:
                        bottom = v
                if not partial:
                    bottom = np.uint32(above - ONE2)
                diag = top
                row[j] = bottom
                rowmin = min2(rowmin, bottom)
                lo = np.int32(bottom & _LOW)
                hi = np.int32(bottom >> 16)
                if lo < best_a:
                    best_a = lo
                    end_a = j
                if hi < best_b:
                    best_b = hi
                    end_b = j
            return rowmin, best_a, end_a, best_b, end_b

        kind = "partial" if partial else "full"
        return device_jit(named_for(sweep2, f"{tag}_{kind}"))

    sweep_full = make_sweep(False)
    sweep_partial = make_sweep(True)

    def forward2(q, qa, qb, m, t, ta, tb, n, infix, max_dist, n_code, row, strip, qk):
        """Distances and end columns of pairs ``(q[qa:qa+m], t[ta:ta+n])`` and
        ``(q[qb:qb+m], t[tb:tb+n])``: ``(d_a, end_a, d_b, end_b)``, -1 for a pair whose row
        minimum passes ``max_dist`` (when it is >= 0). ``row`` holds n+1 words; ``strip`` and
        ``qk`` K words each."""
        for j in range(n + 1):
            row[j] = 0 if infix else np.uint32(j * ONE2)
        if m == 0:
            d0 = 0 if infix else n
            if max_dist >= 0 and d0 > max_dist:
                return -1, 0, -1, 0
            e0 = 0 if infix else n
            return d0, e0, d0, e0
        best_a = 0
        best_b = 0
        end_a = 0
        end_b = 0
        out_a = False
        out_b = False
        for s in range((m + K - 1) // K):
            i0 = s * K
            h = min(K, m - i0)
            for r in range(K):
                strip[r] = np.uint32((i0 + r + 2) * ONE2)
                i = min(i0 + r, m - 1)
                ca = np.uint32(q[qa + i])
                cb = np.uint32(q[qb + i])
                ca = READ_N if ca == n_code else ca
                cb = READ_N if cb == n_code else cb
                qk[r] = np.uint32(ca | np.uint32(cb << 16))
            if h == K:
                rowmin, best_a, end_a, best_b, end_b = sweep_full(t, ta, tb, n, i0, h, row, strip,
                                                                  qk)
            else:
                rowmin, best_a, end_a, best_b, end_b = sweep_partial(t, ta, tb, n, i0, h, row,
                                                                     strip, qk)
            if max_dist >= 0:
                out_a = out_a or np.int32(rowmin & _LOW) > max_dist
                out_b = out_b or np.int32(rowmin >> 16) > max_dist
            if vote_all(out_a and out_b):
                break
        if not infix:
            best_a = np.int32(row[n] & _LOW)
            best_b = np.int32(row[n] >> 16)
            end_a = n
            end_b = n
        if out_a or (max_dist >= 0 and best_a > max_dist):
            best_a = -1
            end_a = 0
        if out_b or (max_dist >= 0 and best_b > max_dist):
            best_b = -1
            end_b = 0
        return best_a, end_a, best_b, end_b

    forward2 = device_jit(named_for(forward2, tag))

    def thread2(q, qoff, t, toff, pair_a, pair_b, p, infix, max_dist, n_code, dist, ref_end,
                row, strip, qk):
        """Thread ``p``'s two pairs ``pair_a[p]`` and ``pair_b[p]`` (equal shapes): their
        distances and end columns into ``dist``/``ref_end`` at the pairs' own positions."""
        a = pair_a[p]
        b = pair_b[p]
        da, ea, db, eb = forward2(q, qoff[a], qoff[b], qoff[a + 1] - qoff[a], t, toff[a],
                                  toff[b], toff[a + 1] - toff[a], infix, max_dist, n_code, row,
                                  strip, qk)
        dist[a] = da
        ref_end[a] = ea
        dist[b] = db
        ref_end[b] = eb

    return SimpleNamespace(forward2=forward2,
                           thread2=device_jit(named_for(thread2, f"{tag}_thread")), K=K)
