"""Where the BAM goes: a temporary file beside the target, renamed on success, or a stream.

Sorting, indexing and SAM conversion use pysam's samtools. Everything is
written under a temporary name in the output's directory and renamed only
when complete; a failed run removes its own temporary files and nothing else.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from ..errors import OutputError
from ..runtime.outfiles import TempFile, is_stream, output_error
from .bgzf import open_writer


def _bam_to_sam(src: str, dst: str, threads: int) -> None:
    """Write the BAM ``src`` as SAM text to ``dst`` (pysam's samtools view cannot write to a file)."""
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

    try:
        with pysam.AlignmentFile(src, "rb", threads=threads, check_sq=False) as inp, \
                pysam.AlignmentFile(dst, "w", template=inp) as out:
            for rec in inp:
                out.write(rec)
    except OSError as exc:
        raise output_error(dst, exc) from None


class Output:
    """Where the BAM goes: a temporary file beside the target, renamed on success, or stdout.

    ``--sam`` and ``--sort`` write a fast temporary BAM first, then convert
    or sort it with samtools (through pysam) into a second temporary file.
    :meth:`close` finishes every file under its temporary name (so a
    ``--summary-json`` can still fail the run), :meth:`commit` renames them
    into place, :meth:`fail` removes this run's temporary files and nothing else.
    ``threads`` serve samtools; ``deflate`` threads (default ``threads``) compress the BAM
    as it is written (:func:`~readalign.pipeline.bgzf.deflate_threads`).
    """

    def __init__(self, path: str, sam: bool, sort: bool, threads: int,
                 level: int | None = None, writer: str = "auto",
                 deflate: int | None = None) -> None:
        self.path, self.sam, self.sort, self.threads = path, sam, sort, max(1, threads)
        # a symbolic link is followed: its target is replaced, the link itself stays
        self.target = os.path.realpath(path) if os.path.islink(path) else path
        self.level = level
        # stdout, or an existing path that is not a regular file (a named pipe, /dev/stdout):
        # written to as a stream, never replaced
        self.stdout = path == "-" or is_stream(path)
        self.direct = not sam and not sort
        self.temps: list[TempFile] = []
        self._final: list[tuple[TempFile, str]] = []  # (finished temporary file, its target)
        if self.direct and self.stdout:
            fd, name = self._open_stream()
        else:
            tmp = self._temp(".bam")
            fd, name = tmp.take_fd(), path if self.direct else tmp.name
        self.bam = self.temps[0] if self.temps else None
        try:
            # a temporary BAM (before sort or SAM conversion) is only read back: fastest level
            self.writer = open_writer(fd, name, deflate or self.threads,
                                      level if self.direct else 1, writer)
        except BaseException:
            self.cleanup()
            raise

    def _open_stream(self) -> tuple[int, str]:
        if self.path == "-":
            return os.dup(sys.stdout.fileno()), "stdout"
        try:
            return os.open(self.path, os.O_WRONLY), self.path
        except OSError as exc:
            raise output_error(self.path, exc) from None

    def _temp(self, suffix: str) -> TempFile:
        target = os.path.join(tempfile.gettempdir(), "readalign") if self.stdout else self.path
        tmp = TempFile(target, suffix)
        self.temps.append(tmp)
        return tmp

    def add(self, tmp: TempFile) -> None:
        """Another finished file (e.g. the summary) to rename with the output, or remove on failure."""
        self.temps.append(tmp)
        self._final.append((tmp, tmp.path))

    def close(self) -> None:
        """Close the BAM and sort/convert/index as asked, all under temporary names."""
        import pysam  # loaded on first use, not when readalign is imported (start-up time)

        self.writer.close()
        if self.bam is None:
            return
        src = self.bam.name
        try:
            if self.sort:
                dst = self._temp(".sorted.bam")
                level = () if self.level is None else ("-l", str(self.level))
                pysam.sort("-@", str(self.threads), "-m", "512M", *level, "-T", dst.name + ".part",
                           "-o", dst.name, src)
                src = dst.name
                if not self.sam and not self.stdout:
                    index = self._temp(".bai")
                    pysam.index("-@", str(self.threads), "-o", index.name, src)
                    self._final.append((index, self.path + ".bai"))
            if self.sam:
                dst = self._temp(".sam")
                _bam_to_sam(src, dst.name, self.threads)
                src = dst.name
        except pysam.SamtoolsError as exc:
            raise OutputError(f"{self.path}: samtools failed: {str(exc).strip()[-300:]}") from None
        self._result = src

    def commit(self) -> None:
        """Put the finished files in place (or on stdout) and remove the temporary ones."""
        if self.bam is not None:
            src = next(t for t in self.temps if t.name == self._result)
            if self.stdout:
                self._to_stdout(src.name)
            else:
                self._final.insert(0, (src, self.target))
        for tmp, target in self._final:
            tmp.path = target
            tmp.commit()
        self.cleanup()

    def _to_stdout(self, name: str) -> None:
        fd, target = self._open_stream()
        try:
            with open(name, "rb") as src, os.fdopen(fd, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
        except OSError as exc:
            raise output_error(target, exc) from None

    def cleanup(self) -> None:
        """Remove this run's temporary files that are still there."""
        for tmp in self.temps:
            tmp.discard()
        self.temps = []

    def fail(self) -> None:
        """Abandon the output: remove this run's temporary files, touch nothing else.

        A stream to stdout is left without its EOF block (readers see it as truncated).
        """
        self.writer.abandon()
        self.cleanup()
