"""GPU backend for word-list distances: :func:`cdist_gpu` (the block contract of
:mod:`readalign.words.cdist`) and :func:`pairwise_gpu` (distance-only ``a[p]`` vs ``b[p]``).

Dense: the rows are cut into device blocks of about :data:`BLOCK_BYTES`; the
kernels, the device-to-host copies and the host placement overlap (see
:mod:`readalign.words.dense_blocks`). Pairs whose both words exceed 64
symbols are computed on the CPU (:func:`readalign.kernels.words.myers_blocks`).
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass

import numpy as np
from numba import cuda, njit

from ..engine.packing import Packed, take
from ..kernels import cuda_words as kcw
from ..kernels.cuda import launch
from ..kernels.simulator import simulated
from ..kernels.words import WORD_BITS
from ..runtime.gpu_memory import MEMORY_FRACTION, free_device_bytes, names_out_of_memory
from . import dense_blocks as cuda_dense
from .codes import WordCodes
from .cpu_blocks import dense_block

log = logging.getLogger("readalign")

BLOCK_BYTES = 1 << 26
"""Device bytes of one dense row block (a ring of them is in flight)."""
MAX_BLOCK_ROWS = 32768
SIM_BLOCK_ROWS = 8
PAIR_CHUNK = 1 << 22
"""Pairs per device chunk of :func:`pairwise_gpu`."""


@dataclass
class DeviceLists:
    """Both lists on the device as dense int32 codes, plus the interleaved short choices."""

    qd: object
    qo: object
    cd: object
    co: object
    ct: object
    short_c: int
    short_max: int
    alphabet: int
    long_q: np.ndarray
    long_c: np.ndarray
    qlen: np.ndarray

    def longest_row(self, a: int, b: int) -> int:
        """Symbols of the longest query among rows ``a:b``."""
        return int(self.qlen[a:b].max()) if b > a else 0


_CACHE: dict = {}


def _dense_codes(codes) -> tuple[np.ndarray, np.ndarray, int]:
    """Renumber the symbols both lists use to ``0..A-1`` (a small per-call alphabet)."""
    present = np.zeros(max(codes.alphabet, 1), dtype=bool)
    present[codes.q.data[:-1]] = True
    present[codes.c.data[:-1]] = True
    lut = (np.cumsum(present) - 1).astype(np.int32)
    return lut[codes.q.data], lut[codes.c.data], max(int(present.sum()), 1)


@njit(cache=True)
def interleave(data, offsets, width, out):
    """``out[e * nc + j]`` = symbol e of word j for words up to ``width`` symbols."""
    nc = offsets.shape[0] - 1
    for j in range(nc):
        b = offsets[j]
        n = offsets[j + 1] - b
        if n <= width:
            for e in range(n):
                out[e * nc + j] = data[b + e]


def _upload(codes) -> DeviceLists:
    """Renumber, interleave and copy both lists to the device."""
    qd, cd, alphabet = _dense_codes(codes)
    clen = codes.c.lengths
    short_c = int(clen[clen <= WORD_BITS].max()) if (clen <= WORD_BITS).any() else 0
    nc = len(codes.c)
    ct = np.zeros(max(short_c * nc, 1), dtype=np.int32)
    interleave(cd, codes.c.offsets, short_c, ct)
    qlen = codes.q.lengths
    short_q = int(qlen[qlen <= WORD_BITS].max()) if (qlen <= WORD_BITS).any() else 0
    return DeviceLists(
        cuda.to_device(qd), cuda.to_device(codes.q.offsets), cuda.to_device(cd),
        cuda.to_device(codes.c.offsets), cuda.to_device(ct), short_c, max(short_q, short_c),
        alphabet,
        np.flatnonzero(codes.q.lengths > WORD_BITS), np.flatnonzero(clen > WORD_BITS), qlen)


def device_lists(codes) -> DeviceLists:
    """The device copy of ``codes``, kept while ``codes`` lives (sparse calls reuse it)."""
    hit = _CACHE.get("lists")
    if hit is not None and hit[0]() is codes:
        return hit[1]
    dev = _upload(codes)
    _CACHE["lists"] = (weakref.ref(codes), dev)
    return dev


def block_rows(nrows: int, nc: int, itemsize: int) -> int:
    """Rows per device block: about :data:`BLOCK_BYTES`, within free device memory."""
    if simulated():
        return SIM_BLOCK_ROWS
    budget = min(BLOCK_BYTES, int(free_device_bytes() * MEMORY_FRACTION) // 2)
    rows = max(1, budget // max(nc * itemsize, 1))
    return int(min(rows, nrows, MAX_BLOCK_ROWS))


def launch_rows(dev: DeviceLists, a: int, b: int, max_distance: int, out, stream) -> None:
    """Enqueue the dense kernel: rows ``a:b`` into the flat device block ``out`` on ``stream``."""
    nc = dev.co.shape[0] - 1
    alpha = kcw.table_alpha(dev.alphabet)
    bits = kcw.table_bits_for(dev.longest_row(a, b))
    qb = kcw.rows_per_block(alpha, bits)
    kernel = kcw.dense_kernel(alpha, qb, kcw.TPB, bits)
    grid = ((nc + kcw.TPB - 1) // kcw.TPB, (b - a + qb - 1) // qb)
    launch(kernel, grid, kcw.TPB, stream, dev.qd, dev.qo, dev.cd, dev.co, dev.ct, dev.short_c, a, b,
           max_distance, out)


def _row_blocks(r0: int, r1: int, step: int) -> list[tuple[int, int]]:
    return [(a, min(a + step, r1)) for a in range(r0, r1, step)]


def dense_gpu(dev: DeviceLists, r0: int, r1: int, max_distance: int, dtype) -> np.ndarray:
    """Rows ``r0:r1`` against every choice; compute, device-to-host copy and host copy overlap."""
    dt = np.dtype(dtype)
    nc = dev.co.shape[0] - 1
    step = block_rows(max(r1 - r0, 1), nc, dt.itemsize)

    def launch(a: int, b: int, out, stream) -> None:
        launch_rows(dev, a, b, max_distance, out, stream)

    free = int(free_device_bytes() * MEMORY_FRACTION)
    return cuda_dense.dense_blocks(launch, r0, r1, nc, step, free, dt)


def long_pairs(codes, dev: DeviceLists, r0: int, r1: int, max_distance: int, threads):
    """CPU distances of rows ``r0:r1`` x choices where both words exceed 64 symbols.

    Returns (local row indices, choice indices, block) or None when there are none.
    """
    rows = dev.long_q[(dev.long_q >= r0) & (dev.long_q < r1)]
    if rows.shape[0] == 0 or dev.long_c.shape[0] == 0:
        return None
    log.info("cdist cuda: %d x %d pairs of words longer than %d symbols run on the CPU",
             rows.shape[0], dev.long_c.shape[0], WORD_BITS)
    q, c = take(codes.q, rows), take(codes.c, dev.long_c)
    sub = WordCodes(q, c, codes.alphabet, codes.maxlen, False)
    block = dense_block(sub, 0, len(q), upper=False, max_distance=max_distance,
                        dtype=np.int32, threads=threads)
    return rows - r0, dev.long_c, block


def sparse_gpu(codes, dev: DeviceLists, r0: int, r1: int, upper: bool, max_distance: int,
               dtype, threads):
    """The ``(i, j, d)`` within ``max_distance`` of rows ``r0:r1``, sorted by (i, j)."""
    nc = dev.co.shape[0] - 1
    work = np.dtype(np.uint8 if max_distance < 255 else np.int32)
    step = block_rows(r1 - r0, nc, work.itemsize) if r1 > r0 else 1
    count_kernel, fill_kernel = kcw.scan_kernels()
    stream = cuda.stream()
    buf = cuda.device_array(max(step * nc, 1), dtype=work)
    parts = []
    for a, b in _row_blocks(r0, r1, step):
        if nc == 0:
            break
        launch_rows(dev, a, b, max_distance, buf, stream)
        counts = cuda.device_array(b - a, dtype=np.int64, stream=stream)
        launch(count_kernel, b - a, kcw.SCAN_TPB, stream, buf, nc, a, upper, max_distance, counts)
        n_hits = counts.copy_to_host(stream=stream)
        stream.synchronize()
        starts = np.cumsum(n_hits) - n_hits
        total = int(n_hits.sum())
        jj = cuda.device_array(max(total, 1), dtype=np.int32, stream=stream)
        dd = cuda.device_array(max(total, 1), dtype=np.dtype(dtype), stream=stream)
        launch(fill_kernel, b - a, kcw.SCAN_TPB, stream, buf, nc, a, upper, max_distance,
               cuda.to_device(starts, stream=stream), jj, dd)
        ii = np.repeat(np.arange(a, b, dtype=np.int64), n_hits)
        parts.append((ii, jj.copy_to_host(stream=stream)[:total].astype(np.int64),
                      dd.copy_to_host(stream=stream)[:total]))
        stream.synchronize()
    ii, jj, dd = _concat(parts, dtype)
    return _merge_long(codes, dev, r0, r1, upper, max_distance, dtype, threads, ii, jj, dd)


def _concat(parts: list, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype)
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))


def _merge_long(codes, dev, r0, r1, upper, max_distance, dtype, threads, ii, jj, dd):
    """Add the CPU's hits among long x long pairs, keeping (i, j) order."""
    extra = long_pairs(codes, dev, r0, r1, max_distance, threads)
    if extra is None:
        return ii, jj, dd
    rows, cols, block = extra
    r, c = np.nonzero(block <= max_distance)
    li, lj = rows[r] + r0, cols[c]
    keep = lj > li if upper else np.ones(li.shape[0], dtype=bool)
    ii = np.concatenate((ii, li[keep].astype(np.int64)))
    jj = np.concatenate((jj, lj[keep].astype(np.int64)))
    dd = np.concatenate((dd, block[r, c][keep].astype(dtype)))
    order = np.lexsort((jj, ii))
    return ii[order], jj[order], dd[order]


