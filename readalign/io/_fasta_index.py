"""The reference's ``.fai`` index: built when missing, rebuilt when out of date, checked against the FASTA.

htslib trusts an existing ``.fai`` blindly: after the FASTA is edited, its
offsets point into the wrong bytes (newlines end up in the bases), and when
two records share a name ``fai_build`` keeps the first and drops the other.
So before the reference is opened:

* a missing index is built under a temporary name and renamed into place;
* an index older than its FASTA (or ``.gzi``) is rebuilt, said on stderr;
* for a plain FASTA every entry is checked where it points: the bytes between
  one record's last base and the next record's first base must be exactly
  one header line naming the next record. A mismatch rebuilds the index;
  one left after a fresh build can only be a record htslib dropped, which is
  a duplicate name: an error naming both lines. A fresh build is checked
  under its temporary name, so a refused FASTA leaves no index behind.
"""

from __future__ import annotations

import logging
import os

from ..errors import InputError, OutputError
from ..runtime.outfiles import TempFile
from ._text import GZIP_MAGIC, display

log = logging.getLogger("readalign")

MAX_HEADER = 1 << 20
"""Longest run of bytes accepted between two records (header line and blank lines)."""


class _Mismatch(Exception):
    """The index does not describe the FASTA; ``offset`` is where the surprise starts."""

    def __init__(self, what: str, offset: int = -1) -> None:
        super().__init__(what)
        self.offset = offset


def fai_entries(fai: str) -> list[tuple[str, int, int, int, int]]:
    """(name, length, offset, line bases, line width) per line of a ``.fai``."""
    out = []
    with open(fai) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) < 5:
                raise _Mismatch("malformed index line")
            out.append((f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])))
    return out


def seq_end(length: int, offset: int, bases: int, width: int) -> int:
    """File offset just after a record's last base."""
    if length == 0:
        return offset
    return offset + (length - 1) // bases * width + (length - 1) % bases + 1


def _header_name(line: bytes) -> str:
    return line[1:].split(None, 1)[0].decode("latin-1") if line[1:].strip() else ""


def _check_gap(gap: bytes, start: int, name: str | None) -> None:
    """``gap`` (from file offset ``start``) must be line ends, then one header naming ``name``."""
    lines = gap.split(b"\n")
    heads = [i for i, ln in enumerate(lines) if ln.startswith(b">")]
    if name is None:  # after the last record: line ends only
        if heads:
            pos = start + sum(len(ln) + 1 for ln in lines[:heads[0]])
            raise _Mismatch(f"record '{_header_name(lines[heads[0]])}' is not in the index", pos)
        if gap.strip():
            raise _Mismatch("bytes after the last record's end", start)
        return
    if len(heads) != 1:
        if heads:
            pos = start + sum(len(ln) + 1 for ln in lines[:heads[0]])
            raise _Mismatch(f"record '{_header_name(lines[heads[0]])}' is not in the index", pos)
        raise _Mismatch(f"no header line before record '{name}'", start)
    if any(ln.strip() for ln in lines[:heads[0]]) or lines[-1] != b"":
        raise _Mismatch(f"unexpected bytes around the header of '{name}'", start)
    if _header_name(lines[heads[0]]) != name:
        raise _Mismatch(f"header '{_header_name(lines[heads[0]])}' where the index says '{name}'",
                        start)


def _check_plain(path: str, fai: str) -> None:
    """Raise :class:`_Mismatch` unless every index entry matches the plain FASTA at ``path``."""
    entries = fai_entries(fai)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        prev_end = 0
        for name, length, offset, bases, width in entries:
            if not (0 < bases <= width) and length > 0:
                raise _Mismatch(f"bad line lengths for '{name}'")
            if offset < prev_end or offset - prev_end > MAX_HEADER:
                raise _Mismatch(f"record '{name}' is not where the index says", prev_end)
            fh.seek(prev_end)
            _check_gap(fh.read(offset - prev_end), prev_end, name)
            if length > bases:
                fh.seek(offset + bases)
                if fh.read(width - bases).strip(b"\r\n"):
                    raise _Mismatch(f"first line of '{name}' is not {bases} bases long", offset)
            prev_end = seq_end(length, offset, bases, width)
            if prev_end > size:
                raise _Mismatch(f"record '{name}' runs past the end of the file", size)
        fh.seek(prev_end)
        tail = fh.read(MAX_HEADER + 1)
        _check_gap(tail, prev_end, None)


