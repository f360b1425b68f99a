"""The align pipeline: reads + candidates + reference in, a BAM out, in bounded memory.

Reads are taken in batches; the candidates of those reads (grouped by read,
in the order of the reads file) are matched to them as both files stream.
Each batch is built into pairs, aligned in one engine call, reduced to the
best candidate per read and packed into BAM records. Every stage has a
thread of its own, so five batches can be in flight: candidates and reads
are parsed ahead, pairs are built for the next batch, the calling thread
runs the kernel, and the previous batches are assembled into records and
compressed (the BGZF writer's thread pool); each stage's compiled loops
run on every core.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numba
import numpy as np

from ..engine.batching import AUTO_K, align_with
from ..engine.job import Job
from ..engine.packing import Packed
from ..engine.result import AlignResult
from ..errors import InputError
from ..io._text import display
from ..io.candidates import CandidateChunk, iter_candidates
from ..io.reads import ReadBatch, iter_reads
from ..io.reference import Reference
from ..kernels.compile_notice import compile_seconds
from ..runtime import backends
from ..runtime.host_memory import available_memory
from ..runtime.outfiles import write_bytes
from ..runtime.progress import Progress
from ..runtime.stages import Consumer, Inline, concurrent_launches_ok, numba_threads, prefetch
from .bgzf import compressor, deflate_threads
from .defaults import BATCH_BYTES_PER_READ, DEFAULT_BATCH, DEFAULT_PAD
from .formats import output_format
from .header import header_bytes, header_text, parse_rg
from .output import Output
from .pairs import Pairs, build_pairs, find_name, match_reads, repeated_names
from .presets import SR, ReadScoring
from .records import RecordScratch, pack_records
from .select import choose

log = logging.getLogger("readalign")

STAGES = ("read", "pairs", "align", "assemble", "write")
DEFAULT_COMPRESSION = 1
"""BGZF level of the BAM unless asked otherwise.

This stage's BAM usually goes on to a sort or merge. Level 1 writes 2M
records with about half the CPU of zlib's default (6) for a file 7% larger;
with htslib's zlib deflating, the whole stage runs about 1.5x faster
(benchmarks/RESULTS.md).
"""
GPU_LOOP_THREADS = 2
"""Threads for the calling thread's own parallel regions while the kernels run on the GPU
(never more than the run's ``--threads``).

There the calling thread only does bookkeeping between launches (offsets, slots,
placing results: a few hundred thousand elements a batch); the large copies run on
the staging worker, which keeps every core. A region of all cores, started while
the other stages keep them busy, waits for its whole team: on the H100 host, 2M
reads, runs alternating in one process, 2 threads gave 1.39-1.43M reads/s, 1 thread
1.34M, all 16 1.27-1.31M (benchmarks/RESULTS.md)."""
STAGE_SHARE = 2
"""With the GPU aligning, the other stages' parallel regions take half of ``--threads`` each
(at least 4, at most all): four stages each starting regions of every core kept more threads
runnable than cores, and a region waits for its last thread. On the H100 host, 2M reads,
16 threads, runs alternating in one process: 8 threads a stage 1.74M reads/s (median of 8)
against 1.66M with 16 (9), ahead in each of the 8 neighbouring pairs; 4 threads let the
assemble stage bound the run (benchmarks/RESULTS.md, 2026-11-26, ``b00abc9``)."""
_CAND_DEPTH = 8
"""Candidate chunks parsed ahead of the reads (a batch of 500,000 reads with two
candidates each takes about 8)."""


@dataclass
class Options:
    """Everything ``readalign align`` needs."""

    reference: str
    reads: str
    candidates: str
    output: str
    candidates_format: str | None = None
    pad: int = DEFAULT_PAD
    max_distance: int | None = None
    secondary: bool = False
    eqx: bool = False
    sort: bool = False
    output_format: str | None = None  # "bam", "sam" or "cram"; None: from the output's name
    rg: str | None = None
    threads: int = 1
    compression_level: int | None = None  # BGZF level 0-9; None: DEFAULT_COMPRESSION
    bgzf_writer: str = "auto"  # "auto", "isal" or "htslib" (pipeline.bgzf.WRITERS)
    backend: str = "auto"
    batch_size: int = DEFAULT_BATCH
    progress: bool = False
    allow_empty: bool = False  # empty reads/candidates files give a header-only BAM
    command_line: str = "readalign align"
    version: str = ""
    summary_json: str | None = None  # also write the summary here (put in place with the output)
    scoring: ReadScoring = SR  # --preset and -A/-B/-O/-E/-L/-T


@dataclass
class Summary:
    """Counts and timings of a run (printed to stderr, optionally saved as JSON)."""

    reads_in: int = 0
    aligned: int = 0
    unaligned: int = 0
    secondary: int = 0
    pairs: int = 0
    pairs_aligned: int = 0
    records: int = 0
    repeated_names: int = 0  # reads named like the read before them (written unmapped)
    scoring: str = ""  # the scores in effect, as options
    backend: str = ""
    deflate: str = ""
    seconds: float = 0.0
    compile_seconds: float = 0.0  # of ``seconds``: numba compiling (a first run on a machine)
    reads_per_second: float = 0.0  # over ``seconds`` less ``compile_seconds``
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    """Each stage's time while nothing was compiling."""

    def text(self) -> str:
        """A few lines for stderr."""
        st = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_seconds.items())
        rate = f"{self.reads_per_second:,.0f} reads/s"
        if self.compile_seconds > 0:
            took = (f"{self.seconds:.2f}s, {self.compile_seconds:.2f}s of it compiling the kernels "
                    f"for this machine (once: later runs load them) ({rate} without the compiling; "
                    f"stages without it: {st})")
        else:
            took = f"{self.seconds:.2f}s ({rate}; {st})"
        return (f"reads in {self.reads_in}, aligned {self.aligned}, unaligned {self.unaligned}, "
                f"secondary {self.secondary}; pairs {self.pairs}, aligned {self.pairs_aligned}; "
                f"scoring {self.scoring}; backend {self.backend}; BGZF deflate {self.deflate}; "
                f"{took}")

    def json(self) -> str:
        """The summary as a JSON document."""
        return json.dumps(asdict(self), indent=2) + "\n"


