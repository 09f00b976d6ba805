"""Query-time re-rank of the index's top candidates: what the state says that the vectors blur.

The index search stays exact (inner products with state-independent memory vectors); these two
steps only reorder its top ``RERANK_DEPTH`` candidates, using symbolic parts of the agent log that a
frozen BERT encodes loosely, most of all for services never seen in training:

1. **needed-slot match**: score + w · |needs ∩ sets(m)| / |sets(m)|, where ``needs`` are the state's
   uncertainty flags (what the decision still lacks) and ``sets(m)`` the constraint slots that
   memory m's event set. w (``StoreConfig.slot_match``) is chosen on held-out training dialogues.
2. **lexical match** (``StoreConfig.lexical``): score + w · BM25(state text, m) / max over the candidates,
   the bm25-state baseline's signal fused in: where the vectors know nothing of a domain (one never trained
   on), the words of the state (tool and argument names) still find the memories that name them. BM25's
   statistics are those of the re-ranked candidates.
3. **provenance**: each hit is followed by the earlier memory its adopted values came from
   (sam_model.data.provenance).

Exact score ties are broken by a seeded hash of each memory's write sequence number (:func:`tie_keys`):
random-like, so no method gains from the order memories are stored in, and the same in every path that
writes the same memories in the same order. Used only by sam_model.store.MemoryStore, which every search
goes through (SAMRetriever, the memory bank, the memory API, evaluate.py), so the benchmark measures what
users run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Container, Hashable, Mapping, Sequence

import numpy as np

from sam_model.data.provenance import expand_with_sources

RERANK_DEPTH = 50  # candidates the re-rank reorders; the rest follow in index order
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def slot_bonus(needs: Collection[str], sets: Sequence[Sequence[str]], weight: float) -> np.ndarray:
    """w · share of each memory's set slots that the state still needs (0 for memories that set none)."""
    need = set(needs)
    if not need or not weight:
        return np.zeros(len(sets), dtype=np.float64)
    return np.array([weight * len(need.intersection(s)) / len(s) if s else 0.0 for s in sets], dtype=np.float64)


_WORD = re.compile(r"\w+")
_STOP = frozenset("a an and are as at be by for from has in is it its of on or that the this to was were will with "
                  "i you we me my your our please".split())
BM25_K1, BM25_B = 1.2, 0.75


def words(text: str) -> list[str]:
    """Lower-cased word tokens without English stop words (what the lexical match compares)."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def bm25_matrix(queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """Raw BM25 of each query against each text (len(queries) x len(texts)), document frequencies over ``texts``.

    The one BM25 of the package: the store's re-rank (:func:`lexical_bonus`, one query) and training's learned
    lexical weight (a batch's queries x its memories) must score alike. Each term's contribution is computed as a
    scalar and a pair's terms are summed in the text's word order (a sequential cumsum), so a value is the same
    bytes whichever batch it is computed in.
    """
    out = np.zeros((len(queries), len(texts)), dtype=np.float64)
    qsets = [set(words(q)) for q in queries]
    vocab = sorted(set().union(*qsets)) if qsets else []
    if not texts or not vocab:
        return out
    col = {w: j for j, w in enumerate(vocab)}
    docs = [words(t) for t in texts]
    n, avg = len(docs), max(sum(map(len, docs)) / len(docs), 1.0)
    tfs: list[dict[str, int]] = []
    for d in docs:
        tf: dict[str, int] = {}
        for w in d:
            if w in col:
                tf[w] = tf.get(w, 0) + 1
        tfs.append(tf)
    df = dict.fromkeys(vocab, 0)
    for tf in tfs:
        for w in tf:
            df[w] += 1
    idf = {w: np.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in vocab}
    width = max(1, max(map(len, tfs)))
    term = np.full((n, width), len(vocab), dtype=np.int64)  # len(vocab): padding, in no query
    part = np.zeros((n, width), dtype=np.float64)
    for i, (d, tf) in enumerate(zip(docs, tfs)):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(d) / avg)
        for k, (w, f) in enumerate(tf.items()):
            term[i, k] = col[w]
            part[i, k] = idf[w] * f * (BM25_K1 + 1) / (f + norm)
    has = np.zeros((len(queries), len(vocab) + 1), dtype=bool)
    for r, q in enumerate(qsets):
        has[r, [col[w] for w in q]] = True
    return np.cumsum(np.where(has[:, term], part, 0.0), axis=-1)[..., -1]


def lexical_bonus(query: str, texts: Sequence[str], weight: float) -> np.ndarray:
    """w · BM25(query, text) / the best candidate's BM25, with document frequencies over ``texts``."""
    if not weight or not texts:
        return np.zeros(len(texts), dtype=np.float64)
    out = bm25_matrix([query], texts)[0]
    top = out.max()
    return weight * out / top if top > 0 else out


def tie_keys(seqs: Sequence[int] | np.ndarray, seed: int = 0) -> np.ndarray:
    """splitmix64(seq + seed·φ): a fixed pseudo-random order of write sequence numbers, for exact ties."""
    with np.errstate(over="ignore"):
        z = (np.asarray(seqs, dtype=np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)) & _MASK
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def best_first(scores: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """Positions by score, highest first; equal scores by tie key."""
    return np.lexsort((ties, -np.asarray(scores, dtype=np.float64)))


def rerank(candidates: Sequence[Hashable], scores: np.ndarray, ties: np.ndarray, needs: Collection[str],
           sets_of: Callable[[Hashable], Sequence[str]], slot_match: float = 0.0,
           links: Mapping[Hashable, Sequence[Hashable]] | None = None, allowed: Container[Hashable] | None = None,
           prior: np.ndarray | None = None) -> list[tuple[Hashable, float, Hashable | None]]:
    """Candidates (best first by index score) re-ranked: (id, bonus, the hit whose link placed it or None).

    ``prior``: a per-candidate score added with the slot bonus (the memory bank's importance, in score units).
    """
    bonus = slot_bonus(needs, [sets_of(c) for c in candidates], slot_match)
    if prior is not None:
        bonus = bonus + np.asarray(prior, dtype=np.float64)
    order = best_first(np.asarray(scores, dtype=np.float64) + bonus, ties)
    ranked = [candidates[i] for i in order]
    of = dict(zip(candidates, bonus.tolist()))
    placed = expand_with_sources(ranked, links, allowed) if links else [(c, None) for c in ranked]
    return [(c, of.get(c), src) for c, src in placed]
