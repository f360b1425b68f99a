"""The example workflow's helper scripts (workflow/scripts/): scatter, merge and stats.

Small synthetic inputs; no alignment, no Snakemake: these run in well under a second.
"""

import gzip
import importlib.util
import json
import os
import random
import re
import sys
from pathlib import Path

import pysam
import pytest
from conftest import REPO, require_module

from readalign.io.reads import iter_reads
from readalign.io.reads import reads_format as read_reads_format

yaml = require_module("yaml", "test")

SCRIPTS = REPO / "workflow" / "scripts"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"workflow_{name}", SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


scatter = _load("scatter")
merge = _load("merge")
stats = _load("stats")

CONTIGS = [("chrA", 5000), ("chrB", 3000)]


def _write_fastq(path, names, gz=False):
    rng = random.Random(1)
    opener = gzip.open if gz else open
    with opener(path, "wt") as fh:
        for name in names:
            seq = "".join(rng.choice("ACGT") for _ in range(30))
            fh.write(f"@{name} some comment\n{seq}\n+\n{'I' * 30}\n")


def _paf_line(name, contig="chrA", start=100):
    return (f"{name}\t30\t0\t30\t+\t{contig}\t5000\t{start}\t{start + 30}\t30\t30\t60\n")


def _read_names_fastq(path):
    with pysam.FastxFile(str(path)) as f:
        return [r.name for r in f]


def _split(tmp_path, reads, cands, n, ext="paf", rext="fq"):
    routs = [str(tmp_path / f"c{i}.{rext}") for i in range(n)]
    couts = [str(tmp_path / f"c{i}.{ext}") for i in range(n)]
    counts = scatter.run(str(reads), str(cands), routs, couts)
    return counts, routs, couts


# --- scatter ---------------------------------------------------------------------------------

def test_scatter_keeps_reads_and_their_candidates_together(tmp_path):
    names = [f"r{i}" for i in range(10)]
    reads = tmp_path / "reads.fq.gz"
    _write_fastq(reads, names, gz=True)
    # r1 and r6 have no candidates; r3 has three, r7 two
    lines = []
    for i, name in enumerate(names):
        k = {1: 0, 6: 0, 3: 3, 7: 2}.get(i, 1)
        lines += [_paf_line(name, start=100 + 40 * j) for j in range(k)]
    cands = tmp_path / "cands.paf"
    cands.write_text("".join(lines))

    counts, routs, couts = _split(tmp_path, reads, cands, 3)

    assert counts == [4, 3, 3]
    chunk_reads = [_read_names_fastq(p) for p in routs]
    assert [n for c in chunk_reads for n in c] == names          # contiguous, in order
    for creads, cpath in zip(chunk_reads, couts, strict=True):
        cnames = [line.split("\t")[0] for line in Path(cpath).read_text().splitlines()]
        assert set(cnames) <= set(creads)                        # only their own reads
        assert cnames == [line.split("\t")[0] for line in lines if line.split("\t")[0]
                          in creads]                             # all of them, in order
    # records survive byte for byte (comments included)
    assert "some comment" in Path(routs[0]).read_text()
    assert "".join(Path(p).read_text() for p in couts) == cands.read_text()


def test_scatter_more_chunks_than_reads_gives_empty_chunks(tmp_path):
    reads = tmp_path / "reads.fq"
    _write_fastq(reads, ["a", "b"])
    cands = tmp_path / "cands.paf"
    cands.write_text(_paf_line("a") + _paf_line("b") + _paf_line("b", start=900))
    counts, routs, couts = _split(tmp_path, reads, cands, 4)
    assert counts == [1, 0, 1, 0]
    assert [os.path.getsize(p) == 0 for p in couts] == [False, True, False, True]


def test_scatter_copies_tsv_header_and_comments_to_every_chunk(tmp_path):
    reads = tmp_path / "reads.fq"
    _write_fastq(reads, ["a", "b", "c"])
    cands = tmp_path / "cands.tsv"
    cands.write_text("# from a k-mer filter\nread_name\tcontig\tstart\tend\tstrand\n"
                     "a\tchrA\t10\t60\t+\nc\tchrB\t5\t55\t-\n")
    _, _, couts = _split(tmp_path, reads, cands, 3, ext="tsv")
    texts = [Path(p).read_text() for p in couts]
    for text in texts:
        assert text.startswith("# from a k-mer filter\nread_name\tcontig")
    assert texts[0].endswith("a\tchrA\t10\t60\t+\n")
    assert "\n" + "c\tchrB" in texts[2] and "chr" not in texts[1].split("strand\n")[1]


