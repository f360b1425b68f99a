"""The BAM header: reference dictionary, read group and program lines, as text and as bytes."""

from __future__ import annotations

import logging
import struct

import numpy as np

from ..errors import InputError

log = logging.getLogger("readalign")


def parse_rg(text: str | None) -> tuple[str, str] | None:
    """``--rg 'ID:x\\tSM:y'`` as (header line, ID); a literal ``\\t`` means a tab."""
    if not text:
        return None
    line = text.replace("\\t", "\t")
    if not line.startswith("@RG"):
        line = "@RG\t" + line
    fields = line.split("\t")[1:]
    ids = [f[3:] for f in fields if f.startswith("ID:")]
    if not ids or not ids[0]:
        raise InputError(f"--rg: no ID field in '{text}' (use e.g. 'ID:s1\\tSM:sample1')")
    if any(len(f) < 4 or f[2] != ":" for f in fields):
        raise InputError(f"--rg: fields must look like TAG:value, got '{text}'")
    if not any(f.startswith("PL:") for f in fields):
        log.warning(
            "--rg has no PL (platform) field; Picard ValidateSamFile reports that as an error")
    return line, ids[0]


def header_text(names: list[str], lengths: np.ndarray, version: str, command_line: str,
                rg_line: str | None) -> str:
    """SAM header: @HD (unsorted, grouped by read), @SQ per contig, @RG, @PG."""
    lines = ["@HD\tVN:1.6\tSO:unsorted\tGO:query"]
    lines += [f"@SQ\tSN:{n}\tLN:{int(ln)}" for n, ln in zip(names, lengths, strict=True)]
    if rg_line:
        lines.append(rg_line)
    cl = command_line.replace("\t", " ").replace("\n", " ")
    lines.append(f"@PG\tID:readalign\tPN:readalign\tVN:{version}\tCL:{cl}")
    return "\n".join(lines) + "\n"


def header_bytes(text: str, names: list[str], lengths: np.ndarray) -> bytes:
    """The binary BAM header for ``text`` and the reference dictionary."""
    t = text.encode()
    parts = [b"BAM\x01", struct.pack("<i", len(t)), t, struct.pack("<i", len(names))]
    for n, ln in zip(names, lengths, strict=True):
        nb = n.encode() + b"\x00"
        parts += [struct.pack("<i", len(nb)), nb, struct.pack("<i", int(ln))]
    return b"".join(parts)
