"""The packed local pass: two pairs per thread in 16-bit halves (kernels/scored_packed.py).

The GPU runs it on DNA batches that :func:`packs` admits. Here the same source runs on the
CPU with the plain-arithmetic lane operations: the lane operations against int16
arithmetic, the pass's boundaries against the 32-bit pass's, and whole alignments (scores,
spans, CIGARs traced from the shared boundaries) against the CPU backend, with lanes that
never leave a loop and bounds checks on, for neighbours of equal and of different shapes.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import HAS_GPU
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda, njit
from readalign.kernels import cpu as kernels_cpu
from readalign.kernels import lanes16, scored_packed, scored_quadrant
from readalign.kernels.scored_quadrant import GLOBAL, LOCAL, NEG, NEG16
from test_stuck_lanes import assert_same

import readalign
from benchmarks.ablation.scored_packed_cpu import scored_packed_chunk_source

OPS = lanes16.signed_ops(njit(cache=False))
_add2, _max2, _relu3, _umax2 = OPS.add2, OPS.max2, OPS.relu3, OPS.umax2


@njit(cache=False)
def _apply(a, b, c, out):
    for x in range(a.shape[0]):
        out[0, x] = _add2(a[x], b[x])
        out[1, x] = _max2(a[x], b[x])
        out[2, x] = _relu3(a[x], b[x], c[x])
        out[3, x] = _umax2(a[x], b[x])


words = st.lists(st.integers(0, 2**32 - 1), min_size=3, max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=20))
def test_lane_operations_are_int16_arithmetic_per_half(rows):
    a, b, c = (np.array(col, np.uint32) for col in zip(*rows))
    out = np.empty((4, a.shape[0]), np.uint32)
    _apply(a, b, c, out)
    sa, sb, sc = (x.view(np.int16).astype(np.int64) for x in (a, b, c))
    want = (((sa + sb + 2**15) % 2**16) - 2**15, np.maximum(sa, sb),
            np.maximum(np.maximum(sa, sb), np.maximum(sc, 0)))
    for got, expect in zip(out[:3], want, strict=True):
        assert np.array_equal(got.view(np.int16), expect)
    assert np.array_equal(out[3].view(np.uint16), np.maximum(a.view(np.uint16), b.view(np.uint16)))


_ROW = scored_packed.build(njit(cache=False), OPS, 4)
_row_store, _row_load = _ROW.row_store, _ROW.row_load


@njit(cache=False)
def _row_trip(h, f, cap, words, back):
    """The sweep's row word of each H and F, and the H and F read back from it."""
    for x in range(h.shape[0]):
        words[x] = _row_store(np.uint32(h[x]), np.uint32(f[x]), cap)
        back[0, x], back[1, x] = _row_load(words[x])


def _row_words(h: np.ndarray, f: np.ndarray, go: int) -> np.ndarray:
    """The row words in numpy: both H, then both ``max(F - H, -(go + 1))``, a byte each."""
    d = np.maximum(f - h, -(go + 1))
    b = np.stack([h[..., 0], h[..., 1], d[..., 0], d[..., 1]], axis=-1) & 0xFF
    return (b[..., 0] | b[..., 1] << 8 | b[..., 2] << 16 | b[..., 3] << 24).astype(np.uint32)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(-16384, 255),
                          st.integers(-16384, 255)), min_size=1, max_size=20),
       st.integers(0, scored_packed.ROW_GAP_OPEN))
def test_row_words_keep_h_and_f_down_to_h_minus_go_minus_one(cells, go):
    """The working row's byte per value: H exactly; F, where not above H, exactly down to
    ``H - go - 1`` and as that below (F > H never happens: H is the maximum of F and more)."""
    hf = np.array(cells, np.int64)
    h, f = hf[:, :2], np.minimum(hf[:, 2:], hf[:, :2])
    words = np.empty(len(h), np.uint32)
    back = np.empty((2, len(h)), np.uint32)
    cap = lanes16.join_halves(-(go + 1), -(go + 1))
    _row_trip(h.astype(np.int16).view(np.uint32).ravel(), f.astype(np.int16).view(np.uint32)
              .ravel(), cap, words, back)
    assert np.array_equal(words, _row_words(h, f, go))
    assert np.array_equal(back[0].view(np.int16).reshape(-1, 2), h)
    assert np.array_equal(back[1].view(np.int16).reshape(-1, 2), np.maximum(f, h - go - 1))


