"""Query-time re-rank of the index's top candidates: what the state says that the vectors blur.

The index search stays exact (inner products with state-independent memory vectors); these two
steps only reorder its top candidates, using symbolic parts of the agent log that a frozen BERT
encodes loosely, most of all for services never seen in training:

1. **needed-slot match**: score + w · |needs ∩ sets(m)| / |sets(m)|, where ``needs`` are the state's
   uncertainty flags (what the decision still lacks) and ``sets(m)`` the constraint slots that
   memory m's event set. w (``SAMConfig.slot_match``) is chosen on held-out training dialogues.
2. **provenance**: each hit is followed by the earlier memory its adopted values came from
   (sam_model.data.provenance).

Shared by SAMRetriever.search and the evaluation, so the benchmark measures what users run.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence

import numpy as np

from sam_model.data.provenance import expand

RERANK_DEPTH = 50  # candidates fetched from the index per query when a re-rank is on


def slot_bonus(needs: Collection[str], sets: Sequence[Sequence[str]], weight: float) -> np.ndarray:
    """w · share of each memory's set slots that the state still needs (0 for memories that set none)."""
    need = set(needs)
    if not need or not weight:
        return np.zeros(len(sets), dtype=np.float64)
    return np.array([weight * len(need.intersection(s)) / len(s) if s else 0.0 for s in sets], dtype=np.float64)


def rerank(candidates: Sequence[Hashable], scores: np.ndarray, needs: Collection[str],
           sets_of: Callable[[Hashable], Sequence[str]], slot_match: float = 0.0,
           links: Mapping[Hashable, Sequence[Hashable]] | Sequence[Sequence[Hashable]] | None = None,
           allowed=None, depth: int | None = None) -> list[Hashable]:
    """Candidates (best first by ``scores``) in their re-ranked order, at most ``depth`` of them."""
    order = list(candidates)
    if slot_match:
        s = np.asarray(scores, dtype=np.float64) + slot_bonus(needs, [sets_of(c) for c in order], slot_match)
        order = [order[i] for i in np.argsort(-s, kind="stable")]
    if links is not None:
        return expand(order, links, allowed, depth)
    return order[:depth] if depth is not None else order
