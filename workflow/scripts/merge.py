"""Merge chunk BAMs into one coordinate-sorted, indexed BAM (htslib through pysam).

All inputs must share one sequence dictionary (the same @SQ lines in the same order), as the
chunks of one ``readalign align`` scatter do. The merged header keeps the first input's @HD and
@SQ lines, every distinct @RG (by ID) and every distinct @PG (a @PG ID used by different lines
gets a ``.1``, ``.2``, ... suffix, as ``samtools merge`` does), then the records are
concatenated (``samtools cat``) and coordinate-sorted (``samtools sort``), or merged directly
(``samtools merge``) when every input is already coordinate-sorted; one @PG line
(``readalign-merge``) records the merge. The index (.bai) is written
next to the output. Outputs go to temporary names first: a failure leaves no output behind.

    python workflow/scripts/merge.py -o merged.bam [-@ THREADS] chunk0.bam chunk1.bam ...
"""


import argparse
import copy
import os
import sys
import tempfile
from contextlib import ExitStack

import pysam


class MergeError(Exception):
    """Inputs that cannot be merged."""


def _header(path: str) -> dict:
    with pysam.AlignmentFile(path, "rb", check_sq=False) as f:
        return f.header.to_dict()


def _sq_key(header: dict) -> list[tuple[str, int]]:
    return [(sq["SN"], int(sq["LN"])) for sq in header.get("SQ", [])]


def merged_header(headers: list[dict], paths: list[str] | None = None) -> dict:
    """One header for the records of all *headers* (see the module's docstring)."""
    if not headers:
        raise MergeError("no input BAM")
    paths = paths or [f"input {i + 1}" for i in range(len(headers))]
    first = headers[0]
    out: dict = {"HD": dict(first.get("HD", {"VN": "1.6"}))}
    out["HD"]["SO"] = "coordinate"
    for key in ("GO", "SS"):            # grouping / sub-sorting of the inputs no longer hold
        out["HD"].pop(key, None)
    sq = _sq_key(first)
    for path, h in zip(paths[1:], headers[1:], strict=True):
        if _sq_key(h) != sq:
            raise MergeError(f"{path}: its @SQ lines differ from those of {paths[0]}")
    if first.get("SQ"):
        out["SQ"] = copy.deepcopy(first["SQ"])
    rgs: dict[str, dict] = {}
    for path, h in zip(paths, headers, strict=True):
        for rg in h.get("RG", []):
            seen = rgs.get(rg["ID"])
            if seen is None:
                rgs[rg["ID"]] = dict(rg)
            elif seen != rg:
                raise MergeError(f"{path}: @RG ID:{rg['ID']} differs from the same ID "
                                 "in an earlier input")
    if rgs:
        out["RG"] = list(rgs.values())
    pgs: list[dict] = []
    ids: set[str] = set()
    for h in headers:
        renamed: dict[str, str] = {}
        for pg in h.get("PG", []):
            pg = dict(pg)
            if "PP" in pg and pg["PP"] in renamed:
                pg["PP"] = renamed[pg["PP"]]
            if any(pg == other for other in pgs):
                continue
            new_id, n = pg["ID"], 0
            while new_id in ids:
                n += 1
                new_id = f"{pg['ID']}.{n}"
            if new_id != pg["ID"]:
                renamed[pg["ID"]] = new_id
                pg["ID"] = new_id
            ids.add(new_id)
            pgs.append(pg)
    if pgs:
        out["PG"] = pgs
    comments = [co for h in headers for co in h.get("CO", [])]
    if comments:
        out["CO"] = list(dict.fromkeys(comments))
    return out


def _is_coordinate_sorted(header: dict) -> bool:
    return header.get("HD", {}).get("SO") == "coordinate"


def merge(inputs: list[str], output: str, threads: int = 1) -> None:
    """Merge *inputs* into the coordinate-sorted BAM *output* and index it (.bai)."""
    headers = [_header(p) for p in inputs]
    header = merged_header(headers, inputs)
    ids = {pg["ID"] for pg in header.get("PG", [])}
    pg_id = "readalign-merge"
    while pg_id in ids:
        pg_id += "+"
    header.setdefault("PG", []).append({
        "ID": pg_id, "PN": "readalign-merge",
        "CL": " ".join(["merge.py", "-o", output, "-@", str(threads), *inputs]),
    })
    out_dir = os.path.dirname(os.path.abspath(output))
    os.makedirs(out_dir, exist_ok=True)
    threads = max(1, int(threads))
    with ExitStack() as stack:
        tmpdir = stack.enter_context(tempfile.TemporaryDirectory(dir=out_dir,
                                                                 prefix=".merge-"))
        header_sam = os.path.join(tmpdir, "header.sam")
        with pysam.AlignmentFile(header_sam, "wh", header=header):
            pass
        sorted_bam = os.path.join(tmpdir, "sorted.bam")
        if all(_is_coordinate_sorted(h) for h in headers):
            pysam.merge("--no-PG", "-c", "-p", "-f", "-h", header_sam, "-@", str(threads),
                        "-o", sorted_bam, *inputs, catch_stdout=False)
        else:
            concat = os.path.join(tmpdir, "concat.bam")
            pysam.cat("--no-PG", "-h", header_sam, "-o", concat, *inputs, catch_stdout=False)
            pysam.sort("--no-PG", "-@", str(threads), "-m", "512M",
                       "-T", os.path.join(tmpdir, "sort"), "-o", sorted_bam, concat,
                       catch_stdout=False)
        pysam.index(sorted_bam, sorted_bam + ".bai", catch_stdout=False)
        # index first, then the BAM: a complete-looking BAM always has its index
        os.replace(sorted_bam + ".bai", output + ".bai")
        os.replace(sorted_bam, output)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, help="merged, sorted BAM (.bai beside it)")
    ap.add_argument("-@", "--threads", type=int, default=1)
    ap.add_argument("inputs", nargs="+", help="chunk BAMs")
    args = ap.parse_args(argv)
    try:
        merge(args.inputs, args.output, args.threads)
    except (MergeError, OSError, ValueError, pysam.SamtoolsError) as exc:
        print(f"merge: error: {exc}", file=sys.stderr)
        return 1
    print(f"merge: {len(args.inputs)} BAMs -> {args.output}", file=sys.stderr)
    return 0


if "snakemake" in globals():
    from _snakemake import run_rule

    smk = globals()["snakemake"]
    run_rule(smk, main, ["-o", smk.output.bam, "-@", str(smk.threads), *smk.input.bams])
elif __name__ == "__main__":
    sys.exit(main())
