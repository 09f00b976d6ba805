"""The branch an OpenHands V1 conversation is on, where its events form a tree.

The software-agent-sdk's conversation history tree (OpenHands/software-agent-sdk#3922: ``Event.parent_id``, the
state's ``leaf_event_id``, ``navigate_to`` and ``fork(from_event_id=...)``) keeps a conversation's events in one
append-only log, each naming its parent: moving the conversation's head back to an earlier event and running on
writes the new events under it, beside the ones they replace, which stay in the log. What the model saw is the
active branch, the chain from the head back through ``parent_id`` (the SDK's ``EventLog.path_to_root``). Read in
log order, a branch left behind read as if the model had seen it, so a value only its results said labelled a
call on the other branch. An event without ``parent_id`` (every event of releases before the tree) has the event
written before it as its parent, as the SDK reads it (its effective parent), so such a log is one branch and reads
as before; a ``parent_id`` naming no event of the log (the SDK's explicit root) makes its event a root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def left(events: list[Any]) -> list[int]:
    """The positions of ``events`` (a V1 run, in log order) on no branch the conversation is on: not on the chain
    from its last event back through ``parent_id``; [] where no event names a parent (a log of one branch). The
    head is taken to be the last event written (the SDK appends under the head, so it is the head unless the
    conversation was moved back after it: ``base_state.json``'s ``leaf_event_id`` is not read). A chain that comes
    back to an event raises :class:`Cycle`."""
    if not any(isinstance(e, Mapping) and isinstance(e.get("parent_id"), str) for e in events):
        return []
    at: dict[str, int] = {}
    for i, e in enumerate(events):
        if isinstance(e, Mapping) and isinstance(e.get("id"), str):
            at.setdefault(e["id"], i)
    on: set[int] = set()
    i: int | None = len(events) - 1
    while i is not None:
        if i in on:
            raise Cycle(i)
        on.add(i)
        e = events[i]
        parent = e.get("parent_id") if isinstance(e, Mapping) else None
        i = at.get(parent) if isinstance(parent, str) else i - 1 if i > 0 else None
    return [i for i in range(len(events)) if i not in on]


class Cycle(ValueError):
    """The chain from the last event back through ``parent_id`` comes back to event ``at`` (no log the SDK writes
    holds one: each event names the head before it): the branch the conversation is on cannot be told. It had ended
    the chain, so the events before the cycle were left out as a branch the conversation left, the import report
    naming a branch there was none."""

    def __init__(self, at: int):
        self.at = at
        super().__init__("the parent_id chain from the last event back comes back to this event, a cycle the SDK's "
                         "history tree never holds (each event names one written before it), so the branch the "
                         "conversation is on cannot be told")
