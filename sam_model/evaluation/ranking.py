"""Exact top-k search over each query's candidate range, shared by every method.

A query may only see the memories in ``candidate_range(scope)``: earlier steps of its own
episode, or (``global``) everything earlier in the log. Episode ranges are short, so they
are scored one query at a time; global ranges are long, so blocks of queries are scored
against chunks of memories with an exact inner product and a running top-k (numpy,
no approximation: the benchmark must not depend on index tuning).

Exact score ties (BM25 zeros, duplicate memory texts) are broken by a tiny seeded random
jitter, so no method gains or loses from the order memories happen to be stored in. Inner
products are taken in float64: float32 rounding differs between a matrix-vector and a
matrix-matrix product by more than the jitter, and would otherwise decide the ties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sam_model.data.chunks import parent_id
from sam_model.data.examples import MemoryRecord, RetrievalExample, Scope
from sam_model.data.reuse import task_supplies, task_uses, use_ranks
from sam_model.progress import progress_bar

TIE_EPS = 1e-9
QUERY_BLOCK = 256
MEMORY_CHUNK = 32768


def tie_jitter(n: int, seed: int = 0) -> np.ndarray:
    """Per-memory tie breakers in [0, TIE_EPS): far below any real score difference."""
    return np.random.default_rng(seed).random(n) * TIE_EPS


def top_positions(scores: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` best scores, best first."""
    if len(scores) > depth:
        idx = np.argpartition(-scores, depth - 1)[:depth]
    else:
        idx = np.arange(len(scores))
    return idx[np.argsort(-scores[idx], kind="stable")]


def rank_range(scores: np.ndarray, lo: int, jitter: np.ndarray, depth: int) -> np.ndarray:
    """Global positions of the best ``depth`` memories, given the scores of positions ``[lo, lo+len)``."""
    s = scores.astype(np.float64) + jitter[lo : lo + len(scores)]
    return top_positions(s, depth) + lo


