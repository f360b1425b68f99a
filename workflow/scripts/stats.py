"""A plain-text report on an indexed BAM: counts, edit distances, per-contig and samtools stats.

    python workflow/scripts/stats.py -o report.txt aligned.bam [summary.json ...]

The report starts with a short summary computed from the records (reads, primary mapped,
unmapped, secondary, mean NM and an NM histogram of primary alignments, MAPQ >= 30), then
``samtools flagstat``, ``samtools idxstats`` and the summary-number (SN) section of
``samtools stats``. readalign ``--summary-json`` files given after the BAM are added up and
listed at the end.
"""


import argparse
import json
import os
import sys
from collections import Counter

import pysam


def summarize(bam: str) -> dict:
    """Counts over the records of *bam*."""
    n_records = primary = mapped = unmapped = secondary = supplementary = mapq30 = 0
    nm_hist: Counter[int] = Counter()
    with pysam.AlignmentFile(bam, "rb", check_sq=False) as f:
        for rec in f.fetch(until_eof=True):
            n_records += 1
            if rec.is_secondary:
                secondary += 1
                continue
            if rec.is_supplementary:
                supplementary += 1
                continue
            primary += 1
            if rec.is_unmapped:
                unmapped += 1
                continue
            mapped += 1
            if rec.mapping_quality >= 30:
                mapq30 += 1
            if rec.has_tag("NM"):
                nm_hist[int(rec.get_tag("NM"))] += 1
    n_nm = sum(nm_hist.values())
    mean_nm = sum(k * v for k, v in nm_hist.items()) / n_nm if n_nm else 0.0
    return {
        "records": n_records,
        "reads": primary,
        "mapped": mapped,
        "unmapped": unmapped,
        "secondary": secondary,
        "supplementary": supplementary,
        "mapq30": mapq30,
        "mean_nm": mean_nm,
        "nm_histogram": dict(sorted(nm_hist.items())),
    }


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.2f}%" if b else "n/a"


def _add_json(acc: dict, data: dict) -> None:
    for key, value in data.items():
        if isinstance(value, bool) or "per_second" in key:   # rates do not add up
            continue
        if isinstance(value, (int, float)):
            acc[key] = acc.get(key, 0) + value
        elif isinstance(value, dict):
            _add_json(acc.setdefault(key, {}), value)


def report(bam: str, summaries: list[str] | None = None) -> str:
    """The report text for *bam* (indexed) and optional readalign summary JSON files."""
    s = summarize(bam)
    lines = [
        f"# readalign workflow report: {os.path.basename(bam)}",
        "",
        f"reads (primary or unmapped records)\t{s['reads']}",
        f"mapped\t{s['mapped']}\t{_pct(s['mapped'], s['reads'])}",
        f"unmapped\t{s['unmapped']}\t{_pct(s['unmapped'], s['reads'])}",
        f"MAPQ >= 30\t{s['mapq30']}\t{_pct(s['mapq30'], s['reads'])}",
        f"secondary records\t{s['secondary']}",
        f"supplementary records\t{s['supplementary']}",
        f"mean NM of mapped reads\t{s['mean_nm']:.3f}",
        "NM histogram (NM\treads)",
    ]
    lines += [f"  {k}\t{v}" for k, v in s["nm_histogram"].items()]
    lines += ["", "## samtools flagstat", pysam.flagstat(bam).rstrip("\n"),
              "", "## samtools idxstats (contig, length, mapped, unmapped)",
              pysam.idxstats(bam).rstrip("\n"),
              "", "## samtools stats: summary numbers"]
    lines += [line[3:] for line in pysam.stats(bam).splitlines() if line.startswith("SN\t")]
    if summaries:
        total: dict = {}
        for path in summaries:
            with open(path) as fh:
                _add_json(total, json.load(fh))
        lines += ["", f"## readalign summaries ({len(summaries)} jobs, numbers added up)",
                  json.dumps(total, indent=2, sort_keys=True)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("bam")
    ap.add_argument("summaries", nargs="*", help="readalign --summary-json files")
    args = ap.parse_args(argv)
    try:
        text = report(args.bam, args.summaries)
    except (OSError, ValueError, pysam.SamtoolsError) as exc:
        print(f"stats: error: {exc}", file=sys.stderr)
        return 1
    tmp = args.output + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, args.output)
    return 0


if "snakemake" in globals():
    from _snakemake import run_rule

    smk = globals()["snakemake"]
    run_rule(smk, main, ["-o", smk.output[0], smk.input.bam, *getattr(smk.input, "summaries", [])])
elif __name__ == "__main__":
    sys.exit(main())
