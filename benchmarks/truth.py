"""Truth benchmark: readalign, bwa mem and minimap2 on simulated reads of a real genome with known answers.

Takes the E. coli 536 genome that Debian's ``bowtie-examples`` ships (NC_008253, circular,
4.94 Mb; contig renamed ``NC_008253.1``), simulates haploid single-end 150 bp reads with known
SNPs and indels with ``dwgsim`` (wgsim's descendant, which writes its mutations as a VCF,
``.mutations.vcf``, where wgsim prints a table of its own; fixed seed), and builds three read
sets:

* ``plain``: the dwgsim reads;
* ``adapter``: the same reads, 10% of them with their last 20-40 bases replaced by the start
  of the Illumina adapter (length and quality string unchanged);
* ``contig-end``: a few thousand reads that span the circular contig's end.

Every read's name says where it comes from (dwgsim's name, ``_ad<N>`` when N adapter bases
were put in, or ``<contig>_cend_<start>_<x>_<strand>_<i>``). Each set is aligned by every
readalign run (candidates from ``minimap2 -x sr``, PAF), by ``bwa mem`` and by ``minimap2 -ax
sr``; each BAM is scored for placement (leftmost aligned base within 20 bp of the truth),
variant calls (``bcftools mpileup | call -mv --ploidy 1``, normalised, against the truth
VCF; plain and adapter sets) and alignment ends that score better soft-clipped (BWA scoring:
match +1, mismatch -4, gap 6 + length, clip penalty 5). One markdown table goes to stdout and
DIR/truth.md, every number to DIR/truth.json, progress with timings to stderr.

    python -m benchmarks.truth --out DIR [--coverage 30] [--threads N] \\
        [--readalign-runs 'sr:--preset sr' 'edit:--preset edit'] [--quick]

``--quick`` takes the genome's first 500 kb as its own contig at 3x coverage (a couple of
minutes). Needs samtools, bcftools, minimap2, bwa and dwgsim on PATH.
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from ._host import device_name
from ._provenance import provenance

GENOME_GZ = Path("/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz")
CONTIG = "NC_008253.1"
QUICK_LEN = 500_000
READ_LEN = 150
ADAPTER = "AGATCGGAAGAGCACACGTCTGAACTCCAGTCACNNNNNNATCTCGTATGCCGTCTTCTGCTTG"
TOOLS = ("samtools", "bcftools", "minimap2", "bwa", "dwgsim")
DEFAULT_RUNS = ("sr:--preset sr", "edit:--preset edit")
SETS = ("plain", "adapter", "contig-end")
CALLED_SETS = ("plain", "adapter")
TOLERANCE = 20
"""A read is placed right when its leftmost aligned base is this close to the truth."""
HIGH_MAPQ = 30
MAPQ_BINS = ((0, 0), (1, 9), (10, 19), (20, 29), (30, 39), (40, 59), (60, 255))
"""MAPQ ranges of the calibration table (reads and misplaced reads per range)."""

MATCH, MISMATCH, GAP_OPEN, GAP_EXTEND, CLIP_PENALTY = 1, -4, 6, 1, 5
"""BWA-MEM's scoring: a gap of length n costs GAP_OPEN + n * GAP_EXTEND."""

