"""BAM records packed in bulk: a whole batch at a time, on every core, no Python object per record.

Each read gets its primary record (or an unmapped one), followed by its other
valid alignments as secondary records when asked. Each read's records get a slot
as large as they can be (everything is sized exactly but MD, bounded from the
CIGAR), all records are written into their slots in parallel, and the slots are
then copied end to end: one pass over the alignments instead of a sizing pass and
a writing pass. NM and MD are computed from the CIGAR and the reference.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..engine.packing import DNA_CODES
from ..engine.result import AlignResult
from ..io.reads import ReadBatch
from ..io.reference import Reference
from ..kernels.loops import parallel_loop
from ..runtime.decimal import write_decimal
from .pairs import Pairs
from .select import Selection

NT16 = np.full(256, 15, dtype=np.uint8)
for _i, _c in enumerate(b"=ACMGRSVTWYHKDBN"):
    NT16[_c] = _i
    if 65 <= _c <= 90:
        NT16[_c + 32] = _i
NT16[ord("=")] = 15  # '=' in a read means nothing here: store N
COMP16 = np.array([0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15], dtype=np.uint8)

FLAG_REVERSE, FLAG_UNMAPPED, FLAG_SECONDARY = 16, 4, 256
UNMAPPED_BIN = 4680




@njit(cache=True, inline="always")
def _i32(buf, o, v):
    v = np.int64(v) & 0xFFFFFFFF
    buf[o] = v & 0xFF
    buf[o + 1] = (v >> 8) & 0xFF
    buf[o + 2] = (v >> 16) & 0xFF
    buf[o + 3] = (v >> 24) & 0xFF
    return o + 4


@njit(cache=True, inline="always")
def _u16(buf, o, v):
    buf[o] = v & 0xFF
    buf[o + 1] = (v >> 8) & 0xFF
    return o + 2


@njit(cache=True, nogil=True)
def reg2bin(beg, end):
    """The BAI bin of 0-based half-open [beg, end) (SAM spec, section 5.3)."""
    end -= 1
    if beg >> 14 == end >> 14:
        return ((1 << 15) - 1) // 7 + (beg >> 14)
    if beg >> 17 == end >> 17:
        return ((1 << 12) - 1) // 7 + (beg >> 17)
    if beg >> 20 == end >> 20:
        return ((1 << 9) - 1) // 7 + (beg >> 20)
    if beg >> 23 == end >> 23:
        return ((1 << 6) - 1) // 7 + (beg >> 23)
    if beg >> 26 == end >> 26:
        return ((1 << 3) - 1) // 7 + (beg >> 26)
    return 0


@njit(cache=True, nogil=True)
def _tag_i(buf, o, a, b, v):
    buf[o] = a
    buf[o + 1] = b
    buf[o + 2] = 105  # 'i'
    return _i32(buf, o + 3, v)


@njit(cache=True, nogil=True)
def _same_run(qs, rs, ref_codes):
    """Length of the leading run where read codes match the reference (N never matches)."""
    for x in range(qs.shape[0]):
        rc = qs[x]
        if rc != ref_codes[rs[x]] or rc >= 4:
            return x
    return qs.shape[0]


@njit(cache=True, nogil=True)
def _md(out, o, p, q, q_off, ops, op_off, contig, win_start, ref_start, ref, ref_codes,
        contig_off):
    """MD string of pair ``p`` (from its CIGAR, oriented read and window) at ``out[o]``.

    Returns (offset after the string, without its NUL; NM).
    """
    nm = 0
    run = 0
    qi = q_off[p]
    g = contig_off[contig[p]] + win_start[p] + ref_start[p]
    for k in range(op_off[p], op_off[p + 1]):
        op = ops[k]
        length = np.int64(op >> 4)
        code = op & 15
        if code == 0 or code == 7 or code == 8:
            qs = q[qi:qi + length]
            rs = ref[g:g + length]
            x = _same_run(qs, rs, ref_codes)
            while x < length:
                run += x
                o = write_decimal(out, o, run)
                out[o] = rs[x]
                o += 1
                run = 0
                nm += 1
                qs = qs[x + 1:]
                rs = rs[x + 1:]
                length -= x + 1
                qi += x + 1
                g += x + 1
                x = _same_run(qs, rs, ref_codes)
            run += length
            qi += length
            g += length
        elif code == 1:
            qi += length
            nm += length
        elif code == 4:  # a soft clip: read bases outside the alignment
            qi += length
        elif code == 2:
            o = write_decimal(out, o, run)
            out[o] = 94  # '^'
            o += 1
            for x in range(length):
                out[o + x] = ref[g + x]
            o += length
            g += length
            run = 0
            nm += length
    return write_decimal(out, o, run), nm


@njit(cache=True, nogil=True)
def _md_bound(p, ops, op_off):
    """Most bytes pair ``p``'s MD string can take, from its CIGAR alone.

    MD is a number before every mismatch and deletion and one at the end; a number's
    digits are at most its value plus one, the numbers add up to at most the matched
    bases, and there are at most as many mismatches: 2 x matched + deleted bases
    + 2 per deletion + 1.
    """
    matched = 0
    deleted = 0
    dels = 0
    for k in range(op_off[p], op_off[p + 1]):
        op = ops[k]
        length = np.int64(op >> 4)
        code = op & 15
        if code == 0 or code == 7 or code == 8:
            matched += length
        elif code == 2:
            deleted += length
            dels += 1
    return 2 * matched + deleted + 2 * dels + 1


@njit(cache=True, nogil=True)
def _record_bound(r, p, has_xs, name_off, seq_off, ops, op_off, nrg):
    """Most bytes the record of read ``r`` / pair ``p`` takes (unmapped if p < 0): exact but MD."""
    m = seq_off[r + 1] - seq_off[r]
    size = 4 + 32 + name_off[r + 1] - name_off[r] + 1 + (m + 1) // 2 + m
    if p >= 0:
        size += 4 * (op_off[p + 1] - op_off[p]) + 7 + 3 + _md_bound(p, ops, op_off) + 1 + 7
        if has_xs:
            size += 7
    if nrg > 0:
        size += 3 + nrg + 1
    return size


@njit(cache=True, nogil=True)
def _pack_seq(dst, seq, rev, nt16, comp16):
    """SEQ as 4-bit codes, two per byte (reverse-complemented when ``rev``)."""
    m = seq.shape[0]
    if rev:
        for k in range(m // 2):
            dst[k] = (comp16[nt16[seq[m - 1 - 2 * k]]] << 4) | comp16[nt16[seq[m - 2 - 2 * k]]]
        if m % 2:
            dst[m // 2] = comp16[nt16[seq[0]]] << 4
    else:
        for k in range(m // 2):
            dst[k] = (nt16[seq[2 * k]] << 4) | nt16[seq[2 * k + 1]]
        if m % 2:
            dst[m // 2] = nt16[seq[m - 1]] << 4


@njit(cache=True, nogil=True)
def _put_qual(dst, qual, rev):
    """QUAL as phred values (reversed when ``rev``); 0xFF for all when ``qual`` is empty."""
    m = dst.shape[0]
    if qual.shape[0] == 0:
        dst[:] = 0xFF
    elif rev:
        for k in range(m):
            dst[k] = qual[m - 1 - k] - 33
    else:
        for k in range(m):
            dst[k] = qual[k] - 33


@njit(cache=True, nogil=True)
def _record(out, o, r, p, flag, mapq, xs, names, name_off, seq, seq_off, qual, has_qual,
            q, q_off, contig, strand, win_start, alscore, ref_start, ref_end, ops, op_off,
            ref, ref_codes, contig_off, nt16, comp16, rg):
    """Write one record at ``out[o]`` (pair ``p`` of read ``r``, or unmapped if p < 0).

    AS is ``alscore[p]``; XS, when ``xs >= 0``, the AS of pair ``xs`` (the second best).
    """
    start = o
    o += 4  # block_size, filled last
    m = seq_off[r + 1] - seq_off[r]
    rev = p >= 0 and strand[p] == 1
    if p >= 0:
        pos = win_start[p] + ref_start[p]
        end = win_start[p] + ref_end[p]
        o = _i32(out, o, contig[p])
        o = _i32(out, o, pos)
        ncig = op_off[p + 1] - op_off[p]
        bin_ = reg2bin(pos, end)
    else:
        o = _i32(out, o, -1)
        o = _i32(out, o, -1)
        ncig = 0
        bin_ = UNMAPPED_BIN
    ln = name_off[r + 1] - name_off[r]
    out[o] = ln + 1
    out[o + 1] = mapq
    o = _u16(out, o + 2, bin_)
    o = _u16(out, o, ncig)
    o = _u16(out, o, flag)
    o = _i32(out, o, m)
    o = _i32(out, o, -1)
    o = _i32(out, o, -1)
    o = _i32(out, o, 0)
    out[o:o + ln] = names[name_off[r]:name_off[r + 1]]
    o += ln
    out[o] = 0
    o += 1
    if p >= 0:
        for k in range(ncig):
            o = _i32(out, o, ops[op_off[p] + k])
    s0 = seq_off[r]
    nb = (m + 1) // 2
    _pack_seq(out[o:o + nb], seq[s0:s0 + m], rev, nt16, comp16)
    o += nb
    _put_qual(out[o:o + m], qual[s0:s0 + m] if has_qual else qual[:0], rev)
    o += m
    if p >= 0:
        nm_at = o
        out[o + 7] = 77
        out[o + 8] = 68
        out[o + 9] = 90  # 'MDZ'
        o, nm = _md(out, o + 10, p, q, q_off, ops, op_off, contig, win_start, ref_start,
                    ref, ref_codes, contig_off)
        out[o] = 0
        o += 1
        _tag_i(out, nm_at, 78, 77, nm)
        o = _tag_i(out, o, 65, 83, alscore[p])
        if xs >= 0:
            o = _tag_i(out, o, 88, 83, alscore[xs])
    if rg.shape[0] > 0:
        out[o] = 82
        out[o + 1] = 71
        out[o + 2] = 90
        o += 3
        for k in range(rg.shape[0]):
            out[o + k] = rg[k]
        o += rg.shape[0]
        out[o] = 0
        o += 1
    _i32(out, start, o - start - 4)
    return o


@njit(cache=True, nogil=True)
def _emits(r, p, secondary, valid, best):
    """Whether pair ``p`` of read ``r`` gets a record (its primary, or a valid secondary)."""
    return p == best[r] or (secondary and valid[p] and best[r] >= 0)


@parallel_loop(size=0)
def _slots(name_off, seq_off, pair_lo, pair_hi, ops, op_off, valid, best, second, secondary, nrg):
    """Bytes each read's records can take at most, and how many records it gets (in parallel)."""
    nreads = name_off.shape[0] - 1
    size = np.zeros(nreads, np.int64)
    nrec = np.zeros(nreads, np.int64)
    for r in prange(nreads):
        if best[r] < 0:
            size[r] = _record_bound(r, -1, False, name_off, seq_off, ops, op_off, nrg)
            nrec[r] = 1
            continue
        s = 0
        k = 0
        for p in range(pair_lo[r], pair_hi[r]):
            if _emits(r, p, secondary, valid, best):
                has_xs = p == best[r] and second[r] >= 0
                s += _record_bound(r, p, has_xs, name_off, seq_off, ops, op_off, nrg)
                k += 1
        size[r] = s
        nrec[r] = k
    return size, nrec