def _finish_summary(summary: Summary, start: float, compiled_before: float) -> None:
    """The run's time and speed; ``compiled_before``: :func:`compile_seconds` at its start."""
    summary.seconds = time.perf_counter() - start
    summary.compile_seconds = round(min(compile_seconds() - compiled_before, summary.seconds), 4)
    working = summary.seconds - summary.compile_seconds
    summary.reads_per_second = summary.reads_in / max(working, 1e-9)
    summary.stage_seconds = {k: round(v, 4) for k, v in summary.stage_seconds.items()}


def _clock() -> tuple[float, float]:
    """Now, and the time spent compiling so far: a stage's start."""
    return time.perf_counter(), compile_seconds()


def _since(start: tuple[float, float]) -> float:
    """Seconds since ``start`` (:func:`_clock`) during which nothing was compiling: a first run's
    compiles would otherwise land in whichever stage first calls each function, or waits for
    the thread that compiles it."""
    return time.perf_counter() - start[0] - (compile_seconds() - start[1])


class CandidateStream:
    """Candidates in file order, taken read batch by read batch."""

    def __init__(self, chunks: Iterator[CandidateChunk], path: str, reads_path: str) -> None:
        self._chunks = chunks
        self.path, self.reads_path = path, reads_path
        self.pending: CandidateChunk | None = None
        self.eof = False
        self.unit = "record" if path.lower().endswith((".sam", ".bam")) else "line"

    def _fill(self) -> bool:
        while self.pending is None or len(self.pending) == 0:
            if self.eof:
                return False
            nxt = next(self._chunks, None)
            if nxt is None:
                self.eof = True
                return False
            self.pending = nxt
        return True

    def take(self, batch: ReadBatch) -> tuple[CandidateChunk | None, np.ndarray]:
        """The candidates of ``batch``'s reads and the read index of each."""
        got: list[CandidateChunk] = []
        idx: list[np.ndarray] = []
        i = 0
        while self._fill():
            pend = self.pending
            where, k, i = match_reads(batch.names, batch.name_off, pend.names, pend.name_off, i)
            if k:
                got.append(pend.take(0, k))
                idx.append(where[:k])
                self.pending = pend.take(k, len(pend))
            if k < len(pend):
                self._check_order(batch)
                break
        if not got:
            return None, np.zeros(0, np.int64)
        return CandidateChunk.concat(got), np.concatenate(idx)

    def _check_order(self, batch: ReadBatch) -> None:
        pend = self.pending
        if find_name(batch.names, batch.name_off, pend.names, 0, pend.name_off[1]) >= 0:
            raise InputError(
                f"{display(self.path)}: {self.unit} {int(pend.line[0])}: candidates of read "
                f"'{pend.name(0)}' are not grouped by read in the order of "
                f"{display(self.reads_path)}")

    def finish(self) -> None:
        """Fail if candidates remain after the last read."""
        if self._fill():
            pend = self.pending
            raise InputError(
                f"{display(self.path)}: {self.unit} {int(pend.line[0])}: read '{pend.name(0)}' "
                f"is not in {display(self.reads_path)} (or candidates are not in the order of "
                "the reads)")


