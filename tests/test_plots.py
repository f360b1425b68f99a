"""``python -m benchmarks.plots``: every plot drawn from benchmark JSON, the sources table written."""

from __future__ import annotations

import json

import pytest
from conftest import require_module

PNG = b"\x89PNG\r\n\x1a\n"


def _stamp(commit: str, date: str, device: str, command: str) -> dict:
    return {"date": date, "commit": commit, "uncommitted_changes": False, "command": command,
            "host": "test host x2", "device": device}


def _row(name: str, group: str, pairs: int, seconds: float | None, cells: int = 0) -> dict:
    """A row as ``benchmarks.bench.row`` writes it."""
    return {"name": name, "pairs": pairs, "cells": cells or pairs * 25_000, "seconds": seconds,
            "pairs_per_s": pairs / seconds if seconds else None,
            "gcups": (cells or pairs * 25_000) / seconds / 1e9 if seconds else None, "group": group}


def bench_edit() -> dict:
    rows = []
    for length in (100, 150, 250):
        g = f"{length}bp"
        rows += [_row(f"{g} edlib (16 procs, CIGAR)", g, 1000, 0.002 * length / 100),
                 _row(f"{g} wfa2 (16 procs, CIGAR)", g, 1000, None),
                 _row(f"{g} readalign GPU kernel-only (CIGAR)", g, 100_000, 0.003),
                 _row(f"{g} readalign GPU kernel-only (distance)", g, 100_000, 0.001),
                 _row(f"{g} readalign GPU API (CIGAR)", g, 100_000, 0.005),
                 _row(f"{g} readalign GPU API, lists of str (CIGAR)", g, 100_000, 0.007),
                 _row(f"{g} readalign GPU API, lists of str to res.cigars()", g, 100_000, 0.02)]
    rows.append(_row("paper 32x32 GPU kernel-only (global, CIGAR)", "paper", 10_000, 0.001))
    return {**_stamp("abc1234", "2026-11-28T10:00:00+00:00", "CUDA GPU NVIDIA H100",
                     "python -m benchmarks.bench --lengths 100,150,250"), "rows": rows}


def bench_scored() -> dict:
    rows = []
    for g in ("scored 150bp local", "scored 150bp global"):
        rows += [_row(f"{g} parasail (16 procs, CIGAR)", g, 2000, 0.01),
                 _row(f"{g} readalign CPU API (16 thr, CIGAR)", g, 2000, 0.05),
                 _row(f"{g} GASAL2 GPU (ok)", g, 100_000, 0.015),
                 _row(f"{g} readalign GPU kernel-only (score)", g, 100_000, 0.001),
                 _row(f"{g} readalign GPU kernel-only (CIGAR)", g, 100_000, 0.0025),
                 _row(f"{g} readalign GPU API, lists of str (CIGAR)", g, 100_000, 0.0045)]
    g = "protein 300 local"
    rows += [_row(f"{g} parasail (16 procs, score)", g, 200, 0.01),
             _row(f"{g} readalign GPU kernel-only (score)", g, 20_000, 0.0015),
             _row(f"{g} readalign GPU API (CIGAR)", g, 20_000, 0.005)]
    return {**_stamp("abc1234", "2026-11-28T10:05:00+00:00", "CUDA GPU NVIDIA H100",
                     "python -m benchmarks.bench --scored-only"), "rows": rows}


def words() -> dict:
    rows = [{"workload": "words 2000x2000 self dense", "pairs": 4_000_000, "rapidfuzz_s": 0.2,
             "readalign_s": 0.02, "kernel_s": 0.005, "equal": True, "error": None},
            {"workload": "words 2000x2000 self dense, S arrays", "pairs": 4_000_000,
             "rapidfuzz_s": None, "readalign_s": 0.018, "kernel_s": None, "equal": True,
             "error": None},
            {"workload": "paper", "pairs": 0, "rapidfuzz_s": None, "readalign_s": None,
             "kernel_s": None, "equal": None, "error": "MemoryError: too big"}]
    return {**_stamp("def5678", "2026-11-28T11:00:00+00:00", "CPU, 2 threads",
                     "python -m benchmarks.words --queries 2000"), "rows": rows}


def pipeline(deflate: str, device: str, date: str) -> dict:
    stages = {"read": 0.9, "pairs": 0.4, "align": 1.0, "assemble": 0.7, "write": 0.3}
    return {**_stamp("abc1234", date, device, "python -m benchmarks.pipeline --reads 2000000"),
            "reads": 2_000_000, "kernel": "cuda", "deflate": deflate, "threads": 16,
            "compression_level": None, "stage_seconds": stages, "total_seconds": 1.1,
            "reads_per_second": 1.8e6, "runs_reads_per_second": {"sr": [1.7e6, 1.8e6, 1.9e6]},
            "cli": [{"wall_seconds": 3.2, "pipeline_seconds": 2.1, "reads_per_second": 6.2e5,
                     "stage_seconds": stages}]}


