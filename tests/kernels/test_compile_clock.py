"""The compile clock: the wall time during which numba compiles readalign's code, counted once
per compile (a function and the callees it compiles with it), in any thread, and never for a
load from the disk cache.

A small module of numba functions, loaded as part of ``readalign`` from a fresh folder, is
compiled for real; every bound below holds however busy the machine is (a compile lies inside
the call that triggers it).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
import time

import pytest
from conftest import HANG_SECONDS
from readalign.kernels import compile_notice
from readalign.kernels.compile_notice import compile_seconds

PROBE = """
from numba import njit


@njit(cache=True)
def inner(x):
    return x * 3 + 1


@njit(cache=True)
def outer(x):
    return inner(x) + 2


@njit(cache=True)
def alone(x):
    return x - 1
"""


LOAD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("readalign.compile_probe", sys.argv[1])
probe = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = probe  # where numba's cached entries find their module again
spec.loader.exec_module(probe)
"""


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """The probe module, as ``readalign.compile_probe``, its cache beside it in ``tmp_path``."""
    path = tmp_path / "compile_probe.py"
    path.write_text(PROBE)
    spec = importlib.util.spec_from_file_location("readalign.compile_probe", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def _timed(fn, *args) -> tuple[object, float, float]:
    """``fn(*args)``, its wall time, and the compile time it added."""
    total, start = compile_seconds(), time.perf_counter()
    value = fn(*args)
    wall = time.perf_counter() - start
    return value, wall, compile_seconds() - total


def test_a_compile_is_timed_once_with_its_callees_and_a_compiled_call_adds_nothing(probe):
    value, wall, spent = _timed(probe.outer, 1)
    assert value == 6
    assert 0 < spent <= wall  # outer's compile holds inner's: counted twice it could pass wall
    value, _, spent = _timed(probe.outer, 2)
    assert value == 9 and spent == 0
    assert not compile_notice.compiling()


def test_a_compile_in_another_thread_counts_while_this_one_waits_for_it(probe):
    """A stage waiting on a thread that compiles leaves that time out as well."""
    got = []

    def wait_for_a_compile():
        worker = threading.Thread(target=lambda: got.append(probe.alone(5)))
        worker.start()
        worker.join(HANG_SECONDS)

    _, wall, spent = _timed(wait_for_a_compile)
    assert got == [4]
    assert 0 < spent <= wall


def test_a_dispatcher_found_cold_counts_its_compiles_without_numba_s_event(probe):
    """numba-cuda compiles without the event: the cold-cache check counts through ``compile``."""
    compile_notice.announce_if_cold(probe.alone)  # no index yet: its compiles are counted
    assert "counted" in probe.alone.compile.__qualname__
    value, wall, spent = _timed(probe.alone, 3)
    assert value == 2 and 0 < spent <= wall  # once, though numba's event fires too


def test_a_load_from_the_disk_cache_is_not_compiling(probe, tmp_path):
    assert probe.outer(1) == 6  # compiled and written to the cache beside the probe
    load = (LOAD + "from readalign.kernels.compile_notice import compile_seconds\n"
            "print(probe.outer(1), compile_seconds())\n")
    out = subprocess.run([sys.executable, "-c", load, str(tmp_path / "compile_probe.py")],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "0.0"]
