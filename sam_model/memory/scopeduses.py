"""Which stored memories a scope's earlier tool calls took values from: what a search tells the store (``used``).

A scope's conversation (sam_model.data.toolstate.TranscriptState, fed by ScopedMemory's adds of chat messages or an
agent's session lines) labels each tool call as the transcript importer does: the event before the call becomes its
decision point, with ``useful_memory_steps`` the events that first said its argument values. Those are the labels
evaluate.py reads off the converted log, and the uses are computed from them by the same functions
(sam_model.data.reuse: ``earlier_uses``' rule, its ``running_uses``, over the decisions before the search's step,
``task_uses`` from its task start on; None, the start unknown: the episode's every use). So a search at a decision point is told the memories
evaluate.py's replay scores with u_m = 1 (sam_model.models.reuse), and each hit says whether it is one (Hit.used).

Per scope: only the scopes' own episode's conversation is read (ScopedMemory.episode_of), so one scope never
sees another's uses, even where their texts are the same. Nothing is kept beside the conversation, which a save
holds already (sam_model.memory.scopedfile): the uses come back with it. Agent-log events added to a scope with
their own steps (a log replayed, as evaluate.py reads it) keep their labels (``useful_memory_steps``) beside the
conversation, saved with it (ScopedMemory._labels), in the stored numbering: an episode whose steps restart (one
memory serving task after task) is stored as evaluate.py's life of the episodes, a task of its own, its labels
shifted with its steps (sam_model.memory.scopedsteps), so its uses are its own and the earlier task's stop.
Events numbered on (after a conversation's, or given without steps) keep none: their decision points' uses are
not known (ScopedMemory._unknown), and a search of a task holding one says so (:func:`uses_known`: Hit.used None
but where a memory is known used). Only the scopes' own episode's uses are read: a hit of another episode (a
user's search reaching its runs' scopes) says None.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from sam_model.data.examples import MemoryRecord
from sam_model.data.reuse import running_supplies, running_uses, task_supplies, task_uses, use_ranks
from sam_model.data.toolstate import TranscriptState


def used_steps(tracker: TranscriptState | None, base: int, logged: Mapping[int, Sequence[int]], step: int | None,
               task_start: int | None) -> dict[int, int]:
    """Memory step -> its latest use, of the scope's decisions before ``step`` (None: now, after every one) from
    ``task_start`` on: the conversation's (the tracker's event j is step ``base + j``) and those of agent-log events
    added with their own steps (``logged``: step -> labels, ScopedMemory._labels)."""
    labels, _ = _decisions(tracker, base, logged, {})
    end = max(labels, default=-1) + 1 if step is None else step
    steps = sorted(s for s in labels if s < end)
    *_, last = running_uses([*steps, end], [*(labels[s] for s in steps), []])  # the end's alone (earlier_uses' rule)
    return task_uses(tuple(last.items()), task_start)


def supplied_steps(tracker: TranscriptState | None, base: int, logged: Mapping[int, Sequence[int]],
                   needs: Mapping[int, Sequence[str]], step: int | None, task_start: int | None) -> dict[int, frozenset]:
    """Memory step -> the slots the decisions :func:`used_steps` reads needed (sam_model.data.reuse.running_supplies,
    task_supplies: the rule evaluate.py's replay reads off the log): the conversation's decision points' needed paths
    (their states' uncertainty_flags) and those of agent-log events added with their own steps (``needs``: step ->
    paths, ScopedMemory._needs; a decision of a save from before they were kept: not known, so its memories are
    lifted as "latest" lifts them)."""
    labels, flags = _decisions(tracker, base, logged, needs)
    end = max(labels, default=-1) + 1 if step is None else step
    steps = sorted(s for s in labels if s < end)
    *_, last = running_supplies([*steps, end], [*(labels[s] for s in steps), []],
                                [*(flags.get(s) for s in steps), None])
    return task_supplies(last, task_start)


def _decisions(tracker: TranscriptState | None, base: int, logged: Mapping[int, Sequence[int]],
               needs: Mapping[int, Sequence[str]]) -> tuple[dict[int, list[int]], dict[int, Sequence[str] | None]]:
    """The scope's decisions (step -> labels), the conversation's and the agent-log events', in the stored numbering,
    and each one's needed paths where known (the conversation's from its tracker's states, the log's from ``needs``)."""
    labels: dict[int, list[int]] = {s: [int(x) for x in ls] for s, ls in logged.items()}
    flags: dict[int, Sequence[str] | None] = {s: needs.get(s) for s in logged}
    for j, e in enumerate(tracker.events if tracker is not None else ()):
        labels[base + j] = [base + int(x) for x in e.get("useful_memory_steps") or ()]
        flags[base + j] = (e.get("state") or {}).get("uncertainty_flags")
    return labels, flags


def uses_known(unknown: Collection[int], step: int | None, task_start: int | None) -> bool:
    """Whether none of the ``unknown`` decision points (whose labels were dropped: ScopedMemory._unknown) lies
    before ``step`` (None: now) and at or after ``task_start`` (None: the episode's every one counts)."""
    return not any((task_start is None or d >= task_start) and (step is None or d < step) for d in unknown)


def used_ids(episode: str, steps: Mapping[int, int]) -> dict[str, int]:
    """The ids of :func:`used_steps`' memories in ``episode`` (those deleted since are passed over by the store), each
    with the rank of its latest use (sam_model.data.reuse.use_ranks, as evaluate's replay ranks them), which a model
    that scores recency (task_recency) reads."""
    ranks = use_ranks(steps)
    return {MemoryRecord.make_id(episode, s): ranks[s] for s in steps}


def supplied_ids(episode: str, slots: Mapping[int, Collection[str]]) -> dict[str, list[str]]:
    """:func:`supplied_steps`' memories by id in ``episode``, each with its slots (a search's ``supplied``)."""
    return {MemoryRecord.make_id(episode, s): sorted(v) for s, v in slots.items()}


__all__ = ["supplied_ids", "supplied_steps", "used_ids", "used_steps", "uses_known"]
