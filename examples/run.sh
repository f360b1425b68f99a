#!/usr/bin/env bash
# The example data flow: 2,000 wgsim reads of phage lambda, candidates from minimap2
# (`minimap2 -x sr --secondary=yes lambda.fa reads.fq`, no -c), aligned by readalign into BAM.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p out
python -m readalign align -r lambda.fa --reads reads.fq.gz -c candidates.paf.gz \
    -o out/example.bam --secondary --rg 'ID:example\tSM:lambda\tPL:ILLUMINA' \
    --summary-json out/summary.json
python -m readalign align -q -r lambda.fa --reads reads.fq.gz -c candidates.paf.gz \
    -o out/example.sorted.bam --sort --rg 'ID:example\tSM:lambda\tPL:ILLUMINA'
if command -v samtools >/dev/null 2>&1; then
    samtools quickcheck -v out/example.bam out/example.sorted.bam
    echo "samtools quickcheck: ok; records in lambda:1000-2000:" \
        "$(samtools view -c out/example.sorted.bam lambda:1000-2000)"
fi
echo "wrote examples/out/example.bam, examples/out/example.sorted.bam (+ .bai), examples/out/summary.json"
