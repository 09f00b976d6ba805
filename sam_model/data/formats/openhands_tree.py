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


def left(events: list[Any], leaf: str | None = None) -> list[int]:
    """The positions of ``events`` (a V1 run, in log order) on no branch the conversation is on: not on the chain
    from its head back through ``parent_id``; [] where no event names a parent (a log of one branch). The head is
    ``leaf`` (the state's ``leaf_event_id``, as ``base_state.json`` keeps it) where it names an event of the log:
    a head moved back with no event after it (navigate_to, then the conversation saved) has the events after it on
    a branch it left, which read as the model's last turns where the last event written was taken for the head.
    Else (no state given, or one naming no event of the log: a state saved ahead of its event) the last event
    written, under which the SDK appends (a state change aside: :func:`_state_update`, which is on no branch). A ``parent_id`` on the chain naming the event itself or one written after
    it raises :class:`LaterParent`."""
    at: dict[str, int] = {}
    for i, e in enumerate(events):
        if isinstance(e, Mapping) and isinstance(e.get("id"), str):
            at.setdefault(e["id"], i)
    last = next((i for i in range(len(events) - 1, -1, -1) if not _state_update(events[i])), len(events) - 1)
    head = at.get(leaf, last) if isinstance(leaf, str) else last
    if head == last and not any(isinstance(e, Mapping) and isinstance(e.get("parent_id"), str) for e in events):
        return []
    on: set[int] = set()
    i: int | None = head
    while i is not None:  # each step goes to an earlier event, so the chain ends
        on.add(i)
        e = events[i]
        parent = e.get("parent_id") if isinstance(e, Mapping) else None
        step = at.get(parent) if isinstance(parent, str) else i - 1 if i > 0 else None
        if step is not None and step >= i:
            raise LaterParent(i, step)
        i = step
    return [i for i in range(len(events)) if i not in on and not _state_update(events[i])]


def _state_update(e: Any) -> bool:
    """Whether ``e`` is a ``ConversationStateUpdateEvent``: the SDK logs one under the head without moving the head to
    it (``ConversationState.append_event``), so the event after it names the same parent and it is on no branch,
    nor the head where it was written last (the SDK's head skips it too). It was counted as an event of a branch the
    conversation left, the import report naming a branch at every state change (execution_status running,
    finished) an agent-server logged."""
    return isinstance(e, Mapping) and e.get("kind") == "ConversationStateUpdateEvent"


class LaterParent(ValueError):
    """Event ``at`` on the chain from the last event back names as its ``parent_id`` itself or event ``parent``,
    written after it: no log the SDK writes holds one (each event names the head before it, written earlier), and
    read in log order such an event's parent would come after it, so the branch the conversation is on cannot be
    told. A cycle is one: it had ended the chain, the events before it left out as a branch the conversation had
    left (the system prompt and the user's turn among them), the import report naming a branch there was none."""

    def __init__(self, at: int, parent: int):
        self.at = at
        super().__init__(f"its parent_id names {'the event itself' if parent == at else f'event {parent}'}, "
                         "not one written before it as the SDK's history tree does (a cycle, or events out of "
                         "order), so the branch the conversation is on cannot be told")
