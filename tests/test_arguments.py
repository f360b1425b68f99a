"""Every public function checks its arguments the same way, and names the bad one.

Each case calls the real function and expects the error to name the argument (and the index
of a bad element) before any work starts; the good cases compare with an oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import readalign
from tests.support.oracle import dp_distance


def _align(first, second, **kw):
    return readalign.align(first, second, backend="cpu", **kw)


def _align_scored(first, second, **kw):
    return readalign.align(first, second, backend="cpu", scoring=readalign.Scoring(), **kw)


def _edit_distance(first, second, **kw):
    return readalign.edit_distance(first, second, backend="cpu", **kw)


def _cdist(first, second, **kw):
    return readalign.cdist(first, second, backend="cpu", **kw)


CALLS = {
    "align": (_align, ("reads", "windows"), True),
    "align with a scoring": (_align_scored, ("reads", "windows"), True),
    "edit_distance": (_edit_distance, ("a", "b"), True),
    "cdist": (_cdist, ("queries", "choices"), False),
}
"""Every public function that takes sequences: how to call it on the CPU, the names of its two
lists, and whether they are paired (element i with element i)."""

GOOD = ["ACGT", "ACG", "GGTT"]

NOT_A_LIST = [
    pytest.param(None, "got None", id="None"),
    pytest.param(5, "got int", id="int"),
    pytest.param(2.5, "got float", id="float"),
    pytest.param("ACGT", "got a single str", id="str"),
    pytest.param(b"ACGT", "got a single bytes", id="bytes"),
    pytest.param(bytearray(b"ACGT"), "got a single bytearray", id="bytearray"),
    pytest.param({"ACGT", "ACG"}, "got a set, which has no order", id="set"),
    pytest.param({"ACGT": 1}, "got a dict, which has no order", id="dict"),
    pytest.param(np.array([["AC", "GT"]]), r"got an array of shape \(1, 2\)", id="2-D array"),
    pytest.param(np.arange(3), "got an array of int64", id="int array"),
    pytest.param(object(), "got object", id="object"),
]

BAD_ELEMENTS = [
    pytest.param(None, "NoneType", id="None"),
    pytest.param(3, "int", id="int"),
    pytest.param(4.5, "float", id="float"),
    pytest.param(["ACGT"], "list", id="list"),
]


NOT_A_LIST_CASES = [
    pytest.param(call, side, *case.values, id=f"{call}-{side}-{case.id}")
    for call in CALLS for side in (0, 1) for case in NOT_A_LIST
    if not (case.values[0] is None and side == 1 and not CALLS[call][2])  # cdist(q, None): q vs q
]


@pytest.mark.parametrize("call, side, bad, says", NOT_A_LIST_CASES)
def test_a_list_argument_that_is_not_a_list_is_named(call, side, bad, says):
    fn, names, _ = CALLS[call]
    args = [GOOD, GOOD]
    args[side] = bad
    with pytest.raises(TypeError, match=f"^{names[side]} must be a list, tuple or 1-D array of "
                                        f"str or bytes; {says}"):
        fn(*args)


@pytest.mark.parametrize("bad, kind", BAD_ELEMENTS)
@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("call", CALLS)
def test_a_bad_element_is_named_with_its_index(call, side, index, bad, kind):
    fn, names, _ = CALLS[call]
    args = [list(GOOD), list(GOOD)]
    args[side][index] = bad
    expected = "str or bytes" if index == 0 else "str"
    with pytest.raises(TypeError, match=rf"^{names[side]}\[{index}\]: expected {expected}, "
                                        rf"got {kind} "):
        fn(*args)


@pytest.mark.parametrize("second", [[b"ACGT"], np.array([b"ACGT"]), (b"A",)],
                         ids=["list", "array", "tuple"])
@pytest.mark.parametrize("call", CALLS)
def test_str_against_bytes_is_refused_naming_both(call, second):
    fn, (a, b), _ = CALLS[call]
    with pytest.raises(TypeError, match=f"^{a} are str but {b} are bytes: give both as str or "
                                        "both as bytes"):
        fn(["ACGT"], second)
    with pytest.raises(TypeError, match=f"^{a} are bytes but {b} are str"):
        fn(np.array([b"ACGT"]), ["ACGT"])


@pytest.mark.parametrize("call", [c for c in CALLS if CALLS[c][2]])
def test_paired_lists_of_different_lengths_are_named(call):
    fn, (a, b), _ = CALLS[call]
    with pytest.raises(ValueError, match=f"^{a} has 3 sequences but {b} has 2: counts must match"):
        fn(GOOD, GOOD[:2])


@pytest.mark.parametrize(("threads", "error"), [
    (0, ValueError), (-1, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError)])
@pytest.mark.parametrize("call", CALLS)
def test_threads_must_be_a_whole_number_of_at_least_one(call, threads, error):
    fn, _, _ = CALLS[call]
    with pytest.raises(error, match=rf"^threads must be None or an int >= 1; got {threads!r}"):
        fn(GOOD, GOOD, threads=threads)


@pytest.mark.parametrize(("max_distance", "error"), [(-1, ValueError), (1.5, TypeError),
                                                     ("2", TypeError), (False, TypeError)])
@pytest.mark.parametrize("call", [c for c in CALLS if c != "align with a scoring"])
def test_max_distance_must_be_a_whole_number_of_at_least_zero(call, max_distance, error):
    fn, _, _ = CALLS[call]
    with pytest.raises(error, match=r"^max_distance must be None or an int >= 0"):
        fn(GOOD, GOOD, max_distance=max_distance)


@pytest.mark.parametrize("backend", ["tpu", None, 3])
@pytest.mark.parametrize("call", ["align", "edit_distance", "cdist"])
def test_an_unknown_backend_is_named(call, backend):
    fn = {"align": readalign.align, "edit_distance": readalign.edit_distance,
          "cdist": readalign.cdist}[call]
    with pytest.raises(ValueError, match=rf"^backend must be one of auto, cpu, cuda; got {backend!r}"):
        fn(GOOD, GOOD, backend=backend)


@pytest.mark.parametrize("call", CALLS)
def test_iterables_are_read_into_lists(call):
    fn, _, _ = CALLS[call]
    want = fn(GOOD, GOOD[::-1])
    got = fn((s for s in GOOD), iter(GOOD[::-1]))
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
    else:
        assert got.distance.tolist() == want.distance.tolist() and got.cigars() == want.cigars()


def test_edit_distances_from_any_container_match_the_oracle():
    a, b = ["kitten", "flaw", ""], ["sitting", "lawn", "abc"]
    want = [dp_distance(x, y, infix=False)[0] for x, y in zip(a, b)]
    for left, right in ((a, b), (tuple(a), tuple(b)), (np.array(a), np.array(b)),
                        (np.array(a, dtype=object), iter(b))):
        assert readalign.edit_distance(left, right, backend="cpu", threads=1).tolist() == want


@given(words=st.lists(st.text(alphabet="ACGT", max_size=6), min_size=1, max_size=8),
       data=st.data())
def test_any_bad_element_is_named_by_its_first_index(words, data):
    call = data.draw(st.sampled_from(sorted(CALLS)))
    fn, names, _ = CALLS[call]
    side = data.draw(st.integers(0, 1))
    bad_at = sorted(data.draw(st.sets(st.integers(0, len(words) - 1), min_size=1)))
    bad = data.draw(st.sampled_from([None, 7, b"AC", 1.0]))
    args = [list(words), list(words)]
    for i in bad_at:
        args[side][i] = bad
    first = bad_at[0]
    if first == 0 and isinstance(bad, bytes):  # a bytes list then: element 1 on is the odd one
        others = [i for i in range(len(words)) if i not in bad_at]
        if not others:
            return
        args[1 - side] = [w.encode() for w in words]
        first = others[0]
    with pytest.raises(TypeError, match=rf"^{names[side]}\[{first}\]: expected "):
        fn(*args)
