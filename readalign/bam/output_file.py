"""Where the output goes: a temporary file beside the target, renamed on success, or a stream.

The BAM is written as records come; sorting, indexing and conversion to SAM or
CRAM use pysam's samtools and htslib. Everything is written under a temporary
name in the output's directory and renamed only when complete; a failed run
removes its own temporary files and nothing else. samtools' failures are one
line: the OS's reason where a write failed (a full disk), else samtools' last
line; htslib's own log is silenced while they run.
"""

from __future__ import annotations

import contextlib
import os

from ..errors import OutputError
from ..runtime.outfiles import TempFile, destination, open_stream, output_error, write_failure
from .bgzf import open_writer
from .formats import index_suffix

WRITE_MODES = {"sam": "w", "cram": "wc"}
"""pysam's modes for the formats converted from the temporary BAM."""


@contextlib.contextmanager
def _htslib_quiet():
    """htslib's log off (its messages would be lines beside readalign's one)."""
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

    before = pysam.set_verbosity(0)
    try:
        yield
    finally:
        pysam.set_verbosity(before)


def _failure(target: str, dst: str, what: str, detail: str) -> OSError:
    """The one-line error of a samtools step that wrote ``dst`` (for ``target``): the OS's
    reason when ``dst`` cannot be written (a full disk), else ``detail``."""
    try:
        fd = os.open(dst, os.O_WRONLY | os.O_APPEND)
    except OSError as exc:
        return output_error(target, exc)
    try:
        found = write_failure(fd, target)
    finally:
        os.close(fd)
    return found or OutputError(f"{target}: {what} failed ({detail})")


def _samtools(command, target: str, dst: str, *args: str) -> None:
    """Run pysam's samtools ``command`` (which writes ``dst``); a failure as one line."""
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

    try:
        with _htslib_quiet():
            command(*args)
    except pysam.SamtoolsError as exc:
        text = str(exc.value).rsplit("stderr=", 1)[-1].strip().splitlines()
        detail = text[-1][-200:] if text else "no message"
        raise _failure(target, dst, f"samtools {command.dispatch}", detail) from None


def _convert(src: str, dst: str, target: str, fmt: str, threads: int,
             reference: str | None) -> None:
    """Write the BAM ``src`` to ``dst`` as SAM text or CRAM (against ``reference``), record by
    record (pysam's samtools view cannot write to a file)."""
    import pysam  # loaded on first use, not when readalign is imported (start-up time)

    # CRAM is compressed on the threads too; SAM text is written as before, by one
    extra = {"reference_filename": reference, "threads": threads} if fmt == "cram" else {}
    try:
        with _htslib_quiet(), pysam.AlignmentFile(src, "rb", threads=threads,
                                                  check_sq=False) as inp, \
                pysam.AlignmentFile(dst, WRITE_MODES[fmt], template=inp, **extra) as out:
            for rec in inp:
                out.write(rec)
    except (OSError, ValueError) as exc:
        raise _failure(target, dst, f"writing {fmt.upper()}", str(exc)) from None


class Output:
    """Where the output goes: a temporary file beside the target, renamed on success, or a stream.

    ``fmt`` is ``bam``, ``sam`` or ``cram`` (:mod:`.formats`; CRAM needs
    ``reference``). A SAM or CRAM output, and ``--sort``, write a fast temporary
    BAM first, then sort or convert it with samtools (through pysam) into
    further temporary files. :meth:`close` finishes every file under its
    temporary name (so a ``--summary-json`` can still fail the run),
    :meth:`commit` puts them in place, :meth:`fail` removes this run's temporary
    files and nothing else. ``threads`` serve samtools; ``deflate`` threads
    (default ``threads``) compress the BAM as it is written
    (:func:`~readalign.bam.bgzf.deflate_threads`).
    """

    def __init__(self, path: str, fmt: str, sort: bool, threads: int,
                 level: int | None = None, writer: str = "auto",
                 deflate: int | None = None, reference: str | None = None) -> None:
        self.path, self.fmt, self.sort, self.threads = path, fmt, sort, max(1, threads)
        self.reference = reference
        self.level = level
        self.stdout, self.target = destination(path)
        self.direct = fmt == "bam" and not sort
        self.temps: list[TempFile] = []
        self._final: list[tuple[TempFile, str]] = []  # (finished temporary file, its target)
        if self.direct and self.stdout:
            fd, name = open_stream(path), "stdout" if path == "-" else path
        else:
            tmp = self._temp(".bam")
            fd, name = tmp.take_fd(), path if self.direct else tmp.name
        self.bam = self.temps[0] if self.temps else None
        try:
            # a temporary BAM (before sort or conversion) is only read back: fastest level
            self.writer = open_writer(fd, name, deflate or self.threads,
                                      level if self.direct else 1, writer)
        except BaseException:
            self.cleanup()
            raise

    def _temp(self, suffix: str) -> TempFile:
        tmp = TempFile(self.path, suffix)  # a stream's in the temporary directory
        self.temps.append(tmp)
        return tmp

    def add(self, tmp: TempFile) -> None:
        """Another finished file (e.g. the summary) to put in place with the output, or remove
        on failure."""
        self.temps.append(tmp)
        self._final.append((tmp, tmp.path))

    def close(self) -> None:
        """Close the BAM and sort/convert/index as asked, all under temporary names."""
        import pysam  # loaded on first use, not when readalign is imported (start-up time)

        self.writer.close()
        if self.bam is None:
            return
        src = self.bam.name
        if self.sort:
            dst = self._temp(".sorted.bam")
            level = () if self.level is None else ("-l", str(self.level))
            _samtools(pysam.sort, self.path, dst.name, "-@", str(self.threads), "-m", "512M",
                      *level, "-T", dst.name + ".part", "-o", dst.name, src)
            src = dst.name
        if self.fmt != "bam":
            dst = self._temp(f".{self.fmt}")
            _convert(src, dst.name, self.path, self.fmt, self.threads, self.reference)
            src = dst.name
        suffix = index_suffix(self.fmt, self.sort)
        if suffix and not self.stdout:
            index = self._temp(suffix)
            _samtools(pysam.index, self.path + suffix, index.name, "-@", str(self.threads),
                      "-o", index.name, src)
            self._final.append((index, self.path + suffix))
        self._result = src

    def commit(self) -> None:
        """Put the finished files in place (streams first, then renames) and remove the
        temporary ones: a stream that fails leaves no file renamed into place."""
        if self.bam is not None:
            src = next(t for t in self.temps if t.name == self._result)
            self._final.insert(0, (src, self.target))
        for tmp, target in sorted(self._final, key=lambda item: not item[0].stream):
            tmp.path = target
            tmp.commit()
        self.cleanup()

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
