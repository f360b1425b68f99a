"""Karlin–Altschul statistics of gapped local alignment scores: bit scores and E-values.

A local alignment of raw score ``S`` has the bit score ``(λS − ln K) / ln 2`` and the
E-value ``K · m' · n' · e^(−λS)``, where ``m'`` and ``n'`` are the query's and the
database's effective lengths. ``λ`` and ``K`` of a gapped search are not computed from the
matrix: they were fitted by simulation and are published in BLAST's tables (NCBI's
``blast_stat.c``), one row per matrix and gap pair; :data:`PARAMETERS` holds those rows for
the matrices :class:`readalign.Scoring` knows by name.

The effective lengths follow BLAST (Altschul et al. 2001, "The estimation of statistical
parameters for local alignment score distributions"): an alignment cannot start within its
expected length ``ℓ`` of a sequence's end, so the query counts ``m − ℓ`` residues and the
database ``n − N·ℓ`` (``n`` residues in ``N`` sequences), where ``ℓ`` solves

    ℓ = (α/λ) · ln(K · (m − ℓ) · (n − N·ℓ)) + β

with the row's ``α`` and ``β`` (:func:`length_adjustment`: BLAST's iteration, rounded
down to a whole residue as BLAST does). Gap costs are BLAST's: a gap of length L costs
``open + L · extend``, the convention :class:`readalign.Scoring` uses, so BLAST's
``-gapopen 11 -gapextend 1`` is ``Scoring(gap_open=11, gap_extend=1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class Parameters:
    """One row of BLAST's gapped parameters: a matrix and gap pair, ``λ``, ``K``, ``H``
    (relative entropy, nats per aligned pair), ``α`` and ``β`` (the length correction)."""

    matrix: str
    gap_open: int
    gap_extend: int
    lam: float
    k: float
    h: float
    alpha: float
    beta: float

    @property
    def log_k(self) -> float:
        """``ln K``."""
        return math.log(self.k)


_ROWS: dict[str, tuple[tuple[float, ...], ...]] = {
    # open, extend, lambda, K, H, alpha, beta (NCBI blast_stat.c, gapped rows)
    "BLOSUM45": (
        (13, 3, 0.207, 0.049, 0.14, 1.5, -22), (12, 3, 0.199, 0.039, 0.11, 1.8, -34),
        (11, 3, 0.190, 0.031, 0.095, 2.0, -38), (10, 3, 0.179, 0.023, 0.075, 2.4, -51),
        (16, 2, 0.210, 0.051, 0.14, 1.5, -24), (15, 2, 0.203, 0.041, 0.12, 1.7, -31),
        (14, 2, 0.195, 0.032, 0.10, 1.9, -36), (13, 2, 0.185, 0.024, 0.084, 2.2, -45),
        (12, 2, 0.171, 0.016, 0.061, 2.8, -65), (19, 1, 0.205, 0.040, 0.11, 1.9, -43),
        (18, 1, 0.198, 0.032, 0.10, 2.0, -43), (17, 1, 0.189, 0.024, 0.079, 2.4, -57),
        (16, 1, 0.176, 0.016, 0.063, 2.8, -67),
    ),
    "BLOSUM50": (
        (13, 3, 0.212, 0.063, 0.19, 1.1, -16), (12, 3, 0.206, 0.055, 0.17, 1.2, -18),
        (11, 3, 0.197, 0.042, 0.14, 1.4, -25), (10, 3, 0.186, 0.031, 0.11, 1.7, -34),
        (9, 3, 0.172, 0.022, 0.082, 2.1, -48), (16, 2, 0.215, 0.066, 0.20, 1.05, -15),
        (15, 2, 0.210, 0.058, 0.17, 1.2, -20), (14, 2, 0.202, 0.045, 0.14, 1.4, -27),
        (13, 2, 0.193, 0.035, 0.12, 1.6, -32), (12, 2, 0.181, 0.025, 0.095, 1.9, -41),
        (19, 1, 0.212, 0.057, 0.18, 1.2, -21), (18, 1, 0.207, 0.050, 0.15, 1.4, -28),
        (17, 1, 0.198, 0.037, 0.12, 1.6, -33), (16, 1, 0.186, 0.025, 0.10, 1.9, -42),
        (15, 1, 0.171, 0.015, 0.063, 2.7, -76),
    ),
    "BLOSUM62": (
        (11, 2, 0.297, 0.082, 0.27, 1.1, -10), (10, 2, 0.291, 0.075, 0.23, 1.3, -15),
        (9, 2, 0.279, 0.058, 0.19, 1.5, -19), (8, 2, 0.264, 0.045, 0.15, 1.8, -26),
        (7, 2, 0.239, 0.027, 0.10, 2.5, -46), (6, 2, 0.201, 0.012, 0.061, 3.3, -58),
        (13, 1, 0.292, 0.071, 0.23, 1.2, -11), (12, 1, 0.283, 0.059, 0.19, 1.5, -19),
        (11, 1, 0.267, 0.041, 0.14, 1.9, -30), (10, 1, 0.243, 0.024, 0.10, 2.5, -44),
        (9, 1, 0.206, 0.010, 0.052, 4.0, -87),
    ),
    "BLOSUM80": (
        (25, 2, 0.342, 0.17, 0.66, 0.52, -1.6), (13, 2, 0.336, 0.15, 0.57, 0.59, -3),
        (9, 2, 0.319, 0.11, 0.42, 0.76, -6), (8, 2, 0.308, 0.090, 0.35, 0.89, -9),
        (7, 2, 0.293, 0.070, 0.27, 1.1, -14), (6, 2, 0.268, 0.045, 0.19, 1.4, -19),
        (11, 1, 0.314, 0.095, 0.35, 0.90, -9), (10, 1, 0.299, 0.071, 0.27, 1.1, -14),
        (9, 1, 0.279, 0.048, 0.20, 1.4, -19),
    ),
    "PAM250": (
        (15, 3, 0.205, 0.049, 0.13, 1.6, -23), (14, 3, 0.200, 0.043, 0.12, 1.7, -26),
        (13, 3, 0.194, 0.036, 0.10, 1.9, -31), (12, 3, 0.186, 0.029, 0.085, 2.2, -41),
        (11, 3, 0.174, 0.020, 0.070, 2.5, -48), (17, 2, 0.204, 0.047, 0.12, 1.7, -28),
        (16, 2, 0.198, 0.038, 0.11, 1.8, -29), (15, 2, 0.191, 0.031, 0.087, 2.2, -44),
        (14, 2, 0.182, 0.024, 0.073, 2.5, -53), (13, 2, 0.171, 0.017, 0.059, 2.9, -64),
        (21, 1, 0.205, 0.045, 0.11, 1.8, -34), (20, 1, 0.199, 0.037, 0.10, 1.9, -35),
        (19, 1, 0.192, 0.029, 0.083, 2.3, -52), (18, 1, 0.183, 0.021, 0.070, 2.6, -60),
        (17, 1, 0.171, 0.014, 0.052, 3.3, -86),
    ),
}

PARAMETERS: dict[tuple[str, int, int], Parameters] = {
    (name, int(row[0]), int(row[1])): Parameters(name, int(row[0]), int(row[1]), *row[2:])
    for name, rows in _ROWS.items() for row in rows
}
"""BLAST's gapped Karlin–Altschul parameters by ``(matrix, gap_open, gap_extend)``."""


