"""Output files that never destroy anything.

Every output is written under a temporary name beside its target, created
exclusively (no other run's file is touched), and renamed onto the target
only when the whole run succeeded. A failed or interrupted run removes its
own temporary files and nothing else. Outputs that would replace an input,
or each other, are refused before anything is written.

An output that is a stream (``-`` for stdout, or an existing path that is not
a regular file: a named pipe, ``/dev/null``, ``/dev/full``) is never renamed
over: it is written where it is, and a failed write is the run's error.

A finished file gets the mode a plain ``open()`` gives a new file, 0o666 less
the process umask (:func:`new_file_mode`), as samtools' outputs do; until then
its temporary file stays private (mkstemp's 0o600).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping

from ..errors import InputError, OutputError


def output_error(path: str, exc: OSError) -> OSError:
    """``exc`` as the one-line error of ``path``; a closed pipe stays a BrokenPipeError."""
    if exc.errno == errno.EPIPE:
        return BrokenPipeError(errno.EPIPE, "broken pipe")
    reason = (exc.strerror or str(exc)).lower()
    return OutputError(f"{path}: cannot write ({reason})")


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process umask.

    Linux states the umask in ``/proc/self/status``; elsewhere it is read by
    setting it and setting it back (the only way the OS offers).
    """
    try:
        with open("/proc/self/status") as fh:
            umask = next((int(line.split()[1], 8) for line in fh if line.startswith("Umask:")),
                         None)
    except OSError:
        umask = None
    if umask is None:
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def is_stream(path: str) -> bool:
    """An existing path that is not a regular file or a directory (a pipe, a device)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def destination(path: str) -> tuple[bool, str]:
    """``(stream, where)`` for an output named ``path``: a stream (``-``, a pipe, a device,
    also through a link such as /dev/stdout) is written where it is, never replaced; a symbolic
    link to a file is followed, so its target is replaced and the link itself stays."""
    stream = path == "-" or is_stream(path)
    return stream, (os.path.realpath(path) if os.path.islink(path) and not stream else path)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_outputs(outputs: Mapping[str, str | None], inputs: Mapping[str, str | None]) -> None:
    """Refuse outputs that name an input, each other, a directory, or a missing directory.

    Keys are what the user called them (``-o``, ``--summary-json``, ``reads``);
    ``None`` and ``-`` (stdout) entries are skipped.
    """
    seen: dict[str, str] = {}
    for label, out in outputs.items():
        if out is None or out == "-" or is_stream(out):
            continue
        if os.path.isdir(out):
            raise InputError(f"{out}: is a directory ({label} needs a file name)")
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder):
            raise InputError(f"{out}: output directory {folder} does not exist ({label})")
        for in_label, path in inputs.items():
            if path is not None and path != "-" and _same_file(out, path):
                raise InputError(f"{out}: {label} names the {in_label} file; refusing to overwrite "
                                 "an input")
        for other_label, other in seen.items():
            if _same_file(out, other):
                raise InputError(f"{out}: {label} and {other_label} name the same file")
        seen[label] = out


def open_stream(path: str) -> int:
    """A descriptor that writes to the stream ``path`` in place (``-``: a copy of stdout's)."""
    if path == "-":
        return os.dup(sys.stdout.fileno())
    try:
        return os.open(path, os.O_WRONLY)
    except OSError as exc:
        raise output_error(path, exc) from None


def copy_to_stream(name: str, path: str) -> None:
    """Write the finished file ``name`` to the stream ``path`` (``-``: stdout)."""
    fd = open_stream(path)
    try:
        with open(name, "rb") as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
    except OSError as exc:
        raise output_error("stdout" if path == "-" else path, exc) from None


class TempFile:
    """A new file under a temporary name; :meth:`commit` puts it at ``path``.

    For a file, the temporary name is beside ``path`` and the commit renames it
    onto ``path`` with :func:`new_file_mode`. For a stream (``-`` or a pipe or
    device, :func:`is_stream`) it is in the temporary directory and the commit
    copies it to the stream, which is never replaced.
    """

    def __init__(self, path: str, suffix: str = "") -> None:
        self.stream, self.path = destination(path)
        if self.stream:
            folder, base = tempfile.gettempdir(), "readalign"
        else:
            folder, base = os.path.split(os.path.abspath(self.path))
        try:
            self.fd, self.name = tempfile.mkstemp(prefix=f".{base}.", suffix=f".tmp{suffix}",
                                                  dir=folder)
        except OSError as exc:
            raise output_error(path, exc) from None

    def take_fd(self) -> int:
        """The open descriptor, handed over to the caller (who closes it)."""
        fd, self.fd = self.fd, -1
        return fd

    def close_fd(self) -> None:
        """Close the descriptor if nobody took it."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def commit(self) -> None:
        """Put the finished file at ``path``: renamed onto a file, copied to a stream."""
        self.close_fd()
        if self.stream:
            try:
                copy_to_stream(self.name, self.path)
            finally:
                self.discard()
            return
        try:
            _set_mode(self.name)
            os.replace(self.name, self.path)
        except OSError as exc:
            raise output_error(self.path, exc) from None

    def discard(self) -> None:
        """Remove the temporary file (only ever this run's own)."""
        with contextlib.suppress(OSError):
            self.close_fd()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)


def _set_mode(name: str) -> None:
    """Give ``name`` :func:`new_file_mode` (a file system without modes keeps its own)."""
    try:
        os.chmod(name, new_file_mode())
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise


@contextlib.contextmanager
def atomic(path: str) -> Iterator[str]:
    """A temporary name for ``path`` (:class:`TempFile`): put in place if the block succeeds,
    else removed."""
    tmp = TempFile(path)
    tmp.close_fd()
    try:
        yield tmp.name
        tmp.commit()
    except BaseException:
        tmp.discard()
        raise


def write_bytes(path: str, data: bytes) -> TempFile:
    """``data`` in a temporary file for ``path``, ready to :meth:`TempFile.commit`."""
    tmp = TempFile(path)
    try:
        with os.fdopen(tmp.take_fd(), "wb") as fh:
            fh.write(data)
    except OSError as exc:
        tmp.discard()
        raise output_error(path, exc) from None
    return tmp


PROBE_WRITES = 4
"""Writes of 64 KiB :func:`write_failure` tries at most: a nearly full disk takes part of one
block and refuses the next."""


def write_failure(fd: int, path: str) -> OSError | None:
    """Why writes to ``fd`` fail: write a block of our own and report the OS's answer, or None
    when a whole block is written.

    Called only once a write has already failed (the output is abandoned, so
    the probe's bytes do no harm); htslib's writer threads, and samtools run
    through pysam, do not pass errno on.
    """
    block = bytes(1 << 16)
    try:
        for _ in range(PROBE_WRITES):
            if os.write(fd, block) == len(block):
                return None
    except OSError as exc:
        return output_error(path, exc)
    return None


def probe_write_error(fd: int, path: str) -> OSError:
    """:func:`write_failure`, or a plain "write failed" when the probe's writes succeed."""
    return write_failure(fd, path) or OutputError(f"{path}: cannot write (write failed)")
