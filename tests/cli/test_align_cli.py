"""`readalign align` end to end on a real genome, real reads and a real upstream filter.

Phage lambda (Debian's bowtie2-examples) plus a diverged copy of 4 kb of it as
a second contig, 1,500 wgsim reads with a few random reads and adapter tails mixed
in, and candidates from minimap2 without -c. The BAMs are checked with samtools and Picard.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys

import pysam
import pytest
from conftest import require_tool, unavailable

from readalign.bam.options import Options
from readalign.bam.run import run
from readalign.cli import main
from readalign.errors import InputError

pytestmark = pytest.mark.slow  # end to end with samtools, minimap2 and Picard

LAMBDA = "/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz"
N_SIM = 1500
ADAPTER = "AGATCGGAAGAGCACACGTCTGAACTCCAGTCAC"
RANDOM_EVERY = 150


def _sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if not os.path.exists(LAMBDA):
        msg = f"{LAMBDA} missing (Debian package bowtie2-examples)"
        unavailable(msg, ".ci/run must install bowtie2-examples")
    wgsim, minimap2 = require_tool("wgsim"), require_tool("minimap2")
    d = tmp_path_factory.mktemp("align")
    rng = random.Random(5)
    with gzip.open(LAMBDA, "rt") as fh:
        lines = fh.read().split("\n", 1)
    genome = lines[1].replace("\n", "")
    decoy = list(genome[20_000:24_000])
    for i in range(0, len(decoy), 40):  # 2.5% divergence
        decoy[i] = {"A": "C", "C": "G", "G": "T", "T": "A"}.get(decoy[i], "A")
    lam = d / "lambda.fa"
    lam.write_text(">lambda\n" + genome + "\n")
    ref = d / "ref.fa"
    ref.write_text(">lambda\n" + genome + "\n>decoy\n" + "".join(decoy) + "\n")
    sim = d / "sim.fq"
    _sh([wgsim, "-N", str(N_SIM), "-1", "150", "-2", "150", "-e", "0.005", "-r", "0.01",
         "-R", "0.3", "-S", "11", str(lam), str(sim), "/dev/null"])
    recs = sim.read_text().split("\n")
    out = []
    for i in range(0, len(recs) - 1, 4):
        name, seq, _, qual = recs[i:i + 4]
        if (i // 4) % RANDOM_EVERY == 0:  # a read from nowhere: no candidate
            out += [f"@random{i}", "".join(rng.choice("ACGT") for _ in range(150)), "+", "I" * 150]
        if (i // 4) % 97 == 0:  # lowercase and IUPAC bases are accepted
            seq = seq[:10].lower() + "R" + seq[11:]
        if (i // 4) % 25 == 1:  # a 3' adapter tail: soft clipped
            seq = seq[:120] + ADAPTER[:30]
        out += [name.split()[0], seq, "+", qual]
    reads = d / "reads.fq"
    reads.write_text("\n".join(out) + "\n")
    paf = d / "cand.paf"
    paf.write_text(_sh([minimap2, "-x", "sr", "--secondary=yes", "-t", "2", str(ref),
                        str(reads)]).stdout)
    mmc = d / "mm_c.paf"
    mmc.write_text(_sh([minimap2, "-x", "sr", "-c", "-t", "2", str(ref), str(reads)]).stdout)
    names = [x[1:] for x in out[0::4]]
    return {"dir": d, "ref": str(ref), "reads": str(reads), "paf": str(paf), "mmc": str(mmc),
            "names": names}


@pytest.fixture(scope="module")
def unsorted(data):
    bam = str(data["dir"] / "out.bam")
    summary = str(data["dir"] / "summary.json")
    rc = main(["align", "-q", "-r", data["ref"], "--reads", data["reads"], "-c", data["paf"],
               "-o", bam, "--secondary", "--rg", r"ID:t1\tSM:s1\tPL:ILLUMINA", "--backend", "cpu",
               "--threads", "2", "--batch-size", "400", "--summary-json", summary])
    assert rc == 0
    return bam, json.load(open(summary))


def records(bam):
    with pysam.AlignmentFile(bam, check_sq=False) as fh:
        return list(fh)


def picard_validate(bam, ref=None):
    """Picard ValidateSamFile, warnings included; with ``ref`` it also checks NM."""
    picard = require_tool("PicardCommandLine")
    cmd = [picard, "ValidateSamFile", f"I={bam}", "MODE=VERBOSE"] + ([f"R={ref}"] if ref else [])
    res = subprocess.run(cmd, capture_output=True, text=True)
    problems = [x for x in (res.stdout + res.stderr).splitlines()
                if x.startswith(("ERROR::", "WARNING::"))]
    assert res.returncode == 0 and not problems, "\n".join(problems) or res.stderr[-2000:]
    assert "No errors found" in res.stdout + res.stderr


def test_quickcheck_and_picard(unsorted):
    bam, _ = unsorted
    _sh([require_tool("samtools"), "quickcheck", "-v", bam])
    # Picard walks the reference in order, so R= (its NM check) needs sorted input: see below
    picard_validate(bam)


def test_calmd_finds_no_difference(data, unsorted):
    bam, _ = unsorted
    res = _sh([require_tool("samtools"), "calmd", bam, data["ref"]])
    ours = [(r.query_name, r.flag, r.get_tag("NM"), r.get_tag("MD"))
            for r in records(bam) if not r.is_unmapped]
    theirs = []
    for line in res.stdout.splitlines():
        if line.startswith("@"):
            continue
        f = line.split("\t")
        if int(f[1]) & 4:
            continue
        tags = dict(t.split(":", 1) for t in f[11:])
        theirs.append((f[0], int(f[1]), int(tags["NM"][2:]), tags["MD"][2:]))
    assert len(ours) > N_SIM * 0.9
    assert ours == theirs
    clipped = [r for r in records(bam) if not r.is_unmapped and "S" in r.cigarstring]
    assert len(clipped) > N_SIM // 25 * 0.9  # the adapter tails (calmd checked them too)


def test_every_read_once_and_summary(data, unsorted):
    bam, summary = unsorted
    recs = records(bam)
    primary = [r.query_name for r in recs if not r.is_secondary and not r.is_supplementary]
    assert primary == data["names"]  # each read once, in input order
    unmapped = [r for r in recs if r.is_unmapped]
    assert {r.query_name for r in unmapped} >= {n for n in data["names"] if n.startswith("random")}
    assert all(r.mapping_quality == 0 and r.reference_id == -1 for r in unmapped)
    secondary = [r for r in recs if r.is_secondary]
    assert summary["reads_in"] == len(data["names"])
    assert summary["aligned"] + summary["unaligned"] == summary["reads_in"]
    assert summary["unaligned"] == len(unmapped)
    assert summary["secondary"] == len(secondary) > 0
    assert summary["backend"] == "cpu"
    assert summary["deflate"] in ("isal", "zlib", "libdeflate")
    assert all(r.get_tag("RG") == "t1" for r in recs)


def bwa_score(rec) -> int:
    """The sr preset's score of a record's aligned part, from its CIGAR and NM (match 1,
    mismatch 4, a gap of length L costs 6 + L)."""
    aligned = sum(n for op, n in rec.cigartuples if op == 0)
    gaps = [n for op, n in rec.cigartuples if op in (1, 2)]
    mismatches = rec.get_tag("NM") - sum(gaps)
    return aligned - mismatches - 4 * mismatches - sum(6 + n for n in gaps)


def test_scores_mapq_and_secondary(data, unsorted):
    """AS is the aligned part's score; MAPQ never exceeds minimap2's own for the read."""
    bam, _ = unsorted
    upstream: dict[str, int] = {}
    with open(data["paf"]) as fh:
        for line in fh:
            f = line.split("\t")
            upstream[f[0]] = max(upstream.get(f[0], 0), int(f[11]))
    recs = records(bam)
    primaries = [r for r in recs if not r.is_unmapped and not r.is_secondary]
    for r in primaries:
        assert r.get_tag("AS") == bwa_score(r) >= 30, r.query_name
        assert r.mapping_quality <= upstream[r.query_name]
        if not r.has_tag("XS"):
            assert r.mapping_quality == min(60, upstream[r.query_name])
        else:
            assert r.get_tag("XS") <= r.get_tag("AS") + 2 * 5  # ranked by score less clip penalties
    assert any(r.has_tag("XS") and r.mapping_quality < 60 for r in primaries)
    assert any(r.is_secondary and r.reference_name == "decoy" for r in recs)


def test_nm_never_worse_than_minimap2(data, unsorted):
    bam, _ = unsorted
    mm = {}
    with open(data["mmc"]) as fh:
        mm_lines = fh.read().splitlines()
    for line in mm_lines:
        f = line.split("\t")
        if "tp:A:P" not in f or f[2] != "0" or f[3] != f[1]:
            continue  # only minimap2's end-to-end primary alignments
        nm = next(int(t[5:]) for t in f[12:] if t.startswith("NM:i:"))
        mm[f[0]] = (f[5], int(f[7]), f[4], nm)
    compared = 0
    for r in records(bam):
        if r.is_unmapped or r.is_secondary or r.query_name not in mm:
            continue
        contig, start, strand, nm = mm[r.query_name]
        if (contig, "-" if r.is_reverse else "+") != (r.reference_name, strand) \
                or abs(r.reference_start - start) > 10:
            continue
        compared += 1
        assert r.get_tag("NM") <= nm, r.query_name
    assert compared > N_SIM * 0.8


def test_sorted_output_is_indexed_and_queryable(data, tmp_path):
    bam = str(tmp_path / "sorted.bam")
    rc = main(["align", "-q", "-r", data["ref"], "--reads", data["reads"], "-c", data["paf"],
               "-o", bam, "--sort", "--backend", "cpu", "--threads", "2", "--eqx",
               "--rg", r"ID:s\tSM:x\tPL:ILLUMINA"])
    assert rc == 0
    assert os.path.exists(bam + ".bai")
    assert sorted(os.listdir(tmp_path)) == ["sorted.bam", "sorted.bam.bai"]
    samtools = require_tool("samtools")
    assert "SO:coordinate" in _sh([samtools, "view", "-H", bam]).stdout
    picard_validate(bam, data["ref"])
    region = _sh([samtools, "view", bam, "lambda:10000-11000"]).stdout.splitlines()
    assert region and all(int(x.split("\t")[3]) <= 11000 for x in region)
    cigars = [x.split("\t")[5] for x in region]
    assert all(set(c) <= set("0123456789=XID") for c in cigars)
    with pysam.AlignmentFile(bam) as fh:
        assert fh.count("lambda", 20_000, 21_000) > 0
        assert fh.mapped + fh.unmapped == len(data["names"])  # index statistics


def test_stdout_sam_pipes_into_samtools(data):
    samtools = require_tool("samtools")
    cmd = [sys.executable, "-m", "readalign", "align", "-q", "-r", data["ref"], "--reads",
           data["reads"], "-c", data["paf"], "-o", "-", "--backend", "cpu"]
    bam = subprocess.run(cmd, capture_output=True, check=True).stdout
    res = subprocess.run([samtools, "view", "-c", "-F", "256", "-"], input=bam,
                         capture_output=True, check=True)
    assert int(res.stdout) == len(data["names"])


def test_realign_from_bam_candidates_and_ubam_reads(data, unsorted, tmp_path):
    """A SAM/BAM's records as candidates, unaligned BAM as reads: same primary loci."""
    bam, _ = unsorted
    ubam = str(tmp_path / "reads.bam")
    header = pysam.AlignmentHeader.from_dict({"HD": {"VN": "1.6", "SO": "unsorted"}})
    with pysam.AlignmentFile(ubam, "wb", header=header) as fh, \
            pysam.FastxFile(data["reads"]) as fq:
        for read in fq:
            rec = pysam.AlignedSegment(header)
            rec.query_name, rec.query_sequence, rec.flag = read.name, read.sequence, 4
            rec.query_qualities = pysam.qualitystring_to_array(read.quality)
            fh.write(rec)
    out = str(tmp_path / "re.bam")
    run(Options(reference=data["ref"], reads=ubam, candidates=bam, output=out, backend="cpu",
                threads=2, pad=5))
    first = [(r.query_name, r.reference_name, r.reference_start, r.cigarstring)
             for r in records(bam) if not r.is_secondary]
    again = [(r.query_name, r.reference_name, r.reference_start, r.cigarstring)
             for r in records(out)]
    assert again == first


