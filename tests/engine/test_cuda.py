"""The CUDA backend: identical to the CPU backend, under the simulator in CI and on a real GPU."""

from __future__ import annotations

import ast
import enum
import subprocess
import sys

import numpy as np
import pytest
from conftest import GPU_CHECKS, HANG_SECONDS, HAS_GPU, under_simulator
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.cuda.cudadrv.driver import CudaAPIError

import readalign
from readalign.runtime.gpu_memory import _out_of_memory, names_out_of_memory

gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")


@pytest.mark.slow
def test_kernels_under_cuda_simulator():
    """Small batches whose lanes differ in length and finish at different times."""
    assert "identical on CPU and GPU" in under_simulator(str(GPU_CHECKS / "gpu_check.py"), "48",
                                                          "70")


def test_cuda_backend_without_gpu_is_an_error():
    if HAS_GPU:
        pytest.skip("a GPU is present")
    with pytest.raises(readalign.BackendUnavailableError, match="cuda"):
        readalign.align(["ACGT"], ["ACGT"], backend="cuda")


@pytest.mark.gpu
@gpu
def test_gpu_matches_cpu_on_a_million_pairs():
    from tests.gpu import gpu_check

    assert gpu_check.compare(125_000, seed=1, max_len=300) == 1_000_000


@pytest.mark.gpu
@gpu
def test_gpu_long_pairs_and_batches():
    from tests.gpu import gpu_check

    gpu_check.compare(2_000, seed=2, max_len=2_000)


_THREADS_CODE = """
import threading, numpy as np, readalign
rng = np.random.default_rng(4)
def dna(n, length):
    return [''.join(rng.choice(list('ACGT'), length)) for _ in range(n)]
reads, wins = dna(20000, 150), dna(20000, 170)
scoring = readalign.Scoring(1, 4, 6, 1)
want = readalign.align(reads, wins, backend='cpu'), readalign.align(reads, wins, mode='local',
                                                                   scoring=scoring, backend='cpu')
go = threading.Barrier(4)
got = {}
def run(i):
    go.wait()  # every thread's first launch of each kernel at once
    kw = dict(mode='local', scoring=scoring) if i % 2 else {}
    got[i] = readalign.align(reads, wins, backend='cuda', **kw)
threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
for i, res in got.items():
    ref = want[i % 2]
    assert res.distance.tolist() == ref.distance.tolist() and res.cigars() == ref.cigars(), i
assert len(got) == 4
readalign.free_gpu_memory()
print('ok')
"""


@pytest.mark.gpu
@gpu
def test_gpu_calls_from_several_threads_at_once():
    """A fresh process, four threads launching the edit and scored kernels for the first time at
    once, each with its own buffers: every result equals the CPU's."""
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _THREADS_CODE],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_gpu_buffers_are_kept_per_thread_until_freed():
    """Pools and pinned buffers outlive a call, one set per thread; free_gpu_memory drops them."""
    code = ("import threading, numpy as np, readalign\n"
            "from readalign.runtime.gpu_memory import device_pool, pinned\n"
            "a = device_pool('a')\n"
            "assert device_pool('a') is a and device_pool('b') is not a\n"
            "h = pinned(('x',), 10, np.int64)\n"
            "assert pinned(('x',), 8, np.int64).base is h.base\n"
            "other = []\n"
            "th = threading.Thread(target=lambda: other.append(device_pool('a')))\n"
            "th.start(); th.join()\n"
            "assert other[0] is not a\n"
            "readalign.free_gpu_memory()\n"
            "assert device_pool('a') is not a\n"
            "assert pinned(('x',), 8, np.int64).base is not h.base\n"
            "v = a.get('v', 5, np.int32)\n"
            "assert v.shape == (5,) and a.get('v', 5, np.int32) is v\n"
            "assert a.get('v', 4, np.int32).shape == (4,)\n"
            "assert a.space('v', 3, np.int32).shape[0] >= 5\n"
            "d = a.upload('u', np.arange(7))\n"
            "assert d.shape[0] >= 7 and list(d.copy_to_host()[:7]) == list(range(7))\n"
            "assert list(a.iota('o', 9).copy_to_host()[:9]) == list(range(9))\n"
            "print('ok')\n")
    assert under_simulator("-c", code, timeout=HANG_SECONDS).strip() == "ok"


