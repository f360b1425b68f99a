"""The performance page's plots, from the JSON the benchmarks write with ``--json``.

    python -m benchmarks.plots [--data benchmarks/data] [--out docs/img] [--page docs/performance.md]

Reads the JSON files in ``--data`` by the name they start with, makes one PNG per plot in
``--out``, and rewrites the table of sources in ``--page`` (between the markers
:data:`BEGIN` and :data:`END`) with the file, date, commit, device and command of each plot:

============================  =====================================================================
files                         plots
============================  =====================================================================
``bench-edit-*.json``         ``edit-by-length.png``: pairs/s and GCUPS against read length, kernel,
                              API and peers (``python -m benchmarks.bench --lengths 100,150,250``);
                              ``edit-vs-peers.png``: every row at 150 bp against the peers
``bench-scored-*.json``       ``scored-vs-peers.png``: local, global and protein rows against GASAL2
                              and parasail (``python -m benchmarks.bench --scored-only``)
``words-*.json``              ``words-vs-rapidfuzz.png`` (``python -m benchmarks.words``)
``pipeline-*.json``           ``pipeline.png``: busy seconds per stage and reads/s, warm and as a new
                              process (``python -m benchmarks.pipeline``)
``truth-*.json``              ``truth.png``: variant-call F1, misplaced reads and MAPQ calibration
                              against bwa mem and minimap2 (``python -m benchmarks.truth``)
============================  =====================================================================

Where several files of one kind are present, the newest (by the ``date`` it records) is
plotted; for the pipeline, every file measured on the same device as the newest one (say,
one per BGZF writer). A kind without files makes no plot, and the run says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

HERE = Path(__file__).resolve().parent
BEGIN = "<!-- plots: sources begin (written by python -m benchmarks.plots) -->"
END = "<!-- plots: sources end -->"
HEADLINE_LENGTH = 150
"""Read length of the edit rows' bar chart against the peers."""
PNG_METADATA = {"Software": None}
"""No matplotlib version in the files: a rerun on the same data changes no byte for that."""


@dataclass
class Source:
    """One JSON file and what it says about where it was measured."""

    path: Path
    data: dict

    @property
    def date(self) -> str:
        return str(self.data.get("date", ""))

    @property
    def device(self) -> str:
        return str(self.data.get("device", "unknown device"))

    @property
    def commit(self) -> str:
        return str(self.data.get("commit", "unknown"))

    @property
    def changes(self) -> str:
        """`` + changes`` where the tree measured had uncommitted changes, else nothing."""
        return " + changes" if self.data.get("uncommitted_changes") else ""

    def line(self) -> str:
        """Where the numbers come from, for a figure's foot."""
        return (f"{self.path.name}: {self.date or 'no date'}, commit {self.commit}{self.changes}, "
                f"{self.device}; {self.data.get('command', 'command not recorded')}")


def load(folder: Path, prefix: str) -> list[Source]:
    """Every ``prefix*.json`` in ``folder``, oldest first (by recorded date, then name)."""
    found = [Source(p, json.loads(p.read_text())) for p in sorted(folder.glob(f"{prefix}*.json"))]
    return sorted(found, key=lambda s: (s.date, s.path.name))


def rate(row: dict) -> float | None:
    """A bench row's pairs/s (None where the row did not run)."""
    value = row.get("pairs_per_s")
    return float(value) if value else None


def series_of(rows: Sequence[dict], group: str, patterns: Sequence[tuple[str, str]]
              ) -> dict[str, dict]:
    """The rows of ``group`` whose name (after the group) matches one of ``patterns``, by label;
    a pattern's label ``""`` keeps the row's own name."""
    out = {}
    for row in rows:
        if row.get("group") != group or rate(row) is None:
            continue
        rest = row["name"][len(group):].strip()
        for pattern, label in patterns:
            if re.search(pattern, rest):
                out.setdefault(label or rest, row)
                break
    return out