def truth() -> dict:
    def row(run, read_set, snp, indel, misplaced, tails):
        bins = [[100, 70], [10, 1], [20, 0], [30, 0], [40, 0], [50, 0], [9000, 0]]
        return {"run": run, "set": read_set, "reads": 9250, "reads_per_s": 5000.0,
                "bam": {"high_mapq_misplaced": misplaced, "high_mapq": 9000, "tails_to_clip": tails,
                        "placed_pct": 98.8, "mapq_bins": bins},
                "snp": {"tp": 700, "fp": 1, "fn": 8, "precision": 0.998, "recall": 0.989,
                        "f1": snp},
                "indel": {"tp": 150, "fp": 1, "fn": 4, "precision": 0.99, "recall": 0.97,
                          "f1": indel, "loose_tp_within_5bp": 151}}
    rows = [row(r, s, 0.99 + i / 1000, 0.985 + i / 1000, i, 0)
            for s in ("plain", "adapter")
            for i, r in enumerate(("readalign sr", "bwa mem", "minimap2 -ax sr"))]
    rows.append({"run": "readalign sr", "set": "contig-end", "reads": 500, "reads_per_s": 90.0,
                 "bam": {"high_mapq_misplaced": 0, "high_mapq": 400, "tails_to_clip": 0,
                         "placed_pct": 100.0, "mapq_bins": [[0, 0]] * 7}})
    return {**_stamp("0a1b2c3", "2026-11-28T12:00:00+00:00", "CPU, 2 threads",
                     "python -m benchmarks.truth --out /tmp/t --quick"),
            "truth": {"snps": 708, "indels": 154}, "rows": rows}


@pytest.fixture
def folders(tmp_path):
    data, img = tmp_path / "data", tmp_path / "docs" / "img"
    data.mkdir()
    files = {"bench-edit-h100.json": bench_edit(), "bench-scored-h100.json": bench_scored(),
             "words-cpu.json": words(),
             "pipeline-isal.json": pipeline("isal", "NVIDIA H100", "2026-11-28T09:00:00+00:00"),
             "pipeline-htslib.json": pipeline("zlib", "NVIDIA H100", "2026-11-28T09:30:00+00:00"),
             "pipeline-old.json": pipeline("zlib", "CPU, 2 threads", "2026-11-20T09:00:00+00:00"),
             "truth-cpu.json": truth()}
    for name, content in files.items():
        (data / name).write_text(json.dumps(content))
    img.parent.mkdir()
    return data, img, img.parent / "performance.md"


def _page(plots, page):
    page.write_text(f"# Performance\n\nbefore\n\n{plots.BEGIN}\nold table\n{plots.END}\n\nafter\n")


def test_every_plot_is_drawn_and_the_page_names_its_sources(folders):
    require_module("matplotlib", "bench")
    from benchmarks import plots

    data, img, page = folders
    _page(plots, page)
    plots.main(["--data", str(data), "--out", str(img), "--page", str(page)])
    for plot in plots.PLOTS:
        png = (img / plot.image).read_bytes()
        assert png.startswith(PNG) and len(png) > 10_000, plot.image
    text = page.read_text()
    assert text.startswith("# Performance\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "old table" not in text
    table = text.split(plots.BEGIN)[1].split(plots.END)[0]
    assert "| [truth.png](img/truth.png) | `truth-cpu.json` | 2026-11-28 | `0a1b2c3` | " in table
    assert "`python -m benchmarks.bench --scored-only`" in table
    # the pipeline plot takes both files of the newest file's device, not the older CPU one
    assert "`pipeline-isal.json`" in table and "`pipeline-htslib.json`" in table
    assert "pipeline-old.json" not in table


def test_the_newest_file_of_a_kind_is_plotted(folders):
    require_module("matplotlib", "bench")
    from benchmarks import plots

    data, img, page = folders
    older = bench_edit()
    older.update(date="2026-11-01T00:00:00+00:00", commit="0000000")
    (data / "bench-edit-z-older.json").write_text(json.dumps(older))
    made = dict(plots.make(data, img))
    assert [s.path.name for s in made["edit-by-length.png"]] == ["bench-edit-h100.json"]


def test_a_kind_without_files_makes_no_plot_and_says_so(folders, capsys):
    require_module("matplotlib", "bench")
    from benchmarks import plots

    data, img, page = folders
    (data / "truth-cpu.json").unlink()
    made = dict(plots.make(data, img))
    assert "truth.png" not in made and not (img / "truth.png").exists()
    assert "truth.png: not made (no truth*.json" in capsys.readouterr().out


def test_a_page_without_markers_is_refused(folders):
    require_module("matplotlib", "bench")
    from benchmarks import plots

    data, img, page = folders
    page.write_text("# Performance\n")
    with pytest.raises(SystemExit, match="markers"):
        plots.main(["--data", str(data), "--out", str(img), "--page", str(page)])
    assert page.read_text() == "# Performance\n"
