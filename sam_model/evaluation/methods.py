"""The methods a benchmark compares: the SAM retriever and the baselines it must beat.

Every method turns a query (state + observation) into a ranking of its candidate memories.
- ``sam`` and ``--compare`` retrievers: exported SAM retrievers (inner product of their vectors, then
  the retriever's query-time re-rank, sam_model.rerank; ``sam-index-only`` shows the search alone);
- ``recency``: newest first, what a plain sliding window gives;
- ``bm25`` / ``bm25-state``: lexical search (bm25s) with the observation / the state as text;
- ``dense`` / ``dense-state``: untrained MiniLM sentence vectors of the observation / the state as
  text against the memory texts, i.e. content-only vector search as most agent memories do it.

The content-only baselines (``bm25``, ``dense``) search the memories' plain content
(MemoryRecord.content); the state baselines search the memory text SAM reads
(MemoryRecord.text, which names the slots the event set), so neither side gets state
information the other lacks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import torch

from sam_model.data.examples import MemoryRecord, RetrievalExample, Scope
from sam_model.data.provenance import provenance_links
from sam_model.evaluation.data import EvalData
from sam_model.evaluation.ranking import inner, rank_range, rank_recency, rank_scores, rank_vectors
from sam_model.rerank import rerank

BASELINES = ("recency", "bm25", "bm25-state", "dense", "dense-state")


class Retriever(Protocol):
    """The part of ``sam_model.retriever.SAMRetriever`` a benchmark uses."""

    dim: int

    def encode_queries(self, states, observations, batch_size: int = 64, progress: bool = False,
                       steps=None, task_starts=None) -> np.ndarray: ...
    def encode_memories(self, memories, batch_size: int = 64, progress: bool = False) -> np.ndarray: ...


class Method(Protocol):
    name: str

    def rank(self, data: EvalData, scope: Scope, depth: int, jitter: np.ndarray) -> list[np.ndarray]:
        """Top ``depth`` candidate positions per example, best first."""

    def time_query(self, data: EvalData, i: int, scope: Scope, depth: int, jitter: np.ndarray) -> float:
        """Seconds for one query alone: query-side encoding plus scoring of its candidates."""


class VectorMethod:
    """Any method whose score is an inner product of a query vector and a memory vector."""

    def __init__(self, name: str, encode_queries: Callable[[Sequence[RetrievalExample]], np.ndarray],
                 encode_memories: Callable[[Sequence[MemoryRecord]], np.ndarray],
                 before_timing: Callable[[], None] | None = None, slot_match: float = 0.0,
                 source_kinds: Sequence[str] | None = None):
        """``slot_match`` / ``source_kinds``: the re-rank of sam_model.rerank (source_kinds None = no
        provenance links), applied to each query's ranked candidates as SAMRetriever.search does."""
        self.name = name
        self._encode_queries = encode_queries
        self._encode_memories = encode_memories
        self._before_timing = before_timing
        self._slot_match = slot_match
        self._source_kinds = source_kinds
        self._links: Sequence[Sequence[int]] | None = None
        self._memory_vectors: np.ndarray | None = None

    @property
    def reranks(self) -> bool:
        return bool(self._slot_match) or self._source_kinds is not None

    def _rerank(self, data: EvalData, positions: np.ndarray, q: np.ndarray, ex: RetrievalExample, scope: Scope,
                depth: int) -> np.ndarray:
        if not self.reranks:
            return positions
        if self._links is None and self._source_kinds is not None:
            self._links = provenance_links(data.memories, self._source_kinds)
        pos = positions.tolist()
        scores = inner(self.memory_vectors(data)[positions], q)
        out = rerank(pos, scores, ex.state.uncertainty_flags, lambda p: data.memories[p].sets, self._slot_match,
                     self._links, ex.candidate_range(scope), depth)
        return np.asarray(out, dtype=np.int64)

    def memory_vectors(self, data: EvalData) -> np.ndarray:
        if self._memory_vectors is None:
            self._memory_vectors = np.ascontiguousarray(self._encode_memories(data.memories), dtype=np.float32)
        return self._memory_vectors

    def rank(self, data, scope, depth, jitter):
        m = self.memory_vectors(data)
        q = np.ascontiguousarray(self._encode_queries(data.examples), dtype=np.float32)
        if q.ndim != 2 or m.ndim != 2 or q.shape[1] != m.shape[1] or len(q) != len(data.examples):
            raise ValueError(f"method '{self.name}': query vectors {q.shape} and memory vectors {m.shape} "
                             f"do not match ({len(data.examples)} queries, {len(data.memories)} memories)")
        ranked = rank_vectors(q, m, data.examples, scope, depth, jitter, desc=self.name)
        return [self._rerank(data, r, q[i], ex, scope, depth) for i, (r, ex) in enumerate(zip(ranked, data.examples))]

    def time_query(self, data, i, scope, depth, jitter):
        m = self.memory_vectors(data)
        ex = data.examples[i]
        r = ex.candidate_range(scope)
        if self._before_timing is not None:
            self._before_timing()
        t0 = time.perf_counter()
        q = np.asarray(self._encode_queries([ex]), dtype=np.float32)[0]
        ranked = rank_range(m[r.start : r.stop] @ q, r.start, jitter, depth)  # float32, as an index would
        self._rerank(data, ranked, q, ex, scope, depth)
        return time.perf_counter() - t0


