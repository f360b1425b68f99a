"""Kernel-only timing of the packed distance pass (two pairs a thread, 16-bit cells).

Issue 16's ablation: the same pairs through the 32-bit distance-only forward pass and through
:mod:`benchmarks.ablation.packed`, with Hopper's 16x2 min instructions (DPX) and with plain integer
arithmetic in their place; distances and end columns of the two passes are compared pair by
pair.
"""

from __future__ import annotations

import numpy as np

from readalign.engine.job import Job
from readalign.engine.packing import N_CODE, pack_dna


def _median_seconds(run, stream, repeats: int) -> float:
    """Median of ``repeats`` CUDA-event timings of ``run()`` on ``stream``."""
    from numba import cuda

    times = []
    for _ in range(repeats):
        e0, e1 = cuda.event(), cuda.event()
        e0.record(stream)
        run()
        e1.record(stream)
        e1.synchronize()
        times.append(cuda.event_elapsed_time(e0, e1) / 1e3)
    return float(np.median(times))


def _registers(kernel) -> int | str:
    """Registers per thread of the compiled kernel, as the compiler reports them."""
    try:
        regs = kernel.get_regs_per_thread()
        return max(regs.values()) if isinstance(regs, dict) else regs
    except Exception as exc:  # report what the compiler would not say
        return f"n/a ({type(exc).__name__})"


def time_packed(reads, windows, infix: bool, k: int, repeats: int = 5) -> dict:
    """Seconds of the 32-bit distance-only pass over all pairs (resident on the device),
    ``wide_s``, and of the packed pass over the same pairs, with Hopper's 16x2 minima and
    without (``packed_s``, ``regs`` and ``differ`` keyed by ``dpx`` True/False); ``differ``:
    pairs whose distance or end column differ from the 32-bit pass's."""
    from numba import cuda
    from readalign.kernels.cuda import launch

    from readalign.engine.gpu import edit, sizing
    from readalign.runtime.gpu_memory import DevicePool

    from .ablation.cuda_packed import packed_kernel
    from .ablation.packed_pairs import pair_up

    q, t = pack_dna(reads), pack_dna(windows)
    order = np.lexsort((t.lengths, q.lengths)).astype(np.int64)
    pair_a, pair_b = pair_up(q.offsets, t.offsets, order)
    count = q.lengths.shape[0]
    pool = DevicePool(cuda.stream())
    stream = pool.stream
    dq, dqo, dt, dto = (cuda.to_device(a, stream=stream)
                        for a in (q.data, q.offsets, t.data, t.offsets))
    da, db = cuda.to_device(pair_a, stream=stream), cuda.to_device(pair_b, stream=stream)
    dist = cuda.device_array(count, np.int32, stream=stream)
    end = cuda.device_array(count, np.int64, stream=stream)
    threads = pair_a.shape[0]
    blocks = sizing.blocks(threads)

    job = Job(infix=infix, max_distance=-1, n_code=N_CODE, eqx=False, with_cigar=False, k=k)
    seqs = (dq, dqo, dt, dto, cuda.to_device(order, stream=stream))
    m_max, n_max = int(q.lengths.max()), int(t.lengths.max())

    def wide():
        return edit.launch_forward(pool, seqs, job, k, count, m_max, n_max)

    outs = wide()
    stream.synchronize()
    ref_dist = np.empty(count, np.int32)
    ref_end = np.empty(count, np.int64)
    ref_dist[order] = outs[1].copy_to_host()
    ref_end[order] = outs[3].copy_to_host()
    found = {"pairs": count, "threads": threads, "cells": int((q.lengths * t.lengths).sum()),
             "wide_s": _median_seconds(wide, stream, repeats), "packed_s": {}, "regs": {},
             "differ": {}}
    for dpx in (True, False):
        kernel = packed_kernel(k, dpx)

        def packed(kernel=kernel):
            launch(kernel, blocks, sizing.THREADS_PER_BLOCK, stream, dq, dqo, dt, dto, da,
                   db, infix, -1, N_CODE, dist, end)

        packed()
        stream.synchronize()
        found["differ"][dpx] = int(((dist.copy_to_host() != ref_dist)
                                    | (end.copy_to_host() != ref_end)).sum())
        found["packed_s"][dpx] = _median_seconds(packed, stream, repeats)
        found["regs"][dpx] = _registers(kernel)
    return found
