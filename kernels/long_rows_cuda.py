"""The affine (Gotoh) row pass of one long pair on the GPU: a wavefront of strips over all SMs.

A *row pass* fills Gotoh's three matrices over a rectangle of ``m`` read rows by ``n``
window columns from its entry boundary (the top row's H and F, the left column's H and E)
and hands back its exit boundary (the last row's H and F, the last column's H and E); in
local mode also each row's best cell. It is the building block of a linear-memory
divide-and-conquer (Myers–Miller) and, over the whole matrix, the score-only alignment of a
long pair. Conventions are :mod:`.scored_quadrant`'s: scores are maximised, ``sub[a * A + b]``
scores read code ``a`` against window code ``b``, a gap of length L costs ``go + L * ge``,
E is the gap along the window (a move left, CIGAR ``D``), F the gap along the read (a move
down, CIGAR ``I``); minus infinity is :data:`.scored_quadrant.NEG`.

How the GPU splits the rectangle:

* a **strip** is ``lanes * rows_per_lane`` consecutive rows, swept by one warp from the first
  column to the last; lane ``l`` holds rows ``l * rows_per_lane ..`` of the strip in
  registers (H and E of the previous column, the read codes, local mode's best per row);
* inside a strip the warp works along anti-diagonals: at step ``s`` lane ``l`` computes
  column ``s - l`` of its rows and hands its bottom row's H and F to lane ``l + 1`` with one
  shuffle each (``shfl_up``), so every lane runs the same instructions at every step (no
  divergence except the first and last ``lanes - 1`` steps of a strip, where some lanes are
  outside the matrix);
* strips form a **wavefront**: a persistent grid of warps takes strips in order from a
  global counter; strip ``w`` reads the bottom row of strip ``w - 1`` from a ring in global
  memory, ``lanes`` columns at a time, once strip ``w - 1`` has published them (a progress
  word per ring slot, tagged with the strip, written after a fence and read with atomics so
  no SM reads a stale cached line). The first strip reads the entry row, the last one writes
  the exit row; every strip publishes its progress (the strip above it may be waiting);
* **memory** is linear in ``m + n``: each of ``warps + 1`` ring slots holds ``D`` columns
  (:func:`ring_columns`, about ``4 n / warps + 4 lanes``), so the ring is about ``8 * 4 n`` bytes. A
  strip may run at most ``D`` columns ahead of what the strip below it has taken
  (back-pressure); with at least a quarter of the launched warps resident at once the
  lowest unfinished strip can always reach its last column, so the wavefront cannot stall.

Local mode floors H at 0 and keeps each row's first best cell (smallest column, the left
column included); the host picks the row (smallest row on ties), which gives the tie rule
of :mod:`.scored_quadrant`: the best cell with the smallest read end, then the smallest
window end.

numba's CUDA simulator has no warp shuffles; under it :class:`SimulatedWarp` exchanges the
values through a barrier per warp, and ``lanes`` may be small (the tests' tiny tiles).
"""

from __future__ import annotations

import threading
import time
from functools import cache

import numpy as np
from numba import cuda, int32

from .disk_cache import cache_by_source, named_for
from .scored_quadrant import MAX_ALPHABET, NEG
from .simulator import simulated

LANES = 32
"""Lanes of a warp on the device (the simulator's tests use fewer)."""
SUB_ENTRIES = MAX_ALPHABET * MAX_ALPHABET
"""Shared-memory entries of the substitution table (16 KB per block)."""
FULL_MASK = 0xFFFFFFFF
TAG_SHIFT = 32
"""A progress word is ``(strip + 1) << TAG_SHIFT | columns published``."""
COLUMN_MASK = (1 << TAG_SHIFT) - 1
RESIDENT_SHARE = 4
"""The ring is sized for a wavefront in which at least one launched warp in this many is
resident (:func:`ring_columns`)."""
PAUSE_NS = 128
"""How long a warp waiting on a neighbouring strip sleeps between two looks."""


