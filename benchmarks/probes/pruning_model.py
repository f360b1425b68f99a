"""How much of the packed pass exact pruning would skip: a CPU model, not a kernel.

    python -m benchmarks.probes.pruning_model [--pairs 4000] [--strip 32] [--k 16]

A local cell whose ``H + match * min(m - i, n - j)`` is below a score some alignment reaches
cannot lie on an optimal path, nor can a cell reached only through such cells, so a pass may
skip them and keep every result. The model runs the scored benchmark's DNA pairs (scoring 1,
4, 6, 1) in strips of ``--strip`` read rows as the packed pass does: a strip starts at the
quadrant column left of the row above's first live cell and stops at a quadrant column
where the whole strip is dead, past the row above's last live cell; while a new alignment
could still start in a strip (``match * (m - i0)`` not below the bound), the strip is swept
whole. Every pruned score is checked against the full one (``readalign.align``'s). A warp
takes the widest strip of its 64 pairs (32 threads, two pairs each). Printed: the share of
cells a warp still sweeps, with three bounds: the best score so far, the best ungapped
diagonal found first, and the final score known in advance. These are the pruning rows of
benchmarks/RESULTS.md (2026-11-27, ``9458648``).
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import njit

import readalign

from .._scored import DNA_SCORING, dna_workload

NEG = -(10**6)


@njit(cache=True)
def ungapped_score(q, t, match, mismatch):
    """The best ungapped local score on the diagonals that put ``q`` inside ``t``."""
    best = 0
    for d in range(max(len(t) - len(q), 0) + 1):
        run = 0
        for i in range(min(len(q), len(t) - d)):
            run = max(0, run + (match if q[i] == t[i + d] else -mismatch))
            best = max(best, run)
    return best


@njit(cache=True)
def pruned_score(q, t, match, mismatch, go, ge, strip, k, bound, columns):
    """The local score with dead cells skipped, from the lower ``bound``; ``columns[s]``
    gets the columns strip ``s`` sweeps."""
    m, n = len(q), len(t)
    row_h = np.zeros(n + 1, np.int64)
    row_f = np.full(n + 1, NEG, np.int64)
    col_h = np.zeros(strip, np.int64)
    col_e = np.zeros(strip, np.int64)
    best = bound
    first, last = 0, n
    for s in range((m + strip - 1) // strip):
        i0 = s * strip
        h = min(strip, m - i0)
        starts_dead = match * (m - i0) < best
        lo = first if starts_dead else 0
        col_h[:] = 0
        col_e[:] = NEG
        diag = row_h[lo]
        live_lo, live_hi, stop = -1, 0, n
        for j in range(lo + 1, n + 1):
            above_h, above_f = row_h[j], row_f[j]
            pd = diag
            dead = True
            for r in range(h):
                i = i0 + r + 1
                e = max(col_h[r] - go - ge, col_e[r] - ge)
                f = max(above_h - go - ge, above_f - ge)
                v = max(0, pd + (match if q[i - 1] == t[j - 1] else -mismatch), e, f)
                best = max(best, v)
                if v + match * min(m - i, n - j) >= best:
                    dead = False
                pd = col_h[r]
                col_h[r], col_e[r] = v, e
                above_h, above_f = v, f
            diag = row_h[j]
            row_h[j], row_f[j] = above_h, above_f
            if above_h + match * min(m - i0 - h, n - j) >= best:
                if live_lo < 0:
                    live_lo = j
                live_hi = j
            if starts_dead and j % k == 0 and j >= last and dead:
                stop = j
                break
        row_h[stop + 1:] = 0
        row_f[stop + 1:] = NEG
        columns[s] = stop - lo
        live_lo = stop if live_lo < 0 else live_lo
        first = (live_lo - 1) // k * k if live_lo > 0 else 0
        last = (live_hi + k - 1) // k * k
    return best


def swept_share(reads: list[str], windows: list[str], bound: str, strip: int, k: int) -> float:
    """The share of cells a warp sweeps with ``bound`` (``so-far``, ``diagonal``, ``final``)."""
    match, mismatch, go, ge = DNA_SCORING
    strips = (max(map(len, reads)) + strip - 1) // strip
    columns = np.zeros((len(reads), strips), np.int64)
    scores = readalign.align(reads, windows, mode="local", scoring=readalign.Scoring(*DNA_SCORING),
                             cigar=False, backend="cpu").score
    for x, (r, w, full) in enumerate(zip(reads, windows, scores.tolist(), strict=True)):
        q, t = (np.frombuffer(s.encode(), np.uint8) for s in (r, w))
        start = {"so-far": 0, "diagonal": ungapped_score(q, t, match, mismatch),
                 "final": full}[bound]
        got = pruned_score(q, t, match, mismatch, go, ge, strip, k, start, columns[x])
        if got != full:
            raise AssertionError(f"pair {x}: pruned score {got}, full score {full}")
    warps = len(reads) // 64
    per_warp = columns[:warps * 64].reshape(warps, 64, strips).max(axis=1)
    return float(per_warp.sum(axis=1).mean() / (max(map(len, windows)) * strips))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=4000, help="pairs of the scored DNA workload")
    ap.add_argument("--strip", type=int, default=32, help="read rows per strip")
    ap.add_argument("--k", type=int, default=16, help="quadrant size")
    args = ap.parse_args(argv)
    reads, windows = dna_workload(args.pairs)
    for bound in ("so-far", "diagonal", "final"):
        share = swept_share(reads, windows, bound, args.strip, args.k)
        print(f"bound {bound:>8}: a warp sweeps {100 * share:.1f}% of the cells")


if __name__ == "__main__":
    main()
