"""GPU backend for word-list distances: :func:`cdist_gpu` (the block contract of
:mod:`readalign.distance.cdist`) and :func:`pairwise_gpu` (distance-only ``a[p]`` vs ``b[p]``).

Dense: the rows are cut into device blocks of about :data:`BLOCK_BYTES`; the
kernels, the device-to-host copies and the host placement overlap (see
:mod:`readalign.distance.dense_blocks`; ``RESULT_MEMORY="staged"`` stages through pinned
buffers, ``"pinned"`` page-locks the result itself). Pairs whose both words
exceed 64 symbols are computed on the CPU.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass

import numpy as np
from numba import config, cuda, njit

from ..engine.job import gather_slices
from ..engine.packing import Packed, pack_text
from ..kernels import cuda_words as kcw
from ..kernels.words import WORD_BITS
from ..runtime.gpu_memory import free_device_bytes
from . import dense_blocks as cuda_dense
from .codes import WordCodes
from .cpu import dense_block

log = logging.getLogger("readalign")

METHOD = "myers"
"""Per-pair method on the GPU: ``"myers"`` (bit-parallel) or ``"dp"`` (register DP)."""
RESULT_MEMORY = "staged"
"""Dense results: ``"staged"`` (pinned staging + parallel host copy) or ``"pinned"``."""
BLOCK_BYTES = 1 << 26
"""Device bytes of one dense row block (a ring of them is in flight)."""
MEMORY_FRACTION = 0.5
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
    if config.ENABLE_CUDASIM:
        return SIM_BLOCK_ROWS
    budget = min(BLOCK_BYTES, int(free_device_bytes() * MEMORY_FRACTION) // 2)
    rows = max(1, budget // max(nc * itemsize, 1))
    return int(min(rows, nrows, MAX_BLOCK_ROWS))


def _launch(dev: DeviceLists, a: int, b: int, max_distance: int, out, stream) -> None:
    """Compute rows ``a:b`` into the flat device block ``out`` on ``stream``."""
    nc = dev.co.shape[0] - 1
    alpha = kcw.table_alpha(dev.alphabet)
    bits = kcw.table_bits_for(dev.longest_row(a, b))
    qb = kcw.rows_per_block(alpha, bits)
    width = kcw.dp_width_for(dev.short_max) if METHOD == "dp" else WORD_BITS
    kernel = kcw.dense_kernel(METHOD, alpha, qb, width, kcw.TPB, bits)
    grid = ((nc + kcw.TPB - 1) // kcw.TPB, (b - a + qb - 1) // qb)
    kernel[grid, kcw.TPB, stream](dev.qd, dev.qo, dev.cd, dev.co, dev.ct, dev.short_c, a, b,
                                  max_distance, out)


def _row_blocks(r0: int, r1: int, step: int) -> list[tuple[int, int]]:
    return [(a, min(a + step, r1)) for a in range(r0, r1, step)]


def dense_gpu(dev: DeviceLists, r0: int, r1: int, max_distance: int, dtype) -> np.ndarray:
    """Rows ``r0:r1`` against every choice; compute, device-to-host copy and host copy overlap."""
    dt = np.dtype(dtype)
    nc = dev.co.shape[0] - 1
    pinned = RESULT_MEMORY == "pinned" and not config.ENABLE_CUDASIM
    step = block_rows(max(r1 - r0, 1), nc, dt.itemsize)

    def launch(a: int, b: int, out, stream) -> None:
        _launch(dev, a, b, max_distance, out, stream)

    free = int(free_device_bytes() * MEMORY_FRACTION)
    return cuda_dense.dense_blocks(launch, r0, r1, nc, step, free, dt, pinned)


def _gather(p: Packed, idx: np.ndarray) -> Packed:
    """The words ``idx`` of ``p`` as a new packed list."""
    lengths = p.lengths[idx]
    offsets = np.zeros(idx.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.zeros(int(offsets[-1]) + 1, dtype=p.data.dtype)
    data[:-1] = gather_slices(p.data, p.offsets[idx], lengths)
    return Packed(data, offsets)


def long_pairs(codes, dev: DeviceLists, r0: int, r1: int, max_distance: int, threads):
    """CPU distances of rows ``r0:r1`` x choices where both words exceed 64 symbols.

    Returns (local row indices, choice indices, block) or None when there are none.
    """
    rows = dev.long_q[(dev.long_q >= r0) & (dev.long_q < r1)]
    if rows.shape[0] == 0 or dev.long_c.shape[0] == 0:
        return None
    log.info("cdist cuda: %d x %d pairs of words longer than %d symbols run on the CPU",
             rows.shape[0], dev.long_c.shape[0], WORD_BITS)
    q, c = _gather(codes.q, rows), _gather(codes.c, dev.long_c)
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
        _launch(dev, a, b, max_distance, buf, stream)
        counts = cuda.device_array(b - a, dtype=np.int64, stream=stream)
        count_kernel[b - a, kcw.SCAN_TPB, stream](buf, nc, a, upper, max_distance, counts)
        n_hits = counts.copy_to_host(stream=stream)
        stream.synchronize()
        starts = np.cumsum(n_hits) - n_hits
        total = int(n_hits.sum())
        jj = cuda.device_array(max(total, 1), dtype=np.int32, stream=stream)
        dd = cuda.device_array(max(total, 1), dtype=np.dtype(dtype), stream=stream)
        fill_kernel[b - a, kcw.SCAN_TPB, stream](buf, nc, a, upper, max_distance,
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


def cdist_gpu(codes, r0: int, r1: int, *, upper: bool, max_distance: int, sparse: bool, dtype,
              threads: int | None = None):
    """The backend contract of :mod:`readalign.distance.cdist`: rows ``r0:r1`` dense, or ``(i, j, d)``.

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
    """Distances of pairs ``p0:p1`` (clipped at ``max_distance + 1``) on the device."""
    arrays = []
    for p in (a, b):
        lo, hi = int(p.offsets[p0]), int(p.offsets[p1])
        arrays.append(cuda.to_device(kcw.int_codes(p.data[lo:hi + 1])))
        arrays.append(cuda.to_device(p.offsets[p0:p1 + 1] - lo))
    count = p1 - p0
    m = np.minimum(a.lengths[p0:p1], b.lengths[p0:p1])
    width = kcw.dp_width_for(int(m.max()) if count else 0) if METHOD == "dp" else WORD_BITS
    out = cuda.device_array(count, dtype=np.int32)
    kcw.pair_kernel(METHOD, width)[(count + kcw.PAIR_TPB - 1) // kcw.PAIR_TPB, kcw.PAIR_TPB](
        *arrays, max_distance, out)
    long_idx = np.flatnonzero(m > WORD_BITS)
    if long_idx.shape[0]:
        _long_pairs_gpu(arrays, long_idx, int(m[long_idx].max()) + 1, max_distance, out)
    return out.copy_to_host()


