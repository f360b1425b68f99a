"""Lists of Python strings read where CPython keeps them: the engine's fast path for list inputs.

A list (or tuple) of ASCII ``str`` or of ``bytes`` is read in place on every core: each
element's type, length and letters straight from CPython's object headers
(:mod:`.pyobjects`), every element kept alive by reference counts changed on helper threads
while the caller keeps the GIL (:mod:`.pyrefs`), through compiled raw-memory reads
(:mod:`.rawmemory`). Anything else (another implementation or build whose headers do not
match the probe, a non-ASCII ``str``, mixed kinds, an empty list) takes the general path:
:mod:`readalign.engine.packing` joins and encodes the list, and names a bad element.

The engine enters this folder through :func:`read_in_place` alone; what it returns, a
:class:`StringRows`, offers the packed sequences' interface (``lengths``, ``data``,
``offsets``, ``stage_into``) and :meth:`StringRows.release`.

Off switch: ``READALIGN_LIST_FAST_PATH=0`` in the environment (read when this module is
imported; ``false``, ``no`` and ``off`` do the same), or :data:`FAST_PATH` set to False,
sends every list down the general path. Both paths give the same results, field for field
and CIGAR for CIGAR (``tests/engine/test_pylists.py``); the switch rules this path out when a
result is in doubt, and times the general path against it.
"""

from __future__ import annotations

import os

import numpy as np

from .pyobjects import StringRows, read_strings

SWITCH = "READALIGN_LIST_FAST_PATH"
"""The environment variable that turns the fast path off (``0``, ``false``, ``no``, ``off``)."""

FAST_PATH = os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")
"""Whether lists are read in place (:func:`read_in_place`); False: always the general path."""

__all__ = ["FAST_PATH", "SWITCH", "StringRows", "read_in_place"]


def read_in_place(seqs: object, table: np.ndarray | None) -> StringRows | None:
    """``seqs`` read where CPython keeps it, letters through ``table`` (byte to code; None: as
    their bytes), if it is a non-empty list or tuple of ASCII ``str`` or of ``bytes`` and the
    fast path is on (:data:`FAST_PATH`); None otherwise: the caller packs it the general way."""
    if not FAST_PATH:
        return None
    return read_strings(seqs, table)
