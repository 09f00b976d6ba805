"""Retrieval examples derived from a log: (state + observation) → relevant earlier events.

See "Retrieval examples derived from a log" in the agent-log spec. ``episode`` scope
searches the earlier events of the same episode; ``global`` scope searches every
event earlier in file order (the lifelong-agent setting).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from sam_model.data.lives import task_starts
from sam_model.data.provenance import adopted_values
from sam_model.data.reader import Episode
from sam_model.data.schema import Event, State
from sam_model.data.text import constraints_delta, content_text, memory_to_text, state_to_text

Scope = Literal["episode", "global"]


@dataclass(frozen=True)
class MemoryRecord:
    """An event seen as a memory: a global id (``episode_id#step``) and its text."""

    id: str
    episode_id: str
    step: int
    kind: str
    phase: str
    text: str  # memory_to_text: what the memory encoder reads
    content: str = ""  # content_text: the same memory without state-derived parts (content-only ablation)
    adopted: tuple[str, ...] = ()  # state values this event adopted without saying them (see data.provenance)
    sets: tuple[str, ...] = ()  # constraint slots this event's state set or changed

    @staticmethod
    def make_id(episode_id: str, step: int) -> str:
        return f"{episode_id}#{step}"


@dataclass(frozen=True)
class RetrievalExample:
    """One decision point: the query side and where its candidates lie.

    Candidates are a slice of the global memory order (all events of all episodes,
    episodes in file order, events by step): ``[episode_start, cutoff)`` for scope
    ``episode`` and ``[0, cutoff)`` for scope ``global``. Positions instead of id
    lists keep global scope linear in the log size.
    """

    episode_id: str
    step: int
    state: State
    observation: str
    episode_start: int
    cutoff: int
    relevant_ids: frozenset[str]
    task_start: int | None = None  # step where the decision's task began (sam_model.data.lives.task_starts)

    @property
    def state_text(self) -> str:
        return state_to_text(self.state)

    def candidate_range(self, scope: Scope = "episode") -> range:
        return range(self.episode_start if scope == "episode" else 0, self.cutoff)


def episode_memories(episode: Episode) -> list[MemoryRecord]:
    """Every event of the episode as a memory, in step order. A task of a life starts afresh: what its first
    event "sets" is compared with no earlier state, as in the episode it came from."""
    out = []
    prev: State | None = None
    starts = task_starts(episode.events)
    for i, e in enumerate(episode.events):
        out.append(memory_record(e, prev if i == 0 or starts[i] == starts[i - 1] else None))
        prev = e.state
    return out


def episode_row(episode: Episode) -> dict[str, list]:
    """An episode as the parallel lists training batches are made of (``training.batching``): what each
    event's memory and state encoders read, and its labels ([] off decision points)."""
    ev = episode.events
    return {
        "episode_id": episode.episode_id,
        "steps": [e.step for e in ev],
        "kinds": [e.kind for e in ev],
        "texts": [e.text for e in ev],
        "phases": [e.state.phase for e in ev],
        "memory_texts": [m.text for m in episode_memories(episode)],
        "state_texts": [state_to_text(e.state) for e in ev],
        "labels": [list(e.useful_memory_steps or ()) for e in ev],
        "task_starts": task_starts(ev),
    }


def memory_record(event: Event, previous_state: State | None) -> MemoryRecord:
    sets = constraints_delta(previous_state, event.state)
    return MemoryRecord(
        MemoryRecord.make_id(event.episode_id, event.step),
        event.episode_id,
        event.step,
        event.kind,
        event.state.phase,
        memory_to_text(event, sets),
        content_text(event.kind, event.text),
        adopted_values(previous_state, event.state, event.text),
        tuple(sets),
    )


def iter_examples(episodes: Iterable[Episode]) -> Iterator[RetrievalExample]:
    """Yield one example per decision point, positions counted in the global memory order."""
    offset = 0
    for ep in episodes:
        starts = task_starts(ep.events)
        for i, e in enumerate(ep.events):
            if e.is_decision_point:
                relevant = frozenset(MemoryRecord.make_id(ep.episode_id, s) for s in e.useful_memory_steps)
                yield RetrievalExample(ep.episode_id, e.step, e.state, e.text, offset, offset + i, relevant,
                                       starts[i])
        offset += len(ep.events)


def check_scope(scope: str) -> Scope:
    if scope not in ("episode", "global"):
        raise ValueError(f"scope must be 'episode' or 'global', got {scope!r}")
    return scope  # type: ignore[return-value]
