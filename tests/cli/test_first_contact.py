"""A newcomer's first minutes: the compile notice, a progress line that moves, test dependencies.

The compile tests start with an empty NUMBA_CACHE_DIR, so they compile the
words kernels (about 10 s on 2 cores): that is what they are about.
"""

from __future__ import annotations

import io
import logging
import os
import pty
import random
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pysam
import pytest
from conftest import HANG_SECONDS, REPO

import readalign
from readalign.runtime.progress import REDRAW_SECONDS, Progress

NOTICE = "compiling the alignment kernels for this machine (once; a minute or two; cached in "
PY_API = """
import logging, sys, readalign
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
print(readalign.cdist(["kitten", "sitting"], backend="cpu").tolist())
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(extra)
    return env


def _readalign(*args: str) -> list[str]:
    return [sys.executable, "-m", "readalign", *args]


def _words(path: Path, count: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    path.write_text("".join("".join(rng.choice("acgt") for _ in range(rng.randint(8, 20))) + "\n"
                            for _ in range(count)))
    return path


# --- compile notice ----------------------------------------------------------------------------

@pytest.mark.slow
def test_first_run_says_once_that_it_compiles_and_a_warm_run_says_nothing(tmp_path):
    words = _words(tmp_path / "w.txt", 3)
    cache = tmp_path / "numba"
    cmd = _readalign("distance", str(words), "-o", str(tmp_path / "m.tsv"), "--backend", "cpu")
    cold = subprocess.run(cmd, capture_output=True, text=True, env=_env(NUMBA_CACHE_DIR=str(cache)))
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(NOTICE) == 1, cold.stderr
    assert f"readalign: {NOTICE}{cache})\n" in cold.stderr
    warm = subprocess.run(cmd, capture_output=True, text=True, env=_env(NUMBA_CACHE_DIR=str(cache)))
    assert warm.returncode == 0, warm.stderr
    assert "compiling" not in warm.stderr
    assert (tmp_path / "m.tsv").read_text().count("\n") == 3


@pytest.mark.slow
def test_python_api_logs_the_compile_notice_at_info(tmp_path):
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    cold = subprocess.run([sys.executable, "-c", PY_API], capture_output=True, text=True, env=env)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout == "[[0, 3], [3, 0]]\n"
    assert cold.stderr.count(f"INFO readalign: {NOTICE}") == 1, cold.stderr
    warm = subprocess.run([sys.executable, "-c", PY_API], capture_output=True, text=True, env=env)
    assert warm.returncode == 0 and "compiling" not in warm.stderr, warm.stderr


# --- progress on a terminal --------------------------------------------------------------------

def _on_pty(cmd: list[str], timeout: float = HANG_SECONDS) -> tuple[int, float, list[tuple[float, str]]]:
    """Run ``cmd`` with stderr on a pseudo-terminal: its exit status, the monotonic time just
    before it was started, and the (arrival time, text) chunks it wrote."""
    master, slave = pty.openpty()
    launched = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                            env=_env())
    os.close(slave)
    chunks: list[tuple[float, str]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1.0)[0]:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append((time.monotonic(), data.decode(errors="replace")))
    finally:
        os.close(master)
        proc.kill() if proc.poll() is None else None
    return proc.wait(), launched, chunks


def _elapsed(line: str) -> int:
    m = re.search(r"(\d+):(\d\d) elapsed", line)
    return int(m[1]) * 60 + int(m[2])


def _check_redraws(launched: float, chunks: list[tuple[float, str]], idle: str) -> list[str]:
    """The progress lines drawn; assert that the timer redraws the line while no count moves
    (lines holding ``idle``) and that its clock counts real time.

    Nothing here depends on how busy the machine is. The run's clock starts after the launch,
    shows whole seconds, and a line arrives after it is drawn, so no line can show more time
    than has passed since the launch when it arrives. While no count moves, every line but one
    (the first draw, wherever a busy machine puts it) is a timer redraw, and redraws are at
    least ``REDRAW_SECONDS`` apart, so from the first such line to the last the clock must move
    by that much per redraw, less one second of flooring.
    """
    lines = [(t, part) for t, text in chunks for part in text.split("\r") if "elapsed" in part]
    assert len(lines) >= 3, lines
    for arrived, line in lines:
        assert _elapsed(line) <= arrived - launched, (line, arrived - launched)
    seconds = [_elapsed(line) for _, line in lines]
    assert seconds == sorted(seconds), seconds
    still = [_elapsed(line) for _, line in lines if idle in line]
    assert len(still) >= 3, lines
    assert still[-1] - still[0] >= REDRAW_SECONDS * (len(still) - 2) - 1, still
    return [line for _, line in lines]


@pytest.mark.slow
def test_distance_progress_moves_every_second_within_one_block(tmp_path):
    words = _words(tmp_path / "w.txt", 11000)  # 1.5-2 s on one core: the clock moves
    out = tmp_path / "pairs.tsv"
    cmd = _readalign("distance", str(words), "-o", str(out), "--max-distance", "1", "--backend",
                     "cpu", "--threads", "1", "--chunk-rows", "100000")  # a single block
    rc, launched, chunks = _on_pty(cmd)
    assert rc == 0, chunks
    lines = _check_redraws(launched, chunks, " 0/11,000 rows, ")
    assert lines[0].startswith("[....") and " 0/11,000 rows, " in lines[0]
    assert lines[-1].startswith("[" + "#" * 30 + "] 100% 11,000/11,000 rows, ")
    assert out.stat().st_size > 0
    rc, _, chunks = _on_pty([*cmd, "-q"])
    assert rc == 0 and "".join(text for _, text in chunks) == ""
    piped = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    assert piped.returncode == 0 and "\r" not in piped.stderr and "elapsed" not in piped.stderr


def _align_inputs(d: Path, reads: int, length: int) -> tuple[Path, Path, Path]:
    """A random 100 kb contig, reads taken from it with 2% substitutions, their true windows."""
    rng = random.Random(7)
    ref = "".join(rng.choice("ACGT") for _ in range(100_000))
    fasta = d / "ref.fa"
    fasta.write_text(">chr1\n" + "\n".join(ref[i:i + 60] for i in range(0, len(ref), 60)) + "\n")
    fq, tsv = [], []
    for i in range(reads):
        s = rng.randrange(len(ref) - length)
        seq = list(ref[s:s + length])
        for _ in range(length // 50):
            seq[rng.randrange(length)] = rng.choice("ACGT")
        fq.append(f"@r{i}\n{''.join(seq)}\n+\n{'I' * length}\n")
        tsv.append(f"r{i}\tchr1\t{s}\t{s + length}\t+\n")
    (d / "reads.fq").write_text("".join(fq))
    (d / "cand.tsv").write_text("".join(tsv))
    return fasta, d / "reads.fq", d / "cand.tsv"


@pytest.mark.slow
def test_align_progress_moves_every_second_within_one_batch(tmp_path):
    ref, reads, cands = _align_inputs(tmp_path, 700, 900)  # one batch, about 4 s on one core
    bam = tmp_path / "out.bam"
    rc, launched, chunks = _on_pty(_readalign("align", "-r", str(ref), "--reads", str(reads), "-c",
                                              str(cands), "-o", str(bam), "--threads", "1"))
    assert rc == 0, chunks
    lines = _check_redraws(launched, chunks, "readalign: 0 reads, ")
    assert re.match(r"readalign: 0 reads, \d+:\d\d elapsed", lines[0]), lines[0]
    assert lines[-1].startswith("readalign: 700 reads (700 aligned), ")
    with pysam.AlignmentFile(str(bam)) as fh:
        assert sum(1 for _ in fh) == 700


def test_progress_line_shows_elapsed_time_and_log_lines_start_on_a_clean_line():
    now = [100.0]
    stream = io.StringIO()
    progress = Progress(None, "reads", enabled=True, stream=stream, prefix="readalign: ",
                        clock=lambda: now[0])
    now[0] += 65
    progress.update(1000)
    assert progress.line(now[0]) == "readalign: 1,000 reads, 15 reads/s, 1:05 elapsed"
    assert Progress(10, clock=lambda: 0.0).line(3725.0).endswith("0/10 rows, 1:02:05 elapsed")
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("readalign")
    log.addHandler(handler)
    try:
        progress.start()
        log.warning("a warning")
    finally:
        progress.close()
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "elapsed\x1b[K\r\x1b[Ka warning\n" in text
    assert text.endswith("readalign: 1,000 reads, 15 reads/s, 1:05 elapsed\x1b[K\n")


# --- optional test dependencies ----------------------------------------------------------------

HIDE_EDLIB = """
import sys
sys.modules["edlib"] = None  # as if edlib were not installed
import pytest
sys.exit(pytest.main(["-n", "0", "-p", "no:cacheprovider", "-rs", "-q",
                      "tests/engine/test_engine.py::test_tens_of_thousands_against_edlib",
                      "tests/engine/test_engine.py::test_ten_kilobase_pair"]))
