"""Scoring helpers shared by search paths (the hybrid re-score of seed 004 builds on these)."""

from __future__ import annotations

from collections.abc import Sequence


def lexical_similarity(scores: Sequence[float]) -> list[float]:
    """Map raw BM25 scores to [0, 1] for the ``similarity`` field of lexical-only results.

    BM25 has no fixed scale, so scores are divided by the best score of the same query: the top
    hit reads 1.0 and the rest keep their proportions. Empty input gives an empty list.
    """
    top = max(scores, default=0.0)
    if top <= 0:
        return [0.0 for _ in scores]
    return [max(s, 0.0) / top for s in scores]
