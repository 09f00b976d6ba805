"""Session stores: conversations an agent framework keeps as a folder of files, one file per message or event.

- **Strands Agents** (``FileSessionManager``, strands/session/file_session_manager.py; ``S3SessionManager`` writes
  the same keys): ``STORAGE_DIR/session_<session_id>/`` holds ``session.json``, ``agents/agent_<agent_id>/agent.json``
  and ``agents/agent_<agent_id>/messages/message_<N>.json``. A message file is a ``SessionMessage``
  (strands/types/session.py): ``{"message": <Converse message>, "message_id": N, "redact_message": <message> | null,
  "created_at", "updated_at"}``. The SDK lists the messages by the ``N`` of their names (``list_messages``), so
  ``message_10`` follows ``message_9``, and sends ``redact_message`` in place of ``message`` where a guardrail set
  it (``SessionMessage.to_message``); so they are read here. An agent's messages are one conversation (episode
  ``{session_id}/{agent_id}``, split group the session); they are Converse messages, read by the ``bedrock`` reader.
  Every stored message is read: a conversation manager's window or summary, which restores only the later ones,
  is not applied (earlier turns are what a memory keeps). ``SessionAgent`` stores no system prompt (its
  ``agent_id``, ``state``, ``conversation_manager_state``), so none is read; ``session.json``, ``agent.json`` and a
  multi-agent session's ``multi_agents/multi_agent_<id>/multi_agent.json`` (a Graph's or Swarm's state) are not
  read, nor taken for runs. A multi-agent session stores no agent's messages (the SDK gives its agents no session
  manager of their own): a folder of nothing else is refused in one line saying so (:func:`multi_agent_only`).
- **OpenHands 0.x** (its event store: openhands/events/stream.py writes each event as
  openhands/storage/locations.py ``get_conversation_event_filename`` names it): ``sessions/<sid>/events/<id>.json``
  (``users/<user_id>/conversations/<sid>/events/<id>.json`` for a user's), one ``event_to_dict`` event each, read
  in id order as one run (episode and split group ``<sid>``) by the ``openhands`` reader. The ``event_cache/``
  pages repeat the events and are not read, nor ``metadata.json``, nor ``agent_state.pkl`` (a pickle is never
  loaded).

A file that cannot be read (not UTF-8, invalid JSON, not a message) is its conversation's one-line error, naming
the file; ``--skip-bad`` skips that conversation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sam_model.data.formats.base import Conversation, TranscriptFormatError
from sam_model.io import json_shape, json_type

_STRANDS = re.compile(r"message_(\d+)\.json")  # strands FileSessionManager: MESSAGE_PREFIX + message_id + ".json"
_OPENHANDS = re.compile(r"(\d+)\.json")  # OpenHands 0.x: events/{id}.json (V1's are event-00000-<uuid>.json)
Read = Callable[[Path], Iterator[tuple[Any, str]]]


def kind_of(q: Path) -> str | None:
    """``strands`` for a Strands message file, ``openhands`` for an OpenHands 0.x event file, else None."""
    if _STRANDS.fullmatch(q.name):
        folder = q.absolute().parent  # named by the folders above it: a messages folder may be given itself
        return "strands" if folder.name == "messages" and folder.parent.name.startswith("agent_") \
            and folder.parent.parent.name == "agents" else None
    return "openhands" if _OPENHANDS.fullmatch(q.name) and q.absolute().parent.name == "events" else None


def is_state(q: Path) -> bool:
    """A Strands session's own record, no message: ``session_<id>/session.json``, ``agent_<id>/agent.json``,
    ``multi_agent_<id>/multi_agent.json`` (never a run, though a ``.json`` in the folder given)."""
    parent = q.absolute().parent.name
    return any(q.name == f"{kind}.json" and parent.startswith(f"{kind}_") for kind in ("session", "agent", "multi_agent"))


def multi_agent_only(folder: Path) -> str | None:
    """Why ``folder``, with no message or run in it, holds a Strands multi-agent session's state and nothing to read
    (None: it holds none). A Graph or Swarm persists its own progress, ``multi_agents/multi_agent_<id>/
    multi_agent.json``; its agents may have no session manager of their own (the SDK refuses one), so no agent's
    messages are stored: the session folder was refused as its ``session.json``, "not an OpenHands trajectory"."""
    states = [q for q in folder.rglob("multi_agent.json") if is_state(q) and q.is_file()]
    if not states:
        return None
    return (f"{folder} holds only Strands Agents multi-agent state ({len(states)} Graph or Swarm "
            f"state{'s' if len(states) > 1 else ''}, multi_agents/multi_agent_<id>/multi_agent.json) and no agent "
            "messages: a multi-agent session stores none (its agents have no session manager of their own); give "
            "the session folder of an agent run with a session manager (agents/agent_<id>/messages/message_<N>.json), "
            "or log each agent's messages (agent.messages, the bedrock format; sam-data formats)")


def files(folder: Path) -> list[Path]:
    """The message and event files of every session store under ``folder`` (a store's folder, one session's, or a
    messages or events folder itself), a conversation's together and in the order its framework reads them."""
    found = [q for q in folder.rglob("*.json") if kind_of(q) and q.is_file()]
    return sorted(found, key=lambda q: (str(q.parent), int(re.findall(r"\d+", q.name)[-1])))


