"""The search's score kernel on the GPU against the CPU, and (with ``--report``) the whole
report of readalign.search on both backends.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``: keep it tiny)::

    python tests/gpu/search_check.py [QUERIES] [SEQUENCES] [MAX_LEN] [--report]
"""

from __future__ import annotations

import sys

import numpy as np
from readalign.kernels import search_scores

import readalign
from readalign.dbsearch import scan, scores
from readalign.dbsearch.api import default_scoring, load_database, load_queries

AMINO = "ACDEFGHIKLMNPQRSTVWY"


def random_proteins(rng: np.random.Generator, count: int, max_len: int) -> list[str]:
    """Proteins of 1..max_len residues."""
    return ["".join(rng.choice(list(AMINO), int(rng.integers(1, max_len + 1))))
            for _ in range(count)]


def main(argv: list[str]) -> None:
    numbers = [int(a) for a in argv if not a.startswith("--")]
    nq, nd, max_len = numbers + [3, 70, 40][len(numbers):]
    rng = np.random.default_rng(11)
    queries = random_proteins(rng, nq, max_len)
    database = random_proteins(rng, nd, max_len)
    database[nd // 2] = queries[0]  # one certain hit
    q, db = load_queries(queries), load_database(database)
    every = len(db)

    def on_gpu():
        return scan.score_pass(q, db, default_scoring(), every, "cuda", None)

    cpu = scan.score_pass(q, db, default_scoring(), every, "cpu", None)
    runs = [on_gpu()]  # two sequences a lane, 16-bit halves
    scores.LONG_SEQUENCE = max_len // 2  # the longer half of the sequences a block each
    runs.append(on_gpu())
    scores.PACKED = False
    runs.append(on_gpu())  # 32-bit cells
    scores.PACKED = True
    search_scores.SPAN16 = 64  # as if halves held little: most pairs scored again in 32 bits
    runs.append(on_gpu())
    search_scores.SPAN16 = 1 << 15
    scores.LONG_SEQUENCE = 2048
    scores.SCRATCH_BYTES = 1  # one query a launch
    scan.CHUNK_RESIDUES = max(1, db.residues // 3)  # and several chunks
    runs.append(on_gpu())
    for qi in range(len(q)):
        for other in (run[qi] for run in runs):
            assert np.array_equal(cpu[qi].scores, other.scores), (qi, cpu[qi].scores, other.scores)
            assert np.array_equal(cpu[qi].records, other.records), qi
    if "--report" in argv:
        a = readalign.search(q, db, backend="cpu")
        b = readalign.search(q, db, backend="cuda")
        for name in readalign.SearchHits.columns:
            assert np.array_equal(a[name], b[name]), name
    print(f"{len(q)} queries x {len(db)} sequences: scores identical on CPU and GPU")


if __name__ == "__main__":
    main(sys.argv[1:])
