"""The scored chunk kernel with the GPU's packed forward pass, on the CPU.

Neighbouring pairs of a chunk that :func:`readalign.kernels.scored_packed.packs` admits run two
at a time in 16-bit halves, their boundaries side by side as on the GPU, and each is traced
alone from them; other chunks run as :func:`readalign.kernels.cpu.scored_chunk_source`'s. The
tests hold it against that kernel (the CPU backend itself keeps the 32-bit pass).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from readalign.kernels import lanes16, scored_packed, scored_quadrant
from readalign.kernels.cpu import longest, scored_chunk, scored_finisher, vote_alone
from readalign.kernels.quadrant import pair_bounds


def scored_packed_chunk_source(K: int, device_jit=None, vote=vote_alone):
    """The Python function of the packed scored chunk kernel, size ``K``, on ``device_jit``
    (default numba's ``njit``) and ``vote``, with the arguments of
    :func:`readalign.kernels.cpu.scored_chunk_source`'s. Its strips are the GPU's
    (:func:`readalign.kernels.scored_packed.store_strip`).
    """
    jit = device_jit or njit(cache=False)
    S = scored_packed.store_strip(K)
    forward2 = scored_packed.build(jit, lanes16.signed_ops(jit), K, S).forward2
    packs = jit(scored_packed.packs)
    table = jit(scored_packed.pair_table)
    pair = jit(pair_bounds)
    ns = scored_quadrant.build(jit, vote, K)
    finish = scored_finisher(jit, ns)
    row_size = ns.row_size
    col_size = ns.col_size
    plain = jit(scored_chunk(K, ns, finish))  # the same compiled traceback as the packed pairs'
    TILE = scored_quadrant.tile_size(K)

    def align_packed_chunk(seqs, lo, hi, scoring, job, outs):
        """Align pairs ``order[lo:hi]``, two at a time where they pack."""
        q, qoff, t, toff, order = seqs
        mode, sub, A, go, ge, clip = scoring
        with_cigar = job[2]
        mmax, nmax = longest(qoff, toff, order, lo, hi)
        if not packs(mode, A, sub.max(), sub.min(), go, ge, clip, mmax, nmax):
            plain(seqs, lo, hi, scoring, job, outs)
            return
        scoring2 = (mode, table(sub, A), A, go, ge, clip)
        row = np.empty(nmax + 1, np.uint32)
        rs = row_size(mmax, nmax, K)
        cs = col_size(mmax, nmax, K)
        words = (np.empty(rs, np.uint32), np.empty(rs, np.uint32), np.empty(cs, np.uint32),
                 np.empty(cs, np.uint32))
        halves = (words[0].view(np.int16), words[1].view(np.int16), words[2].view(np.int16),
                  words[3].view(np.int16))
        work = np.empty(4 * S, np.uint32)
        scratch = (np.empty(TILE, np.int32), np.empty(K * K, np.uint8))
        for x in range(lo, hi, 2):
            y = min(x + 1, hi - 1)
            qa, ma, ta, na = pair(qoff, toff, order[x])
            qb, mb, tb, nb = pair(qoff, toff, order[y])
            rlen = max(na, nb) + 1
            clen = max(ma, mb) + 1
            sa, ia, ja, sb, ib, jb = forward2((q, qa, qb, ma, mb), (t, ta, tb, na, nb), scoring2,
                                              with_cigar, row, (words, 0, 1, rlen, clen), work)
            finish(x, (q, qa, 1, ma), (t, ta, 1, na), (sa, ia, ja), scoring, job,
                   (halves, 0, 2, rlen, clen), scratch, outs)
            if y != x:
                finish(y, (q, qb, 1, mb), (t, tb, 1, nb), (sb, ib, jb), scoring, job,
                       (halves, 1, 2, rlen, clen), scratch, outs)

    return align_packed_chunk
