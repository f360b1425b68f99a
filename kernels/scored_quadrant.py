"""Scored quadrant-boundary alignment: affine gaps, substitution matrices, global/infix/local.

The quadrant-boundary method of :mod:`.quadrant` (Farivar et al.) extended to
Gotoh's three matrices, written once for CPU and GPU in the same style: plain
per-pair functions built by :func:`build` with the target's decorator, every
array addressed as ``buf[base + e * stride]``.

Conventions:

* rows ``i = 0..m`` index the read (query), columns ``j = 0..n`` the window;
  scores are maximised; ``sub[a * A + b]`` scores read code ``a`` against
  window code ``b``; a gap of length L costs ``go + L * ge``;
* ``H`` is the best score of a cell, ``E`` the best ending in a deletion
  (a gap in the read, a move along the window, CIGAR ``D``) and ``F`` the best
  ending in an insertion (a move along the read, CIGAR ``I``);
* modes: :data:`GLOBAL` (both sequences end to end), :data:`INFIX` (the read end
  to end, free leading and trailing window bases), :data:`LOCAL`
  (Smith–Waterman: ``H`` floored at 0, the best cell anywhere); the per-pair functions take
  them as one tuple, ``scoring = (mode, sub, A, go, ge, clip)`` (``clip``: local mode's clip
  penalty), and the sequences, rows and boundaries bundled as :mod:`.quadrant` describes;
* the forward pass keeps ``H`` and ``F`` on the top row of every strip of K
  read rows and ``H`` and ``E`` on the left column of every quadrant column
  (each array sized as :mod:`.quadrant`'s one boundary array);
  the traceback recomputes one (K+1)x(K+1) quadrant at a time, all three
  matrices, keeps one move byte per cell, and walks it in at most 2K-1 steps,
  one cell per step;
* **tie rule**: in state H the diagonal wins, then F (insertion), then E
  (deletion), as in the edit-distance kernel (indels left-aligned); in state
  E or F extending the gap wins over opening it (one gap block, not pieces);
  the infix end is the leftmost best column of the last row; the local end is
  the best cell with the smallest read end, then the smallest window end
  (:func:`.quadrant.tie_move`, :func:`.quadrant.first_max`, :func:`.quadrant.column_key`); a
  local trace stops as soon as it stands in state H on a cell whose H is 0;
* local alignments report the read's unaligned ends as ``S`` runs, so the
  CIGAR covers the whole read; a pair with no positive score is the empty
  alignment (score 0, spans 0..0, CIGAR ``{m}S``);
* ``=`` in an ``eqx`` CIGAR means equal codes other than ``n_code`` (DNA's N
  never matches, N included).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import strips
from .disk_cache import named_for
from .quadrant import (
    FAST_PATH_MAX,
    MV_DIR,
    MV_UP,
    OP_D,
    OP_EQ,
    OP_I,
    OP_M,
    boundary_col_size,
    boundary_row_size,
    close_runs,
    column_key,
    emit_run,
    first_max,
    key_column,
    tie_move,
)

GLOBAL = 0
INFIX = 1
LOCAL = 2
MODE_NAMES = ("global", "infix", "local")
"""Each mode's name, at its code: the one list of the modes (the API checks a mode against it)."""
OP_S = 4
MAX_ALPHABET = 64
"""Most letters a scoring's alphabet may have (the GPU keeps the matrix in shared memory)."""
NEG = -(1 << 29)
"""Minus infinity for scores: far below any alignment, far above int32's end."""
NEG16 = -(1 << 15)
"""Minus infinity in int16 rows and boundaries (see :func:`fits_int16`)."""
INT16_SPAN = 32000
"""How far from 0 every value an int16 row or boundary holds must stay: clear of NEG16,
also after a gap penalty is taken from it."""
KEY_BITS = 11
KEY_COLUMNS = 1 << KEY_BITS
"""Columns a keyed local sweep can tell apart (above :data:`.quadrant.FAST_PATH_MAX`): it keeps
each row's best cell as one int32, ``H * KEY_COLUMNS + (KEY_COLUMNS - 1 - j)``, whose maximum
is the best H at its smallest column. Scores below :data:`INT16_SPAN` keep it inside int32."""
assert FAST_PATH_MAX < KEY_COLUMNS and INT16_SPAN * KEY_COLUMNS < 2**31
NO_CELL = KEY_COLUMNS - 1
"""The key of H 0 at column 0: a row with no positive cell."""
ST_H = 0
ST_E = 1
ST_F = 2
MV_F_EXT = 4
"""Move byte bits past the move in state H (:data:`.quadrant.MV_DIR`): F extends the gap
above rather than opening it;"""
MV_E_EXT = 8
"""E extends the gap on the left;"""
MV_ZERO = 16
"""H is 0 (a local trace stops here);"""
MV_SAME = 32
"""the two codes are equal and not ``n_code`` (``=`` rather than ``X``)."""