def stage_threads(threads: int, backend: str) -> int:
    """Threads of each stage thread's parallel regions (:data:`STAGE_SHARE`); the CPU
    backend's stages keep the run's threads."""
    if backend == "cpu":
        return threads
    return min(threads, max(4, threads // STAGE_SHARE))


@dataclass
class Work:
    """One batch on its way through the stages."""

    batch: ReadBatch
    pairs: Pairs
    res: AlignResult | None = None


Aligner = Callable[[Packed, Packed, Job, str, int], AlignResult]
"""The kernel stage: ``align_with``'s signature, called with the backend resolved once per run
(benchmarks substitute a stand-in)."""


def _no_candidates() -> CandidateChunk:
    return CandidateChunk(np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.int32),
                          np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int8),
                          np.zeros(0, np.int64), np.zeros(0, np.uint8))


class RepeatedNames:
    """Reads named like the read before them: counted, and the first one remembered for the log."""

    def __init__(self) -> None:
        self.count = 0
        self.first = ""
        self._last = b""

    def add(self, batch: ReadBatch) -> None:
        """Count the repeats in ``batch`` (including one across the previous batch's end)."""
        if len(batch) == 0:
            return
        name0 = bytes(batch.names[batch.name_off[0]:batch.name_off[1]])
        if name0 == self._last:
            self.count += 1
            self.first = self.first or (f"'{name0.decode('latin-1')}', read {batch.first + 1}")
        n, i = repeated_names(batch.names, batch.name_off)
        if n:
            self.count += int(n)
            self.first = self.first or f"'{batch.name(int(i))}', read {batch.first + int(i) + 1}"
        self._last = bytes(batch.names[batch.name_off[-2]:batch.name_off[-1]])

    def warn(self, reads_path: str) -> None:
        """One warning for the whole run, if any read repeated its predecessor's name."""
        if self.count:
            log.warning("%s: %d read(s) have the same name as the read before them (first: %s); "
                        "all candidates of a name go to its first read and the repeats are "
                        "written unmapped", display(reads_path), self.count, self.first)


def read_stage(opts: Options, ref: Reference, st: dict[str, float], repeats: RepeatedNames,
               ahead: Callable[..., Iterator]) -> Iterator[tuple[ReadBatch, CandidateChunk,
                                                                np.ndarray]]:
    """The read stage as :func:`run` wires it: the candidates produced by ``ahead(items, name,
    depth)`` (``_CAND_DEPTH`` chunks ahead), matched to each batch of reads as it is parsed."""
    chunks = iter_candidates(opts.candidates, ref, opts.candidates_format, opts.allow_empty)
    cands = CandidateStream(ahead(chunks, "candidates", _CAND_DEPTH), opts.candidates, opts.reads)
    batches = iter_reads(opts.reads, opts.batch_size, opts.allow_empty)
    return _read_stage(batches, cands, st, repeats, opts.batch_size)


def _next_batch(batches: Iterator[ReadBatch], batch_size: int) -> ReadBatch | None:
    """The next batch, or None at the end; memory that runs out while it is allocated is the
    one-line error of ``--batch-size``."""
    try:
        return next(batches, None)
    except MemoryError as exc:
        raise InputError(f"--batch-size {batch_size:,}: out of memory for a batch ({exc}); "
                         "choose a smaller --batch-size") from None


def _read_stage(batches: Iterator[ReadBatch], cands: CandidateStream, st: dict[str, float],
                repeats: RepeatedNames,
                batch_size: int) -> Iterator[tuple[ReadBatch, CandidateChunk, np.ndarray]]:
    """Parse batches and match their candidates (stage read)."""
    while True:
        t0 = _clock()
        batch = _next_batch(batches, batch_size)
        if batch is None:
            cands.finish()
            return
        repeats.add(batch)
        chunk, read_idx = cands.take(batch)
        st["read"] += _since(t0)
        yield batch, chunk if chunk is not None else _no_candidates(), read_idx


