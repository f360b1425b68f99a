"""The chunk's run offsets scanned and its runs packed on the device (kernels/cuda.py), checked
against numpy: on a GPU, or under the simulator (``NUMBA_ENABLE_CUDASIM=1``)::

    python tests/gpu/run_offsets_check.py SEED COUNT [COUNT ...]

Each COUNT is a chunk of lanes with random run counts (zeros and long lanes among them) and
random letters in each lane's ``m + n + 2`` slots; prints ``ok`` when every offset and run is
where it belongs.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import cuda
from readalign.kernels.cuda import compact_scored_runs, running_offsets


def check(rng: np.random.Generator, count: int) -> None:
    m = rng.integers(0, 40, count)
    n = rng.integers(0, 40, count)
    qoff = np.concatenate([[0], np.cumsum(m)]).astype(np.int64)
    toff = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
    slot = qoff[:-1] + toff[:-1] + 2 * np.arange(count)
    total = int(qoff[-1] + toff[-1] + 2 * count)
    counts = rng.integers(0, m + n + 3).astype(np.int64)
    counts[rng.random(count) < 0.2] = 0
    ops = rng.integers(0, 2**32, max(total, 1), dtype=np.uint32)
    stream = cuda.stream()
    d_counts = cuda.to_device(counts, stream=stream)
    d_off = cuda.device_array(count + 1, np.int64, stream=stream)
    d_runs = cuda.device_array(max(total, 1), np.uint32, stream=stream)
    running_offsets(d_counts, d_off, stream)
    compact_scored_runs(cuda.to_device(ops, stream=stream), cuda.to_device(qoff, stream=stream),
                        cuda.to_device(toff, stream=stream), d_off, d_runs, stream)
    off = d_off.copy_to_host(stream=stream)
    runs = d_runs.copy_to_host(stream=stream)
    stream.synchronize()
    want = np.concatenate([[0], np.cumsum(counts)])
    assert np.array_equal(off, want), (count, off[:8], want[:8])
    packed = [ops[s:s + c] for s, c in zip(slot, counts, strict=True)]
    want_runs = np.concatenate(packed) if count else np.empty(0, np.uint32)
    assert np.array_equal(runs[:want[-1]], want_runs), count


def main(argv: list[str]) -> None:
    rng = np.random.default_rng(int(argv[0]))
    for count in argv[1:]:
        check(rng, int(count))
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1:])