"""


@pytest.mark.slow
def test_missing_test_extra_skips_with_its_reason_but_fails_under_ci():
    reason = "Python package 'edlib' is not installed (pip install -e '.[test-extra]')"
    dev = subprocess.run([sys.executable, "-c", HIDE_EDLIB], capture_output=True, text=True,
                         cwd=REPO, env=_env())
    assert dev.returncode == 0, dev.stdout
    assert "SKIPPED [2] tests/conftest.py:" in dev.stdout and f": {reason}\n" in dev.stdout
    assert "2 skipped" in dev.stdout
    ci = subprocess.run([sys.executable, "-c", HIDE_EDLIB], capture_output=True, text=True,
                        cwd=REPO, env=_env(CI="true"))
    assert ci.returncode == 1, ci.stdout
    assert f"{reason} (CI=true: .ci/run must install '.[test-extra]')" in ci.stdout
    assert "2 failed" in ci.stdout


def test_import_and_help_do_not_load_numba():
    """`import readalign` and the whole command line's help load neither numba nor numpy; the
    first use of the API does (a start-up cost paid only by runs that align)."""
    code = ("import sys\n"
            "import readalign\n"
            "from readalign.cli import build_parser\n"
            "build_parser()\n"
            "assert 'numba' not in sys.modules and 'numpy' not in sys.modules, 'loaded early'\n"
            "assert 'align' in dir(readalign) and readalign.Scoring is not None\n"
            "assert 'numba' in sys.modules\n"
            "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        readalign.nope  # noqa: B018


HIDE_SNAKEMAKE = """
import sys
sys.modules["snakemake"] = None  # as if the workflow extra were not installed
import pytest
sys.exit(pytest.main(["-n", "0", "-p", "no:cacheprovider", "-rs", "-q",
                      "tests/workflow/test_workflow.py"]))
