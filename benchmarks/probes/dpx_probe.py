"""How much Hopper's packed 16x2 max-plus instructions could give the scored forward pass.

The Gotoh cell is max-plus arithmetic: ``E = max(E - ge, H - oe)``, ``F`` alike, ``H =
max(H_diag + s, E, F)`` (and 0 in local mode). This times a loop of those updates per thread
three ways on the GPU: int32 scalars (one cell per half of the work; ``ptxas`` already fuses
``max(a + b, c)`` into ``VIADDMNMX`` and three-way maxima into ``VIMNMX3``), and two cells packed
in one word through CUDA C++'s ``__viaddmax_s16x2`` and ``__vimax3_s16x2_relu``, linked from a
small CUDA source compiled by NVRTC (with and without link-time optimisation). It prints the
cell updates per second and the SASS instructions each build uses::

    python -m benchmarks.probes.dpx_probe

GPU only (sm_90 for the packed intrinsics).
"""

from __future__ import annotations

import os
import re
import tempfile
import time

import numpy as np
from numba import cuda, int32

DPX_SOURCE = r"""
extern "C" __device__ int viaddmax_s16x2(int* ret, int a, int b, int c) {
    *ret = (int)__viaddmax_s16x2((unsigned)a, (unsigned)b, (unsigned)c);
    return 0;
}
extern "C" __device__ int vimax3_s16x2_relu(int* ret, int a, int b, int c) {
    *ret = (int)__vimax3_s16x2_relu((unsigned)a, (unsigned)b, (unsigned)c);
    return 0;
}
"""
THREADS = 132 * 2048 * 4
ITERS = 20_000


def _scalar(a, b, out, iters):
    """Two independent int32 cells per iteration (the low and high halves of the inputs)."""
    i = cuda.grid(1)
    if i >= a.shape[0]:
        return
    nxt = (i + 1) % a.shape[0]
    h, e, f = np.int32(a[i] & 0xFFFF), np.int32(b[i] & 0xFFFF), np.int32(a[nxt] & 0xFFFF)
    h2, e2, f2 = np.int32(a[i] >> 16), np.int32(b[i] >> 16), np.int32(a[nxt] >> 16)
    one, two, zero = np.int32(1), np.int32(2), np.int32(0)
    for _ in range(iters):
        e = max(np.int32(e + one), h)
        f = max(np.int32(f + two), e)
        h = max(max(h, e), max(f, zero))
        e2 = max(np.int32(e2 + one), h2)
        f2 = max(np.int32(f2 + two), e2)
        h2 = max(max(h2, e2), max(f2, zero))
    out[i] = np.int32((h & 0xFFFF) | (h2 << 16))


def _packed_kernel(source: str, lto: bool):
    addmax = cuda.declare_device("viaddmax_s16x2", "int32(int32, int32, int32)", link=[source])
    max3 = cuda.declare_device("vimax3_s16x2_relu", "int32(int32, int32, int32)", link=[source])

    def packed(a, b, out, iters):
        """The same two cells per iteration, packed in one word."""
        i = cuda.grid(1)
        if i >= a.shape[0]:
            return
        h, e, f = a[i], b[i], a[(i + 1) % a.shape[0]]
        for _ in range(iters):
            e = addmax(e, int32(0x00010001), h)
            f = addmax(f, int32(0x00020002), e)
            h = max3(h, e, f)
        out[i] = h
    return cuda.jit(link=[source], lto=True)(packed) if lto else cuda.jit(link=[source])(packed)


def _time(kernel, a, b, out) -> tuple[float, list[str]]:
    grid = THREADS // 256
    kernel[grid, 256](a, b, out, 10)
    cuda.synchronize()
    t0 = time.perf_counter()
    kernel[grid, 256](a, b, out, ITERS)
    cuda.synchronize()
    seconds = time.perf_counter() - t0
    sass = "".join(kernel.inspect_sass().values())
    return seconds, sorted(set(re.findall(r"\b(VIADDMNMX\S*|VIMNMX3\S*|VIMNMX\S*)", sass)))


def main() -> None:
    rng = np.random.default_rng(0)
    a = cuda.to_device(rng.integers(0, 1000, THREADS).astype(np.int32))
    b = cuda.to_device(rng.integers(0, 1000, THREADS).astype(np.int32))
    out = cuda.device_array(THREADS, np.int32)
    name = cuda.get_current_device().name
    print(f"device: {name.decode() if isinstance(name, bytes) else name}")
    with tempfile.TemporaryDirectory() as d:
        source = os.path.join(d, "dpx.cu")
        with open(source, "w") as fh:
            fh.write(DPX_SOURCE)
        builds = (("int32 scalars", cuda.jit(_scalar)),
                  ("16x2 packed (NVRTC, LTO)", _packed_kernel(source, True)),
                  ("16x2 packed (NVRTC)", _packed_kernel(source, False)))
        for name, kernel in builds:
            seconds, ops = _time(kernel, a, b, out)
            rate = THREADS * ITERS * 2 / seconds
            print(f"{name:26s} {seconds * 1e3:7.1f} ms  {rate / 1e12:5.2f}T cell updates/s  "
                  f"SASS: {' '.join(ops)}")


if __name__ == "__main__":
    main()
