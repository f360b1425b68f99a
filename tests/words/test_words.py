"""readalign.cdist against rapidfuzz: dense, sparse, cut-offs, Unicode, bytes, every Peq mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

import readalign
from readalign.words import cdist as words
from readalign.words import cpu_blocks as words_cpu

ASTRAL = "😀🧬𝔸𠀋"
POOL = "abcxyz" + "äöüßéñ" + "αβγ" + "中文字" + ASTRAL


def reference(queries, choices, cutoff=None) -> np.ndarray:
    """rapidfuzz's matrix (``cutoff + 1`` above the cut-off, as readalign)."""
    if len(queries) == 0 or len(choices) == 0:
        return np.zeros((len(queries), len(choices)), dtype=np.int64)
    return process.cdist(queries, choices, scorer=Levenshtein.distance, score_cutoff=cutoff,
                         dtype=np.int32).astype(np.int64)


def sparse_reference(dense: np.ndarray, cutoff: int, upper: bool):
    """(i, j, d) of the cells within ``cutoff``, row-major; ``j > i`` only with ``upper``."""
    keep = dense <= cutoff
    if upper:
        keep &= np.triu(np.ones(dense.shape, dtype=bool), k=1)
    i, j = np.nonzero(keep)
    return i, j, dense[i, j]


@st.composite
def word_lists(draw, max_words: int = 10):
    """Two lists over a shared alphabet of 1-30 symbols, words of 0-80 symbols."""
    alphabet = draw(st.lists(st.one_of(st.sampled_from(POOL), st.characters(
        min_codepoint=32, max_codepoint=0x10FFFF, exclude_categories=("Cs",))),
        min_size=1, max_size=30, unique=True))
    word = st.integers(0, 80).flatmap(
        lambda n: st.lists(st.sampled_from(alphabet), min_size=n, max_size=n).map("".join))
    queries = draw(st.lists(word, max_size=max_words))
    choices = draw(st.lists(word, max_size=max_words))
    if queries and draw(st.booleans()):
        choices.append(draw(st.sampled_from(queries)))  # a duplicate across the lists
    return queries, choices


PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(word_lists(), st.one_of(st.none(), st.integers(0, 12)))
def test_two_lists_match_rapidfuzz(lists, cutoff):
    queries, choices = lists
    got = readalign.cdist(queries, choices, max_distance=cutoff, backend="cpu")
    assert got.shape == (len(queries), len(choices))
    np.testing.assert_array_equal(got.astype(np.int64), reference(queries, choices, cutoff))


@PROPS
@given(word_lists(), st.integers(0, 12))
def test_self_dense_and_sparse_agree_with_rapidfuzz(lists, cutoff):
    queries = lists[0] + lists[0][:2]  # duplicates inside one list
    want = reference(queries, queries, cutoff)
    dense = readalign.cdist(queries, max_distance=cutoff, backend="cpu")
    np.testing.assert_array_equal(dense.astype(np.int64), want)
    i, j, d = readalign.cdist(queries, max_distance=cutoff, sparse=True, backend="cpu")
    wi, wj, wd = sparse_reference(want, cutoff, upper=True)
    np.testing.assert_array_equal(i, wi)
    np.testing.assert_array_equal(j, wj)
    np.testing.assert_array_equal(d.astype(np.int64), wd)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lists=word_lists(), cutoff=st.one_of(st.none(), st.integers(0, 10)))
def test_dense_block_matches_rapidfuzz(lists, cutoff):
    queries, choices = lists
    codes = words.prepare(queries, choices)
    md = -1 if cutoff is None else cutoff
    got = words_cpu.dense_block(codes, 0, len(queries), upper=False, max_distance=md,
                                dtype=np.int32)
    np.testing.assert_array_equal(got.astype(np.int64), reference(queries, choices, cutoff))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cutoff=st.one_of(st.none(), st.integers(0, 12)))
def test_pairwise_rule_matches_rapidfuzz(data, cutoff):
    """edit_distance without alignments: 32- and 64-bit Myers, and both-long pairs (the engine)."""
    size = st.integers(0, 140) | st.sampled_from([31, 32, 33, 63, 64, 65])
    word = size.flatmap(lambda k: st.text(alphabet="ab\u00e9\U0001f600", min_size=k, max_size=k))
    n = data.draw(st.integers(1, 30))
    a = [data.draw(word) for _ in range(n)]
    b = [data.draw(word) for _ in range(n)]
    want = np.array([Levenshtein.distance(x, y) for x, y in zip(a, b, strict=True)])
    if cutoff is not None:
        want = np.where(want > cutoff, -1, want)
    got = readalign.edit_distance(a, b, max_distance=cutoff, backend="cpu")
    np.testing.assert_array_equal(got, want)


def test_lengths_around_the_word_size():
    rng = np.random.default_rng(1)
    lengths = [0, 1, 63, 64, 65, 130, 300]
    make = lambda n: "".join(rng.choice(list("ab\u00e9\U0001f600"), n))  # noqa: E731
    queries = [make(n) for n in lengths]
    choices = [make(n) for n in lengths] + [queries[3][:-1] + "z", queries[5]]
    for cutoff in (None, 0, 3, 40):
        got = readalign.cdist(queries, choices, max_distance=cutoff, backend="cpu")
        np.testing.assert_array_equal(got.astype(np.int64), reference(queries, choices, cutoff))


