"""One long pair on the whole GPU: the score pass against edlib and WFA2 on the same pair.

    python -m benchmarks.long_pairs --json long_pairs.json
    python -m benchmarks.long_pairs --lengths 100000 --rows-per-lane 1 2 4 8

For each ``--lengths`` L: a random window of L bases and a read drawn from it with
``--divergence`` (1%: substitutions, insertions and deletions in equal parts). readalign's
score-only pass (:func:`readalign.engine.gpu.long_rows.score_pair`, full matrix, global mode)
runs with affine gaps (WFA2's defaults: mismatch 4, gap open 6, gap extend 2, match 0, so
that minus its score is WFA2's penalty) and with unit costs (minus its score is edlib's
distance); each is timed end to end (codes to the device, the pass, the exit row back),
after one untimed run that compiles, median of ``--repeats``. GCUPS counts L x L cells.
Beside it, where importable, on one core each (a single pair has no pair-level
parallelism): edlib (``NW``, distance and path) and pywfa (WFA2, end to end, gap-affine
and edit, score only). A missing peer is named in the table and the
JSON as skipped, never left out silently; a peer whose score differs from readalign's is
flagged in its row.

Predicted floor on an H100 SXM (132 SMs, 1.98 GHz boost: KINDS.md; HOPPER.md names no
arithmetic rates, so the rates here are the CUDA programming guide's for compute
capability 9.0: 64 results per clock per SM for 32-bit integer add/subtract/min/max, 32
for warp shuffles, 128 instructions issued per clock per SM):

* a cell of the end-to-end modes is E (2 subtractions, a maximum), F (2 subtractions, a
  maximum), H (the substitution's address and a shared-memory load, an add, 2 maxima): about
  9 integer operations; a step of a lane adds, whatever its rows, 4 shuffles (H and F from
  the lane above, and from the staged top row), the window code's load, 2 selects and the
  loop's bounds, about 6 integer operations. At R rows a lane: ``9 + 6 / R`` integer
  operations a cell, so ``64 / (9 + 6 / R)`` cells per clock per SM: 4.3 at R = 1, 5.6 at
  R = 2, 6.1 at R = 4 (shuffles need ``4 / (32 R)`` clocks a cell: never the limit);
* times 132 SMs at 1.98 GHz: **1.1 TCUPS at R = 1, 1.6 TCUPS at R = 4**; local mode adds
  a maximum, a compare and two selects a cell (about 2.9 to 4.6 cells per clock per SM);
* 100 kbp x 100 kbp (1e10 cells) takes R = 1 (3,125 strips for 4,224 resident warps): at
  least 8.9 ms; the wavefront's critical path (``m / R + n`` lane steps of about 50 clocks of
  dependent shuffle and maxima, ~5 ms) stays below that. Target 650 GCUPS = 2.5 cells per
  clock per SM, 58% of this floor;
* 1 Mbp x 1 Mbp (1e12 cells) takes R = 4 (7,813 strips for 2,112 resident warps): at least
  0.63 s.

The lead's measured numbers go to ``benchmarks/RESULTS.md`` by date and commit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from ._host import device_name, host_line
from ._provenance import provenance

BASES = np.frombuffer(b"ACGT", np.uint8)
AFFINE = {"match": 0, "mismatch": 4, "gap_open": 6, "gap_extend": 2}
"""WFA2's default gap-affine penalties, as readalign scores them (minus the penalty)."""


def long_pair(length: int, divergence: float, seed: int) -> tuple[bytes, bytes]:
    """A random window of ``length`` bases and a read drawn from it with ``divergence`` edits a
    base: a third substitutions, a third one-base insertions, a third one-base deletions."""
    rng = np.random.default_rng(seed)
    window = BASES[rng.integers(0, 4, length)]
    kind = rng.integers(0, 3, length)
    edit = rng.random(length) < divergence
    read = window.copy()
    sub = edit & (kind == 0)
    read[sub] = BASES[(np.searchsorted(BASES, read[sub]) + rng.integers(1, 4, int(sub.sum()))) % 4]
    keep = ~(edit & (kind == 1))
    extra = edit & (kind == 2)
    pieces = np.repeat(read, np.where(extra, 2, 1))  # an inserted base: the base twice
    mask = np.repeat(keep, np.where(extra, 2, 1))
    return pieces[mask].tobytes(), window.tobytes()


def codes(seq: bytes) -> np.ndarray:
    """DNA codes as the kernels read them."""
    from readalign.engine.packing import DNA_CODES

    return DNA_CODES[np.frombuffer(seq, np.uint8)]


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median seconds of ``fn()`` over ``repeats`` runs, after one untimed run; its result."""
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def gpu_rows(read: bytes, window: bytes, rows_options: list[int], repeats: int) -> list[dict]:
    """readalign's score pass, affine and unit costs, at each strip height (0: automatic)."""
    from readalign.kernels.scored_quadrant import GLOBAL

    import readalign
    from readalign.engine.gpu.long_rows import (
        Tiles,
        device_bytes,
        edit_scores,
        layout,
        score_pair,
    )

    q, t = codes(read), codes(window)
    scoring = readalign.Scoring(**AFFINE).scores(GLOBAL)
    out = []
    for rows in rows_options:
        tiles = Tiles(rows_per_lane=rows)
        chosen, blocks, warps, _cols = layout(len(q), len(t), tiles)
        for costs, scores in (("affine", scoring), ("edit", edit_scores(GLOBAL))):
            seconds, res = timed(lambda s=scores, k=tiles: score_pair(q, t, s, tiles=k), repeats)
            out.append({"tool": "readalign-gpu", "costs": costs, "rows_per_lane": chosen,
                        "blocks": blocks, "warps": warps, "seconds": seconds,
                        "gcups": len(q) * len(t) / seconds / 1e9,
                        "penalty": -res.score, "device_bytes": device_bytes(len(q), len(t), tiles)})
    return out


