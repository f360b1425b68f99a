"""Choose where the kernel runs, and say why."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from ..errors import BackendUnavailableError

log = logging.getLogger("readalign")

BACKENDS = ("auto", "cpu", "cuda")


@lru_cache(maxsize=1)
def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask; all of them where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity call on this platform (macOS, Windows)
        return os.cpu_count() or 1


def cpu_threads(threads: int | None) -> int:
    """Threads a CPU run uses: ``threads`` capped at numba's pool, or all of the pool's."""
    import numba

    if threads is None:
        return numba.get_num_threads()
    return max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))


@contextmanager
def parallel_threads(threads: int | None) -> Iterator[int]:
    """Run numba's parallel loops on ``threads`` threads (default: all) inside the block."""
    import numba

    saved = numba.get_num_threads()
    use = cpu_threads(threads)
    numba.set_num_threads(use)
    try:
        yield use
    finally:
        numba.set_num_threads(saved)


_PROBE_LOCK = threading.Lock()


def cuda_status() -> tuple[bool, str]:
    """Return (usable, reason): whether a CUDA GPU can run the kernels.

    Probed once per process, under a lock: the CUDA driver's first initialisation
    fails in a thread that asks while another thread is still initialising it.
    """
    with _PROBE_LOCK:
        return _probe_cuda()


@lru_cache(maxsize=1)
def _probe_cuda() -> tuple[bool, str]:
    from ..kernels.simulator import simulated

    if simulated():
        return True, "CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba always ships cuda
        return False, f"numba.cuda cannot be imported ({exc})"
    try:
        if not cuda.is_available():
            return False, "no CUDA GPU or driver found"
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return True, f"CUDA GPU {name}"
    except Exception as exc:  # the driver can fail in many ways; report, don't crash
        return False, f"CUDA unusable ({type(exc).__name__}: {exc})"


def check_backend(name: object) -> str:
    """``name`` if it is one of :data:`BACKENDS`, else a ValueError naming ``backend``."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}")
    return name


def resolve(name: str) -> str:
    """Map a backend request to ``"cpu"`` or ``"cuda"``, logging the choice and reason."""
    check_backend(name)
    if name == "cpu":
        log.info("backend: cpu (requested)")
        return "cpu"
    ok, why = cuda_status()
    if name == "cuda":
        if not ok:
            raise BackendUnavailableError(f"backend 'cuda' requested but {why}")
        log.info("backend: cuda (%s)", why)
        return "cuda"
    if ok:
        log.info("backend: cuda (auto: %s)", why)
        return "cuda"
    log.info("backend: cpu (auto: %s)", why)
    return "cpu"
