"""readalign: exact alignment of read/window pairs, on the GPU when there is one.

>>> import readalign
>>> res = readalign.align(["ACGT"], ["TTACGTTT"])
>>> int(res.distance[0]), int(res.ref_start[0]), res.cigar(0)
(0, 2, '4M')
"""

# first, so that it hears numba's first compile
from .kernels import compile_notice  # noqa: F401  # isort: skip

from ._version import __version__
from .api import align, edit_distance
from .distance.cdist import SparseDistances, cdist
from .engine.result import AlignResult
from .engine.scoring import Scoring
from .errors import BackendUnavailableError, InputError, ReadalignError

__all__ = [
    "AlignResult",
    "BackendUnavailableError",
    "InputError",
    "ReadalignError",
    "Scoring",
    "SparseDistances",
    "__version__",
    "align",
    "cdist",
    "edit_distance",
]
