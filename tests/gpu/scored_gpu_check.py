"""Scored alignment on the GPU against the CPU, pair for pair and CIGAR for CIGAR.

Runs on a GPU or under the simulator (``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/gpu/scored_gpu_check.py [PAIRS] [MAX_LEN]

Random DNA pairs (reads drawn from their windows with errors and foreign tails,
or unrelated; N included; lengths 0..MAX_LEN) and protein pairs, every mode,
several scorings (local mode also with a clip penalty); a few pairs past the GPU's fast
path when MAX_LEN allows.
Where parasail is installed, the GPU's DNA scores must also equal parasail's
(``nw``/``sg_dx``/``sw``, N scoring as a mismatch against everything), computed
on every core.
"""

from __future__ import annotations

import multiprocessing as mp
import os
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


PARASAIL_FN = {"global": "nw", "infix": "sg_dx", "local": "sw"}
_WORK: dict = {}
SKIP = -(1 << 40)
"""parasail's score of a pair with an empty side (parasail takes no empty sequence)."""


def _parasail_chunk(bounds: tuple[int, int]) -> list[int]:
    import parasail

    reads, windows, mode, (match, mismatch, go, ge) = _WORK["args"]
    matrix = parasail.matrix_create("ACGTN", match, -mismatch)
    for x in range(5):
        matrix.set_value(4, x, -mismatch)
        matrix.set_value(x, 4, -mismatch)
    fn = getattr(parasail, PARASAIL_FN[mode])
    return [fn(reads[i].decode(), windows[i].decode(), go + ge, ge, matrix).score
            if reads[i] and windows[i] else SKIP for i in range(*bounds)]


def parasail_scores(reads, windows, mode: str, scoring: tuple) -> np.ndarray | None:
    """parasail's score of every pair on every core (None where parasail is not installed).

    Pairs with an empty read or window get :data:`SKIP`: parasail takes no empty sequence.
    """
    try:
        import parasail  # noqa: F401
    except ImportError:
        return None
    _WORK["args"] = (reads, windows, mode, scoring)
    step = max(1, len(reads) // (8 * (os.cpu_count() or 1)))
    chunks = [(lo, min(lo + step, len(reads))) for lo in range(0, len(reads), step)]
    with mp.get_context("fork").Pool() as pool:
        parts = pool.map(_parasail_chunk, chunks)
    return np.array([s for part in parts for s in part], np.int64)


def same(a, b, label: str) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y), (label, name)


def same_inputs(reads: list, windows: list) -> None:
    """Every input form reaches the GPU as the same letters: lists of ``str`` (read in place),
    ``S`` arrays (a fixed-width grid) and object arrays (the general packing path)."""
    args = dict(mode="local", scoring=readalign.Scoring(1, 4, 6, 1), k=16)
    cpu = readalign.align(reads, windows, backend="cpu", **args)
    forms = {"lists of str": [[x.decode() for x in s] for s in (reads, windows)],
             "S arrays": [np.array(s, dtype="S") for s in (reads, windows)],
             "object arrays": [np.array(s, dtype=object) for s in (reads, windows)]}
    for label, (q, t) in forms.items():
        same(readalign.align(q, t, backend="cuda", **args), cpu, f"dna {label}")


PACKED_PAIRS = [0]
"""Pairs the packed local pass (two per thread) aligned in this run."""


def count_packed_pairs() -> None:
    """Count the pairs of every launch of a packed forward kernel: the kernel that ran, not
    the batch's admission (a launch that took the 32-bit kernel instead counts nothing)."""
    from readalign.engine.gpu import scored

    launch = scored.launch

    def counted(kernel, grid, block, stream, *args):
        if getattr(kernel, "py_func", kernel).__name__.startswith("scored_forward2_kernel"):
            PACKED_PAIRS[0] += args[-1][0].shape[0]  # outs: score, one element per pair
        return launch(kernel, grid, block, stream, *args)

    scored.launch = counted


def packed_pairs(reads: list, windows: list) -> None:
    """Local DNA pairs of at most 250 bases, the packed pass's batches, against the CPU."""
    short = [i for i, (r, w) in enumerate(zip(reads, windows, strict=True))
             if len(r) <= 250 and len(w) <= 250]
    q, t = [reads[i] for i in short], [windows[i] for i in short]
    for scoring in (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(1, 4, 6, 1, clip_penalty=5)):
        for k in (8, 16):
            args = dict(mode="local", scoring=scoring, k=k)
            same(readalign.align(q, t, backend="cuda", **args),
                 readalign.align(q, t, backend="cpu", **args), f"packed {scoring} k={k}")


def main(count: int, max_len: int) -> None:
    count_packed_pairs()
    rng = np.random.default_rng(13)
    reads, windows = dna_pairs(rng, count, max_len)
    if max_len >= 200:
        long_w = b"ACGT" * 300
        reads += [long_w[5:1150], b"ACGT" * 10]
        windows += [long_w, long_w]
    checked = 0
    # (1, 4, 1000, 150): batches of short pairs hold values down to about -29,000 in the
    # GPU's int16 boundaries, longer ones take the int32 kernels, as (1, 4, 1000, 1000)
    # always does (kernels.scored_quadrant.fits_int16)
    for values in ((1, 4, 6, 1), (2, 3, 0, 2), (1, 4, 1000, 150), (1, 4, 1000, 1000)):
        scoring = readalign.Scoring(*values)
        for mode in ("global", "infix", "local"):
            for k in (8, 16):
                args = dict(mode=mode, scoring=scoring, k=k, eqx=k == 8)
                gpu = readalign.align(reads, windows, backend="cuda", **args)
                cpu = readalign.align(reads, windows, backend="cpu", **args)
                same(gpu, cpu, f"dna {scoring} {mode} k={k}")
                want = parasail_scores(reads, windows, mode, values) if k == 8 else None
                if want is not None:
                    both = want != SKIP
                    bad = np.flatnonzero(both & (gpu.score != want))
                    assert bad.size == 0, (f"parasail {values} {mode}", bad[:5])
                    checked += int(both.sum())
    same_inputs(reads, windows)
    packed_pairs(reads, windows)
    clipped = readalign.Scoring(1, 4, 6, 1, clip_penalty=5)  # the BAM stage's default (sr)
    for k in (8, 16):
        gpu = readalign.align(reads, windows, mode="local", scoring=clipped, backend="cuda", k=k)
        cpu = readalign.align(reads, windows, mode="local", scoring=clipped, backend="cpu", k=k)
        same(gpu, cpu, f"dna {clipped} local k={k}")
    preads, pwindows = protein_pairs(rng, max(count // 4, 8), min(max_len, 300))
    blosum = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    for mode in ("global", "infix", "local"):
        gpu = readalign.align(preads, pwindows, mode=mode, scoring=blosum, backend="cuda")
        cpu = readalign.align(preads, pwindows, mode=mode, scoring=blosum, backend="cpu")
        same(gpu, cpu, f"protein {mode}")
    print(f"scored alignments identical on CPU and GPU ({len(reads)} DNA pairs, "
          f"{len(preads)} protein pairs, lengths 0-{max_len}); "
          f"{checked} DNA scores equal parasail's; {PACKED_PAIRS[0]} pairs took the packed pass")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(*(args + [40, 70][len(args):]))
