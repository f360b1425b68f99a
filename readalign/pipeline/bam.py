"""BAM output: header, records packed in bulk, htslib's threaded BGZF writer, sort + index.

Records are packed as binary BAM in compiled code, a whole batch at a time
(no Python object per record), and handed to htslib's BGZF writer
(``bgzf_write`` with its thread pool, called through ``ctypes`` on the
htslib that pysam ships). Sorting, indexing and SAM conversion use
pysam's samtools. Everything is written under a temporary name in the
output's directory and renamed only when complete.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
from numba import njit, prange

from ..errors import InputError, OutputError
from ..runtime.hostkernels import decimal_digits, write_decimal
from ..runtime.outfiles import TempFile, is_stream, output_error, probe_write_error

NT16 = np.full(256, 15, dtype=np.uint8)
for _i, _c in enumerate(b"=ACMGRSVTWYHKDBN"):
    NT16[_c] = _i
    if 65 <= _c <= 90:
        NT16[_c + 32] = _i
NT16[ord("=")] = 15  # '=' in a read means nothing here: store N
COMP16 = np.array([0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15], dtype=np.uint8)

FLAG_REVERSE, FLAG_UNMAPPED, FLAG_SECONDARY = 16, 4, 256
UNMAPPED_BIN = 4680


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
        import logging

        logging.getLogger("readalign").warning(
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


# ---------------------------------------------------------------- record packing


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
def _md(out, o, dry, p, q, q_off, ops, op_off, contig, win_start, ref_start, ref, ref_codes,
        contig_off):
    """MD string of pair ``p`` (from its CIGAR, oriented read and window) at ``out[o]``.

    With ``dry`` nothing is written: only the length is measured.
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
                if dry:
                    o += decimal_digits(run) + 1
                else:
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
        elif code == 2:
            if dry:
                o += decimal_digits(run) + 1 + length
            else:
                o = write_decimal(out, o, run)
                out[o] = 94  # '^'
                o += 1
                for x in range(length):
                    out[o + x] = ref[g + x]
                o += length
            g += length
            run = 0
            nm += length
    if dry:
        return o + decimal_digits(run), nm
    return write_decimal(out, o, run), nm


@njit(cache=True, nogil=True)
def _record_size(r, p, xs, name_off, seq_off, q, q_off, contig, win_start, ref_start, ops,
                 op_off, ref, ref_codes, contig_off, nrg):
    """Exact size in bytes of the record of read ``r`` / pair ``p`` (unmapped if p < 0)."""
    m = seq_off[r + 1] - seq_off[r]
    size = 4 + 32 + name_off[r + 1] - name_off[r] + 1 + (m + 1) // 2 + m
    if p >= 0:
        md_end, _ = _md(ref_codes, 0, True, p, q, q_off, ops, op_off, contig, win_start,
                        ref_start, ref, ref_codes, contig_off)
        size += 4 * (op_off[p + 1] - op_off[p]) + 7 + 3 + md_end + 1 + 7
        if xs >= 0:
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
            q, q_off, contig, strand, win_start, dist, ref_start, ref_end, ops, op_off,
            ref, ref_codes, contig_off, nt16, comp16, rg):
    """Write one record at ``out[o]`` (pair ``p`` of read ``r``, or unmapped if p < 0)."""
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
        o, nm = _md(out, o + 10, False, p, q, q_off, ops, op_off, contig, win_start, ref_start,
                    ref, ref_codes, contig_off)
        out[o] = 0
        o += 1
        _tag_i(out, nm_at, 78, 77, nm)
        o = _tag_i(out, o, 65, 83, -dist[p])
        if xs >= 0:
            o = _tag_i(out, o, 88, 83, -xs)
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