def supported_gaps(matrix: str) -> list[tuple[int, int]]:
    """The gap pairs (open, extend) BLAST tabulates for ``matrix``, as listed there."""
    return [(go, ge) for (name, go, ge) in PARAMETERS if name == matrix]


def parameters(matrix: str, gap_open: int, gap_extend: int) -> Parameters:
    """The row for ``matrix`` with gaps ``gap_open``/``gap_extend``, or an
    :class:`~readalign.errors.InputError` naming the pairs that have one."""
    key = (matrix.upper(), int(gap_open), int(gap_extend))
    if key in PARAMETERS:
        return PARAMETERS[key]
    names = sorted({name for name, _, _ in PARAMETERS})
    if key[0] not in names:
        raise InputError(f"no E-value statistics for matrix {matrix!r}; one of "
                         f"{', '.join(names)}")
    pairs = ", ".join(f"{go}/{ge}" for go, ge in supported_gaps(key[0]))
    raise InputError(f"no E-value statistics for {key[0]} with gap open/extend "
                     f"{gap_open}/{gap_extend}; {key[0]} has {pairs}")


MAX_ITERATIONS = 20
"""Steps of :func:`length_adjustment`'s search (BLAST's count)."""


def length_adjustment(p: Parameters, query_length: int, db_residues: int, db_sequences: int) -> int:
    """The expected HSP length ``ℓ`` BLAST subtracts from the query and from every database
    sequence: the largest whole ``ℓ`` below the fixed point of
    ``ℓ = (α/λ)·ln(K·(m − ℓ)·(n − N·ℓ)) + β`` (0 when the search space is too small for one).

    The search keeps ``ℓ`` between a lower bound (a value whose right-hand side is at least
    itself) and an upper bound (the largest ``ℓ`` with ``K·(m − ℓ)·(n − N·ℓ) ≥ max(m, n)``)
    and stops once the right-hand side is within one residue of the lower bound.
    """
    m, n, count = float(query_length), float(db_residues), float(db_sequences)
    alpha_lam = p.alpha / p.lam

    def rhs(ell: float) -> float:
        return alpha_lam * (p.log_k + math.log((m - ell) * (n - count * ell))) + p.beta

    a, b, c = count, m * count + n, m * n - max(m, n) / p.k
    if c < 0:
        return 0
    hi = 2 * c / (b + math.sqrt(b * b - 4 * a * c))  # the smaller root of a·ℓ² − b·ℓ + c
    lo, ell, converged = 0.0, 0.0, False
    for step in range(1, MAX_ITERATIONS + 1):
        target = rhs(ell)
        if target >= ell:
            lo = ell
            if target - lo <= 1.0:
                converged = True
                break
            if lo == hi:
                break
        else:
            hi = ell
        if lo <= target <= hi:
            ell = target
        else:
            ell = hi if step == 1 else (lo + hi) / 2
    if not converged:
        return int(lo)
    whole = math.ceil(lo)
    if whole <= hi and rhs(whole) >= whole:
        return int(whole)
    return int(lo)


