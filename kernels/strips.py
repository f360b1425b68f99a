"""The quadrant-boundary method's sweep, boundary stores and walk, written once.

The edit kernel (:mod:`.quadrant`) and the scored kernel (:mod:`.scored_quadrant`) fill the
matrix in strips of ``K`` read rows, keep the top row of every strip and every K-th column
(the boundaries, laid out as :mod:`.quadrant` describes), and trace back quadrant by
quadrant. What differs between them is a cell: one distance there, H, E and F here. The
functions here are the shared part, built from a kernel's *cells*, a namespace of small
device functions the compiler inlines:

* ``load(row, j)`` and ``store(row, j, state)``: column ``j``'s state in the working row (a
  distance; H and F);
* ``corner(state)``: what a cell of the row above hands the cell diagonally below it;
* ``keep_row(arrays, x, state)`` and ``keep_col(arrays, x, state)``: one element of a strip's
  top row, or of a quadrant column, into the boundaries' ``arrays`` (the edit kernel keeps two
  arrays, the scored kernel four);
* ``left(strip, r)``: the state of read row ``r`` of the strip's current column;
* ``first_column(ctx, i)``: column 0's state at read row ``i``;
* ``recompute(read, window, ctx, a, b, bounds, tile, moves)``: quadrant ``(a, b)``'s move bytes;
* ``halt(state, mv, ctx, qdone, li, lj)`` and ``halted(state)``: a trace that stops before a
  quadrant edge (local mode); ``move(state, mv, ctx, live)``: a move byte read as ``(op, up,
  left, state)``, ``up``/``left`` whether the move leaves the row/the column (``live``: the
  lane is not done); ``state`` is three values (the scored trace's H/E/F state, whether it
  stopped, its NM; the edit trace keeps none of its own);
* ``emit``: :func:`.quadrant.emit_run`, compiled.

A sweep also takes, per variant (a compile-time choice), ``column(strip, ctx, diag, top, tj,
j, h)``, the strip's K cells of column ``j`` (the cell update), which returns the state its
bottom row leaves in the working row and the value the sweep tracks, and ``track(tracked,
value, j)``, what the sweep keeps of each column in three values (a row minimum, a best
cell).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .disk_cache import named_for


def column_keeper(device_jit, rows: int, left, keep_col, tag: str):
    """``keep_column(arrays, strip, cb, step, h)``: the first ``h`` of the strip's ``rows`` read
    rows of its current column (``left``) into a quadrant column of the boundaries, from
    element ``cb`` on, ``step`` apart (``keep_col``)."""
    def keep_column(arrays, strip, cb, step, h):
        x = np.uint64(cb)
        for r in range(rows):
            if r < h:
                keep_col(arrays, x, left(strip, r))
            x += np.uint64(step)

    return device_jit(named_for(keep_column, tag))


def build(device_jit, vote_all, K: int, cells, tag: str) -> SimpleNamespace:
    """The shared functions over ``cells`` (module docstring) for quadrant size ``K``, named for
    ``tag``: ``sweep(column, track, name)`` makes a strip sweep, ``keep_first_column``,
    ``keep_empty_read`` and ``keep_column`` store boundaries, ``walk`` traces."""
    STEPS = 2 * K - 1
    load, store, corner = cells.load, cells.store, cells.corner
    keep_row, keep_col, first_column = cells.keep_row, cells.keep_col, cells.first_column
    keep_column = column_keeper(device_jit, K, cells.left, keep_col, tag)

    def sweep(column, track, name: str):
        """The pass of one strip ``s`` (its first ``h`` read rows real) over every window
        column; ``column`` and ``track`` as the module docstring says. The working row's
        column 0 becomes ``edge``; with ``keep`` the strip's top row goes to the boundaries as
        the sweep reads it (no second pass over the row) and every K-th column too. The row
        above and the window letter of column j+1 are loaded while column j is computed (on
        the GPU the row is thread-local memory: the wait for it was most of the kernel's
        stalls). Hot indices are unsigned, so numba adds no negative-index wraparound to
        them. Returns what ``track`` kept, from ``tracked`` on."""
        def strip_sweep(window, s, h, keep, row, bounds, strip, ctx, edge, tracked):
            t, tb, ts, n = window
            arrays, base, stride, rlen, clen = bounds
            rbj = np.uint64(base + s * rlen * stride)
            i0 = s * K
            first = load(row, 0)
            diag = corner(first)
            if keep:
                keep_row(arrays, rbj, first)
            store(row, 0, edge)
            kept0, kept1, kept2 = tracked  # a tuple carried through the loop took more registers
            nextTop = load(row, min(1, n))
            nextT = np.int32(t[np.uint64(tb)]) if n > 0 else np.int32(0)
            for j in range(1, n + 1):
                tj = nextT
                top = nextTop
                ahead = min(j + 1, n)  # the next column's loads, issued a column early
                nextTop = load(row, ahead)
                nextT = np.int32(t[np.uint64(tb + (ahead - 1) * ts)])
                if keep:
                    rbj += np.uint64(stride)
                    keep_row(arrays, rbj, top)
                pd = diag
                diag = corner(top)
                bottom, value = column(strip, ctx, pd, top, tj, j, h)
                store(row, j, bottom)
                kept0, kept1, kept2 = track((kept0, kept1, kept2), value, j)
                if keep and j % K == 0 and j < n:
                    keep_column(arrays, strip, base + ((j // K) * clen + i0 + 1) * stride, stride,
                                h)
            return kept0, kept1, kept2

        return device_jit(named_for(strip_sweep, f"{tag}_{name}"))

    def keep_first_column(bounds, m, ctx):
        """Column 0 of the boundaries, read rows ``0..m`` (``first_column``)."""
        arrays, base, stride, _rlen, _clen = bounds
        for i in range(m + 1):
            keep_col(arrays, base + i * stride, first_column(ctx, i))

    def keep_empty_read(bounds, row, n):
        """An empty read's boundaries: its lane, stuck while its warp traces, reads row 0 of
        strip 0 and of each quadrant column, so they are kept defined (the working row's)."""
        arrays, base, stride, _rlen, clen = bounds
        for j in range(n + 1):
            top = load(row, j)
            keep_row(arrays, base + j * stride, top)
            if j % K == 0 and (j < n or j == 0):
                keep_col(arrays, base + (j // K) * clen * stride, top)

    recompute, halt, halted, move, emit = (cells.recompute, cells.halt, cells.halted, cells.move,
                                           cells.emit)

    def walk(read, window, ctx, bounds, scratch, out, start, state, runs, nquads):
        """Trace from cell ``start`` back through at most ``nquads`` quadrants.

        Each quadrant is recomputed into its K x K move bytes (``recompute``) and walked in
        at most 2K-1 steps, one cell each; a lane that is done (at the quadrant's top or
        left edge, or halted) is stuck and its moves are no-ops until the warp vote ends the
        loop. ``state`` is the kernel's trace state (``move``, ``halt``), ``runs`` the CIGAR
        runs written so far to ``out`` (``(count, current op, its length)``). Returns the cell
        reached, the state and the runs."""
        tile, moves = scratch
        i, j = start
        nout, cur_op, cur_len = runs
        st0, st1, st2 = state  # a tuple carried through the loops took more registers
        for _ in range(nquads):
            qdone = (i == 0) | (j == 0) | halted((st0, st1, st2))
            if vote_all(qdone):
                break
            a = (max(i, 1) - 1) // K
            b = (max(j, 1) - 1) // K
            recompute(read, window, ctx, a, b, bounds, tile, moves)
            r0 = a * K
            c0 = b * K
            li = i - r0
            lj = j - c0
            for _step in range(STEPS):
                mv = moves[np.uint32((max(li, 1) - 1) * K + max(lj, 1) - 1)]
                st0, st1, st2 = halt((st0, st1, st2), mv, ctx, qdone, li, lj)
                done = qdone | halted((st0, st1, st2)) | (li == 0) | (lj == 0)
                if vote_all(done):
                    break
                live = not done
                op, up, left, after = move((st0, st1, st2), mv, ctx, live)
                st0, st1, st2 = after
                nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, op, np.int32(live))
                li -= np.int32(up & live)
                lj -= np.int32(left & live)
            i = r0 + li
            j = c0 + lj
        return i, j, (st0, st1, st2), (nout, cur_op, cur_len)

    return SimpleNamespace(sweep=sweep, keep_column=keep_column,
                           keep_first_column=device_jit(named_for(keep_first_column, tag)),
                           keep_empty_read=device_jit(named_for(keep_empty_read, tag)),
                           walk=device_jit(named_for(walk, tag)))
