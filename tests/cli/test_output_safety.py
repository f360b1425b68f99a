"""`readalign align` and `readalign distance` never destroy a file and fail with one line.

Each test runs the command line as a new process on the shipped example
(phage lambda, 2,000 reads, minimap2's candidates, or its first 20 reads) and
checks what is on disk afterwards: the inputs and any earlier output untouched,
no temporary file left, one line on stderr naming the file and the OS's reason,
devices and pipes written where they are, outputs with the mode a plain
``open()`` gives, and the format the name asks for.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pysam
import pytest
from conftest import HANG_SECONDS, REPO, require_tool

pytestmark = pytest.mark.slow  # every case runs the command as a new process on the example data

EXAMPLES = REPO / "examples"


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    """``python -m readalign ARGS`` as a new process (stdin closed)."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("capture_output", "stdout" not in kw)
    if "stdout" in kw:
        kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "readalign", *args], timeout=HANG_SECONDS, **kw)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(name="ex")
def ex_fixture(tmp_path: Path) -> dict[str, Path]:
    """A copy of the example inputs in a fresh directory."""
    for name in ("lambda.fa", "reads.fq.gz", "candidates.paf.gz"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return {"dir": tmp_path, "ref": tmp_path / "lambda.fa", "reads": tmp_path / "reads.fq.gz",
            "cand": tmp_path / "candidates.paf.gz"}


@pytest.fixture(name="small")
def small_fixture(ex: dict[str, Path]) -> dict[str, Path]:
    """The first 20 reads of the example (plain FASTQ) and their PAF candidates."""
    with gzip.open(ex["reads"], "rt") as fh:
        lines = [next(fh) for _ in range(80)]
    reads = ex["dir"] / "r.fq"
    reads.write_text("".join(lines))
    names = {lines[i][1:].split()[0] for i in range(0, 80, 4)}
    with gzip.open(ex["cand"], "rt") as fh:
        cand = [ln for ln in fh if ln.split("\t", 1)[0] in names]
    paf = ex["dir"] / "c.paf"
    paf.write_text("".join(cand))
    return {**ex, "reads": reads, "cand": paf}


@pytest.fixture()
def devices(tmp_path: Path) -> dict[str, Path]:
    """Character devices that behave as ``/dev/null`` and ``/dev/full``.

    As root they are new nodes in the test's directory, so a run that replaced one
    would replace only the test's copy; other users get the system's own, which
    they cannot replace (a run that tried fails the test with "permission denied").
    """
    if os.geteuid() != 0:
        return {"null": Path("/dev/null"), "full": Path("/dev/full")}
    made = {}
    for name, minor in (("null", 3), ("full", 7)):
        made[name] = tmp_path / f"dev_{name}"
        try:
            os.mknod(made[name], 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        except PermissionError:
            pytest.skip("cannot make device nodes here (no CAP_MKNOD)")
    return made


def is_device(path: Path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


def align_args(ex: dict[str, Path], out: str | Path, *extra: str) -> list[str]:
    return ["align", "-q", "-r", str(ex["ref"]), "--reads", str(ex["reads"]), "-c",
            str(ex["cand"]), "-o", str(out), *extra]


def one_error_line(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The failed run's stderr: exactly one line, starting ``readalign: error:``, holding ``words``."""
    err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    lines = err.strip().splitlines()
    assert proc.returncode == 1, err
    assert len(lines) == 1 and lines[0].startswith("readalign: error: "), err
    for w in words:
        assert w in lines[0], err
    return lines[0]


def leftovers(folder: Path, keep: set[str]) -> set[str]:
    return {p.name for p in folder.iterdir()} - keep


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small tmpfs mounted at ``path``, or a skip where mounting is not permitted."""
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or 'not permitted'})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.parametrize("which", ["reads", "cand", "ref", "fai"])
def test_output_naming_an_input_is_refused(ex, which):
    cli("align", "-q", "-r", str(ex["ref"]), "--reads", str(ex["reads"]), "-c", str(ex["cand"]),
        "-o", str(ex["dir"] / "first.bam"))  # builds the .fai
    target = Path(str(ex["ref"]) + ".fai") if which == "fai" else ex[which]
    before = digest(target)
    proc = cli(*align_args(ex, target))
    one_error_line(proc, target.name, "refusing to overwrite an input")
    assert digest(target) == before


def test_index_of_sorted_output_naming_an_input_is_refused(ex):
    bai_input = ex["dir"] / "x.bam.bai"
    shutil.copy(ex["cand"], bai_input)
    proc = cli(*align_args(ex, ex["dir"] / "x.bam", "--sort", "-c", str(bai_input)))
    one_error_line(proc, "refusing to overwrite an input")


def test_failed_run_keeps_an_earlier_output_and_its_index(ex):
    out = ex["dir"] / "out.bam"
    assert cli(*align_args(ex, out, "--sort")).returncode == 0
    bam, bai = digest(out), digest(Path(str(out) + ".bai"))
    bad = ex["dir"] / "bad.tsv"
    bad.write_text("no_such_read\tlambda\t0\t100\t+\n")
    proc = cli(*align_args(ex, out, "--sort", "-c", str(bad)))
    one_error_line(proc, "bad.tsv", "line 1")
    assert digest(out) == bam and digest(Path(str(out) + ".bai")) == bai
    assert leftovers(ex["dir"], {"lambda.fa", "lambda.fa.fai", "reads.fq.gz", "candidates.paf.gz",
                                 "out.bam", "out.bam.bai", "bad.tsv"}) == set()


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_keeps_an_earlier_output(ex, sig, status):
    out = ex["dir"] / "out.bam"
    assert cli(*align_args(ex, out, "--sort")).returncode == 0
    bam, bai = digest(out), digest(Path(str(out) + ".bai"))
    fifo = ex["dir"] / "reads.fifo"
    os.mkfifo(fifo)
    args = align_args(ex, out, "--sort")
    args[args.index("--reads") + 1] = str(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "readalign", *args], stdin=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    with open(fifo, "wb") as feed:  # the run blocks on its reads until the signal
        feed.write(b"@r1\nACGT\n+\nIIII\n")
        feed.flush()
        time.sleep(3)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=HANG_SECONDS)
    assert proc.returncode == status, err
    assert b"Traceback" not in err
    assert digest(out) == bam and digest(Path(str(out) + ".bai")) == bai
    assert leftovers(ex["dir"], {"lambda.fa", "lambda.fa.fai", "reads.fq.gz", "candidates.paf.gz",
                                 "out.bam", "out.bam.bai", "reads.fifo"}) == set()


def test_output_path_is_a_directory(ex):
    (ex["dir"] / "d").mkdir()
    one_error_line(cli(*align_args(ex, ex["dir"] / "d")), "is a directory")


def test_output_directory_missing(ex):
    one_error_line(cli(*align_args(ex, ex["dir"] / "no" / "x.bam")), "does not exist")


def test_read_only_filesystem(ex):
    with tmpfs(ex["dir"] / "ro", "ro,size=64k") as ro:
        one_error_line(cli(*align_args(ex, ro / "x.bam")), "x.bam", "read-only file system")


@pytest.mark.parametrize("extra", [(), ("--sort",), ("--sam",)])
def test_disk_full_on_a_file(ex, extra):
    with tmpfs(ex["dir"] / "full", "size=64k") as full:
        proc = cli(*align_args(ex, full / "x.out", *extra))  # BAM, or SAM with --sam
        one_error_line(proc, "no space left on device")
        assert list(full.iterdir()) == []


def test_disk_full_on_stdout(ex):
    with open("/dev/full", "wb") as dev_full:
        proc = cli(*align_args(ex, "-"), stdout=dev_full)
    one_error_line(proc, "stdout", "no space left on device")


def test_closed_stdout_is_quiet(ex):
    proc = subprocess.run(f"{sys.executable} -m readalign {' '.join(align_args(ex, '-'))} "
                          "| head -c 100 > /dev/null; exit ${PIPESTATUS[0]}", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode in (0, 141), proc.stderr
    assert proc.stderr == ""


def test_bad_summary_json_path_leaves_no_output(ex):
    out = ex["dir"] / "out.bam"
    proc = cli(*align_args(ex, out, "--summary-json", str(ex["dir"] / "no" / "s.json")))
    one_error_line(proc, "s.json")
    assert not out.exists()


def test_summary_json_is_written_with_the_output(ex):
    out, summary = ex["dir"] / "out.bam", ex["dir"] / "s.json"
    assert cli(*align_args(ex, out, "--summary-json", str(summary))).returncode == 0
    assert '"reads_in": 2000' in summary.read_text()


def _records(path: str) -> list[str]:
    with pysam.AlignmentFile(path, check_sq=False) as fh:
        return [r.to_string() for r in fh]


def test_sam_to_a_file_and_to_stdout(ex):
    bam, sam = ex["dir"] / "out.bam", ex["dir"] / "out.sam"
    assert cli(*align_args(ex, bam)).returncode == 0
    assert cli(*align_args(ex, sam, "--sam")).returncode == 0
    expected = _records(str(bam))
    assert len(expected) == 2000
    assert sam.read_text().startswith("@HD")
    assert _records(str(sam)) == expected
    piped = ex["dir"] / "piped.sam"
    with open(piped, "wb") as fh:
        assert cli(*align_args(ex, "-", "--sam"), stdout=fh).returncode == 0
    assert _records(str(piped)) == expected


def test_distance_output_naming_its_input_is_refused(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("kitten\nsitting\nmitten\n")
    before = digest(words)
    one_error_line(cli("distance", "-q", str(words), "-o", str(words)), "refusing to overwrite an input")
    assert digest(words) == before


def test_distance_failure_keeps_an_earlier_output(tmp_path):
    words, out = tmp_path / "words.txt", tmp_path / "m.tsv"
    words.write_text("kitten\nsitting\nmitten\n")
    assert cli("distance", str(words), "-o", str(out)).returncode == 0
    before = digest(out)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    assert cli("distance", str(bad), "-o", str(out)).returncode == 1
    assert digest(out) == before
    assert leftovers(tmp_path, {"words.txt", "m.tsv", "bad.txt"}) == set()


def test_distance_disk_full(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("".join(f"w{i}\n" for i in range(300)))
    with tmpfs(tmp_path / "full", "size=16k") as full:
        one_error_line(cli("distance", "-q", str(words), "-o", str(full / "m.tsv")),
                       "no space left on device")
        assert list(full.iterdir()) == []


@pytest.mark.parametrize("command", ["align", "distance", "search", "makedb"])
def test_help_states_each_default_once_and_truly(command):
    from readalign.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    text = sub.format_help()
    assert "(default: None)" not in text and "(default: False)" not in text
    for action in sub._actions:
        help_text = sub._get_formatter()._get_help_string(action) or ""
        help_text = help_text % {"default": action.default, "prog": "readalign"}
        assert help_text.count("(default") <= 1, help_text
        if action.default not in (None, False) and "(default: " in help_text:
            stated = help_text.split("(default: ", 1)[1].split(")", 1)[0].split(",")[0]
            assert stated == str(action.default), (action.dest, help_text)


def test_threads_default_to_the_cpus_this_process_may_use():
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    proc = subprocess.run([sys.executable, "-m", "readalign", "align", "--help"],
                          preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    assert "here 1)" in " ".join(proc.stdout.split())


def test_bgzf_writer_help_states_the_threads_the_writer_gets():
    from readalign.bam.bgzf import deflate_threads
    from readalign.runtime.backends import usable_cpus

    proc = subprocess.run([sys.executable, "-m", "readalign", "align", "--help"],
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    text = " ".join(proc.stdout.split())
    cpus = usable_cpus()
    assert f"here, with --threads unset, {deflate_threads(cpus, 'isal')} of {cpus})" in text, text
    assert "htslib's own on every thread" in text and "(default: auto)" in text


def test_output_that_is_a_stream_is_written_not_replaced(ex):
    """A named pipe at ``-o`` is written to, never renamed over."""
    fifo = ex["dir"] / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert cli(*align_args(ex, fifo)).returncode == 0
    reader.join(timeout=HANG_SECONDS)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    (ex["dir"] / "from_fifo.bam").write_bytes(got[0])
    assert len(_records(str(ex["dir"] / "from_fifo.bam"))) == 2000


def test_symbolic_link_output_replaces_its_target_and_keeps_the_link(ex):
    target, link = ex["dir"] / "real.bam", ex["dir"] / "link.bam"
    target.write_bytes(b"an earlier output")
    link.symlink_to(target)
    assert cli(*align_args(ex, link)).returncode == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(_records(str(target))) == 2000


# ------------------------------------------------------- devices, modes, formats


def test_summary_json_to_a_full_device_fails_and_keeps_the_device(small, devices):
    out = small["dir"] / "out.bam"
    proc = cli(*align_args(small, out, "--summary-json", str(devices["full"])))
    one_error_line(proc, devices["full"].name, "cannot write (no space left on device)")
    assert is_device(devices["full"])
    assert not out.exists()  # the run failed: no output that looks complete


def test_summary_json_to_a_null_device_is_written_there(small, devices):
    out = small["dir"] / "out.bam"
    proc = cli(*align_args(small, out, "--summary-json", str(devices["null"])))
    assert proc.returncode == 0, proc.stderr
    assert is_device(devices["null"])
    assert len(_records(str(out))) == 20


@pytest.mark.parametrize("fmt", [("--format", "tsv"), ("--format", "npy"),
                                 ("--format", "npy", "--max-distance", "2")])
def test_distance_output_to_devices(tmp_path, devices, fmt):
    words = tmp_path / "words.txt"
    words.write_text("kitten\nsitting\nmitten\n")
    ok = cli("distance", "-q", str(words), "-o", str(devices["null"]), *fmt)
    assert ok.returncode == 0, ok.stderr
    full = cli("distance", "-q", str(words), "-o", str(devices["full"]), *fmt)
    one_error_line(full, devices["full"].name, "cannot write (no space left on device)")
    assert is_device(devices["null"]) and is_device(devices["full"])
    assert leftovers(tmp_path, {"words.txt", "dev_null", "dev_full"}) == set()


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_outputs_get_the_mode_of_a_plain_open(small, umask):
    """Every output (and the .fai built beside the reference) gets what open() gives a new
    file under the run's umask, as samtools' outputs do."""
    d = small["dir"]
    words = d / "words.txt"
    words.write_text("kitten\nsitting\nmitten\n")
    previous = os.umask(umask)
    try:
        with open(d / "plain", "w"):
            pass
        want = _mode(d / "plain")
        assert cli(*align_args(small, d / "o.bam", "--sort", "--summary-json",
                               str(d / "s.json"))).returncode == 0
        assert cli(*align_args(small, d / "o.sam")).returncode == 0
        for fmt in (("tsv",), ("npy",), ("npy", "--max-distance", "1")):
            out = d / f"dist{len(fmt)}.{fmt[0]}"
            assert cli("distance", "-q", str(words), "-o", str(out), "--format", *fmt
                       ).returncode == 0
    finally:
        os.umask(previous)
    made = ["o.bam", "o.bam.bai", "s.json", "lambda.fa.fai", "o.sam", "dist1.tsv", "dist1.npy",
            "dist3.npy"]
    assert {name: oct(_mode(d / name)) for name in made} == dict.fromkeys(made, oct(want))
    assert want == 0o666 & ~umask


def _magic(path: Path) -> bytes:
    with open(path, "rb") as fh:
        head = fh.read(4)
    return gzip.decompress(path.read_bytes())[:4] if head[:2] == b"\x1f\x8b" else head


def _same_records(path: Path, ref: Path) -> list[list[str]]:
    """Records as text with their tags in a fixed order (CRAM stores tags in its own)."""
    with pysam.AlignmentFile(str(path), check_sq=False, reference_filename=str(ref)) as fh:
        rows = [r.to_string().split("\t") for r in fh]
    return [row[:11] + sorted(row[11:]) for row in rows]


def test_output_format_follows_the_name(small):
    d = small["dir"]
    assert cli(*align_args(small, d / "o.bam")).returncode == 0
    want = _same_records(d / "o.bam", small["ref"])
    assert _magic(d / "o.bam") == b"BAM\x01" and len(want) == 20
    for name, magic in (("plain.sam", b"@HD\t"), ("x.cram", b"CRAM"), ("UP.SAM", b"@HD\t"),
                        ("other.out", b"BAM\x01")):
        assert cli(*align_args(small, d / name)).returncode == 0, name
        assert _magic(d / name) == magic, name
        assert _same_records(d / name, small["ref"]) == want, name
    with open(d / "stdout.bam", "wb") as fh:
        assert cli(*align_args(small, "-"), stdout=fh).returncode == 0
    assert _magic(d / "stdout.bam") == b"BAM\x01"  # stdout keeps BAM


def test_output_format_option_overrides_a_name_without_a_format(small):
    d = small["dir"]
    for option in (("--sam",), ("--output-format", "sam")):
        assert cli(*align_args(small, d / "text.out", *option)).returncode == 0
        assert _magic(d / "text.out") == b"@HD\t"
    assert cli(*align_args(small, d / "x.cram", "--output-format", "cram")).returncode == 0
    assert _magic(d / "x.cram") == b"CRAM"


@pytest.mark.parametrize(("name", "option", "words"), [
    ("x.bam", ("--sam",), ("x.bam", "--sam asks for SAM", ".bam")),
    ("x.sam", ("--output-format", "bam"), ("x.sam", "asks for BAM", ".sam")),
    ("x.cram", ("--output-format", "sam"), ("x.cram", "asks for SAM", ".cram")),
    ("x.out", ("--sam", "--output-format", "cram"), ("--sam", "--output-format cram")),
])
def test_output_format_contradicting_the_name_is_refused(small, name, option, words):
    one_error_line(cli(*align_args(small, small["dir"] / name, *option)), *words)
    assert not (small["dir"] / name).exists()


def test_sorted_cram_gets_a_crai(small):
    d = small["dir"]
    assert cli(*align_args(small, d / "s.cram", "--sort")).returncode == 0
    assert _magic(d / "s.cram") == b"CRAM"
    assert (d / "s.cram.crai").exists() and not (d / "s.cram.bai").exists()
    subprocess.run([require_tool("samtools"), "quickcheck", str(d / "s.cram")], check=True)
    with pysam.AlignmentFile(str(d / "s.cram"), reference_filename=str(small["ref"])) as fh:
        starts = [r.reference_start for r in fh if not r.is_unmapped]
        assert starts == sorted(starts) and len(starts) > 10
        assert fh.check_index()


@pytest.mark.parametrize("extra", [("--sort",), ("--sam",), ("--output-format", "cram")])
def test_disk_full_after_the_temporary_bam(ex, extra):
    """The temporary BAM fits, the sorted or converted file does not: still one line from
    readalign (htslib's and samtools' own text kept off stderr), and nothing left behind."""
    probe = ex["dir"] / "probe.bam"
    assert cli(*align_args(ex, probe)).returncode == 0  # the temporary BAM, give or take its @PG
    pages = -(-probe.stat().st_size // 4096) + 1  # room for it and a page, not for a copy
    with tmpfs(ex["dir"] / "full", f"size={pages * 4}k") as full:
        proc = cli(*align_args(ex, full / "x.out", *extra))
        one_error_line(proc, "x.out", "cannot write (no space left on device)")
        assert list(full.iterdir()) == []


@pytest.mark.parametrize("extra", [("--sam",), ("--sort",)])
def test_dev_stdout_into_a_pipe_is_written_in_place(small, extra):
    """``-o /dev/stdout`` is a link to a pipe here: the converted or sorted output is copied
    into it (not renamed over the link's target)."""
    proc = cli(*align_args(small, "/dev/stdout", *extra), stdout=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    data = proc.stdout
    got = small["dir"] / "got"
    got.write_bytes(data)
    assert data.startswith(b"@HD") if extra == ("--sam",) else _magic(got) == b"BAM\x01"
    assert len(_records(str(got))) == 20