@parallel_loop(size=3)
def _fill(out, start, names, name_off, seq, seq_off, qual, has_qual, q, q_off, pair_lo,
          pair_hi, contig, strand, win_start, alscore, ref_start, ref_end, ops, op_off, valid, best,
          second, mapq, secondary, ref, ref_codes, contig_off, nt16, comp16, rg):
    """Write each read's records at ``out[start[r]]``, in parallel over reads; their bytes."""
    nreads = name_off.shape[0] - 1
    used = np.zeros(nreads, np.int64)
    for r in prange(nreads):
        b = best[r]  # < 0: the read is unmapped
        flag = FLAG_UNMAPPED if b < 0 else (FLAG_REVERSE if strand[b] == 1 else 0)
        o = _record(out, start[r], r, b, flag, mapq[r] if b >= 0 else 0,
                    second[r] if b >= 0 else -1, names, name_off, seq, seq_off, qual, has_qual,
                    q, q_off, contig, strand, win_start, alscore, ref_start, ref_end, ops, op_off,
                    ref, ref_codes, contig_off, nt16, comp16, rg)
        if secondary and b >= 0:
            for p in range(pair_lo[r], pair_hi[r]):
                if p != b and _emits(r, p, secondary, valid, best):
                    flag = FLAG_SECONDARY | (FLAG_REVERSE if strand[p] == 1 else 0)
                    o = _record(out, o, r, p, flag, 0, -1, names, name_off, seq, seq_off, qual,
                                has_qual, q, q_off, contig, strand, win_start, alscore,
                                ref_start, ref_end, ops, op_off, ref, ref_codes, contig_off,
                                nt16, comp16, rg)
        used[r] = o - start[r]
    return used


