"""The one switch that says whether CUDA code runs on numba's simulator.

``NUMBA_ENABLE_CUDASIM=1`` makes numba run CUDA kernels as Python threads on
the CPU: CI uses it to test the GPU code without a GPU. The simulator lacks
warp intrinsics and is about a million times slower, so a few places size
their work down or vote per lane under it; they all ask :func:`simulated`.
"""

from __future__ import annotations

from numba import config


def simulated() -> bool:
    """True when CUDA kernels run on numba's CUDA simulator."""
    return bool(config.ENABLE_CUDASIM)