def conversations(paths: list[Path], read: Read, id_of: Callable[[Any], str],
                  on_file: Callable[[Path], None] | None = None) -> Iterator[Conversation | TranscriptFormatError]:
    """One conversation per messages or events folder of ``paths`` (:func:`files`); ``read``: a file's (document
    or its error, where), as files.documents gives them; ``on_file``: called with each file once read."""
    start = 0
    while start < len(paths):
        folder = paths[start].parent
        end = next((i for i in range(start, len(paths)) if paths[i].parent != folder), len(paths))
        yield _conversation(paths[start:end], read, id_of, on_file)
        start = end


def _conversation(paths: list[Path], read: Read, id_of: Callable[[Any], str],
                  on_file: Callable[[Path], None] | None) -> Conversation | TranscriptFormatError:
    folder = paths[0].parent.absolute()
    strands = kind_of(paths[0]) == "strands"
    items: list[Any] = []
    bad: TranscriptFormatError | None = None
    for q in paths:
        if bad is None:
            try:
                items.append(_item(q, read, strands))
            except TranscriptFormatError as err:
                bad = err
        if on_file is not None:
            on_file(q)
    if bad is not None:
        return bad
    if strands:
        session = folder.parent.parent.parent.name.removeprefix("session_")
        agent = folder.parent.name.removeprefix("agent_")
        return Conversation(id_of(f"{session}/{agent}"), items, str(paths[0].parent), session, "bedrock")
    sid = folder.parent.name
    return Conversation(id_of(sid), items, str(paths[0].parent), sid, "openhands")


def _item(q: Path, read: Read, strands: bool) -> Any:
    """The message (Strands: as the SDK sends it) or event of one file."""
    docs = list(read(q))
    if not docs:
        raise TranscriptFormatError(str(q), f"empty file (a {'message' if strands else 'event'} file holds one; "
                                            "it was cut short: re-copy it, or delete it to read the others)")
    doc, where = docs[0]
    if isinstance(doc, TranscriptFormatError):
        raise doc
    if not strands:
        if not isinstance(doc, Mapping):
            raise TranscriptFormatError(where, f"expected one OpenHands event {{\"id\", \"action\" or "
                                               f"\"observation\", ...}}, got {json_type(doc)}")
        return doc
    if not isinstance(doc, Mapping) or not isinstance(doc.get("message"), Mapping):
        got = json_shape(doc)
        raise TranscriptFormatError(where, "not a Strands session message: expected {\"message\": {\"role\", "
                                           f"\"content\": [...]}}, \"message_id\": N, ...}} (SessionMessage); got {got}")
    redacted = doc.get("redact_message")
    if redacted is not None and not isinstance(redacted, Mapping):
        raise TranscriptFormatError(where, f"'redact_message' is {json_type(redacted)}, expected a message "
                                           "{\"role\", \"content\": [...]} or null")
    return doc["message"] if redacted is None else redacted
