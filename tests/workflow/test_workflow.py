"""The Snakemake side (workflow/): the example workflow end to end, the rule module, the SLURM
profile and failure behaviour, all with the real ``snakemake``.

Every run happens in a temporary working directory holding a copy of the example inputs, so
nothing (no .snakemake/, no .fai, no results) lands in the repository.
"""

import gzip
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pysam
import pytest
from conftest import HANG_SECONDS, REPO, require_module, require_tool

require_module("snakemake", "workflow")  # skipped with the reason, or failed under CI=true
yaml = require_module("yaml", "test")

WORKFLOW = REPO / "workflow"
SNAKEFILE = WORKFLOW / "Snakefile"
MODULE = WORKFLOW / "rules" / "readalign.smk"
PROFILE = WORKFLOW / "profiles" / "slurm"
CONFIG = yaml.safe_load((WORKFLOW / "config" / "config.yaml").read_text())
INPUT_KEYS = ("reference", "reads", "candidates")

pytestmark = pytest.mark.slow


def _env():
    env = dict(os.environ)
    # the readalign and snakemake of this interpreter's environment come first
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


def snakemake(*args, cwd, timeout=HANG_SECONDS):
    """Run the real snakemake; return the CompletedProcess (stdout and stderr together)."""
    return subprocess.run([sys.executable, "-m", "snakemake", *map(str, args)], cwd=cwd,
                          env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)


def _example_workdir(path: Path, **overrides) -> Path:
    """A working directory with copies of the example inputs at the config's relative paths
    and a config file (the shipped config plus *overrides*); returns the config file."""
    for key in INPUT_KEYS:
        src = Path(CONFIG[key])
        src = src if src.is_absolute() else REPO / src
        if not src.exists():
            raise FileNotFoundError(f"example input {src} (config key {key}) is missing")
        if not Path(CONFIG[key]).is_absolute():
            dst = path / CONFIG[key]
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    cfg = {**CONFIG, **overrides}
    cfg_path = path / "config.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return cfg_path