_COMP = str.maketrans("ACGTN", "TGCAN")
_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Progress line on stderr, with the seconds since start."""
    print(f"[truth {time.perf_counter() - _T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def revcomp(seq: str) -> str:
    """Reverse complement of an ACGTN string."""
    return seq.translate(_COMP)[::-1]


# ---------------------------------------------------------------- read origins

_DWGSIM_NAME = re.compile(
    r"^(?P<contig>.+)_(?P<pos>\d+)_\d+_(?P<strand>[01])_[01]_(?P<random>[01])_[01]"
    r"_\d+:\d+:\d+_\d+:\d+:\d+_[0-9a-f]+(?:_ad(?P<adapter>\d+))?(?:/[12])?$")
_CEND_NAME = re.compile(r"^(?P<contig>.+)_cend_(?P<start>\d+)_(?P<x>\d+)_(?P<strand>[01])_\d+$")


@dataclass(frozen=True)
class Origin:
    """Where a read truly comes from: its contig and every 0-based leftmost aligned base that is right."""

    contig: str
    starts: tuple[int, ...]
    reverse: bool
    adapter: int = 0
    """Adapter bases that replace the read's 3' end."""


def parse_origin(name: str) -> Origin | None:
    """The origin that a read name encodes, or None for a name of neither form (or a random read).

    dwgsim names are ``<contig>_<pos1>_<pos2>_<strand1>_<strand2>_<random1>_<random2>_
    <err:snp:indel>_<err:snp:indel>_<hex index>[/1]``: pos1 is the read's 1-based leftmost base,
    strand 1 means the read is the reverse complement. An ``_ad<N>`` suffix marks N adapter
    bases at the 3' end; on the reverse strand they cover the leftmost reference bases, so the
    true start moves right by N. Contig-end reads (``<contig>_cend_<start>_<x>_<strand>_<i>``)
    are right at ``start`` (the contig's last x bases) or at 0 (the rest, from the start).
    """
    m = _DWGSIM_NAME.match(name)
    if m:
        if m["random"] == "1":
            return None
        reverse = m["strand"] == "1"
        adapter = int(m["adapter"] or 0)
        start = int(m["pos"]) - 1 + (adapter if reverse else 0)
        return Origin(m["contig"], (start,), reverse, adapter)
    m = _CEND_NAME.match(name)
    if m:
        return Origin(m["contig"], (int(m["start"]), 0), m["strand"] == "1")
    return None


def is_placed(origin: Origin | None, contig: str, start: int, tolerance: int = TOLERANCE) -> bool:
    """Whether an alignment starting at 0-based ``start`` on ``contig`` is within tolerance of the truth."""
    return (origin is not None and contig == origin.contig
            and any(abs(start - s) <= tolerance for s in origin.starts))


# ---------------------------------------------------------------- variant comparison


class Variant(NamedTuple):
    """One normalised, biallelic VCF record."""

    chrom: str
    pos: int
    ref: str
    alt: str

    @property
    def kind(self) -> str:
        """'snp', 'ins', 'del', or 'mnp' (equal lengths above 1)."""
        if len(self.ref) == len(self.alt):
            return "snp" if len(self.ref) == 1 else "mnp"
        return "ins" if len(self.alt) > len(self.ref) else "del"

    @property
    def indel_key(self) -> tuple[str, int, str, int]:
        """(chrom, pos, type, length): how indels are matched."""
        return self.chrom, self.pos, self.kind, abs(len(self.alt) - len(self.ref))


def parse_vcf(lines: Iterable[str], min_qual: float | None = None) -> list[Variant]:
    """Records of VCF text, one per ALT allele; records with QUAL below ``min_qual`` are dropped
    (QUAL '.' is kept). Symbolic and '*' alleles are skipped."""
    out = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        chrom, pos, _id, ref, alts, qual = line.split("\t", 6)[:6]
        if min_qual is not None and qual != "." and float(qual) < min_qual:
            continue
        for alt in alts.split(","):
            if alt not in (".", "*") and not alt.startswith("<"):
                out.append(Variant(chrom, int(pos), ref.upper(), alt.upper()))
    return out


def split_variants(variants: Iterable[Variant]) -> tuple[set[Variant], list[Variant]]:
    """SNPs (MNPs split into their differing bases) and indels."""
    snps, indels = set(), []
    for v in variants:
        if v.kind in ("snp", "mnp"):
            snps.update(Variant(v.chrom, v.pos + i, r, a)
                        for i, (r, a) in enumerate(zip(v.ref, v.alt)) if r != a)
        else:
            indels.append(v)
    return snps, indels


@dataclass
class Counts:
    """True and false positives and false negatives, with the usual ratios."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict:
        """Counts and ratios."""
        return {**asdict(self), "precision": self.precision, "recall": self.recall, "f1": self.f1}


def compare_snps(truth: set[Variant], calls: set[Variant]) -> Counts:
    """SNPs match on (chrom, pos, ref, alt)."""
    tp = len(truth & calls)
    return Counts(tp, len(calls) - tp, len(truth) - tp)


def compare_indels(truth: Sequence[Variant], calls: Sequence[Variant], window: int = 5) -> tuple[Counts, int]:
    """Indels match exactly on (chrom, pos, type, length); also the loose count: calls matched one
    to one with a truth indel of the same type and length within ``window`` bp (nearest first)."""
    truth_keys = {v.indel_key for v in truth}
    call_keys = {v.indel_key for v in calls}
    tp = len(truth_keys & call_keys)
    exact = Counts(tp, len(call_keys) - tp, len(truth_keys) - tp)
    buckets: dict[tuple[str, str, int], list[int]] = {}
    for chrom, pos, kind, length in sorted(truth_keys):
        buckets.setdefault((chrom, kind, length), []).append(pos)
    used: set[tuple[str, int, str, int]] = set()
    loose = 0
    for chrom, pos, kind, length in sorted(call_keys):
        positions = buckets.get((chrom, kind, length), [])
        lo, hi = bisect.bisect_left(positions, pos - window), bisect.bisect_right(positions, pos + window)
        free = [p for p in positions[lo:hi] if (chrom, p, kind, length) not in used]
        if free:
            used.add((chrom, min(free, key=lambda p: abs(p - pos)), kind, length))
            loose += 1
    return exact, loose


# ---------------------------------------------------------------- alignment ends

_ALIGNED, _INS, _DEL, _SKIP, _SOFT = (0, 7, 8), 1, 2, 3, 4


class TailScores(NamedTuple):
    """Lowest score of a prefix and of a suffix of an alignment's aligned part, and its edits (NM)."""

    prefix_min: int
    suffix_min: int
    edits: int


def tail_scores(cigar: Sequence[tuple[int, int]], query: str, ref: str, ref_start: int) -> TailScores:
    """Score every prefix and suffix of the aligned part (soft clips excluded) under BWA scoring.

    ``cigar`` is pysam's list of (op, length); ``query`` the stored read sequence (reference
    orientation); ``ref`` the contig's sequence; ``ref_start`` the 0-based first aligned base.
    A gap counts whole (GAP_OPEN + n) in a prefix or suffix that takes it. N is a mismatch.
    """
    qi, ri = 0, ref_start
    score, edits = 0, 0
    lo, hi = None, 0  # lo: min over prefixes P_1..P_n; hi: max over P_0..P_{n-1}
    for op, n in cigar:
        if op in _ALIGNED:
            q, r = query[qi:qi + n], ref[ri:ri + n]
            if q == r:
                lo = score + MATCH if lo is None else min(lo, score + MATCH)
                hi = max(hi, score + (n - 1) * MATCH)
                score += n * MATCH
            else:
                for a, b in zip(q, r):
                    hi = max(hi, score)
                    if a == b and a != "N":
                        score += MATCH
                    else:
                        score += MISMATCH
                        edits += 1
                    lo = score if lo is None else min(lo, score)
            qi, ri = qi + n, ri + n
        elif op in (_INS, _DEL):
            hi = max(hi, score)
            score -= GAP_OPEN + n * GAP_EXTEND
            lo = score if lo is None else min(lo, score)
            edits += n
            qi, ri = (qi + n, ri) if op == _INS else (qi, ri + n)
        elif op == _SOFT:
            qi += n
        elif op == _SKIP:
            ri += n
    if lo is None:
        return TailScores(0, 0, 0)
    return TailScores(lo, score - hi, edits)


def should_clip(scores: TailScores, penalty: int = CLIP_PENALTY) -> bool:
    """Whether an end of the aligned part scores below -penalty, i.e. would score better soft-clipped."""
    return min(scores.prefix_min, scores.suffix_min) < -penalty


# ---------------------------------------------------------------- BAM scoring


@dataclass
class BamStats:
    """What one pass over a BAM's primary records finds."""

    reads: int = 0
    unmapped: int = 0
    placed: int = 0
    high_mapq: int = 0
    high_mapq_misplaced: int = 0
    low_mapq: int = 0
    low_mapq_misplaced: int = 0
    no_origin: int = 0
    tails_to_clip: int = 0
    adapter_reads_mapped: int = 0
    adapter_edits: int = 0
    mean_nm_adapter_reads: float | None = None
    mapq_bins: list = field(default_factory=lambda: [[0, 0] for _ in MAPQ_BINS])
    """[reads, misplaced] per range of :data:`MAPQ_BINS`."""

    @property
    def placed_pct(self) -> float:
        return 100 * self.placed / self.reads if self.reads else 0.0


def mapq_bin(mapq: int) -> int:
    """Index of the :data:`MAPQ_BINS` range holding ``mapq``."""
    return next(i for i, (lo, hi) in enumerate(MAPQ_BINS) if lo <= mapq <= hi)


def score_bam(bam_path: Path, genome: dict[str, str]) -> BamStats:
    """Placement, MAPQ split, ends that should be clipped and adapter reads' NM, from primary records."""
    import pysam

    st = BamStats()
    with pysam.AlignmentFile(str(bam_path), "rb") as bam:
        for rec in bam.fetch(until_eof=True):
            if rec.is_secondary or rec.is_supplementary:
                continue
            st.reads += 1
            origin = parse_origin(rec.query_name)
            st.no_origin += origin is None
            if rec.is_unmapped:
                st.unmapped += 1
                continue
            ok = is_placed(origin, rec.reference_name, rec.reference_start)
            st.placed += ok
            tally = st.mapq_bins[mapq_bin(rec.mapping_quality)]
            tally[0] += 1
            tally[1] += not ok
            if rec.mapping_quality >= HIGH_MAPQ:
                st.high_mapq += 1
                st.high_mapq_misplaced += not ok
            else:
                st.low_mapq += 1
                st.low_mapq_misplaced += not ok
            if rec.query_sequence is None:
                continue
            scores = tail_scores(rec.cigartuples, rec.query_sequence, genome[rec.reference_name],
                                 rec.reference_start)
            st.tails_to_clip += should_clip(scores)
            if origin is not None and origin.adapter:
                st.adapter_reads_mapped += 1
                st.adapter_edits += scores.edits
    if st.adapter_reads_mapped:
        st.mean_nm_adapter_reads = st.adapter_edits / st.adapter_reads_mapped
    return st


# ---------------------------------------------------------------- running tools


class StepError(RuntimeError):
    """A command of a step failed; the message is its log's last line."""


def run_pipeline(cmds: Sequence[Sequence[str]], log_path: Path, stdout: Path | None = None) -> list[float]:
    """Run ``cmds`` piped one into the next (stderr to ``log_path``, the last one's stdout to
    ``stdout``); return each one's seconds from start to exit. Raises StepError if any fails."""
    t0 = time.perf_counter()
    procs, times = [], []
    with open(log_path, "ab") as err, open(stdout or os.devnull, "wb") as out:
        err.write(f"$ {' | '.join(shlex.join(c) for c in cmds)}\n".encode())
        err.flush()
        prev = None
        for i, cmd in enumerate(cmds):
            last = i == len(cmds) - 1
            p = subprocess.Popen(list(cmd), stdin=prev.stdout if prev else subprocess.DEVNULL,
                                 stdout=out if last else subprocess.PIPE, stderr=err)
            if prev:
                prev.stdout.close()
            procs.append(p)
            prev = p
        for p in procs:
            p.wait()
            times.append(time.perf_counter() - t0)
    codes = [p.returncode for p in procs if p.returncode != 0]
    if codes:
        lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
        raise StepError(f"exit {codes[0]}: {lines[-1] if lines else 'no message'}")
    return times


def run(cmd: Sequence[str], log_path: Path, stdout: Path | None = None) -> float:
    """One command (see run_pipeline); its seconds."""
    return run_pipeline([cmd], log_path, stdout)[0]


def tool_version(tool: str) -> str:
    """The first line that names a version in the tool's own report of it."""
    args = {"bwa": [], "dwgsim": ["-h"], "minimap2": ["--version"]}.get(tool, ["--version"])
    p = subprocess.run([tool, *args], capture_output=True, text=True, errors="replace")
    lines = [ln.strip() for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    named = [ln for ln in lines if ln.startswith("Version")]
    return (named or lines or ["unknown"])[0]


# ---------------------------------------------------------------- inputs


def read_fasta(path: Path) -> dict[str, str]:
    """Contig name (first word) to upper-case sequence."""
    seqs: dict[str, list[str]] = {}
    name = None
    with open(path) as fh:
        for line in fh:
            if line.startswith(">"):
                name = line[1:].split()[0]
                seqs[name] = []
            elif name is not None:
                seqs[name].append(line.strip().upper())
    return {k: "".join(v) for k, v in seqs.items()}


def write_fasta(path: Path, seqs: dict[str, str], width: int = 70) -> None:
    """Write contigs at ``width`` bases a line."""
    with open(path, "w") as fh:
        for name, seq in seqs.items():
            fh.write(f">{name}\n")
            fh.writelines(seq[i:i + width] + "\n" for i in range(0, len(seq), width))


def prepare_reference(out: Path, quick: bool) -> tuple[Path, dict[str, str]]:
    """DIR/ref.fa (the genome, or its first 500 kb with --quick) with its .fai; and its sequences."""
    if not GENOME_GZ.exists():
        sys.exit(f"error: {GENOME_GZ} is missing: apt-get install bowtie-examples")
    with gzip.open(GENOME_GZ, "rt") as fh:
        seq = "".join(line.strip().upper() for line in fh if not line.startswith(">"))
    genome = {f"{CONTIG}_first500k": seq[:QUICK_LEN]} if quick else {CONTIG: seq}
    ref = out / "ref.fa"
    write_fasta(ref, genome)
    run(["samtools", "faidx", str(ref)], out / "logs" / "reference.log")
    return ref, genome


def simulate(ref: Path, out: Path, coverage: float, seed: int, args: argparse.Namespace) -> tuple[Path, Path]:
    """Run dwgsim; return its single-end reads (FASTQ.gz) and truth VCF."""
    prefix = out / "sim" / "dwgsim"
    prefix.parent.mkdir(exist_ok=True)
    cmd = ["dwgsim", "-H", "-r", str(args.mutation_rate), "-R", str(args.indel_fraction),
           "-X", str(args.indel_extend), "-e", str(args.error_rate), "-y", "0", "-1", str(READ_LEN),
           "-2", "0", "-C", str(coverage), "-z", str(seed), "-o", "1", str(ref), str(prefix)]
    run(cmd, out / "logs" / "dwgsim.log")
    return Path(f"{prefix}.bwa.read1.fastq.gz"), Path(f"{prefix}.mutations.vcf")


def normalise_truth(vcf: Path, ref: Path, genome: dict[str, str], out: Path) -> Path:
    """dwgsim's VCF with contig lines from the reference, sorted, split, left-aligned, atomised."""
    fixed = out / "sim" / "truth.fixed.vcf"
    with open(vcf) as src, open(fixed, "w") as dst:
        lines = src.read().splitlines()
        header = [ln for ln in lines if ln.startswith("##") and not ln.startswith("##contig")]
        dst.write("\n".join(header or ["##fileformat=VCFv4.1"]) + "\n")
        dst.writelines(f"##contig=<ID={k},length={len(v)}>\n" for k, v in genome.items())
        dst.writelines(ln + "\n" for ln in lines if not ln.startswith("##"))
    norm = out / "truth.norm.vcf"
    run_pipeline([["bcftools", "sort", "-Ou", str(fixed)],
                  ["bcftools", "norm", "-f", str(ref), "-m", "-any", "-a", "-c", "w", "-Ov",
                   "-o", str(norm)]], out / "logs" / "truth_norm.log")
    return norm


def fastq_records(path: Path) -> Iterable[tuple[str, str, str]]:
    """(name without '/1', sequence, quality) of a plain or gzip FASTQ."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        while True:
            head = fh.readline()
            if not head:
                return
            seq, _, qual = fh.readline().strip(), fh.readline(), fh.readline().strip()
            name = head[1:].split()[0]
            yield name.removesuffix("/1").removesuffix("/2"), seq, qual


def add_substitutions(seq: str, rate: float, rng: random.Random) -> str:
    """Each base replaced by another one with probability ``rate``."""
    bases = list(seq)
    for i, b in enumerate(bases):
        if rng.random() < rate:
            bases[i] = rng.choice([c for c in "ACGT" if c != b])
    return "".join(bases)


def write_read_sets(sim_reads: Path, genome: dict[str, str], out: Path,
                    args: argparse.Namespace) -> dict[str, dict]:
    """DIR/reads/{plain,adapter,contig-end}.fq; each set's path and read counts."""
    d = out / "reads"
    d.mkdir(exist_ok=True)
    rng = random.Random(args.seed + 1)
    n = n_adapter = 0
    with open(d / "plain.fq", "w") as plain, open(d / "adapter.fq", "w") as adapt:
        for name, seq, qual in fastq_records(sim_reads):
            plain.write(f"@{name}\n{seq}\n+\n{qual}\n")
            n += 1
            if rng.random() < args.adapter_fraction:
                a = rng.randint(20, 40)
                name, seq = f"{name}_ad{a}", seq[:-a] + ADAPTER[:a]
                n_adapter += 1
            adapt.write(f"@{name}\n{seq}\n+\n{qual}\n")
    contig, seq = next(iter(genome.items()))
    length, n_end = len(seq), args.contig_end_reads
    with open(d / "contig-end.fq", "w") as fh:
        for i in range(n_end):
            x = rng.randint(20, 130)
            read, strand = seq[length - x:] + seq[:READ_LEN - x], rng.randint(0, 1)
            read = add_substitutions(revcomp(read) if strand else read, args.error_rate, rng)
            fh.write(f"@{contig}_cend_{length - x}_{x}_{strand}_{i}\n{read}\n+\n{'=' * READ_LEN}\n")
    return {"plain": {"path": d / "plain.fq", "reads": n},
            "adapter": {"path": d / "adapter.fq", "reads": n, "with_adapter": n_adapter},
            "contig-end": {"path": d / "contig-end.fq", "reads": n_end}}


# ---------------------------------------------------------------- aligners


@dataclass
class Aligner:
    """One row label and how to run it."""

    label: str
    kind: str  # "readalign", "bwa" or "minimap2"
    extra: list[str] = field(default_factory=list)


def parse_runs(specs: Sequence[str]) -> list[Aligner]:
    """'label:extra args' for each readalign run, then bwa mem and minimap2."""
    runs = []
    for spec in specs:
        label, _, extra = spec.partition(":")
        runs.append(Aligner(f"readalign {label or 'default'}", "readalign", shlex.split(extra)))
    return [*runs, Aligner("bwa mem", "bwa"), Aligner("minimap2 -ax sr", "minimap2")]


def align(al: Aligner, ref: Path, reads: Path, paf: Path, bam: Path, threads: int, logp: Path) -> dict:
    """Align, sort and index into ``bam``; return align_s and sort_s (aligner step timed alone)."""
    t = str(threads)
    sort = ["samtools", "sort", "-@", t, "-o", str(bam)]
    if al.kind == "readalign":
        raw = bam.with_suffix(".unsorted.bam")
        align_s = run([sys.executable, "-m", "readalign", "align", "-r", str(ref), "--reads", str(reads),
                       "-c", str(paf), "-o", str(raw), "--threads", t, "-q", *al.extra], logp)
        sort_s = run([*sort, str(raw)], logp)
        raw.unlink()
    else:
        cmd = (["bwa", "mem", "-t", t, str(ref), str(reads)] if al.kind == "bwa"
               else ["minimap2", "-ax", "sr", "-t", t, str(ref), str(reads)])
        align_s, total = run_pipeline([cmd, [*sort, "-"]], logp)
        sort_s = total - align_s
    sort_s += run(["samtools", "index", str(bam)], logp)
    return {"align_s": align_s, "sort_s": sort_s}


def call_variants(bam: Path, ref: Path, vcf: Path, logp: Path) -> float:
    """bcftools mpileup | call -mv --ploidy 1 | norm (split, left-align, atomise) into ``vcf``; seconds."""
    return run_pipeline([["bcftools", "mpileup", "-f", str(ref), "-a", "AD,DP", "-Ou", str(bam)],
                         ["bcftools", "call", "-mv", "--ploidy", "1", "-Ou"],
                         ["bcftools", "norm", "-f", str(ref), "-m", "-any", "-a", "-Ov", "-o", str(vcf)]],
                        logp)[-1]


def variant_metrics(calls_vcf: Path, truth: list[Variant], min_qual: float) -> dict:
    """SNP and indel counts of one call set against the truth."""
    with open(calls_vcf) as fh:
        calls = parse_vcf(fh, min_qual)
    t_snps, t_indels = split_variants(truth)
    c_snps, c_indels = split_variants(calls)
    exact, loose = compare_indels(t_indels, c_indels)
    return {"snp": compare_snps(t_snps, c_snps).as_dict(),
            "indel": {**exact.as_dict(), "loose_tp_within_5bp": loose}}


# ---------------------------------------------------------------- report


def _prf(m: dict | None) -> str:
    return f"{m['precision']:.3f}/{m['recall']:.3f}/{m['f1']:.3f}" if m else "-"


def markdown_table(rows: list[dict]) -> str:
    """One line per (run, read set)."""
    head = ["aligner / run", "read set", "reads/s", "reads/s incl. cands", "% placed ≤20 bp",
            "misplaced MAPQ≥30", "misplaced MAPQ<30", "unmapped", "SNP P/R/F1", "indel P/R/F1",
            "indel TP ±5 bp", "tails to clip", "adapter reads mean NM"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r:
            cells = [r["run"], r["set"], f"failed: {r['error']}"] + [""] * (len(head) - 3)
        else:
            b = r["bam"]
            with_cands = f"{r['reads_per_s_with_cands']:,.0f}" if "reads_per_s_with_cands" in r else "-"
            nm = b["mean_nm_adapter_reads"]
            cells = [r["run"], r["set"], f"{r['reads_per_s']:,.0f}", with_cands, f"{b['placed_pct']:.3f}",
                     f"{b['high_mapq_misplaced']:,}/{b['high_mapq']:,}",
                     f"{b['low_mapq_misplaced']:,}/{b['low_mapq']:,}", f"{b['unmapped']:,}",
                     _prf(r.get("snp")), _prf(r.get("indel")),
                     f"{r['indel']['loose_tp_within_5bp']:,}" if r.get("indel") else "-",
                     f"{b['tails_to_clip']:,}", f"{nm:.2f}" if nm is not None else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def calibration_table(rows: list[dict], read_set: str = "plain") -> str:
    """Misplaced share per MAPQ range of each aligner on one read set (MAPQ's promise:
    10^(-MAPQ/10))."""
    ranges = [f"{lo}" if lo == min(hi, 60) else f"{lo}-{hi}" for lo, hi in MAPQ_BINS]
    head = ["aligner / run"] + [f"MAPQ {r}" for r in ranges]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r or r["set"] != read_set:
            continue
        cells = [r["run"]] + [f"{bad:,}/{n:,}" + (f" ({bad / n:.1e})" if n else "")
                              for n, bad in r["bam"]["mapq_bins"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="work and result directory")
    ap.add_argument("--coverage", type=float, default=None, help="read coverage (default 30; 3 with --quick)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--readalign-runs", nargs="+", default=list(DEFAULT_RUNS), metavar="LABEL:ARGS",
                    help="readalign runs as label:extra-args (default: %(default)s); 'current:' runs "
                         "readalign align with no extra arguments")
    ap.add_argument("--quick", action="store_true", help="first 500 kb of the genome at 3x coverage")
    ap.add_argument("--min-qual", type=float, default=20, help="calls below this QUAL are ignored")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mutation-rate", type=float, default=0.0018, help="dwgsim -r")
    ap.add_argument("--indel-fraction", type=float, default=0.18, help="dwgsim -R")
    ap.add_argument("--indel-extend", type=float, default=0.3, help="dwgsim -X")
    ap.add_argument("--error-rate", type=float, default=0.0015, help="dwgsim -e (and the contig-end reads')")
    ap.add_argument("--adapter-fraction", type=float, default=0.10)
    ap.add_argument("--contig-end-reads", type=int, default=None, help="default 3000; 500 with --quick")
    args = ap.parse_args(argv)
    if args.coverage is None:
        args.coverage = 3.0 if args.quick else 30.0
    if args.contig_end_reads is None:
        args.contig_end_reads = 500 if args.quick else 3000
    return args


def check_tools() -> None:
    """Exit with one line if a tool is missing."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        sys.exit(f"error: not on PATH: {', '.join(missing)}")


def make_candidates(sets: dict[str, dict], ref: Path, threads: int, out: Path) -> None:
    """minimap2 -x sr PAF candidates for each read set (timed: cands_s)."""
    for name, s in sets.items():
        s["paf"] = out / "cands" / f"{name}.paf"
        s["paf"].parent.mkdir(exist_ok=True)
        s["cands_s"] = run(["minimap2", "-x", "sr", "-t", str(threads), str(ref), str(s["path"])],
                           out / "logs" / f"cands.{name}.log", s["paf"])
        log(f"candidates {name}: {s['cands_s']:.1f}s")


def align_all(aligners: list[Aligner], sets: dict[str, dict], ref: Path,
              args: argparse.Namespace) -> list[dict]:
    """Every aligner on every read set; one row each (with 'error' when it failed)."""
    rows = []
    for set_name, s in sets.items():
        for al in aligners:
            slug = re.sub(r"[^A-Za-z0-9]+", "_", al.label).strip("_")
            row = {"run": al.label, "set": set_name, "args": al.extra, "reads": s["reads"],
                   "bam_path": str(args.out / "bam" / f"{slug}.{set_name}.bam")}
            try:
                row.update(align(al, ref, s["path"], s["paf"], Path(row["bam_path"]), args.threads,
                                 args.out / "logs" / f"align.{slug}.{set_name}.log"))
            except StepError as e:
                row["error"] = str(e)[:200]
                log(f"{al.label} on {set_name}: FAILED: {row['error']}")
            else:
                row["reads_per_s"] = s["reads"] / row["align_s"]
                if al.kind == "readalign":
                    row["cands_s"] = s["cands_s"]
                    row["reads_per_s_with_cands"] = s["reads"] / (row["align_s"] + s["cands_s"])
                log(f"{al.label} on {set_name}: align {row['align_s']:.1f}s "
                    f"({row['reads_per_s']:,.0f} reads/s), sort+index {row['sort_s']:.1f}s")
            rows.append(row)
    return rows


def evaluate(rows: list[dict], ref: Path, genome: dict[str, str], truth: list[Variant],
             args: argparse.Namespace) -> None:
    """Variant calls (in background threads) and BAM scoring (here) for every row that aligned."""
    vdir = args.out / "vcf"
    vdir.mkdir(exist_ok=True)
    calls: dict[int, Future] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.threads - 1)) as pool:
        for i, r in enumerate(rows):
            if "error" not in r and r["set"] in CALLED_SETS:
                stem = Path(r["bam_path"]).name.removesuffix(".bam")
                r["vcf_path"] = str(vdir / f"{stem}.vcf")
                calls[i] = pool.submit(call_variants, Path(r["bam_path"]), ref, Path(r["vcf_path"]),
                                       args.out / "logs" / f"call.{stem}.log")
        for r in rows:
            if "error" not in r:
                t = time.perf_counter()
                st = score_bam(Path(r["bam_path"]), genome)
                r["bam"] = {**asdict(st), "placed_pct": st.placed_pct}
                log(f"scored {r['run']} on {r['set']}: {st.placed_pct:.3f}% placed, "
                    f"{st.tails_to_clip:,} tails to clip ({time.perf_counter() - t:.1f}s)")
        for i, fut in calls.items():
            r = rows[i]
            try:
                r["call_s"] = fut.result()
            except StepError as e:
                r["call_error"] = str(e)[:200]
                log(f"variant calling {r['run']} on {r['set']}: FAILED: {r['call_error']}")
                continue
            r.update(variant_metrics(Path(r["vcf_path"]), truth, args.min_qual))
            log(f"called {r['run']} on {r['set']} ({r['call_s']:.1f}s): SNP F1 {r['snp']['f1']:.4f}, "
                f"indel F1 {r['indel']['f1']:.4f}")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    check_tools()
    started = provenance(__spec__.name, sys.argv[1:] if argv is None else argv)
    out: Path = args.out
    (out / "logs").mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    t = time.perf_counter()
    ref, genome = prepare_reference(out, args.quick)
    sim_reads, sim_vcf = simulate(ref, out, args.coverage, args.seed, args)
    with open(normalise_truth(sim_vcf, ref, genome, out)) as fh:
        truth = parse_vcf(fh)
    t_snps, t_indels = split_variants(truth)
    sets = write_read_sets(sim_reads, genome, out, args)
    timings["simulate_s"] = time.perf_counter() - t
    log(f"simulated {sets['plain']['reads']:,} reads ({sets['adapter']['with_adapter']:,} with adapter), "
        f"{len(t_snps):,} SNPs and {len(t_indels):,} indels in truth ({timings['simulate_s']:.1f}s)")

    make_candidates(sets, ref, args.threads, out)
    timings["bwa_index_s"] = run(["bwa", "index", str(ref)], out / "logs" / "bwa_index.log")
    log(f"bwa index: {timings['bwa_index_s']:.1f}s")
    (out / "bam").mkdir(exist_ok=True)
    rows = align_all(parse_runs(args.readalign_runs), sets, ref, args)
    t = time.perf_counter()
    evaluate(rows, ref, genome, truth, args)
    timings["evaluate_s"] = time.perf_counter() - t
    timings["total_s"] = time.perf_counter() - _T0

    table = (markdown_table(rows) + "\n\nMisplaced / reads per MAPQ range (plain set):\n\n"
             + calibration_table(rows))
    print(table)
    (out / "truth.md").write_text(table + "\n")
    result = {
        **started,
        "device": device_name("auto"),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "genome": {k: len(v) for k, v in genome.items()},
        "truth": {"snps": len(t_snps), "indels": len(t_indels)},
        "read_sets": {k: {kk: str(vv) if isinstance(vv, Path) else vv for kk, vv in v.items()}
                      for k, v in sets.items()},
        "timings": timings,
        "tools": {t: tool_version(t) for t in TOOLS},
        "rows": rows,
    }
    (out / "truth.json").write_text(json.dumps(result, indent=1) + "\n")
    log(f"done in {timings['total_s']:.1f}s: {out / 'truth.md'}, {out / 'truth.json'}")


if __name__ == "__main__":
    main()
