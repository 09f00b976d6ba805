"""The lexical weight learned in training (SAMConfig.lexical_learned) and the one BM25 both it and the store use."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.rerank import BM25_B, BM25_K1, lexical_bonus, words

CASES = [
    ("book a table at pizza_hut for 2 people", ["restaurant pizza_hut party_size 2", "hotel ibis checkin monday",
                                                 "pizza pizza pizza_hut table booked", ""]),
    ("search_flights origin=LHR destination=JFK", ["search_flights LHR JFK", "search_flights origin",
                                                    "the a an of", "LHR LHR LHR LHR LHR destination"]),
    ("the of and", ["anything at all", "more words here"]),  # a query of stop words only
    ("weather in paris", ["weather paris paris", "weather", "paris"]),
    ("unmatched query words", ["nothing shared", "still nothing"]),
]


def reference_bonus(query: str, texts: list[str], weight: float) -> np.ndarray:
    """lexical_bonus as it was before bm25_matrix (kept verbatim): the refactor must give the same bytes."""
    if not weight or not texts:
        return np.zeros(len(texts), dtype=np.float64)
    q = set(words(query))
    docs = [words(t) for t in texts]
    if not q:
        return np.zeros(len(texts), dtype=np.float64)
    n, avg = len(docs), max(sum(map(len, docs)) / len(docs), 1.0)
    df = {w: sum(1 for d in docs if w in set(d)) for w in q}
    out = np.zeros(n, dtype=np.float64)
    for i, d in enumerate(docs):
        tf: dict[str, int] = {}
        for w in d:
            if w in q:
                tf[w] = tf.get(w, 0) + 1
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(d) / avg)
        out[i] = sum(np.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) * f * (BM25_K1 + 1) / (f + norm)
                     for w, f in tf.items())
    top = out.max()
    return weight * out / top if top > 0 else out


@pytest.mark.parametrize("query,texts", CASES)
@pytest.mark.parametrize("weight", [0.0, 0.1, 0.7])
def test_lexical_bonus_unchanged(query, texts, weight):
    got = lexical_bonus(query, texts, weight)
    assert got.tobytes() == reference_bonus(query, texts, weight).tobytes()
    if weight and any(set(words(query)) & set(words(t)) for t in texts):
        assert got.max() == pytest.approx(weight)  # the best candidate gets the whole weight
