"""A GPU lane that is done keeps running the kernels' loops while its warp lives.

The warp vote ends a loop only when every lane of the warp is done, so a lane whose
pair is finished (or empty, or past ``max_distance``) runs the remaining strips,
quadrants and steps as no-ops beside the live ones. The CPU kernels, one lane per warp,
never do; neither does the simulator. Here the CPU's chunk kernels (scored and edit
distance) are compiled with a vote that never ends a loop and with numba's bounds
checks, so every lane runs every loop to its end as the busiest GPU warp makes it:
results must not change and no index may leave its array (an unsigned index computed
from an empty sequence once did, on the H100 only).

The GPU's int16 batches also keep each row's best local cell as one key (``keyed``); the
scored kernel built that way must pick the same cells as the compare-and-select build,
ties included (the best H at the smallest read end, then the smallest window end).
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

pytestmark = pytest.mark.slow  # compiles the chunk kernels again, bounds checked, for several k

FIELDS = ("score", "query_start", "query_end", "ref_start", "ref_end", "distance",
          "cigar_offsets", "cigar_ops")
SCORINGS = (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2),
            readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1))


def _stuck(source_of, **build):
    @cache
    def kernel(K: int):
        """The chunk kernel with :func:`vote_never` and bounds checks (compiled once)."""
        checked = njit(boundscheck=True, cache=False)
        source = source_of(K, checked, kernels_cpu.vote_never, **build)
        return njit(boundscheck=True, nogil=True, cache=False)(source)
    return kernel


STUCK = {"scored_chunk_kernel": _stuck(kernels_cpu.scored_chunk_source),
         "chunk_kernel": _stuck(kernels_cpu.chunk_source)}
KEYED = {"scored_chunk_kernel": _stuck(kernels_cpu.scored_chunk_source, keyed=True)}


def aligned_by_stuck_lanes(reads, windows, kernels=STUCK, **args):
    with pytest.MonkeyPatch.context() as patch:
        for name, kernel in kernels.items():
            patch.setattr(kernels_cpu, name, kernel)
        return readalign.align(reads, windows, backend="cpu", **args)


def assert_same(a, b) -> None:
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize(("mode", "scoring"), [(m, SCORINGS[0]) for m in ("global", "infix", "local")]
                         + [("global", None), ("infix", None)])
@pytest.mark.parametrize("empty_read_first", [True, False])
def test_empty_sequences_at_offset_zero(mode, scoring, empty_read_first):
    """An empty read (or window) first in the batch, beside a window (or read): its
    sequence starts at offset 0 and the trace still runs for the other side."""
    reads = ["", "", "ACGTAACGTTGCA", "", "GGATTACA" * 5, "TTGCA"]
    windows = ["ACGTTACGTA", "", "", "", "GGATTCACA" * 5, "ACGTTGCAAC"]
    if not empty_read_first:
        reads, windows = windows, reads
    args = dict(mode=mode, scoring=scoring, k=8)
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


@settings(max_examples=40, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["infix", "global"]), k=st.sampled_from([4, 8]),
       max_distance=st.sampled_from([None, 0, 3]))
def test_stuck_lanes_change_no_edit_distance(data, mode, k, max_distance):
    pairs = data.draw(st.lists(st.tuples(dna, dna), min_size=1, max_size=12))
    reads, windows = [list(x) for x in zip(*pairs)]
    args = dict(mode=mode, k=k, max_distance=max_distance)
    got = aligned_by_stuck_lanes(reads, windows, **args)
    want = readalign.align(reads, windows, backend="cpu", **args)
    for name in ("distance", "ref_start", "ref_end"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert [got.cigar(i) for i in range(len(reads))] == [want.cigar(i) for i in range(len(reads))]


CLIPPED = readalign.Scoring(1, 4, 6, 1, clip_penalty=5)


def assert_keyed_same(reads, windows, **args) -> None:
    assert_same(aligned_by_stuck_lanes(reads, windows, KEYED, mode="local", **args),
                readalign.align(reads, windows, backend="cpu", mode="local", **args))


def test_keyed_equal_maxima_resolve_alike():
    """Equal best scores in several columns of a row and in several rows."""
    reads = ["ACGT", "ACGTACGT", "AAAA", "TTTTACGTTTTT", "", "ACGT"]
    windows = ["ACGTTTACGTAACGT", "ACGTACGTACGT", "CAAAACAAAAC", "ACGTACGT", "ACGT", ""]
    for k in (4, 8):
        assert_keyed_same(reads, windows, scoring=SCORINGS[0], k=k)


def test_keyed_best_cell_at_a_large_score_and_column():
    """A best cell 1,020 columns in with a score of 30,000 (int16 batches stay below 32,000),
    equal maxima further left in the same row."""
    reads = ["A" * 1000, "A" * 40]
    windows = ["C" * 20 + "A" * 1000, ("A" * 40 + "C") * 24]
    assert_keyed_same(reads, windows, scoring=readalign.Scoring(30, 40, 6, 1), k=8)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), which=st.integers(0, len(SCORINGS)), k=st.sampled_from([4, 8]),
       letters=st.sampled_from(["AC", "ACGTN"]))
def test_keyed_rows_pick_the_same_cells(data, which, k, letters):
    scoring = (*SCORINGS, CLIPPED)[which]
    if not scoring.is_dna:
        letters = "ARNDCQEGHILKMFPSTWYV"
    text = st.text(alphabet=letters, max_size=60)
    pairs = data.draw(st.lists(st.tuples(text, text), min_size=1, max_size=10))
    reads, windows = [list(x) for x in zip(*pairs)]
    assert_keyed_same(reads, windows, scoring=scoring, k=k)
