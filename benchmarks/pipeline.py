"""End-to-end benchmark of `readalign align`: files in, finished BAM out, time per stage.

Simulates N reads of 150 bp from a random genome (0.5% substitutions, some
1-base indels), each with 1-3 candidates (its true locus first or among
decoys, random strands for decoys), written as FASTQ + PAF in read order.
Then runs the whole pipeline and prints a table.

    python -m benchmarks.pipeline --reads 2000000 --backend cuda --json bench.json
    python -m benchmarks.pipeline --reads 2000000 --skip-align   # everything but the kernel
    python -m benchmarks.pipeline --reads 2000000 --presets sr,edit,unit --runs 3
    python -m benchmarks.pipeline --reads 2000000 --backend cuda --runs 9 --alternate loop-threads=16,2
    python -m benchmarks.pipeline --reads 2000000 --runs 3 --read-stage-alone
    python -m benchmarks.pipeline --reads 2000000 --backend cuda --runs 3 --gzip   # gzip inputs

``--presets`` times the scoring presets one after another on the same files and
prints their reads/s side by side: ``sr`` (the default), ``edit``, and ``unit``,
the edit preset's selection on the unit-cost edit-distance kernel that the
pipeline ran before it scored (no tie rules: the speed it had).

``--alternate`` changes one setting run by run (``benchmarks/_knobs.py``): machines
of one kind differ in host speed by up to 2x, so settings are compared in one process.
``--read-stage-alone`` times the read stage with no other stage running, to tell its
own cost from what the other stages cost it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from tests.support.simulate import READ_LEN, simulate

from . import _knobs
from ._host import device_name, host_line
from ._provenance import provenance
from ._stack_sampler import StackSampler
from ._standin import ungapped_aligner


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reads", type=int, default=100_000)
    ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch-size", type=int, default=None,
                    help="reads per batch (default: readalign align's default)")
    ap.add_argument("--sweep-batch", default=None, metavar="B1,B2,...",
                    help="time these batch sizes in turn over the same data (--runs each)")
    ap.add_argument("--genome", type=int, default=5_000_000, help="random genome length")
    ap.add_argument("--max-distance", type=int, default=None)
    ap.add_argument("--compression-level", type=int, default=None,
                    help="BGZF level 0-9 (default: readalign align's default)")
    ap.add_argument("--bgzf-writer", default="auto", choices=("auto", "isal", "htslib"),
                    help="what compresses the BAM (readalign align --bgzf-writer)")
    ap.add_argument("--sort", action="store_true")
    ap.add_argument("--secondary", action="store_true")
    ap.add_argument("--presets", default="sr", metavar="P1,P2,...",
                    help="scoring presets to time in turn: sr, edit, unit (default: sr)")
    ap.add_argument("--skip-align", action="store_true",
                    help="replace the kernel by an ungapped stand-in: times every other stage")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--runs", type=int, default=1,
                    help="timed runs in this process; the table shows the last (default 1). 0: "
                         "none and no warm-up, so the first --cli run meets numba's disk cache as it is")
    ap.add_argument("--cli", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="also time the command line N times (default 1) on the same files: a new "
                         "process each, startup and numba's disk cache included")
    ap.add_argument("--cli-profile", default=None, metavar="FILE",
                    help="run the last --cli process under cProfile, write its stats to FILE "
                         "and print where it spent its time")
    ap.add_argument("--sample", action="store_true",
                    help="sample every thread's stack during the last run and print where they were")
    ap.add_argument("--alternate", default=None, metavar="KNOB=V1,V2,...", type=_knobs.checked,
                    help="change one setting run by run, in turn (knobs: "
                         f"{', '.join(_knobs.KNOBS)}); --runs counts all runs; prints the "
                         "median of each value")
    ap.add_argument("--gzip", action="store_true",
                    help="give the pipeline the reads and candidates gzip-compressed (level 1), "
                         "as most users' reads are")
    ap.add_argument("--read-stage-alone", action="store_true",
                    help="also time the read stage (FASTQ and PAF parsed, candidates matched "
                         "to reads) with no other stage running, --runs times")
    ap.add_argument("-v", "--verbose", action="store_true", help="debug log of the engine's stages")
    return ap.parse_args()


def cpu_seconds() -> tuple[float, float]:
    """(user, system) CPU seconds of this process so far, all threads."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime, ru.ru_stime


