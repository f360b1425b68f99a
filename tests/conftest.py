"""Shared test set-up: the oracle module on the path, and GPU/tool gating."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

IN_CI = os.environ.get("CI", "").lower() == "true"


def _has_gpu() -> bool:
    """Whether a real CUDA GPU runs the kernels (the simulator does not count)."""
    from readalign.backends import cuda_status

    return cuda_status()[0] and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"


HAS_GPU = _has_gpu()


def require_tool(name: str) -> str:
    """Path of external tool ``name``; skip the test without it (fail instead when CI=true)."""
    import shutil

    import pytest

    path = shutil.which(name)
    if path is None:
        msg = f"external tool '{name}' is not installed"
        if IN_CI:
            pytest.fail(f"{msg} (CI=true: .ci/run must install it)")
        pytest.skip(msg)
    return path
