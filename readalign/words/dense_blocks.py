"""The dense GPU pipeline: compute row blocks, copy them back and place them on the host.

Three resources work at once. The *compute* stream runs the kernel block
after block into a ring of device buffers (the whole result when device
memory allows, so the kernels never wait for the host). The *copy* stream
moves block k to pinned staging buffer ``k % S`` as soon as it is computed
and that buffer is free. The host's worker threads (:mod:`.host_copy`)
move each staged block into the result; the copies themselves take the
fresh result's page faults, spread over every core (a separate pre-faulting
pass measured slower: one more pass over the memory; so did page-locking the whole result
and copying straight into it, benchmarks/RESULTS.md, 2026-11-22).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from ..runtime import gpu_memory as cuda_buffers
from ..runtime import host_copy

STAGES = 3
"""Pinned staging buffers in flight."""

_RING: dict = {}


def ring(cells: int, dtype):
    """A reusable device buffer of at least ``cells`` elements (grown, never shrunk)."""
    dt = np.dtype(dtype)
    buf = _RING.get(dt)
    if buf is None or buf.shape[0] < cells:
        _RING.pop(dt, None)
        buf = cuda.device_array(cells, dtype=dt)
        _RING[dt] = buf
    return buf


@dataclass
class Plan:
    """Row blocks of one call, the ring and staging slots, and their events."""

    blocks: list
    nc: int
    slots: int
    cells: int
    dev: object
    stage: list
    computed: list = field(default_factory=list)
    copied: list = field(default_factory=list)


def make_plan(r0: int, r1: int, nc: int, step: int, free_bytes: int, dt: np.dtype) -> Plan:
    """Cut rows ``r0:r1`` into blocks of ``step`` rows; size the device ring from ``free_bytes``."""
    blocks = [(a, min(a + step, r1)) for a in range(r0, r1, step)]
    cells = step * nc
    held = _RING[dt].nbytes if dt in _RING else 0
    slots = int(max(2, min(len(blocks), (free_bytes + held) // max(cells * dt.itemsize, 1))))
    dev = ring(slots * cells, dt)
    stage = [cuda_buffers.pinned(("cuda_dense", k), cells, dt)
             for k in range(min(STAGES, len(blocks)))]
    return Plan(blocks, nc, slots, cells, dev, stage)


class Pipeline:
    """Enqueues kernels and copies as far as buffers allow; the host drains block by block."""

    def __init__(self, plan: Plan, launch, out: np.ndarray, r0: int):
        self.plan, self.launch, self.r0 = plan, launch, r0
        self.flat = out.reshape(-1)
        self.compute, self.copy = cuda.stream(), cuda.stream()
        self.next_compute = 0
        self.next_copy = 0
        self.retired = 0
        self.placer = host_copy.Placer(out)
        self.pending: deque = deque()

    def _slot(self, k: int):
        p = self.plan
        a, b = p.blocks[k]
        lo = (k % p.slots) * p.cells
        return p.dev[lo:lo + (b - a) * p.nc]

    def pump(self) -> None:
        """Enqueue every kernel whose ring slot is free and every copy whose buffer is free."""
        p = self.plan
        while self.next_compute < len(p.blocks) and self.next_compute - p.slots < self.next_copy:
            k = self.next_compute
            if k >= p.slots:
                p.copied[k - p.slots].wait(self.compute)
            a, b = p.blocks[k]
            self.launch(a, b, self._slot(k), self.compute)
            p.computed.append(cuda.event())
            p.computed[k].record(self.compute)
            self.next_compute += 1
        while self.next_copy < self.next_compute and self.next_copy < self.retired + len(p.stage):
            self._enqueue_copy(self.next_copy)
            self.next_copy += 1

    def _enqueue_copy(self, k: int) -> None:
        p = self.plan
        a, b = p.blocks[k]
        size = (b - a) * p.nc
        p.computed[k].wait(self.copy)
        self._slot(k).copy_to_host(p.stage[k % len(p.stage)][:size], stream=self.copy)
        p.copied.append(cuda.event())
        p.copied[k].record(self.copy)

    def retire(self, block: bool) -> None:
        """Finish the oldest host copies: all that are done, or (``block``) at least one."""
        while self.pending and (block or all(f.done() for f in self.pending[0])):
            host_copy.wait(self.pending.popleft())
            self.retired += 1
            block = False

    def place(self, k: int) -> None:
        """Wait for block k's copy, then hand it to the host workers."""
        while self.next_copy <= k:
            self.retire(block=True)
            self.pump()
        self.plan.copied[k].synchronize()
        p = self.plan
        a, b = p.blocks[k]
        src = p.stage[k % len(p.stage)][:(b - a) * p.nc]
        dst_lo = (a - self.r0) * p.nc * self.flat.itemsize
        self.pending.append(self.placer.copy(src, dst_lo))
        self.retire(block=False)

    def run(self) -> None:
        """The whole call: every block computed, copied and placed."""
        for k in range(len(self.plan.blocks)):
            self.pump()
            self.place(k)
            self.pump()
        while self.pending:
            self.retire(block=True)


def dense_blocks(launch, r0: int, r1: int, nc: int, step: int, free_bytes: int,
                 dtype) -> np.ndarray:
    """Rows ``r0:r1`` x ``nc`` choices; ``launch(a, b, out, stream)`` computes rows ``a:b``."""
    dt = np.dtype(dtype)
    out = np.empty((max(r1 - r0, 0), nc), dt)
    if r1 <= r0 or nc == 0:
        return out
    Pipeline(make_plan(r0, r1, nc, step, free_bytes, dt), launch, out, r0).run()
    return out
