"""Retrieval examples derived from a log: (state + observation) → relevant earlier events.

See "Retrieval examples derived from a log" in the agent-log spec. ``episode`` scope
searches the earlier events of the same episode; ``global`` scope searches every
event earlier in file order (the lifelong-agent setting).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sam_model.data.lives import SOURCE_KEY, USER_KIND, task_starts
from sam_model.data.provenance import adopted_values
from sam_model.data.reader import Episode
from sam_model.data.reuse import Supplies, Uses, earlier_supplies, earlier_uses
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
    task_start: int | None = None  # step where this event's task began (MemoryRecorder); provenance stays inside it
    parent: str | None = None  # a chunk's event id (sam_model.data.chunks); None: the record is the whole event
    chunk: int = 0  # the chunk's index among its event's chunks
    span: tuple[int, int] | None = None  # the chunk's [start, end) character offsets in the event text
    opens_task: bool = False  # the first user event of its task (MemoryRecorder; sam_model.models.opening)

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
    # memories earlier decisions of its episode labelled, with their latest use (sam_model.data.reuse); those of its
    # task: a latest use at or after task_start (sam_model.evaluation.ranking.used_memories), all with it unknown
    used: Uses = ()
    # per used memory, the slots the earlier decisions it was a label of needed (sam_model.data.reuse.earlier_supplies)
    supplied: Supplies = ()

    @property
    def state_text(self) -> str:
        return state_to_text(self.state)

    def candidate_range(self, scope: Scope = "episode") -> range:
        return range(self.episode_start if scope == "episode" else 0, self.cutoff)


def episode_memories(episode: Episode) -> list[MemoryRecord]:
    """Every event of the episode as a memory, in step order. A task of a life starts afresh: what its first
    event "sets" is compared with no earlier state, as in the episode it came from."""
    recorder = MemoryRecorder()
    return [recorder.record(e) for e in episode.events]


class MemoryRecorder:
    """Events given one at a time (as an agent writes them) → the MemoryRecords ``episode_memories`` makes.

    A record's "sets" and adopted values compare the event's state with the state before it *in the same task*:
    per episode the recorder keeps the last state, the task it belonged to and the step where that task began
    (what :func:`sam_model.data.lives.task_starts` says of a whole episode). A task changes where
    ``meta.source_episode`` changes (agent lives) or where :meth:`new_task` says so (an agent that starts a new
    task in the same episode). One class for the store, the memory bank and the evaluation, so all of them
    write the same memory texts and know the same task starts, and the same task openings: a record's
    ``opens_task`` says it is the first event of kind ``user`` of its task (sam_model.data.lives.task_openings
    says the same of a whole episode).
    """

    def __init__(self) -> None:
        self._last: dict[Any, list] = {}  # episode -> [state before, task key, task start step]
        self._opener: dict[Any, int] = {}  # episode -> the step of its current task's first user event
        # episodes rolled back to a row that does not say the opener (a live turn's saved row, live.row): the next
        # record takes an opener at or after its step for one of a try rolled back since (steps only grow there)
        self._unsure: set = set()

    def record(self, event: Event, state: State | None = None, commit: bool = True) -> MemoryRecord:
        """The record of ``event`` (with ``state`` in place of event.state when given), and remember it (not with
        ``commit=False``: a writer that may still fail reads the record first and commits once it cannot)."""
        if state is not None and state is not event.state:
            event = dataclasses.replace(event, state=state)
        source = event.meta.get(SOURCE_KEY) if event.meta else None
        last = self._last.get(event.episode_id)
        new = last is None or last[1] != source  # the first event of the episode, or of a task of a life
        if new:
            prev, start = None, event.step
        else:
            prev, start = last[0], last[2] if last[2] is not None else event.step
        opener = None if new else self._opener.get(event.episode_id)
        stale = event.episode_id in self._unsure and opener is not None and opener >= event.step
        opens = event.kind == USER_KIND and (opener is None or stale)
        if commit:
            self._unsure.discard(event.episode_id)
            self._last[event.episode_id] = [event.state, source, start, prev]
            if new or stale:
                self._opener.pop(event.episode_id, None)
            if opens:
                self._opener[event.episode_id] = event.step
        return memory_record(event, prev, start, opens)

    def mark(self, episode_ids: Iterable[Any]) -> dict[Any, list | None]:
        """What :meth:`rollback` needs to forget the records made after it for these episodes (a write that failed
        after its events were recorded: the retry must compare each event with the same state as the first try).
        Each row is the episode's last state, task, task start and state before, then its task opener, which the
        rollback restores too: a refused add must neither keep an opener it recorded nor lose one it dropped."""
        return {ep: ([*self._last[ep], self._opener.get(ep)] if ep in self._last else None) for ep in set(episode_ids)}

    def rollback(self, mark: dict[Any, list | None]) -> None:
        """Back to ``mark``'s rows. A row of four (saved without its opener, live.row) keeps the opener, which the
        next record drops where it is at or after that record's step (set by the try rolled back)."""
        for ep, last in mark.items():
            if last is None:
                self._last.pop(ep, None)
                self._opener.pop(ep, None)
                self._unsure.discard(ep)
                continue
            self._last[ep] = list(last[:4])
            if len(last) < 5:
                self._unsure.add(ep)
                continue
            self._unsure.discard(ep)
            if last[4] is None:
                self._opener.pop(ep, None)
            else:
                self._opener[ep] = last[4]

    def revise(self, event: Event) -> MemoryRecord:
        """The record of the episode's last event again, with its revised state (a transcript's decision point,
        sam_model.data.transcripts.TranscriptState.feed); the next event is compared with the revised state."""
        last = self._last[event.episode_id]
        last[0] = event.state
        return memory_record(event, last[3], last[2], self._opener.get(event.episode_id) == event.step)

    def new_task(self, episode_id: Any, start: int | None = None) -> None:
        """The next event of ``episode_id`` starts a task (at step ``start``, default: that event's step): it is
        compared with no earlier state."""
        last = self._last.get(episode_id)
        self._last[episode_id] = [None, None if last is None else last[1], start, None]
        self._opener.pop(episode_id, None)

    def episodes(self) -> set:
        """The episodes the recorder keeps a last state of."""
        return set(self._last)

    def forget(self, episode_id: Any) -> None:
        """Drop what the recorder keeps of an episode whose memories were all deleted (its last state holds the
        values its tool calls set): its next event starts a task, compared with no earlier state."""
        self._last.pop(episode_id, None)
        self._opener.pop(episode_id, None)

    def reopen(self, episode_id: Any, step: int | None) -> None:
        """The memory at ``step`` is being rewritten as a new user event (LangGraph's put of its key): where it
        opened the episode's current task, that event opens the task again (``opens_task``), as a rewrite in place
        keeps the flag (ScopedMemory.update); where it did not, nothing changes. Not for an event of another kind: the
        opener is then as if deleted, its place keeping the flag (the task's next user event took it, though an
        earlier user event of the task was left)."""
        if step is not None and self._opener.get(episode_id) == step:
            del self._opener[episode_id]

    def drop(self, episode_id: Any, last: Collection[str], before: Collection[str]) -> None:
        """Take constraint paths out of the episode's last state (``last``) and the state before it (``before``): the
        values a deleted tool call set (ScopedMemory.delete), which a save holds and the next record is compared
        with."""
        kept = self._last.get(episode_id)
        for n, paths in ((0, last), (3, before)) if kept is not None else ():
            state = kept[n]
            if state is not None and set(paths) & state.constraints.keys():
                kept[n] = dataclasses.replace(state, constraints={k: v for k, v in state.constraints.items()
                                                                  if k not in paths})

    def task_start(self, episode_id: Any) -> int | None:
        """The step where the episode's current task began (None before its first event)."""
        last = self._last.get(episode_id)
        return None if last is None else last[2]

    def state_dict(self, openers: bool = True) -> dict[str, Any]:
        """What the recorder keeps, JSON-able. ``openers``: with each episode's task opener (the step of its current
        task's first user event), without which a reloaded recorder flags the next user event of a task that was
        already opened (``opens_task``); a store whose model does not read the flag leaves it out, so that its save
        is the one written before the flag existed (MemoryStore.keeps_openings)."""
        def js(s: State | None):
            return s.to_json() if s is not None else None

        out: dict[str, Any] = {"last": [[ep, js(s), task, start, js(before)]
                                        for ep, (s, task, start, before) in self._last.items()]}
        if openers:
            out["opener"] = [[ep, step] for ep, step in self._opener.items()]
        return out

    @classmethod
    def from_state_dict(cls, d: dict[str, Any]) -> MemoryRecorder:
        """A recorder from :meth:`state_dict` (one saved without openers knows none: a task's next user event opens
        it)."""
        self = cls()
        for ep, s, task, start, before in d.get("last", []):
            self._last[ep] = [State.from_json(s) if s is not None else None, task, start,
                              State.from_json(before) if before is not None else None]
        for ep, step in d.get("opener", []):
            if isinstance(step, bool) or not isinstance(step, int) or step < 0:
                raise ValueError(f"recorder opener of episode {ep!r} must be a step (an integer >= 0), got {step!r}")
            self._opener[ep] = step
        return self


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
        "needed": [needed_values(e) for e in ev],
    }