def test_scatter_sam_candidates_and_unaligned_bam_reads(tmp_path):
    header = {"HD": {"VN": "1.6"}, "SQ": [{"SN": n, "LN": n_len} for n, n_len in CONTIGS]}
    ubam = tmp_path / "reads.bam"
    with pysam.AlignmentFile(str(ubam), "wb", header={"HD": {"VN": "1.6"}}) as out:
        for name in ("x", "y", "z"):
            rec = pysam.AlignedSegment(out.header)
            rec.query_name, rec.query_sequence, rec.flag = name, "ACGTACGTAC", 4
            out.write(rec)
    sam = tmp_path / "cands.sam"
    with pysam.AlignmentFile(str(sam), "wh", header=header) as out:
        for name, pos in (("x", 10), ("z", 50), ("z", 70)):
            rec = pysam.AlignedSegment(out.header)
            rec.query_name, rec.reference_id, rec.reference_start = name, 0, pos
            rec.cigarstring, rec.query_sequence = "10M", "ACGTACGTAC"
            out.write(rec)
    counts, routs, couts = _split(tmp_path, ubam, sam, 2, ext="sam", rext="bam")
    assert counts == [2, 1]
    with pysam.AlignmentFile(routs[1], "rb", check_sq=False) as f:
        assert [r.query_name for r in f.fetch(until_eof=True)] == ["z"]
    with pysam.AlignmentFile(couts[1]) as f:
        assert f.header.to_dict()["SQ"] == header["SQ"]
        assert [r.reference_start for r in f] == [50, 70]


def test_scatter_tells_the_reads_format_by_content_as_readalign_does(tmp_path):
    """SAM text reads under a name that says nothing: chunks of SAM text, each a valid
    readalign input; an empty reads file gives empty chunks; unreadable reads fail in one line."""
    sam = tmp_path / "reads.txt"
    sam.write_text("@HD\tVN:1.6\n" + "".join(f"{n}\t4\t*\t0\t0\t*\t*\t0\t0\tACGTACGT\tIIIIIIII\n"
                                           for n in ("a", "b", "c")))
    cands = tmp_path / "cands.paf"
    cands.write_text(_paf_line("a") + _paf_line("c"))
    assert scatter.reads_format(str(sam)) == "sam"
    counts, routs, _ = _split(tmp_path, sam, cands, 2, rext="sam")
    assert counts == [2, 1]
    got = []
    for path in routs:
        assert read_reads_format(path) == "sam"
        got.append([b.name(i) for b in iter_reads(path) for i in range(len(b))])
    assert got == [["a", "b"], ["c"]]
    empty = tmp_path / "empty.fq"
    empty.write_bytes(b"")
    (tmp_path / "none.paf").write_text("")
    counts, routs, couts = _split(tmp_path, empty, tmp_path / "none.paf", 2)
    assert counts == [0, 0] and all(os.path.getsize(p) == 0 for p in routs + couts)
    bad = tmp_path / "bad.fq"
    bad.write_text("hello\n")
    with pytest.raises(scatter.ScatterError, match="bad.fq: line 1: not FASTQ"):
        _split(tmp_path, bad, cands, 2)


@pytest.mark.parametrize("lines, what", [
    ([_paf_line("b"), _paf_line("a")], "not in"),        # out of order
    ([_paf_line("a"), _paf_line("ghost")], "'ghost'"),    # read absent from the reads file
])
def test_scatter_bad_candidates_fail_and_leave_nothing(tmp_path, lines, what):
    reads = tmp_path / "reads.fq"
    _write_fastq(reads, ["a", "b"])
    cands = tmp_path / "cands.paf"
    cands.write_text("".join(lines))
    routs = [str(tmp_path / f"c{i}.fq") for i in range(2)]
    couts = [str(tmp_path / f"c{i}.paf") for i in range(2)]
    with pytest.raises(scatter.ScatterError, match=what):
        scatter.run(str(reads), str(cands), routs, couts)
    assert not any(os.path.exists(p) for p in routs + couts)