@njit(cache=True, nogil=True, parallel=True)
def _sizes(name_off, seq_off, q, q_off, pair_lo, pair_hi, contig, win_start, ref_start, ops,
           op_off, valid, best, second, secondary, ref, ref_codes, contig_off, nrg):
    """Bytes and records (and secondary records) each read's records take, in parallel."""
    nreads = name_off.shape[0] - 1
    size = np.zeros(nreads, np.int64)
    nrec = np.zeros(nreads, np.int64)
    for r in prange(nreads):
        if best[r] < 0:
            size[r] = _record_size(r, -1, -1, name_off, seq_off, q, q_off, contig, win_start,
                                   ref_start, ops, op_off, ref, ref_codes, contig_off, nrg)
            nrec[r] = 1
            continue
        s = 0
        k = 0
        for p in range(pair_lo[r], pair_hi[r]):
            if _emits(r, p, secondary, valid, best):
                xs = second[r] if p == best[r] else -1
                s += _record_size(r, p, xs, name_off, seq_off, q, q_off, contig, win_start,
                                  ref_start, ops, op_off, ref, ref_codes, contig_off, nrg)
                k += 1
        size[r] = s
        nrec[r] = k
    return size, nrec


@njit(cache=True, nogil=True, parallel=True)
def _fill(out, start, names, name_off, seq, seq_off, qual, has_qual, q, q_off, pair_lo,
          pair_hi, contig, strand, win_start, dist, ref_start, ref_end, ops, op_off, valid, best,
          second, mapq, secondary, ref, ref_codes, contig_off, nt16, comp16, rg):
    """Write each read's records at ``out[start[r]]``, in parallel over reads."""
    nreads = name_off.shape[0] - 1
    for r in prange(nreads):
        b = best[r]
        if b < 0:
            _record(out, start[r], r, -1, FLAG_UNMAPPED, 0, -1, names, name_off, seq, seq_off,
                    qual, has_qual, q, q_off, contig, strand, win_start, dist, ref_start,
                    ref_end, ops, op_off, ref, ref_codes, contig_off, nt16, comp16, rg)
            continue
        o = _record(out, start[r], r, b, FLAG_REVERSE if strand[b] == 1 else 0, mapq[r],
                    second[r], names, name_off, seq, seq_off, qual, has_qual, q, q_off, contig,
                    strand, win_start, dist, ref_start, ref_end, ops, op_off, ref, ref_codes,
                    contig_off, nt16, comp16, rg)
        if not secondary:
            continue
        for p in range(pair_lo[r], pair_hi[r]):
            if p != b and _emits(r, p, secondary, valid, best):
                flag = FLAG_SECONDARY | (FLAG_REVERSE if strand[p] == 1 else 0)
                o = _record(out, o, r, p, flag, 0, -1, names, name_off, seq, seq_off, qual,
                            has_qual, q, q_off, contig, strand, win_start, dist, ref_start,
                            ref_end, ops, op_off, ref, ref_codes, contig_off, nt16, comp16, rg)


def pack_records(names, name_off, seq, seq_off, qual, has_qual, q, q_off, pair_lo, pair_hi,
                 contig, strand, win_start, dist, ref_start, ref_end, ops, op_off, valid, best,
                 second, mapq, secondary, ref, ref_codes, contig_off, nt16, comp16,
                 rg) -> tuple[np.ndarray, int, int]:
    """Pack every read of a batch as BAM records, in read order, on every core.

    Each read gets its primary record (or an unmapped one), followed by its
    other valid alignments as secondary records when ``secondary``. Every
    record is sized exactly first; a prefix sum gives each read its offset;
    then all records are written in parallel.
    Returns (bytes, records written, secondary records written).
    """
    size, nrec = _sizes(name_off, seq_off, q, q_off, pair_lo, pair_hi, contig, win_start,
                        ref_start, ops, op_off, valid, best, second, secondary, ref, ref_codes,
                        contig_off, rg.shape[0])
    start = np.zeros(size.shape[0] + 1, np.int64)
    np.cumsum(size, out=start[1:])
    out = np.empty(int(start[-1]), np.uint8)
    _fill(out, start, names, name_off, seq, seq_off, qual, has_qual, q, q_off, pair_lo, pair_hi,
          contig, strand, win_start, dist, ref_start, ref_end, ops, op_off, valid, best, second,
          mapq, secondary, ref, ref_codes, contig_off, nt16, comp16, rg)
    total = int(nrec.sum())
    return out, total, total - nrec.shape[0]