def options(args: argparse.Namespace, d: str, ref: str, reads: str, paf: str):
    """``readalign align``'s options for these files and ``args`` (the BAM: ``d``/out.bam)."""
    from readalign import __version__
    from readalign.bam.options import Options, read_scoring

    return Options(reference=ref, reads=reads, candidates=paf, output=os.path.join(d, "out.bam"),
                   backend=args.backend, threads=args.threads, batch_size=args.batch_size,
                   max_distance=args.max_distance, sort=args.sort, secondary=args.secondary,
                   compression_level=args.compression_level, bgzf_writer=args.bgzf_writer,
                   version=__version__,
                   scoring=read_scoring("edit" if args.preset == "unit" else args.preset))


def run_once(args: argparse.Namespace, d: str, ref: str, reads: str, paf: str,
             sampler: StackSampler | None = None):
    """One pipeline run into ``d``/out.bam; returns (summary, wall s, (user, system) CPU s, BAM bytes)."""
    from readalign.bam.run import run

    preset = args.preset
    opts = options(args, d, ref, reads, paf)
    out = opts.output
    aligner = ungapped_aligner(opts.pad) if args.skip_align else None
    if preset == "unit" and aligner is None:
        aligner = unit_cost_aligner
    c, t = cpu_seconds(), time.perf_counter()
    with sampler or contextlib.nullcontext():
        s = run(opts, aligner)
    wall = time.perf_counter() - t
    user, system = cpu_seconds()
    return s, wall, (user - c[0], system - c[1]), os.path.getsize(out)


def unit_cost_aligner(q, t, job, backend: str, threads: int | None):
    """The kernel stage as before the scored presets: unit-cost infix edit distance."""
    from readalign.engine.batching import AUTO_K, align_with
    from readalign.engine.job import Job

    return align_with(q, t, Job(infix=True, max_distance=-1, n_code=job.n_code, eqx=job.eqx,
                                with_cigar=True, k=AUTO_K), backend, threads)


def warm_up(args: argparse.Namespace, d: str) -> None:
    """Compile everything (kernel and pipeline) on a tiny input, untimed.

    Small batches and a clipped window take the paths a large run meets: candidates
    that straddle batches, and a batch of unequal lengths that gets sorted.
    """
    w = os.path.join(d, f"warm-{args.preset}")
    os.mkdir(w)
    ref, reads, paf, _ = simulate(w, 2000, 100_000, 2, at_edge=True)
    run_once(argparse.Namespace(**{**vars(args), "batch_size": 500}), w, ref, reads, paf)


def gzip_files(*paths: str) -> list[str]:
    """Each file gzip-compressed at level 1 beside it; the new paths."""
    from isal import igzip_threaded

    out = []
    for path in paths:
        with open(path, "rb") as src, igzip_threaded.open(path + ".gz", "wb", compresslevel=1,
                                                          threads=os.cpu_count() or 1) as dst:
            while chunk := src.read(1 << 24):
                dst.write(chunk)
        out.append(path + ".gz")
    return out


def level_text(level: int | None) -> str:
    """The BGZF level as the table header states it."""
    from readalign.bam.defaults import DEFAULT_COMPRESSION

    return f"default ({DEFAULT_COMPRESSION})" if level is None else str(level)


