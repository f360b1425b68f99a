"""A GPU lane that is done keeps running the traceback's loops while its warp lives.

The warp vote ends a loop only when every lane of the warp is done, so a lane whose
pair is finished (or empty) runs the remaining quadrants and steps as no-ops beside
the live ones. The CPU kernel, one lane per warp, never does; neither does the
simulator. Here the CPU's scored chunk kernel is compiled with a vote that never
ends a loop and with numba's bounds checks, so every lane runs every loop to its end
as the busiest GPU warp makes it: results must not change and no index may leave its
array (an unsigned index computed from an empty sequence once did, on the H100 only).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from readalign.kernels import cpu as kernels_cpu

import readalign

FIELDS = ("score", "query_start", "query_end", "ref_start", "ref_end", "distance",
          "cigar_offsets", "cigar_ops")
SCORINGS = (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2),
            readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1))


@cache
def stuck_kernel(K: int):
    """The scored chunk kernel with :func:`vote_never` and bounds checks (compiled once)."""
    checked = njit(boundscheck=True, cache=False)
    source = kernels_cpu.scored_chunk_source(K, checked, kernels_cpu.vote_never)
    return njit(boundscheck=True, nogil=True, cache=False)(source)


def aligned_by_stuck_lanes(reads, windows, **args):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels_cpu, "scored_chunk_kernel", stuck_kernel)
        return readalign.align(reads, windows, backend="cpu", **args)


def assert_same(a, b) -> None:
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("mode", ["global", "infix", "local"])
def test_empty_sequences_at_offset_zero(mode):
    """Empty reads and windows first in the batch: their sequences start at offset 0."""
    reads = ["", "", "ACGTAACGTTGCA", "", "GGATTACA" * 5, "TTGCA"]
    windows = ["", "ACGTTACGTA", "", "", "GGATTCACA" * 5, "ACGTTGCAAC"]
    args = dict(mode=mode, scoring=SCORINGS[0], k=8)
    assert_same(aligned_by_stuck_lanes(reads, windows, **args),
                readalign.align(reads, windows, backend="cpu", **args))


dna = st.text(alphabet="ACGTN", max_size=70)
protein = st.text(alphabet="ARNDCQEGHILKMFPSTWYV", max_size=70)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["global", "infix", "local"]),
       which=st.integers(0, 2), k=st.sampled_from([4, 8]))
def test_stuck_lanes_change_nothing(data, mode, which, k):
    letters = protein if which == 2 else dna
    pairs = data.draw(st.lists(st.tuples(letters, letters), min_size=1, max_size=12))
    reads, windows = [list(x) for x in zip(*pairs)]
    args = dict(mode=mode, scoring=SCORINGS[which], k=k)
    assert_same(aligned_by_stuck_lanes(reads, windows, **args),
                readalign.align(reads, windows, backend="cpu", **args))
