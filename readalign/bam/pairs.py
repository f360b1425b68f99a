"""The pair builder: match candidates to reads, fetch padded windows, orient reads.

Candidates arrive grouped by read in the order of the reads file. A
candidate on the reverse strand aligns the reverse complement of the read.
Windows are the candidate span padded by ``pad`` bases on both sides and
clipped to the contig.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..engine.packing import N_CODE, Packed
from ..kernels.loops import parallel_loop


@njit(cache=True, nogil=True)
def _same(a, a0, a1, b, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):  # noqa: SIM110 - numba compiles loops, not all()
        if a[a0 + k] != b[b0 + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def repeated_names(names, off):
    """Reads whose name equals the previous read's name: (count, index of the first or -1)."""
    count, first = 0, -1
    for i in range(1, off.shape[0] - 1):
        if _same(names, off[i - 1], off[i], names, off[i], off[i + 1]):
            count += 1
            if first < 0:
                first = i
    return count, first


@njit(cache=True, nogil=True)
def match_reads(rnames, roff, cnames, coff, i0):
    """Walk reads from ``i0`` and candidates from 0 while names match.

    Returns (read index per candidate, candidates matched, read pointer at the
    end). Matching stops when the reads of the batch run out.
    """
    nreads = roff.shape[0] - 1
    ncand = coff.shape[0] - 1
    out = np.full(ncand, -1, np.int64)
    i = i0
    j = 0
    while j < ncand and i < nreads:
        if _same(rnames, roff[i], roff[i + 1], cnames, coff[j], coff[j + 1]):
            out[j] = i
            j += 1
        else:
            i += 1
    return out, j, i


@njit(cache=True, nogil=True)
def find_name(rnames, roff, cnames, c0, c1):
    """Index of the read named ``cnames[c0:c1]`` in the batch, or -1."""
    for i in range(roff.shape[0] - 1):
        if _same(rnames, roff[i], roff[i + 1], cnames, c0, c1):
            return i
    return -1


@dataclass
class Pairs:
    """Read/window pairs of one batch, ready for the engine."""

    read: np.ndarray  # int64 read index within the batch
    contig: np.ndarray  # int32
    strand: np.ndarray  # int8
    win_start: np.ndarray  # int64 window start on the contig
    q: Packed
    t: Packed
    upstream_mapq: np.ndarray  # uint8: the upstream mapper's MAPQ of the candidate, 255 if none

    def __len__(self) -> int:
        return self.read.shape[0]


@njit(cache=True, nogil=True)
def _windows(seq_off, read, contig_len, contig, start, end, pad):
    """Padded, clipped windows and the offsets of each pair's read and window."""
    n = read.shape[0]
    ws = np.empty(n, np.int64)
    we = np.empty(n, np.int64)
    q_off = np.zeros(n + 1, np.int64)
    t_off = np.zeros(n + 1, np.int64)
    for p in range(n):
        c = contig[p]
        ws[p] = max(start[p] - pad, 0)
        we[p] = min(end[p] + pad, contig_len[c])
        r = read[p]
        q_off[p + 1] = q_off[p] + seq_off[r + 1] - seq_off[r]
        t_off[p + 1] = t_off[p] + we[p] - ws[p]
    return ws, we, q_off, t_off


@njit(cache=True, nogil=True, inline="always")
def _code(c):
    """DNA_CODES[c] without the table: A/C/G/T either case to 0..3, any other byte to N (4).

    Compares instead of a load per base, so LLVM vectorises the loops below
    (``tests/bam/test_pairs.py`` checks every byte against the table).
    """
    x = c | np.uint8(32)
    k = np.uint8(N_CODE)
    k = np.uint8(0) if x == 97 else k
    k = np.uint8(1) if x == 99 else k
    k = np.uint8(2) if x == 103 else k
    return np.uint8(3) if x == 116 else k


@njit(cache=True, nogil=True)
def _encode(dst, src):
    """``dst[k] = DNA_CODES[src[k]]`` (slices: no negative-index checks)."""
    for k in range(src.shape[0]):
        dst[k] = _code(src[k])


@njit(cache=True, nogil=True)
def _encode_rc(dst, src):
    """The reverse complement of ``src`` as engine codes (N stays N): encode, then swap the
    ends inward, complementing both (the middle of an odd length meets itself)."""
    m = src.shape[0]
    _encode(dst, src)
    for k in range((m + 1) // 2):
        a = dst[k]
        b = dst[m - 1 - k]
        dst[k] = b ^ np.uint8(3) if b < 4 else b
        dst[m - 1 - k] = a ^ np.uint8(3) if a < 4 else a


@parallel_loop(size=4)
def _fill_reads(q, q_off, seq, seq_off, read, strand):
    """Each pair's read, oriented by its strand, as engine codes."""
    for p in prange(read.shape[0]):
        r = read[p]
        src = seq[seq_off[r]:seq_off[r + 1]]
        if strand[p] == 0:
            _encode(q[q_off[p]:q_off[p + 1]], src)
        else:
            _encode_rc(q[q_off[p]:q_off[p + 1]], src)


@parallel_loop(size=5)
def _fill_windows(t, t_off, ref, contig_off, contig, ws, we):
    """Each pair's reference window as engine codes."""
    for p in prange(ws.shape[0]):
        g = contig_off[contig[p]]
        _encode(t[t_off[p]:t_off[p + 1]], ref[g + ws[p]:g + we[p]])


def build_pairs(seq: np.ndarray, seq_off: np.ndarray, read: np.ndarray, contig: np.ndarray,
                start: np.ndarray, end: np.ndarray, strand: np.ndarray, ref, pad: int,
                mapq: np.ndarray) -> Pairs:
    """Pack each candidate's oriented read and padded, clipped window as engine codes."""
    ref.ensure(contig)
    ws, we, q_off, t_off = _windows(seq_off, read, ref.lengths, contig, start, end, int(pad))
    q = np.empty(int(q_off[-1]) + 1, np.uint8)  # one spare byte, zero, as before
    t = np.empty(int(t_off[-1]) + 1, np.uint8)
    q[-1] = 0
    t[-1] = 0
    _fill_reads(q, q_off, seq, seq_off, read, strand)
    _fill_windows(t, t_off, ref.flat, ref.offsets, contig, ws, we)
    return Pairs(read, contig, strand, ws, Packed(q, q_off), Packed(t, t_off), mapq)
