"""Byte scanners shared by the readers: line ends found eight bytes at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.io._text import _line_ends, line_ends


def newlines(buf: np.ndarray, final: bool) -> np.ndarray:
    """The oracle: every newline's offset, plus the end of an unterminated last line."""
    ends = np.flatnonzero(buf == 10)
    if final and buf.shape[0] and buf[-1] != 10:
        ends = np.append(ends, buf.shape[0])
    return ends


# bytes next to the newline (0x0a) in value and in borrow/carry patterns of a word scan
NEAR_NEWLINE = [0, 1, 9, 10, 11, 13, 0x0B, 0x8A, 0x7F, 0x80, 0xFF, 0x89]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NEAR_NEWLINE), max_size=300) | st.binary(max_size=300).map(list),
       st.integers(0, 7), st.integers(1, 9), st.booleans())
def test_line_ends_match_every_newline(data, skip, pieces, final):
    buf = np.array(data, np.uint8)[skip:]  # odd starts: words read at unaligned addresses
    expected = newlines(buf, final)
    assert np.array_equal(_line_ends(buf, final, pieces), expected)
    assert np.array_equal(line_ends(buf, final), expected)


def test_line_ends_on_a_large_buffer():
    rng = np.random.default_rng(5)
    buf = rng.choice(np.array(NEAR_NEWLINE + [65], np.uint8), 1_000_003)
    assert np.array_equal(line_ends(buf[1:], True), newlines(buf[1:], True))
