"""An OpenHands V1 conversation added live whose head moved back to an event an earlier add stored.

The software-agent-sdk's history tree (formats.openhands_tree) writes the events after a head moved back
(``navigate_to``, a fork from an earlier event) under that event, each naming its ``parent_id``; the events after it
stay in the log on a branch the conversation left, which the importer leaves out. A sidecar forwarding the events
as they come gives ScopedMemory the new branch after the stored old one, and an add cannot take the old branch's
memories back: later calls would be traced to results the model no longer saw. So an add whose event goes on from a
stored event other than the last one stored is refused in one line (as a Claude Code rewind of stored turns is,
live.left_behind), and the events a sidecar adds after a refused one are refused alike. Events without
``parent_id`` (releases before the tree) go on from the event before them and are never refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FORMAT = "openhands-v1"
STATE_UPDATE = "ConversationStateUpdateEvent"  # a state-sync record, no tree node (software-agent-sdk append_event)
ADVICE = ("delete the run's memories (delete_all) and add the conversation's events again from its start in one add "
          "(the branch it is on is then read), or convert its folder (sam-data transcripts)")


def _id(e: Any) -> str | None:
    return e["id"] if isinstance(e, Mapping) and isinstance(e.get("id"), str) else None


def _state_update(e: Any) -> bool:
    return isinstance(e, Mapping) and e.get("kind") == STATE_UPDATE


def _node(e: Any) -> str | None:
    """``e``'s id where it is a node of the history tree: not a ``ConversationStateUpdateEvent``, which the SDK logs
    (the agent-server sends every state change through the event callbacks) under the head without moving the head
    to it, so the next event names the same parent, beside it, and goes on from no stored event before another."""
    return None if _state_update(e) else _id(e)


def _parent(e: Any) -> str | None:
    return e["parent_id"] if isinstance(e, Mapping) and isinstance(e.get("parent_id"), str) else None


def keep(facts: dict[str, Any], lines: list[Any]) -> None:
    """Keep in ``facts["ids"]`` the ids of the closed events, in log order (extended in place: an add reads the open
    turn's events alone, and :func:`left_behind` needs every stored one)."""
    facts.setdefault("ids", []).extend(i for e in lines if (i := _node(e)) is not None)


def left_behind(facts: Mapping[str, Any], turn: list[Any], new: list[Any]) -> str | None:
    """Why an add of V1 events is refused (None: it is not): an event of ``new`` names as its parent a stored event
    (an earlier add's, or the open turn's ``turn``) with stored events after it, which the new branch leaves."""
    last = next((i for e in reversed(turn) if (i := _node(e)) is not None), None)
    if last is None and facts.get("ids"):
        last = facts["ids"][-1]
    known = {None, last}
    for e in new:  # every parent the last stored event or one of the add's: no stored event left (the usual add,
        if _parent(e) not in known:  # read without a pass over every stored id: linear in a session added an
            break  # event at a time)
        known.add(_id(e))
    else:
        return None
    # an event sent again is kept twice: each once, where it was first stored (a resent one leaves nothing after it)
    stored = list(dict.fromkeys([*facts.get("ids", ()), *(i for e in turn if (i := _node(e)) is not None)]))
    at = {i: k for k, i in enumerate(stored)}
    for n, e in enumerate(new):
        parent = _parent(e)
        if _id(e) in at or _state_update(e):  # a stored event sent again (a sidecar's retry), or a state change
            continue  # (logged under the head, which stays): it begins no branch
        if parent is not None and at.get(parent, len(stored) - 1) < len(stored) - 1:
            gone = len(stored) - 1 - at[parent]
            return (f"data[{n}]: this OpenHands V1 event goes on from event {parent[:60]!r}, which an earlier add "
                    f"stored, leaving {gone} later stored event{'' if gone == 1 else 's'} (the first "
                    f"{stored[at[parent] + 1][:60]!r}) on a branch the conversation left (its head moved back: "
                    "navigate_to, a fork from an earlier event; the importer leaves them out): an add cannot take "
                    f"their memories back (later calls would be traced to them); {ADVICE}")
    return None


def off_refused(facts: Mapping[str, Any], new: list[Any]) -> str | None:
    """Why an add of V1 events is refused (None: it is not) because an event goes on from one an earlier add was
    refused for (``facts["refused"]``): its parent, never stored, would read as a root, the new branch read after
    the old one as if the head had not moved."""
    gone = set(facts.get("refused", ()))
    for n, e in enumerate(new):
        if gone and (parent := _parent(e)) in gone:
            return (f"data[{n}]: this OpenHands V1 event goes on from event {parent[:60]!r}, which an earlier add was "
                    "refused for (it went on from an event stored before others an add had stored: a head moved "
                    f"back), so it would be read on the branch the conversation left; {ADVICE}")
    return None


def refuse(facts: dict[str, Any], new: list[Any], turn: Sequence[Any] = ()) -> None:
    """Note in ``facts["refused"]`` the events of a refused add, so that the events after them are refused alike
    (not a stored event the add sent again, an earlier add's or the open turn's ``turn``: the events going on from it
    go on from what was stored)."""
    stored = {*facts.get("ids", ()), *(i for e in turn if (i := _id(e)) is not None)}
    facts["refused"] = [*facts.get("refused", ()), *(i for e in new if (i := _id(e)) is not None and i not in stored)]
