"""Sequences with random edits, for tests that need related pairs."""

from __future__ import annotations

import random


def mutate(rng: random.Random, s: str, rate: float, alphabet: str, longest_insert: int = 1) -> str:
    """``s`` with about ``rate`` of its symbols edited: substituted, deleted, or followed by an
    insertion of 1 to ``longest_insert`` symbols of ``alphabet`` (a third each)."""
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 3:
            out.append(rng.choice(alphabet))
        elif r < 2 * rate / 3:
            continue
        elif r < rate:
            out.append(c)
            size = rng.randint(1, longest_insert) if longest_insert > 1 else 1
            out.append("".join(rng.choice(alphabet) for _ in range(size)))
        else:
            out.append(c)
    return "".join(out)
