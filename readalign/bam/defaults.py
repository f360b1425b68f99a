"""Defaults and choices of ``readalign align`` that its ``--help`` states (no numpy or numba here:
help stays fast)."""

DEFAULT_BATCH = 100_000
"""Reads per batch. Up to five batches are in flight (parsed ahead, paired, aligned,
assembled, compressed), so peak memory is about 1.0 GB plus 0.6 GB per 100,000 reads of
batch on a 16-core GPU host, whatever the input size (0.54 GB measured there, plus the
record slots kept since, 0.06 GB); 100k to 500k run at the same speed (benchmarks/RESULTS.md)."""
BATCH_BYTES_PER_READ = 6_000
"""Memory one read of ``--batch-size`` costs, by the estimate above (0.6 GB per 100,000 reads of
batch, 150 bp reads): a batch size whose estimate exceeds the memory the host has available
(:func:`readalign.runtime.host_memory.available_memory`) is refused before anything is read.
Longer reads cost more, so this is the least a batch needs, not the most."""
DEFAULT_PAD = 20
"""Bases added on each side of a candidate window (``--pad``)."""
DEFAULT_COMPRESSION = 1
"""BGZF level of the BAM unless asked otherwise (``--compression-level``).

This stage's BAM usually goes on to a sort or merge. Level 1 writes 2M
records with about half the CPU of zlib's default (6) for a file 7% larger;
with htslib's zlib deflating, the whole stage runs about 1.5x faster
(benchmarks/RESULTS.md).
"""
WRITERS = ("auto", "isal", "htslib")
"""What compresses the BAM (``--bgzf-writer``): ``auto`` is ISA-L's writer where the ``isal``
package imports, else htslib's (:func:`readalign.bam.bgzf.compressor`)."""
ISAL_SHARE = 4
"""ISA-L's writer compresses on a quarter of a run's threads (at least 2, at most all)."""


def isal_threads(threads: int) -> int:
    """Threads of ISA-L's BGZF writer in a run of ``threads`` threads: :data:`ISAL_SHARE` of
    them, at least 2 and at most all (``--bgzf-writer``'s help states it from here)."""
    return min(threads, max(2, threads // ISAL_SHARE))