def _tsv(tmp_path, lines):
    p = tmp_path / f"case{len(os.listdir(tmp_path))}" / "c.tsv"
    p.parent.mkdir()
    p.write_text("".join(x + "\n" for x in lines))
    return str(p)


def test_bad_inputs_leave_no_output_and_keep_an_earlier_one(data, tmp_path):
    name0, name1 = data["names"][1], data["names"][2]
    reads = data["reads"]
    cases = [
        (_tsv(tmp_path, [f"{name0}\tchrZ\t0\t100\t+"]), reads,
         r"c\.tsv: line 1: unknown contig 'chrZ'"),
        (_tsv(tmp_path, [f"{name0}\tdecoy\t3990\t4100\t+"]), reads,
         r"c\.tsv: line 1: window 3990-4100 is outside contig 'decoy'"),
        (_tsv(tmp_path, [f"{name0}\tlambda\t0\t100\t+", "ghost\tlambda\t0\t100\t+"]), reads,
         r"c\.tsv: line 2: read 'ghost' is not in reads\.fq"),
        (_tsv(tmp_path, [f"{name1}\tlambda\t0\t100\t+", f"{name0}\tlambda\t0\t100\t+"]), reads,
         rf"c\.tsv: line 2: candidates of read '{name0}' are not grouped by read in the order"),
    ]
    trunc = tmp_path / "reads.fq"
    with open(reads) as fh:
        trunc.write_text("\n".join(fh.read().split("\n")[:-3]))
    cases.append((data["paf"], str(trunc), r"reads\.fq: line \d+: truncated FASTQ record"))
    out = tmp_path / "o" / "x.bam"
    out.parent.mkdir()
    for cand, reads, msg in cases:
        out.write_bytes(b"output of an earlier run")
        with pytest.raises(InputError, match=msg):
            run(Options(reference=data["ref"], reads=reads, candidates=cand, output=str(out),
                        backend="cpu", threads=2, batch_size=500))
        assert os.listdir(out.parent) == ["x.bam"], msg  # the earlier file is kept, as it was
        assert out.read_bytes() == b"output of an earlier run"