def report(args: argparse.Namespace, s, wall: float, cpu: tuple[float, float], size: int, npairs: int,
           sim_s: float) -> dict:
    """Print the per-stage table; return the same numbers as a dict."""
    kernel = "stand-in (--skip-align)" if args.skip_align else s.backend
    host = host_line(args.threads)
    print(host)
    print(f"readalign align benchmark: {args.reads:,} reads x {READ_LEN} bp, {npairs:,} pairs, "
          f"kernel {kernel}, {args.threads} threads, batch {args.batch_size:,}, "
          f"compression level {level_text(args.compression_level)}, BGZF deflate {s.deflate} "
          f"(simulation {sim_s:.1f}s, not timed)")
    print("stage seconds are busy time in each stage's own thread; stages overlap, so they "
          "can sum to more than the total")
    print(f"{'stage':<10} {'seconds':>9} {'of total':>9} {'reads/s':>14}")
    rows = dict(s.stage_seconds)
    for k, v in rows.items():
        rate = args.reads / v if v > 0 else float("inf")
        print(f"{k:<10} {v:9.2f} {v / wall:9.1%} {rate:14,.0f}")
    print(f"{'total':<10} {wall:9.2f} {1:9.0%} {args.reads / wall:14,.0f}")
    import numba

    print(f"CPU {sum(cpu):.1f} s (user {cpu[0]:.1f} + system {cpu[1]:.1f}, all threads) = "
          f"{sum(cpu) / wall:.1f} of {os.cpu_count()} cores busy on average; numba threading "
          f"layer {numba.threading_layer()}")
    non_kernel = sum(v for k, v in rows.items() if k != "align")
    print(f"non-kernel stages summed (as if nothing overlapped): {non_kernel:.2f}s = "
          f"{args.reads / max(non_kernel, 1e-9):,.0f} reads/s")
    rec_s = s.records / max(rows["assemble"] + rows["write"], 1e-9)
    print(f"records {s.records:,} ({rec_s:,.0f} records/s assembled + compressed), "
          f"aligned {s.aligned:,}, unaligned {s.unaligned:,}, BAM {size / 1e6:.1f} MB")
    return {"reads": args.reads, "pairs": npairs, "kernel": kernel, "threads": args.threads,
            "batch_size": args.batch_size, "compression_level": args.compression_level,
            "deflate": s.deflate,
            "stage_seconds": rows, "total_seconds": wall,
            "reads_per_second": args.reads / wall, "cpu_user_seconds": cpu[0],
            "cpu_system_seconds": cpu[1],
            "non_kernel_seconds": non_kernel,
            "records": s.records, "bam_bytes": size, "cpu_count": os.cpu_count(), "host": host}


def time_cli(args: argparse.Namespace, d: str, ref: str, reads: str, paf: str,
             profile: str | None) -> dict:
    """Run ``python -m readalign align`` on the same files; print its wall time and stages,
    and return them (``wall_seconds``: the whole process; ``pipeline_seconds``: its summary's)."""
    out = os.path.join(d, "cli.bam")
    summary = os.path.join(d, "cli.json")
    cmd = [sys.executable, "-m", "readalign", "align", "-r", ref, "--reads", reads, "-c", paf,
           "-o", out, "--threads", str(args.threads), "--backend", args.backend, "--quiet",
           "--batch-size", str(args.batch_size), "--summary-json", summary]
    if args.compression_level is not None:
        cmd += ["--compression-level", str(args.compression_level)]
    cmd += ["--bgzf-writer", args.bgzf_writer]
    if profile:
        cmd[1:1] = ["-m", "cProfile", "-o", profile]
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t
    with open(summary) as fh:
        inside = json.load(fh)
    stages = ", ".join(f"{k} {v:.2f}" for k, v in inside["stage_seconds"].items())
    print(f"command line: {wall:.2f} s wall = {args.reads / wall:,.0f} reads/s; pipeline "
          f"{inside['seconds']:.2f} s = {args.reads / inside['seconds']:,.0f} reads/s "
          f"(stage seconds: {stages}); the rest is interpreter start, imports and argument "
          f"parsing", flush=True)
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    return {"wall_seconds": wall, "pipeline_seconds": inside["seconds"],
            "reads_per_second": args.reads / wall, "stage_seconds": inside["stage_seconds"]}


def compare(rates: dict[str, list[float]], stages: dict[str, dict[str, float]],
            label: str = "preset") -> None:
    """Median reads/s of each preset (or alternated value), each as a share of the first,
    and the last run's busy seconds per stage."""
    medians = {k: statistics.median(v) for k, v in rates.items()}
    first = next(iter(medians))
    names = list(next(iter(stages.values())))
    width = max(8, len(label), *(len(k) for k in medians))
    print(f"{label:<{width}} {'median reads/s':>15} {'runs':>5} {'vs ' + first:>9}  "
          + " ".join(f"{n:>8}" for n in names))
    for k, v in medians.items():
        busy = " ".join(f"{stages[k][n]:8.2f}" for n in names)
        print(f"{k:<{width}} {v:15,.0f} {len(rates[k]):5d} {v / medians[first]:9.2f}  {busy}")