EDIT_SERIES = (
    (r"^readalign GPU kernel-only \(CIGAR\)", "readalign kernel, CIGAR"),
    (r"^readalign GPU kernel-only \(distance\)", "readalign kernel, distance only"),
    (r"^readalign GPU API \(CIGAR\)", "readalign.align, S arrays, CIGAR"),
    (r"^readalign GPU API \(distance\)", "readalign.align, S arrays, distance only"),
    (r"^readalign GPU API, lists of str \(CIGAR\)", "readalign.align, lists of str, CIGAR"),
    (r"^readalign GPU edit_distance .*S arrays", "edit_distance, S arrays"),
    (r"^readalign GPU edit_distance .*lists of str", "edit_distance, lists of str"),
    (r"^readalign CPU API", ""),
    (r"^edlib", ""),
    (r"^wfa2", ""),
    (r"^plain full-matrix NW", ""),
)
SCORED_SERIES = (
    (r"^readalign GPU kernel-only \(CIGAR\)", "readalign kernel, CIGAR"),
    (r"^readalign GPU kernel-only \(score\)", "readalign kernel, score only"),
    (r"^readalign GPU API, lists of str \(CIGAR\)", "readalign.align, lists of str, CIGAR"),
    (r"^readalign GPU API \(CIGAR\)", "readalign.align, lists of str, CIGAR"),
    (r"^readalign GPU API \(score\)", "readalign.align, lists of str, score only"),
    (r"^GASAL2", "GASAL2 (GPU, with traceback)"),
    (r"^parasail", ""),
    (r"^readalign CPU API", ""),
)
PEERS = ("wfa2", "edlib", "GASAL2", "parasail")
"""Peers a bar's ratio is given against, the first found in a group."""
OTHERS = re.compile(r"wfa2|edlib|GASAL2|parasail|rapidfuzz|plain full-matrix", re.IGNORECASE)
"""Labels of other tools' bars (drawn grey; readalign's blue)."""


def short(x: float) -> str:
    """``x`` with three significant digits and a G, M or k suffix."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def _foot(fig, sources: Sequence[Source]) -> None:
    """Write where the numbers come from under the axes."""
    text = "\n".join(textwrap.fill(s.line(), 150) for s in sources)
    fig.text(0.01, 0.005, text, fontsize=6.5, va="bottom", ha="left", color="0.3")


def _save(fig, path: Path, sources: Sequence[Source]) -> None:
    lines = sum(len(textwrap.wrap(s.line(), 150)) for s in sources)
    fig.tight_layout(rect=(0, 0.02 + 0.022 * lines, 1, 1))
    _foot(fig, sources)
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    plt.close(fig)


def _bars(ax, labels: Sequence[str], values: Sequence[float], notes: Sequence[str],
          xlabel: str, by_value: bool = True) -> None:
    """Horizontal bars on a log scale, each with its note: largest on top, or (``by_value``
    false) in the order given, top down."""
    order = (sorted(range(len(values)), key=lambda i: values[i]) if by_value
             else list(reversed(range(len(values)))))
    ys = range(len(order))
    ax.barh(ys, [values[i] for i in order],
            color=["C7" if OTHERS.search(labels[i]) else "C0" for i in order])
    ax.set_yticks(list(ys), [labels[i] for i in order], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    for y, i in zip(ys, order, strict=True):
        ax.text(values[i], y, f" {notes[i]}", va="center", fontsize=7)
    ax.margins(x=0.35)


def _ratio_notes(series: dict[str, dict]) -> list[str]:
    """Each row's pairs/s, and its ratio to the first peer of :data:`PEERS` present."""
    base = next(((label, rate(row)) for peer in PEERS for label, row in series.items()
                 if label.startswith(peer)), None)
    notes = []
    for row in series.values():
        note = f"{short(rate(row))}/s"
        if base and base[1]:
            note += f" = {rate(row) / base[1]:.3g}x {base[0].split(' ')[0]}"
        notes.append(note)
    return notes


def _length_groups(rows: Sequence[dict]) -> list[tuple[int, str]]:
    """``(read length, group)`` of the edit rows' groups (``150bp``), by length."""
    found = {int(m.group(1)): g for g in {r.get("group", "") for r in rows}
             if (m := re.fullmatch(r"(\d+)bp", g))}
    return sorted(found.items())