"""


@pytest.mark.slow
def test_workflow_tests_without_snakemake_name_the_workflow_extra():
    dev = subprocess.run([sys.executable, "-c", HIDE_SNAKEMAKE], capture_output=True, text=True,
                         cwd=REPO, env=_env(), timeout=HANG_SECONDS)
    assert dev.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, dev.stdout  # the module skips
    reason = "Python package 'snakemake' is not installed (pip install -e '.[workflow]')"
    assert "SKIPPED [1] tests/conftest.py:" in dev.stdout and f": {reason}\n" in dev.stdout
    assert "1 skipped" in dev.stdout
    ci = subprocess.run([sys.executable, "-c", HIDE_SNAKEMAKE], capture_output=True, text=True,
                        cwd=REPO, env=_env(CI="true"), timeout=HANG_SECONDS)
    assert ci.returncode != 0 and "CI=true: .ci/run must install '.[workflow]'" in ci.stdout, ci.stdout


# --- the default test run ----------------------------------------------------------------------

def _collected(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-n", "0", "-p",
                          "no:cacheprovider", *args], cwd=REPO, capture_output=True, text=True,
                         env=_env(), timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


@pytest.mark.slow
def test_a_default_run_says_it_compiles_and_leaves_out_slow_tests_unless_named_or_chosen():
    slow = "tests/workflow/test_workflow.py::test_fewer_reads_than_chunks"
    quick = "tests/workflow/test_workflow_scripts.py::test_stats_report"
    default = _collected("tests/workflow")
    assert "readalign: tests marked slow are left out (python -m pytest -m slow runs them" in default
    assert re.search(r"^readalign: (numba's compiled kernels are cached|this first run compiles)",
                     default, re.M), default[:2000]
    listed = _collected("-q", "tests/workflow")
    assert quick in listed and slow not in listed and " deselected)" in listed
    chosen = _collected("-q", "-m", "slow", "tests/workflow")
    assert slow in chosen and quick not in chosen
    named = _collected("-q", "tests/workflow/test_workflow.py")
    assert slow in named and "deselected" not in named
