"""The GPU word-list path (readalign.words.gpu_blocks): simulator in CI, the real GPU when present."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_CHECKS, HAS_GPU, under_simulator
from numba import njit
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein
from readalign.kernels import words as kw

import readalign
from readalign.words import cdist as words

gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")

def _forms(bits: int):
    """Every query x choice through ``myers`` of the ``bits`` build, table or sorted masks."""
    ns = kw.build(njit(cache=False), word_bits=bits)
    myers, psorted, pset, pclear = ns.myers, ns.peq_sorted, ns.peq_set, ns.peq_clear
    word = np.uint32 if bits == 32 else np.uint64

    @njit
    def run(qd, qo, cd, co, md, sorted_masks, alphabet, out):
        peq = np.zeros(alphabet, word)
        syms = np.zeros(64, qd.dtype)
        masks = np.zeros(64, np.uint64)
        for i in range(qo.shape[0] - 1):
            qb = qo[i]
            m = qo[i + 1] - qb
            for j in range(co.shape[0] - 1):
                n = co[j + 1] - co[j]
                if m > bits:
                    out[i, j] = -2
                elif sorted_masks:
                    u = psorted(qd, qb, m, syms, masks)
                    out[i, j] = myers(peq, 0, syms, masks, u, m, cd, co[j], 1, n, md)
                else:
                    pset(peq, 0, qd, qb, m)
                    out[i, j] = myers(peq, 0, syms, masks, -1, m, cd, co[j], 1, n, md)
                    pclear(peq, 0, qd, qb, m)
    return run


@pytest.mark.slow
@pytest.mark.parametrize("bits", [64, 32])
@pytest.mark.parametrize("sorted_masks", [False, True], ids=["table", "sorted"])
def test_myers_builds_on_the_cpu(sorted_masks, bits):
    """The 64- and 32-bit builds (patterns up to 64 / 32 symbols) against rapidfuzz."""
    rng = np.random.default_rng(11)
    make = lambda n: "".join(rng.choice(list("abc\u00e9\U0001f600"), n))  # noqa: E731
    q = [make(rng.integers(0, 70)) for _ in range(30)] + ["a" * 32, "b" * 33]
    c = [make(rng.integers(0, 90)) for _ in range(33)] + ["a" * 31]
    codes = words.prepare(q, c)
    run = _forms(bits)
    for cutoff in (None, 0, 2, 7):
        md = -1 if cutoff is None else cutoff
        got = np.zeros((len(q), len(c)), np.int64)
        run(codes.q.data, codes.q.offsets, codes.c.data, codes.c.offsets, md, sorted_masks,
            codes.alphabet, got)
        want = process.cdist(q, c, scorer=Levenshtein.distance, score_cutoff=cutoff,
                             dtype=np.int32)
        short = got != -2
        assert short.sum() > 0
        np.testing.assert_array_equal(got[short], want[short])


@pytest.mark.slow
def test_cuda_words_under_simulator():
    """Tiny lists (lengths 0-70, empties, Unicode) and pairs: GPU block == CPU block."""
    out = under_simulator(str(GPU_CHECKS / "words_cuda_check.py"), "7", "8", "70", "12")
    assert "identical on CPU and GPU" in out


def _random_words(rng, count: int, lo: int, hi: int, alphabet: str) -> list:
    letters = list(alphabet)
    return ["".join(rng.choice(letters, rng.integers(lo, hi + 1))) for _ in range(count)]


def _same_on_gpu_and_cpu(q, c, max_distance, sparse: bool = False) -> None:
    """``cdist`` gives equal results on both backends (each array of the sparse triple)."""
    got = readalign.cdist(q, c, max_distance=max_distance, sparse=sparse, backend="cuda")
    want = readalign.cdist(q, c, max_distance=max_distance, sparse=sparse, backend="cpu")
    if not sparse:
        got, want = [got], [want]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
@gpu
def test_gpu_cdist_matches_cpu():
    rng = np.random.default_rng(21)
    q = _random_words(rng, 3000, 0, 20, "abcdefgh") + ["x" * 100, "é" * 70]
    c = _random_words(rng, 2900, 0, 20, "abcdefgh") + ["x" * 99, q[5]]
    for md in (None, 2):
        _same_on_gpu_and_cpu(q, c, md)
        _same_on_gpu_and_cpu(q, None, md)
    for same in (None, c):
        _same_on_gpu_and_cpu(q, same, 2, sparse=True)


@pytest.mark.gpu
@gpu
def test_gpu_cdist_short_and_mixed_rows():
    """Rows of <= 32 symbols (32-bit masks and table) and rows of 0-70, both ways round."""
    rng = np.random.default_rng(23)
    short = _random_words(rng, 2500, 0, 32, "abcdefghijklmnopqrstuvwxyz") + ["a" * 32]
    mixed = _random_words(rng, 1800, 0, 70, "abcdefghijklmnopqrstuvwxyz") + ["b" * 33]
    for q, c in ((short, mixed), (mixed, short), (short, None)):
        for md in (None, 2):
            _same_on_gpu_and_cpu(q, c, md)


@pytest.mark.gpu
@gpu
def test_gpu_pairwise_matches_rapidfuzz():
    rng = np.random.default_rng(22)
    a = _random_words(rng, 200_000, 0, 40, "ACGT") + ["A" * 300, "C" * 70]
    b = _random_words(rng, 200_000, 0, 40, "ACGT") + ["A" * 290 + "G", "C" * 3]
    want = np.asarray(process.cpdist(a, b, scorer=Levenshtein.distance, workers=-1)).astype(np.int32)
    np.testing.assert_array_equal(readalign.edit_distance(a, b, backend="cuda"), want)
    clipped = np.where(want > 3, -1, want)
    np.testing.assert_array_equal(readalign.edit_distance(a, b, 3, backend="cuda"), clipped)