def _line_of(path: str, offset: int) -> int:
    """1-based line number of the byte at ``offset``."""
    count, done = 1, 0
    with open(path, "rb") as fh:
        while done < offset:
            chunk = fh.read(min(1 << 24, offset - done))
            if not chunk:
                break
            count += chunk.count(b"\n")
            done += len(chunk)
    return count


def _build(path: str, compressed: bool) -> None:
    """Write ``.fai`` (and ``.gzi``) with samtools under temporary names, check a plain FASTA's
    against it, then rename them into place (a refused FASTA leaves none)."""
    import pysam  # pysam's samtools is loaded only when an index must be built (start-up time)

    targets = [path + ".fai"] + ([path + ".gzi"] if compressed else [])
    temps: list[TempFile] = []
    quiet = pysam.set_verbosity(0)  # htslib's own warnings would be a second, unnamed line
    try:
        temps = [TempFile(t) for t in targets]
        for tmp in temps:
            tmp.close_fd()
        args = ["--fai-idx", temps[0].name] + (["--gzi-idx", temps[1].name] if compressed else [])
        pysam.faidx(path, *args)
        if not compressed:
            _check_fresh(path, temps[0].name)
        for tmp in temps:
            tmp.commit()
    except pysam.SamtoolsError as exc:
        msg = str(exc).strip().splitlines()[-1][-200:]
        raise InputError(f"{display(path)}: cannot index as FASTA ({msg})") from None
    except OutputError as exc:
        raise InputError(f"{exc}; index the FASTA where it can be written (samtools faidx)") \
            from None
    finally:
        pysam.set_verbosity(quiet)
        for tmp in temps:
            tmp.discard()


def _check_fresh(path: str, fai: str) -> None:
    """A freshly built index ``fai`` must describe the plain FASTA ``path``; else the error."""
    try:
        _check_plain(path, fai)
    except _Mismatch as exc:
        raise _explain(path, fai, exc) from None


def _stale(path: str, compressed: bool) -> str | None:
    """Why the existing index cannot be used, or None."""
    fai = path + ".fai"
    mtime = os.path.getmtime(path)
    for idx in [fai] + ([path + ".gzi"] if compressed else []):
        if not os.path.exists(idx):
            return f"{display(idx)} is missing"
        if os.path.getmtime(idx) < mtime:
            return f"{display(idx)} is older than {display(path)}"
    if not compressed:
        try:
            _check_plain(path, fai)
        except (_Mismatch, ValueError) as exc:
            return f"{display(fai)} does not match {display(path)} ({exc})"
    return None


def _is_compressed(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def refresh_index(path: str) -> None:
    """Make ``path``'s index exist and describe the FASTA as it is now (see the module doc)."""
    compressed = _is_compressed(path)
    if os.path.exists(path + ".fai"):
        why = _stale(path, compressed)
        if why is None:
            return
        log.warning("%s: rebuilding the index", why)
    _build(path, compressed)


def _explain(path: str, fai: str, exc: _Mismatch) -> InputError:
    """The error for a FASTA that a fresh index ``fai`` still does not describe: a dropped
    duplicate."""
    names = {e[0] for e in fai_entries(fai)}
    if exc.offset >= 0:
        with open(path, "rb") as fh:
            fh.seek(exc.offset)
            chunk = fh.read(MAX_HEADER)
        for i, ln in enumerate(chunk.split(b"\n")):
            if ln.startswith(b">") and _header_name(ln) in names:
                line = _line_of(path, exc.offset) + i
                return InputError(f"{display(path)}: line {line}: contig '{_header_name(ln)}' "
                                  "appears twice (contig names must be unique)")
    return InputError(f"{display(path)}: cannot index as FASTA ({exc})")
