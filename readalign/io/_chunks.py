"""Read a byte stream in large pieces into one reused buffer, carrying unfinished lines over."""

from __future__ import annotations

from typing import BinaryIO

import numpy as np

from ..errors import InputError
from ._text import decompress_errors, display


class ChunkReader:
    """Fills one buffer with ``carried tail + next size bytes`` per :meth:`next` call.

    The view returned by :meth:`next` is overwritten by the following call, so
    callers copy what they keep. ``readinto`` avoids the ``rest + chunk`` copy
    and the page faults of a fresh buffer per piece.
    """

    def __init__(self, stream: BinaryIO, path: str, size: int) -> None:
        self._stream, self._path, self._size = stream, path, size
        self._buf = np.empty(size + (1 << 16), np.uint8)
        self._rest = 0  # bytes carried at the front of the buffer

    def next(self) -> tuple[np.ndarray, bool]:
        """The carried tail plus up to ``size`` new bytes, and whether the stream has ended."""
        need = self._rest + self._size
        if need > self._buf.shape[0]:
            grown = np.empty(need + (need >> 2), np.uint8)
            grown[:self._rest] = self._buf[:self._rest]
            self._buf = grown
        got = self._fill(self._buf[self._rest:need])
        return self._buf[:self._rest + got], got == 0

    def carry(self, arr: np.ndarray, used: int) -> None:
        """Keep ``arr[used:]`` (the last :meth:`next` view) for the front of the next piece.

        ``used`` may point one past the end: a final line without a newline ends there.
        """
        used = min(used, arr.shape[0])
        n = arr.shape[0] - used
        if n and used:
            self._buf[:n] = self._buf[used:used + n].copy()
        self._rest = n

    def _fill(self, out: np.ndarray) -> int:
        view = memoryview(out)
        got = 0
        try:
            while got < out.shape[0]:
                k = self._stream.readinto(view[got:])
                if not k:
                    break
                got += k
        except decompress_errors() as exc:
            raise InputError(f"{display(self._path)}: corrupt or truncated compressed data "
                             f"({exc})") from None
        return got
