"""SAM in Google's Agent Development Kit: a ``BaseMemoryService`` over ScopedMemory.

    pip install google-adk                 # this module imports it; nothing in the core does

    memory = SAMMemoryService(ScopedMemory(SAMRetriever.from_pretrained("sam-general")), system=INSTRUCTION)
    runner = Runner(agent=agent, app_name="shop", session_service=sessions, memory_service=memory)
    # after a turn (an after_agent_callback, or the app's own code):
    await memory.add_session_to_memory(session)
    # the agent recalls with ADK's load_memory / preload_memory tools, which call search_memory

What is stored: ``add_session_to_memory(session)`` reads the session's events as a saved session is read (its
``model_dump_json()``, with the ``adk`` log reader, sam_model.data.formats.adk: the one code path) and adds to
ScopedMemory the chat messages read past those stored of that session before. ADK apps call it after each turn with
the whole session, so each event is stored once, however often the session is added; a session whose events no
longer begin with those stored (a rewind) is read on from its first chat message that differs, said in a warning
(what was stored stays). Each add's memories say their session and which of its chat messages they are (metadata
SESSION, FROM, TO, and DIGEST, a digest of the session's chat messages before TO), so a service made anew (a restart,
a service each request) reads on after them where the session still begins with them (and after the session's
last TO and DIGEST, which the memory keeps when they are deleted: ScopedMemory.progress, so a deleted session's
messages stay deleted when it is added again); and who said
them (AUTHOR: ``user`` or the agent, an add a run of the agent's messages or one of the user's) and when (TIMESTAMP: its first event's
time), which the entries a search returns carry. ``system``: the agent's instruction, which the session does not
hold, read as the policy of each session (as the reader reads a dump's ``system`` field). A text longer than a memory
holds is stored cut as ``sam-data transcripts --result-limit 90000`` cuts it, with a warning. A ``load_memory``
result this service answered is SAM's own recall, its memories stored already: the reader, told the session's user
and app, reads it as the recall marker where its entries' ids are of their scopes (formats.adk.is_recall), so a
session is never stored with the memories it recalled copied into it, and an app's entries of another scope are
stored as its words.

``add_events_to_memory`` (ADK's delta: the latest turn's events): each event stored once by its id (EVENTS, the
ids of an add's events; the progress mark keeps each stored id's content digest, so deleted events stay deleted),
scoped as a session's. An event sent again with another content keeps its first memory, warned: as ADK's own
in-memory service keeps an id's first event, and a memory recalled and written into training data is not rewritten
behind the agent's back (delete it and add the event under a new id). Both ways may add one session: each add's
memories say their events' ids (EVENTS), and each way skips the events the other stored (the progress mark keeps
the ids of both: a session's memories deleted stay deleted when its events are added after). A session stored
before its memories said their events' ids (2026-12-07) is matched by its words: a delta opening at the session's
start is read as stored up to a memory's TO whose DIGEST is that of its chat messages (_stored_before_ids).

Scopes: ``user_id`` the session's user, ``agent_id`` its ``app_name``, ``run_id`` its id: ADK scopes memory by app and
user, so a search (``search_memory(app_name, user_id, query)``) reads only that user's memories of that app, every
session of them, never another user's or another app's. What is recalled: the ``k`` best (default 5) as
``MemoryEntry`` items, best first, ranked by the live state of the user's session added last (the agent's current
task state; ScopedMemory.live_state) and the query's words. A memory holds what a user typed or a tool read, and ADK's
preload_memory tool quotes the entries' text in its own ``<PAST_CONVERSATIONS>`` tag (a user-side content),
load_memory as its tool's result: an entry's ``</PAST_CONVERSATIONS>`` and SAM's frame tags, in any case, are escaped
(``&lt;/PAST_CONVERSATIONS>``, scopes.escaped), so no memory closes ADK's wrapper and speaks after it as the app;
the words stay readable. ADK's preload_memory sends that content as a user message of its own before the user's
(two in a row, which alternating chat templates refuse): ``sam_preload_memory`` (:class:`SAMPreloadMemoryTool`) sends
it as the first parts of the user's content instead. Store calls run in a worker thread (``asyncio.to_thread``),
so the agent's event loop is not blocked by an encoder's forward pass.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

try:
    from google.adk.memory import BaseMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry
    from google.adk.tools.preload_memory_tool import PreloadMemoryTool
    from google.genai import types
except ImportError as exc:  # an optional integration: said in one line, not a traceback into google-adk's imports
    raise ImportError(f"sam_model.integrations.adk needs google-adk ({exc}): pip install google-adk, or use "
                      "ScopedMemory directly") from None

from sam_model.data.formats.adk import Recalls, to_chat
from sam_model.data.formats.recalls import TAG
from sam_model.integrations.fitting import cut_as_importer
from sam_model.integrations.scopes import escaped, fixed_scopes
from sam_model.io import json_type
from sam_model.limits import check_k
from sam_model.memory import ScopedMemory

log = logging.getLogger(__name__)

# each add's memories: their session, which of its chat messages they are ([from, to)), who said them and when, and
# a digest of the session's chat messages before TO (what a service made anew checks the session still begins with)
SESSION, FROM, TO, AUTHOR, TIMESTAMP = "adk_session", "adk_from", "adk_to", "adk_author", "adk_timestamp"
DIGEST = "adk_digest"
EVENTS = "adk_events"  # an add's events' ids (add_events_to_memory's progress mark: each stored id's content digest)
WRAPPER = "PAST_CONVERSATIONS"  # the tag ADK's preload_memory tool quotes the entries' text in, unescaped
SESSIONS = 1024  # sessions whose chat a service keeps (a server's memory grew with every session it ever stored)
Key = tuple[str, str, str]  # (app_name, user_id, session id)
# the readings of SAM's load_memory results a session stored before was stored with (formats.adk.Recalls): matched
# against today's alone, an upgraded service read the session on from before its first recall and stored it again
EARLIER: tuple[Recalls, ...] = ("shaped", "none")


def _scopes(app_name: Any, user_id: Any, session_id: Any = None, *, session: bool = False) -> dict[str, str | None]:
    """ADK's scope as ScopedMemory's, checked (a bad one refused in one line naming it). The app and the user are
    both required (and a stored session's id): a missing one is no scope to ScopedMemory, whose scopes are filters,
    so a search of user None read every user's memories of the app, and of app None the user's of every app."""
    given = {"app_name": app_name, "user_id": user_id, **({"session id": session_id} if session else {})}
    missing = [name for name, value in given.items() if value is None]
    if missing:
        raise ValueError(f"SAMMemoryService: {' and '.join(missing)} missing: ADK scopes memory by app and user "
                         "(a session by its id too); give them, as ADK's Runner and session services do")
    return fixed_scopes("SAMMemoryService", user_id, app_name, session_id)


class SAMMemoryService(BaseMemoryService):
    """An ADK memory service over a ScopedMemory (see the module doc)."""

    def __init__(self, memory: ScopedMemory, *, k: int = 5, system: str | None = None) -> None:
        if callable(system):  # ADK's InstructionProvider: resolved per request from a context the service lacks
            raise TypeError("SAMMemoryService: system is a callable (an ADK InstructionProvider, resolved per "
                            "request), which the service cannot call without a context: pass the instruction's text "
                            "(a string, e.g. what the provider returns for these sessions) or None")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"SAMMemoryService: system is {type(system).__name__}, expected the agent's instruction "
                            "(a string) or None")
        self.memory, self.k, self.system = memory, check_k(k), system
        # the chat messages stored of the SESSIONS sessions added last (one left out reads on as a service made anew)
        self._stored: OrderedDict[Key, list[dict[str, Any]]] = OrderedDict()
        self._seen: OrderedDict[tuple[str, str, str | None], dict[str, str]] = OrderedDict()  # events' ids added
        self._last: dict[tuple[str, str], str | None] = {}  # (app, user) -> the session added last: its state ranks
        # the memory's own lock, not one of this service: services made anew (each request) over one memory read
        # on after what each other stored, and two of them adding a session at once both stored it
        self._lock = memory.lock

    async def add_session_to_memory(self, session: Any) -> None:
        """Store the session's chat messages past those stored before (the module doc)."""
        dump = json.loads(session.model_dump_json())  # through JSON, as a saved session is read
        await asyncio.to_thread(self.store, dump)

    def store(self, dump: dict[str, Any]) -> int:
        """Store a session's dump (``json.loads(session.model_dump_json())``) past what was stored of it; returns
        how many chat messages were added."""
        app, user, sid = dump.get("app_name", dump.get("appName")), dump.get("user_id", dump.get("userId")), dump.get("id")
        scopes = _scopes(app, user, sid, session=True)
        events = dump.get("events") or []
        chat = to_chat(events, f"session {sid}", owner=(user, app))
        messages, sources = chat.messages, chat.sources
        if self.system:
            messages, sources = [{"role": "system", "content": self.system}, *messages], ["policy", *sources]
        policy = 1 if self.system else 0  # the policy, before the session's own chat messages: not counted in FROM/TO
        with self._lock:
            key = (app, user, sid)
            digests = _digests(messages[policy:])
            stored = self._stored[key] if key in self._stored else self._resume(scopes, messages, policy, digests,
                                                                                  events, sources)
            same = next((i for i, (a, b) in enumerate(zip(stored, messages)) if a != b), min(len(stored),
                                                                                          len(messages)))
            self._last[(app, user)] = sid
            if same == len(messages):  # nothing new: an older snapshot of the session (two adds at once, the later
                return 0  # stored first; or a turn rewound) keeps what is stored, which the next add is read against
            if same < len(stored):
                log.warning("SAMMemoryService: session %s no longer begins with the %d chat messages stored (a "
                            "rewind?): read on from its chat message %d, the first that differs", sid,
                            len(stored) - policy, max(same - policy, 0))
            # each add's events' ids too: an add_events_to_memory of them after (the turn sent too) skips them
            self._add_runs(events, messages, sources, same, scopes, lambda start, end: {
                SESSION: sid, FROM: max(start - policy, 0), TO: max(end - policy, 0),
                DIGEST: digests[max(end - policy, 0)],
                EVENTS: sorted({i for x in sources[start:end] if (i := _id(events, x)) is not None})})
            # the stored events' ids kept in the mark too (their content unknown, ""): kept in the memories' metadata
            # only, they went when the memories were deleted, and the events added after as a delta came back
            old = self.memory.progress(**scopes)
            ids = old.get(EVENTS) if isinstance(old, dict) and isinstance(old.get(EVENTS), dict) else {}
            ids = {**{i: "" for x in sources[same:] if (i := _id(events, x)) is not None}, **ids}
            self._mark(scopes, {TO: len(messages) - policy, DIGEST: digests[-1], EVENTS: ids})
            if key in self._seen:  # what add_events_to_memory read of the session: these are stored now
                self._seen[key].update({i: _content(events, x, (user, app)) for x in sources[same:]
                                        if (i := _id(events, x)) is not None and i not in self._seen[key]})
            self._stored[key] = messages
            self._stored.move_to_end(key)
            while len(self._stored) > SESSIONS:
                self._stored.popitem(last=False)
        return len(messages) - same

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Any],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """Store events given as a delta (ADK's newer call: the latest turn, not the whole session), each event once
        by its id (the module doc). ``custom_metadata``: ADK's portable options, of which this service reads none."""
        dumps = [json.loads(e.model_dump_json()) if hasattr(e, "model_dump_json") else e for e in events]
        await asyncio.to_thread(self.store_events, app_name, user_id, dumps, session_id)

    def store_events(self, app_name: str, user_id: str, events: list[dict[str, Any]],
                     session_id: str | None = None) -> int:
        """Store events' dumps (``json.loads(event.model_dump_json())``) whose ids were not stored before in the
        session (``session_id``; None: the app and user's events of no session); returns how many chat messages
        were added. An event stored before whose content changed keeps its first memory, with a warning."""
        scopes = _scopes(app_name, user_id, session_id)
        for i, e in enumerate(events):
            if not isinstance(e, Mapping) or not isinstance(e.get("id"), str) or not e["id"]:
                raise ValueError(f"SAMMemoryService.add_events_to_memory: {_no_id(e, i)}: give ADK's Events, whose "
                                 "ids say which are stored already")
        with self._lock:
            key = (app_name, user_id, session_id)
            # a copy, kept once its events are stored: an add that raised (the encoder, the disk, an event the
            # reader refuses) left their ids taken, and the delta sent again was skipped, its events never stored
            seen = dict(self._seen[key] if key in self._seen else self._seen_before(scopes, events))
            new, changed = [], []
            for e in events:
                digest = _said_digest(e, (user_id, app_name))
                if e["id"] in seen:  # "": read off a memory; the others, as stored before with an earlier reading
                    changed += [] if seen[e["id"]] == "" or _stored_as(e, (user_id, app_name), seen[e["id"]],
                                                                        digest) else [e["id"]]
                    continue
                seen[e["id"]] = digest  # an id twice in one delta: its first stored, as ADK's in-memory service does
                new.append(e)
            if changed:
                log.warning("SAMMemoryService: event(s) %s of session %s changed since they were stored: the memory "
                            "stored first is kept (delete it and add the event under a new id to store the edit)",
                            ", ".join(changed), session_id)
            self._last[(app_name, user_id)] = session_id
            chat = to_chat(new, f"session {session_id} (events added)", owner=(user_id, app_name))
            self._add_runs(new, chat.messages, chat.sources, 0, scopes, lambda start, end: {
                SESSION: session_id, EVENTS: sorted({new[int(chat.sources[i].removeprefix("event "))]["id"]
                                                     for i in range(start, end)})})
            if new:
                self._mark(scopes, {EVENTS: seen})
                self._stored.pop(key, None)  # the session, added whole after, reads on after these (_resume)
            self._seen[key] = seen
            self._seen.move_to_end(key)
            while len(self._seen) > SESSIONS:
                self._seen.popitem(last=False)
        return len(chat.messages)

    def _seen_before(self, scopes: dict[str, str | None], events: list[dict[str, Any]]) -> dict[str, str]:
        """The ids of the events stored of the scopes before this service saw them, with their contents' digests
        (the progress mark, kept when their memories are deleted: those stay deleted; else the memories' EVENTS),
        and of ``events`` (a delta) those a session's memories of before EVENTS hold (:func:`_stored_before_ids`)."""
        found = self.memory.get_all(**scopes, limit=None)["results"]  # add_session_to_memory's memories say theirs
        mark = self.memory.progress(**scopes)
        return {**_stored_before_ids(scopes, found, mark, events), **_seen(scopes, found, mark)}

    def _mark(self, scopes: dict[str, str | None], mark: dict[str, Any]) -> None:
        """Tell the memory how far the scopes are stored, keeping what the other add (session or events) told it."""
        old = self.memory.progress(**scopes)
        self.memory.progress(**scopes, mark={**(old if isinstance(old, dict) else {}), **mark})

    def _add_runs(self, events: list[Any], messages: list[dict[str, Any]], sources: list[str], start: int,
                  scopes: dict[str, str | None], span: Any) -> None:
        """Add ``messages[start:]``, an add a run of one author's messages (the user's, each alone), its metadata
        ``span(from, to)`` and who said it and when. The user's messages one an add: a run of them (turns that
        failed before a reply) opening with the words of the scope's last add, the user's message alone, was read
        by ScopedMemory as a hook's history going on from it (sam_model.memory.resent), and its first lost."""
        tools = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
        for end in range(start + 1, len(messages) + 1):
            if end < len(messages) and self._said(events, sources, end)[0] == (
                    author := self._said(events, sources, start)[0]) and author != "user":
                continue
            author, when = self._said(events, sources, start)
            meta = {**span(start, end), **({AUTHOR: author} if author else {}),
                    **({TIMESTAMP: when} if when is not None else {})}
            self.memory.add([cut_as_importer(messages[i], sources[i], log, tools.get(messages[i].get(
                "tool_call_id"))) for i in range(start, end)], **scopes, metadata=meta)
            start = end

    @staticmethod
    def _said(events: list[Any], sources: list[str], i: int) -> tuple[str | None, float | None]:
        """Who said chat message ``i`` (its event's author; a tool's result is its agent's) and when."""
        if not sources[i].startswith("event "):
            return None, None  # the policy
        event = events[int(sources[i].removeprefix("event "))]
        when = event.get("timestamp")
        return event.get("author"), when if isinstance(when, (int, float)) else None

    def _resume(self, scopes: dict[str, str | None], messages: list[dict[str, Any]], policy: int,
                digests: list[str], events: list[Any], sources: list[str]) -> list[dict[str, Any]]:
        """The chat messages of a session stored before this service saw it (its memories' TO): a service made
        anew read the session from its start, and stored it again. TO counts the session's chat messages, not the
        policy (``policy``: 1 where ``messages`` open with it): counted, a service restarted with an instruction
        given or dropped (the agent's, edited between deploys) read on one message off, storing one again or
        losing one. A TO is taken where its DIGEST is that of the session's chat messages before it (``digests``):
        taken whatever the session held, a session of a reused id, or one rewound while the service was down, lost
        as many of its messages as the old one had stored (memories without a digest, of 2026-12-07, are taken).
        Or further, where the session's first chat messages are of events add_events_to_memory stored (their
        events' ids and words as stored: a reused id of other words is no such)."""
        # read once (the ids seen are of the same memories and mark: read again, a session of thousands of memories
        # was listed twice at a service's first sight of it)
        found = self.memory.get_all(**scopes, limit=None)["results"]
        mark = self.memory.progress(**scopes)  # kept when the session's memories were deleted: those stay deleted
        marks = [*(r["metadata"] for r in found), *([mark] if isinstance(mark, dict) and DIGEST in mark else [])]
        owner = _owner(scopes)
        then = _digests_then(events, digests, owner)
        to = max((m[TO] for m in marks if isinstance(m.get(TO), int) and not isinstance(m[TO], bool)
                  and 0 <= m[TO] < len(digests) and m.get(DIGEST, digests[m[TO]]) in {t[m[TO]] for t in then}),
                 default=0)
        seen = _seen(scopes, found, mark)
        # on from TO (events added as deltas after the session's last add, which its TO does not count; read from
        # 0, a session added, then its turn's events, then the session again stored those events twice)
        by_id = to  # each message's event's digest made only while they are stored (a session's first sight)
        while by_id + policy < len(sources) and (e := _id(events, sources[by_id + policy])) is not None \
                and (kept := seen.get(e)) is not None \
                and _stored_as(events[int(sources[by_id + policy].removeprefix("event "))], owner, kept):
            by_id += 1
        return messages[:by_id + policy]

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> Any:
        """The user's ``k`` best memories of the app, as ``MemoryEntry`` items, best first (the module doc)."""
        return await asyncio.to_thread(self.search, app_name, user_id, query)

    def search(self, app_name: str, user_id: str, query: str) -> Any:
        scopes = _scopes(app_name, user_id)
        with self._lock:
            last = self._last.get((app_name, user_id))
        if last is None:  # a service made anew: the session stored last (get_all lists in write order)
            found = self.memory.get_all(**scopes, limit=None)["results"]
            last = found[-1]["run_id"] if found else None
        state = self.memory.live_state(user_id, app_name, last) if last is not None else None
        hits = self.memory.search(query, state=state, limit=self.k, **scopes)["results"]
        return SearchMemoryResponse(memories=[_entry(hit) for hit in hits])


