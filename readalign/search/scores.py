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
    """One chunk scored on the GPU: uploaded once, queries scored a launch's worth at a time."""

    def __init__(self, tables: Tables, chunk: Packed) -> None:
        from numba import cuda

        from ..kernels.search_cuda import TABLE_CELLS, TPB, score_kernel, warp_layout

        if tables.width * tables.width > TABLE_CELLS:
            raise ValueError(f"an alphabet of {tables.size} letters is too large for the search "
                             "kernel's shared table")
        self.tables = tables
        self.count = len(chunk)
        self.kernel = score_kernel()
        self.tpb = TPB
        self.stream = cuda.stream()
        base, self.size = warp_layout(chunk.lengths)
        self.per_launch = max(1, SCRATCH_BYTES // max(8 * self.size, 1))
        up = cuda.to_device
        self.dev = (up(tables.table, stream=self.stream), up(chunk.data, stream=self.stream),
                    up(chunk.offsets, stream=self.stream), up(base, stream=self.stream))
        self.hb = self.fb = None

    def _scratch(self, queries: int):
        """Boundary scratch for ``queries`` queries (kept and grown from launch to launch)."""
        from numba import cuda

        need = max(queries * self.size, 1)
        if self.hb is None or self.hb.shape[0] < need:
            self.hb = cuda.device_array(need, np.int32, stream=self.stream)
            self.fb = cuda.device_array(need, np.int32, stream=self.stream)
        return self.hb, self.fb

    def __call__(self, queries: list[np.ndarray]) -> np.ndarray:
        out = np.empty((len(queries), self.count), np.int32)
        for lo in range(0, len(queries), self.per_launch):
            part = queries[lo:lo + self.per_launch]
            out[lo:lo + len(part)] = self._launch(part)
        return out

    def _launch(self, queries: list[np.ndarray]) -> np.ndarray:
        """One launch: every query of ``queries`` against the chunk."""
        from numba import cuda

        from ..kernels.cuda import launch

        t = self.tables
        padded = [t.query(q) for q in queries]
        q_off = np.zeros(len(padded) + 1, np.int64)
        np.cumsum([p.shape[0] for p in padded], out=q_off[1:])
        codes = cuda.to_device(np.concatenate(padded), stream=self.stream)
        offsets = cuda.to_device(q_off, stream=self.stream)
        hb, fb = self._scratch(len(queries))
        out = cuda.device_array((len(queries), self.count), np.int32, stream=self.stream)
        table, data, subject_offsets, base = self.dev
        grid = (max(1, -(-self.count // self.tpb)), len(queries))
        launch(self.kernel, grid, self.tpb, self.stream, table, t.width, t.goe, t.ge, codes,
               offsets, data, subject_offsets, base, self.size, hb, fb, out)
        scores = out.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return scores

    def close(self) -> None:
        """Let go of the chunk's device memory."""
        self.dev = self.hb = self.fb = None


def chunk_scorer(backend: str, tables: Tables, chunk: Packed, threads: int | None):
    """A scorer of ``chunk`` on ``backend`` (``"cpu"`` or ``"cuda"``)."""
    if backend == "cuda":
        return CudaChunkScorer(tables, chunk)
    return ChunkScorer(tables, chunk, threads)
