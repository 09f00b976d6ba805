"""A search hit in Mem0's result shape: what ScopedMemory's search, get and get_all answer, one dict a memory.

Apart from ScopedMemory because it is a view of the one result type (sam_model.hit.Hit) that others take too: the
LangChain Document (sam_model.integrations.langchain.document) is this view as a Document, and sam-serve answers
it as JSON. A chunk's words are its own window of the memory, not the whole memory's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sam_model.data.chunks import own_words
from sam_model.hit import Hit


def _said(hit: Hit) -> str:
    """The memory's own words: its content without the ``[kind]`` prefix; of a chunk, its window of the memory's
    text (the words its span names; the tool name the encoder reads before a later window was given as the
    memory's words, sam_model.data.chunks.own_words)."""
    return own_words(hit)


def result(hit: Hit, times: Sequence[str | None] = (None, None)) -> dict[str, Any]:
    """A hit in Mem0's result shape (with ``created_at``/``updated_at``), plus what SAM knows: kind, step,
    episode and why it ranked (``why``: the Hit's scores and how it was reached). A view of the one result
    type; the LangChain Document (sam_model.integrations.langchain.document) is this view as a Document.

    The id is always the memory's, the one get/update/delete/history take: for a chunk of a long memory (a store
    with chunking) the words are the chunk's (what matched, not the whole file view) and ``chunk`` says which
    (``{"index", "span"}``: its place in the memory's text). ``opens_task`` says whether the memory opened its
    task, where the store keeps the flag (Hit.opens_task: a task_opening model ranks by it); ``used`` whether an
    earlier tool call of the query's task took a value from it, where the search was told (Hit.used: a search's
    results; a reuse model ranks by it)."""
    out = {"id": hit.memory_id, "memory": _said(hit), "score": hit.score, "metadata": dict(hit.metadata),
           "created_at": times[0], "updated_at": times[1],
           "user_id": hit.user_id, "agent_id": hit.agent_id, "run_id": hit.run_id, "kind": hit.kind,
           "step": hit.step, "episode_id": hit.episode_id,
           "why": {"index_score": hit.index_score, "rerank_bonus": hit.rerank_bonus, "linked_from": hit.linked_from,
                   "via": hit.via}}
    if hit.parent_id is not None:
        out["chunk"] = {"index": hit.chunk, "span": None if hit.span is None else list(hit.span)}
    if hit.opens_task is not None:  # a store that keeps the flag (a task_opening model's): else the result as before
        out["opens_task"] = hit.opens_task
    if hit.used is not None:  # a search's (get and get_all are no search): else the result as before
        out["used"] = hit.used
    return out


__all__ = ["result"]