def _seen(scopes: dict[str, str | None], found: list[dict[str, Any]], mark: Any) -> dict[str, str]:
    """The ids of the events stored of the scopes (:meth:`SAMMemoryService._seen_before`), from their memories
    (``found``, get_all's) and the progress mark (``mark``): the mark's digests over the memories' ids."""
    # the scopes' own (run_id None, events of no session, is no filter to get_all: every session's ids were
    # taken, and an event of no session whose id a session's had was skipped, never stored)
    seen = {i: "" for r in found if r["run_id"] == scopes["run_id"]
            for i in (r["metadata"] or {}).get(EVENTS) or () if isinstance(i, str)}
    return {**seen, **(mark[EVENTS] if isinstance(mark, dict) and isinstance(mark.get(EVENTS), dict) else {})}


def _stored_before_ids(scopes: dict[str, str | None], found: list[dict[str, Any]], mark: Any,
                       events: list[dict[str, Any]]) -> dict[str, str]:
    """Of ``events`` (a delta), those a session's memories stored before their events' ids were kept (EVENTS, since
    2026-12-07) hold, with their contents' digests: the delta's chat messages up to such an add's TO, where the
    digest of the session's chat messages before TO (DIGEST) is theirs, so the delta opens at the session's start
    and holds, word for word and in order, what was stored of it. Such memories say no event's id, and a service
    made anew stored the session's events again when they were added as a delta (the session replayed, or its
    events sent whole). Only where the delta opens with the session: its events told by their words alone, a turn
    sent again alone (its first event's time and author are in the memories, its others' are not) is stored again,
    a duplicate, where a guess could lose a turn said again alike. A TO is taken where the delta's events are those
    the session's memories opening before it were stored of, by their first event's time and author
    (:func:`_same_events`): by words alone, a later turn opening with the session's first words (a repeated "ok")
    was read as its start and never stored. Only a TO that says no event's id (EVENTS): one that does tells its
    events by their ids (:func:`_seen`), and read by words too, a new turn said as the session's first was never
    stored once the session's memories were deleted (the mark's TO, then, alone to tell it)."""
    own = [r["metadata"] or {} for r in found if r["run_id"] == scopes["run_id"]]
    marks = [*own, *([mark] if isinstance(mark, dict) else [])]
    old = [m for m in marks if isinstance(m.get(TO), int) and not isinstance(m[TO], bool) and m[TO] > 0
           and isinstance(m.get(DIGEST), str) and EVENTS not in m]
    if not old or not events:
        return {}
    owner = _owner(scopes)
    chat = to_chat(events, "the events added", owner=owner)
    digests = _digests(chat.messages)
    then = _digests_then(events, digests, owner)  # stored then, a recall may have been read otherwise
    to = max((m[TO] for m in old if m[TO] < len(digests) and m[DIGEST] in {t[m[TO]] for t in then}
              and _same_events(own, events, chat.sources, m[TO])), default=0)
    last = {}  # each event's last chat message
    for i, x in enumerate(chat.sources):
        last[int(x.removeprefix("event "))] = i
    return {events[e]["id"]: _said_digest(events[e], owner) for e, i in last.items() if i < to}