def test_known_values_and_self_matrix():
    got = readalign.cdist(["kitten", "flaw", "", "flaw"], backend="cpu")
    want = np.array([[0, 6, 6, 6], [6, 0, 4, 0], [6, 4, 0, 4], [6, 0, 4, 0]])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.uint8
    same = ["kitten", "flaw", "", "flaw"]
    np.testing.assert_array_equal(readalign.cdist(same, same, backend="cpu"), want)
    i, j, _ = readalign.cdist(same, same, max_distance=0, sparse=True, backend="cpu")
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 0), (1, 1), (1, 3), (2, 2),
                                                              (3, 1), (3, 3)]


def test_bytes_compare_by_byte():
    queries = [b"\xff\x00abc", b"", b"\x80\x81", b"abc"]
    choices = [b"\xffabc", b"\x80", b""]
    np.testing.assert_array_equal(readalign.cdist(queries, choices, backend="cpu"),
                                  reference(queries, choices))
    # "é" is one code point as str but two bytes in UTF-8
    assert readalign.cdist(["é"], ["e"], backend="cpu")[0, 0] == 1
    assert readalign.cdist(["é".encode()], [b"e"], backend="cpu")[0, 0] == 2


def test_large_alphabet_is_renumbered():
    queries = ["\U0001f600\U0001f601x", chr(0x10FFFF) * 3, "x"]
    choices = ["\U0001f601x", chr(0x10FFFF), "中"]
    codes = words.prepare(queries, choices)
    assert codes.alphabet <= 6
    np.testing.assert_array_equal(readalign.cdist(queries, choices, backend="cpu"),
                                  reference(queries, choices))


def test_sparse_blocks_and_threads(monkeypatch):
    rng = np.random.default_rng(5)
    queries = ["".join(rng.choice(list("abc"), rng.integers(0, 7))) for _ in range(120)]
    whole = readalign.cdist(queries, max_distance=2, sparse=True, backend="cpu")
    monkeypatch.setattr(words, "BLOCK_CELLS", 500)  # several row blocks
    blocks = readalign.cdist(queries, max_distance=2, sparse=True, backend="cpu", threads=1)
    for a, b in zip(whole, blocks, strict=True):
        np.testing.assert_array_equal(a, b)
    i, j, d = readalign.cdist(queries, queries[:50], max_distance=1, sparse=True, backend="cpu")
    wi, wj, wd = sparse_reference(reference(queries, queries[:50], 1), 1, upper=False)
    np.testing.assert_array_equal(np.stack([i, j, d]), np.stack([wi, wj, wd]))


def test_dtype_choice():
    long = "a" * 300
    assert readalign.cdist([long], [""], backend="cpu").dtype == np.int32
    assert readalign.cdist([long], [""], backend="cpu")[0, 0] == 300
    assert readalign.cdist([long], [""], max_distance=9, backend="cpu").dtype == np.uint8
    assert readalign.cdist([long], [""], max_distance=9, backend="cpu")[0, 0] == 10
    assert readalign.cdist(["ab"], ["b"], dtype=np.int64, backend="cpu").dtype == np.int64
    with pytest.raises(ValueError, match="cannot hold"):
        readalign.cdist([long], [""], dtype=np.uint8, backend="cpu")
    with pytest.raises(TypeError, match="integer"):
        readalign.cdist(["a"], ["b"], dtype=np.float32, backend="cpu")


def test_empty_lists():
    assert readalign.cdist([], backend="cpu").shape == (0, 0)
    assert readalign.cdist([], ["a"], backend="cpu").shape == (0, 1)
    assert readalign.cdist(["a", ""], [], backend="cpu").shape == (2, 0)
    i, j, d = readalign.cdist([], max_distance=1, sparse=True, backend="cpu")
    assert i.shape == j.shape == d.shape == (0,)


def test_bad_arguments():
    with pytest.raises(ValueError, match="sparse=True needs max_distance"):
        readalign.cdist(["a"], sparse=True, backend="cpu")
    with pytest.raises(ValueError, match="max_distance"):
        readalign.cdist(["a"], max_distance=-1, backend="cpu")
    with pytest.raises(TypeError, match="choices are bytes"):
        readalign.cdist(["a"], [b"a"], backend="cpu")
    with pytest.raises(TypeError):
        readalign.cdist(["a", b"a"], backend="cpu")
    with pytest.raises(TypeError, match="single str"):
        readalign.cdist("abc", backend="cpu")
    with pytest.raises(ValueError, match="backend"):
        readalign.cdist(["a"], backend="tpu")


def test_diagonal_matches_edit_distance():
    a = ["kitten", "flaw", "", "\U0001f600b", "x" * 70]
    b = ["sitting", "lawn", "abc", "b", "y" + "x" * 69]
    full = readalign.cdist(a, b, backend="cpu")
    np.testing.assert_array_equal(np.diag(full), readalign.edit_distance(a, b, backend="cpu"))
