"""The GPU's int16 batches keep each row's best local cell as one key (``keyed``): the same
cell must win as with the compare-and-select of the int32 build, ties included (the best H
at the smallest read end, then the smallest window end)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from readalign.kernels import cpu as kernels_cpu
from readalign.kernels import scored_quadrant

import readalign

FIELDS = ("score", "query_start", "query_end", "ref_start", "ref_end", "distance",
          "cigar_offsets", "cigar_ops")
SCORINGS = (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2),
            readalign.Scoring(1, 4, 6, 1, clip_penalty=5),
            readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1))


@cache
def _keyed_kernel(K: int):
    source = kernels_cpu.scored_chunk_source(K, njit(cache=False), keyed=True)
    return njit(nogil=True, cache=False)(source)


def _keyed(reads, windows, **args):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels_cpu, "scored_chunk_kernel", _keyed_kernel)
        return readalign.align(reads, windows, backend="cpu", mode="local", **args)


def _assert_same(reads, windows, **args) -> None:
    got = _keyed(reads, windows, **args)
    want = readalign.align(reads, windows, backend="cpu", mode="local", **args)
    for name in FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name


def test_equal_maxima_resolve_alike():
    """Equal best scores in several columns of a row and in several rows."""
    reads = ["ACGT", "ACGTACGT", "AAAA", "TTTTACGTTTTT", "", "ACGT"]
    windows = ["ACGTTTACGTAACGT", "ACGTACGTACGT", "CAAAACAAAAC", "ACGTACGT", "ACGT", ""]
    for k in (4, 8):
        _assert_same(reads, windows, scoring=SCORINGS[0], k=k)


def test_key_keeps_the_largest_scores_and_columns():
    """The largest score an int16 batch holds, at the largest column the fast path has."""
    top = scored_quadrant.INT16_SPAN - 1
    assert top * scored_quadrant.KEY_COLUMNS + scored_quadrant.KEY_COLUMNS - 1 < 2**31
    assert scored_quadrant.FAST_PATH_MAX < scored_quadrant.KEY_COLUMNS


@settings(max_examples=60, deadline=None)
@given(data=st.data(), which=st.integers(0, len(SCORINGS) - 1), k=st.sampled_from([4, 8]),
       letters=st.sampled_from(["AC", "ACGTN"]))
def test_keyed_rows_pick_the_same_cells(data, which, k, letters):
    scoring = SCORINGS[which]
    if not scoring.is_dna:
        letters = "ARNDCQEGHILKMFPSTWYV"
    text = st.text(alphabet=letters, max_size=60)
    pairs = data.draw(st.lists(st.tuples(text, text), min_size=1, max_size=10))
    reads, windows = [list(x) for x in zip(*pairs)]
    _assert_same(reads, windows, scoring=scoring, k=k)
