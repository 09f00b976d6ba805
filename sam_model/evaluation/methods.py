"""The methods a benchmark compares: the SAM retriever and the baselines it must beat.

Every method turns a query (state + observation) into a ranking of its candidate memories.
- ``sam`` and ``--compare`` retrievers: exported SAM retrievers, searched through the one memory store
  (sam_model.store.MemoryStore) exactly as a deployment searches: the log's memories are written in order and
  each decision point searches what was written before it, with the store's re-rank (``sam-index-only`` shows
  the index order alone);
- ``recency``: newest first, what a plain sliding window gives;
- ``task-first``: the task as the user gave it first, then newest first: a sliding window that pins the
  conversation's opening request, as many agents keep it in their prompt (:class:`TaskFirstMethod`);
- ``used-first``: the memories the task's earlier tool calls took values from (their labels), latest use first,
  then newest first (:class:`UsedFirstMethod`);
- ``NAME+used`` / ``NAME+used-latest`` (evaluate's ``plus_used``): a SAM retriever's ranking with those same
  memories first, in the retriever's own order / by their latest use, searched through the store's ``used_order``
  as a live agent's search is (:class:`StoreMethod`);
- ``bm25`` / ``bm25-state``: lexical search (bm25s) with the observation / the state as text;
- ``dense`` / ``dense-state``: untrained MiniLM sentence vectors of the observation / the state as
  text against the memory texts, i.e. content-only vector search as most agent memories do it.

The content-only baselines (``bm25``, ``dense``) search the memories' plain content
(MemoryRecord.content); the state baselines search the memory text SAM reads
(MemoryRecord.text, which names the slots the event set), so neither side gets state
information the other lacks.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import torch

from sam_model.data.examples import MemoryRecord, RetrievalExample, Scope
from sam_model.encoding import Encoder
from sam_model.evaluation.data import EvalData
from sam_model.evaluation.ranking import (
    rank_range,
    rank_recency,
    rank_scores,
    rank_task_first,
    rank_used_first,
    rank_vectors,
    used_ranks,
    used_supplies,
)
from sam_model.store import MemoryStore, reads_reuse
from sam_model.storeconfig import StoreConfig

# evaluate's plus_used rows, by the store's used_order
USED_SUFFIXES = {"model": "+used", "latest": "+used-latest", "needed": "+used-needed"}
BASELINES = ("recency", "task-first", "used-first", "bm25", "bm25-state", "dense", "dense-state")


class Method(Protocol):
    name: str

    def rank(self, data: EvalData, scope: Scope, depth: int, jitter: np.ndarray) -> list[np.ndarray]:
        """Top ``depth`` candidate positions per example, best first."""

    def time_query(self, data: EvalData, i: int, scope: Scope, depth: int, jitter: np.ndarray) -> float:
        """Seconds for one query alone: query-side encoding plus scoring of its candidates."""


class VectorMethod:
    """A baseline whose score is an inner product of a query vector and a memory vector (no re-rank)."""

    reranks = False

    def __init__(self, name: str, encode_queries: Callable[[Sequence[RetrievalExample]], np.ndarray],
                 encode_memories: Callable[[Sequence[MemoryRecord]], np.ndarray],
                 before_timing: Callable[[], None] | None = None):
        self.name = name
        self._encode_queries = encode_queries
        self._encode_memories = encode_memories
        self._before_timing = before_timing
        self._memory_vectors: np.ndarray | None = None

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
        return rank_vectors(q, m, data.examples, scope, depth, jitter, desc=self.name)

    def time_query(self, data, i, scope, depth, jitter):
        m = self.memory_vectors(data)
        ex = data.examples[i]
        r = ex.candidate_range(scope)
        if self._before_timing is not None:
            self._before_timing()
        t0 = time.perf_counter()
        q = np.asarray(self._encode_queries([ex]), dtype=np.float32)[0]
        rank_range(m[r.start : r.stop] @ q, r.start, jitter, depth)  # float32, as an index would
        return time.perf_counter() - t0


class StoreReplay:
    """A log replayed through a MemoryStore as an agent would write and search it, shared by the re-ranked and
    the index-only rankings of one retriever (the vectors are encoded once, in batches).

    Memories are added in the log's order; each decision point searches, before its own event is written,
    the store filtered to its episode (scope ``episode``) or all of it (``global``), at its place (its episode and
    step: the deployed search's rule, which leaves out what is at or after it, here nothing yet written). Queries carry their step
    and task start (the learned time features). The store's settings are the retriever's, with an exact flat
    index (the benchmark must not depend on index tuning) and no chunking of its own: the evaluation's
    ``chunking`` decides what every method searches (the memories given are whole events, or already chunks),
    so a model exported with ``store.chunking`` is measured on whole memories too.
    """

    def __init__(self, encoder: Encoder, config: StoreConfig, batch_size: int = 64, progress: bool = True):
        self.encoder, self.batch_size, self.progress = encoder, batch_size, progress  # progress: encoding bars
        self.config = dataclasses.replace(config, index={"kind": "flat", "device": "cpu"}, chunking=None)
        self.store: MemoryStore | None = None
        self._rankings: dict[tuple, tuple[list, dict[bool, list[np.ndarray]]]] = {}
        self._vectors: tuple[list, np.ndarray] | None = None  # (the memories, their vectors): encoded once
        self._queries: tuple[tuple, np.ndarray] | None = None  # (the decisions, their vectors): another replay of
        # the same decisions (a used_order's) encodes them once

    @property
    def reranks(self) -> bool:
        return MemoryStore(self.encoder, self.config).reranks

    def encode_queries(self, exs: Sequence[RetrievalExample]) -> np.ndarray:
        return self.encoder.encode_queries([e.state for e in exs], [e.observation for e in exs],
                                           batch_size=self.batch_size, progress=self.progress and len(exs) > 1,
                                           steps=[e.step for e in exs], task_starts=[e.task_start for e in exs])

    def reuses(self) -> bool:
        """Whether the model scores reuse within a task (``task_reuse``, sam_model.models.reuse): its memory
        vectors end in u_m, 0 as encoded, which each decision's search scores as 1 for the memories it is told."""
        return reads_reuse(self.encoder)

    def used(self, data: EvalData, ex: RetrievalExample, used_order: str | None = None) -> dict | None:
        """The ids of the memories the decision's task's earlier calls took values from (ranking.used_memories),
        each with the rank of its latest use (ranking.used_ranks), which its search is told (MemoryStore.search_vector's
        ``used``), as a deployment's ScopedMemory tells its own (sam_model.memory.scopeduses); None for a model that
        does not score them, unless the search orders them (``used_order``, or the store's own
        ``StoreConfig.used_order``, which a plain row searches with, as the deployed store does)."""
        if not (self.reuses() or used_order or self.config.used_order):
            return None
        return {data.memories[p].id: k for p, k in used_ranks(data.memories, ex).items()}

    def supplied(self, data: EvalData, ex: RetrievalExample, used: dict | None,
                 used_order: str | None = None) -> dict[str, list[str]] | None:
        """Each used memory's id with the slots the earlier decisions of the task it was a label of needed
        (ranking.used_supplies), which a search ordered "needed" (``used_order``, or the store's own) is told
        (MemoryStore.search_vector's ``supplied``), as a deployment's ScopedMemory tells its own
        (sam_model.memory.scopeduses); None for a search told no uses or ordered otherwise (it reads none)."""
        if used is None or (used_order or self.config.used_order) != "needed":
            return None
        return {data.memories[p].id: sorted(slots) for p, slots in used_supplies(data.memories, ex).items()}

    def rankings(self, data: EvalData, scope: Scope, depth: int,
                 used_order: str | None = None) -> dict[bool, list[np.ndarray]]:
        """Both rankings (with and without the re-rank) of ``data``'s decisions, replayed once per decision set,
        ``used_order`` and lexical weight (the store's, MemoryStore.search_vector): the key names the decisions, not the EvalData object
        (a subset built and freed for a deeper search, evaluation.run.deepen, could reuse a freed object's id and be
        handed another subset's rankings)."""
        key = (id(data.memories), tuple((e.episode_id, e.step) for e in data.examples), scope, depth, used_order,
               self.config.lexical, self.config.lexical_per_query)  # a lexical weight's replay (evaluation.run.score_settings) is its own
        if key not in self._rankings:  # the memories list is kept with its rankings, so its id stays its own
            self._rankings[key] = (data.memories, self._replay(data, scope, depth, used_order))
        return self._rankings[key][1]

    def _replay(self, data: EvalData, scope: Scope, depth: int,
                used_order: str | None) -> dict[bool, list[np.ndarray]]:
        if self._vectors is None or self._vectors[0] is not data.memories:  # a deeper search: the same vectors
            self._vectors = (data.memories, np.asarray(self.encoder.encode_memories(data.memories, self.batch_size,
                                                                                    self.progress), dtype=np.float32))
        m = self._vectors[1]
        decisions = tuple((e.episode_id, e.step) for e in data.examples)
        if self._queries is None or self._queries[0] != decisions:
            self._queries = (decisions, np.asarray(self.encode_queries(data.examples), dtype=np.float32))
        q = self._queries[1]
        store = MemoryStore(self.encoder, self.config, m.shape[1])
        pos = {mem.id: i for i, mem in enumerate(data.memories)}
        out: dict[bool, list[np.ndarray]] = {True: [], False: []}
        written = 0
        for i, ex in enumerate(data.examples):  # in log order (iter_examples)
            if ex.cutoff > written:
                store.add(data.memories[written : ex.cutoff], m[written : ex.cutoff])
                written = ex.cutoff
            used = self.used(data, ex, used_order)  # u_m(t) = 1 where the task's earlier calls used the memory
            supplied = self.supplied(data, ex, used, used_order)
            episode = ex.episode_id if scope == "episode" else None
            for rerank in ((True, False) if store.reranks else (False,)):
                hits = store.search_vector(q[i], depth, ex.state.uncertainty_flags, episode_id=episode, rerank=rerank,
                                           query_text=ex.state_text, before=(ex.episode_id, ex.step), used=used,
                                           used_order=used_order,  # None: the store's own, as deployed
                                           supplied=supplied)
                out[rerank].append(np.array([pos[h.id] for h in hits], dtype=np.int64))
        if not store.reranks:
            out[True] = out[False]
        if written < len(data.memories):
            store.add(data.memories[written:], m[written:])
        self.store = store
        return out


class StoreMethod:
    """A SAM retriever as a benchmark method: its rankings from a :class:`StoreReplay` of the log. ``used_order``
    (``NAME+used``: "model", ``NAME+used-latest``: "latest"): each search puts the memories the task's earlier calls
    took values from (:func:`~sam_model.evaluation.ranking.used_memories`, ``used-first``'s set) first, by the
    store's own option (MemoryStore.search_vector's ``used_order``, sam_model.data.reuse.used_first): what a live
    store or agent given that option returns, one code path. ``searches_as``: the method whose memories (a
    ``--compare`` model's own chunks) it searches."""

    def __init__(self, name: str, replay: StoreReplay, rerank: bool = True, before_timing=None,
                 used_order: str | None = None, searches_as: str | None = None):
        self.name, self.replay, self.rerank, self._before_timing = name, replay, rerank, before_timing
        self.used_order, self.searches_as = used_order, searches_as or name

    @property
    def reranks(self) -> bool:
        return self.rerank and self.replay.reranks

    def ordered(self, used_order: str) -> StoreMethod:
        """This retriever with its used memories first (``used_order``), named ``NAME+used`` or ``NAME+used-latest``."""
        suffix = USED_SUFFIXES[used_order]
        return StoreMethod(f"{self.name}{suffix}", self.replay, self.rerank, self._before_timing, used_order, self.name)

    def rank(self, data, scope, depth, jitter):
        return self.replay.rankings(data, scope, depth, self.used_order)[self.rerank]

    def time_query(self, data, i, scope, depth, jitter):
        """One query encoded alone and searched in the store (which by now holds the whole log)."""
        self.replay.rankings(data, scope, depth, self.used_order)
        ex = data.examples[i]
        if self._before_timing is not None:
            self._before_timing()
        t0 = time.perf_counter()
        q = self.replay.encode_queries([ex])[0]
        self.replay.store.search_vector(q, depth, ex.state.uncertainty_flags,
                                        episode_id=ex.episode_id if scope == "episode" else None, rerank=self.rerank,
                                        query_text=ex.state_text, before=(ex.episode_id, ex.step),
                                        used=(used := self.replay.used(data, ex, self.used_order)),
                                        used_order=self.used_order,
                                        supplied=self.replay.supplied(data, ex, used, self.used_order))
        return time.perf_counter() - t0


def retriever_methods(name: str, retriever, batch_size: int = 64, index_only: str | None = None,
                      progress: bool = True) -> list[StoreMethod]:
    """A SAM retriever (the one under test, or a ``--compare`` one) as a method, searched through the store
    with its settings (``retriever.store.config``; a bare encoder gets no re-rank), and, named ``index_only``,
    the same vectors without the re-rank when the retriever has one. ``progress``: bars while memories and queries
    are encoded (off where a caller says its own progress line)."""
    encoder = getattr(retriever, "encoder", retriever)
    store = getattr(retriever, "store", None)
    config = store.config if isinstance(store, MemoryStore) else StoreConfig(provenance=False)
    replay = StoreReplay(encoder, config, batch_size, progress)
    methods = [StoreMethod(name, replay, True, lambda: clear_text_caches(retriever))]
    if index_only and replay.reranks:
        methods.append(StoreMethod(index_only, replay, False, lambda: clear_text_caches(retriever)))
    return methods


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


class RuleMethod:
    """A ranking rule over the log's memories and examples, no model: ``rule(memories, examples, scope, depth)`` ranks
    every decision, and a query's time is the rule over that decision alone. task-first and used-first are such
    rules (one ranking function each in sam_model.evaluation.ranking), so they share this shape, written once."""

    name: str
    rule: Callable[[Sequence[MemoryRecord], Sequence[RetrievalExample], Scope, int], list[np.ndarray]]

    def rank(self, data, scope, depth, jitter):
        return self.rule(data.memories, data.examples, scope, depth)

    def time_query(self, data, i, scope, depth, jitter):
        t0 = time.perf_counter()
        self.rule(data.memories, data.examples[i : i + 1], scope, depth)
        return time.perf_counter() - t0


class TaskFirstMethod(RuleMethod):
    """The task statement first, then every other memory newest first: a rule with no model.

    The task statement is the decision's first earlier event of kind ``user`` (the agent-log spec's kind for what
    the user said) in its own episode, from its task's start on (a life's later task has its own); a chunked event
    is all its chunks, in text order. The ranking is recency's with that event moved to the top: a memory newer
    than it moves down one place (one per chunk of it), an older one (an earlier task's, in a life) stays. So a
    decision's reciprocal rank is 1 when the statement is useful, else 1 / (r + 1) with r recency's rank of its
    first useful memory (r when that memory is older than the statement). A decision with no earlier user event
    is ranked as recency ranks it.

    Why: a tool agent's values come from two places, what it just saw and what it was asked. The opening request
    (the issue, the booking wish) holds many of the names and ids later calls need, and no lexical or vector
    search ranks it first for a query that does not repeat its words. An agent that keeps the task in its prompt
    and a window of recent turns gets this ranking for free, so a learned retriever must beat it to earn its cost.

    Where the first ``user`` event is not the task: a Claude Code session that opens with a slash command or its
    local-command caveat (user entries Claude Code writes), where that event is pinned instead; a dialogue whose
    user changes the task without a new episode (SGD's second intent), where the statement is the first request.
    Codex's AGENTS.md and environment messages are policy, no event, so its first user event is the request.
    """

    name = "task-first"
    rule = staticmethod(rank_task_first)


class UsedFirstMethod(RuleMethod):
    """The memories earlier decisions of the task took values from first, the latest used first, then every other
    memory newest first: a rule with no model.

    A decision point's labels trace its call's argument values back to the events that first said them, so once
    a call is made its labels are known (sam_model.data.reuse); a memory that supplied a value is likely to supply
    again (an issue statement many calls, a user id message one). The used memories go first, ordered by their
    latest use (then newest), and the rest keep recency's order, as ``task-first`` pins its statement. A decision
    with no earlier labelled decision in its task is ranked as recency ranks it. Only earlier decisions count:
    never the decision's own labels (what it is scored on) or a later one's.
    """

    name = "used-first"
    rule = staticmethod(rank_used_first)


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
                   device: str | None = None, batch_size: int = 64, text_cache: str | None = None) -> list[Method]:
    """The requested baselines; BM25 index, MiniLM and its memory vectors are built once and shared
    (``text_cache``: MiniLM's vectors are read from and added to the package's text-vector cache)."""
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; choose from {', '.join(BASELINES)}")
    bm25_content = _once(lambda: BM25Index([m.content or m.text for m in data.memories]))
    bm25_state = _once(lambda: BM25Index([m.text for m in data.memories]))

    def load_embedder():
        from sam_model.models.text_encoder import TextEmbedder

        return TextEmbedder(bert_path, device=device, cache_dir=text_cache)

    def memory_vectors(texts: list[str]) -> np.ndarray:
        out = embedder().encode(texts, batch_size, progress=True)
        embedder().save_cache()
        return out

    embedder = _once(load_embedder)
    content_vectors = _once(lambda: memory_vectors([m.content or m.text for m in data.memories]))
    state_vectors = _once(lambda: memory_vectors([m.text for m in data.memories]))

    def dense(name: str, text: Callable[[RetrievalExample], str], vectors) -> VectorMethod:
        def queries(exs):
            return embedder().encode([text(e) for e in exs], batch_size, progress=len(exs) > 1)

        return VectorMethod(name, queries, lambda _mems: vectors())

    makers: dict[str, Callable[[], Method]] = {
        "recency": RecencyMethod,
        "task-first": TaskFirstMethod,
        "used-first": UsedFirstMethod,
        "bm25": lambda: BM25Method("bm25", observation, bm25_content),
        "bm25-state": lambda: BM25Method("bm25-state", state_text, bm25_state),
        "dense": lambda: dense("dense", observation, content_vectors),
        "dense-state": lambda: dense("dense-state", state_text, state_vectors),
    }
    return [makers[n]() for n in names]
