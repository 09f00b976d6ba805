"""Google Agent Development Kit (google-adk) sessions: what ``session.model_dump_json()`` writes.

A session ``{"id", "app_name", "user_id", "state", "events": [...], "last_update_time"}`` (``by_alias=True``: the
camelCase ``appName``, ``userId``, ``invocationId``, ... of ADK's own REST API; the SQL session services keep each
event as ``event.model_dump_json(exclude_none=True)``: both read alike) holds the conversation as events ``{"author",
"invocation_id", "content": {"role", "parts"}, "actions", "partial"?, ...}``. An event's ``content`` is a Gemini
content, so the events' contents are read by the Gemini reader (:mod:`.gemini`: text, ``function_call`` /
``function_response`` parts, the one code path), each chat message's source its event. The ``author`` is ``user`` or
the agent that wrote it: in a multi-agent app (an agent's ``sub_agents``) every agent's events are the assistant's, a
``transfer_to_agent`` call and its result read as any call (the agent the conversation moved to its argument); a
function result event is an agent's too, its content's role ``user``. An event without content (a state change
alone, an agent's end) is counted, not read; so is a ``partial`` event (a streamed chunk: ADK keeps its whole
response as an event of its own) and an event's ``actions``: its ``state_delta`` and ``artifact_delta`` are the
app's bookkeeping, no words, and a ``compaction`` summarizes events the session still holds. A rewind
(``actions.rewind_before_invocation_id``) drops that event and those from the invocation it names on, as ADK's
``_apply_rewinds`` does before each model call (counted). SAM's own recall, a ``load_memory`` call that
SAMMemoryService answered (ADK's ``{"result": {"memories": [...]}}`` of SAM's MemoryEntry items, :func:`is_recall`),
reads as the marker :mod:`.recalls` stores in a recall's place, its call kept: its memories are the store's already
(read as a result, each recall stored them again, the training data's labels pointing at SAM's own recall); an app's
own ``load_memory`` tool, or another memory service's answer, reads as any result. Told by the session's owner too:
each entry's id names a scope of the session's user and app (``owner``), as SAM's ids of that user's search do; an
app's entries imitating SAM's shape, or SAM's entries relayed of another user, or events read without their session,
read as the app's result, its words kept. The session holds no system instruction (it is the
agent's ``instruction``, kept in code): a ``system`` (or ``system_instruction``) field added beside the events is
the policy, ``{**session.model_dump(mode="json"), "system": agent.instruction}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from sam_model.data.formats import gemini
from sam_model.data.formats.base import Chat, TranscriptFormatError, each
from sam_model.data.formats.recalls import recalled
from sam_model.io import json_type
from sam_model.limits import episode_of

# what an event saved alone, or a session dump without its app and user, is refused with (they name no session)
NOT_SESSION = ("Google ADK events without their session: the adk reader reads a session as session.model_dump_json() "
               "writes it, its events beside its id, app_name and user_id; save the session (a session service's "
               "get_session), not its events")
_CONTENT = re.compile(r"(?<=, )content (\d+)")  # a Gemini reader's error names a content: named by its event
LOAD = "load_memory"  # ADK's tool that returns search_memory's entries to the model as its result
# what SAMMemoryService's MemoryEntry says beside its words (integrations.adk._entry: custom_metadata, the entry's
# fields), which another memory service's entries, or an app's own load_memory's answer, do not all say
ENTRY_METADATA, ENTRY = frozenset({"score", "session", "step"}), frozenset({"content", "custom_metadata", "id",
                                                                          "author", "timestamp"})


def _get(m: Mapping[str, Any], snake: str) -> Any:
    """A field in ADK's snake_case or its camelCase alias (``by_alias=True``)."""
    return m[snake] if snake in m else m.get(gemini.camel(snake))


def is_event(m: Any) -> bool:
    """An ADK event: an ``author`` and an ``invocation_id`` (camelCase too), no role. No other format's message holds
    both."""
    return (isinstance(m, Mapping) and "role" not in m and isinstance(m.get("author"), str)
            and ("invocation_id" in m or "invocationId" in m))


def is_session(doc: Any) -> bool:
    """A session's dump: its ``events`` list beside its ``app_name`` and ``user_id`` (camelCase too)."""
    return (isinstance(doc, Mapping) and isinstance(doc.get("events"), list)
            and any(k in doc for k in ("app_name", "appName")) and any(k in doc for k in ("user_id", "userId")))


