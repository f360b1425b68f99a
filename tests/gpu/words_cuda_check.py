"""readalign.words.gpu_blocks against the CPU path: dense, sparse and pairwise.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/gpu/words_cuda_check.py [QUERIES] [CHOICES] [MAX_LEN] [PAIRS]
"""

from __future__ import annotations

import sys

import numpy as np

from readalign.engine.packing import pack_text
from readalign.words import cdist as words
from readalign.words import cpu_blocks as words_cpu
from readalign.words import dense_blocks as cuda_dense
from readalign.words import gpu_blocks as cuda_words

SYMBOLS = list("abcdé中") + ["\U0001f600"]


def random_words(rng, count: int, max_len: int) -> list:
    """Words of 0..max_len symbols, some empty, over a small Unicode alphabet."""
    return ["".join(rng.choice(SYMBOLS, rng.integers(0, max_len + 1))) for _ in range(count)]


def cpu_pairs(a: list, b: list, md: int) -> np.ndarray:
    """The CPU's pairwise distances, clipped at ``md + 1``: the GPU kernel's contract."""
    return words_cpu.pairwise(pack_text(a), pack_text(b), md)


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


def check_ring(q: list, c: list, md: int) -> None:
    """Dense blocks through a device ring of two slots reused by 3+ blocks.

    No device memory to spare (``free_bytes=1``) gives the smallest ring; int16
    is a dtype no other call here uses, so no earlier ring is held.
    """
    codes = words.prepare(q, c)
    dev = cuda_words.device_lists(codes)
    nq, nc = len(codes.q), len(codes.c)

    def launch(a: int, b: int, out, stream) -> None:
        cuda_words.launch_rows(dev, a, b, md, out, stream)

    got = cuda_dense.dense_blocks(launch, 0, nq, nc, 3, 1, np.int16)
    want = words_cpu.dense_block(codes, 0, nq, upper=False, max_distance=md, dtype=np.int16)
    assert np.array_equal(got, want), ("ring", md)


def check_short(rng, nq: int, nc: int) -> None:
    """Rows of at most 32 symbols (the 32-bit table and masks) against choices of 0-70,
    and mixed rows of 0-70."""
    q = random_words(rng, nq, 32) + ["a" * 32, ""]
    c = random_words(rng, nc, 70) + ["a" * 33, "b" * 64]
    mixed = random_words(rng, nq, 70)
    for md in (-1, 0, 2):
        check_lists(q, c, md)
        check_lists(mixed, q, md)
        check_ring(q, c, md)
    a = random_words(rng, 40, 32)
    b = random_words(rng, 40, 40)
    for md in (-1, 3):
        got = cuda_words.pairwise_gpu(pack_text(a), pack_text(b), md)
        assert np.array_equal(got, cpu_pairs(a, b, md)), ("pairwise short", md)


def main(nq: int, nc: int, max_len: int, pairs: int) -> None:
    rng = np.random.default_rng(7)
    q = random_words(rng, nq, max_len) + ["", "a" * 70]
    c = random_words(rng, nc, max_len) + ["", "a" * 66, q[0]]
    for md in (-1, 0, 2):
        check_lists(q, c, md)
        check_lists(q, None, md)
    check_pairs(rng, pairs, max_len)
    check_short(rng, max(nq, 20), nc)
    print(f"cuda words identical on CPU and GPU ({nq}x{nc} words, {pairs} pairs, "
          f"lengths 0-{max_len})")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(*(args + [20, 25, 70, 40][len(args):]))
