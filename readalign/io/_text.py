"""Shared helpers for reading input files: open by magic bytes, scan bytes with numba."""

from __future__ import annotations

import gzip
import os
from typing import BinaryIO

import numpy as np
from numba import njit

from ..errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 1 << 22


def display(path: str) -> str:
    """The name an error message uses for a file."""
    return os.path.basename(path) if path != "-" else "<stdin>"


def open_bytes(path: str) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing gzip/bgzip (found by magic bytes).

    An empty file (before or after decompression) raises :class:`InputError`.
    """
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except OSError as exc:
        raise InputError(f"{display(path)}: cannot open ({exc.strerror})") from None
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    stream: BinaryIO = gzip.GzipFile(fileobj=raw) if head == GZIP_MAGIC else raw
    try:
        first = stream.peek(1)[:1] if hasattr(stream, "peek") else b""
    except (OSError, EOFError) as exc:
        raise InputError(f"{display(path)}: corrupt gzip data ({exc})") from None
    if not first:
        raise InputError(f"{display(path)}: empty file")
    return stream


def read_chunk(stream: BinaryIO, path: str, size: int = CHUNK_BYTES) -> bytes:
    """Read up to ``size`` bytes, turning decompression errors into :class:`InputError`."""
    try:
        return stream.read(size)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{display(path)}: corrupt or truncated compressed data ({exc})") from None


@njit(cache=True, nogil=True)
def gather_spans(buf, starts, ends):
    """Concatenate ``buf[starts[i]:ends[i]]`` into one array plus int64 offsets."""
    n = starts.shape[0]
    off = np.zeros(n + 1, np.int64)
    for i in range(n):
        off[i + 1] = off[i] + (ends[i] - starts[i])
    out = np.empty(off[n], np.uint8)
    for i in range(n):
        s = starts[i]
        o = off[i]
        for k in range(ends[i] - s):
            out[o + k] = buf[s + k]
    return out, off


@njit(cache=True, nogil=True)
def parse_int(buf, s, e):
    """Parse a non-negative decimal in ``buf[s:e]``; return (value, ok)."""
    if e <= s or e - s > 18:
        return 0, False
    v = 0
    for k in range(s, e):
        c = buf[k]
        if c < 48 or c > 57:
            return 0, False
        v = v * 10 + (c - 48)
    return v, True


@njit(cache=True, nogil=True)
def fnv1a(buf, s, e):
    """64-bit FNV-1a hash of ``buf[s:e]`` (name look-ups in numba code)."""
    h = np.uint64(14695981039346656037)
    for k in range(s, e):
        h = (h ^ np.uint64(buf[k])) * np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def split_lines(buf, final, nfields, fs, fe, nf, line_start):
    """Split ``buf`` into tab-separated lines, recording up to ``nfields`` field spans.

    Fills ``fs``/``fe`` (lines x nfields) with field spans, ``nf`` with the
    field count of each line (0 for an empty line) and ``line_start`` with each
    line's offset. A trailing ``\\r`` is dropped. Stops at the arrays' capacity
    or at a line without a newline unless ``final``. Returns (lines, consumed bytes).
    """
    cap = nf.shape[0]
    n = buf.shape[0]
    pos = 0
    lines = 0
    while lines < cap and pos < n:
        e = pos
        while e < n and buf[e] != 10:
            e += 1
        if e == n and not final:
            break
        nxt = e + 1
        if e > pos and buf[e - 1] == 13:
            e -= 1
        line_start[lines] = pos
        count = 0
        if e > pos:
            s = pos
            for k in range(pos, e + 1):
                if k == e or buf[k] == 9:
                    if count < nfields:
                        fs[lines, count] = s
                        fe[lines, count] = k
                    count += 1
                    s = k + 1
        nf[lines] = count
        lines += 1
        pos = nxt
    return lines, min(pos, n)


def as_text(buf: np.ndarray, s: int, e: int, limit: int = 60) -> str:
    """Bytes ``buf[s:e]`` as printable text for an error message."""
    text = bytes(buf[s:min(e, s + limit)]).decode("latin-1")
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text + ("..." if e - s > limit else "")
