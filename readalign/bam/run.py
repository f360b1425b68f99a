"""The BAM stage's runner: reads + candidates + reference in, a BAM out, in bounded memory.

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
import logging
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from ..engine.batching import AUTO_K, align_with
from ..engine.job import Job
from ..engine.packing import Packed
from ..engine.result import AlignResult
from ..io.candidates import CandidateChunk
from ..io.reads import ReadBatch
from ..io.reference import Reference
from ..runtime import backends
from ..runtime.outfiles import write_bytes
from ..runtime.progress import Progress
from ..runtime.stages import Consumer, Inline, concurrent_launches_ok, numba_threads, prefetch
from .bgzf import compressor, deflate_threads
from .defaults import DEFAULT_COMPRESSION
from .formats import output_format
from .header import header_bytes, header_text, parse_rg
from .options import Options, check
from .output_file import Output
from .pairs import Pairs, build_pairs
from .reading import RepeatedNames, read_stage
from .records import RecordScratch, pack_records
from .select import choose
from .summary import Summary, clock, since

log = logging.getLogger("readalign")

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


def _pairs_stage(items: Iterator[tuple[ReadBatch, CandidateChunk, np.ndarray]], ref: Reference,
                 opts: Options, st: dict[str, float]) -> Iterator[Work]:
    """Build each batch's oriented reads and padded windows (stage pairs)."""
    for batch, chunk, read_idx in items:
        t0 = clock()
        pairs = build_pairs(batch.seq, batch.seq_off, read_idx, chunk.contig, chunk.start,
                            chunk.end, chunk.strand, ref, opts.pad, chunk.mapq)
        st["pairs"] += since(t0)
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
        t0 = clock()
        buf = assemble(work, ref, opts, summary, rg_id, scratch)
        st["assemble"] += since(t0)
        writer.put(buf)
        progress.update(summary.reads_in - progress.done, f" ({summary.aligned:,} aligned)")

    return assemble_batch


def _write_stage(out: Output, st: dict[str, float]) -> Callable[[np.ndarray], None]:
    """The consumer of record buffers: the BGZF writer compresses them on its thread pool (stage write)."""

    def write(buf: np.ndarray) -> None:
        t0 = clock()
        out.writer.write(buf)
        st["write"] += since(t0)

    return write


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
    start = clock()
    summary = Summary()
    progress = Progress(None, "reads", enabled=opts.progress, prefix="readalign: ")
    rg = parse_rg(opts.rg)
    check(opts)
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
                t = clock()
                q, w = item.pairs.q, item.pairs.t
                job = opts.scoring.job(opts.eqx, AUTO_K, q.lengths, w.lengths)
                item.res = align(q, w, job, backend, opts.threads)
                st["align"] += since(t)
                assembler.put(item)
        finally:
            _free_gpu_memory(backend)
        for consumer in reversed(consumers):  # the assembler first, then the writer
            consumer.close()
        t = clock()
        out.close()
        st["write"] += since(t)
        repeats.warn(opts.reads)
        summary.repeated_names = repeats.count
        summary.finish(start)
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
