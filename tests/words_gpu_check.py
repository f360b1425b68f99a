"""Compile kernels/words.py with ``cuda.jit(device=True)`` and compare with the CPU path.

A deliberately naive kernel (one thread per pair, scratch in global memory)
runs every per-pair method: ``sorted`` and ``scan`` masks, the ``table``
masks, and the DP row for long pairs. Runs on a GPU or under the simulator
(``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/words_gpu_check.py [WORDS_PER_LIST] [MAX_LEN]
"""

from __future__ import annotations

import sys

import numpy as np
from numba import cuda
from readalign.kernels import words as kw

from readalign.distance import cdist as words

NS = kw.build(cuda.jit(device=True))
pair_generic = NS.pair_generic
peq_set = NS.peq_set
myers_table = NS.myers_table


@cuda.jit(device=True)
def lane_pair(qo, co):
    """This lane's (query, choice) cell of the all-against-all grid; (-1, -1) past its end."""
    p = cuda.grid(1)
    nc = co.shape[0] - 1
    if p >= (qo.shape[0] - 1) * nc:
        return p, -1, -1
    return p, p // nc, p % nc


@cuda.jit
def generic_kernel(qd, qo, cd, co, md, sorted_peq, rows, width, out):
    p, i, j = lane_pair(qo, co)
    if i < 0:
        return
    syms = cuda.local.array(64, np.int32)
    masks = cuda.local.array(64, np.uint64)
    qb = qo[i]
    cb = co[j]
    out[i, j] = pair_generic(qd, qb, qo[i + 1] - qb, cd, cb, co[j + 1] - cb, syms, masks,
                             rows, p * width, md, sorted_peq)


@cuda.jit
def table_kernel(qd, qo, cd, co, md, peq, alphabet, out):
    p, i, j = lane_pair(qo, co)
    if i < 0:
        return
    qb = qo[i]
    m = qo[i + 1] - qb
    if m > kw.WORD_BITS:
        out[i, j] = -2  # not this method's job
        return
    cb = co[j]
    peq_set(peq, p * alphabet, qd, qb, m)
    out[i, j] = myers_table(peq, p * alphabet, m, cd, cb, co[j + 1] - cb, md)


def random_words(rng, count: int, max_len: int) -> list:
    symbols = list("abcdé中") + ["\U0001f600"]
    return ["".join(rng.choice(symbols, rng.integers(0, max_len + 1))) for _ in range(count)]


def main(n: int, max_len: int) -> None:
    rng = np.random.default_rng(3)
    q = random_words(rng, n, max_len)
    c = random_words(rng, n + 3, max_len)
    codes = words.prepare(q, c)
    dev = [cuda.to_device(a) for a in (codes.q.data, codes.q.offsets, codes.c.data,
                                       codes.c.offsets)]
    npairs = len(q) * len(c)
    tpb = 64
    blocks = (npairs + tpb - 1) // tpb
    width = codes.maxlen + 1
    rows = cuda.device_array(npairs * width, np.int32)
    for md in (-1, 0, 3):
        want = words.cdist(q, c, max_distance=None if md < 0 else md, backend="cpu")
        for sorted_peq in (True, False):
            out = cuda.device_array((len(q), len(c)), np.int32)
            generic_kernel[blocks, tpb](*dev, md, sorted_peq, rows, width, out)
            got = out.copy_to_host()
            assert (got == want).all(), ("generic", md, sorted_peq)
        peq = cuda.to_device(np.zeros(npairs * codes.alphabet, np.uint64))
        out = cuda.device_array((len(q), len(c)), np.int32)
        table_kernel[blocks, tpb](*dev, md, peq, codes.alphabet, out)
        got = out.copy_to_host()
        short = got != -2
        assert (got[short] == want[short]).all(), ("table", md)
    print(f"words kernels identical on CPU and GPU ({npairs} pairs, lengths 0-{max_len})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12,
         int(sys.argv[2]) if len(sys.argv) > 2 else 80)
