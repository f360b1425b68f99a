"""How alignments are scored: match/mismatch for DNA, a substitution matrix for protein, affine gaps.

A gap of length L costs ``gap_open + L * gap_extend`` (the BWA and minimap2
convention; linear gaps are ``gap_open=0``). Penalties are given as positive
numbers. DNA is upper-cased and every letter but A, C, G, T is N, which scores
``-mismatch`` against everything, N included. Protein sequences are upper-cased
and must use the matrix's letters: any other letter is an error naming the
sequence and the position (``X`` is not substituted silently).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..kernels.scored_quadrant import MAX_ALPHABET
from .job import Scores
from .matrices import ALPHABET, MATRICES
from .packing import DNA_CODES, N_CODE, NO_N

INVALID = 255
"""Code of a byte that is not in the scoring's alphabet."""
MAX_SCORE = 1000
"""Largest magnitude of any score or penalty: the kernels' int32 cells then hold any alignment
of sequences up to hundreds of thousands of symbols."""


def _count(name: str, value: object, minimum: int = 0) -> int:
    """A whole number >= ``minimum``, or a ValueError naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    if value > MAX_SCORE:
        raise ValueError(f"{name} must be <= {MAX_SCORE}; got {value}")
    return int(value)


def _user_matrix(matrix: object, alphabet: object) -> tuple[np.ndarray, str]:
    """A user matrix (2-D array-like, or a mapping of letter pairs) and its alphabet."""
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError("alphabet must be given (a str of the matrix's letters) with a user matrix")
    letters = alphabet.upper()
    if len(letters) > MAX_ALPHABET:
        raise ValueError(f"alphabet has {len(letters)} letters; at most {MAX_ALPHABET}")
    if len(set(letters)) != len(letters):
        raise ValueError(f"alphabet has a repeated letter: {alphabet!r}")
    size = len(letters)
    if isinstance(matrix, Mapping):
        table = np.zeros((size, size), np.int64)
        for a in range(size):
            for b in range(size):
                key = (letters[a], letters[b])
                if key not in matrix and (letters[b], letters[a]) not in matrix:
                    raise ValueError(f"matrix has no score for {key[0]}/{key[1]}")
                table[a, b] = matrix.get(key, matrix.get((letters[b], letters[a])))
    else:
        try:
            table = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("matrix must be a name, a square 2-D array or a mapping") from None
        if table.ndim != 2 or table.shape[0] != table.shape[1]:
            raise ValueError(f"matrix must be square; got shape {table.shape}")
        if table.shape[0] != size:
            raise ValueError(f"matrix is {table.shape[0]}x{table.shape[0]} but alphabet has "
                             f"{size} letters")
        if not np.all(table == np.round(table)):
            raise ValueError("matrix must hold whole numbers")
    if np.abs(table).max(initial=0) > MAX_SCORE:
        raise ValueError(f"matrix scores must lie within ±{MAX_SCORE}")
    if not np.array_equal(table, table.T):
        raise ValueError("matrix must be symmetric (score(a, b) == score(b, a))")
    return table.astype(np.int32), letters


class Scoring:
    """Scores for :func:`readalign.align`: DNA match/mismatch or a protein matrix, affine gaps.

    ``Scoring(match=1, mismatch=4, gap_open=6, gap_extend=1)`` scores DNA;
    ``Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)`` protein (BLOSUM45,
    BLOSUM50, BLOSUM62, BLOSUM80, PAM250, or a square symmetric matrix with its
    ``alphabet``). Penalties are positive; a gap of length L costs
    ``gap_open + L * gap_extend``. ``clip_penalty`` (local mode only, BWA's ``-L``)
    is charged once for each read end that the alignment leaves unaligned (soft
    clipped): a read is clipped only where that scores better by more than the
    penalty, and ``score`` is the aligned part's score minus the penalties.
    """

    def __init__(self, match: int = 1, mismatch: int = 4, gap_open: int = 6, gap_extend: int = 1,
                 *, matrix: object = None, alphabet: str | None = None,
                 clip_penalty: int = 0) -> None:
        self.gap_open = _count("gap_open", gap_open)
        self.gap_extend = _count("gap_extend", gap_extend)
        self.clip_penalty = _count("clip_penalty", clip_penalty)
        if self.gap_open + self.gap_extend == 0:
            raise ValueError("gap_open + gap_extend must be > 0 (free gaps make every "
                             "alignment a gap run)")
        if matrix is None:
            self.match = _count("match", match)
            self.mismatch = _count("mismatch", mismatch)
            self.name = "dna"
            self.alphabet = "ACGTN"
            table = np.full((5, 5), -self.mismatch, np.int32)
            np.fill_diagonal(table[:4, :4], self.match)
            self.codes = DNA_CODES
            self.n_code = N_CODE
        else:
            self.match = self.mismatch = None
            if isinstance(matrix, str):
                key = matrix.upper()
                if key not in MATRICES:
                    raise ValueError(f"matrix: unknown name {matrix!r}; one of "
                                     f"{', '.join(MATRICES)} or a square array with an alphabet")
                table, self.alphabet, self.name = (np.array(MATRICES[key], np.int32), ALPHABET,
                                                   key)
            else:
                table, self.alphabet = _user_matrix(matrix, alphabet)
                self.name = "user"
            self.codes = self._code_table(self.alphabet)
            self.n_code = NO_N
        table.setflags(write=False)
        self.matrix = table

    @staticmethod
    def _code_table(alphabet: str) -> np.ndarray:
        codes = np.full(256, INVALID, np.uint8)
        for i, c in enumerate(alphabet):
            codes[ord(c)] = i
            codes[ord(c.lower())] = i
        return codes

    @property
    def is_dna(self) -> bool:
        """True for match/mismatch scoring of DNA (codes as :func:`readalign.align` packs DNA)."""
        return self.name == "dna"

    @property
    def best_substitution(self) -> int:
        """The highest score a single aligned pair of letters can get."""
        return int(self.matrix.max())

    def check_local(self) -> None:
        """Local alignment needs a positive score somewhere, or every alignment is empty."""
        if self.best_substitution <= 0:
            if self.is_dna:
                raise ValueError(f"match must be > 0 for mode='local'; got {self.match}")
            raise ValueError("matrix must score some pair > 0 for mode='local'")

    def flat(self) -> np.ndarray:
        """The matrix as the kernels read it: ``sub[a * A + b]``, int32."""
        return np.ascontiguousarray(self.matrix, dtype=np.int32).ravel()

    def scores(self, mode: int) -> Scores:
        """The tables the scored kernel reads for this scoring in ``mode``
        (:data:`readalign.kernels.scored_quadrant.GLOBAL`, ``INFIX`` or ``LOCAL``)."""
        return Scores(mode, self.flat(), len(self.alphabet), self.gap_open, self.gap_extend,
                      self.clip_penalty)

    def __repr__(self) -> str:
        gaps = f"gap_open={self.gap_open}, gap_extend={self.gap_extend}"
        if self.clip_penalty:
            gaps += f", clip_penalty={self.clip_penalty}"
        if self.is_dna:
            return f"Scoring(match={self.match}, mismatch={self.mismatch}, {gaps})"
        return f"Scoring(matrix={self.name!r}, {gaps})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Scoring) and self.alphabet == other.alphabet
                and self.gap_open == other.gap_open and self.gap_extend == other.gap_extend
                and self.clip_penalty == other.clip_penalty
                and np.array_equal(self.matrix, other.matrix))

    def __hash__(self) -> int:
        return hash((self.alphabet, self.gap_open, self.gap_extend, self.clip_penalty,
                     self.matrix.tobytes()))
