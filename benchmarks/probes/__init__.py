"""Probes: entry points that each answer one question behind a RESULTS.md section (start-up
cost, single API calls, a list's references, Hopper's packed instructions, a pruning model),
run as ``python -m benchmarks.probes.NAME``; ``benchmarks/README.md`` lists them."""
