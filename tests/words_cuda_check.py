"""readalign.distance.cuda against the CPU path: dense, sparse, pairwise, both GPU methods.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/words_cuda_check.py [QUERIES] [CHOICES] [MAX_LEN] [PAIRS]
"""

from __future__ import annotations

import sys

import numpy as np

from readalign.distance import cdist as words
from readalign.distance import cpu as words_cpu
from readalign.distance import cuda as cuda_words
from readalign.distance import dense_blocks as cuda_dense
from readalign.engine.packing import pack_text

SYMBOLS = list("abcdé中") + ["\U0001f600"]


def random_words(rng, count: int, max_len: int) -> list:
    """Words of 0..max_len symbols, some empty, over a small Unicode alphabet."""
    return ["".join(rng.choice(SYMBOLS, rng.integers(0, max_len + 1))) for _ in range(count)]


def cpu_pairs(a: list, b: list, md: int) -> np.ndarray:
    """The CPU's pairwise distances (-1 above ``md``), through the word-list kernels."""
    codes = words.prepare(a, b)
    full = words_cpu.dense_block(codes, 0, len(a), upper=False, max_distance=md, dtype=np.int32)
    d = np.diag(full).astype(np.int32).copy() if len(a) else np.zeros(0, np.int32)
    if md >= 0:
        d[d > md] = -1
    return d


def check_lists(q: list, c: list | None, md: int) -> None:
    """Dense and sparse results of the GPU block equal the CPU block's."""
    codes = words.prepare(q, c)
    nq = len(codes.q)
    dt = words.result_dtype(codes.maxlen, md)
    want = words_cpu.block(codes, 0, nq, upper=False, max_distance=md, sparse=False, dtype=dt)
    got = cuda_words.cdist_gpu(codes, 0, nq, upper=False, max_distance=md, sparse=False, dtype=dt)
    assert got.dtype == want.dtype and (got == want).all(), ("dense", md)
    if md < 0:
        return
    for upper in (False, True) if c is None else (False,):
        for r0, r1 in ((0, nq), (nq // 3, nq)):
            w = words_cpu.block(codes, r0, r1, upper=upper, max_distance=md, sparse=True,
                                dtype=dt)
            g = cuda_words.cdist_gpu(codes, r0, r1, upper=upper, max_distance=md, sparse=True,
                                     dtype=dt)
            for x, y in zip(w, g, strict=True):
                assert np.array_equal(x, y), ("sparse", md, upper, r0)


def check_pairs(rng, count: int, max_len: int) -> None:
    """Pairwise distances equal the CPU's, with and without a cut-off."""
    a = random_words(rng, count, max_len)
    b = random_words(rng, count, max_len)
    for md in (-1, 0, 3):
        got = cuda_words.pairwise_gpu(pack_text(a), pack_text(b), md)
        assert np.array_equal(got, cpu_pairs(a, b, md)), ("pairwise", md)


def check_short(rng, nq: int, nc: int) -> None:
    """Rows of at most 32 symbols (the 32-bit table and masks) against choices of 0-70,
    mixed rows of 0-70, and a device ring of two slots reused by 3+ blocks."""
    q = random_words(rng, nq, 32) + ["a" * 32, ""]
    c = random_words(rng, nc, 70) + ["a" * 33, "b" * 64]
    mixed = random_words(rng, nq, 70)
    slots, stages = cuda_dense.MAX_SLOTS, cuda_dense.STAGES
    cuda_dense.MAX_SLOTS, cuda_dense.STAGES = 2, 2
    try:
        for md in (-1, 0, 2):
            check_lists(q, c, md)
            check_lists(mixed, q, md)
    finally:
        cuda_dense.MAX_SLOTS, cuda_dense.STAGES = slots, stages
    a = random_words(rng, 40, 32)
    b = random_words(rng, 40, 40)
    for md in (-1, 3):
        got = cuda_words.pairwise_gpu(pack_text(a), pack_text(b), md)
        assert np.array_equal(got, cpu_pairs(a, b, md)), ("pairwise short", md)


def main(nq: int, nc: int, max_len: int, pairs: int) -> None:
    rng = np.random.default_rng(7)
    q = random_words(rng, nq, max_len) + ["", "a" * 70]
    c = random_words(rng, nc, max_len) + ["", "a" * 66, q[0]]
    for method in ("myers", "dp"):
        cuda_words.METHOD = method
        for md in (-1, 0, 2):
            check_lists(q, c, md)
            check_lists(q, None, md)
        check_pairs(rng, pairs, max_len)
    cuda_words.METHOD = "myers"
    check_short(rng, max(nq, 20), nc)
    print(f"cuda words identical on CPU and GPU ({nq}x{nc} words, {pairs} pairs, "
          f"lengths 0-{max_len})")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(*(args + [20, 25, 70, 40][len(args):]))