def cigar_slots(m, n, pairs=1):
    """CIGAR runs a scored pair can need: one per cell step at most (``m + n``, its read's and
    window's lengths), plus the two clips. Of ``pairs`` pairs whose reads total ``m`` bases and
    windows ``n``, the sum of theirs (a lane's first slot from the staged offsets). Integers or
    arrays; compiled code calls it too."""
    return m + n + 2 * pairs


def fits_int16(mode: int, go: int, ge: int, best_sub: int, clip: int, m_max: int,
               n_max: int) -> bool:
    """Whether int16 rows and boundaries hold every value of pairs up to ``m_max`` x ``n_max``.

    H is the best score over paths, so it is at least an all-gap path's: in global
    mode ``-(2 go + (i + j) ge)`` (along row 0, then down), in infix mode
    ``-(go + i ge)`` (row 0 is free), in local mode 0; E and F are at most one gap
    opening below an H. H is at most ``best_sub`` per aligned pair plus the two
    clip bonuses. Inside :data:`INT16_SPAN` on both sides, NEG16 loses every maximum
    as NEG does, so results are identical to int32's (GPU and CPU compared in the
    tests).
    """
    if mode == GLOBAL:
        low = 3 * go + (m_max + n_max + 2) * ge
    elif mode == INFIX:
        low = 2 * go + (m_max + 2) * ge
    else:
        low = go + ge
    high = max(best_sub, 0) * min(m_max, n_max) + 2 * abs(clip)
    return max(low, high) < INT16_SPAN


def tile_size(K: int) -> int:
    """int32 entries of the traceback's scratch row: H, F and the window codes, K+1 each."""
    return 3 * (K + 1)


def keep_col(arrays, x, v):
    """One element ``v`` (``(H, E)``) of a quadrant column into the boundaries' ``arrays``
    (``(rbH, rbF, cbH, cbE)``)."""
    arrays[2][x] = v[0]
    arrays[3][x] = v[1]


def column_store(device_jit, rows: int, tag: str):
    """The device function that keeps a strip's current column as a quadrant-column boundary
    (:func:`.strips.column_keeper`): ``keep_column(arrays, work, cb, step, h)`` stores H
    (``work[:h]``) and E (``work[rows:rows+h]``) of the strip's first ``h`` read rows from
    element ``cb`` on, ``step`` apart. Both forward passes (this module's and
    :mod:`.scored_packed`'s) keep columns through it, so the traceback reads one layout."""
    def left(work, r):
        return work[r], work[rows + r]

    return strips.column_keeper(device_jit, rows, device_jit(named_for(left, tag)),
                                device_jit(keep_col), tag)