def _pairs_stage(items: Iterator[tuple[ReadBatch, CandidateChunk, np.ndarray]], ref: Reference,
                 opts: Options, st: dict[str, float]) -> Iterator[Work]:
    """Build each batch's oriented reads and padded windows (stage pairs)."""
    for batch, chunk, read_idx in items:
        t0 = _clock()
        pairs = build_pairs(batch.seq, batch.seq_off, read_idx, chunk.contig, chunk.start,
                            chunk.end, chunk.strand, ref, opts.pad, chunk.mapq)
        st["pairs"] += _since(t0)
        yield Work(batch, pairs)


def assemble(work: Work, ref: Reference, opts: Options, summary: Summary,
             rg_id: np.ndarray, scratch: RecordScratch | None = None) -> np.ndarray:
    """Best candidate per read, MAPQ, and the batch's BAM records (stage assemble)."""
    batch, pairs, res = work.batch, work.pairs, work.res
    n = len(batch)
    sel = choose(n, pairs, res, opts.scoring, opts.max_distance)
    buf, nrec, nsec = pack_records(batch, pairs, res, sel, ref, opts.secondary, rg_id, scratch)
    aligned = int((sel.best >= 0).sum())
    summary.reads_in += n
    summary.aligned += aligned
    summary.unaligned += n - aligned
    summary.secondary += int(nsec)
    summary.records += int(nrec)
    summary.pairs += len(pairs)
    summary.pairs_aligned += int(sel.valid.sum())
    return buf


def _assemble_stage(writer: Consumer | Inline, ref: Reference, opts: Options, summary: Summary,
                    rg_id: np.ndarray,
                    progress: Progress) -> Callable[[Work], None]:
    """The consumer of aligned batches: assemble records, hand them to the BGZF writer."""
    st = summary.stage_seconds
    scratch = RecordScratch()  # one thread assembles every batch, in turn

    def assemble_batch(work: Work) -> None:
        t0 = _clock()
        buf = assemble(work, ref, opts, summary, rg_id, scratch)
        st["assemble"] += _since(t0)
        writer.put(buf)
        progress.update(summary.reads_in - progress.done, f" ({summary.aligned:,} aligned)")

    return assemble_batch


def _write_stage(out: Output, st: dict[str, float]) -> Callable[[np.ndarray], None]:
    """The consumer of record buffers: the BGZF writer compresses them on its thread pool (stage write)."""

    def write(buf: np.ndarray) -> None:
        t0 = _clock()
        out.writer.write(buf)
        st["write"] += _since(t0)

    return write


def _check(opts: Options) -> None:
    if opts.pad < 0:
        raise InputError(f"--pad must be >= 0, got {opts.pad}")
    if opts.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {opts.batch_size}")
    _check_batch_memory(opts.batch_size)
    if opts.compression_level is not None and not 0 <= opts.compression_level <= 9:
        raise InputError(f"--compression-level must be 0-9, got {opts.compression_level}")
    try:
        compressor(opts.bgzf_writer)
    except ValueError as exc:
        raise InputError(f"--bgzf-writer: {exc}") from None


def _check_batch_memory(batch_size: int) -> None:
    """Refuse a batch size whose estimate (:data:`~.defaults.BATCH_BYTES_PER_READ` a read)
    exceeds the memory available, before the first batch is allocated."""
    room = available_memory()
    need = batch_size * BATCH_BYTES_PER_READ
    if room is not None and need > room:
        raise InputError(f"--batch-size {batch_size:,}: a batch needs about {need / 1e9:,.1f} GB "
                         f"of memory ({BATCH_BYTES_PER_READ:,} bytes a read), more than the "
                         f"{room / 1e9:,.1f} GB available; at most "
                         f"{room // BATCH_BYTES_PER_READ:,} reads a batch here")


def _free_gpu_memory(backend: str) -> None:
    """Give back the GPU buffers the run kept (numba's CUDA support is loaded only when used)."""
    if backend == "cuda":
        from ..runtime.gpu_memory import free_gpu_memory

        free_gpu_memory()