def test_a_pool_keeps_one_buffer_per_name_whatever_its_type():
    """A name asked for as int16 and then as int32 (a scored call's short and long pairs) is one
    buffer, grown once, not one buffer per type: the pool never holds more than a call was
    sized for."""
    code = ("import numpy as np\n"
            "from readalign.runtime.gpu_memory import device_pool\n"
            "a = device_pool('a')\n"
            "a.space('b', 10, np.int16)\n"
            "small = a.nbytes()\n"
            "wide = a.space('b', 10, np.int32)\n"
            "assert wide.dtype == np.int32 and wide.shape[0] >= 10\n"
            "assert small < 40 <= a.nbytes() < small + 40, (small, a.nbytes())\n"
            "grown = a.nbytes()\n"
            "assert a.space('b', 20, np.int16).shape[0] >= 20 and a.nbytes() == grown\n"
            "assert a.get('b', 20, np.int16).shape == (20,)\n"
            "assert list(a.iota('b', 5).copy_to_host()[:5]) == list(range(5))\n"
            "assert a.nbytes() == grown\n"
            "print('ok')\n")
    assert under_simulator("-c", code, timeout=HANG_SECONDS).strip() == "ok"


@pytest.mark.slow
def test_a_call_gives_back_the_pools_of_other_kinds_of_call():
    """An edit-distance call after a scored one (and the other way round) keeps only its own
    kind's device pools: the others' buffers would count as free to it without being reused."""
    code = ("import readalign\n"
            "from readalign.runtime.gpu_memory import _kept, held_device_bytes\n"
            "reads, windows = ['ACGTTGCA' * 4] * 40, ['TTACGTTGCA' * 4] * 40\n"
            "s = readalign.Scoring(1, 4, 6, 1)\n"
            "def kinds():\n"
            "    return {key[1] for key in _kept()['pools']}\n"
            "for kw, kind in ((dict(mode='local', scoring=s), 'ScoredSteps'), ({}, 'EditSteps'),\n"
            "                 (dict(mode='global', scoring=s), 'ScoredSteps')):\n"
            "    readalign.align(reads, windows, backend='cuda', **kw)\n"
            "    assert kinds() == {kind} and held_device_bytes() > 0, (kind, kinds())\n"
            "print('ok')\n")
    assert under_simulator("-c", code, timeout=HANG_SECONDS).strip() == "ok"


_FULL_BUDGET_CODE = """
import numpy as np, readalign
from numba import cuda
from readalign.runtime.gpu_memory import held_device_bytes
rng = np.random.default_rng(5)
def dna(count, lo, hi):
    ends = np.cumsum(rng.integers(lo, hi, count))
    text = np.array(list('ACGT'))[rng.integers(0, 4, int(ends[-1]))].tobytes().decode('utf-32-le')
    return [text[a:b] for a, b in zip(np.r_[0, ends[:-1]], ends)]
reads, windows = dna(400_000, 280, 301), dna(400_000, 280, 301)  # 4 slots of 100k pairs
_free, total = cuda.current_context().get_memory_info()
calls = (("int16 boundaries", dict(mode="global", scoring=readalign.Scoring(1, 4, 6, 1), k=8)),
         ("int32 boundaries", dict(mode="global", scoring=readalign.Scoring(1, 4, 1000, 1000), k=8)),
         ("edit distance", dict(mode="global", k=8)),
         ("int16 again", dict(mode="local", scoring=readalign.Scoring(1, 4, 6, 1), k=8)))
for name, kw in calls:
    res = readalign.align(reads, windows, backend="cuda", **kw)
    assert len(res) == len(reads)
    held = held_device_bytes()
    print(f"{name}: {held / 2**30:.1f} GiB held of {total / 2**30:.1f}")
    assert held <= 0.8 * total, name
print("ok")
"""


@pytest.mark.gpu
@gpu
def test_calls_that_fill_the_budget_one_after_another_fit():
    """Calls whose buffers each fill the memory budget, of every kind, one after another in a
    process: each reuses or gives back what the last kept, and none runs out of memory (a
    scored call's int16 and int32 boundaries were once kept side by side, and a million mixed
    pairs ran out of memory on an H100)."""
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _FULL_BUDGET_CODE],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok"), out.stdout


