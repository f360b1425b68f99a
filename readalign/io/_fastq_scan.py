"""Compiled FASTQ scanners: a parallel fast path, the serial scanner, the byte check and the copy.

The fast path assumes record ``r`` starts at line ``line + 4 r`` (no blank
lines between records). It checks each record exactly as the serial scanner
does and reports the first bad record; when it meets a blank header line
first, the caller falls back to the serial scanner, which skips blank lines.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.loops import parallel_loop
from ._text import line_span

MAX_NAME = 254
"""Longest read name BAM allows."""

# error codes of the FASTQ scanners (_BLANK: the fast path met a blank line)
_OK, _HEADER, _PLUS, _LENGTHS, _TRUNC, _SEQCHAR, _QUALCHAR, _NONAME, _LONGNAME, _BLANK = range(10)


@njit(cache=True, nogil=True)
def _header(buf, ends, line):
    """Check header line ``line``: (code, name start, name end, detail)."""
    h0, h1 = line_span(buf, ends, line)
    if h1 == h0:
        return _BLANK, 0, 0, 0
    if buf[h0] != 64:  # '@'
        return _HEADER, 0, 0, 0
    k = h0 + 1
    while k < h1 and buf[k] != 32 and buf[k] != 9:
        k += 1
    if k == h0 + 1:
        return _NONAME, 0, 0, 0
    if k - h0 - 1 > MAX_NAME:
        return _LONGNAME, 0, 0, k - h0 - 1
    return _OK, h0 + 1, k, 0


@njit(cache=True, nogil=True)
def _bad_byte(span, seq):
    """Position (1-based) and value of the first byte of ``span`` not allowed; (0, 0) if none."""
    bad = False
    for x in range(span.shape[0]):  # branch-free: vectorises; located below only if needed
        c = span[x]
        bad |= (c < 33) | (c > 126) | (seq & ((c == 64) | (c == 43)))
    if not bad:
        return 0, 0
    for x in range(span.shape[0]):
        c = span[x]
        if c < 33 or c > 126 or (seq and (c == 64 or c == 43)):
            return x + 1, c
    return 0, 0


@njit(cache=True, nogil=True)
def _record(buf, ends, line, lay):
    """Check the 4-line record at ``line`` in full; fill ``lay`` (7 spans); (code, line, a, b)."""
    code, n0, n1, a = _header(buf, ends, line)
    if code != _OK:
        return code, line, a, 0
    c0, c1 = line_span(buf, ends, line + 2)
    if c1 == c0 or buf[c0] != 43:  # '+'
        return _PLUS, line + 2, 0, 0
    s0, s1 = line_span(buf, ends, line + 1)
    q0, q1 = line_span(buf, ends, line + 3)
    if s1 - s0 != q1 - q0:
        return _LENGTHS, line + 3, s1 - s0, q1 - q0
    a, c = _bad_byte(buf[s0:s1], True)
    if a:
        return _SEQCHAR, line + 1, a, c
    a, c = _bad_byte(buf[q0:q1], False)
    if a:
        return _QUALCHAR, line + 3, a, c
    lay[0], lay[1], lay[2], lay[3], lay[4], lay[5], lay[6] = line, n0, n1, s0, s1, q0, q1
    return _OK, 0, 0, 0


@parallel_loop(size=3)
def scan_fast(buf, ends, line, n, lay):
    """Check records ``0:n`` at lines ``line + 4 r`` in parallel, filling ``lay`` (n x 7).

    Returns (first bad record or n, code, error line, detail a, detail b);
    code ``_BLANK`` means a blank line where a header should be.
    """
    code = np.zeros(n, np.int64)
    det = np.zeros((n, 3), np.int64)
    for r in prange(n):
        code[r], det[r, 0], det[r, 1], det[r, 2] = _record(buf, ends, line + 4 * r, lay[r])
    for r in range(n):
        if code[r] != _OK:
            return r, code[r], det[r, 0], det[r, 1], det[r, 2]
    return n, _OK, 0, 0, 0


@njit(cache=True, nogil=True)
def scan_serial(buf, ends, line, final, cap, lay):
    """Serial scan of up to ``cap`` records from ``line``, skipping blank lines between records.

    Fills ``lay`` (cap x 7: header line, name, SEQ and QUAL spans) and checks
    every byte. Returns (records, next line, code, error line, detail a, detail b).
    """
    nl = ends.shape[0]
    r = 0
    while r < cap:
        while line < nl:  # skip blank lines between records
            s, e = line_span(buf, ends, line)
            if e > s:
                break
            line += 1
        if line >= nl:
            break
        code, n0, n1, a = _header(buf, ends, line)
        if code != _OK:
            return r, line, code, line, a, 0
        if line + 3 >= nl:  # an incomplete record: its '+' line is checked if present
            if line + 2 < nl:
                c0, c1 = line_span(buf, ends, line + 2)
                if c1 == c0 or buf[c0] != 43:
                    return r, line, _PLUS, line + 2, 0, 0
            if final:
                return r, line, _TRUNC, min(line + 2, nl - 1), 0, 0
            break
        code, eline, a, b = _record(buf, ends, line, lay[r])
        if code != _OK:
            return r, line, code, eline, a, b
        r += 1
        line += 4
    return r, line, _OK, 0, 0, 0


@parallel_loop(size=1)
def gather_records(buf, lay, names, name_off, seq, qual, seq_off, r0):
    """Copy names, SEQ and QUAL of records ``lay`` to rows ``r0:`` of a batch (offsets set first)."""
    n = lay.shape[0]
    for i in range(n):
        name_off[r0 + i + 1] = name_off[r0 + i] + (lay[i, 2] - lay[i, 1])
        seq_off[r0 + i + 1] = seq_off[r0 + i] + (lay[i, 4] - lay[i, 3])
    for i in prange(n):
        a, b = name_off[r0 + i], seq_off[r0 + i]
        names[a:name_off[r0 + i + 1]] = buf[lay[i, 1]:lay[i, 2]]
        seq[b:seq_off[r0 + i + 1]] = buf[lay[i, 3]:lay[i, 4]]
        qual[b:seq_off[r0 + i + 1]] = buf[lay[i, 5]:lay[i, 6]]