def _same_events(metas: list[dict[str, Any]], events: list[dict[str, Any]], sources: list[str], to: int) -> bool:
    """Whether ``events`` (a delta, its chat messages' ``sources``) are, up to chat message ``to``, the events the
    session's memories (``metas``, their metadata) opening before it were stored of: the event of each one's FROM
    has its TIMESTAMP and AUTHOR (an event's time, to the microsecond, is written once; words are not)."""
    for m in metas:
        f = m.get(FROM)
        if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < min(to, len(sources)):
            continue
        if not sources[f].startswith("event "):
            return False
        e = events[int(sources[f].removeprefix("event "))]
        if TIMESTAMP in m and e.get("timestamp") != m[TIMESTAMP] or AUTHOR in m and e.get("author") != m[AUTHOR]:
            return False
    return True


def _no_id(event: Any, i: int) -> str:
    """What event ``i`` holds instead of an id, for the refusal (it said "got dict" of a dict without one)."""
    if not isinstance(event, Mapping):
        return f"event {i} is a {type(event).__name__}, not an Event"
    if "id" not in event:
        return f"event {i} has no 'id'"
    return f"event {i}'s 'id' is {'an empty string' if event['id'] == '' else json_type(event['id'])}"


def _id(events: list[Any], source: str) -> str | None:
    """The id of the event a chat message was read from (its source, ``event N``); None for the policy."""
    if not source.startswith("event "):
        return None
    i = events[int(source.removeprefix("event "))].get("id")
    return i if isinstance(i, str) and i else None


