"""A BGZF writer whose blocks ISA-L compresses on a pool of threads.

BGZF (SAM/BAM specification, section 4.1) is a series of gzip members of at most
64 KiB, each naming its own size in a ``BC`` extra field, closed by a fixed empty
block. ISA-L's deflate compresses BAM records about ten times faster than zlib at
level 1, into a smaller file, and releases the GIL while it runs; so blocks compress
on every core while the pipeline goes on. Block boundaries fall every
:data:`BLOCK` bytes of the stream, as htslib puts them, whatever the sizes of the
``write`` calls, so the file's bytes do not depend on how batches were cut.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..runtime.outfiles import output_error

try:
    from isal import igzip_lib, isal_zlib
except ImportError:  # the writer is then not offered (see available())
    igzip_lib = isal_zlib = None

BLOCK = 0xFF00
"""Uncompressed bytes per block (htslib's ``BGZF_BLOCK_SIZE``)."""
MAX_BLOCK = 1 << 16
"""Largest BGZF block, header and footer included."""
TASK_BLOCKS = 16
"""Blocks per task handed to the pool (about 1 MiB: few enough tasks that Python's overhead stays small)."""
EOF_BLOCK = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
"""The empty block that ends every BGZF file (htslib checks for it)."""
_HEADER = struct.Struct("<4BI2BH2BHH")
_FOOTER = struct.Struct("<II")
_OVERHEAD = _HEADER.size + _FOOTER.size


def available() -> bool:
    """Whether ISA-L's Python bindings (the ``isal`` package) are installed."""
    return igzip_lib is not None


def isal_level(level: int) -> int | None:
    """ISA-L's level for a BAM level: None (stored, no compression) for 0; 1-3 → 1, 4-6 → 2, 7-9 → 3."""
    if not 0 <= level <= 9:
        raise ValueError(f"BGZF level must be 0-9, got {level}")
    return None if level == 0 else (level + 2) // 3


def _stored(data) -> bytes:
    c = zlib.compressobj(0, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def block(data, level: int | None) -> bytes:
    """One BGZF block holding ``data`` (at most :data:`BLOCK` bytes), deflated by ISA-L at ``level``."""
    cdata = _stored(data) if level is None else igzip_lib.compress(
        data, level, flag=igzip_lib.COMP_DEFLATE)
    if len(cdata) + _OVERHEAD > MAX_BLOCK:  # incompressible: store it
        cdata = _stored(data)
    size = len(cdata) + _OVERHEAD
    return b"".join((_HEADER.pack(31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, size - 1), cdata,
                     _FOOTER.pack(isal_zlib.crc32(data), len(data))))


def _blocks(pieces: list, level: int | None) -> bytes:
    return b"".join(block(p, level) for p in pieces)


class IsalBgzfWriter:
    """BGZF on a descriptor we opened (``fd`` is handed over), compressed on ``threads`` threads.

    ``write`` cuts the stream into blocks and queues them; finished blocks are
    written in order as the queue moves, and ``close`` writes the rest and the EOF
    block. An array given to ``write`` is read later, by the pool: it must not change
    afterwards (the pipeline hands over each batch's buffer and never touches it
    again). A failed write raises the OS's reason for ``name``.
    """

    def __init__(self, fd: int, name: str, threads: int, level: int) -> None:
        self.name = name
        self._fd = fd
        self._level = isal_level(level)
        self._threads = max(1, threads)
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="readalign-bgzf")
        self._pending: deque[Future] = deque()
        self._tail = b""

    def write(self, data: bytes | np.ndarray) -> None:
        """Append raw bytes (BAM header or records)."""
        view = memoryview(data).cast("B")
        if self._tail:
            take = BLOCK - len(self._tail)
            self._tail += bytes(view[:take])
            view = view[take:]
            if len(self._tail) < BLOCK:
                return
            self._submit([self._tail])
            self._tail = b""
        full = len(view) - len(view) % BLOCK
        step = BLOCK * TASK_BLOCKS
        for start in range(0, full, step):
            self._submit([view[i:i + BLOCK] for i in range(start, min(start + step, full), BLOCK)])
        self._tail = bytes(view[full:])

    def _submit(self, pieces: list) -> None:
        self._pending.append(self._pool.submit(_blocks, pieces, self._level))
        while len(self._pending) > 2 * self._threads:
            self._write(self._pending.popleft().result())

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise output_error(self.name, exc) from None

    def close(self) -> None:
        """Compress and write what is queued, write the EOF block and close."""
        if self._fd < 0:
            return
        if self._tail:
            self._submit([self._tail])
            self._tail = b""
        while self._pending:
            self._write(self._pending.popleft().result())
        self._write(EOF_BLOCK)
        self._pool.shutdown()
        fd, self._fd = self._fd, -1
        try:
            os.close(fd)
        except OSError as exc:
            raise output_error(self.name, exc) from None

    def abandon(self) -> None:
        """Stop after a failure: drop what is queued and close (the caller removes the file)."""
        self._pending.clear()
        self._pool.shutdown(cancel_futures=True)
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            with contextlib.suppress(OSError):
                os.close(fd)
