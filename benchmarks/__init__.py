"""readalign's benchmarks: one entry point per product, each with its peers in the same run.

* ``python -m benchmarks.bench``: the pair engine (kernel only and through the API) against
  edlib and WFA2 on every host core;
* ``python -m benchmarks.pipeline``: ``readalign align``, files in to finished BAM, stage by stage;
* ``python -m benchmarks.words``: word-list distances against rapidfuzz;
* ``python -m benchmarks.startup_probe`` and ``python -m benchmarks.peak_memory``: what a new
  process pays before its first read, and the BAM stage's peak memory.

Results, with date, commit, device and command, go to ``benchmarks/RESULTS.md``.
"""
