"""The CUDA backend: identical to the CPU backend, under the simulator in CI and on a real GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HAS_GPU

import readalign

HERE = Path(__file__).parent
gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")


def test_kernels_under_cuda_simulator():
    """Small batches whose lanes differ in length and finish at different times."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, str(HERE / "gpu_check.py"), "48", "70"], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "identical on CPU and GPU" in out.stdout


def test_cuda_backend_without_gpu_is_an_error():
    if HAS_GPU:
        pytest.skip("a GPU is present")
    with pytest.raises(readalign.BackendUnavailableError, match="cuda"):
        readalign.align(["ACGT"], ["ACGT"], backend="cuda")


@pytest.mark.gpu
@gpu
def test_gpu_matches_cpu_on_a_million_pairs():
    import gpu_check

    assert gpu_check.compare(125_000, seed=1, max_len=300) == 1_000_000


@pytest.mark.gpu
@gpu
def test_gpu_long_pairs_and_batches():
    import gpu_check

    gpu_check.compare(2_000, seed=2, max_len=2_000)


def test_device_pools_are_kept_only_inside_keep_buffers():
    """The align pipeline's scope: one pool per key for the whole block, fresh ones outside."""
    code = ("from readalign.runtime.device_reuse import keep_buffers\n"
            "from readalign.runtime.gpu_memory import device_pool\n"
            "assert device_pool('a') is not device_pool('a')\n"
            "with keep_buffers():\n"
            "    a = device_pool('a')\n"
            "    with keep_buffers():\n"
            "        assert device_pool('a') is a\n"
            "    assert device_pool('a') is a and device_pool('b') is not a\n"
            "assert device_pool('a') is not a\n"
            "print('ok')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
