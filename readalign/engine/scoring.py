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
    """How :func:`readalign.align` scores: DNA match/mismatch or a protein matrix, affine gaps.

    Parameters
    ----------
    match : int
        DNA: the score of two equal bases (A, C, G, T), 0-1000.
    mismatch : int
        DNA: the penalty of two different bases, or of N against anything (N included),
        0-1000; scored as ``-mismatch``.
    gap_open : int
        The penalty for opening a gap, 0-1000: a gap of length L costs
        ``gap_open + L * gap_extend`` (the BWA and minimap2 convention; parasail's open
        penalty is ``gap_open + gap_extend``). ``gap_open=0`` gives linear gaps.
    gap_extend : int
        The penalty for each gap base, 0-1000; ``gap_open + gap_extend`` must be above 0.
    matrix : str or array-like or mapping, optional
        Protein (or any alphabet): a name (``"BLOSUM45"``, ``"BLOSUM50"``, ``"BLOSUM62"``,
        ``"BLOSUM80"``, ``"PAM250"``: the NCBI tables over ``ARNDCQEGHILKMFPSTWYVBZX*``), a
        square symmetric 2-D array of whole numbers within ±1000, or a mapping
        ``{("A", "B"): score}`` (one of each symmetric pair suffices). ``match`` and
        ``mismatch`` are then ignored.
    alphabet : str, optional
        The letters of a user ``matrix``'s rows and columns, in order (at most 64).
    clip_penalty : int
        Local mode only (BWA's ``-L``): charged once for each read end left unaligned (soft
        clipped), 0-1000.

    Attributes
    ----------
    gap_open, gap_extend, clip_penalty : int
        As given.
    match, mismatch : int or None
        As given for DNA; None with a ``matrix``.
    matrix : numpy.ndarray
        The substitution scores (int32, read-only), rows and columns in ``alphabet`` order;
        for DNA over ``ACGTN``.
    alphabet : str
        The letters the scores are over (``"ACGTN"`` for DNA).
    name : str
        ``"dna"``, the matrix's name, or ``"user"``.

    Raises
    ------
    ValueError
        A penalty or score that is not a whole number, or is negative or above 1000; free
        gaps (``gap_open + gap_extend == 0``); an unknown matrix name; a user matrix that is
        not square, not symmetric, of another size than ``alphabet``, or without its
        ``alphabet``; a repeated letter in ``alphabet``.

    See Also
    --------
    align : takes it as ``scoring=``.

    Notes
    -----
    Penalties are positive numbers. DNA is upper-cased and every letter but A, C, G, T is
    N. With a matrix, letters are upper-cased and must be in its alphabet: any other letter
    makes :func:`readalign.align` raise a ValueError naming the sequence and the position
    (nothing is turned into ``X`` silently). Local mode needs some pair to score above 0.
    With ``clip_penalty`` a read end is clipped only where that scores better by more than
    the penalty, and the score is the aligned part's minus the penalties. Scorings compare
    equal when their letters, scores and penalties do, and can be dictionary keys.

    Examples
    --------
    >>> import readalign
    >>> s = readalign.Scoring(match=1, mismatch=4, gap_open=6, gap_extend=1)
    >>> s
    Scoring(match=1, mismatch=4, gap_open=6, gap_extend=1)
    >>> res = readalign.align(["ACGTTGCATGCAGGGGGGGGGG"], ["TTACGTTGCATGCATT"], mode="local",
    ...                       scoring=s)
    >>> res.score.tolist(), res.cigar(0)
    ([12], '12M10S')
    >>> p = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    >>> readalign.align(["HEAGAWGHEE"], ["PAWHEAE"], mode="local", scoring=p).score.tolist()
    [17]
    >>> u = readalign.Scoring(matrix=[[2, -1], [-1, 2]], alphabet="XY", gap_open=2, gap_extend=1)
    >>> readalign.align(["XYXY"], ["XYYXY"], mode="global", scoring=u).score.tolist()
    [5]
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
