"""The read stage of the BAM stage: batches of reads with their candidates, as both files stream.

Candidates must be grouped by read in the order of the reads file
(:class:`CandidateStream` matches them batch by batch and names the first
record out of order); reads named like the read before them are counted
(:class:`RepeatedNames`) and written unmapped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import numpy as np

from ..errors import InputError
from ..io._text import display
from ..io.candidates import CandidateChunk, iter_candidates
from ..io.reads import ReadBatch, iter_reads
from ..io.reference import Reference
from .options import Options
from .pairs import find_name, match_reads, repeated_names
from .summary import clock, since

log = logging.getLogger("readalign")

_CAND_DEPTH = 8
"""Candidate chunks parsed ahead of the reads (a batch of 500,000 reads with two
candidates each takes about 8)."""


class CandidateStream:
    """Candidates in file order, taken read batch by read batch."""

    def __init__(self, chunks: Iterator[CandidateChunk], path: str, reads_path: str) -> None:
        self._chunks = chunks
        self.path, self.reads_path = path, reads_path
        self.pending: CandidateChunk | None = None
        self.eof = False
        self.unit = "record" if path.lower().endswith((".sam", ".bam")) else "line"

    def _fill(self) -> bool:
        while self.pending is None or len(self.pending) == 0:
            if self.eof:
                return False
            nxt = next(self._chunks, None)
            if nxt is None:
                self.eof = True
                return False
            self.pending = nxt
        return True

    def take(self, batch: ReadBatch) -> tuple[CandidateChunk | None, np.ndarray]:
        """The candidates of ``batch``'s reads and the read index of each."""
        got: list[CandidateChunk] = []
        idx: list[np.ndarray] = []
        i = 0
        while self._fill():
            pend = self.pending
            where, k, i = match_reads(batch.names, batch.name_off, pend.names, pend.name_off, i)
            if k:
                got.append(pend.take(0, k))
                idx.append(where[:k])
                self.pending = pend.take(k, len(pend))
            if k < len(pend):
                self._check_order(batch)
                break
        if not got:
            return None, np.zeros(0, np.int64)
        return CandidateChunk.concat(got), np.concatenate(idx)

    def _check_order(self, batch: ReadBatch) -> None:
        pend = self.pending
        if find_name(batch.names, batch.name_off, pend.names, 0, pend.name_off[1]) >= 0:
            raise InputError(
                f"{display(self.path)}: {self.unit} {int(pend.line[0])}: candidates of read "
                f"'{pend.name(0)}' are not grouped by read in the order of "
                f"{display(self.reads_path)}")

    def finish(self) -> None:
        """Fail if candidates remain after the last read."""
        if self._fill():
            pend = self.pending
            raise InputError(
                f"{display(self.path)}: {self.unit} {int(pend.line[0])}: read '{pend.name(0)}' "
                f"is not in {display(self.reads_path)} (or candidates are not in the order of "
                "the reads)")


def _no_candidates() -> CandidateChunk:
    return CandidateChunk(np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.int32),
                          np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int8),
                          np.zeros(0, np.int64), np.zeros(0, np.uint8))


class RepeatedNames:
    """Reads named like the read before them: counted, and the first one remembered for the log."""

    def __init__(self) -> None:
        self.count = 0
        self.first = ""
        self._last = b""

    def add(self, batch: ReadBatch) -> None:
        """Count the repeats in ``batch`` (including one across the previous batch's end)."""
        if len(batch) == 0:
            return
        name0 = bytes(batch.names[batch.name_off[0]:batch.name_off[1]])
        if name0 == self._last:
            self.count += 1
            self.first = self.first or (f"'{name0.decode('latin-1')}', read {batch.first + 1}")
        n, i = repeated_names(batch.names, batch.name_off)
        if n:
            self.count += int(n)
            self.first = self.first or f"'{batch.name(int(i))}', read {batch.first + int(i) + 1}"
        self._last = bytes(batch.names[batch.name_off[-2]:batch.name_off[-1]])

    def warn(self, reads_path: str) -> None:
        """One warning for the whole run, if any read repeated its predecessor's name."""
        if self.count:
            log.warning("%s: %d read(s) have the same name as the read before them (first: %s); "
                        "all candidates of a name go to its first read and the repeats are "
                        "written unmapped", display(reads_path), self.count, self.first)


def read_stage(opts: Options, ref: Reference, st: dict[str, float], repeats: RepeatedNames,
               ahead: Callable[..., Iterator]) -> Iterator[tuple[ReadBatch, CandidateChunk,
                                                                np.ndarray]]:
    """The read stage as :func:`run` wires it: the candidates produced by ``ahead(items, name,
    depth)`` (``_CAND_DEPTH`` chunks ahead), matched to each batch of reads as it is parsed."""
    chunks = iter_candidates(opts.candidates, ref, opts.candidates_format, opts.allow_empty)
    cands = CandidateStream(ahead(chunks, "candidates", _CAND_DEPTH), opts.candidates, opts.reads)
    batches = iter_reads(opts.reads, opts.batch_size, opts.allow_empty)
    return _read_stage(batches, cands, st, repeats, opts.batch_size)


def _next_batch(batches: Iterator[ReadBatch], batch_size: int) -> ReadBatch | None:
    """The next batch, or None at the end; memory that runs out while it is allocated is the
    one-line error of ``--batch-size``."""
    try:
        return next(batches, None)
    except MemoryError as exc:
        raise InputError(f"--batch-size {batch_size:,}: out of memory for a batch ({exc}); "
                         "choose a smaller --batch-size") from None


def _read_stage(batches: Iterator[ReadBatch], cands: CandidateStream, st: dict[str, float],
                repeats: RepeatedNames,
                batch_size: int) -> Iterator[tuple[ReadBatch, CandidateChunk, np.ndarray]]:
    """Parse batches and match their candidates (stage read)."""
    while True:
        t0 = clock()
        batch = _next_batch(batches, batch_size)
        if batch is None:
            cands.finish()
            return
        repeats.add(batch)
        chunk, read_idx = cands.take(batch)
        st["read"] += since(t0)
        yield batch, chunk if chunk is not None else _no_candidates(), read_idx