@parallel_loop(size=4)
def _close_up(dst, dst_start, src, src_start, used):
    """Copy each read's ``used[r]`` bytes from ``src[src_start[r]]`` to ``dst[dst_start[r]]``."""
    for r in prange(used.shape[0]):
        dst[dst_start[r]:dst_start[r] + used[r]] = src[src_start[r]:src_start[r] + used[r]]


class RecordScratch:
    """The slots :func:`pack_records` writes into, kept from batch to batch.

    A fresh buffer per batch would be faulted in page by page each time; one
    buffer (grown when a batch needs more) is written at memory speed.
    """

    def __init__(self) -> None:
        self._buf = np.empty(0, np.uint8)

    def get(self, nbytes: int) -> np.ndarray:
        """A buffer of at least ``nbytes`` (its contents are not kept)."""
        if self._buf.shape[0] < nbytes:
            self._buf = np.empty(nbytes + (nbytes >> 3), np.uint8)
        return self._buf


def pack_records(batch: ReadBatch, pairs: Pairs, res: AlignResult, sel: Selection,
                 ref: Reference, secondary: bool, rg: np.ndarray,
                 scratch: RecordScratch | None = None) -> tuple[np.ndarray, int, int]:
    """Pack every read of a batch as BAM records, in read order, on every core.

    ``rg`` is the read group ID as bytes (empty: no RG tag); ``scratch`` is the
    slot buffer to reuse (a stage keeps one for all its batches). Returns (bytes,
    records written, secondary records written).
    """
    qual = batch.qual if batch.qual is not None else np.zeros(0, np.uint8)
    ops, op_off = res.cigar_ops, res.cigar_offsets
    bound, nrec = _slots(batch.name_off, batch.seq_off, sel.lo, sel.hi, ops, op_off, sel.valid,
                         sel.best, sel.second, secondary, rg.shape[0])
    slot_at = np.zeros(bound.shape[0] + 1, np.int64)
    np.cumsum(bound, out=slot_at[1:])
    slots = (scratch or RecordScratch()).get(int(slot_at[-1]))
    used = _fill(slots, slot_at, batch.names, batch.name_off, batch.seq, batch.seq_off, qual,
                 batch.qual is not None, pairs.q.data, pairs.q.offsets, sel.lo, sel.hi,
                 pairs.contig, pairs.strand, pairs.win_start, sel.alscore, res.ref_start,
                 res.ref_end, ops, op_off, sel.valid, sel.best, sel.second, sel.mapq, secondary,
                 ref.flat, DNA_CODES, ref.offsets, NT16, COMP16, rg)
    if (used > bound).any():  # cannot happen while _md_bound holds; never write a wrong BAM
        r = int(np.argmax(used > bound))
        raise RuntimeError(f"records of read {batch.first + r + 1} took {int(used[r])} bytes, "
                           f"more than the {int(bound[r])} sized for them (a readalign bug)")
    start = np.zeros(used.shape[0] + 1, np.int64)
    np.cumsum(used, out=start[1:])
    out = np.empty(int(start[-1]), np.uint8)
    _close_up(out, start, slots, slot_at, used)
    total = int(nrec.sum())
    return out, total, total - nrec.shape[0]