def test_cli_error_is_one_line_and_exit_1(data, tmp_path):
    bad = tmp_path / "empty.fq"
    bad.write_text("")
    out = tmp_path / "x.bam"
    res = subprocess.run([sys.executable, "-m", "readalign", "align", "-r", data["ref"],
                          "--reads", str(bad), "-c", data["paf"], "-o", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 1
    errors = [x for x in res.stderr.splitlines() if "error" in x]
    assert errors == ["readalign: error: empty.fq: empty file"], res.stderr
    assert not out.exists()


def test_allow_empty_writes_a_header_only_bam(data, tmp_path):
    reads, cands = tmp_path / "empty.fq.gz", tmp_path / "empty.paf"
    with gzip.open(reads, "wb"):
        pass
    cands.write_text("")
    for sort in ([], ["--sort"]):
        out, summary = tmp_path / f"e{len(sort)}.bam", tmp_path / "s.json"
        rc = main(["align", "-q", "-r", data["ref"], "--reads", str(reads), "-c", str(cands),
                   "-o", str(out), "--allow-empty", "--summary-json", str(summary), *sort])
        assert rc == 0
        _sh([require_tool("samtools"), "quickcheck", "-v", str(out)])
        with pysam.AlignmentFile(str(out)) as f:
            assert list(f.references) == ["lambda", "decoy"]
            assert list(f.fetch(until_eof=True)) == []
        assert json.loads(summary.read_text())["reads_in"] == 0
        assert os.path.exists(f"{out}.bai") == bool(sort)


def test_allow_empty_still_checks_what_is_not_empty(data, tmp_path):
    """Empty reads with candidates left over is still an error, and nothing is written."""
    reads = tmp_path / "empty.fq"
    reads.write_text("")
    out = tmp_path / "x.bam"
    with pytest.raises(InputError, match=r"c\.tsv: line 1: read '.*' is not in empty\.fq"):
        run(Options(reference=data["ref"], reads=str(reads),
                    candidates=_tsv(tmp_path, [f"{data['names'][0]}\tlambda\t0\t100\t+"]),
                    output=str(out), backend="cpu", allow_empty=True))
    assert not out.exists()


def test_compression_level_same_records(data, unsorted, tmp_path):
    base, _ = unsorted
    want = [r.to_string() for r in records(base)]
    sizes = {}
    for level in (0, 1, 9, None):
        bam = str(tmp_path / f"l{level}.bam")
        chosen = [] if level is None else ["--compression-level", str(level)]
        rc = main(["align", "-q", "-r", data["ref"], "--reads", data["reads"], "-c", data["paf"],
                   "-o", bam, "--secondary", "--rg", r"ID:t1\tSM:s1\tPL:ILLUMINA", "--backend",
                   "cpu", "--threads", "2", "--batch-size", "400", *chosen])
        assert rc == 0
        _sh([require_tool("samtools"), "quickcheck", "-v", bam])
        assert [r.to_string() for r in records(bam)] == want
        sizes[level] = os.path.getsize(bam)
    assert sizes[0] > sizes[1] > sizes[9]
    assert sizes[None] == sizes[1]  # the default level is 1


def test_compression_level_out_of_range(data, tmp_path):
    out = tmp_path / "x.bam"
    rc = main(["align", "-q", "-r", data["ref"], "--reads", data["reads"], "-c", data["paf"],
               "-o", str(out), "--compression-level", "10"])
    assert rc == 1 and not out.exists()
    with pytest.raises(InputError, match="--compression-level must be 0-9, got -1"):
        run(Options(reference=data["ref"], reads=data["reads"], candidates=data["paf"],
                    output=str(out), compression_level=-1))