def ring_columns(n: int, warps: int, lanes: int, share: int = RESIDENT_SHARE) -> int:
    """Columns each ring slot holds (``D``): enough that the wavefront never stalls when at
    least ``warps / share`` warps run at once, and no more than the row needs.

    A strip starts its chunk of columns ``c0 .. c0 + lanes - 1`` only when the strip below
    has published column ``c0 - D`` (its last lane writes columns ``c0 - lanes + 1 .. c0``
    over those ``D`` back). Why it cannot stall: two neighbours cannot hold each other up,
    since the lower one waits for ``c0 + lanes - 1`` of the upper one, which is held back
    only past ``D + c0 - lanes`` and ``D >= 3 lanes``; and were every running strip held
    back by the one below it, each would have published over ``D - lanes`` columns more
    than that one, the lowest (whose upper neighbour is done) over ``resident * (D - lanes)
    >= n``: it finishes, and its warp takes the next strip."""
    return min(n, -(-share * n // max(warps, 1))) + 4 * lanes


class SimulatedWarp:
    """Warp shuffles for numba's CUDA simulator, which has none: the lanes of a warp (its
    ``lanes`` consecutive threads of a block) post their values and meet at a barrier.

    The simulator runs a block's threads as Python threads and the blocks one after the
    other, so one barrier per warp of a block serves every block. A lane that fails leaves
    the others waiting: the barrier's timeout then fails them too, instead of a hang."""

    TIMEOUT_S = 120

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.lock = threading.Lock()
        self.warps: dict = {}

    def _exchange(self, value, source):
        """Post ``value``; return what lane ``source(lane)`` posted."""
        thread = threading.current_thread()
        lane = thread.thread_id % self.lanes
        with self.lock:
            key = thread.thread_id // self.lanes
            if key not in self.warps:
                self.warps[key] = (threading.Barrier(self.lanes, timeout=self.TIMEOUT_S),
                                   [None] * self.lanes)
            barrier, slots = self.warps[key]
        slots[lane] = value
        barrier.wait()
        got = slots[source(lane)]
        barrier.wait()
        return got

    def from_lane(self, value, k):
        """``shfl_sync(mask, value, k)``: every lane gets lane ``k``'s value."""
        return self._exchange(value, lambda lane: int(k))

    def above(self, lane, bottom_h, bottom_f, top_h, top_f, k):
        """:func:`lane_ops`' ``above`` in one exchange."""
        got = self._exchange((bottom_h, bottom_f, top_h, top_f),
                             lambda lane: int(k) if lane == 0 else lane - 1)
        return (got[2], got[3]) if lane == 0 else (got[0], got[1])

    @staticmethod
    def pause():
        """Sleep a little; raise once the simulator has aborted the block (a lane failed:
        the strip this warp waits for will never be published)."""
        if threading.current_thread().abort:
            raise RuntimeError("another lane failed; the simulator aborted the block")
        time.sleep(1e-4)


def lane_ops(lanes: int):
    """``(above, from_lane, pause)``: the warp's exchanges, and the wait between two looks at
    a neighbour's progress (device functions; under the simulator, :class:`SimulatedWarp`).

    ``above(lane, bottom_h, bottom_f, top_h, top_f, k)`` is H and F of the row above the
    lane's rows at this step: lane ``l - 1``'s bottom row from the step before (a shuffle up)
    or, for lane 0, lane ``k``'s element of the staged top row; ``from_lane(value, k)`` lane
    ``k``'s value."""
    if simulated():
        warp = SimulatedWarp(lanes)
        return warp.above, warp.from_lane, warp.pause
    if lanes != LANES:
        raise ValueError(f"a device warp has {LANES} lanes; got lanes={lanes}")

    @cuda.jit(device=True)
    def above(lane, bottom_h, bottom_f, top_h, top_f, k):
        up_h = cuda.shfl_up_sync(FULL_MASK, bottom_h, 1)
        up_f = cuda.shfl_up_sync(FULL_MASK, bottom_f, 1)
        first_h = cuda.shfl_sync(FULL_MASK, top_h, k)
        first_f = cuda.shfl_sync(FULL_MASK, top_f, k)
        if lane == 0:
            return first_h, first_f
        return up_h, up_f

    @cuda.jit(device=True)
    def from_lane(value, k):
        return cuda.shfl_sync(FULL_MASK, value, k)

    @cuda.jit(device=True)
    def pause():
        cuda.nanosleep(np.uint32(PAUSE_NS))

    return above, from_lane, pause


@cuda.jit(device=True)
def published(prog, slot, strip):
    """Columns strip ``strip`` has published in ring slot ``slot`` (0 while the slot still
    holds an earlier strip's progress). An atomic read: never a stale cached value."""
    word = cuda.atomic.add(prog, slot, np.int64(0))
    if (word >> np.int64(TAG_SHIFT)) == np.int64(strip) + np.int64(1):
        return word & np.int64(COLUMN_MASK)
    return np.int64(0)


def make_column(rows_per_lane: int, local: bool, capture: bool, tag: str):
    """The device function that computes one column of a lane's ``rows_per_lane`` rows.

    ``state`` is the lane's registers ``(hl, el, qr, bh, bj)``: H and E of the previous
    column, each row's read code times ``A``, and in local mode each row's best H and its
    column. ``above`` is ``(H, F)`` of the row above the lane's first row in this column,
    ``diag`` H of that row in the previous column, ``tc`` the window code. Returns the lane's
    bottom row ``(H, F)`` and, when ``capture``, ``(H, F)`` of row ``pick`` (the last strip's
    exit row), else the bottom row's again. Compiled apart for each ``capture`` so that the
    strips without the exit row pay nothing for it."""
    R = rows_per_lane

    def column(state, subs, above, diag, tc, j, gaps, pick):
        hl, el, qr, bh, bj = state
        oe, ge = gaps
        aH, aF = above
        pH = aH
        pF = aF
        for r in range(R):
            e = max(np.int32(hl[r] - oe), np.int32(el[r] - ge))
            f = max(np.int32(aH - oe), np.int32(aF - ge))
            h = max(np.int32(diag + subs[qr[r] + tc]), max(e, f))
            if local:
                h = max(h, np.int32(0))
                if h > bh[r]:
                    bh[r] = h
                    bj[r] = j
            if capture and r == pick:
                pH = h
                pF = f
            diag = hl[r]
            hl[r] = h
            el[r] = e
            aH = h
            aF = f
        if not capture:
            pH = aH
            pF = aF
        return aH, aF, pH, pF

    name = ("local" if local else "ends") + ("_capture" if capture else "")
    return cuda.jit(device=True)(named_for(column, tag, name))


@cache
def row_pass_kernel(rows_per_lane: int, lanes: int = LANES, local: bool = False,
                    max_registers: int = 64):
    """The row-pass kernel for strips of ``lanes`` x ``rows_per_lane`` rows.

    ``kernel[blocks, warps * lanes](seqs, scoring, entry, ring, outs)``:

    * ``seqs``: ``(q, t)``, the rectangle's read and window codes (uint8, ``m, n >= 1``);
    * ``scoring``: ``(sub, A, go, ge)`` (``sub`` int32, at most :data:`SUB_ENTRIES`);
    * ``entry``: ``(top_h, top_f, left_h, left_e)``, int32: ``top_*`` of length ``n + 1``
      (``top_h[0]`` is the corner), ``left_*`` of length ``m + 1`` (element 0 unused);
    * ``ring``: ``(ring_h, ring_f, prog, counter, D)``: int32 rings of ``S * D`` entries,
      ``S`` int64 progress words (zeros), the strip counter (one int32, zero), the slot
      length ``D`` (:func:`ring_columns` for the launched warps; ``S`` = warps + 1);
    * ``outs``: ``(row_h, row_f, col_h, col_e, best_h, best_j)``, int32: the exit row
      (``n + 1``; element 0 is left to the host), the exit column (``m + 1``; element 0 left
      to the host) and, in local mode, each row's best H and its column (``m + 1``; else
      any length).

    Compiled once per machine and argument set (numba's disk cache, keyed by the kernel
    sources); ``max_registers`` caps registers so the launched warps are resident at once.
    """
    R = rows_per_lane
    L = lanes
    ROWS = R * L
    tag = f"long_rows_r{R}_l{L}"
    above, from_lane, pause = lane_ops(lanes)
    column = make_column(R, local, False, tag)
    column_capture = make_column(R, local, True, tag)

    def long_rows_kernel(seqs, scoring, entry, ring, outs):
        q, t = seqs
        sub, A, go, ge = scoring
        top_h, top_f, left_h, left_e = entry
        ring_h, ring_f, prog, counter, D = ring
        row_h, row_f, col_h, col_e, best_h, best_j = outs
        m = q.shape[0]
        n = t.shape[0]
        subs = cuda.shared.array(SUB_ENTRIES, int32)
        for x in range(cuda.threadIdx.x, A * A, cuda.blockDim.x):
            subs[x] = sub[x]
        cuda.syncthreads()
        lane = cuda.threadIdx.x % L
        S = prog.shape[0]
        nstrips = (m + ROWS - 1) // ROWS
        gaps = (np.int32(go + ge), np.int32(ge))
        hl = cuda.local.array(R, int32)
        el = cuda.local.array(R, int32)
        qr = cuda.local.array(R, int32)
        bh = cuda.local.array(R, int32)
        bj = cuda.local.array(R, int32)
        state = (hl, el, qr, bh, bj)
        while True:
            w = np.int32(0)
            if lane == 0:
                w = cuda.atomic.add(counter, 0, np.int32(1))
            w = from_lane(w, 0)
            if w >= nstrips:
                break
            i0 = w * ROWS
            base = i0 + lane * R  # the lane's rows are base+1 .. base+R
            for r in range(R):
                i = min(base + r + 1, m)
                hl[r] = left_h[i]
                el[r] = left_e[i]
                qr[r] = np.int32(q[i - 1]) * np.int32(A)
                bh[r] = hl[r]
                bj[r] = 0
            dprev = np.int32(top_h[0]) if base == 0 else np.int32(left_h[min(base, m)])
            last = w == nstrips - 1
            exit_lane = (m - i0 - 1) // R if last else -1
            pick = (m - i0 - 1) % R
            above_slot = (w + S - 1) % S
            slot = w % S
            below_slot = (w + 1) % S
            botH = np.int32(NEG)
            botF = np.int32(NEG)
            for c0 in range(1, n + L, L):
                if w > 0:
                    need = min(c0 + L - 1, n)
                    while published(prog, above_slot, w - 1) < need:
                        pause()
                    cuda.threadfence()  # the ring's reads after the progress word's
                if not last:
                    while c0 > D + published(prog, below_slot, w + 1):
                        pause()
                col = c0 + lane
                chH = np.int32(NEG)
                chF = np.int32(NEG)
                if col <= n:
                    if w == 0:
                        chH = np.int32(top_h[col])
                        chF = np.int32(top_f[col])
                    else:
                        x = above_slot * D + col % D
                        chH = cuda.atomic.add(ring_h, x, np.int32(0))
                        chF = cuda.atomic.add(ring_f, x, np.int32(0))
                for k in range(L):
                    aH, aF = above(lane, botH, botF, chH, chF, k)
                    j = c0 + k - lane
                    if 1 <= j <= n:
                        tc = np.int32(t[j - 1])
                        diag = dprev
                        dprev = aH
                        if lane == exit_lane:
                            botH, botF, pH, pF = column_capture(state, subs, (aH, aF), diag,
                                                                tc, j, gaps, pick)
                            row_h[j] = pH
                            row_f[j] = pF
                        else:
                            botH, botF, pH, pF = column(state, subs, (aH, aF), diag, tc, j,
                                                        gaps, pick)
                        if j == n:
                            for r in range(R):
                                i = base + r + 1
                                if i <= m:
                                    col_h[i] = hl[r]
                                    col_e[i] = el[r]
                        if lane == L - 1 and not last:
                            x = slot * D + j % D
                            ring_h[x] = botH
                            ring_f[x] = botF
                if lane == L - 1:  # the last strip too: the strip above waits on it
                    cuda.threadfence()
                    done = np.int64(min(c0, n))
                    cuda.atomic.max(prog, slot, (np.int64(w + 1) << np.int64(TAG_SHIFT)) | done)
            if local:
                for r in range(R):
                    i = base + r + 1
                    if i <= m:
                        best_h[i] = bh[r]
                        best_j[i] = bj[r]

    named_for(long_rows_kernel, tag, "local" if local else "ends")
    if simulated():
        return cuda.jit(long_rows_kernel)
    kernel = cuda.jit(max_registers=max_registers)(long_rows_kernel)
    cache_by_source(kernel, "cuda-long-rows", R, L, local, max_registers)
    return kernel
