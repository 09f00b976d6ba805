"""Hit: one search result and why it ranked where it did.

Apart from the store because every search returns it and many read it without searching: the memory bank's
search, ScopedMemory's Mem0-style dicts and the LangChain Documents are views of one (``from sam_model import Hit``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hit:
    """A search result: the memory and why it ranked where it did.

    ``score`` is what the ranking used, ``index_score + rerank_bonus``; ``index_score`` the inner product q·m
    (float64 over the stored vectors); ``rerank_bonus`` the needed-slot match (plus a caller's prior, e.g. the
    bank's importance); ``linked_from`` the hit whose provenance link placed this memory right after it (then
    its score may exceed the hit above it). ``via`` says how it was reached: ``"index"`` (the vector search),
    ``"link"`` (a provenance link from ``linked_from``), ``"graph"`` (the memory bank's expansion along ``edge``:
    edge type and the id it was reached from; then ``score`` is the path's score, see MemoryBank.search) or
    ``"id"`` (looked up, not searched: ``get``/``get_all``, scores 0). Every search returns Hits: the memory
    bank's too (its unit is ``bank.unit(hit.id)``); Mem0-style dicts (sam_model.memory.scopedresult.result) and
    LangChain Documents (sam_model.integrations.langchain) are views of one.

    A chunk of a long memory (``StoreConfig.chunking``) says which: ``parent_id`` is the memory (event) it
    belongs to, ``chunk`` its index and ``span`` its [start, end) characters in the event text; ``text`` is
    the chunk's text. A whole memory has ``parent_id`` None.
    """

    id: str | int
    text: str
    content: str
    kind: str
    phase: str
    step: int | None
    episode_id: str | None
    score: float
    index_score: float
    rerank_bonus: float = 0.0
    linked_from: str | int | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    via: str = "index"
    edge: tuple[str, str | int] | None = None
    parent_id: str | int | None = None
    chunk: int = 0
    span: tuple[int, int] | None = None
    # whether the memory opened its task (MemoryRecord.opens_task), where the store keeps the flag
    # (MemoryStore.keeps_openings, every memory's known); None where it does not say
    opens_task: bool | None = None
    # whether an earlier tool call of the query's task took a value from the memory (sam_model.data.reuse: its
    # conversation's labels, as evaluate.py reads a log's), where the search was told (ScopedMemory always; a
    # MemoryStore search given ``used``); None where it was not, and in ScopedMemory where the uses are not known
    # (a memory of another episode than the query's, a task with labels dropped: sam_model.memory.scopeduses). What a reuse model scores as u_m = 1, and what an
    # agent or a used-first ordering can read whatever the model
    used: bool | None = None

    @property
    def memory_id(self) -> str | int:
        """The memory (event) this hit is of: its parent for a chunk, else its own id."""
        return self.id if self.parent_id is None else self.parent_id

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


__all__ = ["Hit"]