def plot_edit_by_length(src: Source, out: Path) -> bool:
    """Pairs/s and GCUPS against read length, every edit series of one bench file."""
    rows = src.data["rows"]
    groups = _length_groups(rows)
    if not groups:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    labels = {label for _, g in groups for label in series_of(rows, g, EDIT_SERIES)}
    for k, label in enumerate(sorted(labels)):
        pts = [(length, series_of(rows, g, EDIT_SERIES).get(label)) for length, g in groups]
        pts = [(length, row) for length, row in pts if row is not None]
        style = "-o" if label.startswith(("readalign", "edit_")) else "--s"
        xs = [length for length, _ in pts]
        left.plot(xs, [rate(r) for _, r in pts], style, label=label, color=f"C{k % 10}")
        right.plot(xs, [r["gcups"] for _, r in pts], style, label=label, color=f"C{k % 10}")
    for ax, what in ((left, "pairs/s"), (right, "GCUPS (read x window cells / s / 1e9)")):
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xlabel("read length (windows 20 bases longer)")
        ax.set_ylabel(what)
        ax.set_xticks([length for length, _ in groups], [str(length) for length, _ in groups])
        ax.minorticks_off()
        ax.grid(True, which="both", alpha=0.3)
    left.set_title("edit distance: throughput against read length")
    right.set_title("cells per second")
    right.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    _save(fig, out, [src])
    return True


def plot_edit_vs_peers(src: Source, out: Path) -> bool:
    """Every edit row at :data:`HEADLINE_LENGTH` (else the middle length), ratios to a peer."""
    groups = _length_groups(src.data["rows"])
    if not groups:
        return False
    length, group = next(((n, g) for n, g in groups if n == HEADLINE_LENGTH),
                         groups[len(groups) // 2])
    series = series_of(src.data["rows"], group, EDIT_SERIES)
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(series) + 1.6))
    _bars(ax, list(series), [rate(r) for r in series.values()], _ratio_notes(series), "pairs/s")
    ax.set_title(f"edit distance, {length} bp reads, infix, against peers on every host core")
    _save(fig, out, [src])
    return True


SCORED_GROUPS = (("scored 150bp local", "150 bp local, 1/4/6/1"),
                 ("scored 150bp global", "150 bp global, 1/4/6/1"),
                 ("protein 300 local", "protein 300 local, BLOSUM62 10/1"))


def plot_scored_vs_peers(src: Source, out: Path) -> bool:
    """One panel per scored workload: readalign's kernel and API against GASAL2 and parasail."""
    panels = [(title, series_of(src.data["rows"], g, SCORED_SERIES)) for g, title in SCORED_GROUPS]
    panels = [(title, s) for title, s in panels if s]
    if not panels:
        return False
    heights = [len(s) + 1 for _, s in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.42 * sum(heights) + 1.8),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (title, series) in zip(axes[:, 0], panels, strict=True):
        _bars(ax, list(series), [rate(r) for r in series.values()], _ratio_notes(series),
              "pairs/s")
        ax.set_title(f"scored alignment: {title}", fontsize=10)
    _save(fig, out, [src])
    return True


def plot_words(src: Source, out: Path) -> bool:
    """Each word-list workload: readalign end to end (and its kernel) against rapidfuzz."""
    rows = [r for r in src.data["rows"] if not r.get("error") and r.get("readalign_s")]
    if not rows:
        return False
    labels, values, notes = [], [], []
    for r in rows:
        for who, key in (("readalign", "readalign_s"), ("readalign kernel only", "kernel_s"),
                         ("rapidfuzz (every core)", "rapidfuzz_s")):
            if r.get(key):
                labels.append(f"{r['workload']}: {who}")
                values.append(r["pairs"] / r[key])
                note = f"{short(values[-1])}/s"
                if key == "readalign_s" and r.get("rapidfuzz_s"):
                    note += f" = {r['rapidfuzz_s'] / r[key]:.3g}x rapidfuzz"
                notes.append(note)
    fig, ax = plt.subplots(figsize=(11, 0.4 * len(labels) + 1.6))
    _bars(ax, labels, values, notes, "pairs/s", by_value=False)
    ax.set_title("word lists: readalign.cdist / edit_distance against rapidfuzz")
    _save(fig, out, [src])
    return True


STAGES = ("read", "pairs", "align", "assemble", "write")


def _pipeline_label(src: Source) -> str:
    d = src.data
    level = d.get("compression_level")
    return (f"{d.get('kernel', '?')}, BGZF {d.get('deflate', '?')}, level "
            f"{'default' if level is None else level}, {d.get('threads', '?')} threads")