def _owner(scopes: dict[str, str | None]) -> tuple[str, str]:
    """The (user_id, app_name) of a session's scopes: whose memories are SAM's recall in it (formats.adk.is_recall)."""
    return str(scopes["user_id"]), str(scopes["agent_id"])


def _content(events: list[Any], source: str, owner: tuple[str, str]) -> str | None:
    """The digest of the event a chat message was read from (_said), None for the policy."""
    return _said_digest(events[int(source.removeprefix("event "))], owner) if source.startswith("event ") else None


def _said_digest(event: Any, owner: tuple[str, str], recalls: Recalls = "owned") -> str:
    """What add_events_to_memory keeps of an event's content: a digest of the chat messages read of it, alike
    however the event was dumped (a session's dump or the event's own, its nulls, by alias or not), its load_memory
    results read as ``recalls`` says (formats.adk.to_chat: an earlier reading, for an event stored then)."""
    return _digests(to_chat([event], "an event", owner=owner, recalls=recalls).messages)[-1]


def _stored_as(event: Any, owner: tuple[str, str], kept: str, today: str | None = None) -> bool:
    """Whether ``kept`` (a stored event's digest) is ``event``'s as read today (``today``, when made already) or
    with an earlier reading (EARLIER). The earlier readings made only where today's differs: made for every event
    each call, an add read each event of a delta or session three times over."""
    if kept == (today if today is not None else _said_digest(event, owner)):
        return True
    return any(kept == _said_digest(event, owner, then) for then in EARLIER)


