"""A chunk of the GPU pipeline, the slot it runs in, and its staging into pinned buffers.

A :class:`Slot` is one CUDA stream with its device pool and pinned host buffers (and the
timeline's events, with debug logging on). A chunk's sequences are staged side by side
(:class:`Staged`): gathered in length order straight from their input (a fixed-width grid,
Python strings or packed codes) into pinned buffers, on a staging worker one chunk ahead of
the loop (:class:`Staging`), then copied in by the steps (:func:`upload_side`).
"""

from __future__ import annotations

import logging
import threading
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import cuda

from ...kernels.cuda import translate_codes
from ...kernels.simulator import simulated
from ...runtime.backends import cpu_threads
from ...runtime.gpu_memory import device_pool, pinned
from ...runtime.stages import concurrent_launches_ok
from .. import flatseq
from ..packing import GridPacked
from ..pylists import StringRows

log = logging.getLogger("readalign")


@dataclass
class Chunk:
    """Pairs ``lo:hi`` of a batch (in length order), run in slot ``slot``; what its steps leave
    on it for the next step (device arrays, CIGAR run counts) and its timeline events."""

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
        """Pairs in the chunk."""
        return self.hi - self.lo


class Timeline:
    """CUDA events at each chunk's GPU steps (only with debug logging): where GPU time goes."""

    STEPS = ("copy in", "forward", "wait", "traceback", "copy back")

    def __init__(self, on: bool) -> None:
        self.on = on and not simulated()
        self.chunks: list[Chunk] = []

    def mark(self, c: Chunk, slot: Slot, name: str) -> None:
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


class Slot:
    """One stream with its device buffers and its pinned host buffers; its chunks' events go to
    ``timeline``."""

    def __init__(self, kind: tuple, index: int, timeline: Timeline) -> None:
        self.index = index
        self.dev = device_pool((*kind, index))
        self.stream = self.dev.stream
        self.timeline = timeline

    def host(self, name: str, size: int, dtype) -> np.ndarray:
        """This slot's pinned host array ``name`` of ``size`` elements (kept between calls)."""
        return pinned(("gpu_pipeline", self.index, name), size, dtype)

    def mark(self, c: Chunk, name: str) -> None:
        """Record event ``name`` of chunk ``c`` on this slot's stream (:class:`Timeline`)."""
        self.timeline.mark(c, self, name)


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


def _prepare(src, idx: np.ndarray, c: Chunk, slot: Slot, name: str) -> Staged:
    """One side's offsets and pinned code buffer for chunk ``c``, codes not yet filled in.

    On the calling thread: pinned buffers are kept per thread (:mod:`readalign.runtime.gpu_memory`).
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


class Staging:
    """Chunks staged one ahead of the loop on the staging worker (inline without one)."""

    def __init__(self, q, t, idx: np.ndarray, slots: list, threads: int | None = None) -> None:
        self.q, self.t, self.idx, self.slots = q, t, idx, slots
        self.threads = threads
        self.worker = _stager()
        self.pending = None

    def start(self, c: Chunk) -> None:
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


def upload_side(slot: Slot, side: Staged, name: str) -> tuple:
    """Enqueue one side's copy in (and its translation on the device); its device arrays."""
    pool = slot.dev
    codes = pool.upload(name, side.codes)
    if side.table is not None:
        translate_codes(codes, pool.constant(name + "_table", side.table), side.codes.shape[0],
                        slot.stream)
    return codes, pool.upload(name + "o", side.offsets)
