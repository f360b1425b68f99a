"""Helpers the tests share, imported as ``tests.support.<module>`` (the repository root is on
pytest's path, pyproject's ``pythonpath``):

* ``oracle``: a full-matrix edit-distance DP and a CIGAR replay, independent of the engine;
* ``scored_oracle``: a plain Gotoh DP with traceback for scored alignment;
* ``simulate``: simulated inputs of ``readalign align`` (a random genome, reads, candidates),
  which the BAM-stage benchmarks (``benchmarks.pipeline``, ``peak_memory``, the start-up
  probe) run too, so that they time the inputs the tests check.

``tests/conftest.py`` stays at the root of ``tests``: pytest finds it there.
"""
