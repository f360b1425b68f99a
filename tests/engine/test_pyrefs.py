"""References to a list's elements, taken and dropped on helper threads: counts stay exact."""

from __future__ import annotations

import ctypes
import gc
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readalign.engine.pylists import pyobjects, pyrefs


def _take(seq, parts=None):
    return pyrefs.References(seq, pyobjects.layout().items_at, parts)


def _counts(objs):
    return [sys.getrefcount(x) for x in objs]


@settings(max_examples=60, deadline=None)
@given(picks=st.lists(st.integers(0, 39), max_size=300), parts=st.sampled_from([1, 2, 4, 8]),
       as_tuple=st.booleans())
def test_each_occurrence_takes_one_reference_and_drop_gives_it_back(picks, parts, as_tuple):
    pool = [f"read-{i}-" + "ACGT" * (i % 5) + "x" * (0 if i % 3 else 5000) for i in range(20)]
    pool += [s.encode() for s in pool]
    seq = [pool[i] for i in picks]
    seq = tuple(seq) if as_tuple else seq
    before = _counts(pool)
    refs = _take(seq, parts)
    assert refs.pointers.tolist() == [id(x) for x in seq]
    held_as_is = parts == 1 and as_tuple  # a tuple keeps its elements itself
    want = [0 if held_as_is else picks.count(i) for i in range(40)]
    assert [c - b for c, b in zip(_counts(pool), before)] == want
    refs.drop()
    refs.drop()  # a second drop does nothing
    assert _counts(pool) == before


@pytest.mark.parametrize("parts", [2, 8])
def test_one_object_in_every_range_is_counted_once_per_place(parts):
    """Every thread changes the same object's count at once: each change is atomic, so the
    take adds exactly one per place and the drop takes exactly that back."""
    one = "shared" + "ACGT" * 40
    seq = [one] * 200_000
    before = sys.getrefcount(one)
    refs = _take(seq, parts)
    assert sys.getrefcount(one) == before + len(seq)
    refs.drop()
    assert sys.getrefcount(one) == before


def test_immortal_and_interned_strings_keep_their_counts():
    seq = ["", "A", "ACGT", b"", b"A"] * 50_000
    _take(["x", b"y"] * 4, 4).drop()  # a first use loads compiled code, which refers to ""
    before = _counts(seq[:5])
    refs = _take(seq, 4)
    refs.drop()
    assert _counts(seq[:5]) == before


class Mark:
    """An object that notes on which thread it was freed."""

    freed: list[int] = []

    def __del__(self) -> None:
        Mark.freed.append(threading.get_ident())


@pytest.mark.parametrize("parts", [1, 4])
def test_elements_the_list_lets_go_live_until_the_drop_which_frees_them_here(parts):
    seq = [f"{i:08d}" + "ACGT" * 30 for i in range(100_000)]
    marks = [Mark() for _ in range(100_000)]
    refs, mark_refs = _take(seq, parts), _take(marks, parts)
    data_at = sys.getsizeof("") - 1
    seq.clear()
    marks.clear()
    gc.collect()
    assert ctypes.string_at(int(refs.pointers[99_999]) + data_at, 8) == b"00099999"
    assert Mark.freed == []
    refs.drop()
    mark_refs.drop()
    assert len(Mark.freed) == 100_000 and set(Mark.freed) == {threading.get_ident()}
    Mark.freed.clear()


@pytest.mark.parametrize("parts", [1, 2])
def test_references_go_when_the_holder_is_collected(parts):
    seq = [f"x{i}" for i in range(1000)]
    before = _counts(seq)
    refs = _take(seq, parts)
    assert _counts(seq) == [b + 1 for b in before]
    del refs
    gc.collect()
    assert _counts(seq) == before


@pytest.mark.skipif(pyrefs._pthreads() is None, reason="no helper threads on this build")
def test_no_python_thread_runs_while_the_helpers_count():
    """Another thread changing the same counts all the time loses none of them.

    Its changes are plain increments and decrements under the GIL; were the GIL
    released while helper threads count (as numba's parallel regions do), the two
    would race and the counts would drift.
    """
    seq = [f"shared-{i}" for i in range(1 << 16)]
    before = _counts(seq[:64])
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            held = list(seq)  # one count up and down on every element
            del held

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(40):
            _take(seq, 8).drop()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
    assert _counts(seq[:64]) == before


def test_helper_threads_is_a_power_of_two_and_small_lists_stay_on_this_thread():
    assert pyrefs.helper_threads(10) == 1
    for count in (1 << 16, 1 << 20, 10**7):
        n = pyrefs.helper_threads(count)
        assert n >= 1 and n & (n - 1) == 0


class _Str(str):
    pass


_HEADER_POOL = ["ACGT" * 9, "", "n", "\u00e9" * 3, "\u20ac", b"ACGT", b"", _Str("AC"), 7, None,
                "GATTACA", b"\xff\x00"]


@settings(max_examples=60, deadline=None)
@given(picks=st.lists(st.integers(0, len(_HEADER_POOL) - 1), max_size=300),
       parts=st.sampled_from([2, 4, 8]), kind=st.sampled_from([str, bytes]))
def test_a_threaded_take_reads_each_header_as_one_thread_does(picks, parts, kind):
    lay = pyobjects.layout()
    seq = [_HEADER_POOL[i] for i in picks]
    own = [x for x in _HEADER_POOL if isinstance(x, (str, bytes)) and len(x) > 1]  # no singletons
    before = _counts(own)
    look = pyrefs.HeaderLook(id(kind), lay.type_at, lay.size_at, lay.state_at,
                             pyobjects.COMPACT_ASCII if kind is str else 0)
    refs = pyrefs.References(seq, lay.items_at, parts, look)
    one = pyrefs.References(seq, lay.items_at, 1, look)  # no helper threads: a second pass
    ok = [type(x) is kind and (kind is bytes or x.isascii()) for x in seq]
    assert refs.sizes.tolist() == one.sizes.tolist() == [len(x) if o else 0
                                                         for x, o in zip(seq, ok)]
    assert refs.misses == one.misses == ok.count(False)
    refs.drop()
    one.drop()
    assert _counts(own) == before


def test_lists_read_on_helper_threads_pack_as_on_one(monkeypatch):
    from readalign.engine import packing

    seqs = ["ACGT" * 9, "", "acgtN", "G" * 300] * 50
    one = packing.pack_dna(seqs, lazy=True)
    monkeypatch.setattr(pyrefs, "THREADED_FROM", 8)
    monkeypatch.setattr(pyrefs, "PER_THREAD", 16)
    many = packing.pack_dna(seqs, lazy=True)
    assert many.refs.parts > 1 and many.refs.sizes is not None
    assert many.lengths.tolist() == one.lengths.tolist() and many.data.tolist() == one.data.tolist()
    assert not isinstance(packing.pack_dna(seqs + ["\u00e9"], lazy=True), pyobjects.StringRows)
