"""Inputs as users really have them: pipes, missing final newlines, empty reads, repeated names,
SAM text of unaligned reads, batch sizes beyond the memory, and references that are edited,
duplicated or not files at all.

Every case runs ``readalign align`` as a new process on the shipped example
and reads the BAM back with pysam.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pysam
import pytest
from conftest import HANG_SECONDS, require_tool
from test_output_safety import (  # noqa: F401 - the fixtures ex and small
    align_args,
    cli,
    ex_fixture,
    leftovers,
    one_error_line,
    small_fixture,
)

from tests.support.simulate import simulate

pytestmark = pytest.mark.slow  # every case runs the command as a new process on the example data


def records(path: Path) -> list[pysam.AlignedSegment]:
    with pysam.AlignmentFile(str(path), check_sq=False) as fh:
        return list(fh)


def text_records(path: Path) -> list[str]:
    return [r.to_string() for r in records(path)]


def run_ok(small, out: Path, *extra: str, **kw) -> list[str]:
    proc = cli(*align_args(small, out, *extra), **kw)
    assert proc.returncode == 0, proc.stderr
    return text_records(out)


@pytest.mark.parametrize("gz", [False, True])
def test_final_line_without_newline(small, gz):
    expected = run_ok(small, small["dir"] / "a.bam")
    reads = small["dir"] / ("nonl.fq.gz" if gz else "nonl.fq")
    data = small["reads"].read_bytes().rstrip(b"\n")
    reads.write_bytes(gzip.compress(data) if gz else data)
    paf = small["dir"] / "nonl.paf"
    paf.write_bytes(small["cand"].read_bytes().rstrip(b"\n"))
    got = run_ok(small, small["dir"] / "b.bam", "--reads", str(reads), "-c", str(paf))
    assert got == expected and len(got) == 20


def test_fasta_and_tsv_without_final_newline(small):
    fq = small["reads"].read_text().splitlines()
    fasta = small["dir"] / "r.fa"
    fasta.write_text("\n".join(f">{fq[i][1:]}\n{fq[i + 1]}" for i in range(0, len(fq), 4)))
    tsv = small["dir"] / "c.tsv"
    rows = [ln.split("\t") for ln in small["cand"].read_text().splitlines()]
    tsv.write_text("\n".join("\t".join((r[0], r[5], r[7], r[8], r[4])) for r in rows))
    run_ok(small, small["dir"] / "fa.bam", "--reads", str(fasta), "-c", str(tsv))
    got = records(small["dir"] / "fa.bam")
    assert len(got) == 20 and sum(not r.is_unmapped for r in got) == 20


def _feed(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("gz", [False, True])
def test_reads_and_candidates_from_pipes(small, gz):
    expected = run_ok(small, small["dir"] / "a.bam")
    reads_fifo, cand_fifo = small["dir"] / "reads.fifo", small["dir"] / "cand.fifo"
    os.mkfifo(reads_fifo)
    os.mkfifo(cand_fifo)
    data = small["reads"].read_bytes()
    feeders = [_feed(reads_fifo, gzip.compress(data) if gz else data),
               _feed(cand_fifo, small["cand"].read_bytes())]
    got = run_ok(small, small["dir"] / "b.bam", "--reads", str(reads_fifo), "-c", str(cand_fifo),
                 "--candidates-format", "paf")
    for f in feeders:
        f.join(timeout=HANG_SECONDS)
    assert got == expected


def test_reads_from_stdin(small):
    expected = run_ok(small, small["dir"] / "a.bam")
    with open(small["reads"], "rb") as stdin:
        got = run_ok(small, small["dir"] / "b.bam", "--reads", "/dev/stdin", stdin=stdin)
    assert got == expected


def test_empty_pipes_with_allow_empty(small):
    reads_fifo, cand_fifo = small["dir"] / "reads.fifo", small["dir"] / "cand.fifo"
    os.mkfifo(reads_fifo)
    os.mkfifo(cand_fifo)
    feeders = [_feed(reads_fifo, b""), _feed(cand_fifo, b"")]
    got = run_ok(small, small["dir"] / "e.bam", "--reads", str(reads_fifo), "-c", str(cand_fifo),
                 "--candidates-format", "paf", "--allow-empty")
    for f in feeders:
        f.join(timeout=HANG_SECONDS)
    assert got == []


def test_zero_length_reads_are_unmapped(small):
    text = small["reads"].read_text().splitlines(keepends=True)
    reads = small["dir"] / "z.fq"
    reads.write_text("".join(text[:8]) + "@empty1\n\n+\n\n" + "".join(text[8:12])
                     + "@empty2\n\n+\n\n")
    paf_rows = small["cand"].read_text().splitlines(keepends=True)
    names = [text[i][1:].split()[0] for i in (0, 4, 8)]
    cand = small["dir"] / "z.paf"
    cand.write_text("".join(r for n in names[:2] for r in paf_rows if r.startswith(n + "\t"))
                    + "empty1\t0\t0\t0\t+\tlambda\t48502\t100\t300\t0\t0\t60\n"
                    + "".join(r for r in paf_rows if r.startswith(names[2] + "\t")))
    out = small["dir"] / "z.bam"
    proc = cli(*align_args(small, out, "--reads", str(reads), "-c", str(cand)))
    assert proc.returncode == 0, proc.stderr
    recs = records(out)
    assert [r.query_name for r in recs] == names[:2] + ["empty1", names[2], "empty2"]
    for r in recs[2], recs[4]:
        assert r.is_unmapped and r.query_sequence is None
        assert r.to_string().split("\t")[9:11] == ["*", "*"]
    assert subprocess.run([require_tool("samtools"), "quickcheck", str(out)]).returncode == 0


def test_repeated_read_names_are_counted(small):
    text = small["reads"].read_text().splitlines(keepends=True)
    reads = small["dir"] / "d.fq"
    reads.write_text("".join(text[:4] * 3) + "".join(text[4:]))
    out = small["dir"] / "d.bam"
    proc = cli(*align_args(small, out, "--reads", str(reads)))
    assert proc.returncode == 0, proc.stderr
    assert "2 read(s) have the same name as the read before them" in proc.stderr.decode()
    recs = records(out)
    assert len(recs) == 22
    assert [r.is_unmapped for r in recs[:3]] == [False, True, True]


# ---------------------------------------------------------------- reference


def test_duplicate_contig_names_are_an_error_and_leave_no_index(small):
    genome = small["ref"].read_text()
    ref = small["dir"] / "dup.fa"
    ref.write_text(genome + ">other\nACGTACGT\n>lambda\nACGTACGTACGT\n")
    lines = genome.count("\n")
    before = {p.name for p in small["dir"].iterdir()}
    one_error_line(cli(*align_args(small, small["dir"] / "x.bam", "-r", str(ref))),
                   "dup.fa", f"line {lines + 3}", "contig 'lambda' appears twice")
    assert leftovers(small["dir"], before) == set()  # no dup.fa.fai listing the first copies


def test_stale_fai_is_rebuilt_and_said(small):
    expected = run_ok(small, small["dir"] / "a.bam")  # builds lambda.fa.fai
    genome = small["ref"].read_text().split("\n", 1)
    # the same sequence in lines of another width: every offset in the old index is wrong
    seq = genome[1].replace("\n", "")
    small["ref"].write_text(genome[0] + "\n" + "\n".join(seq[i:i + 61]
                                                        for i in range(0, len(seq), 61)) + "\n")
    old = time.time() - 3600
    os.utime(small["ref"], (old, old))  # older than its index: only the content tells
    proc = cli(*align_args(small, small["dir"] / "b.bam"))
    assert proc.returncode == 0, proc.stderr
    assert "rebuilding the index" in proc.stderr.decode()
    assert text_records(small["dir"] / "b.bam") == expected


def test_fasta_newer_than_its_index_is_reindexed(small):
    run_ok(small, small["dir"] / "a.bam")
    fai = Path(str(small["ref"]) + ".fai")
    os.utime(fai, (time.time() - 3600, time.time() - 3600))
    proc = cli(*align_args(small, small["dir"] / "b.bam"))
    assert proc.returncode == 0
    assert "is older than lambda.fa: rebuilding the index" in proc.stderr.decode()


@pytest.mark.parametrize("kind", ["directory", "fifo", "missing"])
def test_reference_that_is_not_a_file(small, kind):
    path = small["dir"] / "ref.x"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    want = {"directory": "is a directory", "fifo": "not a regular file",
            "missing": "no such file or directory"}[kind]
    one_error_line(cli(*align_args(small, small["dir"] / "x.bam", "-r", str(path))), want)


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_input(tmp_path):
    """Peak RSS at 2.5x the reads stays within 10% for the same batch size.

    The readers fill 32 MiB buffers, so inputs smaller than that (these, kept small for
    CI) add their own size once; that much is allowed on top of the 10%.
    """
    if not Path("/usr/bin/time").exists():
        pytest.skip("/usr/bin/time is not installed (Debian package time)")

    peaks, sizes = [], []
    for n in (40_000, 100_000):  # both past kernels.loops.SERIAL_BELOW: the same builds load
        d = tmp_path / str(n)
        d.mkdir()
        ref, reads, paf, _ = simulate(str(d), n, 1_000_000, 3)
        proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "readalign", "align",
                               "-q", "-r", ref, "--reads", reads, "-c", paf, "-o",
                               str(d / "o.bam"), "--batch-size", "2000"],
                              capture_output=True, text=True, timeout=HANG_SECONDS)
        assert proc.returncode == 0, proc.stderr[-2000:]
        line = next(ln for ln in proc.stderr.splitlines() if "Maximum resident set size" in ln)
        peaks.append(int(line.split(":")[1]))
        sizes.append(sum(min(os.path.getsize(p), 32 << 20) for p in (reads, paf)) // 1024)
    assert peaks[1] <= peaks[0] * 1.10 + (sizes[1] - sizes[0]), (peaks, sizes)


# ---------------------------------------------------------------- SAM text reads

_COMP = str.maketrans("ACGTN", "TGCAN")


def _fastq_records(path: Path) -> list[tuple[str, str, str]]:
    lines = path.read_text().splitlines()
    return [(lines[i][1:].split()[0], lines[i + 1], lines[i + 3]) for i in range(0, len(lines), 4)]


def test_hand_written_sam_text_reads_align_as_the_fastq(small):
    """Unaligned SAM records: reverse-strand ones turned back, secondary ones skipped, names
    as written (flag 4 alone: no mate suffix), gzip from a pipe as well as a plain file."""
    expected = run_ok(small, small["dir"] / "fq.bam")
    rows = ["@HD\tVN:1.6\tSO:unsorted", "@RG\tID:x\tSM:y", "@PG\tID:hand\tPN:editor"]
    for i, (name, seq, qual) in enumerate(_fastq_records(small["reads"])):
        if i % 3 == 1:  # stored reverse-complemented, as an aligner would have
            rows.append(f"{name}\t20\t*\t0\t0\t*\t*\t0\t0\t{seq.translate(_COMP)[::-1]}\t"
                        f"{qual[::-1]}\tRG:Z:x")
        else:
            rows.append(f"{name}\t4\t*\t0\t0\t*\t*\t0\t0\t{seq}\t{qual}")
        if i == 4:  # a secondary record is no read of its own
            rows.append(f"{name}\t260\t*\t0\t0\t*\t*\t0\t0\t*\t*")
    sam = small["dir"] / "reads.sam"
    sam.write_text("\r\n".join(rows) + "\r\n")
    assert run_ok(small, small["dir"] / "sam.bam", "--reads", str(sam)) == expected
    with open(small["dir"] / "reads.sam.gz", "wb") as fh:
        fh.write(gzip.compress(sam.read_bytes()))
    with open(small["dir"] / "reads.sam.gz", "rb") as stdin:
        got = run_ok(small, small["dir"] / "pipe.bam", "--reads", "/dev/stdin", stdin=stdin)
    assert got == expected


def test_samtools_import_output_reads_as_its_fastq(small):
    """`samtools import` takes /1 off the names into flag 0x40, as `samtools fastq` puts it
    back: the reads keep the names the candidates were found for."""
    samtools = require_tool("samtools")
    expected = run_ok(small, small["dir"] / "fq.bam")
    sam = small["dir"] / "imported.sam"
    with open(sam, "wb") as fh:
        subprocess.run([samtools, "import", "-0", str(small["reads"])], stdout=fh, check=True)
    assert sam.read_text().startswith("@HD")
    assert run_ok(small, small["dir"] / "sam.bam", "--reads", str(sam)) == expected
    ubam = small["dir"] / "imported.bam"
    subprocess.run([samtools, "import", "-0", str(small["reads"]), "-o", str(ubam)], check=True)
    assert run_ok(small, small["dir"] / "ubam.bam", "--reads", str(ubam)) == expected


def test_sam_text_fault_names_its_line(small):
    sam = small["dir"] / "bad.sam"
    sam.write_text("@HD\tVN:1.6\nr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n"
                   "r2\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIII\n")
    one_error_line(cli(*align_args(small, small["dir"] / "x.bam", "--reads", str(sam))),
                   "bad.sam: line 3", "SEQ and QUAL lengths differ (4 vs 3)", "SAM text")
    assert not (small["dir"] / "x.bam").exists()


# ---------------------------------------------------------------- batch size and memory


def test_batch_size_beyond_the_memory_is_one_line(small):
    out = small["dir"] / "x.bam"
    proc = cli(*align_args(small, out, "--batch-size", "1000000000000"))
    one_error_line(proc, "--batch-size 1,000,000,000,000", "GB available", "reads a batch here")
    assert not out.exists()


def test_memory_error_while_a_batch_is_allocated_is_one_line(small):
    """A batch whose arrays no address space holds (8 bytes a read of offsets, 10**17 reads):
    numpy's MemoryError, raised by the real allocation, becomes the option's one line."""
    from readalign.bam.options import Options
    from readalign.bam.reading import RepeatedNames, read_stage
    from readalign.errors import InputError
    from readalign.io.reference import Reference

    opts = Options(reference=str(small["ref"]), reads=str(small["reads"]),
                   candidates=str(small["cand"]), output=str(small["dir"] / "x.bam"),
                   batch_size=10**17)
    ref = Reference(opts.reference)
    try:
        stage = read_stage(opts, ref, dict.fromkeys(("read",), 0.0), RepeatedNames(),
                           lambda items, name, depth=1: items)
        with pytest.raises(InputError, match=r"^--batch-size 100,000,000,000,000,000: out of "
                                             r"memory for a batch \(.*\); choose a smaller"):
            next(stage)
    finally:
        ref.close()
