"""Output files that never destroy anything.

Every output is written under a temporary name beside its target, created
exclusively (no other run's file is touched), and renamed onto the target
only when the whole run succeeded. A failed or interrupted run removes its
own temporary files and nothing else. Outputs that would replace an input,
or each other, are refused before anything is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping

from ..errors import InputError, OutputError


def output_error(path: str, exc: OSError) -> OSError:
    """``exc`` as the one-line error of ``path``; a closed pipe stays a BrokenPipeError."""
    if exc.errno == errno.EPIPE:
        return BrokenPipeError(errno.EPIPE, "broken pipe")
    reason = (exc.strerror or str(exc)).lower()
    return OutputError(f"{path}: cannot write ({reason})")


def is_stream(path: str) -> bool:
    """An existing path that is not a regular file or a directory (a pipe, a device)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


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


class TempFile:
    """A new file beside ``path`` under a temporary name; :meth:`commit` renames it onto ``path``."""

    def __init__(self, path: str, suffix: str = "") -> None:
        # a symbolic link is followed: its target is replaced, the link itself stays
        self.path = os.path.realpath(path) if os.path.islink(path) else path
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
        """Move the finished file onto ``path``."""
        self.close_fd()
        try:
            os.replace(self.name, self.path)
        except OSError as exc:
            raise output_error(self.path, exc) from None

    def discard(self) -> None:
        """Remove the temporary file (only ever this run's own)."""
        with contextlib.suppress(OSError):
            self.close_fd()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)


@contextlib.contextmanager
def atomic(path: str) -> Iterator[str]:
    """A temporary name beside ``path``: renamed onto it if the block succeeds, else removed."""
    tmp = TempFile(path)
    tmp.close_fd()
    try:
        yield tmp.name
        tmp.commit()
    except BaseException:
        tmp.discard()
        raise


def write_bytes(path: str, data: bytes) -> TempFile:
    """``data`` in a temporary file beside ``path``, ready to :meth:`TempFile.commit`."""
    tmp = TempFile(path)
    try:
        with os.fdopen(tmp.take_fd(), "wb") as fh:
            fh.write(data)
    except OSError as exc:
        tmp.discard()
        raise output_error(path, exc) from None
    return tmp


def probe_write_error(fd: int, path: str) -> OSError:
    """Why writes to ``fd`` fail: write a block of our own and report the OS's answer.

    Called only once a write has already failed (the output is abandoned, so
    the probe's bytes do no harm); htslib's writer threads do not pass errno on.
    """
    try:
        os.write(fd, bytes(1 << 16))
    except OSError as exc:
        return output_error(path, exc)
    return OutputError(f"{path}: cannot write (write failed)")
