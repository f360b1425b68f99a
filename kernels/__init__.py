"""Alignment kernels, written once in numba and compiled for the CPU and the GPU.

Installed as ``readalign.kernels``. :mod:`.quadrant` holds the per-pair
algorithm, :mod:`.cpu` the multi-core batch driver.
"""
