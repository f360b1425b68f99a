"""Read word lists: UTF-8 text files, one word per line.

Lines end at ``\\n``; one ``\\r`` before it (CRLF files) is removed. A
final ``\\n`` ends the last word rather than starting an empty one, so
``"a\\nb\\n"`` and ``"a\\nb"`` are both ``["a", "b"]``; every other empty
line is an empty word. A leading UTF-8 byte-order mark is dropped. No other
whitespace is stripped.
"""

from __future__ import annotations

import codecs
import os

from ..errors import InputError


def _decode(raw: bytes, path: str) -> str:
    """UTF-8 text of ``raw``; a one-line :class:`InputError` naming the line if it is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} "
                         f"at column {col})") from None


def split_words(text: str) -> list[str]:
    """Words of ``text`` by the rules of this module."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [w[:-1] if w.endswith("\r") else w for w in lines]


def read_words(path: str | os.PathLike) -> list[str]:
    """The words of the file at ``path``."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror or exc})") from None
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return split_words(_decode(raw, name))