def needed_values(event: Event) -> list[str]:
    """The normalised argument values a decision point's tool call needed (the importer's ``meta.needed``),
    sorted; [] elsewhere. Training with chunks labels the chunks that say one of them."""
    needed = event.meta.get("needed") if event.meta and event.is_decision_point else None
    if not isinstance(needed, dict):
        return []
    return sorted({str(v) for vs in needed.values() if isinstance(vs, list) for v in vs})


def memory_record(event: Event, previous_state: State | None, task_start: int | None = None,
                  opens_task: bool = False) -> MemoryRecord:
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
        task_start,
        opens_task=opens_task,
    )


def iter_examples(episodes: Iterable[Episode]) -> Iterator[RetrievalExample]:
    """Yield one example per decision point, positions counted in the global memory order."""
    offset = 0
    for ep in episodes:
        starts = task_starts(ep.events)
        steps, labels = [e.step for e in ep.events], [e.useful_memory_steps or () for e in ep.events]
        used = earlier_uses(steps, labels)
        supplied = earlier_supplies(steps, labels, [e.state.uncertainty_flags for e in ep.events])
        for i, e in enumerate(ep.events):
            if e.is_decision_point:
                relevant = frozenset(MemoryRecord.make_id(ep.episode_id, s) for s in e.useful_memory_steps)
                yield RetrievalExample(ep.episode_id, e.step, e.state, e.text, offset, offset + i, relevant,
                                       starts[i], used[i], supplied[i])
        offset += len(ep.events)


def check_scope(scope: str) -> Scope:
    if scope not in ("episode", "global"):
        raise ValueError(f"scope must be 'episode' or 'global', got {scope!r}")
    return scope  # type: ignore[return-value]
