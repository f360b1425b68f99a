"""Compare the CUDA backend with the CPU backend pair for pair (used by the GPU tests).

Run directly (``python tests/gpu/gpu_check.py N``) it checks N random pairs; the
simulator test runs it in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``.
"""

from __future__ import annotations

import sys

import numpy as np

import readalign

ALPHABET = np.frombuffer(b"ACGTN", dtype=np.uint8)


def mixed_pairs(count: int, seed: int, max_len: int) -> tuple[list[bytes], list[bytes]]:
    """Random pairs of mixed lengths with the edge cases mixed in.

    Empty strings, all-N, equal strings, 100% mismatches, and related pairs
    at a few percent divergence; window lengths 0..max_len.
    """
    rng = np.random.default_rng(seed)
    n_len = rng.integers(0, max_len + 1, count)
    windows = [ALPHABET[rng.integers(0, 4, k)].tobytes() for k in n_len]
    # a quarter of the windows carry Ns and lowercase: N never matches, case folds
    for i in np.flatnonzero(rng.random(count) < 0.25):
        w = bytearray(windows[i])
        for pos in rng.integers(0, max(len(w), 1), len(w) // 10 + 1):
            if pos < len(w):
                w[pos] = ord("N") if rng.random() < 0.5 else w[pos] | 0x20
        windows[i] = bytes(w)
    reads = []
    kinds = rng.integers(0, 8, count)
    for w, kind in zip(windows, kinds):
        if kind == 0:
            reads.append(b"")
        elif kind == 1:
            reads.append(b"N" * rng.integers(0, 60))
        elif kind == 2:
            reads.append(w)
        elif kind == 3:
            reads.append(w.translate(bytes.maketrans(b"ACGT", b"CGTA")))
        elif kind == 4:
            reads.append(ALPHABET[rng.integers(0, 4, rng.integers(0, max_len + 1))].tobytes())
        else:
            lo = rng.integers(0, max(len(w) - 10, 0) + 1)
            piece = bytearray(w[lo: lo + rng.integers(0, len(w) + 1)])
            for _ in range(rng.poisson(len(piece) * 0.03 + 0.5)):
                if not piece:
                    break
                pos = rng.integers(0, len(piece))
                op = rng.integers(0, 3)
                if op == 0:
                    piece[pos] = ALPHABET[rng.integers(0, 4)]
                elif op == 1:
                    del piece[pos]
                else:
                    piece.insert(pos, ALPHABET[rng.integers(0, 4)])
            reads.append(bytes(piece))
    return reads, windows


def compare(count: int, seed: int = 0, max_len: int = 300) -> int:
    """Align on both backends in every mode/cut-off; return pairs compared."""
    reads, windows = mixed_pairs(count, seed, max_len)
    grid_reads = np.array(reads, dtype=f"S{max(map(len, reads), default=0) or 1}")
    grid_windows = np.array(windows, dtype=f"S{max(map(len, windows), default=0) or 1}")
    compared = 0
    for mode in ("infix", "global"):
        for max_distance in (None, 5):
            for eqx in (False, True):
                cpu = readalign.align(reads, windows, mode, max_distance, "cpu", eqx=eqx)
                for inputs in ((reads, windows), (grid_reads, grid_windows)):
                    gpu = readalign.align(*inputs, mode, max_distance, "cuda", eqx=eqx)
                    assert gpu.backend == "cuda"
                    for field in ("distance", "ref_start", "ref_end", "cigar_offsets", "cigar_ops"):
                        a, b = getattr(cpu, field), getattr(gpu, field)
                        if not np.array_equal(a, b):
                            bad = np.flatnonzero(a != b)[:5] if a.shape == b.shape else "shape"
                            raise AssertionError(f"{mode} max_distance={max_distance} eqx={eqx} "
                                                 f"{type(inputs[0]).__name__}: {field} differs at {bad}")
                compared += count
    return compared


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    longest = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    print(f"gpu_check: {compare(n, max_len=longest)} pair alignments identical on CPU and GPU")