def _digests_then(events: list[Any], digests: list[str], owner: tuple[str, str]) -> list[list[str]]:
    """The digests of the session's chat messages: today's (``digests``), and as a service read them with each
    earlier reading of SAM's load_memory results (EARLIER: a recall read as a result before 224, an app's entries of
    SAM's shape read as the marker before 226): a session stored then holds that reading, and matched against
    today's alone, an upgraded service read it on from before the first result read otherwise and stored the turns
    after it again. The marker stands one for one in a result's place, so the count is the same."""
    thens = [_digests(to_chat(events, "the session", owner=owner, recalls=r).messages) for r in EARLIER]
    return [digests, *(then for then in thens if len(then) == len(digests))]


def _digests(chat: list[dict[str, Any]]) -> list[str]:
    """The digest of each beginning of a session's chat messages: item ``n`` that of the first ``n``."""
    h, out = hashlib.sha256(), [hashlib.sha256().hexdigest()[:16]]
    for m in chat:
        h.update(json.dumps(m, sort_keys=True, default=str).encode() + b"\n")
        out.append(h.copy().hexdigest()[:16])
    return out


def _entry(hit: dict[str, Any]) -> Any:
    """A search result as ADK's MemoryEntry: its words a text part (ADK's wrapper and SAM's frame tags escaped: the
    module doc), the user's in a user content, the agent's (its words, calls and their results) in a model content;
    its author and time the add's."""
    meta = hit.get("metadata") or {}
    author = meta.get(AUTHOR)
    when = meta.get(TIMESTAMP)
    stamp = datetime.fromtimestamp(when, tz=timezone.utc).isoformat() if isinstance(when, (int, float)) else None
    role = "user" if hit.get("kind") == "user" else "model"
    text = escaped(hit["memory"], (WRAPPER, TAG))  # quoted unescaped by preload_memory: no memory closes its tag
    return MemoryEntry(id=hit["id"], content=types.Content(role=role, parts=[types.Part(text=text)]),
                       author=author if isinstance(author, str) else None, timestamp=stamp,
                       custom_metadata={"score": hit.get("score"), "session": meta.get(SESSION), "step": hit.get("step")})


