# Settings and helpers of the example workflow (workflow/Snakefile includes this file).

import shutil

from readalign.errors import InputError
from readalign.io.candidates import detect_format
from readalign.io.read_count import estimate_reads
from readalign.io.reads import reads_format


OUT = config.get("outdir", "results")
NAME = config.get("name", "readalign")
READ_GROUP = (config.get("readalign") or {}).get("read_group") or (
    f"ID:{NAME}\\tSM:{NAME}\\tPL:ILLUMINA"
)
"""The read group of every chunk: the one configured, else one named for the sample (``name``)."""
DEFAULT_CHUNK_READS = 50_000_000
"""Reads per job when ``chunks`` is ``auto``: a new process's start-up (about 4 s on a GPU
host with a filled compile cache, benchmarks/RESULTS.md) stays under 10% of a job that
aligns at 1-1.5M reads/s."""


def chunk_count():
    """Alignment jobs: config key 'chunks', a number or ``auto`` (the default): the reads'
    estimated count over 'chunk_reads' (readalign.io.read_count.estimate_reads)."""
    chunks = str(config.get("chunks", "auto")).strip().lower()
    if chunks == "auto":
        per = int(config.get("chunk_reads", DEFAULT_CHUNK_READS))
        if per < 1:
            raise ValueError("config key 'chunk_reads' must be at least 1")
        try:
            reads = estimate_reads(config["reads"])
        except InputError as exc:
            raise ValueError(f"config key 'reads': {exc}") from None
        return max(1, -(-reads // per))
    if not chunks.isdigit() or int(chunks) < 1:
        raise ValueError(f"config key 'chunks' must be auto or at least 1, not {chunks!r}")
    return int(chunks)


CHUNKS = list(range(chunk_count()))


def use_minimap2():
    """Whether the upstream filter (minimap2) makes the candidates (config key 'upstream')."""
    mode = str(config.get("upstream", "auto")).lower()
    if mode == "auto":
        return shutil.which("minimap2") is not None
    if mode in ("true", "yes", "on", "minimap2"):
        return True
    if mode in ("false", "no", "off", "none"):
        return False
    raise ValueError(f"config key 'upstream' must be auto, true or false, not {mode!r}")


CHUNK_SUFFIX = {"fastq": "fq", "fasta": "fa", "sam": "sam", "bam": "bam", None: "fq"}
"""File name suffix of the read chunks by the reads' format (an empty reads file: empty chunks)."""


def reads_suffix(path):
    """File name suffix of the read chunks: the reads file's format, told by readalign from
    its content (scatter writes the chunks uncompressed, in that format)."""
    try:
        return CHUNK_SUFFIX[reads_format(path)]
    except InputError as exc:
        raise ValueError(f"config key 'reads': {exc}") from None


def candidates_suffix(path, fmt):
    """File name suffix of the candidate chunks: their format, by readalign's own rule."""
    try:
        return detect_format(path, None if fmt in (None, "", "auto") else fmt)
    except InputError as exc:
        raise ValueError(f"config key 'candidates': {exc} (or set 'candidates_format')") from None


USE_MINIMAP2 = use_minimap2()
if USE_MINIMAP2:
    CANDIDATES, CANDIDATES_FORMAT = f"{OUT}/upstream/minimap2.paf", "paf"
else:
    CANDIDATES = config["candidates"]
    CANDIDATES_FORMAT = config.get("candidates_format", "auto")
READS_EXT = reads_suffix(config["reads"])
CANDS_EXT = candidates_suffix(CANDIDATES, CANDIDATES_FORMAT)
CHUNK_READS = f"{OUT}/chunks/{{chunk}}.reads.{READS_EXT}"
CHUNK_CANDIDATES = f"{OUT}/chunks/{{chunk}}.candidates.{CANDS_EXT}"
CHUNK_BAM = f"{OUT}/aligned/{{chunk}}.bam"
