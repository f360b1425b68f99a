"""Ablation kernels: passes the products do not run, kept to time and test the product
kernels against.

* :mod:`.packed` (with :mod:`.unsigned_lanes`): the distance-only pass two pairs per thread
  in 16-bit halves; :mod:`.packed_pairs` pairs the threads and drives it on the CPU,
  :mod:`.cuda_packed` on the GPU (``python -m benchmarks.bench --ablation``);
* :mod:`.scored_packed_cpu`: the GPU's packed scored forward pass driven on the CPU, which
  the tests hold against the CPU backend.
"""
