"""Scores of one query against a chunk of the database: the score pass's own kernel
(:mod:`readalign.kernels.search_scores`, one lane per database sequence, the query shared).

A :class:`ChunkScorer` holds one chunk where its kernel reads it (host memory for the CPU,
device memory for the GPU: the chunk is uploaded once and scored against every query), and
returns the queries' scores against it, int32, one row per query in the chunk's order. The
GPU scores as many queries a launch as :data:`SCRATCH_BYTES` of strip boundaries allow.
"""

from __future__ import annotations

import numpy as np

from ..engine.packing import Packed
from ..engine.scoring import Scoring
from ..kernels.search_scores import extended_table, padded_query, scores_cpu
from ..runtime.backends import parallel_threads

CPU_BLOCK = 64
"""Database sequences a CPU thread takes at a time (equal lengths: the chunk is sorted)."""
PACKED = True
"""Score on the GPU two sequences a lane in 16-bit halves (the ablation switch: False scores
every pair with 32-bit cells)."""
LONG_SEQUENCE = 2048
"""Longest database sequence a GPU lane scores alone; longer ones get a block each."""
SCRATCH_BYTES = 1 << 31
"""Device memory for the strips' boundaries of one launch (8 bytes a residue and query)."""


class Tables:
    """A scoring's extended table and gap costs, as the kernel reads them."""

    def __init__(self, scoring: Scoring) -> None:
        size = len(scoring.alphabet)
        self.size = size
        self.width = size + 1
        self.table = extended_table(scoring.flat(), size)
        self.goe = scoring.gap_open + scoring.gap_extend
        self.ge = scoring.gap_extend

    def query(self, codes: np.ndarray) -> np.ndarray:
        """A query's codes as the kernel reads them (padded to whole strips)."""
        return padded_query(codes, self.size)


class ChunkScorer:
    """One chunk scored on the CPU, every core."""

    def __init__(self, tables: Tables, chunk: Packed, threads: int | None) -> None:
        self.tables = tables
        self.chunk = chunk
        self.threads = threads
        count = len(chunk)
        self.blocks = np.append(np.arange(0, count, CPU_BLOCK, dtype=np.int64), count)

    def __call__(self, queries: list[np.ndarray]) -> np.ndarray:
        t = self.tables
        out = np.empty((len(queries), len(self.chunk)), np.int32)
        with parallel_threads(self.threads):
            for qi, query in enumerate(queries):
                scores_cpu(t.table, t.width, t.goe, t.ge, t.query(query), self.chunk.data,
                           self.chunk.offsets, self.blocks, out[qi])
        return out

    def close(self) -> None:
        """Nothing to give back on the CPU."""


