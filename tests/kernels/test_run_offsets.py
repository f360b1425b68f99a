"""A chunk's run counts scanned into offsets and its runs packed on the device (kernels/cuda.py):
under the simulator in CI, at full size on a GPU."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import GPU_CHECKS, HANG_SECONDS, HAS_GPU, under_simulator

CHECK = str(GPU_CHECKS / "run_offsets_check.py")


def test_run_offsets_and_packing_under_the_simulator():
    """Chunks of 1 lane, fewer lanes than the block's threads, a few lanes a thread and an
    uneven last share: offsets equal numpy's running sum, runs land end to end."""
    assert under_simulator(CHECK, "3", "1", "5", "32", "33", "97", timeout=HANG_SECONDS).strip() == "ok"


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_run_offsets_and_packing_on_the_gpu():
    """A block of 1,024 threads over chunks from one lane to 300,001 lanes (the pipeline's
    chunks hold up to about 200,000)."""
    out = subprocess.run([sys.executable, CHECK, "7", "1", "1023", "1025", "4097", "300001"],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
