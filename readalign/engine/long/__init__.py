"""Long pairs: exact alignments of pairs of any length in memory linear in ``m + n``.

A pair with a side longer than the short path's limit (``engine.batching.LONG_PAIR``) is
aligned here in four steps, every pair of a batch together at each step:

1. **Ends** (:mod:`.ends`): row passes find each pair's score and the cells its alignment
   starts and ends on (global: the corners; infix: a forward pass for the end column, a
   reverse pass for the start; local: a forward pass for the best cell, a reverse pass for
   the start). Scores and end cells are the short path's.
2. **Splits** (:mod:`.split`): Myers and Miller's divide and conquer cuts the global
   problem between the ends at its middle row (or column), where a forward and a reverse
   row pass meet, until every piece is a gap run or a *leaf* with both sides at most the
   leaf size.
3. **Leaves**: every leaf of the batch goes through the engine's short path in global mode
   as one batch, on the call's backend (the GPU's kernels on ``"cuda"``, every core on
   ``"cpu"``).
4. **CIGARs** (:mod:`.driver`): each pair's pieces in order, adjacent runs of one operation
   merged; local mode's soft clips around them.

DP work outside the leaves goes through one call, :func:`.rows.row_passes`, whose
``backend`` argument picks the implementation (the CPU's in
:mod:`readalign.kernels.long_rows`); :mod:`.rows` states the seam.

Memory for a pair of lengths ``m`` and ``n`` is linear: a row pass keeps three int64 rows of
its width (H, F and where F's gap opened, 24 bytes a column; unit costs H alone, 8) and its
sequences cut and reversed; a level of splits holds two passes per open problem, whose
widths add up to at most twice the pair's, and the pieces a pair becomes (at most
``m + n``); the leaves hold their sequences (``m + n`` codes at most) and CIGAR runs. What
the long path allocates peaks under 64 bytes per symbol of ``m + n`` on top of the input
(``tests/engine/test_long_pairs.py`` holds a 20,000 x 20,000 pair to it).
"""

from .driver import align_long

__all__ = ["align_long"]