@dataclass(frozen=True)
class SearchSpace:
    """One query's search space against a database: the effective lengths and their product."""

    query_length: int
    length_adjustment: int
    effective_query: int
    effective_db: int

    @property
    def size(self) -> float:
        """``m' · n'``, the effective search space."""
        return float(self.effective_query) * float(self.effective_db)


def search_space(p: Parameters, query_length: int, db_residues: int, db_sequences: int) -> SearchSpace:
    """The effective search space of a query of ``query_length`` residues against a database
    of ``db_residues`` in ``db_sequences`` sequences (each effective length at least 1)."""
    ell = length_adjustment(p, query_length, db_residues, db_sequences)
    eff_q = max(query_length - ell, 1)
    eff_db = max(db_residues - db_sequences * ell, 1)
    return SearchSpace(query_length, ell, eff_q, eff_db)


def bit_scores(p: Parameters, scores: np.ndarray) -> np.ndarray:
    """Bit scores ``(λS − ln K) / ln 2`` of raw scores ``S`` (float64)."""
    return (p.lam * np.asarray(scores, np.float64) - p.log_k) / math.log(2)


def evalues(p: Parameters, scores: np.ndarray, space: SearchSpace) -> np.ndarray:
    """E-values ``K · m' · n' · e^(−λS)`` of raw scores ``S`` in ``space`` (float64)."""
    return p.k * space.size * np.exp(-p.lam * np.asarray(scores, np.float64))

