"""GPU check scripts: each runs on a GPU as ``python tests/gpu/NAME.py ARGS`` (its docstring
says which), and under numba's CUDA simulator from the tests that import or run it:

* ``gpu_check``: the edit-distance backend against the CPU's, pair for pair
  (``tests/engine/test_cuda.py``, ``test_early_release.py``);
* ``scored_gpu_check``: scored alignment on the GPU against the CPU and parasail
  (``tests/engine/test_scored.py``);
* ``initcheck_run``: every GPU path, for compute-sanitizer's initcheck
  (``tests/engine/test_initcheck.py``);
* ``words_cuda_check``: the word-list kernels against the CPU (``tests/words/test_words_cuda.py``);
* ``packed_check``: the packed distance pass against the 32-bit pass (``tests/kernels/test_packed.py``);
* ``run_offsets_check``: the scan of run counts and the packing of scored runs
  (``tests/kernels/test_run_offsets.py``).

Tests import them as ``tests.gpu.<module>``.
"""
