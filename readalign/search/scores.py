"""Scores of one query against a chunk of the database: the score pass's own kernel
(:mod:`readalign.kernels.search_scores`, one lane per database sequence, the query shared).

A :class:`ChunkScorer` holds one chunk where its kernel reads it (host memory for the CPU,
device memory for the GPU: the chunk is uploaded once and scored against every query), and
returns each query's scores against it, int32 in the chunk's order.
"""

from __future__ import annotations

import numpy as np

from ..engine.packing import Packed
from ..engine.scoring import Scoring
from ..kernels.search_scores import extended_table, padded_query, scores_cpu
from ..runtime.backends import parallel_threads

CPU_BLOCK = 64
"""Database sequences a CPU thread takes at a time (equal lengths: the chunk is sorted)."""


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

    def __call__(self, query: np.ndarray) -> np.ndarray:
        t = self.tables
        out = np.empty(len(self.chunk), np.int32)
        with parallel_threads(self.threads):
            scores_cpu(t.table, t.width, t.goe, t.ge, t.query(query), self.chunk.data,
                       self.chunk.offsets, self.blocks, out)
        return out

    def close(self) -> None:
        """Nothing to give back on the CPU."""


class CudaChunkScorer:
    """One chunk scored on the GPU: uploaded once, one launch per query."""

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
        base, size = warp_layout(chunk.lengths)
        up = cuda.to_device
        self.dev = (up(tables.table, stream=self.stream), up(chunk.data, stream=self.stream),
                    up(chunk.offsets, stream=self.stream), up(base, stream=self.stream))
        self.hb = cuda.device_array(max(size, 1), np.int32, stream=self.stream)
        self.fb = cuda.device_array(max(size, 1), np.int32, stream=self.stream)
        self.out = cuda.device_array(max(self.count, 1), np.int32, stream=self.stream)

    def __call__(self, query: np.ndarray) -> np.ndarray:
        from numba import cuda

        from ..kernels.cuda import launch

        t = self.tables
        q = cuda.to_device(t.query(query), stream=self.stream)
        table, data, offsets, base = self.dev
        grid = max(1, -(-self.count // self.tpb))
        out = self.out[:self.count]
        launch(self.kernel, grid, self.tpb, self.stream, table, t.width, t.goe, t.ge, q, data,
               offsets, base, self.hb, self.fb, out)
        scores = out.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return scores

    def close(self) -> None:
        """Let go of the chunk's device memory."""
        self.dev = self.hb = self.fb = self.out = None


def chunk_scorer(backend: str, tables: Tables, chunk: Packed, threads: int | None):
    """A scorer of ``chunk`` on ``backend`` (``"cpu"`` or ``"cuda"``)."""
    if backend == "cuda":
        return CudaChunkScorer(tables, chunk)
    return ChunkScorer(tables, chunk, threads)
