"""Independent reference implementations for the tests: a plain full-matrix DP and CIGAR replay.

Written from the textbook recurrences, sharing no code with readalign.
"""

from __future__ import annotations

import re

ACGT = set("ACGT")


def dna_norm(s: str) -> str:
    """Upper-case; every non-ACGT symbol becomes N."""
    return "".join(c if c in ACGT else "N" for c in s.upper())


def dp_distance(q, t, infix: bool, n_symbol=None) -> tuple[int, int]:
    """Full-matrix edit distance; returns (distance, leftmost best end column)."""
    m, n = len(q), len(t)
    prev = [0 if infix else j for j in range(n + 1)]
    for i in range(1, m + 1):
        cur = [i] + [0] * n
        a = q[i - 1]
        for j in range(1, n + 1):
            sub = prev[j - 1] + (0 if (a == t[j - 1] and a != n_symbol) else 1)
            cur[j] = min(sub, prev[j] + 1, cur[j - 1] + 1)
        prev = cur
    if not infix:
        return prev[n], n
    best = min(prev)
    return best, prev.index(best)


def parse_cigar(cigar: str) -> list[tuple[int, str]]:
    return [(int(n), op) for n, op in re.findall(r"(\d+)([MIDNSHP=X])", cigar)]


def replay(cigar: str, q: str, t: str, start: int, n_symbol: str = "N") -> tuple[int, int]:
    """Walk a CIGAR over read q and window t from ``start``.

    Returns (cost, ref_end). Asserts the CIGAR consumes the whole read, that
    '=' and 'X' agree with the bases, and that runs are merged.
    """
    i, j, cost = 0, start, 0
    ops = parse_cigar(cigar)
    assert "".join(f"{n}{o}" for n, o in ops) == cigar, f"unparsable CIGAR {cigar!r}"
    for (_, o1), (_, o2) in zip(ops, ops[1:]):
        assert o1 != o2, f"unmerged runs in {cigar!r}"
    for count, op in ops:
        assert count > 0
        if op in "M=X":
            for _ in range(count):
                same = q[i] == t[j] and q[i] != n_symbol
                if op == "=":
                    assert same, f"'=' over {q[i]}/{t[j]} in {cigar}"
                if op == "X":
                    assert not same, f"'X' over {q[i]}/{t[j]} in {cigar}"
                cost += not same
                i += 1
                j += 1
        elif op == "I":
            i += count
            cost += count
        elif op == "D":
            j += count
            cost += count
        else:
            raise AssertionError(f"unexpected op {op} in {cigar}")
    assert i == len(q), f"CIGAR {cigar} consumes {i} of {len(q)} read bases"
    return cost, j
