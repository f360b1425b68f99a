"""readalign: exact alignment of read/window pairs, on the GPU when there is one.

>>> import readalign
>>> res = readalign.align(["ACGT"], ["TTACGTTT"])
>>> int(res.distance[0]), int(res.ref_start[0]), res.cigar(0)
(0, 2, '4M')

The alignment functions and types load on first use (PEP 562), so that ``import
readalign`` and ``readalign --help`` do not pay for numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .errors import BackendUnavailableError, GPUMemoryError, InputError, ReadalignError

_LAZY = {
    "AlignResult": ".engine.result",
    "Scoring": ".engine.scoring",
    "SearchHits": ".dbsearch.report",
    "SparseDistances": ".words.cdist",
    "align": ".api",
    "cdist": ".words.cdist",
    "edit_distance": ".api",
    "free_gpu_memory": ".api",
    "search": ".dbsearch.api",
}
"""Public names loaded on first use, and the module of each."""

__all__ = [
    "AlignResult",
    "BackendUnavailableError",
    "GPUMemoryError",
    "InputError",
    "ReadalignError",
    "Scoring",
    "SearchHits",
    "SparseDistances",
    "__version__",
    "align",
    "cdist",
    "edit_distance",
    "free_gpu_memory",
    "search",
]


def __getattr__(name: str) -> object:
    """Load a public name's module on first use (numba's compile notice goes in first)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'readalign' has no attribute {name!r}")
    importlib.import_module(".kernels.compile_notice", __name__)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from .api import align, edit_distance, free_gpu_memory
    from .dbsearch.api import search
    from .dbsearch.report import SearchHits
    from .engine.result import AlignResult
    from .engine.scoring import Scoring
    from .words.cdist import SparseDistances, cdist
