"""The checks on the arguments of readalign's public functions: one rule for all of them.

:func:`readalign.align`, :func:`readalign.edit_distance` and :func:`readalign.cdist`
take two lists of sequences, a cut-off, a backend and a thread count; each checks
them here, through :func:`check_arguments`, before any work starts, so that the same
mistake gets the same error from every function, and the error names the argument
(``reads``, ``windows``, ``a``, ``b``, ``queries``, ``choices``, ``threads``...).
An element of the wrong type is named with its index (``reads[2]``) by the packers
(:mod:`readalign.engine.packing`), which meet every element anyway and find a
mismatch in C before looking for which one it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from .backends import check_backend

Sequences = Sequence | np.ndarray
"""A list of sequences as the packers take it: a list or tuple, or a 1-D array."""

_WANTED = "a list, tuple or 1-D array of str or bytes"


def _refusal(name: str, got: str) -> TypeError:
    return TypeError(f"{name} must be {_WANTED}; got {got}")


def sequence_list(value: object, name: str) -> Sequences:
    """``value`` as a list of sequences, or a TypeError naming ``name``.

    A list or tuple, or a 1-D array of ``str`` (``U``) or ``bytes`` (``S``), is used as it
    is; an array of objects becomes a list; any other iterable (a generator, a pandas
    Series) is read into a list once. A single ``str`` or ``bytes``, ``None``, a number, a
    set or mapping (no order to pair or index by) and arrays of other shapes or types are
    refused.
    """
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise _refusal(name, f"an array of shape {value.shape}")
        if value.dtype.kind in "SU":
            return value
        if value.dtype.kind == "O":
            return value.tolist()
        raise _refusal(name, f"an array of {value.dtype}")
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        raise _refusal(name, f"a single {type(value).__name__} (wrap it in a list)")
    if isinstance(value, (AbstractSet, Mapping)):
        raise _refusal(name, f"a {type(value).__name__}, which has no order to pair or index by")
    if isinstance(value, Sequence):
        return value
    if isinstance(value, Iterable):
        return list(value)
    raise _refusal(name, "None" if value is None else type(value).__name__)


def text_kind(seqs: Sequences) -> type | None:
    """``str`` or ``bytes``: what a checked list holds, judged by its first element (the packers
    require the rest to match); None when it is empty or its first element is neither."""
    if isinstance(seqs, np.ndarray):
        return str if seqs.dtype.kind == "U" else bytes
    if len(seqs) == 0:
        return None
    first = seqs[0]
    if isinstance(first, str):
        return str
    return bytes if isinstance(first, (bytes, bytearray)) else None


def check_max_distance(max_distance: object) -> int:
    """``max_distance`` as an int, -1 for None (no cut-off); TypeError or ValueError naming it."""
    if max_distance is None:
        return -1
    if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)):
        raise TypeError(f"max_distance must be None or an int >= 0; got {max_distance!r}")
    if max_distance < 0:
        raise ValueError(f"max_distance must be None or an int >= 0; got {max_distance}")
    return int(max_distance)


def check_threads(threads: object) -> int | None:
    """``threads`` as an int >= 1, or None (every thread of numba's pool), as ``--threads``."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be None or an int >= 1; got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be None or an int >= 1; got {threads}")
    return int(threads)


def check_k(k: object) -> int:
    """The quadrant size ``k`` as an int between 2 and 64; ValueError naming it."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= 64:
        raise ValueError(f"k (quadrant size) must be an int between 2 and 64; got {k!r}")
    return int(k)


@dataclass(frozen=True)
class Arguments:
    """A public call's checked arguments; ``second`` is None where the call allows it
    (:func:`readalign.cdist` without ``choices``)."""

    first: Sequences
    second: Sequences | None
    max_distance: int  # -1: no cut-off
    threads: int | None
    backend: str


def check_arguments(first: tuple[str, object], second: tuple[str, object | None], *,
                    paired: bool, max_distance: object = None, threads: object = None,
                    backend: object = "auto") -> Arguments:
    """Check the arguments every public function shares; raise the error that names the bad one.

    ``first`` and ``second`` are ``(name, value)`` of the two lists of sequences
    (:func:`sequence_list`); ``second``'s value may be None only when the call is not
    ``paired``. Both lists must hold the same kind (``str`` or ``bytes``; TypeError naming
    both), and when ``paired`` (element i of one goes with element i of the other) the
    same number of sequences (ValueError naming both).
    """
    (a_name, a_value), (b_name, b_value) = first, second
    a = sequence_list(a_value, a_name)
    b = None if b_value is None and not paired else sequence_list(b_value, b_name)
    if b is not None:
        if paired and len(a) != len(b):
            raise ValueError(f"{a_name} has {len(a)} sequences but {b_name} has {len(b)}: "
                             "counts must match")
        a_kind, b_kind = text_kind(a), text_kind(b)
        if a_kind is not None and b_kind is not None and a_kind is not b_kind:
            raise TypeError(f"{a_name} are {a_kind.__name__} but {b_name} are "
                            f"{b_kind.__name__}: give both as str or both as bytes")
    return Arguments(a, b, check_max_distance(max_distance), check_threads(threads),
                     check_backend(backend))