def inner(memories: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Scores of one query against a slice of memory vectors, in float64 (see the module doc)."""
    return memories.astype(np.float64) @ query.astype(np.float64)


def rank_vectors(queries: np.ndarray, memories: np.ndarray, examples: Sequence[RetrievalExample],
                 scope: Scope, depth: int, jitter: np.ndarray, desc: str = "ranking") -> list[np.ndarray]:
    """Top ``depth`` candidate positions per query by inner product ``queries[i] @ memories[j]``."""
    if scope == "episode":
        out = []
        for i, ex in enumerate(progress_bar(examples, desc=desc, unit="q", leave=False)):
            r = ex.candidate_range(scope)
            out.append(rank_range(inner(memories[r.start : r.stop], queries[i]), r.start, jitter, depth))
        return out
    return _rank_global(queries, memories, examples, depth, jitter, desc)


def _rank_global(queries, memories, examples, depth, jitter, desc) -> list[np.ndarray]:
    """Blocks of queries against chunks of memories, masked at each query's cutoff."""
    out: list[np.ndarray] = []
    for b0 in progress_bar(range(0, len(examples), QUERY_BLOCK), desc=desc, unit="block", leave=False):
        block = examples[b0 : b0 + QUERY_BLOCK]
        cut = np.array([ex.cutoff for ex in block])
        q = queries[b0 : b0 + len(block)].astype(np.float64)
        best_s = np.full((len(block), 0), -np.inf)
        best_i = np.zeros((len(block), 0), dtype=np.int64)
        for c0 in range(0, int(cut.max()), MEMORY_CHUNK):
            c1 = min(c0 + MEMORY_CHUNK, int(cut.max()))
            s = q @ memories[c0:c1].astype(np.float64).T + jitter[c0:c1]
            s[np.arange(c0, c1)[None, :] >= cut[:, None]] = -np.inf
            s = np.concatenate([best_s, s], axis=1)
            idx = np.concatenate([best_i, np.broadcast_to(np.arange(c0, c1), (len(block), c1 - c0))], axis=1)
            if s.shape[1] > depth:
                part = np.argpartition(-s, depth - 1, axis=1)[:, :depth]
                s, idx = np.take_along_axis(s, part, 1), np.take_along_axis(idx, part, 1)
            best_s, best_i = s, idx
        order = np.argsort(-best_s, axis=1, kind="stable")
        for row in range(len(block)):
            o = order[row]
            out.append(best_i[row, o][np.isfinite(best_s[row, o])])
    return out


def rank_scores(score_all: Callable[[int], np.ndarray], examples: Sequence[RetrievalExample], scope: Scope,
                depth: int, jitter: np.ndarray, desc: str = "ranking") -> list[np.ndarray]:
    """Top ``depth`` positions per query for methods that score all memories at once (BM25)."""
    out = []
    for i, ex in enumerate(progress_bar(examples, desc=desc, unit="q", leave=False)):
        r = ex.candidate_range(scope)
        out.append(rank_range(score_all(i)[r.start : r.stop], r.start, jitter, depth))
    return out


def rank_recency(examples: Sequence[RetrievalExample], scope: Scope, depth: int) -> list[np.ndarray]:
    """Newest first: positions ``cutoff-1, cutoff-2, ...`` down to the range start."""
    out = []
    for ex in examples:
        r = ex.candidate_range(scope)
        out.append(np.arange(r.stop - 1, max(r.start, r.stop - depth) - 1, -1, dtype=np.int64))
    return out


TASK_KIND = "user"  # what the user said, in the agent-log spec's kinds (../shared/spec/agent-log.md)


def task_statement(memories: Sequence[MemoryRecord], ex: RetrievalExample) -> list[int]:
    """Positions of the decision's task statement: the first memory of kind ``user`` in its own episode before it,
    from its task's start on (``ex.task_start``: a life's later task has a statement of its own), with the rest of
    that event's chunks; [] when no user event comes before the decision (then ``task-first`` is recency)."""
    start = ex.task_start if ex.task_start is not None else -1
    for p in range(ex.episode_start, ex.cutoff):
        if memories[p].kind == TASK_KIND and memories[p].step >= start:
            event, end = parent_id(memories[p]), p + 1
            while end < ex.cutoff and parent_id(memories[end]) == event:
                end += 1
            return list(range(p, end))
    return []


def rank_task_first(memories: Sequence[MemoryRecord], examples: Sequence[RetrievalExample], scope: Scope,
                    depth: int) -> list[np.ndarray]:
    """The task statement first (its chunks in text order), then every other candidate newest first."""
    out = []
    for ex in examples:
        first = task_statement(memories, ex)
        ranked = rank_recency([ex], scope, depth + len(first))[0]
        if first:
            rest = ranked[(ranked < first[0]) | (ranked > first[-1])]
            ranked = np.concatenate([np.array(first, dtype=np.int64), rest])
        out.append(ranked[:depth])
    return out


def used_memories(memories: Sequence[MemoryRecord], ex: RetrievalExample) -> list[int]:
    """Positions of the decision's memories that earlier decisions of its task labelled (``ex.used``,
    sam_model.data.reuse), the latest used first, then the newest; a chunked event's chunks in text order. Its
    task's: a latest use at or after ``ex.task_start`` (a memory an earlier task used again here counts); with the
    task start unknown (None) every earlier decision of the episode's, as task-first then pins the episode's
    first statement: the baseline must not know a boundary the queries are not told."""
    last = task_uses(ex.used, ex.task_start)
    if not last:
        return []
    own = [p for p in range(ex.episode_start, ex.cutoff) if memories[p].step in last]
    return sorted(own, key=lambda p: (-last[memories[p].step], -memories[p].step, p))


def used_ranks(memories: Sequence[MemoryRecord], ex: RetrievalExample) -> dict[int, int]:
    """:func:`used_memories`' positions, each with the rank of its event's latest use among the task's used memories
    (sam_model.data.reuse.use_ranks over events, so a chunked event counts once and its chunks share its rank): what a
    reuse model's search is told (evaluation.methods.StoreReplay.used), as a live search is
    (sam_model.memory.scopeduses)."""
    ranks = use_ranks(task_uses(ex.used, ex.task_start))
    return {p: ranks[memories[p].step] for p in used_memories(memories, ex)}


def used_supplies(memories: Sequence[MemoryRecord], ex: RetrievalExample) -> dict[int, frozenset[str]]:
    """:func:`used_memories`' positions, each with the slots the task's earlier decisions that used it needed
    (sam_model.data.reuse.task_supplies of ``ex.supplied``): what a search with used_order "needed" is told
    (evaluation.methods.StoreReplay.supplied), as a live search is (sam_model.memory.scopeduses)."""
    slots = task_supplies(ex.supplied, ex.task_start)
    return {p: slots.get(memories[p].step, frozenset()) for p in used_memories(memories, ex)}


def rank_used_first(memories: Sequence[MemoryRecord], examples: Sequence[RetrievalExample], scope: Scope,
                    depth: int) -> list[np.ndarray]:
    """The memories the task's earlier decisions used first (:func:`used_memories`), then every other candidate
    newest first, as :func:`rank_task_first` puts its statement first."""
    out = []
    for ex in examples:
        first = used_memories(memories, ex)
        ranked = rank_recency([ex], scope, depth + len(first))[0]
        if first:
            ranked = np.concatenate([np.array(first, dtype=np.int64), ranked[~np.isin(ranked, first)]])
        out.append(ranked[:depth])
    return out
