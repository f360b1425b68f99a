"""Parallel stages of the align pipeline: packer layout, determinism, thread hand-offs."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from readalign.engine.packing import DNA_CODES
from readalign.pipeline.bam import COMP16, NT16, _record, pack_records
from readalign.pipeline.select import read_bounds, select_best
from readalign.runtime.stages import Consumer, prefetch


def _batch(rng, nreads):
    """A random batch: reads with 0-3 pairs, random CIGARs (M/I/D), some failed pairs."""
    ref = np.frombuffer(b"ACGTN", np.uint8)[rng.integers(0, 5, 5000)].copy()
    names = [f"read{i}".encode() for i in range(nreads)]
    name_off = np.concatenate([[0], np.cumsum([len(n) for n in names])]).astype(np.int64)
    lens = rng.integers(1, 60, nreads)
    seq_off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    seq = np.frombuffer(b"ACGTNRacgt", np.uint8)[rng.integers(0, 10, seq_off[-1])].copy()
    qual = rng.integers(33, 75, seq_off[-1]).astype(np.uint8)
    read = np.repeat(np.arange(nreads), rng.integers(0, 4, nreads))
    npairs = read.shape[0]
    strand = rng.integers(0, 2, npairs).astype(np.int8)
    q_off = np.concatenate([[0], np.cumsum(lens[read])]).astype(np.int64)
    q = rng.integers(0, 5, q_off[-1]).astype(np.uint8)
    ops, n_ops, span = [], [], []
    for p in range(npairs):
        left, cig, s = int(lens[read[p]]), [], 0
        while left:
            k = int(rng.integers(1, left + 1))
            code = int(rng.choice([0, 0, 1, 2])) if cig else 0
            cig.append(k << 4 | code)
            left -= k if code != 2 else 0
            s += k if code != 1 else 0
        ops += cig
        n_ops.append(len(cig))
        span.append(s)
    op_off = np.concatenate([[0], np.cumsum(n_ops)]).astype(np.int64)
    span = np.array(span, np.int64)
    dist = np.where(rng.random(npairs) < 0.2, -1, rng.integers(0, 9, npairs)).astype(np.int32)
    ref_start = rng.integers(0, 30, npairs).astype(np.int64)
    win = rng.integers(0, 4000 - 400, npairs).astype(np.int64)
    contig = np.zeros(npairs, np.int32)
    return dict(names=np.frombuffer(b"".join(names), np.uint8).copy(), name_off=name_off,
                seq=seq, seq_off=seq_off, qual=qual, q=q, q_off=q_off, read=read,
                contig=contig, strand=strand, win=win, dist=dist, ref_start=ref_start,
                ref_end=ref_start + span, ops=np.array(ops, np.uint32), op_off=op_off,
                ref=ref, contig_off=np.array([0, 5000], np.int64))


def _serial(b, has_qual, secondary, rg, valid, best, second, mapq, lo, hi):
    """The records one by one, in order, with the same per-record writer."""
    out = np.zeros(1 << 22, np.uint8)
    o = 0
    args = (b["names"], b["name_off"], b["seq"], b["seq_off"], b["qual"], has_qual, b["q"],
            b["q_off"], b["contig"], b["strand"], b["win"], b["dist"], b["ref_start"],
            b["ref_end"], b["ops"], b["op_off"], b["ref"], DNA_CODES, b["contig_off"], NT16,
            COMP16, rg)
    for r in range(len(best)):
        if best[r] < 0:
            o = _record(out, o, r, -1, 4, 0, -1, *args)
            continue
        o = _record(out, o, r, best[r], 16 * int(b["strand"][best[r]]), mapq[r], second[r],
                    *args)
        for p in range(lo[r], hi[r]) if secondary else ():
            if valid[p] and p != best[r]:
                o = _record(out, o, r, p, 256 | 16 * int(b["strand"][p]), 0, -1, *args)
    return out[:o].tobytes()


@pytest.mark.parametrize("secondary, has_qual, rg", [(False, True, b""), (True, True, b"g1"),
                                                      (True, False, b"")])
def test_parallel_packer_matches_serial_layout(secondary, has_qual, rg):
    rng = np.random.default_rng(7)
    b = _batch(rng, 700)
    n = len(b["name_off"]) - 1
    valid, best, second, mapq = select_best(n, b["read"], b["dist"], b["ref_start"],
                                            b["ref_end"], b["contig"], b["strand"], b["win"])
    lo, hi = read_bounds(n, b["read"])
    rga = np.frombuffer(rg, np.uint8)
    buf, nrec, nsec = pack_records(
        b["names"], b["name_off"], b["seq"], b["seq_off"], b["qual"], has_qual, b["q"],
        b["q_off"], lo, hi, b["contig"], b["strand"], b["win"], b["dist"], b["ref_start"],
        b["ref_end"], b["ops"], b["op_off"], valid, best, second, mapq, secondary, b["ref"],
        DNA_CODES, b["contig_off"], NT16, COMP16, rga)
    assert buf.tobytes() == _serial(b, has_qual, secondary, rga, valid, best, second, mapq,
                                    lo, hi)
    expect_sec = int(sum(valid[lo[r]:hi[r]].sum() - 1 for r in range(n) if best[r] >= 0))
    assert nsec == (expect_sec if secondary else 0)
    assert nrec == n + nsec


def test_records_identical_whatever_threads_and_batches(tmp_path):
    """The BAM's bytes depend on neither --threads nor --batch-size (nor the overlap)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from pipeline_bench import simulate

    from readalign.pipeline.stage import Options, run

    ref, reads, paf, _ = simulate(str(tmp_path), 1500, 50_000, 4)
    got = []
    for threads, batch in ((1, 100_000), (2, 333), (2, 7)):
        out = str(tmp_path / f"o{threads}_{batch}.bam")
        run(Options(reference=ref, reads=reads, candidates=paf, output=out, backend="cpu",
                    threads=threads, batch_size=batch, secondary=True,
                    rg=r"ID:a\tSM:b\tPL:ILLUMINA"))
        with gzip.open(out) as fh:
            got.append(fh.read())
    assert got[0] == got[1] == got[2]


def test_prefetch_and_consumer_pass_errors_in_order():
    def items():
        yield 1
        yield 2
        raise ValueError("bad third")

    seen = []
    with pytest.raises(ValueError, match="bad third"):
        for x in prefetch(items(), threads=1):
            seen.append(x)
    assert seen == [1, 2]
    done = []

    def work(x):
        if x == 3:
            raise RuntimeError("writer failed")
        done.append(x)

    c = Consumer(work, threads=1)
    with pytest.raises(RuntimeError, match="writer failed"):
        for x in range(10):
            c.put(x)
        c.close()
    assert done == [0, 1, 2]
