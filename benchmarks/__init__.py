"""readalign's benchmarks: one entry point per product, each with its peers in the same run,
probes that answer one question each (``benchmarks.probes``), and the ablation kernels
(``benchmarks/ablation``). ``benchmarks/README.md`` lists every entry point.

Results, with date, commit, device and command, go to ``benchmarks/RESULTS.md``.
"""
