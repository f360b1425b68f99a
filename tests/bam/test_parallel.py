"""Parallel stages of the align pipeline: packer layout, determinism, thread hand-offs."""

from __future__ import annotations

import gzip
import json
import os
import time
from dataclasses import replace

import numpy as np
import pysam
import pytest

from readalign.bam.bgzf import BgzfWriter
from readalign.bam.defaults import DEFAULT_PAD
from readalign.bam.header import header_bytes, header_text
from readalign.bam.options import Options
from readalign.bam.pairs import Pairs
from readalign.bam.presets import EDIT
from readalign.bam.records import _md_bound, pack_records
from readalign.bam.run import run
from readalign.bam.select import choose
from readalign.engine.packing import Packed
from readalign.engine.result import AlignResult
from readalign.io.reads import ReadBatch
from readalign.io.reference import Reference
from readalign.runtime.stages import Consumer, prefetch
from tests.support.simulate import simulate


def _batch(rng, nreads):
    """A random batch: reads with 0-3 pairs, random CIGARs (M/I/D, S at the ends), some failed
    pairs."""
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
        for at_start in (True, False):  # soft-clip part of an end M run
            run = cig[0] if at_start else cig[-1]
            if run & 15 == 0 and run >> 4 >= 2 and rng.random() < 0.25:
                k = int(rng.integers(1, run >> 4))
                clip, rest = k << 4 | 4, ((run >> 4) - k) << 4
                if at_start:
                    cig[:1] = [clip, rest]
                else:
                    cig[-1:] = [rest, clip]
                s -= k
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
                ref=ref, contig_off=np.array([0, 5000], np.int64),
                upstream=np.full(npairs, 255, np.uint8))


_IUPAC = "=ACMGRSVTWYHKDBN"
_COMPLEMENT = str.maketrans("ACGTNRacgt", "TGCANYTGCA")


def _objects(b, has_qual: bool, tmp_path):
    """The batch as the stage's own types (reads, pairs, results, a real FASTA reference)."""
    fasta = tmp_path / "ref.fa"
    fasta.write_bytes(b">chr1\n" + b["ref"].tobytes() + b"\n")
    batch = ReadBatch(b["names"], b["name_off"], b["seq"], b["seq_off"],
                      b["qual"] if has_qual else None, 0)
    pairs = Pairs(b["read"], b["contig"], b["strand"], b["win"], Packed(b["q"], b["q_off"]),
                  Packed(b["q"], b["q_off"]), b["upstream"])
    res = AlignResult(b["dist"], b["ref_start"], b["ref_end"], b["ops"], b["op_off"], "infix",
                      "cpu")
    ref = Reference(str(fasta))
    ref.ensure(np.zeros(1, np.int64))
    return batch, pairs, res, ref


def _nm_md(q: np.ndarray, ref: bytes, pos: int, cigar: list) -> tuple[int, str]:
    """NM and MD recomputed from the CIGAR: read codes 0-3 match ACGT; N never matches."""
    nm, run, md, qi = 0, 0, "", 0
    for op, n in cigar:
        if op == 0:
            for k in range(n):
                base = chr(ref[pos + k])
                if int(q[qi + k]) < 4 and "ACGT"[int(q[qi + k])] == base.upper():
                    run += 1
                else:
                    md, run, nm = md + f"{run}{base}", 0, nm + 1
            qi, pos = qi + n, pos + n
        elif op == 1:
            qi, nm = qi + n, nm + n
        elif op == 4:
            qi += n
        else:
            md, run, nm = md + f"{run}^" + ref[pos:pos + n].decode(), 0, nm + n
            pos += n
    return nm, md + str(run)


def _expected(b, sel, has_qual: bool, secondary: bool, rg: str):
    """Every record the batch should produce, in order, from first principles."""
    names = b["names"].tobytes().decode()
    ref = b["ref"].tobytes()
    for r in range(len(b["name_off"]) - 1):
        name = names[b["name_off"][r]:b["name_off"][r + 1]]
        seq = b["seq"][b["seq_off"][r]:b["seq_off"][r + 1]].tobytes().decode().upper()
        qual = list(b["qual"][b["seq_off"][r]:b["seq_off"][r + 1]] - 33) if has_qual else None
        best = int(sel.best[r])
        picks = [best] + [p for p in range(sel.lo[r], sel.hi[r])
                          if secondary and best >= 0 and p != best and sel.valid[p]]
        for p in picks:
            rec = {"name": name, "seq": seq, "qual": qual, "rg": rg}
            if p < 0:
                rec.update(flag=4, pos=-1, cigar=None, mapq=0, tags={})
                yield rec
                continue
            rev = bool(b["strand"][p])
            cigar = [(int(o) & 15, int(o) >> 4) for o in b["ops"][b["op_off"][p]:b["op_off"][p + 1]]]
            pos = int(b["win"][p] + b["ref_start"][p])
            q = b["q"][b["q_off"][p]:b["q_off"][p + 1]]
            nm, md = _nm_md(q, ref, pos, cigar)
            tags = {"NM": nm, "MD": md, "AS": -int(b["dist"][p])}
            if p == best and sel.second[r] >= 0:
                tags["XS"] = -int(b["dist"][sel.second[r]])
            rec.update(flag=(16 if rev else 0) | (0 if p == best else 256), pos=pos, cigar=cigar,
                       mapq=int(sel.mapq[r]) if p == best else 0, tags=tags)
            if rev:
                rec["seq"] = seq.translate(_COMPLEMENT)[::-1]
                rec["qual"] = qual[::-1] if qual is not None else None
            yield rec


