"""Scored alignment on the GPU against the CPU, pair for pair and CIGAR for CIGAR.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/engine/scored_gpu_check.py [PAIRS] [MAX_LEN]

Random DNA pairs (reads drawn from their windows with errors and foreign tails,
or unrelated; N included; lengths 0..MAX_LEN) and protein pairs, every mode,
several scorings; a few pairs past the GPU's fast path when MAX_LEN allows.
"""

from __future__ import annotations

import sys

import numpy as np

import readalign
from readalign.engine.matrices import ALPHABET

FIELDS = ("score", "query_start", "query_end", "ref_start", "ref_end", "distance",
          "cigar_offsets", "cigar_ops")


def dna_pairs(rng, count: int, max_len: int) -> tuple[list, list]:
    bases = np.frombuffer(b"ACGTN", np.uint8)
    reads, windows = [], []
    for _ in range(count):
        n = int(rng.integers(0, max_len + 1))
        w = bases[rng.choice(5, n, p=[0.24, 0.24, 0.24, 0.24, 0.04])]
        if n and rng.random() < 0.7:
            a = int(rng.integers(0, n))
            r = w[a:int(rng.integers(a, n + 1))].copy()
            flip = rng.random(r.shape[0]) < 0.03
            r[flip] = bases[rng.integers(0, 5, int(flip.sum()))]
            if r.shape[0] > 4 and rng.random() < 0.3:
                cut = int(rng.integers(1, r.shape[0] - 2))
                r = np.concatenate([r[:cut], r[cut + int(rng.integers(1, 3)):]])
            if rng.random() < 0.1:
                r = np.concatenate([r, bases[rng.integers(0, 4, int(rng.integers(5, 30)))]])
        else:
            r = bases[rng.integers(0, 4, int(rng.integers(0, max_len + 1)))]
        reads.append(r.tobytes())
        windows.append(w.tobytes())
    return reads, windows


def protein_pairs(rng, count: int, max_len: int) -> tuple[list, list]:
    letters = np.frombuffer(ALPHABET[:20].encode(), np.uint8)
    make = lambda: letters[rng.integers(0, 20, int(rng.integers(0, max_len + 1)))].tobytes()  # noqa: E731
    return [make() for _ in range(count)], [make() for _ in range(count)]


def same(a, b, label: str) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y), (label, name)


def main(count: int, max_len: int) -> None:
    rng = np.random.default_rng(13)
    reads, windows = dna_pairs(rng, count, max_len)
    if max_len >= 200:
        long_w = b"ACGT" * 300
        reads += [long_w[5:1150], b"ACGT" * 10]
        windows += [long_w, long_w]
    for scoring in (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2)):
        for mode in ("global", "infix", "local"):
            for k in (8, 16):
                args = dict(mode=mode, scoring=scoring, k=k, eqx=k == 8)
                gpu = readalign.align(reads, windows, backend="cuda", **args)
                cpu = readalign.align(reads, windows, backend="cpu", **args)
                same(gpu, cpu, f"dna {scoring} {mode} k={k}")
    preads, pwindows = protein_pairs(rng, max(count // 4, 8), min(max_len, 300))
    blosum = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    for mode in ("global", "infix", "local"):
        gpu = readalign.align(preads, pwindows, mode=mode, scoring=blosum, backend="cuda")
        cpu = readalign.align(preads, pwindows, mode=mode, scoring=blosum, backend="cpu")
        same(gpu, cpu, f"protein {mode}")
    print(f"scored alignments identical on CPU and GPU ({len(reads)} DNA pairs, "
          f"{len(preads)} protein pairs, lengths 0-{max_len})")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(*(args + [40, 70][len(args):]))