def retriever_method(name: str, retriever: Retriever, batch_size: int = 64, rerank: bool = True) -> VectorMethod:
    """A SAM retriever (the one under test, or a ``--compare`` one) as a method.

    ``rerank``: apply the retriever's query-time re-rank (provenance links, slot match) as its search does.
    """

    def queries(exs: Sequence[RetrievalExample]) -> np.ndarray:
        many = len(exs) > 1
        return retriever.encode_queries([e.state for e in exs], [e.observation for e in exs],
                                        batch_size=batch_size, progress=many, steps=[e.step for e in exs],
                                        task_starts=[e.task_start for e in exs])

    def memories(mems: Sequence[MemoryRecord]) -> np.ndarray:
        return retriever.encode_memories(mems, batch_size=batch_size, progress=True)

    slot_match = float(getattr(retriever, "slot_match", 0.0)) if rerank else 0.0
    provenance = rerank and bool(getattr(retriever, "provenance", False))
    kinds = list(getattr(retriever, "source_kinds", [])) if provenance else None
    return VectorMethod(name, queries, memories, lambda: clear_text_caches(retriever), slot_match, kinds)


def clear_text_caches(retriever: object) -> None:
    """Forget cached text vectors, so a timed query pays for its encoding as a new query would.

    SAM's frozen-BERT text cache already holds every query of the ranking pass; timing with it
    warm would report a dictionary lookup, not the encoder.
    """
    if hasattr(retriever, "clear_cache"):
        retriever.clear_cache()
        return
    net = getattr(retriever, "net", None)
    if isinstance(net, torch.nn.Module):
        for module in net.modules():
            if hasattr(module, "clear_cache"):
                module.clear_cache()


class RecencyMethod:
    name = "recency"

    def rank(self, data, scope, depth, jitter):
        return rank_recency(data.examples, scope, depth)

    def time_query(self, data, i, scope, depth, jitter):
        t0 = time.perf_counter()
        rank_recency(data.examples[i : i + 1], scope, depth)
        return time.perf_counter() - t0


class BM25Index:
    """One bm25s index over all memory texts, shared by both BM25 baselines (IDF over the whole log)."""

    def __init__(self, texts: Sequence[str]):
        import bm25s
        from bm25s.tokenization import Tokenizer

        self.tokenizer = Tokenizer(stopwords="en")
        ids = self.tokenizer.tokenize(list(texts), update_vocab=True, return_as="ids", show_progress=False)
        self.bm25 = bm25s.BM25()
        self.bm25.index(ids, show_progress=False)
        self.n = len(texts)

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every memory; words the log never uses score nothing."""
        ids = self.tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
        return np.asarray(self.bm25.get_scores(ids), dtype=np.float64)


class BM25Method:
    def __init__(self, name: str, query_text: Callable[[RetrievalExample], str], index: Callable[[], BM25Index]):
        self.name, self._query_text, self._index = name, query_text, index

    def rank(self, data, scope, depth, jitter):
        index = self._index()
        return rank_scores(lambda i: index.scores(self._query_text(data.examples[i])), data.examples, scope,
                           depth, jitter, desc=self.name)

    def time_query(self, data, i, scope, depth, jitter):
        index = self._index()
        ex = data.examples[i]
        r = ex.candidate_range(scope)
        t0 = time.perf_counter()
        s = index.scores(self._query_text(ex))
        rank_range(s[r.start : r.stop], r.start, jitter, depth)
        return time.perf_counter() - t0


def _once(make: Callable[[], object]) -> Callable[[], object]:
    """A lazily built, then shared, value (BM25 index, MiniLM, memory vectors)."""
    box: list[object] = []

    def get():
        if not box:
            box.append(make())
        return box[0]

    return get


def observation(ex: RetrievalExample) -> str:
    return ex.observation


def state_text(ex: RetrievalExample) -> str:
    return ex.state_text


def make_baselines(names: Sequence[str], data: EvalData, bert_path: str | None = None,
                   device: str | None = None, batch_size: int = 64) -> list[Method]:
    """The requested baselines; BM25 index, MiniLM and its memory vectors are built once and shared."""
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; choose from {', '.join(BASELINES)}")
    bm25_content = _once(lambda: BM25Index([m.content or m.text for m in data.memories]))
    bm25_state = _once(lambda: BM25Index([m.text for m in data.memories]))

    def load_embedder():
        from sam_model.models.bert import TextEmbedder

        return TextEmbedder(bert_path, device=device)

    embedder = _once(load_embedder)
    content_vectors = _once(lambda: embedder().encode([m.content or m.text for m in data.memories], batch_size,
                                                      progress=True))
    state_vectors = _once(lambda: embedder().encode([m.text for m in data.memories], batch_size, progress=True))

    def dense(name: str, text: Callable[[RetrievalExample], str], vectors) -> VectorMethod:
        def queries(exs):
            return embedder().encode([text(e) for e in exs], batch_size, progress=len(exs) > 1)

        return VectorMethod(name, queries, lambda _mems: vectors())

    makers: dict[str, Callable[[], Method]] = {
        "recency": RecencyMethod,
        "bm25": lambda: BM25Method("bm25", observation, bm25_content),
        "bm25-state": lambda: BM25Method("bm25-state", state_text, bm25_state),
        "dense": lambda: dense("dense", observation, content_vectors),
        "dense-state": lambda: dense("dense-state", state_text, state_vectors),
    }
    return [makers[n]() for n in names]
