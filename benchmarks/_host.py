"""What the host is: CPU model and cores, and how fast it copies memory.

Machines of one kind differ in host speed by up to 2x (benchmarks/RESULTS.md,
2026-11-25), so every host-bound table says what it ran on and how fast that host
moved memory when it did.
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
from numba import config, get_num_threads, set_num_threads

from readalign.runtime.host_copy import copy_into

COPY_BYTES = 1 << 28
"""Bytes copied per timing: far past any cache."""


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_name() -> str:
    """CPU model and core count."""
    return f"{cpu_model()} x{os.cpu_count()}"


def device_name(backend: str) -> str:
    """What the readalign backend runs on: the GPU as the backend reports it, or the CPU's
    thread count."""
    from readalign.runtime import backends

    if backends.resolve(backend) == "cpu":
        return f"CPU, {get_num_threads()} threads"
    return backends.cuda_status()[1]


def copy_rate(threads: int, repeats: int = 3) -> float:
    """Best memory copy rate in GB/s (bytes read + bytes written) on ``threads`` threads."""
    src = np.ones(COPY_BYTES // 8, np.uint64)
    dst = np.zeros_like(src)
    saved = get_num_threads()
    set_num_threads(threads)
    try:
        copy_into(dst, 0, src)  # compiled (or loaded) and pages touched before timing
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            copy_into(dst, 0, src)
            best = min(best, time.perf_counter() - t)
    finally:
        set_num_threads(saved)
    return 2 * COPY_BYTES / best / 1e9


def host_line(threads: int | None = None) -> str:
    """``host: MODEL, N cores; memory copy X GB/s on 1 thread, Y on N``."""
    n = min(threads or get_num_threads(), config.NUMBA_NUM_THREADS)
    return (f"host: {cpu_model()}, {os.cpu_count()} cores; memory copy {copy_rate(1):.1f} GB/s "
            f"on 1 thread, {copy_rate(n):.1f} on {n}")
