"""No lane reads an array element that was not written for its own pair.

On the GPU, boundaries live in pooled device memory that holds whatever an earlier call
left there, and a done lane keeps running the traceback's loops beside live ones (the
warp vote). A read of an element never written for the pair is harmless only while its
value is never used; compute-sanitizer's initcheck reported such reads on the H100 for
empty reads (strip 0's top row and row 0 of the quadrant columns). Here the per-pair
functions run as plain Python with a vote that never leaves a loop, on arrays that
record which elements were written, so every read of an unwritten element is found,
in the boundaries and in the thread-local rows, tiles and move bytes alike.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from readalign.kernels import quadrant, scored_quadrant

import readalign

K_VALUES = (4, 8)
SCORINGS = (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2),
            readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1),
            readalign.Scoring(1, 4, 6, 1, clip_penalty=5))


class Tracked:
    """A 1-D array that records reads of elements never written."""

    def __init__(self, name: str, size: int, dtype, unwritten: list) -> None:
        self.name, self.unwritten = name, unwritten
        self.values = np.zeros(size, dtype)
        self.written = np.zeros(size, bool)
        self.shape, self.dtype = self.values.shape, self.values.dtype

    def __getitem__(self, i):
        i = int(i)
        if not self.written[i]:
            self.unwritten.append((self.name, i))
        return self.values[i]

    def __setitem__(self, i, value) -> None:
        i = int(i)
        self.values[i] = value
        self.written[i] = True


def _plain(fn):
    return fn


def _never(done):
    return False


@cache
def _functions(K: int, keyed: bool = False):
    return (scored_quadrant.build(_plain, _never, K, keyed), quadrant.build(_plain, _never, K))


def _scored_reads(K, mode, scoring, q, t, keyed=False) -> list:
    m, n = q.shape[0], t.shape[0]
    sub = scoring.flat()
    A = int(round(sub.shape[0] ** 0.5))
    unwritten: list = []

    def arr(name, size, dtype=np.int32):
        return Tracked(name, size, dtype, unwritten)

    rows, cols = quadrant.boundary_row_size(m, n, K), quadrant.boundary_col_size(m, n, K)
    rbH, rbF, cbH, cbE = arr("rbH", rows), arr("rbF", rows), arr("cbH", cols), arr("cbE", cols)
    ns = _functions(K, keyed)[0]
    qs, ts = np.append(q, 0), np.append(t, 0)  # a sequence may be empty; nothing past it is read
    go, ge = scoring.gap_open, scoring.gap_extend
    clip = scoring.clip_penalty if mode == scored_quadrant.LOCAL else 0
    read, window, scores = (qs, 0, 1, m), (ts, 0, 1, n), (mode, sub, A, go, ge, clip)
    bounds = ((rbH, rbF, cbH, cbE), 0, 1, n + 1, m + 1)
    _s, ei, ej = ns.forward(read, window, scores, True, (arr("rowH", n + 1), arr("rowF", n + 1),
                                                         0, 1), bounds, arr("work", 5 * K),
                            scored_quadrant.NEG)
    ns.traceback(read, window, scores, A - 1, False, ei, ej, bounds,
                 arr("tile", scored_quadrant.tile_size(K)), arr("moves", K * K, np.uint8),
                 (arr("out", m + n + 2, np.uint32), 0, 1))
    return unwritten


def _edit_reads(K, infix, q, t) -> list:
    m, n = q.shape[0], t.shape[0]
    unwritten: list = []

    def arr(name, size, dtype=np.int32):
        return Tracked(name, size, dtype, unwritten)

    rbuf = arr("rbuf", quadrant.boundary_row_size(m, n, K))
    cbuf = arr("cbuf", quadrant.boundary_col_size(m, n, K))
    ne = _functions(K)[1]
    qs, ts = np.append(q, 0), np.append(t, 0)
    read, window, bounds = (qs, 0, 1, m), (ts, 0, 1, n), ((rbuf, cbuf), 0, 1, n + 1, m + 1)
    d, end_j = ne.forward(read, window, infix, -1, 4, True, (arr("row", n + 1), 0, 1), bounds,
                          arr("strip", K), arr("qk", K))
    ne.traceback(read, window, infix, 4, False, end_j, bounds, arr("tile", quadrant.tile_size(K)),
                 arr("moves", K * K, np.uint8), (arr("out", 2 * d + 1, np.uint32), 0, 1))
    return unwritten


def _codes(letters: int):
    return st.lists(st.integers(0, letters - 1), max_size=40).map(
        lambda x: np.array(x, np.uint8))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), K=st.sampled_from(K_VALUES), mode=st.sampled_from([0, 1, 2]),
       which=st.integers(0, len(SCORINGS) - 1), keyed=st.booleans())
def test_scored_lanes_read_only_what_their_pair_wrote(data, K, mode, which, keyed):
    scoring = SCORINGS[which]
    letters = int(round(scoring.flat().shape[0] ** 0.5))
    q, t = data.draw(_codes(letters)), data.draw(_codes(letters))
    assert _scored_reads(K, mode, scoring, q, t, keyed) == []


@settings(max_examples=60, deadline=None)
@given(q=_codes(5), t=_codes(5), K=st.sampled_from(K_VALUES), infix=st.booleans())
def test_edit_lanes_read_only_what_their_pair_wrote(q, t, K, infix):
    assert _edit_reads(K, infix, q, t) == []


def test_empty_reads_read_only_what_they_wrote():
    """The reads initcheck reported: an empty read against windows of several quadrants."""
    t = np.arange(30, dtype=np.uint8) % 4
    empty = np.zeros(0, np.uint8)
    for K in K_VALUES:
        for mode in (0, 1, 2):
            assert _scored_reads(K, mode, SCORINGS[0], empty, t) == []
        for infix in (False, True):
            assert _edit_reads(K, infix, empty, t) == []
