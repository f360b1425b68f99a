# Configuration and helpers of the readalign rule module (workflow/rules/readalign.smk),
# which includes this file; workflow/README.md documents the config keys.

import os
import re
import shlex


READALIGN_DEFAULTS = {
    "reference": None,        # reference FASTA (required)
    "reads": None,            # FASTQ/FASTA[.gz] or unaligned BAM (required; wildcards allowed)
    "candidates": None,       # PAF, TSV, SAM or BAM (required; wildcards allowed)
    "candidates_format": "auto",  # auto (from the extension), paf, tsv, sam or bam
    "output": "results/readalign/{sample}.bam",
    "log_dir": "logs/readalign",
    "benchmark_dir": "benchmarks/readalign",
    "pad": None,              # window padding; None: readalign's default
    "max_distance": None,     # largest edit distance reported; None: readalign's default
    "scoring": None,          # a preset name, or a mapping of SCORING_OPTIONS; None: sr
    "secondary": False,       # also write the other candidates as secondary records
    "eqx": False,             # =/X CIGAR operations instead of M
    "sort": False,            # coordinate-sort (and index) each output
    "allow_empty": False,     # empty reads/candidates files give a header-only BAM
    "read_group": None,       # @RG line without the "@RG\t", e.g. "ID:s1\tSM:s1"
    "backend": "auto",        # auto, cpu or cuda
    "extra": "",              # further `readalign align` arguments, verbatim
    "index_reference": True,  # provide the rule that writes <reference>.fai
    "warmup": True,           # compile the kernels once (readalign warmup) before the align jobs
    "threads": 4,
    "gpu": 1,                 # GPUs per job (the `gpu` resource); 0 for CPU-only jobs
    "gpu_model": None,        # e.g. "a100": the SLURM executor then asks for that model
    "mem_mb": 4000,
    "runtime": 60,            # minutes
}

READALIGN_SCORING_OPTIONS = {
    "preset": "--preset", "match": "-A", "mismatch": "-B", "gap_open": "-O",
    "gap_extend": "-E", "clip_penalty": "-L", "min_score": "-T",
}
"""Keys of the ``scoring`` mapping and the `readalign align` options they set."""

_readalign_unknown = set(config.get("readalign", {})) - set(READALIGN_DEFAULTS)
if _readalign_unknown:
    _readalign_names = ", ".join(sorted(_readalign_unknown))
    raise ValueError(f"readalign module: unknown config keys under 'readalign': {_readalign_names}")

READALIGN_CONFIG = {**READALIGN_DEFAULTS, **config.get("readalign", {})}

for _readalign_key in ("reference", "reads", "candidates"):
    if not READALIGN_CONFIG[_readalign_key]:
        raise ValueError(f"readalign module: set config key readalign.{_readalign_key} "
                         "(see workflow/README.md)")
if not str(READALIGN_CONFIG["output"]).endswith(".bam"):
    raise ValueError("readalign module: config key readalign.output must end in .bam")

READALIGN_FAI = f'{READALIGN_CONFIG["reference"]}.fai'
"""The reference's index, an input of the align rule (the faidx rule makes it when missing)."""

READALIGN_WARMUP = os.path.join(READALIGN_CONFIG["log_dir"], "warmup.txt")
"""The report of `readalign warmup`: an input of every align job, so the kernels are compiled
into the cache once, before them, and never by parallel jobs side by side."""


def readalign_log_path(kind, suffix):
    """Log or benchmark path of the align rule: one file per value of the output's wildcards.

    ``{dir}/align/{w1}/{w2}.log`` for an output with wildcards w1 and w2 (``align.log`` when
    it has none), so every job gets its own file and the wildcards match the output's.
    """
    names = list(dict.fromkeys(re.findall(r"\{\s*(\w+)\s*(?:,[^}]*)?\}",
                                          READALIGN_CONFIG["output"])))
    folder = READALIGN_CONFIG["log_dir" if kind == "log" else "benchmark_dir"]
    if not names:
        return os.path.join(folder, f"align{suffix}")
    parts = [f"{{{name}}}" for name in names]
    return os.path.join(folder, "align", *parts[:-1], f"{parts[-1]}{suffix}")


def readalign_scoring_arguments(scoring):
    """`readalign align` options of the ``scoring`` config key: a preset name or a mapping."""
    if not scoring:
        return []
    if isinstance(scoring, str):
        scoring = {"preset": scoring}
    unknown = set(scoring) - set(READALIGN_SCORING_OPTIONS)
    if not isinstance(scoring, dict) or unknown:
        raise ValueError("readalign module: config key readalign.scoring must be a preset name "
                         "or a mapping of " + ", ".join(READALIGN_SCORING_OPTIONS)
                         + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else ""))
    args = []
    for key, option in READALIGN_SCORING_OPTIONS.items():
        if scoring.get(key) is not None:
            args += [option, str(scoring[key])]
    return args


def readalign_arguments(cfg=READALIGN_CONFIG):
    """The options of `readalign align` that the config sets, as one shell-quoted string."""
    args = ["--backend", cfg["backend"], *readalign_scoring_arguments(cfg["scoring"])]
    if cfg["candidates_format"] and cfg["candidates_format"] != "auto":
        args += ["--candidates-format", cfg["candidates_format"]]
    if cfg["pad"] is not None:
        args += ["--pad", str(int(cfg["pad"]))]
    if cfg["max_distance"] is not None:
        args += ["--max-distance", str(int(cfg["max_distance"]))]
    for flag in ("secondary", "eqx", "sort", "allow_empty"):
        if cfg[flag]:
            args.append(f"--{flag.replace('_', '-')}")
    if cfg["read_group"]:
        args += ["--rg", str(cfg["read_group"]).replace("\t", "\\t")]
    text = " ".join(shlex.quote(a) for a in args)
    return f"{text} {cfg['extra']}".strip()


def readalign_resources(cfg=READALIGN_CONFIG):
    """Resources of one alignment job, as the SLURM executor plugin reads them."""
    res = {"mem_mb": int(cfg["mem_mb"]), "runtime": int(cfg["runtime"])}
    if int(cfg["gpu"] or 0) > 0:
        res["gpu"] = int(cfg["gpu"])
        if cfg["gpu_model"]:
            res["gpu_model"] = str(cfg["gpu_model"])
    return res


def readalign_summary_path():
    """The summary JSON written beside each BAM (same wildcards)."""
    return f'{READALIGN_CONFIG["output"][: -len(".bam")]}.summary.json'
