"""The BAM's BGZF writer: ISA-L's on a thread pool where the ``isal`` package imports, else htslib's.

htslib's threaded writer is called through ``ctypes`` on the htslib that pysam
ships: ``bgzf_write`` copies into 64 KiB blocks and returns; htslib's thread pool
compresses them (with zlib in PyPI's pysam, libdeflate in bioconda's). A failed
write is reported once, by readalign, with the OS's reason (htslib's own log is
silenced). :mod:`.bgzf_isal` writes the same format about ten times faster.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os

import numpy as np

from ..runtime.outfiles import probe_write_error
from . import bgzf_isal
from .bgzf_isal import IsalBgzfWriter
from .defaults import WRITERS, isal_threads

HTS_FEATURE_LIBDEFLATE = 1 << 20
"""htslib's ``hts_features()`` bit for a build that deflates with libdeflate."""


@functools.cache
def _htslib() -> ctypes.CDLL:
    from pysam import libchtslib  # loaded on first use (start-up time)

    lib = ctypes.CDLL(libchtslib.__file__)
    lib.bgzf_dopen.restype = ctypes.c_void_p
    lib.bgzf_dopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
    lib.hts_set_log_level.restype = None
    lib.hts_set_log_level.argtypes = [ctypes.c_int]
    lib.hts_set_log_level(0)  # failures are reported once, by readalign, naming the file
    lib.bgzf_mt.restype = ctypes.c_int
    lib.bgzf_mt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.bgzf_write.restype = ctypes.c_ssize_t
    lib.bgzf_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.bgzf_close.restype = ctypes.c_int
    lib.bgzf_close.argtypes = [ctypes.c_void_p]
    lib.hts_features.restype = ctypes.c_uint
    lib.hts_features.argtypes = []
    return lib


def deflate_library() -> str:
    """What pysam's htslib compresses BGZF blocks with: ``"libdeflate"`` or ``"zlib"``.

    BGZF compression is the costliest part of writing a BAM, and libdeflate
    does it 2-3x faster than zlib; PyPI's pysam wheels use zlib.
    """
    return "libdeflate" if _htslib().hts_features() & HTS_FEATURE_LIBDEFLATE else "zlib"


def compressor(writer: str = "auto") -> str:
    """What deflates the BAM's blocks with ``writer``: ``"isal"`` (readalign's writer), else
    htslib's ``"libdeflate"`` or ``"zlib"``. ValueError for ``isal`` without the package."""
    if writer not in WRITERS:
        raise ValueError(f"BGZF writer must be one of {', '.join(WRITERS)}; got {writer!r}")
    if writer == "htslib" or (writer == "auto" and not bgzf_isal.available()):
        return deflate_library()
    if not bgzf_isal.available():
        raise ValueError("the isal BGZF writer needs the isal package (pip install isal)")
    return "isal"


def deflate_threads(threads: int, writer: str = "auto") -> int:
    """Threads that compress the BAM while a run of ``threads`` threads aligns.

    htslib's writer (C threads; zlib is about ten times slower than ISA-L) keeps all
    of them. ISA-L's pool gets :func:`~readalign.bam.defaults.isal_threads` (a
    :data:`~readalign.bam.defaults.ISAL_SHARE`-th): its threads are Python threads
    that wake for every task, and 16 of them slowed the stages they shared the cores
    with: on the H100 host, 2M reads, runs alternating in one process, 4 threads
    1.57-1.67M reads/s against 1.48-1.51M with 16 (benchmarks/RESULTS.md).
    """
    if compressor(writer) != "isal":
        return threads
    return isal_threads(threads)


def open_writer(fd: int, name: str, threads: int, level: int | None,
                writer: str = "auto") -> BgzfWriter | IsalBgzfWriter:
    """The BGZF writer :func:`compressor` names, on ``fd`` (handed over).

    ``level`` is the BAM level 0-9 (None: zlib's default, 6).
    """
    if compressor(writer) == "isal":
        return IsalBgzfWriter(fd, name, threads, 6 if level is None else level)
    return BgzfWriter(fd, name, threads, level)


class BgzfWriter:
    """htslib's BGZF writer with its compression thread pool, on a descriptor we opened.

    ``fd`` is handed over (htslib closes it). A failed write or close raises
    the OS's reason for ``name`` (``no space left on device``, a closed pipe),
    found by :func:`probe_write_error` on a descriptor kept for that.
    """

    def __init__(self, fd: int, name: str, threads: int, level: int | None = None) -> None:
        self._lib = _htslib()
        self.name = name
        mode = b"wb" + (str(level).encode() if level is not None else b"")
        self._probe = os.dup(fd)
        self._fp = self._lib.bgzf_dopen(fd, mode)
        if not self._fp:
            os.close(fd)
            raise self._failure()
        # htslib queues blocks for its pool (n_sub_blks is advisory in htslib >= 1.4):
        # bgzf_write copies into 64 KiB blocks and returns; compression runs on the pool
        if threads > 1 and self._lib.bgzf_mt(self._fp, threads, 256) != 0:
            self.abandon()
            raise OSError("htslib could not start its BGZF thread pool")

    def _failure(self) -> OSError:
        exc = probe_write_error(self._probe, self.name)
        self._close_probe()
        return exc

    def _close_probe(self) -> None:
        if self._probe >= 0:
            fd, self._probe = self._probe, -1
            os.close(fd)

    def write(self, data: bytes | np.ndarray) -> None:
        """Append raw bytes (BAM header or records)."""
        arr = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
        n = arr.shape[0]
        if n and self._lib.bgzf_write(self._fp, arr.ctypes.data, n) != n:
            raise self._failure()

    def close(self) -> None:
        """Flush, write the EOF block and close."""
        if self._fp:
            fp, self._fp = self._fp, None
            if self._lib.bgzf_close(fp) != 0:
                raise self._failure()
        self._close_probe()

    def abandon(self) -> None:
        """Close after a failure, whatever htslib says (the caller removes the file)."""
        with contextlib.suppress(OSError):
            self.close()
        self._close_probe()