class CudaChunkScorer:
    """One chunk scored on the GPU: uploaded once, queries scored a launch's worth at a time.

    Sequences of up to :data:`LONG_SEQUENCE` residues get a lane each: with :data:`PACKED`
    two sequences a lane in 16-bit halves (:func:`readalign.kernels.search_cuda.
    packed_score_kernel`), the pairs a half cannot hold (:func:`~readalign.kernels.
    search_scores.fits16`) scored again by the 32-bit kernel, which scores them all without
    :data:`PACKED`. Longer sequences, the chunk's last (length order), get a block of 32
    threads each (:func:`~readalign.kernels.search_cuda.long_score_kernel`), so that the
    longest sequences do not keep the GPU waiting on one thread.
    """

    def __init__(self, tables: Tables, chunk: Packed) -> None:
        from numba import cuda

        from ..kernels.search_cuda import TABLE_CELLS, TPB, warp_layout

        if tables.width * tables.width > TABLE_CELLS:
            raise ValueError(f"an alphabet of {tables.size} letters is too large for the search "
                             "kernel's shared table")
        self.tables = tables
        self.count = len(chunk)
        self.lengths = chunk.lengths
        self.short = int(np.searchsorted(self.lengths, LONG_SEQUENCE, side="right"))
        self.tpb = TPB
        self.stream = cuda.stream()
        widest = warp_layout(self.lengths)[1]  # entries a query, at most, of any layout
        self.per_launch = max(1, SCRATCH_BYTES // max(8 * widest, 1))
        up = cuda.to_device
        self.dev = (up(chunk.data, stream=self.stream), up(chunk.offsets, stream=self.stream))
        self.scratch: dict = {}

    def _scratch(self, kind: str, cells: int):
        """Boundary scratch of ``cells`` entries (uint32 for the packed kernel, else int32),
        kept and grown from launch to launch."""
        from numba import cuda

        held = self.scratch.get(kind)
        if held is None or held[0].shape[0] < cells:
            dtype = np.uint32 if kind == "packed" else np.int32
            held = tuple(cuda.device_array(max(cells, 1), dtype, stream=self.stream)
                         for _ in range(2))
            self.scratch[kind] = held
        return held

    def __call__(self, queries: list[np.ndarray]) -> np.ndarray:
        out = np.empty((len(queries), self.count), np.int32)
        for lo in range(0, len(queries), self.per_launch):
            part = queries[lo:lo + self.per_launch]
            out[lo:lo + len(part)] = self._group(part)
        return out

    def _group(self, queries: list[np.ndarray]) -> np.ndarray:
        """One launch's queries against the whole chunk."""
        scores = np.empty((len(queries), self.count), np.int32)
        short = self.short
        if short and not PACKED:
            scores[:, :short] = self._launch("wide", queries, 0, short)
        elif short:
            scores[:, :short] = self._launch("packed", queries, 0, short)
            first = [min(self._first_wide(q.shape[0]), short) for q in queries]
            redo = [i for i, f in enumerate(first) if f < short]
            if redo:
                lo = min(first[i] for i in redo)
                wide = self._launch("wide", [queries[i] for i in redo], lo, short)
                for row, i in enumerate(redo):
                    scores[i, first[i]:short] = wide[row, first[i] - lo:]
        if short < self.count:
            scores[:, short:] = self._launch("long", queries, short, self.count)
        return scores

    def _first_wide(self, m: int) -> int:
        """The first sequence of the chunk (length order) a half cannot hold against a query of
        ``m`` residues (the chunk's count when there is none)."""
        from ..kernels.search_scores import SPAN16, fits16

        best = int(self.tables.table.max())
        if fits16(best, m, int(self.lengths.max(initial=0))):
            return self.count
        n_limit = (SPAN16 - 1) // best - 1  # the longest n with best * (n + 1) < SPAN16
        return int(np.searchsorted(self.lengths, n_limit, side="right"))

    def _layout(self, kind: str, lo: int, hi: int) -> tuple[np.ndarray, int, int, int]:
        """Scratch layout of sequences ``lo:hi`` for ``kind``: each warp's (or, for ``long``,
        each sequence's) first entry, the entries a query, the grid's x, the block's threads."""
        from ..kernels.search_cuda import WARP, lane_lengths, warp_layout

        lengths = self.lengths[lo:hi]
        if kind == "long":
            base = np.zeros(hi - lo + 1, np.int64)
            np.cumsum(lengths, out=base[1:])
            return base[:-1], int(base[-1]), hi - lo, WARP
        lanes = (hi - lo + 1) // 2 if kind == "packed" else hi - lo
        base, size = warp_layout(lane_lengths(lengths) if kind == "packed" else lengths)
        return base, size, max(1, -(-lanes // self.tpb)), self.tpb

    def _launch(self, kind: str, queries: list[np.ndarray], lo: int, hi: int) -> np.ndarray:
        """One launch of ``kind`` (``packed``, ``wide``, ``long``): every query of ``queries``
        against the chunk's sequences ``lo:hi``."""
        from numba import cuda

        from ..kernels.cuda import launch
        from ..kernels.search_cuda import (
            PASS_ROWS,
            long_score_kernel,
            packed_score_kernel,
            score_kernel,
        )
        from ..kernels.search_scores import packed_table, padded_query

        t = self.tables
        data, offsets = self.dev
        rows = PASS_ROWS if kind == "long" else None
        padded = [padded_query(q, t.size, rows) if rows else t.query(q) for q in queries]
        q_off = np.zeros(len(padded) + 1, np.int64)
        np.cumsum([p.shape[0] for p in padded], out=q_off[1:])
        up = cuda.to_device
        codes = up(np.concatenate(padded), stream=self.stream)
        q_offsets = up(q_off, stream=self.stream)
        base, size, blocks, threads = self._layout(kind, lo, hi)
        hb, fb = self._scratch(kind, len(queries) * size)
        out = cuda.device_array((len(queries), hi - lo), np.int32, stream=self.stream)
        if kind == "packed":
            head = (up(packed_table(t.table), stream=self.stream), t.width, _word(-t.goe),
                    _word(-t.ge))
            kernel = packed_score_kernel()
        else:
            head = (up(t.table, stream=self.stream), t.width, t.goe, t.ge)
            kernel = long_score_kernel() if kind == "long" else score_kernel()
        launch(kernel, (blocks, len(queries)), threads, self.stream, *head, codes, q_offsets,
               data, offsets[lo:hi + 1], up(base, stream=self.stream), size, hb, fb, out)
        scores = out.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return scores

    def close(self) -> None:
        """Let go of the chunk's device memory."""
        self.dev, self.scratch = None, {}


def _word(value: int) -> np.uint32:
    """``value`` in both 16-bit halves of a word."""
    half = value & 0xFFFF
    return np.uint32(half | half << 16)


def chunk_scorer(backend: str, tables: Tables, chunk: Packed, threads: int | None):
    """A scorer of ``chunk`` on ``backend`` (``"cpu"`` or ``"cuda"``)."""
    if backend == "cuda":
        return CudaChunkScorer(tables, chunk)
    return ChunkScorer(tables, chunk, threads)