def _long_pairs_gpu(arrays, idx: np.ndarray, width: int, max_distance: int, out) -> None:
    """DP-row kernel over the pairs ``idx`` whose both sides exceed 64 symbols."""
    kernel = kcw.long_pair_kernel()
    per = max(1, min(idx.shape[0], (1 << 28) // (4 * width)))
    for lo in range(0, idx.shape[0], per):
        part = cuda.to_device(idx[lo:lo + per].astype(np.int64))
        rows = cuda.device_array(part.shape[0] * width, dtype=np.int32)
        blocks = (part.shape[0] + kcw.PAIR_TPB - 1) // kcw.PAIR_TPB
        kernel[blocks, kcw.PAIR_TPB](*arrays, part, rows, width, max_distance, out)


def pairwise_gpu(a: Packed, b: Packed, max_distance: int = -1) -> np.ndarray:
    """Global Levenshtein distance of ``a[p]`` and ``b[p]`` (int32; -1 above ``max_distance``).

    Distance only (no traceback): Myers bit-parallel (or the register DP with
    ``METHOD = "dp"``) when the shorter side has at most 64 symbols, else a DP row.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b must have the same length; got {len(a)} and {len(b)}")
    total = len(a)
    chunk = 64 if config.ENABLE_CUDASIM else PAIR_CHUNK
    out = np.empty(total, dtype=np.int32)
    for p0 in range(0, total, chunk):
        p1 = min(p0 + chunk, total)
        out[p0:p1] = _pair_chunk(a, b, p0, p1, max_distance)
    if max_distance >= 0:
        out[out > max_distance] = -1
    return out


def edit_distance_gpu(a, b, max_distance: int = -1) -> np.ndarray:
    """:func:`pairwise_gpu` on two lists of str (by code point) or bytes (by byte)."""
    return pairwise_gpu(pack_text(a, "a"), pack_text(b, "b"), max_distance)


def dense_kernel_seconds(codes, max_distance: int, dtype) -> float:
    """Kernel-only time (CUDA events) of every dense row block, no copies back."""
    dev = device_lists(codes)
    dt = np.dtype(dtype)
    nq, nc = len(codes.q), dev.co.shape[0] - 1
    if nq == 0 or nc == 0:
        return 0.0
    step = block_rows(nq, nc, dt.itemsize)
    buf = cuda.device_array(step * nc, dtype=dt)
    stream = cuda.stream()
    start, stop = cuda.event(), cuda.event()
    start.record(stream)
    for a, b in _row_blocks(0, nq, step):
        _launch(dev, a, b, max_distance, buf, stream)
    stop.record(stream)
    stop.synchronize()
    return start.elapsed_time(stop) / 1000.0


def pairwise_kernel_seconds(a: Packed, b: Packed, max_distance: int = -1) -> float:
    """Kernel-only time (CUDA events) of :func:`pairwise_gpu`'s main kernel, one chunk."""
    count = min(len(a), PAIR_CHUNK)
    if count == 0:
        return 0.0
    arrays = []
    for p in (a, b):
        hi = int(p.offsets[count])
        arrays += [cuda.to_device(kcw.int_codes(p.data[:hi + 1])),
                   cuda.to_device(p.offsets[:count + 1])]
    m = np.minimum(a.lengths[:count], b.lengths[:count])
    width = kcw.dp_width_for(int(m.max()) if count else 0) if METHOD == "dp" else WORD_BITS
    out = cuda.device_array(count, dtype=np.int32)
    kernel = kcw.pair_kernel(METHOD, width)
    blocks = (count + kcw.PAIR_TPB - 1) // kcw.PAIR_TPB
    kernel[blocks, kcw.PAIR_TPB](*arrays, max_distance, out)  # compile, warm
    start, stop = cuda.event(), cuda.event()
    start.record()
    kernel[blocks, kcw.PAIR_TPB](*arrays, max_distance, out)
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1000.0 * len(a) / count