def time_read_stage(args: argparse.Namespace, d: str, ref: str, reads: str, paf: str) -> None:
    """Time the pipeline's read stage alone: the candidates parsed on their own thread and
    matched to each batch of reads as ``readalign align`` does, nothing after them."""
    from readalign.bam.reading import RepeatedNames, read_stage
    from readalign.io.reference import Reference
    from readalign.runtime.stages import prefetch

    opts = options(args, d, ref, reads, paf)

    def ahead(items, name: str, depth: int = 1):
        return prefetch(items, opts.threads, depth=depth, name=f"readalign-{name}")

    genome = Reference(ref)
    try:
        for i in range(max(args.runs, 1)):
            t = time.perf_counter()
            busy = {"read": 0.0}
            for _item in read_stage(opts, genome, busy, RepeatedNames(), ahead):
                pass
            wall = time.perf_counter() - t
            print(f"read stage alone, run {i + 1}: {wall:.2f} s = {args.reads / wall:,.0f} "
                  f"reads/s (busy {busy['read']:.2f} s; batch {opts.batch_size:,}, "
                  f"{opts.threads} threads)", flush=True)
    finally:
        genome.close()


def batch_sizes(args: argparse.Namespace) -> list[int]:
    """The batch sizes to time: the sweep, or the one size asked for, or the default."""
    from readalign.bam.options import Options

    if args.sweep_batch:
        return [int(b) for b in args.sweep_batch.split(",")]
    return [args.batch_size or Options.batch_size]


def main() -> None:
    args = parse_args()
    started = provenance(__spec__.name)
    import readalign

    sizes = batch_sizes(args)
    args.batch_size = sizes[0]
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        if not args.skip_align and args.runs:  # compile the kernel in this process
            lengths = [30 + 7 * i for i in range(64)]  # varied: the sorting paths compile too
            readalign.align(["ACGT" * (n // 4) for n in lengths],
                            ["GACGT" * (n // 4) for n in lengths], backend=args.backend,
                            threads=args.threads)
        presets = args.presets.split(",")
        args.preset = presets[0]
        if args.runs:
            warm_up(args, d)
        t = time.perf_counter()
        ref, reads, paf, npairs = simulate(d, args.reads, args.genome, 1)
        if args.gzip:
            reads, paf = gzip_files(reads, paf)
        sim_s = time.perf_counter() - t
        if args.verbose:
            import logging

            logging.basicConfig(level=logging.DEBUG, format="%(message)s")
            logging.getLogger("numba").setLevel(logging.WARNING)
        knob, values = _knobs.parse(args.alternate) if args.alternate else (None, [None])
        rates: dict[str, list[float]] = {}
        stages: dict[str, dict[str, float]] = {}
        by_value: dict[str, list[float]] = {}
        value_stages: dict[str, dict[str, float]] = {}
        for args.preset in presets:
            if args.runs and args.preset != presets[0]:
                warm_up(args, d)
            for args.batch_size in sizes:
                for i in range(args.runs):
                    last = i == args.runs - 1 and args.batch_size == sizes[-1]
                    sampler = StackSampler() if args.sample and last else None
                    value = values[i % len(values)]
                    with _knobs.KNOBS[knob](value) if knob else contextlib.nullcontext():
                        s, wall, cpu, size = run_once(args, d, ref, reads, paf, sampler)
                    rates.setdefault(args.preset, []).append(args.reads / wall)
                    stages[args.preset] = s.stage_seconds
                    setting = ""
                    if knob:
                        setting = f" [{knob} {value}]"
                        by_value.setdefault(value, []).append(args.reads / wall)
                        value_stages[value] = s.stage_seconds
                    print(f"{args.preset} batch {args.batch_size:,} run {i + 1}{setting}: "
                          f"{wall:.2f} s, {args.reads / wall:,.0f} reads/s, CPU {cpu[0]:.1f} "
                          f"user + {cpu[1]:.1f} system s ({sum(cpu) / wall:.1f} cores)",
                          flush=True)
        if len(presets) > 1 and args.runs:
            compare(rates, stages)
        if knob and args.runs:
            compare(by_value, value_stages, knob)
        if args.read_stage_alone:
            time_read_stage(args, d, ref, reads, paf)
        cli = [time_cli(args, d, ref, reads, paf, args.cli_profile if i == args.cli - 1 else None)
               for i in range(args.cli)]
    result = {**started, "device": device_name(args.backend), "reads": args.reads,
              "cli": cli}
    if args.runs:
        result.update(report(args, s, wall, cpu, size, npairs, sim_s))
        result["runs_reads_per_second"] = rates
        if sampler is not None:
            sampler.report(top=60)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
            fh.write("\n")


if __name__ == "__main__":
    main()