# ---------------------------------------------------------------- htslib BGZF writer


HTS_FEATURE_LIBDEFLATE = 1 << 20
"""htslib's ``hts_features()`` bit for a build that deflates with libdeflate."""


@functools.cache
def _htslib() -> ctypes.CDLL:
    from pysam import libchtslib

    lib = ctypes.CDLL(libchtslib.__file__)
    lib.bgzf_dopen.restype = ctypes.c_void_p
    lib.bgzf_dopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
    lib.hts_set_log_level.restype = None
    lib.hts_set_log_level.argtypes = [ctypes.c_int]
    lib.hts_set_log_level(0)  # failures are reported once, by readalign, naming the file
    lib.bgzf_mt.restype = ctypes.c_int
    lib.bgzf_mt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.bgzf_write.restype = ctypes.c_ssize_t
    lib.bgzf_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.bgzf_close.restype = ctypes.c_int
    lib.bgzf_close.argtypes = [ctypes.c_void_p]
    lib.hts_features.restype = ctypes.c_uint
    lib.hts_features.argtypes = []
    return lib


def deflate_library() -> str:
    """What pysam's htslib compresses BGZF blocks with: ``"libdeflate"`` or ``"zlib"``.

    BGZF compression is the costliest part of writing a BAM, and libdeflate
    does it 2-3x faster than zlib; PyPI's pysam wheels use zlib.
    """
    return "libdeflate" if _htslib().hts_features() & HTS_FEATURE_LIBDEFLATE else "zlib"


class BgzfWriter:
    """htslib's BGZF writer with its compression thread pool, on a descriptor we opened.

    ``fd`` is handed over (htslib closes it). A failed write or close raises
    the OS's reason for ``name`` (``no space left on device``, a closed pipe),
    found by :func:`probe_write_error` on a descriptor kept for that.
    """

    def __init__(self, fd: int, name: str, threads: int, level: int | None = None) -> None:
        self._lib = _htslib()
        self.name = name
        mode = b"wb" + (str(level).encode() if level is not None else b"")
        self._probe = os.dup(fd)
        self._fp = self._lib.bgzf_dopen(fd, mode)
        if not self._fp:
            os.close(fd)
            raise self._failure()
        # htslib queues blocks for its pool (n_sub_blks is advisory in htslib >= 1.4):
        # bgzf_write copies into 64 KiB blocks and returns; compression runs on the pool
        if threads > 1 and self._lib.bgzf_mt(self._fp, threads, 256) != 0:
            self.abandon()
            raise OSError("htslib could not start its BGZF thread pool")

    def _failure(self) -> OSError:
        exc = probe_write_error(self._probe, self.name)
        self._close_probe()
        return exc

    def _close_probe(self) -> None:
        if self._probe >= 0:
            fd, self._probe = self._probe, -1
            os.close(fd)

    def write(self, data: bytes | np.ndarray) -> None:
        """Append raw bytes (BAM header or records)."""
        arr = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
        n = arr.shape[0]
        if n and self._lib.bgzf_write(self._fp, arr.ctypes.data, n) != n:
            raise self._failure()

    def close(self) -> None:
        """Flush, write the EOF block and close."""
        if self._fp:
            fp, self._fp = self._fp, None
            if self._lib.bgzf_close(fp) != 0:
                raise self._failure()
        self._close_probe()

    def abandon(self) -> None:
        """Close after a failure, whatever htslib says (the caller removes the file)."""
        with contextlib.suppress(OSError):
            self.close()
        self._close_probe()


# ---------------------------------------------------------------- output files


def _bam_to_sam(src: str, dst: str, threads: int) -> None:
    """Write the BAM ``src`` as SAM text to ``dst`` (pysam's samtools view cannot write to a file)."""
    import pysam

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
    """

    def __init__(self, path: str, sam: bool, sort: bool, threads: int,
                 level: int | None = None) -> None:
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
            self.writer = BgzfWriter(fd, name, self.threads,
                                     level if self.direct else 1)
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
        import pysam

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
