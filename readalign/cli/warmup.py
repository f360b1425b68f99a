"""Compile every kernel a run could need into the compile cache, once, and say how long it took.

Run it once where the cache folder is shared (a cluster's nodes, a container
image, a Snakemake workflow before its jobs), so that later processes load the
compiled code instead of each compiling it. The cache folder is
READALIGN_CACHE_DIR when set, else NUMBA_CACHE_DIR, else __pycache__ folders
beside readalign's sources, or a folder of the user's own
($XDG_CACHE_HOME/readalign or ~/.cache/readalign) where the sources are
read-only. Each step's time and the part of it spent compiling go to stdout; a
step already cached only loads its code. Running it again compiles nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple, TextIO

from ..runtime.backends import BACKENDS

NAME = "warmup"
HELP = "compile the kernels into the compile cache once (for clusters and workflows)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``readalign warmup``."""
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="the kernels to compile: cpu, cuda, or auto (the CPU's, and the GPU's "
                        "when there is one)")


def run(args: argparse.Namespace) -> int:
    """Run the warm-up (loaded here so that ``--help`` does not load numba)."""
    from ..kernels import compile_notice  # noqa: F401  # before anything can compile

    warm_up(args.backend, sys.stdout)
    return 0


# --- the steps: every path that compiles code of its own
READ_LENGTHS = (30, 80, 150, 1100)
"""With the default pad of 20 a side the windows are 70, 120, 190 and 1,140 long: the GPU's
quadrant size classes with CIGARs (<= 72, <= 128, longer) and the CPU's long pairs."""
READS_PER_STEP = 8
CONTIG = 4000
PRESETS = ("sr", "edit")


class Step(NamedTuple):
    """One piece of work that compiles what it runs, named for the report."""

    name: str
    work: Callable[[], object]


