"""Small runs of every GPU path, for compute-sanitizer's initcheck (``test_initcheck.py``)::

    compute-sanitizer --tool initcheck python tests/gpu/initcheck_run.py

The BAM pipeline with both presets, the scored API in every mode (with CIGARs and scores
alone, DNA with empty sequences and protein; the local DNA batches, windows below 256 bases,
take the packed pass of ``kernels/scored_packed.py``), edit distance with CIGARs in both modes, and
distances alone. Every device byte a kernel reads, and every byte copied back, must have
been written in the same call.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import readalign

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from readalign.bam.options import Options, read_scoring  # noqa: E402
from readalign.bam.run import run  # noqa: E402
from tests.support.simulate import simulate  # noqa: E402


def random_pairs(rng, count: int, letters: str, longest: int) -> tuple[list, list]:
    pick = np.array(list(letters))
    reads = ["".join(rng.choice(pick, int(rng.integers(0, longest)))) for _ in range(count)]
    windows = ["".join(rng.choice(pick, int(rng.integers(0, longest + 40)))) for _ in range(count)]
    return reads, windows


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        fa, reads, cands, _n = simulate(d, 500, 200_000, seed=4)
        for preset in ("sr", "edit"):
            run(Options(reference=fa, reads=reads, candidates=cands, output=f"{d}/{preset}.bam",
                        backend="cuda", threads=4, scoring=read_scoring(preset),
                        command_line="initcheck"))
    rng = np.random.default_rng(3)
    q, t = random_pairs(rng, 1500, "ACGTN", 200)
    dna = readalign.Scoring(1, 4, 6, 1)
    for mode in ("global", "infix", "local"):
        for cigar in (True, False):
            readalign.align(q, t, mode=mode, scoring=dna, cigar=cigar, backend="cuda")
    readalign.align(q, t, mode="local", scoring=readalign.Scoring(1, 4, 6, 1, clip_penalty=5),
                    backend="cuda")
    pq, pt = random_pairs(rng, 500, "ARNDCQEGHILKMFPSTWYV", 150)
    readalign.align(pq, pt, mode="local", backend="cuda",
                    scoring=readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1))
    for mode in ("global", "infix"):
        readalign.align(q, t, mode=mode, backend="cuda")
        readalign.align(q, t, mode=mode, max_distance=20, backend="cuda")  # some lanes give up
    readalign.edit_distance(q, t, backend="cuda")
    print("initcheck run done")


if __name__ == "__main__":
    main()
