"""``readalign distance``: formats, streaming blocks, word-file rules, errors."""

from __future__ import annotations

import io
import logging
import os

import numpy as np
import pytest

import readalign
from readalign.cli import main
from readalign.runtime.progress import Progress
from readalign.words import run as words_run
from readalign.words.wordfiles import split_words

WORDS = ["kitten", "sitting", "", "flaw", "lawn", "héllo", "hello", "😀ab", "kitten"]


def write_words(path, words, newline="\n", final=True) -> str:
    text = newline.join(words) + (newline if final else "")
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def read_tsv(path) -> np.ndarray:
    lines = path.read_text().splitlines()
    return np.array([[int(x) for x in line.split("\t")] for line in lines], dtype=np.int64)


@pytest.fixture
def words_file(tmp_path):
    return write_words(tmp_path / "words.txt", WORDS)


def test_dense_tsv_matches_cdist(tmp_path, words_file):
    out = tmp_path / "d.tsv"
    assert main(["distance", words_file, "-o", str(out), "-q", "--chunk-rows", "2"]) == 0
    np.testing.assert_array_equal(read_tsv(out), readalign.cdist(WORDS, backend="cpu"))


def test_pairs_tsv_and_npy_match_sparse_cdist(tmp_path, words_file):
    want = readalign.cdist(WORDS, max_distance=2, sparse=True, backend="cpu")
    tsv = tmp_path / "p.tsv"
    npy = tmp_path / "p.npy"
    for out, fmt in ((tsv, "tsv"), (npy, "npy")):
        assert main(["distance", words_file, "--max-distance", "2", "--format", fmt,
                     "--chunk-rows", "3", "-o", str(out), "-q"]) == 0
    got = read_tsv(tsv)
    np.testing.assert_array_equal(got, np.stack(want, axis=1).astype(np.int64))
    rec = np.load(npy)
    assert rec.dtype.names == ("i", "j", "distance")
    for name, arr in zip(rec.dtype.names, want, strict=True):
        np.testing.assert_array_equal(rec[name], arr)
    assert (rec["i"] < rec["j"]).all()


def test_two_lists_npy_dense_and_clipped(tmp_path, words_file):
    other_words = ["kitchen", "law", ""]
    other = write_words(tmp_path / "other.txt", other_words)
    out = tmp_path / "m.npy"
    assert main(["distance", words_file, other, "--format", "npy", "-o", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out), readalign.cdist(WORDS, other_words,
                                                                backend="cpu"))
    assert main(["distance", words_file, other, "--max-distance", "1", "--dense",
                 "--format", "npy", "-o", str(out), "-q"]) == 0
    got = np.load(out)
    np.testing.assert_array_equal(got, readalign.cdist(WORDS, other_words, max_distance=1,
                                                       backend="cpu"))
    assert got.max() == 2


def test_stdout(capfdbinary, words_file):
    assert main(["distance", words_file, words_file, "--max-distance", "0", "-o", "-",
                 "-q"]) == 0
    lines = capfdbinary.readouterr().out.decode().splitlines()
    pairs = {tuple(map(int, line.split("\t"))) for line in lines}
    assert (0, 8, 0) in pairs and (8, 0, 0) in pairs and (2, 2, 0) in pairs
    assert len(pairs) == len(WORDS) + 2


def test_stdout_is_called_standard_output_in_the_log(capfdbinary, words_file, caplog):
    caplog.set_level(logging.INFO, logger="readalign")
    assert main(["distance", words_file, "-o", "-"]) == 0
    assert "wrote to standard output in " in caplog.text and "wrote -" not in caplog.text
    assert capfdbinary.readouterr().out.count(b"\n") == len(WORDS)


def test_crlf_bom_and_final_newline(tmp_path):
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"\xef\xbb\xbfab\r\n\r\ncd\r\n")
    out = tmp_path / "o.tsv"
    assert main(["distance", str(crlf), "-o", str(out), "-q"]) == 0
    np.testing.assert_array_equal(read_tsv(out), readalign.cdist(["ab", "", "cd"],
                                                                 backend="cpu"))
    assert split_words("a\nb") == split_words("a\nb\n") == ["a", "b"]
    assert split_words("a\n\n") == ["a", ""]
    assert split_words("") == []
    assert split_words("\n") == [""]


def test_bad_utf8_names_file_and_line(tmp_path, caplog):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nalso fine\nbro\xe9ken\n")
    out = tmp_path / "o.tsv"
    assert main(["distance", str(bad), "-o", str(out)]) == 1
    assert f"{bad}:3: not valid UTF-8" in caplog.text
    assert not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["--format", "npy", "-o", "-"], "npy needs an output file"),
    (["--max-distance", "-1", "-o", "x.tsv"], "--max-distance must be >= 0"),
    (["--dense", "-o", "x.tsv"], "--dense only applies"),
    (["--threads", "0", "-o", "x.tsv"], "--threads"),
])
def test_bad_options(words_file, caplog, argv, message):
    assert main(["distance", words_file, *argv]) == 1
    assert message in caplog.text


def test_missing_input_and_unwritable_output(tmp_path, words_file, caplog):
    assert main(["distance", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "o.tsv")]) == 1
    assert "nope.txt: cannot read" in caplog.text
    assert main(["distance", words_file, "-o", str(tmp_path / "no" / "dir.tsv")]) == 1
    assert "dir.tsv: output directory" in caplog.text and "does not exist" in caplog.text


@pytest.mark.parametrize("fmt, extra", [("tsv", []), ("npy", []),
                                        ("npy", ["--max-distance", "1"])])
def test_failure_leaves_no_output(tmp_path, words_file, monkeypatch, fmt, extra):
    real = words_run.block_function

    def failing(name):
        block = real(name)
        calls = []

        def run(codes, r0, r1, **kw):
            calls.append(r0)
            if len(calls) > 1:
                raise readalign.InputError("simulated failure after one block")
            return block(codes, r0, r1, **kw)

        return run

    monkeypatch.setattr(words_run, "block_function", failing)
    out = tmp_path / f"o.{fmt}"
    assert main(["distance", words_file, "--format", fmt, "--chunk-rows", "2", "-o", str(out),
                 "-q", *extra]) == 1
    assert sorted(os.listdir(tmp_path)) == ["words.txt"]


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    bar = Progress(4, stream=tty)
    bar.update(2)
    bar.update(2)
    bar.close()
    assert "100%" in tty.getvalue() and "4/4 rows" in tty.getvalue()
    assert tty.getvalue().endswith("\n")
    quiet = Tty()
    bar = Progress(4, stream=quiet, enabled=False)
    bar.update(4)
    bar.close()
    assert quiet.getvalue() == ""
    plain = io.StringIO()
    bar = Progress(4, stream=plain)
    bar.update(4)
    bar.close()
    assert plain.getvalue() == ""


def test_progress_counter_without_total():
    """A stream of unknown length shows a running count, rate and note, then ends its line."""
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    bar = Progress(None, "reads", stream=tty, prefix="readalign: ")
    bar.update(1500, " (1,200 aligned)")
    bar.close()
    text = tty.getvalue()
    assert text.startswith("\rreadalign: 1,500 reads (1,200 aligned), ") and "reads/s" in text
    assert text.endswith("\n") and "%" not in text