def _signed_lane_kernel(ops):
    """A kernel applying every signed lane operation of ``ops`` to word triple ``i``."""
    add2, max2, relu3, umax2 = ops.add2, ops.max2, ops.relu3, ops.umax2
    row_word, row_h, row_d = ops.row_word, ops.row_h, ops.row_d

    @cuda.jit
    def apply(a, b, c, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[0, i] = add2(a[i], b[i])
            out[1, i] = max2(a[i], b[i])
            out[2, i] = relu3(a[i], b[i], c[i])
            out[3, i] = umax2(a[i], b[i])
            out[4, i] = row_word(a[i], b[i])
            out[5, i] = row_h(c[i])
            out[6, i] = row_d(c[i])
    return apply


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_hopper_signed_lane_operations_equal_the_plain_ones():
    """``add.s16x2``, ``max.s16x2``, ``max.relu.s16x2``, ``max.u16x2`` and the row words'
    ``prmt`` against the plain-arithmetic operations, on a million random word triples (a
    fifth of the halves at int16's and int8's edges)."""
    rng = np.random.default_rng(11)
    count = 1_000_000
    edges = np.array([0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF], np.uint32)
    words = rng.integers(0, 2**32, (3, count), dtype=np.uint64).astype(np.uint32)
    corner = rng.random((3, count)) < 0.2
    words[corner] = (edges[rng.integers(0, 8, corner.sum())]
                     | edges[rng.integers(0, 8, corner.sum())] << 16)
    outs = []
    for ops in (lanes16.signed_dpx_ops(), lanes16.signed_ops(cuda.jit(device=True))):
        out = cuda.device_array((7, count), np.uint32)
        _signed_lane_kernel(ops)[(count + 255) // 256, 256](*(cuda.to_device(w) for w in words),
                                                           out)
        outs.append(out.copy_to_host())
    assert np.array_equal(outs[0], outs[1])


def test_pair_table_holds_both_pairs_scores():
    scoring = readalign.Scoring(2, 3, 5, 1)
    sub, a = scoring.flat(), len(scoring.alphabet)
    table = scored_packed.pair_table(sub, a).view(np.int16).reshape(a, a, a + 1, a + 1, 2)
    s = sub.reshape(a, a)
    for qa, qb, ta, tb in np.ndindex(a, a, a + 1, a + 1):
        low, high = table[qa, qb, ta, tb]
        assert low == (s[qa, ta] if ta < a else scored_packed.PAD)
        assert high == (s[qb, tb] if tb < a else scored_packed.PAD)


@pytest.mark.parametrize(("args", "expect"), [
    ((LOCAL, 5, 1, -4, 6, 1, 0, 150, 170), True),     # the benchmark's pairs
    ((LOCAL, 5, 1, -4, 6, 1, 5, 150, 250), True),     # 150 + 2 * 0 + 5 clip
    ((LOCAL, 5, 1, -4, 6, 1, 0, 255, 255), True),     # H up to 255: the key's last value
    ((LOCAL, 5, 1, -4, 6, 1, 1, 255, 255), False),    # ... one more
    ((LOCAL, 5, 1, -4, 6, 1, 0, 100, 256), False),    # a column the key cannot tell
    ((LOCAL, 5, 2, -3, 0, 2, 0, 127, 200), True),
    ((LOCAL, 5, 2, -3, 0, 2, 0, 128, 200), False),
    ((GLOBAL, 5, 1, -4, 6, 1, 0, 150, 170), False),
    ((LOCAL, 24, 11, -4, 10, 1, 0, 20, 20), False),   # protein
    ((LOCAL, 5, 1, -16000, 6, 1, 0, 150, 170), False),
    ((LOCAL, 5, 1, -4, 15000, 500, 0, 150, 170), False),
    ((LOCAL, 5, 1, -4, 127, 1, 0, 150, 170), True),   # the working row's F byte: go + 1 <= 128
    ((LOCAL, 5, 1, -4, 128, 1, 0, 150, 170), False),
])
def test_packs_admits_what_fits_16_bits(args, expect):
    assert scored_packed.packs(*args) is expect


def _packed(**build):
    @cache
    def kernel(K: int):
        """The packed chunk kernel with lanes that never leave a loop and bounds checks."""
        checked = njit(boundscheck=True, cache=False)
        source = scored_packed_chunk_source(K, checked, kernels_cpu.vote_never)
        return njit(boundscheck=True, nogil=True, cache=False)(source)
    return kernel


PACKED = {"scored_chunk_kernel": _packed()}
SCORINGS = (readalign.Scoring(1, 4, 6, 1), readalign.Scoring(2, 3, 0, 2),
            readalign.Scoring(1, 4, 6, 1, clip_penalty=5), readalign.Scoring(3, 1, 2, 3))


def aligned_packed(reads, windows, **args):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels_cpu, "scored_chunk_kernel", PACKED["scored_chunk_kernel"])
        return readalign.align(reads, windows, backend="cpu", mode="local", **args)


