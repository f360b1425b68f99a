"""readalign: exact alignment of read/window pairs, on the GPU when there is one.

>>> import readalign
>>> res = readalign.align(["ACGT"], ["TTACGTTT"])
>>> int(res.distance[0]), int(res.ref_start[0]), res.cigar(0)
(0, 2, '4M')
"""

from . import compile_notice  # noqa: F401  (first: it listens for numba's compiles)
from .api import align, edit_distance
from .errors import BackendUnavailableError, InputError, ReadalignError
from .result import AlignResult
from .words import SparseDistances, cdist

__version__ = "0.1.0"

__all__ = [
    "AlignResult",
    "BackendUnavailableError",
    "InputError",
    "ReadalignError",
    "SparseDistances",
    "__version__",
    "align",
    "cdist",
    "edit_distance",
]
