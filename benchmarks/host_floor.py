"""Host memory floors: how fast this host can put bytes into fresh and reused memory.

The GPU paths end in host memory (a 2.5 GB word-list matrix, pinned staging
of alignment inputs), so the host's own rates bound them. Each line times one
pattern over ``--gb`` gigabytes on ``--threads`` threads (all cores by
default) and prints GB/s:

- fresh fill: ``np.empty`` then a parallel write (page faults + zeroing + write);
- reused fill: the same array written again (write bandwidth alone);
- copy pinned -> fresh: a parallel copy whose writes take the page faults;
- copy pinned -> reused: the copy alone;
- read: a parallel sum (read bandwidth);
- blocks: a fresh array filled from a 64 MB source block by block, the way the
  GPU word-list path places results: one parallel copy per block, and the same
  through :class:`readalign.runtime.host_copy.Placer`'s thread pool.

With ``--deflate`` it also times zlib at BGZF's block size (64 KiB, raw
deflate + CRC32, as htslib's writer does) on BAM-like records, on one thread
and on all: the compression capacity that bounds ``readalign align``.

    python benchmarks/host_floor.py --gb 2.5 [--deflate]
"""

from __future__ import annotations

import argparse
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, prange

from readalign.runtime.hostkernels import copy_into


@njit(parallel=True, nogil=True, cache=True)
def _fill(buf, parts):
    step = (buf.shape[0] + parts - 1) // parts
    for p in prange(parts):
        buf[p * step:min((p + 1) * step, buf.shape[0])] = 1


@njit(parallel=True, nogil=True, cache=True)
def _read(buf, parts):
    step = (buf.shape[0] + parts - 1) // parts
    total = 0
    for p in prange(parts):
        s = 0
        for x in range(p * step, min((p + 1) * step, buf.shape[0]), 64):
            s += buf[x]
        total += s
    return total


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _block_rows(src: np.ndarray, size: int, parts: int) -> list:
    """Fresh array filled by 64 MB blocks: numba parallel copies, then the placement pool."""
    from readalign.runtime import host_copy

    block = 64 << 20
    starts = range(0, size, block)

    def by_prange() -> None:
        out = np.empty(size, np.uint8)
        for a in starts:
            b = min(a + block, size)
            copy_into(out, a, src[:b - a])

    def by_pool() -> None:
        out = np.empty(size, np.uint8)
        placer = host_copy.Placer(out)
        pending = [placer.copy(src[:min(a + block, size) - a], a) for a in starts]
        for futures in pending:
            host_copy.wait(futures)

    return [(label, min(_timed(fn) for _ in range(3)))
            for label, fn in (("blocks, parallel copy", by_prange), ("blocks, placement pool", by_pool))]


def _bam_like(n: int, seed: int = 0) -> bytes:
    """``n`` records shaped like ``readalign align``'s: 150 bp, constant quality, a few tags."""
    rng = np.random.default_rng(seed)
    rec = np.empty((n, 320), np.uint8)
    rec[:, :36] = rng.integers(0, 256, (n, 36), dtype=np.uint8)  # fixed fields
    rec[:, 36:46] = np.frombuffer(b"r000000000", np.uint8)
    rec[:, 46:50] = rng.integers(0, 256, (n, 4), dtype=np.uint8)  # CIGAR
    rec[:, 50:125] = rng.choice(np.array([0x11, 0x12, 0x14, 0x18, 0x21, 0x22, 0x24, 0x28,
                                          0x41, 0x42, 0x44, 0x48, 0x81, 0x82, 0x84, 0x88],
                                         np.uint8), (n, 75))  # 4-bit bases
    rec[:, 125:275] = 40  # qualities
    rec[:, 275:] = rng.integers(48, 58, (n, 45), dtype=np.uint8)  # tags (digits)
    return rec.tobytes()


def _deflate_rows(threads: int, level: int = 1) -> list[tuple[str, float, float]]:
    """(label, seconds, GB) of BGZF-style compression on 1 and on ``threads`` threads."""
    data = _bam_like(200_000)
    blocks = [data[i:i + 65280] for i in range(0, len(data), 65280)]

    def one(b: bytes) -> int:
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        zlib.crc32(b)
        return len(c.compress(b) + c.flush())

    rows = [(f"deflate {level}, 1 thread", _timed(lambda: [one(b) for b in blocks]),
             len(data) / 1e9)]
    with ThreadPoolExecutor(threads) as pool:
        big = blocks * 8
        t = _timed(lambda: list(pool.map(one, big, chunksize=16)))
        rows.append((f"deflate {level}, {threads} threads", t, len(data) * 8 / 1e9))
    return rows


def _thp() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            return fh.read().strip()
    except OSError:
        return "unknown"


def main() -> None:
    """Print the host's fill, copy and read rates."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=2.5, help="bytes per pattern, in GB (default 2.5)")
    ap.add_argument("--threads", type=int, default=0, help="threads (default: numba's, all cores)")
    ap.add_argument("--pinned", action="store_true", help="source of the copies in page-locked memory")
    ap.add_argument("--deflate", action="store_true", help="also time zlib level 1 in 64 KiB blocks")
    args = ap.parse_args()
    import numba

    if args.threads:
        numba.set_num_threads(args.threads)
    parts = numba.get_num_threads() * 4
    size = int(args.gb * 1e9)
    small = np.empty(1 << 20, np.uint8)
    _fill(small, parts)
    copy_into(small.copy(), 0, small)
    _read(small, parts)
    print(f"threads {numba.get_num_threads()}, {args.gb} GB, transparent hugepages: {_thp()}")
    if args.pinned:
        from numba import cuda

        t = _timed(lambda: cuda.pinned_array(size, np.uint8))
        print(f"pinned allocation: {t:.3f} s ({args.gb / t:.1f} GB/s)")
        src = cuda.pinned_array(size, np.uint8)
    else:
        src = np.empty(size, np.uint8)
    _fill(src, parts)
    rows = []
    for label, fn in (
        ("fresh fill", lambda: _fill(np.empty(size, np.uint8), parts)),
        ("copy src -> fresh", lambda: copy_into(np.empty(size, np.uint8), 0, src)),
    ):
        rows.append((label, min(_timed(fn) for _ in range(3))))
    dst = np.empty(size, np.uint8)
    _fill(dst, parts)
    rows.append(("reused fill", min(_timed(lambda: _fill(dst, parts)) for _ in range(3))))
    rows.append(("copy src -> reused", min(_timed(lambda: copy_into(dst, 0, src)) for _ in range(3))))
    rows.append(("read", min(_timed(lambda: _read(dst, parts)) for _ in range(3))))
    rows.extend(_block_rows(src, size, parts))
    for label, t in rows:
        print(f"{label:22s} {t:.3f} s  {args.gb / t:6.1f} GB/s")
    if args.deflate:
        for label, t, gb in _deflate_rows(numba.get_num_threads()):
            print(f"{label:22s} {t:.3f} s  {gb / t:6.2f} GB/s (uncompressed bytes in)")


if __name__ == "__main__":
    main()