@names_out_of_memory
def cdist_gpu(codes, r0: int, r1: int, *, upper: bool, max_distance: int, sparse: bool, dtype,
              threads: int | None = None):
    """The backend contract of :mod:`readalign.words.cdist`: rows ``r0:r1`` dense, or ``(i, j, d)``.

    Dense blocks hold every cell (``upper`` only narrows sparse output).
    """
    dev = device_lists(codes)
    if sparse:
        return sparse_gpu(codes, dev, r0, r1, upper, max_distance, dtype, threads)
    out = dense_gpu(dev, r0, r1, max_distance, dtype)
    extra = long_pairs(codes, dev, r0, r1, max_distance, threads)
    if extra is not None:
        rows, cols, block = extra
        out[np.ix_(rows, cols)] = block.astype(out.dtype)
    return out


def _pair_chunk(a: Packed, b: Packed, p0: int, p1: int, max_distance: int) -> np.ndarray:
    """Distances of pairs ``p0:p1`` on the device (clipped at ``max_distance + 1``; ``LONG``)."""
    arrays = []
    for p in (a, b):
        lo, hi = int(p.offsets[p0]), int(p.offsets[p1])
        arrays.append(cuda.to_device(kcw.int_codes(p.data[lo:hi + 1])))
        arrays.append(cuda.to_device(p.offsets[p0:p1 + 1] - lo))
    count = p1 - p0
    out = cuda.device_array(count, dtype=np.int32)
    launch(kcw.pair_kernel(), (count + kcw.PAIR_TPB - 1) // kcw.PAIR_TPB, kcw.PAIR_TPB, 0,
           *arrays, max_distance, out)
    return out.copy_to_host()


@names_out_of_memory
def pairwise_gpu(a: Packed, b: Packed, max_distance: int = -1) -> np.ndarray:
    """The rule of :func:`readalign.kernels.words.pair_function` for ``a[p]``, ``b[p]`` on the GPU.

    Distances clipped at ``max_distance + 1``; ``LONG`` where both sides
    exceed 64 symbols (:mod:`readalign.words.pairwise` sends those on).
    """
    total = len(a)
    chunk = 64 if simulated() else PAIR_CHUNK
    out = np.empty(total, dtype=np.int32)
    for p0 in range(0, total, chunk):
        p1 = min(p0 + chunk, total)
        out[p0:p1] = _pair_chunk(a, b, p0, p1, max_distance)
    return out