@settings(max_examples=200, deadline=None)
@given(count=st.integers(0, 20_000_000), most=st.integers(1 << 14, 1 << 20))
def test_chunks_are_even_with_no_small_remainder(count, most):
    """For chunk sizes as ``chunk_pairs`` gives them (``MIN_CHUNK..MAX_CHUNK``)."""
    from readalign.engine.gpu.sizing import LAST_SHARE, even_chunks

    per = even_chunks(count, most)
    chunks = -(-count // per) if count else 0
    last = count - (chunks - 1) * per
    assert per >= 1 and per <= most * (1 + LAST_SHARE) + 1
    if count >= most:
        assert last >= per - chunks and last > most * LAST_SHARE


def test_a_million_pairs_run_as_five_even_chunks():
    """The case that showed the remainder: five chunks of 199,728 pairs and one of 1,360."""
    from readalign.engine.gpu.sizing import even_chunks

    assert even_chunks(1_000_000, 199_728) == 200_000


def test_the_staging_worker_copies_on_the_calls_threads(monkeypatch):
    """A run's ``--threads`` bounds the staging worker's copies too; an API call (None) gets
    numba's whole pool, whatever the worker ran with before."""
    from concurrent.futures import ThreadPoolExecutor

    import numba

    from readalign.engine.gpu import chunks

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs numba's pool of 2+")
    seen = []
    monkeypatch.setattr(chunks, "_fill", lambda sides, idx, lo: seen.append(
        numba.get_num_threads()))
    with ThreadPoolExecutor(1) as worker:
        for threads in (1, None, 1_000):
            worker.submit(chunks._fill_on, threads, (), None, 0).result()
    pool = numba.config.NUMBA_NUM_THREADS
    assert seen == [1, pool, pool]


def test_scored_lanes_are_sized_by_the_cells_they_use():
    """int16 boundaries take half the bytes of int32 ones; a scoring that needs int32 (scores
    past int16's span) is sized as such."""
    from readalign.kernels.scored_quadrant import LOCAL, fits_int16

    from readalign.engine.gpu.scored import lane_bytes
    from readalign.engine.job import Scores

    small = Scores(LOCAL, np.full(25, 1, np.int32), 5, 6, 1)
    large = Scores(LOCAL, np.full(25, 400, np.int32), 5, 6, 1)
    assert fits_int16(LOCAL, 6, 1, 1, 0, 150, 170) and not fits_int16(LOCAL, 6, 1, 400, 0, 150, 170)
    wide = lane_bytes(150, 170, 16, True)
    assert lane_bytes(150, 170, 16, True, large) == wide
    narrow = lane_bytes(150, 170, 16, True, small)
    assert narrow < wide and wide - narrow == (wide - lane_bytes(150, 170, 16, False)
                                               - 8 * (150 + 170 + 2)) // 2


_FULL_GPU_CODE = """
import numpy as np, readalign
from numba import cuda
hog, size = [], 1 << 30
while size >= 1 << 16:  # take every byte of device memory another process could take
    try:
        hog.append(cuda.device_array(size, np.uint8))
    except Exception:
        size //= 2
reads, windows = ["ACGT" * 37] * 20000, ["ACGT" * 42] * 20000
try:
    readalign.align(reads, windows, mode="local", scoring=readalign.Scoring(1, 4, 6, 1),
                    backend="cuda")
except readalign.GPUMemoryError as exc:
    print(repr(str(exc)))
"""


@pytest.mark.gpu
@gpu
def test_a_gpu_without_free_memory_is_a_one_line_error():
    """Another process holding the GPU's memory: the call says so in one line, not with the
    driver's traceback."""
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _FULL_GPU_CODE],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip(), "the call raised no GPUMemoryError"
    message = ast.literal_eval(out.stdout.strip())
    assert message.startswith("the GPU ran out of memory (") and "\n" not in message, message


def test_only_the_drivers_out_of_memory_error_is_renamed():
    """The driver's error code is a number under numba's ctypes binding and an enum member
    under cuda-python's; any other driver error passes through as it was raised."""
    result = enum.Enum("CUresult", {"CUDA_ERROR_OUT_OF_MEMORY": 2, "CUDA_ERROR_LAUNCH_FAILED": 719})
    assert _out_of_memory(CudaAPIError(2, "oom"))
    assert _out_of_memory(CudaAPIError(result.CUDA_ERROR_OUT_OF_MEMORY, "oom"))
    assert not _out_of_memory(CudaAPIError(result.CUDA_ERROR_LAUNCH_FAILED, "launch"))
    assert not _out_of_memory(CudaAPIError(719, "launch"))

    @names_out_of_memory
    def fails():
        raise CudaAPIError(719, "launch failed")

    with pytest.raises(CudaAPIError, match="launch failed"):
        fails()


QUIET = """
import warnings, readalign
from readalign.kernels.cuda import LOW_OCCUPANCY
warnings.filterwarnings("error", message=LOW_OCCUPANCY)
import numpy as np
from numba import cuda
from readalign.kernels.cuda import _running_offsets_kernel
try:  # the filter sees numba-cuda's warning: a bare launch of one block is an error
    _running_offsets_kernel[1, 32](cuda.to_device(np.ones(3, np.int64)),
                                   cuda.device_array(4, np.int64))
    raise SystemExit("no low-occupancy warning to keep from callers")
except Exception as exc:
    assert "Grid size" in str(exc), exc
s = readalign.Scoring(1, 4, 6, 1)
for kw in (dict(mode="infix"), dict(mode="local", scoring=s), dict(mode="global", scoring=s)):
    res = readalign.align(["ACGT", "ACCT", ""], ["TTACGTT", "ACGT", "AC"], backend="cuda", **kw)
    assert len(res.cigars()) == 3
print("ok")
"""


@pytest.mark.gpu
@gpu
def test_small_batches_raise_no_occupancy_warning():
    """Three pairs run as one block of each kernel, the scan of run counts always does: numba's
    low-occupancy warning (an error here) never reaches the caller."""
    out = subprocess.run([sys.executable, "-c", QUIET], capture_output=True, text=True,
                         timeout=HANG_SECONDS)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
