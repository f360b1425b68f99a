"""The list fast path (``engine/pylists``) against the general path: the same results, byte for byte.

Every public call that takes lists (``align`` with and without a scoring, ``edit_distance``,
``cdist``) runs twice on the same lists, once with lists read where CPython keeps them and once
with the switch off (the general path's join and encode), and every field of the two results,
CIGARs included, must be equal, as must the errors of bad input. Inputs mix ASCII ``str``
(which the fast path reads), non-ASCII ``str`` (which it leaves to the general path), ``bytes``
and empty strings. The CPU backend runs under hypothesis; the GPU pipeline, which stages the
fast path's lists straight into pinned buffers, runs under the CUDA simulator.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import under_simulator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import readalign
from readalign.engine import packing, pylists

DNA = st.text(st.sampled_from("ACGTNacgtÉ"), max_size=40)
"""DNA with N, lower case and (rarely enough to leave many lists ASCII) a non-ASCII letter."""
TEXT = st.text(st.sampled_from("abcd\u00e9\u20ac\U0001f600"), max_size=12)
PROTEIN = st.text(st.sampled_from("ARNDCQEGHILKMFPSTWYVBZX*JOU"), max_size=30)
"""BLOSUM62's letters and three it lacks (J, O, U): a list with one of them is an error."""


def _same(fast: object, general: object, where: str) -> None:
    """Two results equal field for field: arrays by value and dtype, CIGARs as text too."""
    if isinstance(fast, readalign.AlignResult):
        for f in dataclasses.fields(fast):
            _same(getattr(fast, f.name), getattr(general, f.name), f"{where}.{f.name}")
        assert fast.cigars() == general.cigars(), where
    elif isinstance(fast, tuple):
        assert type(fast) is type(general) and len(fast) == len(general), where
        for i, (a, b) in enumerate(zip(fast, general, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(fast, np.ndarray):
        assert fast.dtype == general.dtype and np.array_equal(fast, general), where
    else:
        assert fast == general, where


def _both(monkeypatch, call, *args, **kwargs) -> None:
    """``call`` with the fast path on and off: equal results, or the same error."""
    out = []
    for on in (True, False):
        monkeypatch.setattr(pylists, "FAST_PATH", on)
        try:
            out.append(("result", call(*args, **kwargs)))
        except (TypeError, ValueError) as exc:
            out.append(("error", (type(exc), str(exc))))
    (kind_a, fast), (kind_b, general) = out
    assert kind_a == kind_b, (kind_a, fast, kind_b, general)
    _same(fast, general, call.__name__)


def _as(kind: str, seqs: list[str]) -> list:
    return [s.encode("utf-8") for s in seqs] if kind == "bytes" else seqs


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(DNA, DNA), max_size=8), kind=st.sampled_from(["str", "bytes"]),
       max_distance=st.sampled_from([None, 3]))
def test_align_from_lists_equals_the_general_path(monkeypatch, pairs, kind, max_distance):
    reads, windows = _as(kind, [p[0] for p in pairs]), _as(kind, [p[1] for p in pairs])
    for mode in ("infix", "global"):
        _both(monkeypatch, readalign.align, reads, windows, mode, max_distance, "cpu", eqx=True)
    plain, clipped = readalign.Scoring(2, 3, 4, 1), readalign.Scoring(2, 3, 4, 1, clip_penalty=2)
    for mode, scoring in (("local", clipped), ("global", plain), ("infix", plain)):
        _both(monkeypatch, readalign.align, tuple(reads), windows, mode, backend="cpu",
              scoring=scoring)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(PROTEIN, PROTEIN), max_size=6))
def test_protein_lists_and_their_bad_letters_equal_the_general_path(monkeypatch, pairs):
    """A letter outside the matrix is found in place on the fast path: the same error."""
    blosum = readalign.Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)
    reads, windows = [p[0] for p in pairs], [p[1] for p in pairs]
    _both(monkeypatch, readalign.align, reads, windows, "local", backend="cpu", scoring=blosum)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(a=st.lists(TEXT, max_size=8), b=st.lists(TEXT, max_size=8),
       kind=st.sampled_from(["str", "bytes"]), max_distance=st.sampled_from([None, 2]))