def assert_packed_same(reads, windows, **args):
    """The packed chunk kernel's results equal the CPU backend's; returns the latter."""
    sc = args["scoring"]
    longest = (max(map(len, reads), default=0), max(map(len, windows), default=0))
    assert scored_packed.packs(LOCAL, len(sc.alphabet), int(sc.flat().max()),
                               int(sc.flat().min()), sc.gap_open, sc.gap_extend,
                               sc.clip_penalty, *longest), "these pairs would not take the pass"
    plain = readalign.align(reads, windows, backend="cpu", mode="local", **args)
    assert_same(aligned_packed(reads, windows, **args), plain)
    return plain


@pytest.mark.slow
def test_neighbours_of_different_shapes_and_empty_sides():
    """Pairs side by side with other read and window lengths, empty reads and windows, N, a
    repeat whose best cells tie, and a best cell just inside a longer neighbour's window
    (reads of at most 85 bases, so that every scoring here packs)."""
    reads = ["ACGTACGTTTGACCA" * 5, "ACGTTTGGA" * 9, "", "ACGT", "A" * 40, "ACGTNACGT",
             "TTTTACGTTTTT", "", "GATTACA", "NNNN"]
    windows = ["TTACGTACGTTTGACCAGG" * 4, "ACGTTTGGA" * 11, "ACGT", "", "C" * 10 + "A" * 30,
               "ACGTNACGTT", "ACGTACGT", "", "GATTAC" + "GATTACA" * 12, "NNNN"]
    for k in (4, 8, 16):
        for scoring in SCORINGS:
            assert_packed_same(reads, windows, scoring=scoring, k=k)


def test_gap_open_at_the_row_byte_limit():
    """Gap open 127: the working row's F byte holds ``-(go + 1) = -128``, int8's edge. (No gap
    can pay off then: a packed score is below 256, so either side of a gap scores at most 127.)"""
    left, right = "ACGTTGCAAGTCCATGGACT" * 2, "TTGACCGATAGGCTAACGTA" * 2
    reads = [left + right, left + right, "ACGT" * 10, "", left + "A" + right]
    windows = [left + "G" * 40 + right, left + right, "TTTT" + "ACGT" * 9, "ACGT", left + right]
    for scoring in (readalign.Scoring(1, 4, 127, 1), readalign.Scoring(3, 1, 127, 0)):
        assert_packed_same(reads, windows, scoring=scoring, k=8)


