"""Simulated inputs of `readalign align`: a random genome, 150 bp reads, 1-3 candidates each.

Used by the BAM-stage benchmarks and by tests that need a realistic run.
"""

from __future__ import annotations

import os

import numpy as np

READ_LEN = 150
BASES = np.frombuffer(b"ACGT", np.uint8)
COMP = np.zeros(256, np.uint8)
COMP[list(b"ACGT")] = list(b"TGCA")


def simulate(d: str, n: int, genome_len: int, seed: int,
             at_edge: bool = False) -> tuple[str, str, str, int]:
    """Write ref.fa, reads.fq and cand.paf under ``d``; return their paths and the pair count.

    ``at_edge`` puts the first read at the contig's start, so its window is clipped.
    """
    rng = np.random.default_rng(seed)
    genome = BASES[rng.integers(0, 4, genome_len)]
    ref = os.path.join(d, "ref.fa")
    with open(ref, "wb") as fh:
        fh.write(b">chr1\n")
        for i in range(0, genome_len, 80):
            fh.write(genome[i:i + 80].tobytes() + b"\n")
    span = READ_LEN + 2
    pos = rng.integers(0, genome_len - span, n)
    if at_edge:
        pos[0] = 0
    rev = rng.random(n) < 0.5
    idx = pos[:, None] + np.arange(READ_LEN)[None, :]
    seqs = genome[idx]
    sub = rng.random(seqs.shape) < 0.005
    seqs[sub] = BASES[rng.integers(0, 4, int(sub.sum()))]
    seqs[rev] = COMP[seqs[rev][:, ::-1]]
    width = len(str(n))
    rec_len = 1 + 1 + width + 1 + READ_LEN + 3 + READ_LEN + 1
    recs = np.empty((n, rec_len), np.uint8)
    names = np.array([f"r{i:0{width}d}".encode() for i in range(n)], dtype=f"S{width + 1}")
    recs[:, 0] = ord("@")
    recs[:, 1:2 + width] = names.view(np.uint8).reshape(n, width + 1)
    o = 2 + width
    recs[:, o] = 10
    recs[:, o + 1:o + 1 + READ_LEN] = seqs
    o += 1 + READ_LEN
    recs[:, o:o + 3] = np.frombuffer(b"\n+\n", np.uint8)
    recs[:, o + 3:o + 3 + READ_LEN] = ord("I")
    recs[:, -1] = 10
    reads = os.path.join(d, "reads.fq")
    with open(reads, "wb") as fh:
        fh.write(recs.tobytes())
    ncand = rng.integers(1, 4, n)
    true_slot = (rng.random(n) * ncand).astype(np.int64)
    paf = os.path.join(d, "cand.paf")
    lines = []
    total = 0
    with open(paf, "w") as fh:  # a fresh file: simulating into a used folder replaces it
        for i in range(n):
            name = names[i].decode()
            for k in range(int(ncand[i])):
                if k == true_slot[i]:
                    p, strand = int(pos[i]), "-" if rev[i] else "+"
                else:
                    p, strand = int(rng.integers(0, genome_len - span)), "+-"[int(rng.integers(0, 2))]
                lines.append(f"{name}\t{READ_LEN}\t0\t{READ_LEN}\t{strand}\tchr1\t{genome_len}\t{p}\t"
                             f"{p + READ_LEN}\t{READ_LEN}\t{READ_LEN}\t60\n")
                total += 1
            if len(lines) > 100_000:
                fh.write("".join(lines))
                lines = []
        fh.write("".join(lines))
    return ref, reads, paf, total
