# readalign as a Snakemake rule module.
#
# Load it with `include: "path/to/readalign/workflow/rules/readalign.smk"` or with
# Snakemake's `module` directive; configure it under the `readalign` key of the config.
# workflow/README.md documents every key. The main rule, `readalign_align`, turns
# reference + reads + candidates into a BAM; `reads`, `candidates` and `output` may hold
# wildcards ({sample}, {chunk}, ...), so one rule serves any number of samples or chunks.
# A second rule, `readalign_faidx`, indexes the reference when it has no .fai yet (switch it
# off with `index_reference: false` when your workflow already has a rule for the .fai). A
# third, `readalign_warmup`, runs `readalign warmup` once before the align jobs, so that they
# load the compiled kernels from the cache instead of each compiling them (switch it off with
# `warmup: false`, e.g. when a container image ships a warm cache).


include: "readalign_common.smk"


# Only for a missing index: one already beside the reference (samtools', or the one a
# `readalign align` run built) is used as it is, and readalign rebuilds one older than its
# FASTA. A rule claiming a file it did not make would have Snakemake warn, on every run, that
# the file lacks its provenance records.
if READALIGN_CONFIG["index_reference"] and not os.path.exists(READALIGN_FAI):

    rule readalign_faidx:
        input:
            READALIGN_CONFIG["reference"],
        output:
            READALIGN_FAI,
        log:
            os.path.join(READALIGN_CONFIG["log_dir"], "faidx.log"),
        conda:
            "../../environment.yml"
        shell:
            "python -c 'import pysam, sys; pysam.faidx(sys.argv[1])' {input:q} 2> {log:q}"


if READALIGN_CONFIG["warmup"]:

    rule readalign_warmup:
        output:
            READALIGN_WARMUP,
        log:
            os.path.join(READALIGN_CONFIG["log_dir"], "warmup.log"),
        params:
            backend=READALIGN_CONFIG["backend"],
        threads: int(READALIGN_CONFIG["threads"])
        resources:
            **readalign_resources(),
        conda:
            "../../environment.yml"
        shell:
            "readalign warmup --backend {params.backend} > {output:q} 2> {log:q}"


rule readalign_align:
    input:
        warmup=[READALIGN_WARMUP] if READALIGN_CONFIG["warmup"] else [],
        reference=READALIGN_CONFIG["reference"],
        fai=READALIGN_FAI,
        reads=READALIGN_CONFIG["reads"],
        candidates=READALIGN_CONFIG["candidates"],
    output:
        bam=READALIGN_CONFIG["output"],
        summary=readalign_summary_path(),
    log:
        readalign_log_path("log", ".log"),
    benchmark:
        readalign_log_path("benchmark", ".tsv")
    params:
        args=readalign_arguments(),
    threads: int(READALIGN_CONFIG["threads"])
    resources:
        **readalign_resources(),
    conda:
        "../../environment.yml"
    shell:
        "readalign align --reference {input.reference:q} --reads {input.reads:q}"
        " --candidates {input.candidates:q} {params.args} --threads {threads}"
        " --summary-json {output.summary:q} -o {output.bam:q} 2> {log:q}"