def owner(session: Mapping[str, Any]) -> tuple[str, str] | None:
    """A session dump's (user_id, app_name), snake_case or camelCase: whose memories are SAM's recall in it
    (:func:`is_recall`). One that is no string (no user SAMMemoryService stores): None, no entry SAM's."""
    user, app = _get(session, "user_id"), _get(session, "app_name")
    return (user, app) if isinstance(user, str) and isinstance(app, str) else None


def sniff(messages: list[Any]) -> bool:
    return any(is_event(m) for m in messages)


def policy(session: Mapping[str, Any], where: str) -> str:
    """The policy a session dump was given beside its events: ``system`` (a string), else ``system_instruction``
    as the Gemini reader reads it."""
    system = session.get("system")
    if system is not None and not isinstance(system, str):
        raise TranscriptFormatError(f"{where}, system", f"is {json_type(system)}, expected the agent's instruction "
                                                        "(a string)")
    return system or gemini.policy(session, where)


def live(events: list[Any]) -> list[int]:
    """The indexes of the events a rewind left (ADK's ``_apply_rewinds``): walking back, an event whose actions say
    ``rewind_before_invocation_id`` X drops itself and every event back to X's first (an X not found: itself)."""
    first: dict[str, int] = {}
    for i, e in enumerate(events):
        inv = _get(e, "invocation_id") if isinstance(e, Mapping) else None
        if isinstance(inv, str) and inv:
            first.setdefault(inv, i)
    kept, i = [], len(events) - 1
    while i >= 0:
        e = events[i]
        actions = _get(e, "actions") if isinstance(e, Mapping) else None
        rewind = _get(actions, "rewind_before_invocation_id") if isinstance(actions, Mapping) else None
        if rewind:
            i = min(i, first.get(rewind, i))
        else:
            kept.append(i)
        i -= 1
    return kept[::-1]


# how a session's load_memory results are read (to_chat's ``recalls``): "owned", SAM's recall where its entries have
# SAM's shape and ids of the session's user and app (CONVERSION_VERSION 226 on); "shaped", where they have SAM's
# shape, whoever's ids (224 and 225: what a session stored then holds); "none", every one a result (before 224)
Recalls = Literal["owned", "shaped", "none"]


def is_recall(response: Any, owner: tuple[str, str] | None, *, shaped: bool = False) -> bool:
    """Whether a ``load_memory`` function_response's ``response`` is SAM's recall: ADK's ``{"result": {"memories":
    [...]}}`` (its LoadMemoryResponse, wrapped as ADK wraps a result that is no dict), each memory a MemoryEntry as
    SAMMemoryService writes it: one text part of a user or model content, its custom_metadata SAM's score (always
    one), session and step, its id the memory's (``...#STEP``, its episode the session's), and that id a scope of
    ``owner``, the session's (user_id, app_name): SAM's search of the session's user and app returns no other, so an
    app's own service imitating SAM's shape, or an app relaying another user's (or no user's) memories, is the app's
    result, its words kept. ``owner`` None (events read without their session): no entry is told SAM's, unless
    ``shaped`` (the reading of 224 and 225, by shape alone). An empty list says no one's memories, and reads as it
    was."""
    if not (isinstance(response, Mapping) and set(response) == {"result"} and isinstance(response["result"], Mapping)
            and set(response["result"]) == {"memories"} and isinstance(response["result"]["memories"], list)):
        return False
    if owner is None and not shaped:
        return False
    entries = response["result"]["memories"]
    return bool(entries) and all(_sam_entry(e) and (shaped or _owned(e["id"], owner)) for e in entries)


def _owned(memory_id: str, owner: tuple[str, str] | None) -> bool:
    """Whether a memory's id (``episode#step``) names a scope of ``owner`` (user_id, app_name): SAM's episode is its
    scopes joined by '/' (ScopedMemory.episode_of: ``user/app``, or ``user/app/session``), no scope holding a '/'."""
    if owner is None:
        return False
    episode, base = memory_id.rsplit("#", 1)[0], episode_of(owner[0], owner[1])
    return episode == base or episode.startswith(f"{base}/") and "/" not in episode.removeprefix(f"{base}/")


def _sam_entry(e: Any) -> bool:
    """Whether ``e`` (a MemoryEntry's dump, its nulls kept or not, by alias or not) has the shape SAMMemoryService
    writes (whose scope its id names: :func:`_owned`)."""
    if not isinstance(e, Mapping) or not set(e) <= ENTRY or not isinstance(e.get("content"), Mapping):
        return False
    meta, content, step = e.get("custom_metadata"), e["content"], None
    if isinstance(meta, Mapping) and set(meta) <= ENTRY_METADATA:
        step = meta.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or not isinstance(e.get("id"), str) \
            or not e["id"].endswith(f"#{step}") or not _number(meta.get("score")) or not _of(e["id"], meta):
        return False
    parts = content.get("parts")
    if content.get("role") not in ("user", "model") or not isinstance(parts, list) or len(parts) != 1:
        return False
    try:
        return gemini.part(parts[0], "a memory")[0] == "text"
    except TranscriptFormatError:
        return False