def test_scores_at_the_top_of_the_key():
    """Best scores of 250 and 255 (a clip bonus on top), the largest the 16-bit key holds."""
    reads = ["ACGT" * 62 + "AC", "ACGT" * 63 + "ACG", "GGT" + "ACGT" * 62]
    windows = ["T" + "ACGT" * 62 + "ACTT", "ACGT" * 63 + "ACG", "ACGT" * 63 + "ACG"]
    assert_packed_same(reads, windows, scoring=readalign.Scoring(1, 4, 6, 1), k=16)
    assert_packed_same(reads[:1], windows[:1],
                       scoring=readalign.Scoring(1, 4, 6, 1, clip_penalty=3), k=8)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), which=st.integers(0, len(SCORINGS) - 1), k=st.sampled_from([4, 8]),
       letters=st.sampled_from(["AC", "ACGTN"]))
def test_packed_pass_aligns_as_the_32_bit_pass(data, which, k, letters):
    text = st.text(alphabet=letters, max_size=60)
    pairs = data.draw(st.lists(st.tuples(text, text), min_size=1, max_size=12))
    reads, windows = [list(x) for x in zip(*pairs)]
    assert_packed_same(reads, windows, scoring=SCORINGS[which], k=k)


@cache
def _forwards(K: int, S: int):
    jit = njit(cache=False)
    return (scored_packed.build(jit, OPS, K, S).forward2,
            scored_quadrant.build(jit, kernels_cpu.vote_alone, K).forward)


def _boundaries(forward, q, t, K, sc):
    """The 32-bit pass's boundaries of one pair, in its own layout."""
    m, n = len(q), len(t)
    rows = np.empty(scored_quadrant.boundary_row_size(m, n, K), np.int32)
    cols = np.empty(scored_quadrant.boundary_col_size(m, n, K), np.int32)
    arrays = (rows.copy(), rows.copy(), cols.copy(), cols.copy())
    work = np.empty(5 * K, np.int32)
    scores = (LOCAL, sc.flat(), 5, sc.gap_open, sc.gap_extend, sc.clip_penalty)
    out = forward((q, 0, 1, m), (t, 0, 1, n), scores, True,
                  (np.empty(n + 1, np.int32), np.empty(n + 1, np.int32), 0, 1),
                  (arrays, 0, 1, n + 1, m + 1), work, NEG)
    return out, arrays


def _inf(x):
    """Minus infinity of either pass as one value."""
    return np.where(x <= scored_packed.NEG_P, NEG16, x)


