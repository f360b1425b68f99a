"""The result of aligning a batch: arrays first, strings on request."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cigar_text import CIGAR_CHARS, cigar_strings


def cigar_string(ops: np.ndarray) -> str:
    """BAM-coded uint32 operations (``len << 4 | op``) as a CIGAR string."""
    return "".join(f"{int(o) >> 4}{CIGAR_CHARS[int(o) & 15]}" for o in ops)


@dataclass(frozen=True)
class AlignResult:
    """Per-pair results of :func:`readalign.align` (or :func:`readalign.edit_distance` with
    ``cigar=True``), in input order: arrays first, CIGAR strings on request.

    Attributes
    ----------
    distance : numpy.ndarray
        int32, one per pair: the edit distance, or with a scoring the mismatches plus gap
        bases of the reported alignment (BAM's NM); -1 where no alignment lies within
        ``max_distance``.
    ref_start, ref_end : numpy.ndarray
        int64: the aligned window span, 0-based, end exclusive; -1 when unaligned (and
        ``ref_start`` in infix mode with ``cigar=False``, where only the end is known).
    cigar_ops : numpy.ndarray
        uint32: every pair's CIGAR operations one after another, BAM-coded
        (``length << 4 | op``, op 0-8 for ``MIDNSHP=X``); empty with ``cigar=False``.
    cigar_offsets : numpy.ndarray
        int64, one more than the pairs: pair ``i`` owns
        ``cigar_ops[cigar_offsets[i]:cigar_offsets[i + 1]]``.
    mode : str
        ``"infix"``, ``"global"`` or ``"local"``.
    backend : str
        Where the pairs were aligned: ``"cpu"`` or ``"cuda"``.
    scores : numpy.ndarray or None
        int32 scores of a scored call; None with unit edit costs (:attr:`score` has both).
    read_spans : tuple of numpy.ndarray or None
        A scored call's aligned read span (:attr:`query_start`, :attr:`query_end`).
    read_lengths : numpy.ndarray or None
        Each read's length (the read span of an unclipped alignment).

    Notes
    -----
    ``len(result)`` is the number of pairs. Unaligned pairs (past ``max_distance``) have
    an empty CIGAR.

    Examples
    --------
    >>> import readalign
    >>> res = readalign.align(["ACGTTGCA", "GGGTTT"], ["TTACGTAGCATT", "AAGGGTTTAA"])
    >>> len(res), res.mode
    (2, 'infix')
    >>> res.distance.tolist(), res.ref_start.tolist(), res.ref_end.tolist()
    ([1, 0], [2, 2], [10, 8])
    >>> res.cigar_ops[res.cigar_offsets[1]:res.cigar_offsets[2]].tolist()  # 6 << 4 | M
    [96]
    """

    distance: np.ndarray
    ref_start: np.ndarray
    ref_end: np.ndarray
    cigar_ops: np.ndarray
    cigar_offsets: np.ndarray
    mode: str
    backend: str
    scores: np.ndarray | None = None  # scored alignment; None: unit edit costs
    read_spans: tuple[np.ndarray, np.ndarray] | None = None
    read_lengths: np.ndarray | None = None

    @property
    def score(self) -> np.ndarray:
        """The optimal score of each pair (int32).

        With unit edit costs it is minus the distance. A pair without an alignment (past
        ``max_distance``) scores the int32 minimum.

        Examples
        --------
        >>> import readalign
        >>> readalign.align(["ACGTTGCA"], ["TTACGTAGCATT"]).score.tolist()
        [-1]
        >>> s = readalign.Scoring(match=1, mismatch=4, gap_open=6, gap_extend=1)
        >>> readalign.align(["ACGTTGCA"], ["TTACGTTGCATT"], scoring=s).score.tolist()
        [8]
        """
        if self.scores is not None:
            return self.scores
        return np.where(self.distance >= 0, -self.distance.astype(np.int64),
                        np.iinfo(np.int32).min).astype(np.int32)

    @property
    def query_start(self) -> np.ndarray:
        """First aligned read base of each pair (int64): 0 unless local mode clips the read;
        -1 when unaligned.

        Examples
        --------
        >>> import readalign
        >>> s = readalign.Scoring(match=1, mismatch=4, gap_open=6, gap_extend=1)
        >>> res = readalign.align(["GGGGGACGTTGCATGC"], ["TTACGTTGCATGCATT"], mode="local",
        ...                       scoring=s)
        >>> res.query_start.tolist(), res.query_end.tolist(), res.cigar(0)
        ([5], [16], '5S11M')
        """
        if self.read_spans is not None:
            return self.read_spans[0]
        return np.where(self.distance >= 0, 0, -1).astype(np.int64)

    @property
    def query_end(self) -> np.ndarray:
        """One past the last aligned read base of each pair (int64): the read's length unless
        local mode clips it; -1 when unaligned.

        Examples
        --------
        >>> import readalign
        >>> readalign.align(["ACGT", "AAAA"], ["ACGT", "CCCC"], max_distance=1).query_end.tolist()
        [4, -1]
        """
        if self.read_spans is not None:
            return self.read_spans[1]
        return np.where(self.distance >= 0, self.read_lengths, -1).astype(np.int64)

    def __len__(self) -> int:
        return self.distance.shape[0]

    def _pair(self, i: int) -> int:
        """``i`` as an index from 0, or an IndexError (negative ``i`` counts from the end)."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"pair index must be an int; got {type(i).__name__}")
        if not -len(self) <= i < len(self):
            raise IndexError(f"pair index {i} out of range for {len(self)} pairs")
        return int(i) % len(self)

    def cigar_array(self, i: int) -> np.ndarray:
        """Pair ``i``'s CIGAR as BAM-coded uint32 operations (``length << 4 | op``).

        Parameters
        ----------
        i : int
            The pair's index (negative counts from the end).

        Returns
        -------
        numpy.ndarray
            A view into :attr:`cigar_ops` (empty when the pair is unaligned).

        Raises
        ------
        IndexError
            ``i`` is out of range.
        TypeError
            ``i`` is not an int.

        Examples
        --------
        >>> import readalign
        >>> readalign.align(["ACGTTGCA"], ["TTACGTAGCATT"]).cigar_array(0).tolist()  # 8M
        [128]
        """
        i = self._pair(i)
        return self.cigar_ops[self.cigar_offsets[i]:self.cigar_offsets[i + 1]]

    def cigar(self, i: int) -> str:
        """Pair ``i``'s CIGAR as a string such as ``"10M1I5M"`` (``""`` when unaligned).

        Parameters
        ----------
        i : int
            The pair, as for :meth:`cigar_array`.

        Returns
        -------
        str
            The CIGAR; it covers the whole read (local mode's clipped ends as ``S``).

        Raises
        ------
        IndexError, TypeError
            As :meth:`cigar_array` does.

        Examples
        --------
        >>> import readalign
        >>> res = readalign.align(["ACGTTTTA", "ACGT"], ["ACGTTTA", "GGGG"], mode="global")
        >>> res.cigar(0), res.cigar(-1)
        ('3M1I4M', '4M')
        """
        return cigar_string(self.cigar_array(i))

    def cigars(self) -> list[str]:
        """Every pair's CIGAR string, in input order (written in one compiled pass).

        Returns
        -------
        list of str
            One CIGAR a pair, ``""`` for an unaligned one.

        Examples
        --------
        >>> import readalign
        >>> readalign.align(["ACGT", "AAAA"], ["ACGT", "CCCC"], max_distance=1).cigars()
        ['4M', '']
        """
        return cigar_strings(self.cigar_ops, self.cigar_offsets)