def _number(x: Any) -> bool:
    """A search's score: SAM's hits always have one (a float), where an app's own entries of a step had none and
    were read as SAM's recall, their words dropped."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _of(memory_id: str, meta: Mapping[str, Any]) -> bool:
    """Whether a memory's id (``episode#step``) is of the session its custom_metadata names: SAM's episode is its
    scopes joined by '/', the session (ADK's session id, the run scope) last; an entry of another session's id is an
    app's own. No session named (a memory of no session, exclude_none): any id."""
    session = meta.get("session")
    if session is None:
        return True
    episode = memory_id.rsplit("#", 1)[0]
    return isinstance(session, str) and (episode == session or episode.endswith(f"/{session}"))


def _unrecalled(content: Mapping[str, Any], owner: tuple[str, str] | None, shaped: bool) -> Mapping[str, Any]:
    """``content`` with each of its load_memory results that is SAM's recall (:func:`is_recall`) as the marker
    (recalls.recalled), its name and id kept, so its call is answered; the rest as it was."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return content
    out, changed = [], False
    for p in parts:
        key = next((k for k in ("function_response", "functionResponse") if isinstance(p, Mapping)
                    and isinstance(p.get(k), Mapping)), None)
        fr = p[key] if key else None
        if fr is not None and fr.get("name") == LOAD and is_recall(fr.get("response"), owner, shaped=shaped):
            p, changed = {**p, key: {**fr, "response": {"result": recalled(len(fr["response"]["result"]["memories"]))}}}, True
        out.append(p)
    return {**content, "parts": out} if changed else content


def to_chat(events: list[Any], where: str, *, owner: tuple[str, str] | None = None,
            recalls: Recalls = "owned") -> Chat:
    """The events' contents read by the Gemini reader, each chat message's source its event. ``owner``: the
    session's (user_id, app_name), of whose scopes SAM's load_memory results are read as the marker (:func:`is_recall`;
    None, events without their session: none is). ``recalls``: as this reader read them when (:data:`Recalls`):
    SAMMemoryService matches a session it stored before against that reading."""
    # a set, looked up once an event: a list was quadratic in a session's events, and SAMMemoryService reads the
    # whole session again at each add (0.29 s at 8,000 events, 0.07 s now)
    kept = set(live(events))
    rewound = len(events) - len(kept)
    contents, at = [], []  # the Gemini contents read, and the event each came from
    ignored: dict[str, int] = {"rewound events": rewound} if rewound else {}
    for i, e, w in each(events, where, "event"):
        if i not in kept:
            continue
        if _get(e, "partial"):
            ignored["partial events (streamed chunks)"] = ignored.get("partial events (streamed chunks)", 0) + 1
            continue
        content = e.get("content")
        if content is None:
            ignored["events without content"] = ignored.get("events without content", 0) + 1
            continue
        if not isinstance(content, Mapping):
            raise TranscriptFormatError(w, f"'content' is {json_type(content)}, expected a Gemini content "
                                           "{\"role\", \"parts\": [...]}")
        author = e.get("author")
        if not isinstance(author, (str, type(None))):
            raise TranscriptFormatError(w, f"'author' is {json_type(author)}, expected 'user' or the agent's name")
        role = content.get("role")
        if role is None and author not in (None, "user"):  # an agent's content written without a role
            parts = content.get("parts") if isinstance(content.get("parts"), list) else []
            answers = parts and all(isinstance(p, Mapping) and gemini.part(p, w)[0] == "functionResponse"
                                    for p in parts)
            role = "user" if answers else "model"
        contents.append({**(_unrecalled(content, owner, recalls == "shaped") if recalls != "none" else content),
                         "role": role})
        at.append(i)
    for key in ("input_transcription", "output_transcription"):  # a live (audio) run's words: no content
        n = sum(1 for e in events if isinstance(e, Mapping) and _get(e, key) is not None)
        if n:
            ignored[key.replace("_", " ") + "s"] = n
    try:
        chat = gemini.to_chat(contents, where)
    except TranscriptFormatError as err:  # named by the event, not by its place among the contents read
        err.where = _CONTENT.sub(lambda m: f"event {at[int(m.group(1))]}", err.where)
        err._tell(err.tool)
        raise
    chat.sources = [f"event {at[int(s.removeprefix('content '))]}" for s in chat.sources]
    chat.ignored.update(ignored)
    return chat
