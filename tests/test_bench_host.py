"""The benchmarks' host line: the copy it times is a real copy, and the line names the host."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import _host


@pytest.mark.parametrize("words", [0, 1, (1 << 17) - 1, (1 << 17) + 3, 3 * (1 << 17)])
def test_the_timed_copy_copies_every_word(words):
    src = np.random.default_rng(words).integers(0, 2**63, words, dtype=np.uint64)
    dst = np.zeros_like(src)
    _host.copy_into(dst, 0, src)
    assert np.array_equal(dst, src)


def test_the_host_line_names_the_cpu_and_both_rates(monkeypatch):
    monkeypatch.setattr(_host, "COPY_BYTES", 1 << 20)
    line = _host.host_line(64)  # more threads than numba's pool: capped, not an error
    assert line.startswith(f"host: {_host.cpu_model()}, ")
    assert " GB/s on 1 thread, " in line