def build(device_jit, vote_all, K: int, keyed: bool = False) -> SimpleNamespace:
    """Compile the scored per-pair functions for quadrant size ``K``.

    ``vote_all(done)`` is the warp vote (on the CPU: ``done``). The functions
    are named for ``K`` and for this module (``forward_scored_k16``), so cached
    kernels never share a symbol with each other or with :mod:`.quadrant`'s.
    ``keyed``: local mode keeps each row's best cell as one key (:data:`KEY_COLUMNS`), a
    multiply-add and a maximum per cell instead of a compare and two selects; only for
    pairs whose scores stay below :data:`INT16_SPAN` (the GPU's int16 batches). The same
    cells win either way.
    """
    tag = f"scored_k{K}" + ("_keyed" if keyed else "")

    def device_fn(fn):
        return device_jit(named_for(fn, tag))

    KK = K + 1
    tie = device_jit(tie_move)
    ahead = device_jit(first_max)
    key_of = device_jit(column_key)
    column_of = device_jit(key_column)

    @device_fn
    def score(sub, A, a, b):
        """Substitution score of read code ``a`` against window code ``b``."""
        return sub[np.int32(a) * np.int32(A) + np.int32(b)]

    @device_fn
    def edge(mode, x, go, ge):
        """H on the first row or column, ``x`` cells from the corner (a leading gap, or free)."""
        if mode == LOCAL or x == 0:
            return np.int32(0)
        return np.int32(-(go + x * ge))

    @device_fn
    def cell(diag, s, leftH, leftE, aboveH, aboveF, oe, ge):
        """One cell of Gotoh's recurrences in int32: returns ``(H, E, F)`` before any floor."""
        e = max(np.int32(leftH - oe), np.int32(leftE - ge))
        f = max(np.int32(aboveH - oe), np.int32(aboveF - ge))
        return max(np.int32(diag + s), max(e, f)), e, f

    @device_fn
    def load(row, j):
        rowH, rowF, rowb, rows = row
        x = np.uint64(rowb + j * rows)
        return np.int32(rowH[x]), np.int32(rowF[x])

    @device_fn
    def put(row, j, v):
        rowH, rowF, rowb, rows = row
        x = np.uint64(rowb + j * rows)
        rowH[x] = v[0]
        rowF[x] = v[1]

    @device_fn
    def corner(v):
        return v[0]

    @device_fn
    def keep_row(arrays, x, v):
        arrays[0][x] = v[0]
        arrays[1][x] = v[1]

    @device_fn
    def left_of(work, r):
        return work[r], work[K + r]

    @device_fn
    def first_column(ctx, i):
        """Column 0 at read row ``i``: H (``top`` on row 0) and E (minus infinity)."""
        mode, go, ge, top, neg = ctx
        return (top if i == 0 else edge(mode, i, go, ge)), neg

    def make_column(local: bool, track_last: bool):
        """The K cells of a strip's column j (``ctx`` is ``(sub, oe, ge)``), specialised at
        compile time. ``local``: floor H at 0 and keep each row's best cell (its first
        maximum) in ``work`` (as a key when ``keyed``). ``track_last`` (the end-to-end modes'
        last strip): hand on the H of row ``h-1``, the read's last row. Neither: the inner
        strips of the end-to-end modes, which only fill. Returns the bottom row's H and F
        and that H."""
        def column(work, ctx, pd, top, tj, j, h):
            sub, oe, ge = ctx
            aboveH, aboveF = top
            later = np.int32(key_of(j, KEY_COLUMNS - 1))  # the key's column part
            last = aboveH
            for r in range(K):
                leftH = work[r]
                v, e, f = cell(pd, sub[np.uint32(work[2 * K + r] + tj)], leftH, work[K + r],
                               aboveH, aboveF, oe, ge)
                if local:
                    v = max(v, np.int32(0))
                    if keyed:
                        work[3 * K + r] = max(work[3 * K + r],
                                              np.int32(v * np.int32(KEY_COLUMNS) + later))
                    elif ahead(v, work[3 * K + r]):
                        work[3 * K + r] = v
                        work[4 * K + r] = j
                if track_last and r == h - 1:
                    last = v
                pd = leftH
                work[r] = v
                work[K + r] = e
                aboveH = v
                aboveF = f
            return (aboveH, aboveF), last

        name = "local" if local else ("last" if track_last else "fill")
        return device_jit(named_for(column, f"{tag}_{name}"))

    @device_fn
    def keep_all(tracked, last, j):
        return tracked

    @device_fn
    def last_row(tracked, last, j):
        """The last row's leftmost maximum, and its H in the last column."""
        best, best_j, _last = tracked
        if ahead(last, best):
            best = last
            best_j = np.int32(j)
        return best, best_j, last

    emit = device_jit(emit_run)
    close = device_jit(close_runs)

    def make_moves(local: bool):
        """:func:`quadrant_moves` for local mode or for the end-to-end modes (compile time:
        only local mode floors H at 0 and marks the cells where H is 0)."""
        def quadrant_moves(read, window, scoring, n_code, a, b, bounds, tile, moves):
            """Recompute quadrant (a, b) from its stored top row and left column; keep moves only.

            Row by row, H and F of the row above in ``tile`` (:func:`tile_size` int32), the
            quadrant's window codes after them (read once per quadrant, not per cell). For
            each of the K x K cells, ``moves[(r-1)*K + c-1]`` gets what the trace reads
            there (:data:`MV_UP` and the other bits): in state H the move by the tie rule
            (:func:`.quadrant.tie_move`), whether F and E extend (extending wins over
            opening), in local mode whether H is 0, whether the two codes are
            equal. The move is taken before local mode's floor at 0: where the floor changes
            H, H is 0 and the trace stops there, so the move is never read. (Compared with
            the floored value, the H100 build took wrong moves in local mode while the CPU and
            the simulator did not.) Cells past a partial quadrant's edge, or past an empty
            sequence (a done lane beside live ones still runs this), score code 0
            instead of reading past the sequence; the trace never visits them. Row r+1's
            left cells and read code are loaded while row r is computed.
            """
            q, qb, qs, m = read
            t, tb, ts, n = window
            _mode, sub, A, go, ge, _clip = scoring
            (rbH, rbF, cbH, cbE), base, stride, rlen, clen = bounds
            r0 = a * K
            c0 = b * K
            hr = min(K, m - r0)
            wc = min(K, n - c0)
            go = np.int32(go)
            ge = np.int32(ge)
            oe = np.int32(go + ge)
            nc = np.int32(n_code)
            for c in range(KK):
                x = np.uint64(base + (a * rlen + c0 + min(c, wc)) * stride)
                tile[c] = np.int32(rbH[x])
                tile[KK + c] = np.int32(rbF[x])
            for c in range(1, KK):
                jj = c0 + c - 1
                tile[2 * KK + c] = np.int32(t[np.uint64(tb + jj * ts)]) if jj < n else 0
            col = np.uint64(base + (b * clen + r0) * stride)
            x = col + np.uint64(min(1, hr) * stride)
            nextH = np.int32(cbH[x])
            nextE = np.int32(cbE[x])
            nextQ = np.int32(q[np.uint64(qb + r0 * qs)]) if r0 < m else np.int32(0)
            for r in range(1, KK):
                leftH = nextH
                leftE = nextE
                qi = nextQ
                x = col + np.uint64(min(r + 1, hr) * stride)  # row r+1's loads, a row early
                nextH = np.int32(cbH[x])
                nextE = np.int32(cbE[x])
                ii = r0 + r
                nextQ = np.int32(q[np.uint64(qb + ii * qs)]) if ii < m else np.int32(0)
                row = np.uint32(qi * np.int32(A))  # this read code's row of ``sub``
                diag = tile[0]
                tile[0] = leftH
                for c in range(1, KK):
                    tj = tile[2 * KK + c]
                    s = sub[row + np.uint32(tj)]
                    aboveH = tile[c]
                    aboveF = tile[KK + c]
                    v, e, f = cell(diag, s, leftH, leftE, aboveH, aboveF, oe, ge)
                    mv = tie(v, np.int32(diag + s), f)
                    if local:
                        v = max(v, np.int32(0))
                        mv |= MV_ZERO if v == 0 else 0
                    mv |= MV_F_EXT if f == np.int32(aboveF - ge) else 0
                    mv |= MV_E_EXT if e == np.int32(leftE - ge) else 0
                    mv |= MV_SAME if (qi == tj) & (qi != nc) else 0
                    moves[np.uint32((r - 1) * K + c - 1)] = mv
                    diag = aboveH
                    tile[c] = v
                    tile[KK + c] = f
                    leftH = v
                    leftE = e

        name = "moves_local" if local else "moves_ends"
        return device_jit(named_for(quadrant_moves, f"scored_k{K}_{name}"))

    moves_local = make_moves(True)
    moves_ends = make_moves(False)

    @device_fn
    def recompute(read, window, ctx, a, b, bounds, tile, moves):
        scoring, n_code, _eqx = ctx
        if scoring[0] == LOCAL:
            moves_local(read, window, scoring, n_code, a, b, bounds, tile, moves)
        else:
            moves_ends(read, window, scoring, n_code, a, b, bounds, tile, moves)

    @device_fn
    def halt(state, mv, ctx, qdone, li, lj):
        """A local trace stops as soon as it stands in state H on a cell whose H is 0."""
        st, stopped, nm = state
        stop_here = ctx[0][0] == LOCAL and st == ST_H and (mv & MV_ZERO) != 0
        stopped = stopped or (stop_here and not qdone and li > 0 and lj > 0)
        return st, stopped, nm

    @device_fn
    def halted(state):
        return state[1]

    @device_fn
    def move(state, mv, ctx, live):
        """A move byte as the trace in state ``st`` takes it; counts NM and moves to the next
        state (in state E or F a gap that extends stays open)."""
        st, stopped, nm = state
        isdiag = (st == ST_H) & ((mv & MV_DIR) == 0)
        up = (st == ST_F) or (st == ST_H and (mv & MV_DIR) == MV_UP)
        left = not (isdiag or up)
        same = (mv & MV_SAME) != 0
        op = OP_I if up else (OP_D if left else (OP_EQ + np.int32(not same) if ctx[2] else OP_M))
        ext = (mv & (MV_F_EXT if up else MV_E_EXT)) != 0
        nm += np.int32(live and (up or left or not same))
        if live:
            st = ST_H if isdiag else (ST_F if up & ext else (ST_E if left & ext else ST_H))
        return op, isdiag | up, isdiag | left, (st, stopped, nm)

    cells = SimpleNamespace(load=load, store=put, corner=corner, keep_row=keep_row,
                            keep_col=device_jit(keep_col), left=left_of,
                            first_column=first_column, recompute=recompute, halt=halt,
                            halted=halted, move=move, emit=emit)
    shared = strips.build(device_jit, vote_all, K, cells, tag)
    sweep_local = shared.sweep(make_column(True, False), keep_all, "local")
    sweep_fill = shared.sweep(make_column(False, False), keep_all, "fill")
    sweep_last = shared.sweep(make_column(False, True), last_row, "last")
    keep_first_column = shared.keep_first_column
    keep_empty_read = shared.keep_empty_read
    walk = shared.walk

    @device_fn
    def forward(read, window, scoring, store, row, bounds, work, neg):
        """Fill H, E, F in strips of K rows, keeping only quadrant boundaries.

        ``rowH``/``rowF`` hold one row (n+1 cells); ``work`` (5K int32) the strip's
        current column of H and of E, its read codes times ``A`` (the rows of
        ``sub`` it reads) and, in local mode, each row's best score and column.
        The top row of strip ``s`` goes to ``rbH``/``rbF``, column ``j = b*K`` to
        ``cbH``/``cbE`` (when ``store``; ``bounds`` as in :func:`.quadrant.build`'s
        ``forward``). All cell
        arithmetic is int32; the rows and boundaries may be int16 or int32 arrays,
        ``neg`` their minus infinity (:data:`NEG16` or :data:`NEG`; values are read as
        int32). Local mode with a clip penalty ``clip`` (L): an
        alignment that starts on the read's first base or ends on its last earns L
        at that end (row 0 holds L, the last row's best counts L more), so the
        best cell maximises the score minus L per clipped end; that is the score
        returned. Returns ``(score, end_i, end_j)``.
        """
        q, qb, qs, m = read
        n = window[3]
        mode, sub, A, go, ge, clip = scoring
        rowH, rowF, rowb, rows = row
        go = np.int32(go)
        ge = np.int32(ge)
        oe = np.int32(go + ge)
        clip = np.int32(clip)
        top = clip if mode == LOCAL else np.int32(0)
        for j in range(n + 1):
            rowH[rowb + j * rows] = top if mode != GLOBAL else edge(mode, j, go, ge)
            rowF[rowb + j * rows] = neg
        if store:
            keep_first_column(bounds, m, (mode, go, ge, top, neg))
        if m == 0:
            if store:
                keep_empty_read(bounds, row, n)
            if mode == GLOBAL:
                return np.int32(rowH[rowb + n * rows]), 0, n
            return np.int32(0), 0, 0
        best = np.int32(0) if mode == LOCAL else np.int32(NEG)
        bi = 0
        bj = 0
        nstrips = (m + K - 1) // K
        ctx = (sub, oe, ge)
        for s in range(nstrips):
            i0 = s * K
            h = min(K, m - i0)
            for r in range(K):
                work[r] = edge(mode, i0 + r + 1, go, ge)
                work[K + r] = NEG
                work[2 * K + r] = np.int32(q[qb + min(i0 + r, m - 1) * qs]) * np.int32(A)
                work[3 * K + r] = np.int32(NO_CELL) if keyed else np.int32(0)  # H 0, column 0
                work[4 * K + r] = 0
            edge_h = edge(mode, i0 + h, go, ge)
            tracked = (edge_h, np.int32(0), edge_h)
            if mode == LOCAL:
                sweep_local(window, s, h, store, row, bounds, work, ctx, (edge_h, neg), tracked)
                for r in range(K):
                    key = work[3 * K + r]
                    row_h = key >> np.int32(KEY_BITS) if keyed else key
                    row_best = row_h + (clip if i0 + r + 1 == m else np.int32(0))
                    if r < h and ahead(row_best, best):
                        best = row_best
                        bi = i0 + r + 1
                        bj = column_of(key, np.int32(NO_CELL)) if keyed else work[4 * K + r]
            elif i0 + h < m:
                sweep_fill(window, s, h, store, row, bounds, work, ctx, (edge_h, neg), tracked)
            else:
                row_best, row_j, last = sweep_last(window, s, h, store, row, bounds, work, ctx,
                                                   (edge_h, neg), tracked)
                if mode == GLOBAL:
                    return last, m, n
                best = row_best
                bi = m
                bj = row_j
        if mode == LOCAL:
            return np.int32(best - 2 * clip), bi, bj
        return best, bi, bj

    @device_fn
    def traceback(read, window, scoring, n_code, eqx, end_i, end_j, bounds, tile, moves, out):
        """Trace from (end_i, end_j) back through the quadrants; write the CIGAR to ``out``.

        The walk is :mod:`.strips`' (quadrants recomputed into their move bytes by
        ``quadrant_moves``), in states H, E and F (``move``). Returns ``(read_start,
        window_start, n_ops, nm)``.
        """
        m = read[3]
        n = window[3]
        mode = scoring[0]
        nout = 0
        cur_op = -1
        cur_len = 0
        if mode == LOCAL:
            nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_S, m - end_i)
        nquads = (m + K - 1) // K + (n + K - 1) // K + 1
        i, j, state, runs = walk(read, window, (scoring, n_code, eqx), bounds, (tile, moves),
                                 out, (end_i, end_j), (ST_H, False, 0), (nout, cur_op, cur_len),
                                 nquads)
        _st, stopped, nm = state
        nout, cur_op, cur_len = runs
        if not stopped and mode != LOCAL:
            nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_I, i)
            nm += i
            if mode == GLOBAL:
                nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_D, j)
                nm += j
                j = 0
            i = 0
        if mode == LOCAL:
            nout, cur_op, cur_len = emit(out, nout, cur_op, cur_len, OP_S, i)
        return i, j, close(out, nout, cur_op, cur_len), nm

    return SimpleNamespace(K=K, tag=tag, score=score, edge=edge, forward=forward, emit=emit,
                           traceback=traceback,
                           row_size=device_jit(boundary_row_size),
                           col_size=device_jit(boundary_col_size))