@pytest.mark.parametrize("secondary, has_qual, rg", [(False, True, ""), (True, True, "g1"),
                                                      (True, False, "")])
def test_packed_records_read_back_as_expected(secondary, has_qual, rg, tmp_path):
    """The parallel packer's records, read back by htslib, against fields computed in Python."""
    b = _batch(np.random.default_rng(7), 700)
    batch, pairs, res, ref = _objects(b, has_qual, tmp_path)
    sel = choose(len(batch), pairs, res, EDIT, None)
    buf, nrec, nsec = pack_records(batch, pairs, res, sel, ref, secondary,
                                   np.frombuffer(rg.encode(), np.uint8))
    out = tmp_path / "out.bam"
    writer = BgzfWriter(os.open(out, os.O_WRONLY | os.O_CREAT, 0o644), str(out), 1)
    rg_line = f"@RG\tID:{rg}" if rg else None
    writer.write(header_bytes(header_text(["chr1"], [5000], "0", "test", rg_line), ["chr1"],
                              np.array([5000])))
    writer.write(buf)
    writer.close()
    want = list(_expected(b, sel, has_qual, secondary, rg))
    with pysam.AlignmentFile(str(out), "rb") as fh:
        got = list(fh)
    assert len(got) == len(want) == nrec
    assert nsec == sum(1 for w in want if w["flag"] & 256)
    assert secondary or nsec == 0
    for g, w in zip(got, want, strict=True):
        assert (g.query_name, g.flag, g.reference_start, g.cigartuples, g.mapping_quality) == \
            (w["name"], w["flag"], w["pos"], w["cigar"], w["mapq"])
        assert g.query_sequence == "".join(_IUPAC[_IUPAC.index(c)] for c in w["seq"])
        assert (list(g.query_qualities) if g.query_qualities is not None else None) == w["qual"]
        tags = dict(g.get_tags())
        assert tags.pop("RG", "") == w["rg"]
        assert tags == w["tags"]


@pytest.mark.parametrize("seed", [3, 8])
def test_md_fits_its_bound_which_all_mismatches_reach(seed):
    """Records are written into slots sized by ``_md_bound``: no MD may exceed it."""
    b = _batch(np.random.default_rng(seed), 700)
    ref = b["ref"].tobytes()
    for p in range(len(b["op_off"]) - 1):
        cigar = [(int(o) & 15, int(o) >> 4) for o in b["ops"][b["op_off"][p]:b["op_off"][p + 1]]]
        q = b["q"][b["q_off"][p]:b["q_off"][p + 1]]
        md = _nm_md(q, ref, int(b["win"][p] + b["ref_start"][p]), cigar)[1]
        assert len(md) <= _md_bound(p, b["ops"], b["op_off"])
    worst = [(0, 7), (2, 3), (2, 2), (1, 1), (0, 5)]  # every base a mismatch, deletions at once
    ops = np.array([n << 4 | op for op, n in worst], np.uint32)
    md = _nm_md(np.full(13, 4, np.uint8), b"ACGT" * 10, 0, worst)[1]
    assert md == "0A0C0G0T0A0C0G0^TAC0^GT0A0C0G0T0A0"
    assert len(md) == _md_bound(0, ops, np.array([0, len(worst)], np.int64))


def test_records_identical_whatever_threads_and_batches(tmp_path):
    """The BAM's bytes depend on neither --threads nor --batch-size (nor the overlap)."""
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


def _as_if_on_the_gpu(monkeypatch) -> None:
    """The run resolves its backend to ``cuda`` and frees no GPU memory (a stand-in aligns)."""
    from readalign.bam import run as runner
    from readalign.runtime import backends

    monkeypatch.setattr(backends, "resolve", lambda name: "cuda")
    monkeypatch.setattr(runner, "_free_gpu_memory", lambda name: None)


@pytest.mark.parametrize(("backend", "threads", "loop", "want"),
                         [("cpu", 2, 1, 2), ("cuda", 2, 1, 1), ("cuda", 1, 2, 1)])