def test_edit_distance_and_cdist_from_lists_equal_the_general_path(monkeypatch, a, b, kind,
                                                                    max_distance):
    """Text lists, one side ASCII (read in place as bytes, widened to code points when the
    other side needs them) and the other not, or both alike."""
    a, b = _as(kind, a), _as(kind, b)
    n = min(len(a), len(b))
    _both(monkeypatch, readalign.edit_distance, a[:n], b[:n], max_distance, "cpu")
    _both(monkeypatch, readalign.edit_distance, a[:n], b[:n], max_distance, "cpu", cigar=True)
    _both(monkeypatch, readalign.cdist, a, b, max_distance, "cpu")
    _both(monkeypatch, readalign.cdist, a, None, max_distance, "cpu")
    if max_distance is not None:
        _both(monkeypatch, readalign.cdist, a, b, max_distance, "cpu", sparse=True)


def test_mixed_and_bad_elements_raise_the_same_error(monkeypatch):
    for reads in (["AC", b"GT"], [b"AC", "GT"], ["AC", None], ("AC", 7)):
        _both(monkeypatch, readalign.align, reads, ["ACGT", "ACGT"], backend="cpu")
        _both(monkeypatch, readalign.edit_distance, reads, ["ACGT", "ACGT"], backend="cpu")
        _both(monkeypatch, readalign.cdist, reads, ["ACGT"], backend="cpu")


def test_the_switch_sends_lists_down_the_general_path(monkeypatch):
    """What makes the comparisons above two paths: on, an ASCII list is read in place; off, it
    is packed; a non-ASCII list is packed either way."""
    ascii_list, other = ["ACGT", "", "acgtn"], ["ACGT", "É"]
    monkeypatch.setattr(pylists, "FAST_PATH", True)
    assert isinstance(packing.pack_dna(ascii_list, lazy=True), pylists.StringRows)
    assert isinstance(packing.pack_text([b"ab", b""], lazy=True), pylists.StringRows)
    assert not isinstance(packing.pack_dna(other, lazy=True), pylists.StringRows)
    monkeypatch.setattr(pylists, "FAST_PATH", False)
    assert not isinstance(packing.pack_dna(ascii_list, lazy=True), pylists.StringRows)
    assert not isinstance(packing.pack_text([b"ab", b""], lazy=True), pylists.StringRows)


@pytest.mark.parametrize(("value", "on"), [("0", False), ("off", False), ("1", True), ("", True)])
def test_the_environment_variable_sets_the_switch(value, on):
    env = dict(os.environ, **{pylists.SWITCH: value})
    out = subprocess.run([sys.executable, "-c", "from readalign.engine import pylists; "
                          "print(pylists.FAST_PATH)"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str(on)


SIMULATED = """
import numpy as np, readalign
from readalign.engine import pylists
rng = np.random.default_rng(11)
def dna(count, top):
    return ["".join(rng.choice(list("ACGTNacgt"), rng.integers(0, top + 1))) for _ in range(count)]
reads, windows = dna(90, 40), dna(90, 60)
reads[3], windows[5] = "", ""
s = readalign.Scoring(2, 3, 4, 1)
calls = [(reads, windows, dict(mode="infix")), (reads, windows, dict(mode="global", max_distance=4)),
         ([r.encode() for r in reads], [w.encode() for w in windows], dict(mode="infix")),
         (reads, windows, dict(mode="local", scoring=s)),
         (tuple(reads), windows, dict(mode="global", scoring=s))]
for q, t, kw in calls:
    got = []
    for on in (True, False):
        pylists.FAST_PATH = on
        got.append(readalign.align(q, t, backend="cuda", **kw))
    fast, general = got
    for f in ("distance", "ref_start", "ref_end", "cigar_ops", "cigar_offsets", "score",
              "query_start", "query_end"):
        a, b = getattr(fast, f), getattr(general, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), (kw, f)
    assert fast.cigars() == general.cigars(), kw
print("ok")
"""


def test_the_gpu_pipeline_stages_lists_as_the_general_path_packs_them():
    """Under the CUDA simulator: the pipeline's staging straight from the objects (bytes, a
    table applied on the device) gives what packed codes give."""
    assert under_simulator("-c", SIMULATED, timeout=600).strip() == "ok"
