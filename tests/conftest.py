"""Shared test set-up: GPU/tool gating, and where the GPU check scripts are.

Helpers shared by several test files live in ``tests/support`` (``tests.support.oracle``
and the others), the GPU check scripts in ``tests/gpu``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

IN_CI = os.environ.get("CI", "").lower() == "true"


def _has_gpu() -> bool:
    """Whether a real CUDA GPU runs the kernels (the simulator does not count)."""
    from readalign.runtime.backends import cuda_status

    return cuda_status()[0] and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"


HAS_GPU = _has_gpu()
REPO = Path(__file__).resolve().parent.parent
"""The repository root (tests sit in subfolders that mirror the package)."""
GPU_CHECKS = REPO / "tests" / "gpu"
"""The GPU check scripts: run on a GPU by hand, under the simulator by the tests."""


def under_simulator(*args: str, timeout: int = 900) -> str:
    """Run ``python -W ignore *args`` in a new process on numba's CUDA simulator; its stdout.

    The test fails, with the tail of stderr, when the process exits non-zero.
    """
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-W", "ignore", "-X", "faulthandler", *args], env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def unavailable(msg: str, fix: str) -> NoReturn:
    """Skip the test, saying ``msg``; fail it instead when CI=true (CI must have everything).

    The one place of the rule for every optional test dependency: a tool or
    package that may be missing on a developer's machine makes its tests skip
    with the reason, but never silently thins out a CI run.
    """
    import pytest

    if IN_CI:
        pytest.fail(f"{msg} (CI=true: {fix})")
    pytest.skip(msg)


def require_tool(name: str) -> str:
    """Path of external tool ``name``; skip the test without it (fail instead when CI=true)."""
    import shutil

    path = shutil.which(name)
    if path is None:
        unavailable(f"external tool '{name}' is not installed", ".ci/run must install it")
    return path


def require_module(name: str, extra: str) -> ModuleType:
    """Import Python package ``name`` (from the ``extra`` extra of pyproject.toml) for a test;
    skip the test without it (fail instead when CI=true)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        unavailable(f"Python package '{name}' is not installed (pip install -e '.[{extra}]')",
                    f".ci/run must install '.[{extra}]'")
