"""An independent scored aligner for the tests: full Gotoh matrices in plain Python.

Same conventions as ``kernels/scored_quadrant.py`` (modes, gap cost ``go + L*ge``, the tie
rule, soft clips), written from the definitions rather than from the kernel: the whole
matrices are filled, then traced back cell by cell.
"""

from __future__ import annotations

from dataclasses import dataclass

NEG = -(1 << 40)
MODES = {"global": 0, "infix": 1, "local": 2}


@dataclass
class Alignment:
    score: int
    query_start: int
    query_end: int
    ref_start: int
    ref_end: int
    cigar: str
    nm: int


def _matrices(q, t, sub, go, ge, mode, clip):
    m, n = len(q), len(t)
    H = [[NEG] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]
    F = [[NEG] * (n + 1) for _ in range(m + 1)]
    H[0][0] = clip if mode == "local" else 0
    for j in range(1, n + 1):
        H[0][j] = {"infix": 0, "local": clip}.get(mode, -(go + j * ge))
    for i in range(1, m + 1):
        H[i][0] = 0 if mode == "local" else -(go + i * ge)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(H[i][j - 1] - go - ge, E[i][j - 1] - ge)
            F[i][j] = max(H[i - 1][j] - go - ge, F[i - 1][j] - ge)
            h = max(H[i - 1][j - 1] + sub(q[i - 1], t[j - 1]), E[i][j], F[i][j])
            H[i][j] = max(h, 0) if mode == "local" else h
    return H, E, F


def _end(H, m, n, mode, clip):
    """The end cell and its score; local mode: the first best in row-major order, a cell on
    the read's last row earning ``clip`` (its end is not clipped), minus ``2 * clip``."""
    if mode == "global":
        return m, n, H[m][n]
    if mode == "infix":
        best = max(H[m])
        return m, H[m].index(best), best
    best, bi, bj = 0, 0, 0
    for i in range(1, m + 1):
        for j in range(n + 1):
            v = H[i][j] + (clip if i == m else 0)
            if v > best:
                best, bi, bj = v, i, j
    return bi, bj, best - 2 * clip if m else 0


def _runs(ops: list) -> str:
    out, prev, count = [], None, 0
    for op in ops:
        if op == prev:
            count += 1
        else:
            if prev is not None:
                out.append(f"{count}{prev}")
            prev, count = op, 1
    if prev is not None:
        out.append(f"{count}{prev}")
    return "".join(out)


def align(q: str, t: str, sub, go: int, ge: int, mode: str, same=None,
          clip: int = 0) -> Alignment:
    """Align read ``q`` to window ``t``; ``sub(a, b)`` scores two letters; ``same(a, b)``
    says whether a diagonal step is a match for NM (default: equal letters); ``clip`` is the
    local mode's penalty per clipped read end."""
    same = same or (lambda a, b: a == b)
    m, n = len(q), len(t)
    H, E, F = _matrices(q, t, sub, go, ge, mode, clip)
    i, j, score = _end(H, m, n, mode, clip)
    end_i, end_j = i, j
    ops: list[str] = []
    nm = 0
    state = "H"
    while i > 0 and j > 0:
        if state == "H":
            if mode == "local" and H[i][j] == 0:
                break
            if H[i][j] == H[i - 1][j - 1] + sub(q[i - 1], t[j - 1]):
                ops.append("M")
                nm += not same(q[i - 1], t[j - 1])
                i, j = i - 1, j - 1
                continue
            state = "F" if H[i][j] == F[i][j] else "E"
        if state == "F":
            ops.append("I")
            nm += 1
            state = "F" if F[i][j] == F[i - 1][j] - ge else "H"
            i -= 1
        else:
            ops.append("D")
            nm += 1
            state = "E" if E[i][j] == E[i][j - 1] - ge else "H"
            j -= 1
    if mode != "local":
        ops += ["I"] * i
        nm += i
        i = 0
        if mode == "global":
            ops += ["D"] * j
            nm += j
            j = 0
    ops.reverse()
    if mode == "local":
        ops = ["S"] * i + ops + ["S"] * (m - end_i)
    return Alignment(score, i, end_i, j, end_j, _runs(ops), nm)


def dna_scorer(match: int, mismatch: int):
    """The DNA substitution rule: upper-case ACGT equal scores ``match``, anything with N (or
    unequal) ``-mismatch``."""
    def sub(a: str, b: str) -> int:
        return match if a == b and a in "ACGT" else -mismatch
    return sub


def replay(cigar: str, q: str, t: str, query_start: int, ref_start: int) -> tuple[str, str]:
    """The read and window parts a CIGAR consumes, checked against ``q`` and ``t``."""
    import re

    qi, ti = 0, ref_start
    qa, ta = [], []
    for length, op in re.findall(r"(\d+)([MIDS=X])", cigar):
        k = int(length)
        if op in "M=X":
            qa.append(q[qi:qi + k])
            ta.append(t[ti:ti + k])
            qi, ti = qi + k, ti + k
        elif op in "IS":
            qi += k
        elif op == "D":
            ti += k
    assert qi == len(q), (cigar, qi, len(q))
    return "".join(qa), "".join(ta)


def rescore(cigar: str, q: str, t: str, ref_start: int, sub, go: int, ge: int,
            clip: int = 0) -> int:
    """The score of the alignment a CIGAR describes, from first principles (``clip`` per
    soft-clipped read end)."""
    import re

    qi, ti, total = 0, ref_start, 0
    for length, op in re.findall(r"(\d+)([MIDS=X])", cigar):
        k = int(length)
        if op in "M=X":
            total += sum(sub(q[qi + x], t[ti + x]) for x in range(k))
            qi, ti = qi + k, ti + k
        elif op == "I":
            total -= go + k * ge
            qi += k
        elif op == "D":
            total -= go + k * ge
            ti += k
        else:
            total -= clip
            qi += k
    return total
