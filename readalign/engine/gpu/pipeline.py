"""The GPU pipeline: chunks of a length-sorted batch over a few CUDA streams.

Each chunk goes through four steps; the host runs step s of chunk i while the
GPU still works on earlier chunks, so copies, kernels and host work overlap:

1. *stage*: gather the chunk's sequences (in length order, straight from a
   fixed-width grid or Python strings when the input is one) into pinned
   buffers; a staging worker fills chunk i+1 while the loop runs the steps
   below for chunks i, i-2 and i-3 (:mod:`.chunks`);
2. *launch*: async copy in, forward kernel, async copy of what the next
   step needs back;
3. *follow*: wait for it, enqueue what follows and the copies of the
   results back;
4. *collect*: wait for the chunk, move its results out of the pinned buffers (CIGAR
   runs straight after the previous chunk's, :class:`.run_store.RunStore`).

Iteration i runs stage+launch of chunk i, follow of i-2 and collect of
i-3, so ``SLOTS = 4`` sets of buffers and streams rotate: while the host waits
for chunk i-2, the GPU still holds the work of chunks i-1 and i. Steps 2-4 are the
kernels' own, handed in as one object (:class:`Steps`): :class:`.edit.EditSteps`
(distances back after the forward pass, then CIGAR slots of ``2d+1`` runs and the
traceback) or :class:`.scored.ScoredSteps`; the chunks are sized by what the steps say
one lane needs (:mod:`.sizing`). Nothing here knows a kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ...runtime.gpu_memory import keep_only_pools, names_out_of_memory
from ...runtime.timing import Tally
from ..job import BatchResult, Job
from ..order import is_range
from ..packing import AnyPacked
from .chunks import Chunk, Slot, Staged, Staging, Timeline
from .run_store import RunStore
from .sizing import chunk_pairs, device_batches

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


class Steps(Protocol):
    """Steps 2-4 for one kind of kernels, made for one batch of pairs (``res`` holds its results
    in batch order, ``runs`` its CIGAR runs): what the pipeline asks of them."""

    job: Job
    res: BatchResult
    runs: RunStore

    def lane_bytes(self, m_max: int, n_max: int) -> int:
        """Device bytes one lane of a chunk needs whose longest read and window are these."""

    def launch(self, c: Chunk, slot: Slot, staged: tuple[Staged, Staged]) -> None:
        """Enqueue chunk ``c``'s copy in, its first kernels and the copy back of what
        :meth:`follow` needs."""

    def follow(self, c: Chunk, slot: Slot) -> None:
        """Wait for what :meth:`launch` sent back; enqueue what follows and the copies of the
        results back."""

    def collect(self, c: Chunk, slot: Slot) -> None:
        """Wait for the chunk; move its results out of the pinned buffers into ``res``."""


def _plan(q: AnyPacked, t: AnyPacked, idx: np.ndarray, steps: Steps) -> list[Chunk]:
    in_order = idx.shape[0] == len(q) and is_range(idx, 0)
    m = q.lengths if in_order else q.lengths[idx]
    n = t.lengths if in_order else t.lengths[idx]
    itemsize = max(q.code_dtype.itemsize, t.code_dtype.itemsize)
    pieces = device_batches(m, n, steps.lane_bytes, SLOTS, chunk_pairs(m, n, itemsize))
    return [Chunk(lo, hi, i % SLOTS, m_max, n_max)
            for i, (lo, hi, m_max, n_max) in enumerate(pieces)]


@names_out_of_memory
def run_pipeline(q: AnyPacked, t: AnyPacked, idx: np.ndarray, steps: Steps,
                 done_reading: Callable[[], None] | None = None,
                 threads: int | None = None) -> BatchResult:
    """Align the length-sorted pairs ``idx`` with ``steps`` (made for ``idx.shape[0]`` pairs);
    results in ``idx`` order (``ops`` as chunk pieces).

    ``threads`` bounds the staging worker's parallel copies (None: numba's whole pool).

    ``done_reading`` is called once the last chunk is staged and enqueued: no letter of
    ``q`` or ``t`` is read after it, and the GPU is still busy.
    """
    tally = Tally()
    tl = Timeline(tally.on)
    t0 = time.perf_counter()
    kind = ("gpu_pipeline", type(steps).__name__)
    keep_only_pools(kind)  # before sizing: their memory is free to this call
    chunks = _plan(q, t, idx, steps)
    if not chunks:
        return steps.res
    slots = [Slot(kind, i, tl) for i in range(min(SLOTS, len(chunks)))]
    staging = Staging(q, t, idx, slots, threads)
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
                    steps.launch(c, slots[c.slot], staged)
                if i == 0 < last:  # the GPU waits for chunk 0 alone: it goes before chunk 1's plan
                    with tally.stage("stage chunk (pinned)", 0):
                        staging.start(chunks[1])
                if i == last and done_reading is not None:
                    with tally.stage("done reading the inputs", 0):
                        done_reading()
            if 0 <= i - LAG <= last:
                c = chunks[i - LAG]
                with tally.stage("wait forward, traceback", c.count):
                    steps.follow(c, slots[c.slot])
            if 0 <= i - LAG - 1 <= last:
                c = chunks[i - LAG - 1]
                with tally.stage("wait chunk, collect", c.count):
                    steps.collect(c, slots[c.slot])
    finally:
        staging.drain()
    tally.report(f"  gpu pipeline, {len(chunks)} chunk(s): ")
    tl.report(time.perf_counter() - t0)
    if steps.job.with_cigar:
        steps.res.ops = steps.runs.pieces()
        steps.res.run_offsets = steps.runs.offsets
    return steps.res