def edlib_rows(read: bytes, window: bytes, repeats: int) -> list[dict]:
    """edlib on one core, global (``NW``): distance only, and with the path."""
    try:
        import edlib
    except ImportError as exc:
        return [{"tool": "edlib", "costs": "edit", "skipped": f"not importable: {exc}"}]
    out = []
    for task in ("distance", "path"):
        seconds, res = timed(lambda k=task: edlib.align(read, window, mode="NW", task=k), repeats)
        out.append({"tool": f"edlib ({task})", "costs": "edit", "seconds": seconds,
                    "gcups": len(read) * len(window) / seconds / 1e9,
                    "penalty": res["editDistance"]})
    return out


def wfa_rows(read: bytes, window: bytes, repeats: int) -> list[dict]:
    """pywfa (WFA2) on one core, end to end, score only (its ``wavefront_align(text,
    pattern)`` returns minus the penalty)."""
    try:
        from pywfa import WavefrontAligner
    except ImportError as exc:
        return [{"tool": "wfa2", "costs": "affine/edit", "skipped": f"not importable: {exc}"}]
    out = []
    text, pattern = window.decode(), read.decode()
    for costs, pen in (("affine", (AFFINE["mismatch"], AFFINE["gap_open"], AFFINE["gap_extend"])),
                       ("edit", (1, 0, 1))):
        aligner = WavefrontAligner(span="end-to-end", scope="score", mismatch=pen[0],
                                   gap_opening=pen[1], gap_extension=pen[2])
        seconds, score = timed(lambda a=aligner: a.wavefront_align(text, pattern), repeats)
        out.append({"tool": "wfa2", "costs": costs, "seconds": seconds,
                    "gcups": len(read) * len(window) / seconds / 1e9, "penalty": -int(score)})
    return out


def flag_mismatches(rows: list[dict]) -> None:
    """Mark a peer row whose penalty differs from readalign's for the same costs."""
    ours = {r["costs"]: r["penalty"] for r in rows if r["tool"] == "readalign-gpu"}
    for r in rows:
        if "penalty" in r and r["tool"] != "readalign-gpu" and r["costs"] in ours:
            r["agrees"] = r["penalty"] == ours[r["costs"]]


def print_table(length: int, read_len: int, rows: list[dict]) -> None:
    print(f"\n{read_len:,} x {length:,}")
    print(f"  {'tool':<18} {'costs':<7} {'R':>2} {'seconds':>10} {'GCUPS':>9} {'penalty':>9}  note")
    for r in rows:
        if "skipped" in r:
            print(f"  {r['tool']:<18} {r['costs']:<7} {'':>2} {'':>10} {'':>9} {'':>9}  "
                  f"skipped: {r['skipped']}")
            continue
        note = "" if r.get("agrees", True) else "SCORE DIFFERS FROM readalign"
        rows_per_lane = r.get("rows_per_lane", "")
        print(f"  {r['tool']:<18} {r['costs']:<7} {rows_per_lane!s:>2} {r['seconds']:>10.4f} "
              f"{r['gcups']:>9.1f} {r['penalty']:>9}  {note}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[100_000, 1_000_000],
                    help="window lengths (default 100000 1000000)")
    ap.add_argument("--divergence", type=float, default=0.01, help="edits per base (0.01)")
    ap.add_argument("--rows-per-lane", type=int, nargs="+", default=[0],
                    help="strip heights to time (0: chosen from the length; 1 2 4 8)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per tool (median)")
    ap.add_argument("--no-peers", action="store_true", help="time readalign alone")
    ap.add_argument("--seed", type=int, default=48)
    ap.add_argument("--json", help="write every row here, with date, commit and host")
    args = ap.parse_args(argv)
    started = provenance(__spec__.name, argv)
    print(host_line(), flush=True)
    print(f"device: {device_name('cuda')}", flush=True)
    results = []
    for length in args.lengths:
        read, window = long_pair(length, args.divergence, args.seed)
        rows = gpu_rows(read, window, args.rows_per_lane, args.repeats)
        if not args.no_peers:
            rows += edlib_rows(read, window, args.repeats)
            rows += wfa_rows(read, window, args.repeats)
        flag_mismatches(rows)
        print_table(length, len(read), rows)
        results.append({"window": length, "read": len(read), "rows": rows})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**started, "device": device_name("cuda"), "args": vars(args),
                       "pairs": results}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