class SAMPreloadMemoryTool(PreloadMemoryTool):
    """ADK's preload_memory tool, its recall sent in the user's content, as text parts before the user's: ADK's own
    inserts it as a user content of its own right before the user's, and two user messages in a row are refused by
    the chat templates that want user and assistant turns to alternate (Llama 2's and Mistral's, through LiteLlm to
    a local model: "Conversation roles must alternate"; Gemini takes them). The request's alone: the session keeps
    the user's content as sent. After a tool's result (a turn the model continues) ADK puts the recall last, a user
    message after the tool's: the templates that check turns past the tool calls and results (Mistral's) read the
    question and the recall as two user turns in a row; there it goes in the question's content, as in the turn's
    first call (the request the same up to the tool's result), past the notes ADK writes of another agent's turns in
    a handoff ("For context:", that agent's transcript: the recall once went in the last one, and where ADK put it
    before such a note, the sub-agent's answer the coordinator is shown, in that note). Where the recall is neither
    (a static instruction's prefix), it is left where ADK put it."""

    async def process_llm_request(self, *, tool_context: Any, llm_request: Any) -> None:
        before = {id(c) for c in llm_request.contents}
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        contents = llm_request.contents
        at = next((i for i, c in enumerate(contents) if id(c) not in before), None)
        if at is None:
            return
        if any(c.role != "user" or _answers(c) for c in contents[at + 1:]):
            return
        # the user's contents after it, past other agents' notes (it was put before a note that opens them and went
        # in that agent's transcript); none there (after a tool's result): the question before the turn's calls
        asked = next((i for i in range(at + 1, len(contents)) if not _note(contents[i])), None)
        if asked is None and (asked := _asked_before(contents, at)) is None:
            return
        recall = contents.pop(at)
        if asked > at:
            asked -= 1
        contents[asked] = types.Content(role="user", parts=[*(recall.parts or ()), *(contents[asked].parts or ())])


def _answers(content: Any) -> bool:
    """Whether a content holds a tool's result (a user content in Gemini's terms, a tool's turn in a chat template)."""
    return any(p.function_response for p in content.parts or ())


def _note(content: Any) -> bool:
    """Whether a user content is ADK's note of another agent's turn (a multi-agent handoff: "For context:" then
    that agent's call, result or words, quoted): that agent's transcript, not the user's words, so no recall goes
    in it."""
    parts = content.parts or ()
    return content.role == "user" and bool(parts) and (parts[0].text or "").startswith("For context:")


def _asked_before(contents: list[Any], at: int) -> int | None:
    """Where the user's question is that the turn's tool calls and results (only those, and other agents' notes of
    a handoff: :func:`_note`) follow, up to ``at``; None where another content comes between (the model's words
    alone, an empty content) or none is there."""
    for i in range(at - 1, -1, -1):
        content = contents[i]
        if content.role == "user" and not _answers(content) and not _note(content):
            return i if i < at - 1 else None
        if not content.parts or content.role != "user" and not any(p.function_call for p in content.parts):
            return None  # the model's words (a call's own text goes with it), or an empty content
    return None

sam_preload_memory = SAMPreloadMemoryTool()  # as ADK's preload_memory: give it in the agent's tools instead
