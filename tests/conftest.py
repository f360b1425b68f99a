"""Shared test set-up: GPU/tool gating, where the GPU check scripts are, the slow tests left out
of a default run, and a first line saying that a first run compiles.

``python -m pytest`` leaves out the tests marked ``slow`` (end-to-end runs of the workflow and
the command line, the CUDA simulator, fresh compiles of the kernels), unless a ``-m``
expression is given or the test's file is named on the command line: ``python -m pytest -m
slow`` runs just those, and CI runs both (``.ci/run``). Nothing here depends on how busy the
machine is: Hypothesis has no deadline and no speed health check, and a child process is given
:data:`HANG_SECONDS`, which only a hang reaches.

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

import pytest
from hypothesis import HealthCheck, settings

IN_CI = os.environ.get("CI", "").lower() == "true"
HANG_SECONDS = 1800
"""How long a test waits for a child process: far past any run on a loaded 2-core machine, so
that only a hang reaches it."""

settings.register_profile("readalign", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("readalign")  # a test's own @settings change only what they name


def _has_gpu() -> bool:
    """Whether a real CUDA GPU runs the kernels (the simulator does not count)."""
    from readalign.runtime.backends import cuda_status

    return cuda_status()[0] and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"


HAS_GPU = _has_gpu()
REPO = Path(__file__).resolve().parent.parent
"""The repository root (tests sit in subfolders that mirror the package)."""
GPU_CHECKS = REPO / "tests" / "gpu"
"""The GPU check scripts: run on a GPU by hand, under the simulator by the tests."""


def under_simulator(*args: str, timeout: int = HANG_SECONDS) -> str:
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
    pytest.skip(msg, allow_module_level=True)  # in a test, or for a whole module at import


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


# --- what a default run leaves out, and what it says first ---------------------------------------

def _named_files(config: pytest.Config) -> set[Path]:
    """The test files named on the command line (a folder names no test in particular)."""
    named = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path.is_file():
            named.add(path)
    return named


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests marked slow unless ``-m`` chooses or their file is named."""
    if config.option.markexpr:
        return
    named = _named_files(config)
    left_out = [item for item in items
                if item.get_closest_marker("slow") is not None and item.path not in named]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        dropped = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in dropped]


def _compiled_code_folder() -> tuple[str, bool]:
    """Where numba keeps the compiled kernels (the package's own rules), and whether it holds
    any yet."""
    from readalign.kernels.cache_dir import resolve, writable

    folder = resolve(os.environ, lambda: writable(REPO / "kernels")).path
    if folder:
        return folder, any(Path(folder).rglob("*.nbi"))
    where = f"__pycache__ folders under {REPO}"
    return where, any((REPO / "kernels" / "__pycache__").glob("*.nbi"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say before any test runs that a first run compiles, and which tests a default run leaves out."""
    folder, warm = _compiled_code_folder()
    if warm:
        lines = [f"readalign: numba's compiled kernels are cached in {folder} (a change under "
                 "kernels/ compiles them again, for a few minutes)"]
    else:
        lines = ["readalign: this first run compiles the numba kernels before its first tests end "
                 f"(several minutes on 2 cores); they are cached in {folder} for later runs"]
    if not config.option.markexpr:
        lines.append("readalign: tests marked slow are left out (python -m pytest -m slow runs "
                     "them; naming a test file runs all of its tests)")
    return lines
