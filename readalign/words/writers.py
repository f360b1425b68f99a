"""Writers for ``readalign distance``: dense matrices or (i, j, distance) triples, TSV or npy.

Every writer takes blocks of consecutive query rows (``write``) and is
finished by ``close``. Files are written under a temporary name and renamed
only when the run succeeds (:func:`readalign.runtime.outfiles.atomic`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys

import numpy as np
from numba import njit
from numpy.lib import format as npformat

from ..runtime.decimal import write_decimal
from ..runtime.outfiles import atomic, is_stream, open_stream

TRIPLE_FIELDS = ("i", "j", "distance")


@njit(cache=True)
def _format_matrix(block, width):
    """Rows of ``block`` as tab-separated decimals, one line per row (``width``: digits + 1)."""
    buf = np.empty(block.shape[0] * (block.shape[1] * width + 1), np.uint8)
    pos = 0
    for r in range(block.shape[0]):
        for j in range(block.shape[1]):
            if j:
                buf[pos] = 9
                pos += 1
            pos = write_decimal(buf, pos, np.int64(block[r, j]))
        buf[pos] = 10
        pos += 1
    return buf[:pos]


@njit(cache=True)
def _format_triples(ii, jj, dd):
    """``i<TAB>j<TAB>d`` lines."""
    buf = np.empty(ii.shape[0] * 63, np.uint8)
    pos = 0
    for k in range(ii.shape[0]):
        pos = write_decimal(buf, pos, np.int64(ii[k]))
        buf[pos] = 9
        pos = write_decimal(buf, pos + 1, np.int64(jj[k]))
        buf[pos] = 9
        pos = write_decimal(buf, pos + 1, np.int64(dd[k]))
        buf[pos] = 10
        pos += 1
    return buf[:pos]


def format_matrix(block: np.ndarray) -> bytes:
    """TSV text of a block of non-negative integers."""
    if block.size == 0:
        return b"\n" * block.shape[0]
    width = len(str(int(block.max()))) + 1
    return _format_matrix(block, width).tobytes()


def format_triples(ii: np.ndarray, jj: np.ndarray, dd: np.ndarray) -> bytes:
    """TSV text of (i, j, distance) triples."""
    if ii.shape[0] == 0:
        return b""
    return _format_triples(ii, jj, dd).tobytes()


class DenseTsv:
    """Matrix rows as TSV lines to a binary stream."""

    def __init__(self, fh) -> None:
        self.fh = fh

    def write(self, block: np.ndarray, r0: int) -> None:
        self.fh.write(format_matrix(block))

    def close(self) -> None:
        self.fh.flush()

    def discard(self) -> None:
        """Nothing to clean up: the stream belongs to the caller."""


class TriplesTsv:
    """``i<TAB>j<TAB>distance`` lines to a binary stream."""

    def __init__(self, fh) -> None:
        self.fh = fh

    def write(self, triples, r0: int) -> None:
        self.fh.write(format_triples(*triples))

    def close(self) -> None:
        self.fh.flush()

    def discard(self) -> None:
        """Nothing to clean up: the stream belongs to the caller."""


class DenseNpy:
    """A ``.npy`` matrix of known shape, filled block by block through a memory map."""

    def __init__(self, path: str, shape: tuple[int, int], dtype) -> None:
        self.mm = npformat.open_memmap(path, mode="w+", dtype=dtype, shape=shape)

    def write(self, block: np.ndarray, r0: int) -> None:
        self.mm[r0:r0 + block.shape[0]] = block

    def close(self) -> None:
        self.mm.flush()
        del self.mm

    def discard(self) -> None:
        """Drop the map; the caller removes the file."""
        del self.mm


def triple_dtype(dtype) -> np.dtype:
    """Structured record of a triple: int64 ``i``, ``j`` and the distance type."""
    return np.dtype([("i", "<i8"), ("j", "<i8"), ("distance", np.dtype(dtype).newbyteorder("<"))])


class TriplesNpy:
    """A structured ``.npy`` of triples: records go to a side file, the header is written last."""

    def __init__(self, path: str, dtype) -> None:
        self.path = path
        self.dtype = triple_dtype(dtype)
        self.side = path + ".records"
        self.fh = open(self.side, "wb")  # noqa: SIM115 - closed in close()
        self.count = 0

    def write(self, triples, r0: int) -> None:
        rec = np.empty(triples[0].shape[0], dtype=self.dtype)
        for name, arr in zip(TRIPLE_FIELDS, triples, strict=True):
            rec[name] = arr
        rec.tofile(self.fh)
        self.count += rec.shape[0]

    def close(self) -> None:
        self.fh.close()
        header = {"descr": npformat.dtype_to_descr(self.dtype), "fortran_order": False,
                  "shape": (self.count,)}
        try:
            with open(self.path, "wb") as out, open(self.side, "rb") as src:
                npformat.write_array_header_1_0(out, header)
                shutil.copyfileobj(src, out, 1 << 22)
        finally:
            os.unlink(self.side)

    def discard(self) -> None:
        """Remove the side file of an unfinished run."""
        self.fh.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.side)


def _writer(path: str, fmt: str, sparse: bool, shape: tuple[int, int], dtype, fh):
    if fmt == "npy":
        return TriplesNpy(path, dtype) if sparse else DenseNpy(path, shape, dtype)
    return TriplesTsv(fh) if sparse else DenseTsv(fh)


@contextlib.contextmanager
def open_output(out: str, fmt: str, sparse: bool, shape: tuple[int, int], dtype):
    """Yield a writer for ``out``; a file appears under its name only if the block succeeds.

    TSV to stdout or to a named pipe or device is written there as it comes; a ``.npy``
    (filled in place) is made under a temporary name and then renamed onto a file or
    copied to a stream (:func:`~readalign.runtime.outfiles.atomic`).
    """
    if fmt == "tsv" and (out == "-" or is_stream(out)):  # written, never replaced
        with contextlib.ExitStack() as stack:
            fh = (sys.stdout.buffer if out == "-"
                  else stack.enter_context(os.fdopen(open_stream(out), "wb")))
            writer = _writer(out, fmt, sparse, shape, dtype, fh)
            yield writer
            writer.close()
        return
    with atomic(out) as tmp, contextlib.ExitStack() as stack:
        fh = stack.enter_context(open(tmp, "wb")) if fmt == "tsv" else None
        writer = _writer(tmp, fmt, sparse, shape, dtype, fh)
        try:
            yield writer
        except BaseException:
            writer.discard()
            raise
        writer.close()
