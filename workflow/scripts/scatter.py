"""Split reads and their candidates into N chunks of contiguous reads.

Chunk c receives a contiguous block of the reads (in the order of the reads file) and exactly
the candidate records of those reads, in their original order. Every chunk is therefore a
valid ``readalign align`` input on its own, and the chunks' outputs together hold the same
records as one run on the whole input.

Reads: FASTQ or FASTA (optionally gzipped), SAM text or unaligned BAM, told apart by their
content as readalign tells them; the chunks keep the format. Candidates: PAF or TSV
(optionally gzipped; the first tab-separated field is the read name; ``#`` lines and a TSV
``read_name`` column header before the first record are copied to every chunk), SAM or BAM
(the header is copied to every chunk). Candidates must be grouped by read in the order of the
reads file, as minimap2 writes them; reads without candidates are allowed; names must match
exactly, as readalign matches them. Chunks may be empty when there are fewer reads than chunks
(the workflow aligns them with ``--allow-empty``, which gives a header-only BAM).

Used by the example workflow through Snakemake's ``script:`` directive and runnable by hand:

    python workflow/scripts/scatter.py --reads R.fq --candidates C.paf \\
        --reads-out c0.fq c1.fq --candidates-out c0.paf c1.paf
"""

import argparse
import gzip
import io
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from typing import IO

import pysam

from readalign.errors import InputError
from readalign.io.candidates import detect_format
from readalign.io.formats import CANDIDATE_FORMATS
from readalign.io.reads import reads_format as readalign_reads_format

TEXT_FORMATS = ("paf", "tsv")


class ScatterError(Exception):
    """Bad input: the message names the file and the record."""


def candidates_format(path: str, fmt: str | None = "auto") -> str:
    """The candidates format: *fmt* unless it is ``auto``, else readalign's rule for the name."""
    try:
        return detect_format(path, None if fmt in (None, "", "auto") else fmt)
    except InputError as exc:
        raise ScatterError(str(exc)) from None


# --- reads -----------------------------------------------------------------------------------

ALIGNMENT_MODES = {"bam": ("rb", "wb"), "sam": ("r", "w")}
"""pysam's read and write modes of reads given as SAM/BAM records (chunks keep the format)."""


def reads_format(path: str) -> str | None:
    """The reads file's format as readalign tells it, from the content (None: an empty file)."""
    try:
        return readalign_reads_format(path)
    except InputError as exc:
        raise ScatterError(str(exc)) from None


def _alignment_reads(f: pysam.AlignmentFile) -> Iterator[tuple[str, pysam.AlignedSegment]]:
    """(name, record) of each read of a SAM/BAM file (secondary and supplementary skipped)."""
    return ((r.query_name, r) for r in f.fetch(until_eof=True)
            if not (r.is_secondary or r.is_supplementary))


def count_reads(path: str) -> int:
    """Number of reads in a FASTQ/FASTA(.gz), SAM or unaligned BAM file."""
    fmt = reads_format(path)
    if fmt is None:
        return 0
    if fmt in ALIGNMENT_MODES:
        with pysam.AlignmentFile(path, ALIGNMENT_MODES[fmt][0], check_sq=False) as f:
            return sum(1 for _ in _alignment_reads(f))
    with pysam.FastxFile(path) as f:
        return sum(1 for _ in f)


def _open_text_out(path: str) -> IO[str]:
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "wb", compresslevel=1), encoding="ascii")
    return open(path, "w", encoding="ascii")


# --- candidates ------------------------------------------------------------------------------

@dataclass
class _Candidate:
    name: str
    record: object  # a text line or a pysam.AlignedSegment
    where: str      # "line N" or "record N", for error messages


def _open_text_in(path: str) -> IO[str]:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")


def _is_tsv_header(line: str) -> bool:
    return line.split("\t", 1)[0].strip() == "read_name"


class _TextCandidates:
    """PAF/TSV lines; ``#`` lines (and a TSV ``read_name`` column header) before the first
    record form a header."""

    def __init__(self, path: str, fmt: str):
        self.path = path
        self.fmt = fmt
        self._fh = _open_text_in(path)
        self.header: list[str] = []
        self._first: _Candidate | None = None
        self._lineno = 0
        for line in self._fh:
            self._lineno += 1
            if line.startswith("#") or (self.fmt == "tsv" and _is_tsv_header(line)):
                self.header.append(line)
                continue
            if not line.strip():
                continue
            self._first = self._parse(line)
            break

    def _parse(self, line: str) -> _Candidate:
        name = line.split("\t", 1)[0].rstrip("\r\n")
        if not name:
            raise ScatterError(f"{self.path}: line {self._lineno}: empty read name")
        if not line.endswith("\n"):
            line += "\n"
        return _Candidate(name, line, f"line {self._lineno}")

    def __iter__(self) -> Iterator[_Candidate]:
        if self._first is not None:
            yield self._first
        for line in self._fh:
            self._lineno += 1
            if not line.strip() or line.startswith("#"):
                continue
            yield self._parse(line)

    def open_outputs(self, paths: list[str], stack: ExitStack) -> list:
        outs = [stack.enter_context(_open_text_out(p)) for p in paths]
        for out in outs:
            out.writelines(self.header)
        return outs

    @staticmethod
    def write(out, cand: _Candidate) -> None:
        out.write(cand.record)

    def close(self) -> None:
        self._fh.close()