def _dna(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ACGT") for _ in range(n))


def _mutated(rng: random.Random, seq: str) -> str:
    """``seq`` with a substitution, an insertion and a deletion (tracebacks take every branch)."""
    s = list(seq)
    s[len(s) // 3] = "A" if s[len(s) // 3] != "A" else "C"
    s.insert(len(s) // 2, "G")
    del s[2 * len(s) // 3]
    return "".join(s)


_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def write_inputs(folder: Path, length: int, seed: int = 47) -> tuple[Path, Path, Path]:
    """A reference, ``READS_PER_STEP`` reads of ``length`` (half from the reverse strand) and
    their candidates (TSV, the true window and a decoy): the files of one ``align`` run."""
    rng = random.Random(seed + length)
    contig = _dna(rng, CONTIG)
    ref, reads, cands = folder / "ref.fa", folder / f"reads{length}.fq", folder / f"cands{length}.tsv"
    ref.write_text(f">warm\n{contig}\n")
    with reads.open("w") as fq, cands.open("w") as tsv:
        for i in range(READS_PER_STEP):
            start = rng.randrange(0, CONTIG - length)
            seq = _mutated(rng, contig[start:start + length])
            strand = "+-"[i % 2]
            if strand == "-":
                seq = seq.translate(_COMPLEMENT)[::-1]
            fq.write(f"@r{i}\n{seq}\n+\n{'I' * len(seq)}\n")
            decoy = rng.randrange(0, CONTIG - length)
            tsv.write(f"r{i}\twarm\t{start}\t{start + length}\t{strand}\n")
            tsv.write(f"r{i}\twarm\t{decoy}\t{decoy + length}\t{strand}\n")
    return ref, reads, cands


def _pipeline_step(folder: Path, backend: str, preset: str, length: int) -> Step:
    """An ``align`` run of one preset on reads of one length."""

    def work() -> object:
        from ..bam.options import Options, read_scoring
        from ..bam.run import run

        ref, reads, cands = write_inputs(folder, length)
        out = folder / f"{preset}{length}.bam"
        opts = Options(reference=str(ref), reads=str(reads), candidates=str(cands), output=str(out),
                       threads=2, backend=backend, scoring=read_scoring(preset))
        return run(opts)

    return Step(f"align --preset {preset}, {length} bp reads", work)


def _api_steps(backend: str) -> Iterator[Step]:
    """The Python API's paths that ``align`` runs do not take."""
    from ..api import align, edit_distance
    from ..engine.scoring import Scoring
    from ..words.cdist import cdist

    rng = random.Random(47)
    windows = [_dna(rng, 120) for _ in range(READS_PER_STEP)]
    reads = [_mutated(rng, w[20:100]) for w in windows]
    words = [_dna(rng, 12) for _ in range(READS_PER_STEP)]
    yield Step("readalign.align, distances only",
               lambda: align(reads, windows, cigar=False, backend=backend))
    yield Step("readalign.align, global",
               lambda: align(reads, windows, mode="global", backend=backend))
    for mode in ("global", "local"):
        for cigar in (True, False):
            yield Step(f"readalign.align, scored {mode}{'' if cigar else ', scores only'}",
                       lambda m=mode, c=cigar: align(
                           reads, windows, mode=m, cigar=c, scoring=Scoring(),
                           backend=backend))
    yield Step("readalign.edit_distance", lambda: edit_distance(words, words[::-1],
                                                                          backend=backend))
    yield Step("readalign.edit_distance, long pairs",
               lambda: edit_distance(reads, windows, backend=backend))
    yield Step("readalign.cdist", lambda: cdist(words, words, backend=backend))
    yield _search_step(rng, backend)


def _search_step(rng: random.Random, backend: str) -> Step:
    """Protein search: its score kernel, and tracebacks short and past the fast path."""
    from ..dbsearch.api import search

    amino = "ACDEFGHIKLMNPQRSTVWY"
    queries = ["".join(rng.choice(amino) for _ in range(n)) for n in (60, 1100)]
    database = ["".join(rng.choice(amino) for _ in range(rng.randint(20, 300)))
                for _ in range(READS_PER_STEP)] + queries
    return Step("readalign.search, protein queries against a database",
                lambda: search(queries, database, backend=backend))


def steps(folder: Path, backend: str) -> Iterator[Step]:
    """Every step for ``backend`` ("cpu" or "cuda"), inputs written under ``folder``."""
    for preset in PRESETS:
        for length in READ_LENGTHS:
            yield _pipeline_step(folder, backend, preset, length)
    yield from _api_steps(backend)


def backends_for(choice: str) -> list[str]:
    """The backends ``--backend`` asks for: ``auto`` is the CPU, and the GPU when one can run
    the kernels; ``cuda`` without a GPU raises :class:`~readalign.BackendUnavailableError`."""
    from ..runtime import backends

    if choice == "cpu":
        return ["cpu"]
    if choice == "cuda":
        return [backends.resolve("cuda")]
    return ["cpu", "cuda"] if backends.cuda_status()[0] else ["cpu"]


def warm_up(choice: str, report: TextIO) -> float:
    """Run every step on each backend of ``choice``, one report line per step (its wall time
    and the part of it spent compiling); return the seconds spent compiling in all."""
    from ..kernels.cache_dir import apply
    from ..kernels.compile_notice import compile_seconds

    where = apply().path or "__pycache__ folders beside readalign's sources"
    report.write(f"warmup: compile cache: {where}\n")
    begin, compiled = time.perf_counter(), compile_seconds()
    with tempfile.TemporaryDirectory(prefix="readalign-warmup-") as tmp:
        for backend in backends_for(choice):
            for step in steps(Path(tmp), backend):
                t0, c0 = time.perf_counter(), compile_seconds()
                step.work()
                report.write(f"warmup: {backend}: {step.name}: {time.perf_counter() - t0:.1f} s "
                             f"({compile_seconds() - c0:.1f} s compiling)\n")
                report.flush()
    total = compile_seconds() - compiled
    report.write(f"warmup: done in {time.perf_counter() - begin:.1f} s, {total:.1f} s of it "
                 "compiling\n")
    return total
