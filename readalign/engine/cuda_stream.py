"""The GPU pipeline: chunks of a length-sorted batch over a few CUDA streams.

Each chunk goes through four steps; the host runs step s of chunk i while the
GPU still works on earlier chunks, so copies, kernels and host work overlap:

1. *stage*: gather the chunk's sequences (in length order, straight from a
   fixed-width grid or Python strings when the input is one) into pinned
   buffers; a staging worker fills chunk i+1 while the loop runs the steps
   below for chunks i, i-2 and i-3;
2. *forward*: async copy in, forward kernel, async copy of what the next
   step needs back;
3. *traceback*: wait for it, enqueue what follows and the copies of the
   results back;
4. *collect*: wait for the chunk, move its results out of the pinned buffers (CIGAR
   runs straight after the previous chunk's, :class:`.run_store.RunStore`).

Iteration i runs stage+forward of chunk i, traceback of i-2 and collect of
i-3, so ``SLOTS = 4`` sets of buffers and streams rotate: while the host waits
for chunk i-2, the GPU still holds the work of chunks i-1 and i. Steps 2-4 are the
kernels' own (:class:`EditSteps` here: distances back after the forward pass,
then CIGAR slots of ``2d+1`` runs and the traceback;
:class:`readalign.engine.cuda_scored.ScoredSteps` for scored alignment).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import cuda

from ..kernels.cuda import translate_codes
from ..kernels.simulator import simulated
from ..runtime.backends import cpu_threads
from ..runtime.gpu_memory import (
    device_pool,
    download,
    keep_only_pools,
    names_out_of_memory,
    pinned,
)
from ..runtime.stages import concurrent_launches_ok
from ..runtime.timing import Tally
from . import flatseq
from .cuda import device_batches, launch_forward, launch_traceback, upload_slots
from .job import BatchResult
from .order import is_range
from .packing import GridPacked, Packed
from .pyobjects import StringRows
from .run_store import RunStore

log = logging.getLogger("readalign")

LAG = 2
"""The loop's traceback step waits for chunk i-LAG once chunk i is enqueued. With 1 the GPU ran
dry between chunks: the host waited for chunk i-1, then spent 2-3 ms on its steps and the next
chunk's enqueue while chunk i's last kernel ended, and each chunk's copy in came after. With 2
an API call of 1M pairs ran 1-7 ms faster on an H100 (benchmarks/RESULTS.md, 2026-11-26,
``baecd99``)."""


def slots_for(lag: int) -> int:
    """Chunks in flight for a loop ``lag`` chunks behind. Chunk i+1 is staged into the slot of
    chunk i-lag-1, whose inputs the kernels the loop waited for one iteration earlier were the
    last to read; that chunk is collected before chunk i+1 is enqueued on the slot's stream."""
    return lag + 2


SLOTS = slots_for(LAG)
CHUNK_BYTES = 64 << 20
"""Sequence bytes per chunk: large enough to fill the GPU, small enough to overlap. On an H100,
150 bp pairs from S arrays: 1M pairs 35.9-36.0 ms at 64 MB, 37.9-38.0 at 48, 35.6-35.9 at 32
with 4 slots; 2M pairs 72.8-75.8, 75.7-76.2, 77.0-80.4 (benchmarks/RESULTS.md, "Chunk size")."""
MIN_CHUNK = 1 << 14
MAX_CHUNK = 1 << 20


@dataclass
class _Chunk:
    lo: int
    hi: int
    slot: int
    m_max: int
    n_max: int
    seqs: tuple = ()
    bufs: tuple = ()
    runs: object = None
    """A scored chunk's CIGAR runs, packed end to end on the device."""
    total_ops: int = 0
    marks: dict = field(default_factory=dict)

    @property
    def count(self) -> int:
        return self.hi - self.lo


class _Timeline:
    """CUDA events at each chunk's GPU steps (only with debug logging): where GPU time goes."""

    STEPS = ("copy in", "forward", "wait", "traceback", "copy back")

    def __init__(self, on: bool) -> None:
        self.on = on and not simulated()
        self.chunks: list[_Chunk] = []

    def mark(self, c: _Chunk, slot: _Slot, name: str) -> None:
        """Record event ``name`` of chunk ``c`` on its stream."""
        if self.on:
            if not c.marks:
                self.chunks.append(c)
            ev = cuda.event()
            ev.record(slot.stream)
            c.marks[name] = ev

    def report(self, wall: float) -> None:
        """Log the GPU time of each step summed over chunks, and the GPU's first-to-last span."""
        if not self.on or not self.chunks:
            return
        names = ("start", "copied in", "forward done", "traceback start", "traceback done", "end")
        sums = dict.fromkeys(self.STEPS, 0.0)
        for c in self.chunks:
            c.marks["end"].synchronize()
            marks = [c.marks.get(n) for n in names]
            for step, a, b in zip(self.STEPS, marks, marks[1:]):
                if a is not None and b is not None:
                    sums[step] += cuda.event_elapsed_time(a, b) / 1e3
        first = self.chunks[0].marks["start"]
        span = max(cuda.event_elapsed_time(first, c.marks["end"]) for c in self.chunks) / 1e3
        steps = ", ".join(f"{k} {v:.4f}" for k, v in sums.items())
        log.debug("  gpu timeline: %s (s, summed over chunks; streams overlap); first start to "
                  "last end %.4f s of %.4f s wall", steps, span, wall)


