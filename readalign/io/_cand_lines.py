"""One parallel pass over PAF/TSV lines: fields, contig look-up, strand, integers, window, error code.

Each line gets the code of the first check it fails, in the order the checks
were always made (field count, name, contig, strand, integers, target length,
query span, window). The error reported for a block of lines is the lowest
code present, at the first line with it: the same line and message as
checking each kind over the whole block in turn.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.loops import parallel_loop
from ._text import fnv1a, line_span, parse_int

OK, SHORT, NONAME, UNKNOWN, STRAND, NOTINT, TLEN, QSPAN, OUTSIDE = range(9)
BLOCK = 1024
"""Lines per parallel task (each task reuses one small field array)."""
PAF_INTS = np.array([1, 2, 3, 6, 7, 8], dtype=np.int64)
TSV_INTS = np.array([2, 3], dtype=np.int64)
PAF_MIN_FIELDS = 9
PAF_MAPQ = 11
"""PAF's column 12, the mapper's MAPQ (read when the line has it; 255 when not)."""
NO_MAPQ = 255
"""SAM's 'MAPQ not available'."""


@njit(cache=True, nogil=True)
def _split(buf, s, e, fs, fe):
    """Spans of the first fields of ``buf[s:e]`` (tab-separated) into fs/fe; return the count."""
    if e == s:
        return 0
    count = 0
    a = s
    nfields = fs.shape[0]
    for k in range(s, e):
        if buf[k] == 9:
            if count < nfields:
                fs[count] = a
                fe[count] = k
            count += 1
            a = k + 1
    if count < nfields:
        fs[count] = a
        fe[count] = e
    return count + 1


@njit(cache=True, nogil=True)
def _contig(buf, s, e, hashes_sorted, order, name_bytes, name_off):
    """Contig id of the name ``buf[s:e]``; -1 when unknown."""
    h = fnv1a(buf, s, e)
    k = np.searchsorted(hashes_sorted, h)
    while k < hashes_sorted.shape[0] and hashes_sorted[k] == h:
        c = order[k]
        a = name_off[c]
        if name_off[c + 1] - a == e - s:
            same = True
            for x in range(e - s):
                if name_bytes[a + x] != buf[s + x]:
                    same = False
                    break
            if same:
                return c
        k += 1
    return -1


@njit(cache=True, nogil=True)
def _check_line(buf, fs, fe, nf, paf, ints, vals, hashes_sorted, order, name_bytes, name_off,
                lengths):
    """Check one split line: ``(code, detail, contig, start, end, strand, mapq)``.

    Scalars out and arrays in one by one: unpacking tuples of arrays in this call, once per
    line, made the whole pass 12% slower.
    """
    mapq = NO_MAPQ
    if nf < (PAF_MIN_FIELDS if paf else fs.shape[0]):
        return SHORT, nf, -1, 0, 0, 0, mapq
    if fe[0] == fs[0]:
        return NONAME, 0, -1, 0, 0, 0, mapq
    tcol = 5 if paf else 1
    c = _contig(buf, fs[tcol], fe[tcol], hashes_sorted, order, name_bytes, name_off)
    if c < 0:
        return UNKNOWN, 0, c, 0, 0, 0, mapq
    if fe[4] - fs[4] != 1 or (buf[fs[4]] != 43 and buf[fs[4]] != 45):
        return STRAND, 0, c, 0, 0, 0, mapq
    strand = 1 if buf[fs[4]] == 45 else 0
    for j in range(ints.shape[0]):
        v, ok = parse_int(buf, fs[ints[j]], fe[ints[j]])
        if not ok:
            return NOTINT, ints[j], c, 0, 0, strand, mapq
        vals[j] = v
    clen = lengths[c]
    if paf and nf > PAF_MAPQ:
        v, ok = parse_int(buf, fs[PAF_MAPQ], fe[PAF_MAPQ])
        if not ok:
            return NOTINT, PAF_MAPQ, c, 0, 0, strand, mapq
        mapq = min(v, NO_MAPQ)
    if paf:
        qlen, qs, qe, tlen, ts, te = vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
        if tlen != clen:
            return TLEN, 0, c, 0, 0, strand, mapq
        if qs > qe or qe > qlen:
            return QSPAN, 0, c, 0, 0, strand, mapq
        left, right = (qs, qlen - qe) if strand == 0 else (qlen - qe, qs)
    else:
        ts, te, left, right = vals[0], vals[1], 0, 0
    if ts >= te or te > clen:
        return OUTSIDE, 0, c, 0, 0, strand, mapq
    return OK, 0, c, ts - left, te + right, strand, mapq


@parallel_loop(size=1)
def parse_lines(buf, ends, lo, hi, skip_first, paf, ref):
    """Parse lines ``lo:hi`` (see :func:`line_ends`) in parallel.

    ``ref`` is (hashes_sorted, order, name_bytes, name_off, lengths). Returns
    per line keep (not blank, not a comment, not a skipped header), name span,
    contig, window start/end, strand and the mapper's MAPQ (PAF column 12; 255 when
    absent), then the first error as (line index in ``lo:hi`` or -1, code, detail).
    """
    n = hi - lo
    nfields = PAF_MAPQ + 1 if paf else 5
    ints = PAF_INTS if paf else TSV_INTS
    keep = np.zeros(n, np.bool_)
    ns = np.zeros(n, np.int64)
    ne = np.zeros(n, np.int64)
    contig = np.full(n, -1, np.int32)
    start = np.zeros(n, np.int64)
    end = np.zeros(n, np.int64)
    strand = np.zeros(n, np.int8)
    mapq = np.full(n, NO_MAPQ, np.uint8)
    code = np.zeros(n, np.int8)
    detail = np.zeros(n, np.int64)
    hashes_sorted, order, name_bytes, name_off, lengths = ref
    for b in prange((n + BLOCK - 1) // BLOCK):
        fs = np.zeros(nfields, np.int64)
        fe = np.zeros(nfields, np.int64)
        vals = np.zeros(ints.shape[0], np.int64)
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            s, e = line_span(buf, ends, lo + i)
            if e == s or buf[s] == 35 or (i == 0 and skip_first):  # blank, '#', header
                continue
            keep[i] = True
            nf = _split(buf, s, e, fs, fe)
            ns[i], ne[i] = fs[0], fe[0]
            code[i], detail[i], contig[i], start[i], end[i], strand[i], mapq[i] = _check_line(
                buf, fs, fe, nf, paf, ints, vals, hashes_sorted, order, name_bytes, name_off,
                lengths)
    bad, worst = -1, 127
    for i in range(n):
        if code[i] != OK and code[i] < worst:
            bad, worst = i, code[i]
    return (keep, ns, ne, contig, start, end, strand, mapq,
            (bad, int(worst), detail[max(bad, 0)]))