def test_scatter_command_line_reports_errors_in_one_line(tmp_path, capsys):
    reads = tmp_path / "reads.fq"
    _write_fastq(reads, ["a"])
    cands = tmp_path / "cands.paf"
    cands.write_text(_paf_line("zz"))
    rc = scatter.main(["--reads", str(reads), "--candidates", str(cands),
                       "--reads-out", str(tmp_path / "o.fq"),
                       "--candidates-out", str(tmp_path / "o.paf")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and "cands.paf: line 1: read 'zz'" in err


def test_chunks_are_contiguous_and_balanced():
    for total in (1, 7, 100, 101):
        for n in (1, 2, 3, 8):
            owners = [scatter.chunk_of(i, total, n) for i in range(total)]
            assert owners == sorted(owners)
            sizes = [owners.count(c) for c in range(n)]
            assert max(sizes) - min(sizes) <= 1


# --- merge -----------------------------------------------------------------------------------

def _bam(path, records, sort_order="unsorted", pg_cl="readalign align x", rg=None):
    header = {"HD": {"VN": "1.6", "SO": sort_order},
              "SQ": [{"SN": n, "LN": n_len} for n, n_len in CONTIGS],
              "PG": [{"ID": "readalign", "PN": "readalign", "CL": pg_cl}]}
    if rg:
        header["RG"] = [rg]
    with pysam.AlignmentFile(str(path), "wb", header=header) as out:
        for name, tid, pos in records:
            rec = pysam.AlignedSegment(out.header)
            rec.query_name, rec.query_sequence = name, "ACGTACGTAC"
            rec.query_qualities = pysam.qualitystring_to_array("I" * 10)
            if tid < 0:
                rec.flag = 4
            else:
                rec.reference_id, rec.reference_start, rec.cigarstring = tid, pos, "10M"
                rec.mapping_quality = 60
                rec.set_tag("NM", pos % 3)
            out.write(rec)
    return str(path)


def _records(path):
    with pysam.AlignmentFile(str(path), check_sq=False) as f:
        return [(r.query_name, r.reference_id, r.reference_start) for r in f.fetch(until_eof=True)]


@pytest.mark.parametrize("sort_order", ["unsorted", "coordinate"])
def test_merge_sorts_indexes_and_combines_headers(tmp_path, sort_order):
    rg = {"ID": "run1", "SM": "s1"}
    a = _bam(tmp_path / "a.bam", [("r1", 1, 500), ("r2", 0, 40), ("r3", -1, -1)], sort_order,
             "readalign align -o a.bam", rg)
    b = _bam(tmp_path / "b.bam", [("r4", 0, 10), ("r5", 1, 5)], sort_order,
             "readalign align -o b.bam", rg)
    if sort_order == "coordinate":
        for p in (a, b):
            pysam.sort("-o", p + ".s", p, catch_stdout=False)
            os.replace(p + ".s", p)
            with pysam.AlignmentFile(p, check_sq=False) as f:
                assert f.header.to_dict()["HD"]["SO"] == "coordinate"
    out = tmp_path / "out" / "merged.bam"
    merge.merge([a, b], str(out), threads=2)

    assert os.path.exists(str(out) + ".bai")
    recs = _records(out)
    assert sorted(recs) == sorted(_records(a) + _records(b))
    assert [r[0] for r in recs] == ["r4", "r2", "r5", "r1", "r3"]      # coordinate order
    with pysam.AlignmentFile(str(out)) as f:
        header = f.header.to_dict()
        assert f.count("chrB") == 2                                   # the index works
    assert header["HD"]["SO"] == "coordinate"
    assert header["RG"] == [rg]
    ids = [pg["ID"] for pg in header["PG"]]
    assert {"readalign", "readalign.1", "readalign-merge"} <= set(ids)
    assert len(ids) == len(set(ids))
    assert not [p for p in os.listdir(out.parent) if p.startswith(".merge-")]


def test_merged_header_rejects_different_references():
    h1 = {"HD": {"VN": "1.6", "SO": "unsorted", "GO": "query"},
          "SQ": [{"SN": "chrA", "LN": 5000}]}
    h2 = {"SQ": [{"SN": "chrA", "LN": 4999}]}
    with pytest.raises(merge.MergeError, match="b.bam: its @SQ lines differ"):
        merge.merged_header([h1, h2], ["a.bam", "b.bam"])
    assert merge.merged_header([h1, h1])["HD"] == {"VN": "1.6", "SO": "coordinate"}


def test_merged_header_drops_identical_pg_and_renames_pp_chains():
    pg = {"ID": "readalign", "PN": "readalign", "CL": "same"}
    h1 = {"PG": [dict(pg), {"ID": "sort", "PN": "samtools", "PP": "readalign", "CL": "one"}]}
    h2 = {"PG": [{"ID": "readalign", "PN": "readalign", "CL": "other"},
                 {"ID": "sort", "PN": "samtools", "PP": "readalign", "CL": "two"}]}
    h3 = {"PG": [dict(pg)]}
    out = merge.merged_header([h1, h2, h3])
    assert [(p["ID"], p.get("PP")) for p in out["PG"]] == [
        ("readalign", None), ("sort", "readalign"), ("readalign.1", None),
        ("sort.1", "readalign.1")]


def test_merge_failure_leaves_no_output(tmp_path):
    a = _bam(tmp_path / "a.bam", [("r1", 0, 5)])
    broken = tmp_path / "b.bam"
    broken.write_bytes(Path(a).read_bytes()[:40])                   # truncated BAM
    out = tmp_path / "merged.bam"
    rc = merge.main(["-o", str(out), a, str(broken)])
    assert rc == 1
    assert sorted(os.listdir(tmp_path)) == ["a.bam", "b.bam"]


# --- stats -----------------------------------------------------------------------------------

def test_stats_report(tmp_path):
    bam = _bam(tmp_path / "a.bam", [("r1", 0, 10), ("r2", 0, 11), ("r3", -1, -1)])
    sorted_bam = str(tmp_path / "s.bam")
    pysam.sort("-o", sorted_bam, bam, catch_stdout=False)
    pysam.index(sorted_bam, catch_stdout=False)
    summaries = []
    for i, n in enumerate((2, 1)):
        p = tmp_path / f"{i}.json"
        p.write_text(json.dumps({"reads_in": n, "backend": "cpu", "stage_seconds": {"align": 1.5}}))
        summaries.append(str(p))
    out = tmp_path / "report.txt"
    assert stats.main(["-o", str(out), sorted_bam, *summaries]) == 0
    text = out.read_text()
    assert "reads (primary or unmapped records)\t3" in text
    assert "mapped\t2\t66.67%" in text and "unmapped\t1\t33.33%" in text
    assert "mean NM of mapped reads\t1.500" in text                  # NM 1 and 2
    assert "## samtools flagstat" in text and "raw total sequences:\t3" in text
    summary = json.loads(text.split("numbers added up)\n", 1)[1])
    assert summary == {"reads_in": 3, "stage_seconds": {"align": 3.0}}


# --- environment.yml -------------------------------------------------------------------------

def test_environment_yml_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")           # Python 3.11+
    root = SCRIPTS.parent.parent
    env = yaml.safe_load((root / "environment.yml").read_text())
    assert env["channels"][:2] == ["conda-forge", "bioconda"]
    specs = [re.split(r"[\s<>=]", d, maxsplit=1)[0] for d in env["dependencies"]
             if isinstance(d, str)]
    conda = {spec.split("::")[-1] for spec in specs}
    assert "bioconda::pysam" in specs
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    conda_name = {"isal": "python-isal"}  # the same bindings under conda-forge's name
    needed = project["dependencies"] + project["optional-dependencies"]["workflow"]
    wanted = {conda_name.get(name, name) for name in
              (re.split(r"[\s<>=\[]", d, maxsplit=1)[0] for d in needed)}
    assert {"snakemake", "snakemake-executor-plugin-slurm"} <= wanted
    assert wanted <= conda
    assert {"python", "samtools", "minimap2"} <= conda
    assert "snakemake" not in " ".join(project["dependencies"])  # API users do without it


def test_every_script_runs_under_snakemake_through_one_tail(tmp_path):
    """The shared tail of the scripts: the job's stderr goes to the rule's log, a failure
    fails the job with the script's status."""
    spec = importlib.util.spec_from_file_location("workflow_snakemake", SCRIPTS / "_snakemake.py")
    tail = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tail)
    log = tmp_path / "job.log"
    job = type("Job", (), {"log": [str(log)]})()

    def main(argv):
        print("said", *argv, file=sys.stderr)
        return int(argv[0])

    tail.run_rule(job, main, ["0"])
    assert log.read_text() == "said 0\n"
    with pytest.raises(SystemExit) as exc:
        tail.run_rule(job, main, ["3"])
    assert exc.value.code == 3 and log.read_text() == "said 3\n"
    for name in ("scatter", "merge", "stats"):
        text = (SCRIPTS / f"{name}.py").read_text()
        assert "from _snakemake import run_rule" in text and "redirect_stderr" not in text, name
