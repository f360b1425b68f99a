"""CIGAR runs placed chunk by chunk where the call returns them (engine/gpu/run_store.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HANG_SECONDS, under_simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.engine.gpu.run_store import RunStore


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=30), min_size=1, max_size=12))
def test_chunks_of_runs_come_back_end_to_end_with_their_offsets(chunks):
    """Chunks whose run counts grow past every projection still come back whole and in order."""
    count = sum(len(c) for c in chunks)
    store = RunStore(count)
    want, lo = [], 0
    for counts in chunks:
        total = sum(counts)
        runs, base = store.space(lo + len(counts), total)
        chunk = np.arange(base, base + total, dtype=np.uint32) * 7 + 1
        runs[base:base + total] = chunk
        want.append(chunk)
        store.offsets[lo + 1:lo + len(counts) + 1] = base + np.cumsum(counts)
        lo += len(counts)
    ((first, last, got),) = store.pieces()
    assert (first, last) == (0, count)
    assert np.array_equal(got, np.concatenate(want))
    assert store.offsets[0] == 0 and store.offsets[-1] == got.shape[0]
    assert np.array_equal(np.diff(store.offsets), [c for counts in chunks for c in counts])


CHUNKS = """
import numpy as np, readalign
from readalign.engine.gpu import run_store, sizing
sizing.SIM_BATCH = 16
grown = []
real = run_store.RunStore.space
def space(self, hi, total):
    before = self.runs.shape[0]
    out = real(self, hi, total)
    grown.append(self.runs.shape[0] > before)
    return out
run_store.RunStore.space = space
rng = np.random.default_rng(5)
def mutate(s, rate, indels):
    out = []
    for c in s:
        r = rng.random()
        if r < rate:
            out.append("ACGT"[rng.integers(4)] + (c if indels else ""))
        elif r < 2 * rate and indels:
            continue
        else:
            out.append(c)
    return "".join(out)
wins = ["".join("ACGT"[x] for x in rng.integers(0, 4, 40)) for _ in range(120)]
s = readalign.Scoring(2, 3, 4, 1)
for indels in (False, True):  # equal lengths keep input order; indels sort by length
    # the first chunk's pairs are exact, later ones ever more changed
    reads = [w[3:37] if i < 20 else mutate(w[3:37], min(0.3, i / 400), indels)
             for i, w in enumerate(wins)]
    for kw in (dict(mode="infix"), dict(mode="local", scoring=s),
               dict(mode="global", scoring=s)):
        grown.clear()
        g = readalign.align(reads, wins, backend="cuda", eqx=True, **kw)
        c = readalign.align(reads, wins, backend="cpu", eqx=True, **kw)
        assert len(grown) == 8 and (indels or sum(grown) > 1), (kw, grown)
        assert (g.distance == c.distance).all() and g.cigars() == c.cigars(), kw
        assert (g.cigar_offsets == c.cigar_offsets).all(), kw
        assert np.array_equal(g.cigar_ops, c.cigar_ops), kw
        if "scoring" in kw:
            assert (g.score == c.score).all() and (g.query_start == c.query_start).all(), kw
            assert (g.query_end == c.query_end).all() and (g.ref_start == c.ref_start).all()
print("ok")
"""


@pytest.mark.slow
def test_runs_of_many_chunks_equal_the_cpu_when_the_store_grows():
    """Under the simulator, eight chunks of 16 pairs (twice the pipeline's slots), in input
    order (whose runs outgrow the first chunk's projection) and sorted by length: the runs,
    offsets and per-pair results equal the CPU backend's."""
    assert under_simulator("-c", CHUNKS, timeout=HANG_SECONDS).strip() == "ok"
