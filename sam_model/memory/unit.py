"""One memory of the bank: what was written, in which state, and how much it still matters.

A unit keeps the text the retriever was trained on (``memory_to_text`` with the
slots its event established), the key facts it carries (slot -> value), the
values it mentions (for linking), and a dynamic importance that decays per tick
of the bank clock and grows when the unit is retrieved and used.
"""

from __future__ import annotations

import re
import time as _time
from dataclasses import dataclass, field
from typing import Any

from sam_model.data.schema import Event, State
from sam_model.data.text import constraints_delta, content_text, memory_to_text, norm

# slot=value, the value running to a separator, a sentence end or the next slot=
_KV = re.compile(r"([A-Za-z_]\w*)\s*=\s*(.+?)(?=\s*(?:[,;|()\[\]]|\.(?:\s|$)|$|\s[A-Za-z_]\w*\s*=))")


def key_values(text: str) -> dict[str, str]:
    """``slot=value`` pairs written in a text (tool calls and results), values normalised."""
    return {k: norm(v) for k, v in _KV.findall(text) if norm(v)}


_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"


def same_value(written: str, known: str) -> bool:
    """Whether a value written as ``slot=value`` says the known one (both normalised): the same, or a number and
    the same number with one word after it, its unit ("n=2 pax" against the state's 2, "budget=500" against
    "500 eur"). :func:`key_values` reads a value up to a separator, so a unit comes with its number (and
    "hotel=Casa Azul" stays whole): compared as written, a booking restating a count conflicted with its source."""
    if written == known:
        return True
    short, long = sorted((written, known), key=len)
    return re.fullmatch(_NUMBER, short) is not None and re.fullmatch(re.escape(short) + r" [^\W\d_]+", long) is not None


def values_in(text: str, values: set[str] | list[str]) -> set[str]:
    """The values (already normalised) that occur in ``text`` as whole words (one value, one normalised text:
    sam_model.data.provenance.contains_value)."""
    hay = f" {norm(text)} "
    found = set()
    for v in values:
        if len(v) < 2:
            continue
        i = hay.find(v)
        while i >= 0:
            if not hay[i - 1].isalnum() and not hay[i + len(v)].isalnum():
                found.add(v)
                break
            i = hay.find(v, i + 1)
    return found


@dataclass
class MemoryUnit:
    """A memory with its provenance, its facts, its importance and its typed edges.

    ``importance`` is the value at tick ``stamp``; read the current value with
    :meth:`importance_at` (decay is applied lazily so a tick costs nothing).
    ``relations`` holds the outgoing edges (type -> target ids) and is maintained by
    :class:`~sam_model.memory.graph.MemoryGraph`. ``covers`` lists pruned units whose
    key facts this unit now carries.
    """

    id: str
    text: str
    kind: str
    phase: str
    episode_id: str = ""
    step: int = 0
    time: float = 0.0
    tick: int = 0
    importance: float = 1.0
    stamp: int = 0
    access_count: int = 0
    last_access: int = -1
    facts: dict[str, str] = field(default_factory=dict)
    entities: list[str] = field(default_factory=list)
    relations: dict[str, list[str]] = field(default_factory=dict)
    covers: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    content: str = ""  # content_text: the memory without state-derived parts (read by content-only retrievers)
    opens_task: bool = False  # its event was its task's first user event (MemoryRecord.opens_task); a summary never

    def importance_at(self, tick: int, decay: float) -> float:
        """Importance now: exponential decay since it was last set."""
        return self.importance * decay ** max(0, tick - self.stamp)

    def set_importance(self, value: float, tick: int) -> None:
        self.importance, self.stamp = float(value), int(tick)

    def sources(self) -> set[str]:
        """Ids whose content this unit stands for: itself and the pruned units it absorbed."""
        return {self.id, *self.covers}

    @classmethod
    def from_event(cls, event: Event, previous: State | None, tick: int = 0,
                   state: State | None = None) -> MemoryUnit:
        """A unit for ``event``; ``previous`` is the state before it (for the slots it sets).

        ``state`` overrides ``event.state`` (the agent loop passes its live state).
        """
        state = state if state is not None else event.state
        sets = constraints_delta(previous, state)
        facts = {s: norm(state.constraints[s]) for s in sets}
        when = event.meta.get("time") if isinstance(event.meta.get("time"), (int, float)) else _time.time()
        return cls(
            id=f"{event.episode_id}#{event.step}",
            text=memory_to_text(event, sets),
            content=content_text(event.kind, event.text),
            kind=event.kind,
            phase=state.phase,
            episode_id=event.episode_id,
            step=event.step,
            time=float(when),
            tick=tick,
            stamp=tick,
            facts=facts,
        )

    @classmethod
    def from_record(cls, record: Any, event: Event, tick: int = 0, state: State | None = None) -> MemoryUnit:
        """A unit for ``event`` whose text and facts are its MemoryRecord's (the slots it set in its task)."""
        state = state if state is not None else event.state
        when = event.meta.get("time") if isinstance(event.meta.get("time"), (int, float)) else _time.time()
        return cls(id=record.id, text=record.text, content=record.content, kind=event.kind, phase=state.phase,
                   episode_id=event.episode_id, step=event.step, time=float(when), tick=tick, stamp=tick,
                   facts={s: norm(state.constraints[s]) for s in record.sets},
                   opens_task=bool(getattr(record, "opens_task", False)))

    # -- persistence (the unit's vector lives in the bank's index only, and is saved as one matrix per bank)
    def to_json(self, openings: bool = True) -> dict[str, Any]:
        """The unit as a bank file holds it. ``opens_task`` only where true and ``openings`` (a bank whose model reads
        it, MemoryBank.save): a unit of a bank without it is the object written before the flag existed."""
        d = {
            "id": self.id, "text": self.text, "kind": self.kind, "phase": self.phase,
            "episode_id": self.episode_id, "step": self.step, "time": self.time, "tick": self.tick,
            "importance": self.importance, "stamp": self.stamp, "access_count": self.access_count,
            "last_access": self.last_access, "facts": self.facts, "entities": self.entities,
            "relations": self.relations, "covers": self.covers, "superseded_by": self.superseded_by,
            "content": self.content,
        }
        if openings and self.opens_task:
            d["opens_task"] = True
        return d

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> MemoryUnit:
        return cls(**obj)
