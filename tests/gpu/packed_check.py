"""The packed distance pass (``benchmarks.ablation.packed``) through CUDA against the CPU backend.

Used by the GPU tests and, with ``NUMBA_ENABLE_CUDASIM=1``, by CI: pairs of a few shared
shapes (so most threads carry two pairs) and of random shapes, DNA with N, infix and global,
with and without ``max_distance``; every distance and end column must equal the 32-bit pass's.
On a GPU it also holds Hopper's 16x2 min instructions against the plain-arithmetic lane
operations on every input class. ``python tests/gpu/packed_check.py PAIRS MAX_LEN``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from numba import cuda

import readalign

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the benchmarks package

ALPHABET = np.frombuffer(b"ACGTN", dtype=np.uint8)


def shaped_pairs(count: int, seed: int, max_len: int) -> tuple[list[bytes], list[bytes]]:
    """Half the pairs take one of four shapes, half a random one; 1 in 10 symbols of a
    quarter of the sequences is N; reads are windows with a few edits, or random."""
    rng = np.random.default_rng(seed)
    shapes = rng.integers(0, max_len + 1, (4, 2))
    reads, windows = [], []
    for i in range(count):
        m, n = shapes[i % 4] if rng.random() < 0.5 else rng.integers(0, max_len + 1, 2)
        w = ALPHABET[rng.integers(0, 4, n)]
        if n and rng.random() < 0.5:
            r = np.resize(w[rng.integers(0, n):], m)
            r[rng.integers(0, m, m // 20 + 1) if m else []] = ord("A")
        else:
            r = ALPHABET[rng.integers(0, 4, m)]
        if m and rng.random() < 0.25:
            r[rng.integers(0, m, m // 10 + 1)] = ord("N")
        if n and rng.random() < 0.25:
            w[rng.integers(0, n, n // 10 + 1)] = ord("N")
        reads.append(r.tobytes())
        windows.append(w.tobytes())
    return reads, windows


def run_packed(reads, windows, infix: bool, max_dist: int, k: int, dpx: bool):
    """Distances and end columns from the packed CUDA kernel, by pair."""
    from benchmarks.ablation.cuda_packed import packed_kernel
    from benchmarks.ablation.packed_pairs import pair_up
    from readalign.engine.packing import N_CODE, pack_dna

    q, t = pack_dna(reads), pack_dna(windows)
    order = np.lexsort((t.lengths, q.lengths)).astype(np.int64)
    pair_a, pair_b = pair_up(q.offsets, t.offsets, order)
    dist = cuda.device_array(len(reads), np.int32)
    end = cuda.device_array(len(reads), np.int64)
    blocks = (pair_a.shape[0] + 127) // 128
    packed_kernel(k, dpx)[blocks, 128](q.data, q.offsets, t.data, t.offsets, pair_a, pair_b,
                                       infix, max_dist, N_CODE, dist, end)
    return dist.copy_to_host(), end.copy_to_host(), pair_a.shape[0]


def compare(count: int, seed: int, max_len: int, ks=(4, 16, 32), backend: str = "cpu") -> int:
    """Check ``count`` pairs in each mode, limit and k against the 32-bit pass on ``backend``;
    returns the pairs checked."""
    reads, windows = shaped_pairs(count, seed, max_len)
    checked = 0
    for mode in ("infix", "global"):
        for limit in (None, 3, max_len // 4):
            ref = readalign.align(reads, windows, mode=mode, max_distance=limit, backend=backend,
                                  cigar=False)
            for k in ks:
                dist, end, threads = run_packed(reads, windows, mode == "infix",
                                                -1 if limit is None else limit, k, True)
                assert threads < 0.8 * count, threads
                assert np.array_equal(dist, ref.distance), (mode, limit, k)
                hit = dist >= 0
                assert np.array_equal(end[hit], ref.ref_end[hit]), (mode, limit, k)
                checked += count
    return checked


def lane_words(count: int, seed: int) -> np.ndarray:
    """Words of every class the packed pass feeds the lane operations: halves uniform in
    0..0x7FFF, small, equal, at the edges (0, 1, 0x7FFE, 0x7FFF)."""
    rng = np.random.default_rng(seed)
    lo = rng.integers(0, 0x8000, count)
    hi = rng.integers(0, 0x8000, count)
    small = rng.random(count) < 0.25
    lo[small] &= 3
    hi[small] &= 3
    edge = np.array([0, 1, 0x7FFE, 0x7FFF])
    corner = rng.random(count) < 0.25
    lo[corner] = edge[rng.integers(0, 4, corner.sum())]
    hi[corner] = edge[rng.integers(0, 4, corner.sum())]
    return (lo | (hi << 16)).astype(np.uint32)


def apply_at(ops, jit):
    """``f(a, b, c, out, i)``: the lane operations ``ops`` on word triple ``i`` into column
    ``i`` of ``out`` (min2, min3, ne2 of ``a`` with one code bit pattern), compiled by ``jit``."""
    min2, min3, ne2 = ops.min2, ops.min3, ops.ne2

    def at(a, b, c, out, i):
        out[0, i] = min2(a[i], b[i])
        out[1, i] = min3(a[i], b[i], c[i])
        out[2, i] = ne2(a[i] & np.uint32(0x01FF01FF))
    return jit(at)


def kernel_for(ops):
    """A kernel applying the lane operations ``ops`` to word triples."""
    at = apply_at(ops, cuda.jit(device=True))

    @cuda.jit
    def apply(a, b, c, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            at(a, b, c, out, i)
    return apply


def compare_lane_ops(count: int, seed: int = 5, dpx: bool = True) -> int:
    """Hopper's 16x2 minima (``dpx``; else the plain ones again, for the simulator) against
    the plain-arithmetic ones on ``count`` word triples."""
    from benchmarks.ablation import unsigned_lanes

    words = [lane_words(count, seed + x) for x in range(3)]
    b = words[1].copy()
    same = np.random.default_rng(seed).random(count) < 0.1
    b[same] = words[0][same]
    outs = []
    plain = unsigned_lanes.swar_ops(cuda.jit(device=True))
    for ops in (unsigned_lanes.dpx_ops() if dpx else plain, plain):
        out = cuda.device_array((3, count), np.uint32)
        kernel_for(ops)[(count + 255) // 256, 256](words[0], b, words[2], out)
        outs.append(out.copy_to_host())
    assert np.array_equal(outs[0], outs[1])
    return count


if __name__ == "__main__":
    from readalign.kernels.simulator import simulated

    pairs = compare(int(sys.argv[1]), seed=3, max_len=int(sys.argv[2]))
    compare_lane_ops(64 if simulated() else 1_000_000, dpx=not simulated())
    print(f"packed pass identical to the 32-bit pass on {pairs} pairs")