def check_two_pairs(ra: str, wa: str, rb: str, wb: str, k: int, sc, strip: int = 0) -> None:
    """The packed pass on two pairs, in strips of ``strip`` read rows (default ``k``): each
    pair's score, end cell and every boundary value its traceback can read equal the 32-bit
    pass's (strips of ``k``) on that pair alone; F on a quadrant row's top as far as it
    counts, down to ``H - go - 1`` (the working row keeps no less)."""
    codes = [sc.codes[np.frombuffer(x.encode(), np.uint8)] for x in (ra, rb, wa, wb)]
    strip = strip or k
    forward2, forward = _forwards(k, strip)
    q = np.concatenate(codes[:2]).astype(np.uint8)
    t = np.concatenate(codes[2:]).astype(np.uint8)
    ma, mb, na, nb = (len(c) for c in codes)
    M, N = max(ma, mb), max(na, nb)
    rows = scored_quadrant.boundary_row_size(M, N, k)
    cols = scored_quadrant.boundary_col_size(M, N, k)
    words = [np.zeros(size, np.uint32) for size in (rows, rows, cols, cols)]
    scores = (LOCAL, scored_packed.pair_table(sc.flat(), 5), 5, sc.gap_open, sc.gap_extend,
              sc.clip_penalty)
    got = forward2((q, 0, ma, ma, mb), (t, 0, na, na, nb), scores, True,
                   np.empty(N + 1, np.uint32), (tuple(words), 0, 1, N + 1, M + 1),
                   np.empty(4 * strip, np.uint32))
    halves = [w.view(np.int16).reshape(-1, 2) for w in words]
    for lane, (rq, wt, m, n) in enumerate(((codes[0], codes[2], ma, na),
                                           (codes[1], codes[3], mb, nb))):
        want, (rbH, rbF, cbH, cbE) = _boundaries(forward, rq.astype(np.uint8),
                                                 wt.astype(np.uint8), k, sc)
        assert tuple(int(x) for x in got[3 * lane:3 * lane + 3]) == tuple(int(x) for x in want)
        for s in range(max((m + k - 1) // k, 1)):
            top = slice(s * (N + 1), s * (N + 1) + n + 1)
            theirs = slice(s * (n + 1), (s + 1) * (n + 1))
            assert np.array_equal(halves[0][top, lane], rbH[theirs]), ("rbH", s)
            floor = rbH[theirs].astype(np.int64) - sc.gap_open - 1
            assert np.array_equal(np.maximum(halves[1][top, lane], floor),
                                  np.maximum(rbF[theirs], floor)), ("rbF", s)
        for b in range(max((n + k - 1) // k, 1)):
            low = 0 if b == 0 or m == 0 else 1
            for name, mine, theirs in (("cbH", halves[2], cbH), ("cbE", halves[3], cbE)):
                assert np.array_equal(_inf(mine[b * (M + 1) + low:b * (M + 1) + m + 1, lane]),
                                      _inf(theirs[b * (m + 1) + low:(b + 1) * (m + 1)])), (name, b)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), k=st.sampled_from([4, 8]), which=st.integers(0, len(SCORINGS) - 1),
       quads=st.sampled_from([1, 2, 3, 4]))
def test_boundaries_equal_the_32_bit_pass_inside_each_matrix(data, k, which, quads):
    """Also for strips of 2-4 quadrant rows, which keep the inner quadrant rows' tops."""
    text = st.text(alphabet="ACGTN", max_size=50)
    (ra, wa), (rb, wb) = data.draw(st.tuples(st.tuples(text, text), st.tuples(text, text)))
    check_two_pairs(ra, wa, rb, wb, k, SCORINGS[which], k * quads)


def test_a_strip_height_that_is_not_whole_quadrant_rows_is_refused():
    with pytest.raises(ValueError, match="not a multiple"):
        scored_packed.build(njit(cache=False), OPS, 8, 12)


def test_columns_past_a_window_never_hold_the_best_cell():
    """An empty window beside a longer one, with a clip bonus above the gap cost: without the
    key's mask the cells past the empty window (row 0 holds the bonus there too) would win."""
    scoring = readalign.Scoring(1, 4, 1, 1, clip_penalty=20)
    check_two_pairs("ACGTACGT", "", "ACGTTT", "ACGTTTACG", 4, scoring)
    check_two_pairs("ACGTTT", "ACGTTTACG", "ACGTACGT", "", 4, scoring)


@pytest.mark.slow
def test_long_insertions_stay_one_gap_block():
    """Reads with several inserted bases, where the trace must extend the insertion in the F
    state rather than take each cell's best move: one ``I`` run each, on the 32-bit traceback
    and after the packed pass (a traceback that never extended insertions split these gaps)."""
    reads = ["AAGGCACGCTGTGACAGATTGTGATATTTCTCCATATGCACACGTGCCGTGGATACAAACTTCTTACCTATATTAGACGG",
             "CGTGCGCTCCGGCGAGTTCTTACAGTTGCTGCATGGTATCATTCCCAAGAACTTATAT",
             "CGCAAGGTGGAATTCCGCACCCGATGGACGGTTCCCAACAGGGGAAGTCAACGAAGTCGGACACTGAAGACCAAA"]
    windows = ["AAGGCACTGTCCGCTGTGACAGATTGTGATATTTCTCGCACGTGCCGTGGATACAAACTTCTTACCAATATTAGACGG",
               "CGTGCGCCCCGGCGAGTTCTTACAGTGGTATCATTCCCAAGAACTTATAT",
               "CGCAAGGTGGACCGCACCCGATGGACGGTTCCCAACAGGGGAAGTCAACGAAGTCGGACACTGAAGACCAAA"]
    plain = assert_packed_same(reads, windows, scoring=readalign.Scoring(1, 4, 6, 1), k=8)
    assert [plain.cigar(i) for i in range(3)] == ["6S25M7I42M", "25M8I25M", "11M3I61M"]