def test_the_align_loop_keeps_every_thread_only_for_the_cpu_kernel(tmp_path, monkeypatch,
                                                                    backend, threads, loop, want):
    """The calling thread runs the CPU kernel on all the run's threads; while the GPU runs the
    kernels it only keeps books, on ``GPU_LOOP_THREADS`` (never more than the run's
    ``--threads``); afterwards the caller's count is back. (The GPU is stood in for: only the
    backend's name matters here.)"""
    import numba

    from benchmarks._standin import ungapped_aligner
    from readalign.bam import run as runner

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs numba's pool of 2+")
    monkeypatch.setattr(runner, "GPU_LOOP_THREADS", loop)
    if backend == "cuda":
        _as_if_on_the_gpu(monkeypatch)
    fa, reads, cands, _n = simulate(str(tmp_path), 3_000, 100_000, seed=9)
    standin = ungapped_aligner(DEFAULT_PAD)
    seen = []

    def aligner(q, t, job, where, n):
        seen.append(numba.get_num_threads())
        return standin(q, t, job, where, n)

    before = numba.get_num_threads()
    opts = Options(reference=fa, reads=reads, candidates=cands, output=str(tmp_path / "o.bam"),
                   backend="cpu", threads=threads, batch_size=1_000, scoring=EDIT)
    run(opts, aligner=aligner)
    assert seen == [want] * 3
    assert numba.get_num_threads() == before


@pytest.mark.parametrize(("backend", "threads", "want"),
                         [("cpu", 16, 16), ("cuda", 16, 8), ("cuda", 6, 4), ("cuda", 2, 2)])
def test_stages_take_half_the_threads_while_the_gpu_aligns(tmp_path, monkeypatch, backend,
                                                          threads, want):
    """Each stage thread's parallel regions: half of ``--threads`` (at least 4) beside the GPU,
    all of them beside the CPU kernel. (The GPU is stood in for, as above.)"""
    from benchmarks._standin import ungapped_aligner
    from readalign.bam import run as runner

    if backend == "cuda":
        _as_if_on_the_gpu(monkeypatch)
    asked = {}
    real_prefetch, real_consumer = runner.prefetch, runner.Consumer

    def prefetch(items, n, depth=1, name="readalign-reader"):
        asked[name] = n
        return real_prefetch(items, n, depth=depth, name=name)

    def consumer(fn, n, depth=2, name="readalign-writer"):
        asked[name] = n
        return real_consumer(fn, n, depth, name=name)
    monkeypatch.setattr(runner, "prefetch", prefetch)
    monkeypatch.setattr(runner, "Consumer", consumer)
    fa, reads, cands, _n = simulate(str(tmp_path), 500, 50_000, seed=4)
    opts = Options(reference=fa, reads=reads, candidates=cands, output=str(tmp_path / "o.bam"),
                   backend="cpu", threads=threads, batch_size=200, scoring=EDIT)
    run(opts, aligner=ungapped_aligner(DEFAULT_PAD))
    names = {"readalign-candidates", "readalign-read", "readalign-pairs", "readalign-assemble",
             "readalign-write"}
    assert set(asked) == names and set(asked.values()) == {want}


def test_compile_time_is_named_and_left_out_of_the_stages_and_the_speed(tmp_path):
    """A first run on a machine compiles inside whichever stage first calls each function: the
    summary counts that apart. Here the kernel stage stands in for numba compiling a kernel on
    each of its three batches (at least 0.3 s each, so every bound holds however busy the
    machine is)."""
    from readalign.kernels.compile_notice import counted_as_compiling

    from benchmarks._standin import ungapped_aligner

    fa, reads, cands, _n = simulate(str(tmp_path), 500, 50_000, seed=4)
    standin = ungapped_aligner(DEFAULT_PAD)

    def compiling_aligner(q, t, job, where, n):
        with counted_as_compiling():
            time.sleep(0.3)
        return standin(q, t, job, where, n)

    opts = Options(reference=fa, reads=reads, candidates=cands, output=str(tmp_path / "o.bam"),
                   backend="cpu", threads=1, batch_size=200, scoring=EDIT,
                   summary_json=str(tmp_path / "s.json"))
    cold = run(opts, aligner=compiling_aligner)
    assert cold.compile_seconds >= 0.9
    assert cold.stage_seconds["align"] <= cold.seconds - 0.9 + 1e-3
    assert cold.reads_per_second == pytest.approx(cold.reads_in / (cold.seconds - cold.compile_seconds))
    assert (f"{cold.seconds:.2f}s, {cold.compile_seconds:.2f}s of it compiling the kernels for this "
            "machine (once: later runs load them) (") in cold.text()
    assert " reads/s without the compiling; stages without it: read " in cold.text()
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["compile_seconds"] == cold.compile_seconds
    warm = run(replace(opts, output=str(tmp_path / "w.bam"), summary_json=None), aligner=standin)
    assert warm.compile_seconds == 0 and "compiling" not in warm.text()
    assert warm.reads_per_second == pytest.approx(warm.reads_in / warm.seconds)
