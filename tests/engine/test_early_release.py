"""The GPU pipeline's early release of list inputs (simulator in CI)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import under_simulator

from readalign.engine.pyobjects import read_strings


def test_released_strings_refuse_to_be_read():
    seqs = ["ACGT" * 10, "GATTACA"]
    before = [sys.getrefcount(s) for s in seqs]
    rows = read_strings(seqs, None)
    rows.release()
    assert [sys.getrefcount(s) for s in seqs] == before
    with pytest.raises(RuntimeError, match="after release"):
        rows.stage_into(np.arange(2), 0, np.array([0, 40, 47]), np.empty(48, np.uint8),
                        translate=False)


CHECK = """
import numpy as np, readalign
from readalign.engine import pyobjects
from tests.engine.gpu_check import mixed_pairs
released = []
real = pyobjects.StringRows.release
pyobjects.StringRows.release = lambda self: (released.append(len(self)), real(self))[0]
q, t = mixed_pairs(300, 7, 60)
q = [x.decode() for x in q]
t = [x.decode() for x in t]
s = readalign.Scoring(2, 3, 4, 1)
for kw in (dict(mode="infix"), dict(mode="local", scoring=s), dict(mode="global", scoring=s)):
    released.clear()
    g = readalign.align(q, t, backend="cuda", **kw)
    c = readalign.align(q, t, backend="cpu", **kw)
    assert released == [300, 300], released
    assert (g.distance == c.distance).all() and g.cigars() == c.cigars(), kw
    if "scoring" in kw:
        assert (g.score == c.score).all() and (g.query_start == c.query_start).all(), kw
print("ok")
"""


def test_pipeline_with_early_release_equals_the_cpu():
    assert under_simulator("-c", CHECK, timeout=600).strip() == "ok"