class _AlignmentCandidates:
    """SAM/BAM records; the header goes to every chunk."""

    def __init__(self, path: str, fmt: str):
        self.path = path
        self.fmt = fmt
        self._fh = pysam.AlignmentFile(path, "rb" if fmt == "bam" else "r", check_sq=False)

    def __iter__(self) -> Iterator[_Candidate]:
        for i, rec in enumerate(self._fh.fetch(until_eof=True), 1):
            yield _Candidate(rec.query_name or "", rec, f"record {i}")

    def open_outputs(self, paths: list[str], stack: ExitStack) -> list:
        mode = "wb" if self.fmt == "bam" else "wh"
        return [stack.enter_context(pysam.AlignmentFile(p, mode, template=self._fh))
                for p in paths]

    @staticmethod
    def write(out, cand: _Candidate) -> None:
        out.write(cand.record)

    def close(self) -> None:
        self._fh.close()


# --- the split -------------------------------------------------------------------------------

def chunk_of(index: int, total: int, chunks: int) -> int:
    """The chunk of read *index* (0-based) when *total* reads go into *chunks* blocks."""
    return index * chunks // total


def scatter(reads: str, candidates: str, reads_out: list[str], candidates_out: list[str],
            fmt: str = "auto") -> list[int]:
    """Split *reads* and *candidates* into ``len(reads_out)`` chunks; return reads per chunk."""
    chunks = len(reads_out)
    if chunks < 1:
        raise ScatterError("at least one chunk is needed")
    if len(candidates_out) != chunks:
        raise ScatterError(f"{chunks} reads outputs but {len(candidates_out)} candidates outputs")
    fmt = candidates_format(candidates, fmt)
    total = count_reads(reads)
    counts = [0] * chunks
    source = (_TextCandidates(candidates, fmt) if fmt in TEXT_FORMATS
              else _AlignmentCandidates(candidates, fmt))
    with ExitStack() as stack:
        stack.callback(source.close)
        cand_outs = source.open_outputs(candidates_out, stack)
        cands = iter(source)
        pending = next(cands, None)
        rfmt = reads_format(reads)
        if rfmt in ALIGNMENT_MODES:
            read_mode, write_mode = ALIGNMENT_MODES[rfmt]
            rin = stack.enter_context(pysam.AlignmentFile(reads, read_mode, check_sq=False))
            routs = [stack.enter_context(pysam.AlignmentFile(p, write_mode, template=rin))
                     for p in reads_out]
            records = _alignment_reads(rin)

            def write_read(c, rec):
                routs[c].write(rec)
        else:
            routs = [stack.enter_context(_open_text_out(p)) for p in reads_out]
            records = (iter(()) if rfmt is None
                       else ((r.name, r) for r in stack.enter_context(pysam.FastxFile(reads))))

            def write_read(c, rec):
                routs[c].write(str(rec))
                routs[c].write("\n")

        for i, (name, rec) in enumerate(records):
            if i >= total:
                raise ScatterError(f"{reads}: changed while it was being read")
            c = chunk_of(i, total, chunks)
            write_read(c, rec)
            counts[c] += 1
            while pending is not None and pending.name == name:
                source.write(cand_outs[c], pending)
                pending = next(cands, None)
        if pending is not None:
            raise ScatterError(
                f"{candidates}: {pending.where}: read {pending.name!r} is not in {reads} "
                "at this point: candidates must name reads of the reads file, grouped by "
                "read in the order of the reads file")
    return counts


def _remove(paths: list[str]) -> None:
    for p in paths:
        with suppress(FileNotFoundError):
            os.remove(p)


def run(reads: str, candidates: str, reads_out: list[str], candidates_out: list[str],
        fmt: str = "auto") -> list[int]:
    """:func:`scatter`, removing every partial output when it fails."""
    try:
        return scatter(reads, candidates, reads_out, candidates_out, fmt)
    except BaseException:
        _remove(reads_out + candidates_out)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--reads", required=True)
    ap.add_argument("--candidates", required=True)
    ap.add_argument("--candidates-format", default="auto",
                    choices=("auto", *CANDIDATE_FORMATS))
    ap.add_argument("--reads-out", nargs="+", required=True)
    ap.add_argument("--candidates-out", nargs="+", required=True)
    args = ap.parse_args(argv)
    try:
        counts = run(args.reads, args.candidates, args.reads_out, args.candidates_out,
                     args.candidates_format)
    except (ScatterError, OSError, ValueError) as exc:
        print(f"scatter: error: {exc}", file=sys.stderr)
        return 1
    print(f"scatter: {sum(counts)} reads into {len(counts)} chunks: "
          + " ".join(map(str, counts)), file=sys.stderr)
    return 0


if "snakemake" in globals():
    from _snakemake import run_rule

    smk = globals()["snakemake"]
    run_rule(smk, main, ["--reads", smk.input.reads, "--candidates", smk.input.candidates,
                         "--candidates-format", getattr(smk.params, "candidates_format", "auto"),
                         "--reads-out", *smk.output.reads, "--candidates-out", *smk.output.candidates])
elif __name__ == "__main__":
    sys.exit(main())