def run(opts: Options, aligner: Aligner | None = None) -> Summary:
    """Run the whole pipeline; the output appears only if everything succeeded.

    Reading, pair building, alignment, assembly and compression run
    concurrently, each on its own batch (see the module docstring).
    ``aligner`` replaces the kernel stage (benchmarks time the rest with a stand-in).
    """
    start, compiled_before = time.perf_counter(), compile_seconds()
    summary = Summary()
    progress = Progress(None, "reads", enabled=opts.progress, prefix="readalign: ")
    rg = parse_rg(opts.rg)
    _check(opts)
    align = aligner or align_with
    concurrent = concurrent_launches_ok()
    main_threads = numba.get_num_threads()
    numba_threads(opts.threads)
    ref = Reference(opts.reference)
    backend = backends.resolve(opts.backend)
    summary.backend = backend
    summary.scoring = opts.scoring.describe()
    level = DEFAULT_COMPRESSION if opts.compression_level is None else opts.compression_level
    summary.deflate = compressor(opts.bgzf_writer)
    if summary.deflate == "zlib" and level > 0:
        why = ("chosen with --bgzf-writer htslib" if opts.bgzf_writer == "htslib"
               else "the isal package (ISA-L), which compresses about 10x faster, is not installed")
        log.info("BGZF compression runs on htslib's zlib: %s (docs/guide/bam-stage.md: 'BGZF writers')", why)
    out = Output(opts.output, output_format(opts.output, opts.output_format), opts.sort,
                 opts.threads, level, opts.bgzf_writer,
                 deflate_threads(opts.threads, opts.bgzf_writer), opts.reference)
    consumers: list[Consumer | Inline] = []
    feeds: list[Generator] = []  # background producers, each consuming the one after it
    try:
        progress.start()
        text = header_text(ref.names, ref.lengths, opts.version, opts.command_line,
                           rg[0] if rg else None)
        out.writer.write(header_bytes(text, ref.names, ref.lengths))
        st = summary.stage_seconds

        threads = stage_threads(opts.threads, backend)

        def ahead(items: Iterator, name: str, depth: int = 1) -> Iterator:
            """``items`` produced in a thread of their own when stages may overlap."""
            if not concurrent:
                return items
            feed = prefetch(items, threads, depth=depth, name=f"readalign-{name}")
            feeds.insert(0, feed)
            return feed

        def behind(fn: Callable[[Any], None], name: str, depth: int) -> Consumer | Inline:
            """``fn`` applied in order in a thread of its own when stages may overlap."""
            consumer = (Consumer(fn, threads, depth, name=f"readalign-{name}") if concurrent
                        else Inline(fn))
            consumers.append(consumer)
            return consumer

        repeats = RepeatedNames()
        reads = ahead(read_stage(opts, ref, st, repeats, ahead), "read")
        work = ahead(_pairs_stage(reads, ref, opts, st), "pairs")
        writer = behind(_write_stage(out, st), "write", depth=1)
        rg_id = np.frombuffer((rg[1] if rg else "").encode(), np.uint8)  # parsed once per run
        assembler = behind(_assemble_stage(writer, ref, opts, summary, rg_id, progress), "assemble",
                           depth=1)
        if backend != "cpu":
            numba_threads(min(opts.threads, GPU_LOOP_THREADS))
        try:  # the GPU backends keep one set of device buffers for the whole run
            for item in work:
                t = _clock()
                q, w = item.pairs.q, item.pairs.t
                job = opts.scoring.job(opts.eqx, AUTO_K, q.lengths, w.lengths)
                item.res = align(q, w, job, backend, opts.threads)
                st["align"] += _since(t)
                assembler.put(item)
        finally:
            _free_gpu_memory(backend)
        for consumer in reversed(consumers):  # the assembler first, then the writer
            consumer.close()
        t = _clock()
        out.close()
        st["write"] += _since(t)
        repeats.warn(opts.reads)
        summary.repeated_names = repeats.count
        _finish_summary(summary, start, compiled_before)
        if opts.summary_json:
            out.add(write_bytes(opts.summary_json, summary.json().encode()))
        out.commit()
    except BaseException:
        for consumer in reversed(consumers):
            consumer.abort()
        out.fail()
        raise
    finally:
        for feed in feeds:  # stop the producer threads, the last stage's first
            with contextlib.suppress(ValueError):  # still run by a thread blocked on input
                feed.close()
        numba.set_num_threads(main_threads)
        ref.close()
        progress.close()
    return summary