def plot_pipeline(sources: Sequence[Source], out: Path) -> bool:
    """Busy seconds per stage (warm run) and reads/s, warm and as a new process, per file."""
    warm = [s for s in sources if "stage_seconds" in s.data]
    if not sources:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 1.2 * max(len(warm), 1) + 3.5),
                                      gridspec_kw={"width_ratios": (2, 3)})
    for k, src in enumerate(warm):
        busy = src.data["stage_seconds"]
        ys = [i + k / (len(warm) + 1) for i in range(len(STAGES) + 1)]
        values = [busy.get(s, 0.0) for s in STAGES] + [src.data["total_seconds"]]
        left.barh(ys, values, height=1 / (len(warm) + 1), label=_pipeline_label(src))
    left.set_yticks(range(len(STAGES) + 1), [*STAGES, "whole run (wall)"])
    left.invert_yaxis()
    left.set_xlabel("seconds (stages overlap: busy time in each stage's thread)")
    left.set_title(f"readalign align, {sources[-1].data.get('reads', 0):,} reads: stages")
    if warm:
        left.legend(fontsize=7)
    labels, values, notes = [], [], []
    for src in sources:
        runs = [v for per in src.data.get("runs_reads_per_second", {}).values() for v in per]
        runs = runs or ([src.data["reads_per_second"]] if "reads_per_second" in src.data else [])
        if runs:
            labels.append(f"warm: {_pipeline_label(src)}")
            values.append(sorted(runs)[len(runs) // 2])
            notes.append(f"median {short(values[-1])} ({len(runs)} runs, "
                         f"{short(min(runs))}-{short(max(runs))})")
        cli = [c["reads_per_second"] for c in src.data.get("cli", [])]
        if cli:
            labels.append(f"new process: {src.path.stem}")
            values.append(max(cli))
            notes.append(", ".join(short(c) for c in cli))
    if values:
        _bars(right, labels, values, notes, "reads/s", by_value=False)
    right.set_title("files in, finished BAM out")
    _save(fig, out, sources)
    return True


def _truth_rows(src: Source, read_set: str) -> list[dict]:
    return [r for r in src.data["rows"] if r.get("set") == read_set and "bam" in r]


def _truth_f1(ax, src: Source) -> None:
    """SNP and indel F1 of every aligner on the plain and adapter sets."""
    runs = list(dict.fromkeys(r["run"] for r in src.data["rows"] if "snp" in r))
    width = 0.8 / max(len(runs), 1)
    ticks = []
    for x, (read_set, kind) in enumerate((s, k) for s in ("plain", "adapter") for k in ("snp", "indel")):
        ticks.append(f"{kind.upper()} F1\n{read_set}")
        for k, run in enumerate(runs):
            row = next((r for r in src.data["rows"] if r["run"] == run and r["set"] == read_set
                        and kind in r), None)
            if row:
                ax.bar(x + k * width, row[kind]["f1"], width, color=f"C{k}",
                       label=run if x == 0 else None)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(ticks))], ticks, fontsize=8)
    values = [r[k]["f1"] for r in src.data["rows"] for k in ("snp", "indel") if k in r]
    if values:
        ax.set_ylim(min(values) - 0.003, min(1.0, max(values) + 0.002))
    ax.set_title("variant calls against the truth (bcftools)")
    ax.legend(fontsize=7)


def _truth_misplaced(ax, src: Source) -> None:
    """Reads misplaced at MAPQ >= 30 and tails that should have been clipped, per aligner."""
    rows = _truth_rows(src, "plain") + _truth_rows(src, "adapter")
    labels = [f"{r['run']} ({r['set']})" for r in rows]
    ys = range(len(rows))
    ax.barh([y - 0.2 for y in ys], [r["bam"]["high_mapq_misplaced"] for r in rows], 0.4,
            label="misplaced at MAPQ >= 30")
    ax.barh([y + 0.2 for y in ys], [r["bam"]["tails_to_clip"] for r in rows], 0.4,
            label="ends that score better clipped")
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.set_xscale("symlog")
    ax.invert_yaxis()
    ax.set_title("placement and clipping (counts)")
    ax.legend(fontsize=7)


