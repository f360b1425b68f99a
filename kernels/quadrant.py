"""Quadrant-boundary Needleman–Wunsch (Farivar et al.), written once for CPU and GPU.

The per-pair algorithm is a set of plain functions built by :func:`build`, which
takes the decorator that compiles a device-level function (``numba.njit`` for
the CPU, ``numba.cuda.jit(device=True)`` for the GPU), the warp-vote helper and
the quadrant size ``K`` (a compile-time constant, so the K cells of a strip can
live in registers on the GPU).

Conventions (DESIGN.md):

* rows ``i = 0..m`` index the read (query), columns ``j = 0..n`` the window;
* ``D[i][j]`` is the unit-cost edit distance of ``q[:i]`` against ``t[:j]``
  (global) or against any substring of ``t`` ending at ``j`` (infix:
  ``D[0][j] = 0``);
* a symbol equal to ``n_code`` never matches (DNA ``N``); text passes ``-1``;
* traceback prefers diagonal, then insertion (up), then deletion (left),
  which left-aligns indels; the infix end column is the leftmost minimum.

Every array argument is addressed as ``buf[base + e * stride]`` so the same
source serves a thread-private CPU scratch (``base=0, stride=1``) and the
GPU's interleaved global layout (``base=lane, stride=batch``). The per-pair functions
take such runs bundled into tuples:

* a sequence ``(buf, base, stride, length)``: the read ``(q, qb, qs, m)``, the window
  ``(t, tb, ts, n)``;
* the working row ``(buf, base, stride)`` (the scored kernels: ``(H, F, base, stride)``);
* the boundaries ``(arrays, base, stride, rlen, clen)``: ``arrays`` is ``(rows, cols)``
  here, ``(rbH, rbF, cbH, cbE)`` in the scored kernels; element ``e`` of the top row of strip
  ``s`` is ``rows[base + (s * rlen + e) * stride]``, element ``i`` of quadrant column ``b``
  is ``cols[base + (b * clen + i) * stride]``;
* a CIGAR output ``(buf, base, stride)``.

CIGAR operations use BAM codes ``M=0, I=1, D=2, ==7, X=8``. Runs are produced
end to start, run-length encoded on the fly, and reversed in place at the
end, so the output slot needs at most ``2 * distance + 1`` entries.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import strips
from .disk_cache import named_for

FAST_PATH_MAX = 1024
"""Longest read or window of the fast path. The GPU kernels size their row buffer and int16
boundaries from it; the engine sends longer pairs to the CPU's long path. One constant, so
the two cannot disagree (a longer pair on the GPU would overrun a device array)."""

OP_M = 0
OP_I = 1
OP_D = 2
OP_EQ = 7
MV_DIR = 3
"""A traceback move byte (``quadrant_moves``), low two bits: 0 = diagonal, then"""
MV_UP = 1
"""up (an insertion),"""
MV_LEFT = 2
"""or left (a deletion), by the tie rule."""
MV_MISMATCH = 4
"""Edit kernel's move byte: the diagonal move costs 1 (``X`` rather than ``=``)."""


def tile_size(k: int) -> int:
    """int32 entries of the traceback's scratch row: the row above and the window codes."""
    return 2 * (k + 1)


