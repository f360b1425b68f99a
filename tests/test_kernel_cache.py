"""The CPU batch driver is compiled once per machine, not once per process."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = "import readalign; readalign.align(['ACGT' * 10], ['ACGTA' * 10], backend='cpu')"


def _driver_cache_lines() -> list[str]:
    env = {**os.environ, "NUMBA_DEBUG_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=True)
    return [ln for ln in (out.stdout + out.stderr).splitlines()
            if "cpu.batch_driver.locals.run" in ln]


def test_second_process_loads_the_batch_driver_from_the_disk_cache():
    _driver_cache_lines()  # compiles and saves, unless an earlier run did
    second = _driver_cache_lines()
    assert any("data loaded from" in ln for ln in second), second
    assert not any("saved" in ln for ln in second), second
