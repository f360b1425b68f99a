"""CUDA kernel of the packed distance-only pass (:mod:`.packed`): one thread, two pairs.

Thread ``p`` takes pairs ``pair_a[p]`` and ``pair_b[p]``, which have equal read and window
lengths (:func:`.packed_pairs.pair_up` matches them; a pair without a partner is given as
its own). Results go to the pairs' own positions in ``dist``/``ref_end``.
"""

from __future__ import annotations

from functools import cache

from numba import cuda, uint32
from readalign.kernels.cuda import vote_helper
from readalign.kernels.quadrant import FAST_PATH_MAX
from readalign.kernels.simulator import simulated

from . import packed, unsigned_lanes


@cache
def packed_kernel(K: int, dpx: bool = True):
    """The packed forward kernel for quadrant size ``K``; ``dpx``: Hopper's 16x2 min
    instructions (sm_90), else plain integer arithmetic (always so under the simulator)."""
    device = cuda.jit(device=True)
    ops = unsigned_lanes.dpx_ops() if dpx and not simulated() else unsigned_lanes.swar_ops(device)
    thread2 = packed.build(device, vote_helper(True), ops, K).thread2
    ROW = FAST_PATH_MAX + 1

    @cuda.jit
    def packed_forward_kernel(q, qoff, t, toff, pair_a, pair_b, infix, max_dist, n_code, dist,
                              ref_end):
        """Distance and end column of pairs ``pair_a[p]`` and ``pair_b[p]``."""
        p = cuda.grid(1)
        if p >= pair_a.shape[0]:
            return
        thread2(q, qoff, t, toff, pair_a, pair_b, p, infix, max_dist, n_code, dist, ref_end,
                cuda.local.array(ROW, uint32), cuda.local.array(K, uint32),
                cuda.local.array(K, uint32))

    return packed_forward_kernel