def boundary_row_size(m: int, n: int, k: int) -> int:
    """Elements that hold the top row of every strip of ``k`` read rows.

    At least one strip, as :func:`boundary_col_size` has at least one column: a lane
    whose read is empty still reads its first row while live lanes of its warp trace.
    """
    return max((m + k - 1) // k, 1) * (n + 1)


def boundary_col_size(m: int, n: int, k: int) -> int:
    """Elements that hold the left column (rows 0..m) of every quadrant column."""
    return max((n + k - 1) // k, 1) * (m + 1)


def emit_run(out, nout, cur_op, cur_len, op, count):
    """Append ``count`` copies of ``op`` to a run-length-encoded CIGAR being written backwards
    to ``out`` (``(buf, base, stride)``).

    Returns the new ``(runs written, current op, its length)``.
    """
    if count > 0:
        if op == cur_op:
            cur_len += count
        else:
            if cur_len > 0:
                buf, ob, os = out
                buf[ob + nout * os] = (cur_len << 4) | cur_op
                nout += 1
            cur_op = op
            cur_len = count
    return nout, cur_op, cur_len


def close_runs(out, nout, cur_op, cur_len):
    """Write the last run and reverse the runs in place (a traceback emits end to start)."""
    buf, ob, os = out
    if cur_len > 0:
        buf[ob + nout * os] = (cur_len << 4) | cur_op
        nout += 1
    for x in range(nout // 2):
        y = nout - 1 - x
        tmp = buf[ob + x * os]
        buf[ob + x * os] = buf[ob + y * os]
        buf[ob + y * os] = tmp
    return nout


def pair_bounds(qoff, toff, p):
    """Pair ``p``'s read start and length, window start and length, from the offset arrays."""
    qb = qoff[p]
    tb = toff[p]
    return qb, qoff[p + 1] - qb, tb, toff[p + 1] - tb


def pair_spans(d, end_j, start, traced, infix):
    """The window span a pair reports: ``(ref_start, ref_end)``.

    The one rule for every backend and path: a failed pair (``d < 0``, past
    ``max_dist``) reports ``(-1, -1)`` and no CIGAR; without a traceback the
    start is known only in global mode (0), so infix reports -1.
    """
    if d < 0:
        return -1, -1
    if traced:
        return start, end_j
    return (-1 if infix else 0), end_j


def first_min(value, best):
    """The end-cell tie rule of the forward passes where the least value wins (distances):
    ``value`` takes the best's place only when strictly less, so among equal cells the first
    one scanned stays (the leftmost column; in local mode, rows top down, the smallest read
    end). :func:`first_max`, :func:`column_key` and :func:`key_column` state the same rule for
    scores and for best-cell keys: together they are every place the forward passes apply it."""
    return value < best


def first_max(value, best):
    """:func:`first_min` where the greatest value wins (scores)."""
    return value > best


def column_key(j, last):
    """Column ``j``'s part of a best-cell key (``H * (last + 1)`` plus this; ``last``: the
    key's last column), so that the key's maximum is the first column of the best H, as
    :func:`first_max` keeps it."""
    return last - j


def key_column(key, last):
    """The column of a best-cell key (:func:`column_key`)."""
    return last - (key & last)


def tie_move(v, diag, up):
    """The tie rule of every traceback: the move into a cell of value ``v``, given the value
    its diagonal move brings (``diag``) and the value its move from above (an insertion)
    brings (``up``): the diagonal wins, then the insertion, else the deletion (:data:`MV_UP`,
    :data:`MV_LEFT`, else 0), which left-aligns indels."""
    if v == diag:
        return 0
    if v == up:
        return MV_UP
    return MV_LEFT


def build(device_jit, vote_all, K: int) -> SimpleNamespace:
    """Compile the per-pair functions for quadrant size ``K``.

    ``device_jit`` compiles a callable for the target; ``vote_all(done)`` is
    True when every active lane of the warp is done (on the CPU: ``done``).
    Returns a namespace of the per-pair functions (``forward``, ``traceback``
    and their helpers). The functions
    whose code depends on ``K`` are named for it (``forward_k16``), so that
    kernels of different quadrant sizes loaded from the disk cache never
    share a symbol. The strip sweep, the boundary stores and the walk are
    :mod:`.strips`', over this kernel's cells: a distance each, the working row and
    the strip's column ``(strip, qk)`` of int32.
    """
    def device_fn(fn):
        return device_jit(named_for(fn, f"k{K}"))

    KK = K + 1
    BIG = 1 << 30
    tie = device_jit(tie_move)
    ahead = device_jit(first_min)

    @device_fn
    def cost(a, b, n_code):
        """1 for a mismatch or an N on the read side, else 0."""
        return np.int32((a != b) | (a == n_code))

    @device_fn
    def load(row, j):
        line, rowb, rows = row
        return np.int32(line[np.uint64(rowb + j * rows)])

    @device_fn
    def put(row, j, v):
        line, rowb, rows = row
        line[rowb + j * rows] = v

    @device_fn
    def corner(v):
        return v

    @device_fn
    def keep_row(arrays, x, v):
        arrays[0][x] = v

    @device_fn
    def keep_col(arrays, x, v):
        arrays[1][x] = v

    @device_fn
    def left_of(strip, r):
        return strip[0][r]

    @device_fn
    def first_column(ctx, i):
        return i

    def make_column(partial: bool):
        """The K cells of a strip's column j (``strip`` is ``(cells, qk)``); ``partial`` (a
        compile-time constant): the last strip of a read whose length is not a multiple of
        K, whose bottom row is row ``h-1`` of the strip rather than its last. Returns the
        bottom row's cell twice (the working row's and the tracked value)."""
        def column(strip, ctx, pd, top, tj, j, h):
            cells, qk = strip
            above = top
            bottom = top
            for r in range(K):
                left = cells[r]
                v = min(np.int32(pd + np.int32(qk[r] != tj)), np.int32(min(above, left) + 1))
                pd = left
                cells[r] = v
                above = v
                if partial and r == h - 1:
                    bottom = v
            if not partial:
                bottom = above
            return bottom, bottom

        return device_jit(named_for(column, f"k{K}_{'partial' if partial else 'full'}"))

    @device_fn
    def track(tracked, bottom, j):
        """The bottom row's minimum and its leftmost minimum, column by column."""
        rowmin, best, best_j = tracked
        rowmin = min(rowmin, bottom)
        if ahead(bottom, best):
            best = bottom
            best_j = j
        return rowmin, best, best_j

    @device_fn
    def quadrant_moves(read, window, ctx, a, b, bounds, tile, moves):
        """Recompute quadrant (a, b) from its stored top row and left column; keep moves only.

        Row by row in int32, the row above in ``tile`` (:func:`tile_size`: K+1 cells,
        then the quadrant's window codes, read once per quadrant); each of the
        K x K cells gets one byte in ``moves[(r-1)*K + c-1]``: the move by the tie
        rule (:func:`tie_move`) and :data:`MV_MISMATCH`. ``ctx`` is ``(n_code, eqx)``.
        Row r+1's left cell and read code are loaded while row r is computed. Cells
        past a partial quadrant's edge hold values from clamped inputs, and codes past
        a sequence's end (a done lane beside live ones still runs this) are N, never
        read; the trace never visits them.
        """
        q, qb, qs, m = read
        t, tb, ts, n = window
        (rbuf, cbuf), base, stride, rlen, clen = bounds
        r0 = a * K
        c0 = b * K
        hr = min(K, m - r0)
        wc = min(K, n - c0)
        nc = np.int32(ctx[0])
        for c in range(KK):
            tile[c] = rbuf[np.uint64(base + (a * rlen + c0 + min(c, wc)) * stride)]
        for c in range(1, KK):
            jj = c0 + c - 1
            tile[KK + c] = np.int32(t[np.uint64(tb + jj * ts)]) if jj < n else nc
        col = np.uint64(base + (b * clen + r0) * stride)
        nextLeft = np.int32(cbuf[col + np.uint64(min(1, hr) * stride)])
        nextQ = np.int32(q[np.uint64(qb + r0 * qs)]) if r0 < m else nc
        for r in range(1, KK):
            left = nextLeft
            qi = nextQ
            nextLeft = np.int32(cbuf[col + np.uint64(min(r + 1, hr) * stride)])  # a row early
            ii = r0 + r
            nextQ = np.int32(q[np.uint64(qb + ii * qs)]) if ii < m else nc
            diag = tile[0]
            tile[0] = left
            for c in range(1, KK):
                tj = tile[KK + c]
                cst = cost(qi, tj, nc)
                above = tile[c]
                sub = np.int32(diag + cst)
                v = min(sub, np.int32(min(above, left) + 1))
                mv = tie(v, sub, np.int32(above + 1))
                moves[np.uint32((r - 1) * K + c - 1)] = mv | (MV_MISMATCH if cst else 0)
                diag = above
                tile[c] = v
                left = v

    @device_fn
    def halt(state, mv, ctx, qdone, li, lj):
        return state

    @device_fn
    def halted(state):
        return False

    @device_fn
    def move(state, mv, ctx, live):
        """A move byte as the trace takes it: ``(op, up, left, state)``."""
        c = np.int32((mv & MV_MISMATCH) != 0)
        isdiag = (mv & MV_DIR) == 0
        isup = (mv & MV_DIR) == MV_UP
        isleft = (mv & MV_DIR) == MV_LEFT
        op = OP_I if isup else (OP_D if isleft else (OP_EQ + c if ctx[1] else OP_M))
        return op, isdiag | isup, isdiag | isleft, state

    emit = device_jit(emit_run)
    close = device_jit(close_runs)
    cells = SimpleNamespace(load=load, store=put, corner=corner, keep_row=keep_row,
                            keep_col=keep_col, left=left_of, first_column=first_column,
                            recompute=quadrant_moves, halt=halt, halted=halted, move=move,
                            emit=emit)
    shared = strips.build(device_jit, vote_all, K, cells, f"k{K}")
    sweep_full = shared.sweep(make_column(False), track, "full")
    sweep_partial = shared.sweep(make_column(True), track, "partial")
    keep_first_column = shared.keep_first_column
    keep_empty_read = shared.keep_empty_read
    walk = shared.walk

    @device_fn
    def forward(read, window, infix, max_dist, n_code, store, row, bounds, strip, qk):
        """Fill the matrix in strips of K rows, keeping only quadrant boundaries.

        ``row`` holds one matrix row (n+1 cells); ``strip`` the K cells of the
        current column of a strip; ``qk`` (int32) the strip's K read codes, -1 for
        ``n_code`` so that a plain compare is the cost. Cell arithmetic is int32
        (numba would widen it to int64) and hot indices are unsigned. The top
        row of strip ``s`` goes to the boundaries' rows and column ``j = b*K``
        to their columns (module docstring; ``rlen`` >= n+1, ``clen`` >= m+1: on the GPU
        the batch's longest window and read plus one, so that a warp's lanes store to the
        same offsets whatever their lengths). Returns ``(distance, end_column)``; the
        distance is -1 when some row's minimum exceeds ``max_dist``. With
        ``store`` false no boundary is kept (distance only).
        """
        q, qb, qs, m = read
        n = window[3]
        line, rowb, rows = row
        for j in range(n + 1):
            line[rowb + j * rows] = 0 if infix else j
        if store:
            keep_first_column(bounds, m, 0)
        if m == 0:
            if store:
                keep_empty_read(bounds, row, n)
            d0 = 0 if infix else n
            if max_dist >= 0 and d0 > max_dist:
                return np.int32(-1), 0
            return np.int32(d0), 0 if infix else n
        nstrips = (m + K - 1) // K
        best = BIG
        best_j = 0
        abandoned = False
        for s in range(nstrips):
            i0 = s * K
            h = min(K, m - i0)
            for r in range(K):
                strip[r] = i0 + r + 1
                code = np.int32(q[qb + min(i0 + r, m - 1) * qs])
                qk[r] = np.int32(-1) if code == n_code else code
            tracked = (np.int32(i0 + h), np.int32(i0 + h), 0)
            if h == K:
                rowmin, best, best_j = sweep_full(window, s, h, store, row, bounds, (strip, qk),
                                                  0, i0 + h, tracked)
            else:
                rowmin, best, best_j = sweep_partial(window, s, h, store, row, bounds,
                                                     (strip, qk), 0, i0 + h, tracked)
            if max_dist >= 0 and rowmin > max_dist:
                abandoned = True
            if vote_all(abandoned):
                break
        if abandoned:
            return np.int32(-1), 0
        if not infix:
            best = line[rowb + n * rows]
            best_j = n
        if max_dist >= 0 and best > max_dist:
            return np.int32(-1), 0
        return np.int32(best), best_j

    spans = device_jit(pair_spans)

    @device_fn
    def traceback(read, window, infix, n_code, eqx, end_j, bounds, tile, moves, out):
        """Trace from (m, end_j) back through the quadrants (:mod:`.strips`' walk); write the
        CIGAR to ``out``. Returns ``(ref_start, n_ops)``.
        """
        m = read[3]
        n = window[3]
        nquads = (m + K - 1) // K + (n + K - 1) // K
        i, j, _state, runs = walk(read, window, (n_code, eqx), bounds, (tile, moves), out,
                                  (m, end_j), (0, False, 0), (0, -1, 0), nquads)
        nout, cur_op, cur_len = runs
        if i > 0:
            nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_I, i)
        if not infix:
            nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_D, j)
        return (j if infix else 0), close(out, nout, cur_op, cur_len)

    return SimpleNamespace(K=K, cost=cost, forward=forward, spans=spans, emit=emit,
                           quadrant_moves=quadrant_moves, traceback=traceback,
                           row_size=device_jit(boundary_row_size),
                           col_size=device_jit(boundary_col_size))