def _truth_calibration(ax, src: Source) -> None:
    """Share of misplaced reads per MAPQ range, plain set."""
    bins = ("0", "1-9", "10-19", "20-29", "30-39", "40-59", "60")
    for k, r in enumerate(_truth_rows(src, "plain")):
        shares = [bad / n if n else float("nan") for n, bad in r["bam"]["mapq_bins"]]
        ax.plot(range(len(shares)), shares, "-o", color=f"C{k}", label=r["run"])
    promise = [10 ** (-lo / 10) for lo in (0, 1, 10, 20, 30, 40, 60)]
    ax.plot(range(len(promise)), promise, ":", color="0.5", label="10^(-MAPQ/10)")
    ax.set_xticks(range(len(bins)), bins, fontsize=8)
    ax.set_yscale("symlog", linthresh=1e-5)
    ax.set_ylim(0, 2)
    ax.set_xlabel("MAPQ")
    ax.set_ylabel("misplaced share")
    ax.set_title("MAPQ calibration (plain set; 0 shown as 0)")
    ax.legend(fontsize=7)


def plot_truth(src: Source, out: Path) -> bool:
    """Accuracy on simulated reads of E. coli against bwa mem and minimap2."""
    if not _truth_rows(src, "plain"):
        return False
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    _truth_f1(axes[0], src)
    _truth_misplaced(axes[1], src)
    _truth_calibration(axes[2], src)
    truth = src.data.get("truth", {})
    fig.suptitle(f"truth set: {truth.get('snps', 0):,} SNPs and {truth.get('indels', 0):,} "
                 "indels simulated (dwgsim), candidates from minimap2 -x sr", fontsize=10)
    _save(fig, out, [src])
    return True


@dataclass
class Plot:
    """One image: the files it reads, how it picks among them, and how it draws."""

    image: str
    prefix: str
    draw: Callable
    every_file_of_the_device: bool = False


PLOTS = (
    Plot("edit-by-length.png", "bench-edit", plot_edit_by_length),
    Plot("edit-vs-peers.png", "bench-edit", plot_edit_vs_peers),
    Plot("scored-vs-peers.png", "bench-scored", plot_scored_vs_peers),
    Plot("words-vs-rapidfuzz.png", "words", plot_words),
    Plot("pipeline.png", "pipeline", plot_pipeline, every_file_of_the_device=True),
    Plot("truth.png", "truth", plot_truth),
)


def chosen(plot: Plot, folder: Path) -> list[Source]:
    """The files ``plot`` draws: the newest of its kind, or (pipeline) all of the newest's device."""
    found = load(folder, plot.prefix)
    if not found:
        return []
    if plot.every_file_of_the_device:
        return [s for s in found if s.device == found[-1].device]
    return [found[-1]]


def make(data: Path, out: Path) -> list[tuple[str, list[Source]]]:
    """Every plot whose files are in ``data``, into ``out``; ``(image, sources)`` of each made."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for plot in PLOTS:
        sources = chosen(plot, data)
        target = out / plot.image
        drawn = bool(sources) and (plot.draw(sources, target) if plot.every_file_of_the_device
                                   else plot.draw(sources[0], target))
        if drawn:
            made.append((plot.image, sources))
            print(f"{target}: from {', '.join(s.path.name for s in sources)}")
        else:
            print(f"{target}: not made (no {plot.prefix}*.json in {data} with rows it plots)")
    return made


def sources_table(made: Sequence[tuple[str, list[Source]]], page: Path, out: Path) -> str:
    """The markdown table of where each image's numbers come from (links relative to ``page``)."""
    lines = ["| plot | file | date | commit | device | command |", "|---|---|---|---|---|---|"]
    for image, sources in made:
        link = Path(os.path.relpath(out.resolve(), page.resolve().parent)) / image
        for s in sources:
            lines.append(f"| [{image}]({link.as_posix()}) | `{s.path.name}` | {s.date[:10]} | "
                         f"`{s.commit}`{s.changes} | {s.device} | `{s.data.get('command', '')}` |")
    return "\n".join(lines)


def update_page(page: Path, table: str) -> None:
    """Put ``table`` between :data:`BEGIN` and :data:`END` in ``page`` (both must be there)."""
    text = page.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{page}: no '{BEGIN}' ... '{END}' markers to put the sources table between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{BEGIN}\n\n{table}\n\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data", help="folder of benchmark JSON")
    ap.add_argument("--out", type=Path, default=HERE.parent / "docs" / "img",
                    help="folder the PNGs go to")
    ap.add_argument("--page", type=Path, default=HERE.parent / "docs" / "performance.md",
                    help="page whose sources table is rewritten ('-': none)")
    args = ap.parse_args(argv)
    made = make(args.data, args.out)
    if str(args.page) != "-":
        update_page(args.page, sources_table(made, args.page, args.out))


if __name__ == "__main__":
    main()