def _records(bam):
    """Every record as a comparable tuple (file order aside)."""
    with pysam.AlignmentFile(str(bam), check_sq=False) as f:
        return sorted(
            (r.query_name, r.flag, r.reference_name or "*", r.reference_start,
             r.mapping_quality, r.cigarstring or "*", r.query_sequence,
             tuple(sorted((k, str(v)) for k, v in r.get_tags())))
            for r in f.fetch(until_eof=True))


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example workflow, run once with --cores 2."""
    work = tmp_path_factory.mktemp("workflow")
    cfg = _example_workdir(work)
    res = snakemake("-s", SNAKEFILE, "--directory", work, "--configfile", cfg, "--cores", "2",
                    cwd=REPO)
    assert res.returncode == 0, res.stdout[-6000:]
    out = work / CONFIG["outdir"]
    return {"work": work, "out": out, "log": res.stdout,
            "bam": out / f"{CONFIG['name']}.bam", "stats": out / f"{CONFIG['name']}.stats.txt"}


def test_example_workflow_matches_a_single_readalign_run(example):
    work, out = example["work"], example["out"]
    minimap2_paf = out / "upstream" / "minimap2.paf"
    if shutil.which("minimap2"):          # upstream: auto ran the filter; align what it wrote
        assert minimap2_paf.exists()
    candidates = minimap2_paf if minimap2_paf.exists() else work / CONFIG["candidates"]
    single = work / "single.bam"
    args = ["align", "-r", work / CONFIG["reference"], "--reads", work / CONFIG["reads"],
            "-c", candidates, "-o", single, "-q"]
    ra = CONFIG.get("readalign") or {}
    if ra.get("pad") is not None:
        args += ["--pad", ra["pad"]]
    if ra.get("max_distance") is not None:
        args += ["--max-distance", ra["max_distance"]]
    scoring = ra.get("scoring") or {}
    for key, option in (("preset", "--preset"), ("min_score", "-T"), ("mismatch", "-B")):
        if scoring.get(key) is not None:
            args += [option, scoring[key]]
    if ra.get("secondary"):
        args.append("--secondary")
    name = CONFIG["name"]  # without a read_group the sample's name is its ID and SM
    args += ["--rg", ra.get("read_group") or f"ID:{name}\\tSM:{name}\\tPL:ILLUMINA"]
    args += (ra.get("extra") or "").split()
    res = subprocess.run([sys.executable, "-m", "readalign", *map(str, args)], cwd=work,
                         env=_env(), capture_output=True, text=True, timeout=HANG_SECONDS)
    assert res.returncode == 0, res.stderr
    expected, got = _records(single), _records(example["bam"])
    assert len(got) == len(expected) > 0
    assert got == expected
    # temporary chunk files and chunk BAMs are gone once merged
    assert not list(out.glob("chunks/*")) and not list(out.glob("aligned/*.bam"))


def test_example_bam_is_sorted_indexed_and_validates(example):
    bam = example["bam"]
    assert pysam.quickcheck(str(bam)) == ""
    assert Path(f"{bam}.bai").exists()
    with pysam.AlignmentFile(str(bam)) as f:
        header = f.header.to_dict()
        assert header["HD"]["SO"] == "coordinate"
        assert f.mapped > 0                                   # answered from the index
        keys = [(r.reference_id if not r.is_unmapped else 1 << 30, r.reference_start)
                for r in f.fetch(until_eof=True)]
    assert keys == sorted(keys)
    assert any(pg["ID"] == "readalign" for pg in header["PG"])
    assert header["RG"] == [{"ID": CONFIG["name"], "SM": CONFIG["name"], "PL": "ILLUMINA"}]
    picard = require_tool("PicardCommandLine")
    res = subprocess.run([picard, "ValidateSamFile", f"I={bam}",
                          f"R={example['work'] / CONFIG['reference']}", "MODE=SUMMARY"],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No errors found" in res.stdout + res.stderr


def test_example_stats_logs_and_benchmarks(example):
    out = example["out"]
    text = example["stats"].read_text()
    with pysam.AlignmentFile(str(example["bam"]), check_sq=False) as f:
        primary = sum(1 for r in f.fetch(until_eof=True)
                      if not (r.is_secondary or r.is_supplementary))
    assert f"reads (primary or unmapped records)\t{primary}" in text
    assert "## samtools flagstat" in text and "readalign summaries" in text
    chunks = int(CONFIG["chunks"])
    for c in range(chunks):
        assert (out / "logs" / "align" / f"{c}.log").exists()
        assert (out / "benchmarks" / "align" / f"{c}.tsv").exists()
        assert (out / "aligned" / f"{c}.summary.json").exists()


def test_fewer_reads_than_chunks(tmp_path):
    """Empty chunks (3 reads, 5 jobs) align to header-only BAMs; the merge has every read."""
    with pysam.FastxFile(str(REPO / CONFIG["reads"])) as f:
        reads = [r for _, r in zip(range(3), f)]
    (tmp_path / "few.fq").write_text("".join(f"{r}\n" for r in reads))
    names = {r.name for r in reads}
    with gzip.open(REPO / CONFIG["candidates"], "rt") as fh:
        paf = [line for line in fh if line.split("\t", 1)[0] in names]
    (tmp_path / "few.paf").write_text("".join(paf))
    cfg = _example_workdir(tmp_path, upstream=False, reads="few.fq", candidates="few.paf",
                           candidates_format="auto", chunks=5)
    res = snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg, "--cores", "2",
                    cwd=REPO)
    assert res.returncode == 0, res.stdout[-6000:]
    bam = tmp_path / CONFIG["outdir"] / f"{CONFIG['name']}.bam"
    with pysam.AlignmentFile(str(bam)) as f:
        primary = [r.query_name for r in f.fetch(until_eof=True)
                   if not (r.is_secondary or r.is_supplementary)]
    assert sorted(primary) == sorted(names)


def test_a_failing_job_leaves_nothing_that_looks_complete(tmp_path):
    # one candidate of a read in the last chunk names a contig the reference lacks
    scatter = _load_script("scatter")
    src = Path(CONFIG["candidates"])
    src = src if src.is_absolute() else REPO / src
    with gzip.open(src, "rt") if src.suffix == ".gz" else open(src) as fh:
        lines = fh.readlines()
    with pysam.FastxFile(str(REPO / CONFIG["reads"])) as f:
        names = [r.name for r in f]
    chunks = int(CONFIG["chunks"])
    last = [i for i, line in enumerate(lines)
            if scatter.chunk_of(names.index(line.split("\t", 1)[0]), len(names), chunks)
            == chunks - 1]
    assert last, "the example's last chunk has no candidates"
    fields = lines[last[0]].split("\t")
    fields[5] = "no_such_contig"
    lines[last[0]] = "\t".join(fields)
    (tmp_path / "bad.paf").write_text("".join(lines))
    cfg = _example_workdir(tmp_path, upstream=False, candidates="bad.paf",
                           candidates_format="auto")
    out = tmp_path / CONFIG["outdir"]
    target = out / "aligned" / f"{chunks - 1}.bam"
    common = ["-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg, "--cores", "2"]
    # --keep-incomplete: Snakemake does not tidy up, so what is left is what readalign left
    res = snakemake(*common, "--keep-incomplete", target.relative_to(tmp_path), cwd=REPO)
    assert res.returncode != 0
    assert "Error in rule readalign_align" in res.stdout
    log = (out / "logs" / "align" / f"{chunks - 1}.log").read_text()
    assert "no_such_contig" in log
    aligned = out / "aligned"                                  # no BAM, no temporary file
    assert not aligned.exists() or sorted(os.listdir(aligned)) == []
    assert not (out / f"{CONFIG['name']}.bam").exists()
    # and Snakemake would run the job again
    res = snakemake(*common, "-n", target.relative_to(tmp_path), cwd=REPO)
    assert res.returncode == 0, res.stdout[-4000:]
    assert "rule readalign_align:" in res.stdout
    reason = res.stdout.split("rule readalign_align:", 1)[1].split("reason:", 1)[1]
    assert reason.startswith(" Missing output files")
    assert str(target.relative_to(tmp_path)) in reason.split("\n", 1)[0]
    assert not (tmp_path / ".snakemake" / "incomplete").exists() or \
        not os.listdir(tmp_path / ".snakemake" / "incomplete")


def _load_script(name):
    spec = importlib.util.spec_from_file_location(f"workflow_{name}",
                                                  WORKFLOW / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- lint, dry runs --------------------------------------------------------------------------

MODULE_CONFIG = {"readalign": {"reference": "ref/genome.fa",
                               "reads": "reads/{sample}.fq.gz",
                               "candidates": "candidates/{sample}.paf",
                               "output": "aligned/{sample}.bam"}}


def _assert_lint_clean(res):
    # snakemake 9 prints "Lints for snakefile ..." / "Lints for rule ..." and exits 1 when it
    # has something to say, and "Congratulations, your workflow is in a good condition!"
    assert "Lints for" not in res.stdout, res.stdout
    assert res.returncode == 0, res.stdout
    assert "Congratulations" in res.stdout


def test_module_lint_has_nothing_to_say(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(MODULE_CONFIG))
    _assert_lint_clean(snakemake("-s", MODULE, "--lint", "--configfile", cfg, cwd=tmp_path))


def test_example_snakefile_lint_has_nothing_to_say(tmp_path):
    cfg = _example_workdir(tmp_path)
    _assert_lint_clean(snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--lint",
                                 "--configfile", cfg, cwd=REPO))


def test_dry_run_names_the_sample_in_the_read_group_and_uses_an_existing_index(tmp_path):
    cfg = _example_workdir(tmp_path, upstream=False)
    pysam.faidx(str(tmp_path / CONFIG["reference"]))  # as examples/run.sh leaves it
    res = snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg, "--cores", "1",
                    "-n", "-p", "--config", "name=NA12878", cwd=REPO)
    assert res.returncode == 0, res.stdout[-6000:]
    jobs = _job_counts(res.stdout)
    assert "readalign_faidx" not in jobs and jobs["readalign_align"] == int(CONFIG["chunks"])
    assert "metadata" not in res.stdout and "provenance" not in res.stdout, res.stdout[-3000:]
    commands = [line for line in res.stdout.splitlines() if "readalign align " in line]
    assert len(commands) == int(CONFIG["chunks"])
    assert all("--rg 'ID:NA12878\\tSM:NA12878\\tPL:ILLUMINA'" in c for c in commands), commands


@pytest.mark.parametrize("chunks, chunk_reads, jobs", [("auto", 600, 4), ("auto", None, 1)])
def test_auto_chunks_follow_the_reads_count(tmp_path, chunks, chunk_reads, jobs):
    """``chunks: auto`` makes one job per ``chunk_reads`` reads (2,000 reads: 4 jobs of 600 at
    most; the default of 50,000,000 a job: one)."""
    cfg = _example_workdir(tmp_path, upstream=False)
    extra = [f"chunks={chunks}"] + ([f"chunk_reads={chunk_reads}"] if chunk_reads else [])
    res = snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg, "--cores", "1",
                    "-n", "--config", *extra, cwd=REPO)
    assert res.returncode == 0, res.stdout[-6000:]
    assert _job_counts(res.stdout)["readalign_align"] == jobs


def test_bad_chunks_is_one_error(tmp_path):
    cfg = _example_workdir(tmp_path, upstream=False)
    res = snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg, "--cores", "1",
                    "-n", "--config", "chunks=0", cwd=REPO)
    assert res.returncode != 0
    assert "config key 'chunks' must be auto or at least 1, not '0'" in res.stdout


def _job_counts(stdout):
    """The 'Job stats' table of a dry run as {rule: count}."""
    table = stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    counts = {}
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def test_slurm_profile_dry_run_resolves_every_job(tmp_path):
    require_module("snakemake_executor_plugin_slurm", "workflow")
    cfg = _example_workdir(tmp_path, upstream=True)
    res = snakemake("-s", SNAKEFILE, "--directory", tmp_path, "--configfile", cfg,
                    "--profile", PROFILE, "-n", cwd=REPO)
    assert res.returncode == 0, res.stdout[-6000:]
    chunks = int(CONFIG["chunks"])
    counts = _job_counts(res.stdout)
    faidx = counts.pop("readalign_faidx", 0)           # only when the .fai is missing
    assert faidx == (0 if (tmp_path / f"{CONFIG['reference']}.fai").exists() else 1)
    assert counts == {"minimap2_candidates": 1, "scatter": 1, "readalign_warmup": 1,
                      "readalign_align": chunks, "merge": 1, "stats": 1, "all": 1,
                      "total": chunks + 6 + faidx}
    jobs = res.stdout.split("\nrule readalign_align:")[1:]
    assert len(jobs) == chunks
    for job in jobs:
        resources = job.split("resources:", 1)[1].split("\n", 1)[0]
        assert "gpu=1" in [r.strip() for r in resources.split(",")]
    warmup = res.stdout.split("\nrule readalign_warmup:")[1].split("\n\n")[0]
    assert "gpu=1" in warmup  # compiles on a node like the align jobs'
    for rule in ("scatter", "merge", "stats"):
        job = res.stdout.split(f"\nrule {rule}:")[1].split("\n\n")[0]
        assert "gpu=" not in job


def test_module_include_and_module_directive(tmp_path):
    """Other workflows load the module with include: or module/use rule, with wildcards."""
    for d in ("ref", "reads", "candidates"):
        (tmp_path / d).mkdir()
    (tmp_path / "ref" / "genome.fa").write_text(">c\nACGT\n")
    for s in ("s1", "s2"):
        (tmp_path / "reads" / f"{s}.fq.gz").write_bytes(b"")
        (tmp_path / "candidates" / f"{s}.paf").write_text("")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({
        **MODULE_CONFIG, "readalign": {**MODULE_CONFIG["readalign"], "secondary": True,
                                       "pad": 50, "read_group": "ID:{sample}\tSM:{sample}",
                                       "scoring": {"preset": "sr", "mismatch": 6},
                                       "extra": "--eqx", "gpu_model": "a100"}}))
    (tmp_path / "with_include.smk").write_text(textwrap.dedent(f"""\
        configfile: "config.yaml"


        include: "{MODULE}"


        rule all:
            input:
                expand("aligned/{{sample}}.bam", sample=["s1", "s2"]),
            default_target: True
        """))
    (tmp_path / "with_module.smk").write_text(textwrap.dedent(f"""\
        configfile: "config.yaml"


        module readalign:
            snakefile:
                "{MODULE}"
            config:
                config


        use rule * from readalign as ra_*


        rule all:
            input:
                expand("aligned/{{sample}}.bam", sample=["s1", "s2"]),
            default_target: True
        """))
    for snakefile, prefix in (("with_include.smk", ""), ("with_module.smk", "ra_")):
        res = snakemake("-s", snakefile, "-n", "-p", "--cores", "4", cwd=tmp_path)
        assert res.returncode == 0, res.stdout[-4000:]
        counts = _job_counts(res.stdout)
        assert counts[f"{prefix}readalign_align"] == 2
        assert counts[f"{prefix}readalign_faidx"] == 1
        assert counts[f"{prefix}readalign_warmup"] == 1          # once for both samples
        assert "readalign warmup --backend auto" in res.stdout
        assert "--secondary" in res.stdout and "--pad 50" in res.stdout
        assert "--eqx" in res.stdout and "--threads 4" in res.stdout
        assert "--preset sr -B 6" in res.stdout
        assert "--rg 'ID:s1\\tSM:s1'" in res.stdout         # wildcards filled in
        assert "gpu=1" in res.stdout and "gpu_model=a100" in res.stdout
