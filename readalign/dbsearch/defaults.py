"""What ``readalign search --help`` states: defaults, matrices and report columns (no numpy,
no numba, so that the help stays fast)."""

from __future__ import annotations

from ..engine.matrices import MATRICES

MATRIX = "BLOSUM62"
GAP_OPEN = 11
GAP_EXTEND = 1
"""BLAST's defaults for BLOSUM62: a gap of length L costs ``11 + L``."""
MAX_HITS = 10
EVALUE = 10.0
"""BLAST's default E-value cut-off."""
MATRIX_NAMES = tuple(MATRICES)