class _Slot:
    """One stream with its device buffers and its pinned host buffers."""

    def __init__(self, kind: tuple, index: int) -> None:
        self.index = index
        self.dev = device_pool((*kind, index))
        self.stream = self.dev.stream

    def host(self, name: str, size: int, dtype) -> np.ndarray:
        return pinned(("gpu_pipeline", self.index, name), size, dtype)


def chunk_pairs(m: np.ndarray, n: np.ndarray, itemsize: int) -> int:
    """Pairs per chunk: about ``CHUNK_BYTES`` of sequence, within ``MIN_CHUNK..MAX_CHUNK``,
    evened out over the batch (:func:`even_chunks`)."""
    count = m.shape[0]
    per_pair = max(flatseq.total_length(m, n) / count * itemsize + 16, 1.0) if count else 1.0
    return even_chunks(count, int(min(max(CHUNK_BYTES // per_pair, MIN_CHUNK), MAX_CHUNK)))


LAST_SHARE = 0.25
"""A remainder of at most this share of a chunk is spread over the other chunks."""


def even_chunks(count: int, most: int) -> int:
    """Pairs per chunk for ``count`` pairs in chunks of about ``most`` (at most a quarter more),
    so that the last chunk is not a small remainder: 1M pairs at 199,728 a chunk ran as five
    chunks and one of 1,360, a whole round of waits, copies and collection for 0.1% of the pairs.
    """
    chunks = max(1, math.ceil(count / max(most, 1) - LAST_SHARE))
    return max(1, -(-count // chunks))


def _translate_on_device(src) -> bool:
    """True for a byte grid that needs a table: stage raw bytes, translate on the GPU.

    A raw row copy vectorises where a per-byte table lookup does not; a
    ``U`` grid keeps the host lookup (its code points do not fit a byte).
    """
    if isinstance(src, StringRows):
        return src.table is not None
    return isinstance(src, GridPacked) and src.table is not None and src.grid.dtype == np.uint8


@dataclass
class Staged:
    """One side of a chunk in pinned memory: codes, offsets, and the table still to apply on
    the device (None when the codes are final)."""

    codes: np.ndarray
    offsets: np.ndarray
    table: np.ndarray | None


def _prepare(src, idx: np.ndarray, c: _Chunk, slot: _Slot, name: str) -> Staged:
    """One side's offsets and pinned code buffer for chunk ``c``, codes not yet filled in.

    On the calling thread: pinned buffers are kept per thread (:mod:`..runtime.gpu_memory`).
    """
    off = slot.host(name + "_off", c.count + 1, np.int64)
    total = int(flatseq.chunk_offsets(src.lengths, idx, c.lo, c.hi, off))
    codes = slot.host(name, total + 1, src.code_dtype)
    return Staged(codes, off, src.table if _translate_on_device(src) else None)


def _fill(sides: tuple, idx: np.ndarray, lo: int) -> None:
    """Gather the sequences of a chunk into its prepared ``(source, Staged)`` sides."""
    for src, staged in sides:
        src.stage_into(idx, lo, staged.offsets, staged.codes, translate=staged.table is None)


def _fill_on(threads: int | None, sides: tuple, idx: np.ndarray, lo: int) -> None:
    """:func:`_fill` on the staging worker with ``threads`` threads (None: numba's whole pool),
    so a run's ``--threads`` bounds the staging too."""
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if threads is None
                          else cpu_threads(threads))  # the worker outlives the call: set each time
    _fill(sides, idx, lo)


_STAGERS = threading.local()


def _stager() -> ThreadPoolExecutor | None:
    """This thread's staging worker, which fills chunk i+1 while the loop works on chunk i;
    None where numba's parallel regions may not run from two threads at once (its
    ``workqueue`` layer) or under the simulator."""
    if simulated() or not concurrent_launches_ok():
        return None
    worker = getattr(_STAGERS, "worker", None)
    if worker is None:
        worker = _STAGERS.worker = ThreadPoolExecutor(1, thread_name_prefix="readalign-stage")
    return worker


class _Staging:
    """Chunks staged one ahead of the loop on the staging worker (inline without one)."""

    def __init__(self, q, t, idx: np.ndarray, slots: list, threads: int | None = None) -> None:
        self.q, self.t, self.idx, self.slots = q, t, idx, slots
        self.threads = threads
        self.worker = _stager()
        self.pending = None

    def start(self, c: _Chunk) -> None:
        """Prepare chunk ``c``'s buffers here and fill them on the worker."""
        slot = self.slots[c.slot]
        sides = ((self.q, _prepare(self.q, self.idx, c, slot, "qc")),
                 (self.t, _prepare(self.t, self.idx, c, slot, "tc")))
        if self.worker is None:
            _fill(sides, self.idx, c.lo)
            self.pending = (sides, None)
        else:
            self.pending = (sides, self.worker.submit(_fill_on, self.threads, sides, self.idx,
                                                      c.lo))

    def take(self) -> tuple[Staged, Staged]:
        """The chunk started last, once filled."""
        sides, fill = self.pending
        self.pending = None
        if fill is not None:
            fill.result()
        return sides[0][1], sides[1][1]

    def drain(self) -> None:
        """Wait for a fill still running (its buffers are reused by the next call)."""
        if self.pending is not None and self.pending[1] is not None:
            futures.wait([self.pending[1]])


def upload_side(slot: _Slot, side: Staged, name: str) -> tuple:
    """Enqueue one side's copy in (and its translation on the device); its device arrays."""
    pool = slot.dev
    codes = pool.upload(name, side.codes)
    if side.table is not None:
        translate_codes(codes, pool.constant(name + "_table", side.table), side.codes.shape[0],
                        slot.stream)
    return codes, pool.upload(name + "o", side.offsets)


class EditSteps:
    """Steps 2-4 for edit distance: distances back after the forward pass size each lane's CIGAR
    slots (``2d+1`` runs) for the traceback."""

    @staticmethod
    def lane_bytes_of(job) -> None:
        """None: ``device_batches``' default, the edit kernels' needs."""
        return None

    def __init__(self, job, k: int, count: int, tl: _Timeline) -> None:
        self.job, self.k, self.tl = job, k, tl
        self.res = BatchResult(np.empty(count, np.int32), np.empty(count, np.int64),
                               np.empty(count, np.int64), np.empty(count, np.int64), [])
        self.runs = RunStore(count)

    def forward(self, c: _Chunk, slot: _Slot, staged: tuple[Staged, Staged]) -> None:
        """Enqueue: copy the chunk in, forward kernel, distances (and spans) back."""
        job, pool, tl = self.job, slot.dev, self.tl
        tl.mark(c, slot, "start")
        c.seqs = (*upload_side(slot, staged[0], "q"), *upload_side(slot, staged[1], "t"),
                  pool.iota("order", c.count))
        tl.mark(c, slot, "copied in")
        c.bufs = launch_forward(pool, c.seqs, job, self.k, c.count, c.m_max, c.n_max)
        tl.mark(c, slot, "forward done")
        _, dist, start, end = c.bufs
        download(dist, slot.host("dist", c.count, np.int32), slot.stream)
        if not job.with_cigar:
            download(start, slot.host("start", c.count, np.int64), slot.stream)
            download(end, slot.host("end", c.count, np.int64), slot.stream)

    def traceback(self, c: _Chunk, slot: _Slot) -> None:
        """Wait for the distances, size CIGAR slots, enqueue traceback and the copies back."""
        slot.stream.synchronize()
        if not self.job.with_cigar:
            self.tl.mark(c, slot, "end")
            return
        n = c.count
        out_off = slot.host("out_off", n, np.int64)
        c.total_ops = int(flatseq.cigar_slots(slot.host("dist", n, np.int32), out_off))
        self.tl.mark(c, slot, "traceback start")
        d_off = upload_slots(slot.dev, out_off)
        ops, nops = launch_traceback(slot.dev, c.seqs, self.job, self.k, c.bufs, d_off,
                                     c.total_ops)
        self.tl.mark(c, slot, "traceback done")
        _, _, start, end = c.bufs
        download(start, slot.host("start", n, np.int64), slot.stream)
        download(end, slot.host("end", n, np.int64), slot.stream)
        download(nops, slot.host("nops", n, np.int64), slot.stream)
        download(ops, slot.host("ops", c.total_ops, np.uint32), slot.stream)
        self.tl.mark(c, slot, "end")

    def collect(self, c: _Chunk, slot: _Slot) -> None:
        """Wait for the chunk and copy its results out of the pinned buffers."""
        slot.stream.synchronize()
        n, res = c.count, self.res
        nops = slot.host("nops", n, np.int64) if self.job.with_cigar else None
        flatseq.place_lanes(c.lo, slot.host("dist", n, np.int32), slot.host("start", n, np.int64),
                            slot.host("end", n, np.int64), nops, res.dist, res.ref_start,
                            res.ref_end, res.n_ops)
        if nops is not None:
            self._place_runs(c, slot, nops)

    def _place_runs(self, c: _Chunk, slot: _Slot, counts: np.ndarray) -> None:
        """A chunk's CIGAR runs, lane after lane, out of the lanes' slots in pinned ``ops``
        into the batch's runs, and the lanes' offsets."""
        n = c.count
        run_off = slot.host("run_off", n + 1, np.int64)
        total = int(flatseq.chunk_offsets(counts, None, 0, n, run_off))
        runs, base = self.runs.space(c.hi, total)
        flatseq.gather_into(slot.host("ops", c.total_ops, np.uint32),
                            slot.host("out_off", n, np.int64), counts, run_off, runs, base)
        flatseq.place_offsets(c.lo, base, run_off, self.runs.offsets)


def _plan(q, t, idx: np.ndarray, job, k: int, lane_bytes) -> list[_Chunk]:
    in_order = idx.shape[0] == len(q) and is_range(idx, 0)
    m = q.lengths if in_order else q.lengths[idx]
    n = t.lengths if in_order else t.lengths[idx]
    itemsize = max(q.code_dtype.itemsize, t.code_dtype.itemsize)
    pieces = device_batches(m, n, k, job.with_cigar, SLOTS, chunk_pairs(m, n, itemsize),
                            lane_bytes)
    return [_Chunk(lo, hi, i % SLOTS, m_max, n_max)
            for i, (lo, hi, m_max, n_max) in enumerate(pieces)]


@names_out_of_memory
def run_pipeline(q, t, idx: np.ndarray, job, k: int, steps_type=EditSteps,
                 done_reading: Callable[[], None] | None = None,
                 threads: int | None = None) -> BatchResult:
    """Align the length-sorted pairs ``idx``; results in ``idx`` order (``ops`` as chunk pieces).

    ``threads`` bounds the staging worker's parallel copies (None: numba's whole pool).

    ``done_reading`` is called once the last chunk is staged and enqueued: no letter of
    ``q`` or ``t`` is read after it, and the GPU is still busy.
    """
    tally = Tally()
    tl = _Timeline(tally.on)
    t0 = time.perf_counter()
    kind = ("gpu_pipeline", steps_type.__name__)
    keep_only_pools(kind)  # before sizing: their memory is free to this call
    chunks = _plan(q, t, idx, job, k, steps_type.lane_bytes_of(job))
    steps = steps_type(job, k, idx.shape[0], tl)
    if not chunks:
        return steps.res
    slots = [_Slot(kind, i) for i in range(min(SLOTS, len(chunks)))]
    staging = _Staging(q, t, idx, slots, threads)
    last = len(chunks) - 1
    try:
        staging.start(chunks[0])
        for i in range(len(chunks) + LAG + 1):
            if i <= last:
                c = chunks[i]
                with tally.stage("stage chunk (pinned)", c.count):
                    staged = staging.take()
                    if 0 < i < last:
                        staging.start(chunks[i + 1])
                with tally.stage("enqueue copy in + forward", c.count):
                    steps.forward(c, slots[c.slot], staged)
                if i == 0 < last:  # the GPU waits for chunk 0 alone: it goes before chunk 1's plan
                    with tally.stage("stage chunk (pinned)", 0):
                        staging.start(chunks[1])
                if i == last and done_reading is not None:
                    with tally.stage("done reading the inputs", 0):
                        done_reading()
            if 0 <= i - LAG <= last:
                c = chunks[i - LAG]
                with tally.stage("wait forward, traceback", c.count):
                    steps.traceback(c, slots[c.slot])
            if 0 <= i - LAG - 1 <= last:
                c = chunks[i - LAG - 1]
                with tally.stage("wait chunk, collect", c.count):
                    steps.collect(c, slots[c.slot])
    finally:
        staging.drain()
    tally.report(f"  gpu pipeline, {len(chunks)} chunk(s): ")
    tl.report(time.perf_counter() - t0)
    if job.with_cigar:
        steps.res.ops = steps.runs.pieces()
        steps.res.run_offsets = steps.runs.offsets
    return steps.res


def align_batch(q: Packed, t: Packed, idx: np.ndarray, job, k: int,
                threads: int | None = None,
                done_reading: Callable[[], None] | None = None) -> BatchResult:
    """The GPU backend: align the pairs ``idx`` (length-sorted); results in ``idx`` order."""
    return run_pipeline(q, t, idx, job, k, EditSteps, done_reading, threads)
