"""ScopedMemory: Mem0's memory API, as Mem0 documents it — SAM underneath.

    memory = ScopedMemory(SAMRetriever.from_pretrained("sam-general"))
    memory.add([{"role": "user", "content": "I'm mia_li_3668, cancel my Boston flight"}], user_id="mia")
    memory.add(events, user_id="mia", run_id="trip-2")            # agent-log Events (or event dicts) work too
    found = memory.search("which reservation?", user_id="mia", limit=5, filters={"topic": "travel"}, threshold=0.2)
    found["results"][0]["memory"], found["results"][0]["score"], found["results"][0]["why"]
    memory.update(memory_id, "my budget is $3,500"); memory.history(memory_id)
    memory.get_all(user_id="mia"); memory.delete(memory_id); memory.delete_all(user_id="mia"); memory.reset()

Scopes (``user_id``, ``agent_id``, ``run_id``) are filters of the one memory store (sam_model.store): they are
applied inside the index search, so one user's search never returns another's memories. As in Mem0, a search,
``get_all`` or ``delete_all`` without any scope is refused (ValueError), never widened to every user; pass
``all_scopes=True`` to ask for every scope on purpose. ``filters`` match metadata (and the scopes) the Mem0
way: ``{"key": value}``, operators ``{"key": {"in": [...], "gte": 3, ...}}``, ``AND``/``OR``/``NOT`` lists; the
matches are searched inside the index search too. Each memory has ``created_at``/``updated_at`` (UTC ISO 8601)
and a ``history`` of ADD/UPDATE/DELETE events.

Each combination of scopes is one episode of its own (``"mia//trip-2"``: ScopedMemory.episode_of); chat
messages become events exactly as the tool-call transcript importer writes them
(sam_model.data.transcripts.TranscriptState.feed: a tool call fixes the state of the event before it), so the
memories, and the ranking, are what evaluate.py measures on the same conversation. What ``search`` ranks by:

- ``state`` given (a State or mapping; e.g. sam_model.data.transcripts.live_state for a tool call about to be
  made): SAM's state-adaptive query, as evaluate.py runs it;
- text and no state: a plain query, scored by the model's content block alone (cos of the text and the memory
  text over the same memory vectors, SAMNet.encode_text_queries), so a question in words ranks as a content
  search does instead of by a state the agent is not in;
- ``state="live"`` (or no text): the state of the scopes' newest event (ScopedMemory.live_state);
- ``call=`` (the tool call about to be made, in any shape live_state takes, or a list): that call's decision-point
  state, computed from the scopes' own conversation by the tracker's code (TranscriptState.call_state, what
  live_state and the importer run), so a client that only names the call (sam-serve's HTTP and MCP) ranks as
  evaluate.py measures. The call is not recorded.

Whatever it ranks by, a search is made at a step of the scopes' own episode: ``step=`` (for a call, the step of its
decision point, the conversation's newest message), else now, after every memory. The episode's memories at or after
that step are no candidates (MemoryStore.search's rule, as evaluate.py ranks a decision point's earlier events): the
message the agent is answering, added before a search at its step, does not come back; a search made now leaves
nothing out, so search before adding it, or give its step.

Threads: one ScopedMemory may serve every request thread of an agent server. Each method holds ``memory.lock``
(a re-entrant lock, sam_model.locking: the store's own, ``memory.store.lock``), so concurrent adds, searches,
deletes and saves of any users run one at a time, every search sees only its scopes, every save loads back, and
whatever else shares the store (a SAMStore, a direct call, a save of the store) sees each call whole.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from sam_model.data.chatmessages import (
    policy_of,
)
from sam_model.data.examples import MemoryRecord, MemoryRecorder, memory_record
from sam_model.data.formats import codex_exec, gemini_cli
from sam_model.data.schema import Event, State, parse_event
from sam_model.data.text import norm
from sam_model.data.toolstate import TranscriptState, cleared
from sam_model.hit import Hit
from sam_model.io import (
    SAMFileError,
    json_type,
)
from sam_model.limits import (
    check_count,
    check_k,
    check_metadata,
    check_scope,
    check_text,
)
from sam_model.locking import locked
from sam_model.memory import live
from sam_model.memory.scopedfile import ScopedFiles
from sam_model.memory.scopedfilters import matches
from sam_model.memory.scopedinput import (
    EMPTY,
    FIT_CHARS,
    NoTextError,
    _check_call_size,
    _check_depth,
    _is_messages,
    _media_only,
    fit,
    fitted,
    read_add,
    unstored,
)
from sam_model.memory.scopedresult import _said, result
from sam_model.memory.scopedsearch import ScopedSearch
from sam_model.store import MemoryStore, encoder_of, store_config_of
from sam_model.storeconfig import StoreConfig

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
NO_SCOPE = ("give user_id, agent_id or run_id (or all_scopes=True to {} every scope on purpose): a missing "
            "scope is refused, never widened to every user")


def _unshared(mark: Mapping[str, Any]) -> dict[str, Any]:
    """A tracker's mark to roll back to, its lists and dicts copied: the tracker goes on changing them in place, and
    the mark is kept (the open turn's, its read's)."""
    return {**mark, "stack": list(mark["stack"]), "cons": dict(mark["cons"]), "calls": dict(mark["calls"])}


def _within(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    given = ", ".join(f"{n}={v!r}" for n, v in zip(SCOPE_KEYS, (user_id, agent_id, run_id)) if v is not None)
    return f" within {given}" if given else ""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


MAX_CATCH_UP = 1_000  # steps a conversation saved behind its memories takes in (ScopedMemory._catch_up)


class ScopedMemory(ScopedSearch, ScopedFiles):
    """Memories of many users, agents and runs in one store, every call scoped (see the module doc)."""

    def __init__(self, encoder: Any = None, store_config: StoreConfig | None = None, k: int = 5, *,
                 store: MemoryStore | None = None):
        """``encoder``: a SAMRetriever (its encoder and its export's search settings) or any
        sam_model.encoder.Encoder (then a plain search unless ``store_config`` says otherwise); None: the
        packaged default retriever, SAMRetriever.from_pretrained("sam-general"). ``k``: how many memories a
        search returns when it is given no ``limit``. ``store``: a store already loaded (``load``: a database
        collection is attached once, not created anew beside it)."""
        if encoder is None:
            from sam_model.retriever import default_retriever

            encoder = default_retriever()
        self.store = store if store is not None else MemoryStore(encoder_of(encoder),
                                                                 store_config or store_config_of(encoder))
        self.k = check_k(k)
        self._trackers: dict[str, TranscriptState] = {}  # episode -> the conversation's running state
        self._base: dict[str, int] = {}  # episode -> step of the tracker's first event
        self._times: dict[Any, list] = {}  # memory id -> [created_at, updated_at]
        self._history: dict[Any, list[dict]] = {}  # memory id -> its ADD / UPDATE / DELETE events, oldest first
        # memory id -> its scopes (user, agent, run), None when unknown, for the ids whose places do not say them
        # (ids of a save before each scope had its place in the episode's name): history's check once it is deleted
        self._owners: dict[Any, tuple | None] = {}
        self._open: dict[str, live.OpenTurn] = {}  # episode -> the open turn of an agent's session fed line by line
        # loaded from a save of an earlier version and moved to this one (_place_episodes): a caller that keeps the
        # memory in a checkpoint (a served tenant) saves it at once, or every start moves it again
        self.migrated = False

    @property
    def lock(self) -> threading.RLock:
        """The store's own lock, which every public method holds (sam_model.locking): a call's several store calls
        (a lookup and a fetch, an add and a delete) are then one step for everyone sharing the store (a SAMStore, a
        save of the store), not only for this memory's callers. With a lock of its own, a save of the store taken
        between SAMVectorStore's add and delete of a replaced memory held both versions."""
        return self.store.lock

    @staticmethod
    def episode_of(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> str:
        """The episode a combination of scopes writes to: the three scopes in their places, joined by '/', an
        absent one empty, trailing empties dropped (``"mia"``, ``"mia/bot"``, ``"/bot"``, ``"mia//trip-2"``).

        One combination, one episode, and never another's: scope values hold no '/' (refused), so the places
        say which scope a value is. (Joining only the given values made ``user_id="alice", agent_id="bot"`` and
        ``agent_id="alice", run_id="bot"`` one episode, whose conversation state the two then shared; a save from
        before is moved to these episodes when it is loaded, its ids kept: :meth:`_place_episodes`.)"""
        return "/".join("" if p is None else str(p) for p in (user_id, agent_id, run_id)).rstrip("/")

    @staticmethod
    def _scopes(user_id, agent_id, run_id, need: bool = True, all_scopes: bool = False,
                verb: str = "search") -> dict[str, Any]:
        for name, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
            check_scope(v, name)
        if not isinstance(all_scopes, bool):  # "false" is truthy: a string must not widen a search to every user
            raise TypeError(f"all_scopes must be true or false, got {all_scopes!r}")
        if user_id is None and agent_id is None and run_id is None:
            if need == "write":
                raise ValueError("give user_id, agent_id or run_id: every memory belongs to a scope")
            if need and not all_scopes:
                raise ValueError(NO_SCOPE.format(verb))
        return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}

    @classmethod
    def _scoped_filters(cls, scopes: dict[str, Any], filters: Mapping[str, Any] | None, all_scopes: bool,
                        verb: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(scopes, the other filters): Mem0 also takes the scopes inside ``filters``."""
        if filters is not None and not isinstance(filters, Mapping):
            raise TypeError(f"filters must be a mapping such as {{'category': 'travel'}}, got {type(filters).__name__}")
        rest = dict(filters or {})
        for name in SCOPE_KEYS:
            if name in rest and not isinstance(rest[name], Mapping):
                v = rest.pop(name)
                if v == "*":  # elsewhere in filters "*" is "the key is present": for a scope that is every user
                    raise ValueError(f"filters.{name} '*' would search every {name.removesuffix('_id')}; give one, "
                                     "or all_scopes=True on purpose")
                if scopes[name] is not None and scopes[name] != v:
                    raise ValueError(f"{name} is {scopes[name]!r} but filters.{name} is {v!r}: give one")
                scopes[name] = v
        return cls._scopes(*(scopes[n] for n in SCOPE_KEYS), need=True, all_scopes=all_scopes, verb=verb), rest

    @classmethod
    def search_scopes(cls, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      filters: Mapping[str, Any] | None = None,
                      all_scopes: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the scopes a search runs in, its other filters): the arguments' scopes and those given inside
        ``filters`` (Mem0 takes both), checked as :meth:`search` checks them. One place, so that a caller that
        encodes the query apart (sam_model.serve.batching) reads the same scopes' live state as the search."""
        return cls._scoped_filters({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters,
                                   all_scopes, "search")

    def _record(self, hit: Hit) -> dict[str, Any]:
        """What ``filters`` see of a memory: its metadata, scopes, kind and times."""
        created, updated = self._times.get(hit.memory_id, (None, None))
        return {**hit.metadata, "user_id": hit.user_id, "agent_id": hit.agent_id, "run_id": hit.run_id,
                "kind": hit.kind, "created_at": created, "updated_at": updated}

    def _result(self, hit: Hit) -> dict[str, Any]:
        return result(hit, self._times.get(hit.memory_id, (None, None)))

    def _log(self, i: Any, event: str, old: str | None, new: str | None, again: Collection[str] = ()) -> str | None:
        """One history entry (Mem0's shape) and the memory's times; the entry's id (None: none stands). ``again``:
        the entries adds of the scope's open turn logged (live.OpenTurn's ``logged``): the memory's last entry, if
        one of them, is revised in its place, from its old text to ``new`` (dropped where ``new`` is that old text):
        each add reads the open turn again, and a response whose results sit between its calls moves every later
        result of it to another memory at each call, so an entry an add grew the history with the square of the
        turn (a Claude Code response of 100 reads of 90 KB that differ, a line an add: scoped.json 215 MB). A
        memory's history holds each change of its text, in an open turn from where the turn began to where it is
        now."""
        now = _now()
        times = self._times.setdefault(i, [now, now])
        times[1] = now
        entries = self._history.setdefault(i, [])
        last = entries[-1] if entries else {}  # .get: a hand-edited save's entry may lack a key no check asked for
        if last.get("id") in again and last.get("event") == "UPDATE" and "old_memory" in last:
            old = entries.pop()["old_memory"]  # a new dict replaces it: a snapshot's copy keeps the one it took
            if old == new:
                return None
        entries.append({"id": f"{i}@{len(entries)}", "memory_id": i, "old_memory": old, "new_memory": new,
                        "event": event, "created_at": times[0], "updated_at": now, "is_deleted": event == "DELETE"})
        return entries[-1]["id"]

    # ---- writing -------------------------------------------------------------------------------------------

    @locked
    def add(self, data: str | Mapping | Event | Sequence, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None, *,
            read: tuple[list[Any], list[dict[str, Any]]] | None = None) -> dict[str, list]:
        """Write chat messages (a string is one user message; dicts with ``role`` as OpenAI messages, or as the
        format of sam_model.data.formats they are written in: :func:`as_chat`) or agent-log events (Events, or dicts with ``kind`` and ``text``) into the scopes' episode, in order.
        Returns ``{"results": [{"id", "memory", "event": "ADD" | "UPDATE", "step"}, ...]}`` (``step``: the memory's
        step, the number after its id's last '#', which a search of the message being answered takes as its
        ``step``: an agent need not parse ids or count messages itself; an UPDATE: a memory's text
        changed; one whose state alone a later message revised is not listed, Mem0's NONE), and ``"skipped"``: what of the
        messages was not stored (a message or a part of images alone: :func:`unstored`) when something was not, and
        ``"notes"`` (``[{"reason"}]``) when an agent's session lines closed the scope's open turn at its cap
        (sam_model.memory.live.over: stored, but apart from the turn they continue) or a memory's text was stored cut
        to MAX_TEXT_CHARS (:func:`fit`: a session line's tool result, a call's arguments; a chat message's own
        content past it is refused, as its caller can split it, a sidecar forwarding an agent's lines cannot). A
        message that should hold text and holds none (no content, a blank one) is refused with its batch (ValueError
        naming it), and so is an empty list (as sam-serve's HTTP add refuses it). ``read``: what :meth:`check_add`
        read of ``data`` when the caller checked it already (sam-serve, before logging the add, in the same hold of
        the lock): written as read, not read again."""
        scopes = self._scopes(user_id, agent_id, run_id, need="write")
        episode = self.episode_of(user_id, agent_id, run_id)
        check_metadata(metadata)
        if isinstance(data, str):
            check_text(data, "data")
        elif not isinstance(data, (Mapping, Event, Sequence)):
            raise TypeError(f"data must be a message text, a message or event dict, an Event or a list of them, got "
                            f"{type(data).__name__}")
        items = [{"role": "user", "content": data}] if isinstance(data, str) else (
            [data] if isinstance(data, (Mapping, Event)) else list(data))
        if not items:
            raise NoTextError(EMPTY.format("data"))
        fmt = self._live_format(items, episode)
        if fmt is not None:  # an agent's session lines: read with the scope's open turn
            skipped, notes = (read if read is not None else read_add(data, "data", session=True))[1], []
            out = {"results": self._add_messages([], episode, scopes, metadata, notes, lines=(fmt, items))}
            return {**out, **({"skipped": skipped} if skipped else {}), **({"notes": notes} if notes else {})}
        if _is_messages(items):
            # checked before the conversation's state takes any of them
            messages, skipped = read if read is not None else read_add(data, "data")
            out: dict[str, list] = {"results": self._add_messages(
                messages, episode, scopes, metadata, notes := [],
                skip={n["message"] for n in skipped if "message" in n and "part" not in n})}
            return {**out, **({"skipped": skipped} if skipped else {}), **({"notes": notes} if notes else {})}
        if _is_messages(items[:1]):  # a chat message first, then something else: name that, not item 0
            j = next(j for j, m in enumerate(items) if not _is_messages([m]))
            raise TypeError(f"add(...) item {j}: give chat messages (dicts with 'role'), Events or event dicts "
                            f"(with 'kind' and 'text'), not a mix: item 0 is a chat message, item {j} is "
                            + (f"{json_type(items[j])} without 'role'" if isinstance(items[j], Mapping)
                               else json_type(items[j])))
        events = []
        for i, m in enumerate(items):
            if isinstance(m, Mapping) and "kind" in m:
                m = parse_event({"episode_id": episode, "step": 0, **m}, "add(...)", i + 1)
            if not isinstance(m, Event):
                raise TypeError(f"add(...) item {i}: give chat messages (dicts with 'role'), Events or event dicts "
                                f"(with 'kind' and 'text'), not a mix; got {json_type(m)}"
                                + (" without 'kind'" if isinstance(m, Mapping) else "")
                                + (": give a LangGraph state's messages as messages_to_dict(messages) "
                                   "(langchain_core.messages), which the langchain reader reads"
                                   if type(m).__module__.startswith("langchain") else ""))
            events.append(m)
        return {"results": self._add_events(events, episode, scopes, metadata)}

    @locked
    def check_add(self, data: Any, name: str, max_calls: int | None = None, user_id: str | None = None,
                  agent_id: str | None = None, run_id: str | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """:func:`read_add` of an add of ``data`` to these scopes, naming the caller's field (``name``), read as
        :meth:`add` reads it: items the scopes' open turn takes as an agent's session lines (a Codex rollout's bare
        items after the meta line of the layout before the wrapper, which tell no format alone) are not held to the
        length limit, their add stores a longer text cut. Checked without the turn (sam-serve's check before it
        logged the add), such a line past the limit was refused over HTTP and MCP, and taken in-process. Hold
        ``memory.lock`` from this check through the add (sam_model.serve.tenants.Tenant.write), so that the turn
        it reads is the add's."""
        items = [data] if isinstance(data, Mapping) else [] if isinstance(data, str) else (
            list(data) if isinstance(data, Sequence) else [])
        session = bool(items) and self._live_format(items, self.episode_of(user_id, agent_id, run_id)) is not None
        return read_add(data, name, max_calls, session=session)

    def _live_format(self, items: list[Any], episode: str) -> str | None:
        """The live format an add's items are written in, told with the episode's open turn (live.format_of), or
        None: not an agent's session lines."""
        return live.format_of(items, self._open.get(episode)) if all(isinstance(m, Mapping) for m in items) else None

    def _add_events(self, events: list[Event], episode: str, scopes: dict, metadata) -> list[dict]:
        """Events keep their steps when they have them in order after the episode's; else they are numbered on.

        In a scope written by chat messages too, the events join its conversation (TranscriptState.note), numbered
        on: later tool calls are traced to them, and the next message's memory takes the step after them. (They
        took the steps the conversation's next messages would take, whose adds were then refused as duplicates,
        and a replay of the log dropped an acknowledged message.)"""
        tracker = self._trackers.get(episode)
        if tracker is not None:
            tracker = self._catch_up(episode, tracker)
        nxt = (self.store.next_step(episode) or 0) if tracker is None else self._base[episode] + len(tracker.events)
        keep = tracker is None and [e.step for e in events] == sorted({e.step for e in events}) and events[0].step >= nxt
        out = [dataclasses.replace(e, episode_id=episode, step=e.step if keep else nxt + j) for j, e in enumerate(events)]
        before = None if tracker is None else tracker.mark()
        try:
            for e in out if tracker is not None else ():
                tracker.note(e.kind, e.text, e.state.to_json())
            self.store.add(out, **scopes, metadata=metadata)
        except BaseException:
            if before is not None:
                tracker.rollback(before)
            raise
        self._close(episode)  # the events joined the conversation after the open turn's lines
        return self._added(out)

    def _added(self, events: list[Event]) -> list[dict]:
        """The ADD results (and history) of stored events: one per memory, by its id (a chunked memory's chunks
        are its parts, not results of their own)."""
        out = []
        for e in events:
            i = MemoryRecord.make_id(e.episode_id, e.step)
            self._log(i, "ADD", None, e.text)
            out.append({"id": i, "memory": e.text, "event": "ADD", "step": e.step})
        return out

    def _add_messages(self, messages: list[Mapping], episode: str, scopes: dict, metadata, notes: list,
                      skip: set[int] = frozenset(), lines: tuple[str, list[Any]] | None = None) -> list[dict]:
        """The messages through the conversation's running state first, all of them, then into the store: a batch
        with a bad message (a content that is not text, a tool answer to no call) is refused whole, with the
        conversation and the store as they were (a ValueError naming the message), never half stored. ``skip``:
        the messages that hold no text (:func:`unstored`), not fed (blank text parts would reach the store,
        which refuses a blank memory).

        ``lines``: (format, an agent's session lines) instead of messages: read with the scope's open
        turn, closed where it is first when it would grow past its cap (a note in ``notes`` says so: live.over),
        (sam_model.memory.live) from where it began, the conversation fed again from there (from the first message
        that differs from the turn's last read, where that read kept the tracker's mark before it: live.Read); each
        memory whose event changed is updated (a response's words now joined by its calls, a state a later line of the response
        revised), the events past the stored ones added. The fed conversation is a copy swapped in once stored.

        A memory updated whose words and kind stay (its state or labels revised, a response's later call moving it
        to a step whose event reads alike) is Mem0's NONE: no UPDATE in the results, no history entry. Each entry
        holds the old and new text, and a response whose results sit between its calls moves every later memory of
        the turn at each call: an open turn's memory holds one UPDATE, revised at each later change (:meth:`_log`)."""
        tracker = self._trackers.get(episode)
        if tracker is not None:
            tracker = self._catch_up(episode, tracker)
        # any other add closes it (its lines are then read as they are), once stored: a refused add leaves it
        turn = self._open.get(episode)
        opened = None
        if lines is not None:
            turn = turn if turn is not None and turn.format == lines[0] and tracker is not None else None
            messages, skip, opened, turn = self._read_live(episode, lines[0], lines[1], turn, tracker, notes)
        else:
            turn = None
        try:
            work = TranscriptState(episode, policy_of(messages, "add(...)")) if tracker is None else live.fork(tracker)
            if turn is not None:
                lo, old = max(turn.start - 1, 0), [dict(e) for e in work.events[max(turn.start - 1, 0):]]
                start, policy = turn.start, turn.mark["policy_norm"]
            else:
                lo, old = max(len(work.events) - 1, 0), [dict(e) for e in work.events[-1:]]
                start, policy = len(work.events), work.policy_norm
            if tracker is not None and any(m.get("role") == "system" for m in messages):
                policy = " ".join(filter(None, (policy, norm(policy_of(messages, "add(...)")))))
            # the messages the turn's last read fed alike, up to a mark it kept, are not fed again (live.Read)
            read = turn.read if turn is not None and opened is not None else None
            fed = read.reused(messages, skip, policy) if read is not None else 0
            if fed and not (read.marks[fed]["n"] - 1 <= lo or read.marks[fed]["n"] - 2 in read.rows) or (
                    fed and 0 < opened[0] < fed and opened[0] not in read.marks):
                fed = 0  # not kept: fed whole
            marks = {i: m for i, m in read.marks.items() if i <= fed} if fed else {}
            if fed:
                work.rollback(_unshared(marks[fed]))
            elif turn is not None:
                work.rollback(_unshared(turn.mark))
            work.policy_norm = policy
            at = (None, start)
            if opened is not None and opened[0] < fed:  # where the turn begins, passed over
                at = (read.marks[opened[0]], read.marks[opened[0]]["n"]) if opened[0] else (
                    {**turn.mark, "policy_norm": policy}, start)
            for i in range(fed, len(messages)):
                if i >= len(messages) - live.KEEP_MARKS or (opened is not None and i == opened[0]):
                    marks[i] = work.mark()
                if opened is not None and i == opened[0]:
                    at = (marks[i], len(work.events))
                if i in skip:
                    continue
                _check_call_size(message := messages[i], f"add(...) message {i}")
                work.feed(message, f"add(...) message {i}")
            marks[len(messages)] = work.mark()
            if opened is not None and opened[0] >= len(messages):
                at = (marks[len(messages)], len(work.events))
        except (SAMFileError, ValueError) as err:
            raise ValueError(str(err)) from None
        n_old, n_new = lo + len(old), len(work.events)
        if n_new < n_old:
            raise ValueError(f"data: these lines leave the conversation {n_old - n_new} turn(s) shorter than an earlier "
                             "add stored it (a rewind of a message an earlier add stored?): an add cannot take memories "
                             "back; delete the run's memories (delete_all) and add its session's lines again in one "
                             "add, or convert its session file (sam-data transcripts)")
        base = self._base[episode] if episode in self._trackers else self.store.next_step(episode) or 0
        marked = self.store.recorder.mark([episode])
        # the records of the open turn again, each compared with the state before it: from the first event the
        # messages fed may have changed (the one before their first, whose state a call revises), the recorder's row
        # before it the last read's
        first = max(marks[fed]["n"] - 1, lo) if fed else lo
        if first > lo:
            self.store.recorder.rollback({episode: read.rows[first - 1]})
        elif turn is not None:
            self.store.recorder.rollback({episode: live.unrow(turn.recorder)})
        row = self.store.recorder.mark([episode])[episode]
        rows = {j: r for j, r in read.rows.items() if j < first} if first > lo else {}
        kept: list = []
        updated: list[tuple] = []
        try:
            for j in range(first, n_old):
                e = self._event(work.events[j], base)
                rec = (self.store.recorder.revise(e) if j == start - 1 and row is not None and first == lo
                       else self.store.recorder.record(e))
                rows[j] = self.store.recorder.mark([episode])[episode]
                changed = work.events[j] != old[j - lo] or (j > lo and work.events[j - 1]["state"] !=
                                                            old[j - 1 - lo]["state"])
                if changed and rec.id in self.store:  # unless that memory was deleted (or is chunked)
                    hit, version = self.store.get(rec.id), self.store.version(rec.id)
                    self.store.update(rec)
                    kept.append(version)
                    if (_said(hit), hit.kind) != (e.text, e.kind):  # else Mem0's NONE: its state alone moved
                        updated.append((rec.id, _said(hit), e.text, e.step))
            new = [self._event(d, base) for d in work.events[n_old:]]
            if new:
                rows.update(self._rows(episode, new, n_old) if opened is not None else {})
                self.store.add(new, **scopes, metadata=metadata)
        except BaseException:  # the batch is stored whole or not at all, and the conversation is as it was
            try:
                self.store.recorder.rollback(marked)
            finally:
                for version in reversed(kept):  # as it was stored, needing no encoder (the encoder may be what failed)
                    self.store.restore(version)
            raise
        self._trackers[episode] = work
        self._base.setdefault(episode, base)
        logged = set(turn.logged) if turn is not None else set()
        out = []
        for i, said, text, step in updated:
            if entry := self._log(i, "UPDATE", said, text, again=logged):
                logged.add(entry)
            out.append({"id": i, "memory": text, "event": "UPDATE", "step": step})
        if opened is not None:
            self._open[episode] = self._opened(episode, work, opened, at, lo, start, row, base, logged,
                                               live.Read(messages, skip, work.policy_norm, marks, rows))
        else:
            self._close(episode)
        out += self._added(new)
        listed = {r["id"] for r in out}
        for j in range(lo, n_new):
            d, i = work.events[j], MemoryRecord.make_id(episode, base + j)
            if (n := len(d["text"])) > FIT_CHARS and i in listed:
                notes.append({"reason": f"memory {i!r} (a {d['kind']}): its text has {n:,} characters, more than a "
                              f"memory holds with its heading ({FIT_CHARS:,}): stored as its first {fitted(n):,} and "
                              f"' ...[+{n - fitted(n)} chars]' (sam-data transcripts keeps it whole)"})
        return out

    def _read_live(self, episode: str, fmt: str, items: list[Any], turn: live.OpenTurn | None,
                   tracker: TranscriptState | None, notes: list) -> tuple[list[Mapping], set[int], tuple, Any]:
        """(the messages of the open turn and the add's lines, those holding no text, (how many of them the closed
        lines give, the lines, where the open turn's lines begin, the facts), the open turn they were read with)
        for :meth:`_add_messages`: ``turn``, or where it would grow past its cap (live.over, a note in ``notes``)
        the turn closed where it is."""
        if fmt == "codex-exec" and turn is None and items[0].get("type") not in codex_exec.STARTS:
            raise ValueError("data[0]: codex exec --json events are added from a run's thread.started: an item's call is "
                             "read at its item.started and with its result at item.completed, and this scope has no "
                             "open run whose lines these continue (its memories were changed since, or none were "
                             "added); add the run's lines from its thread.started, or the lines of the rollout it "
                             "writes as they come (~/.codex/sessions)")
        _check_depth(items, "data")  # a line no check read (a Codex rollout's is no message)
        old, facts = (turn.lines, turn.facts) if turn is not None else ([], {})
        added = live.digest(items) if fmt in ("codex", "codex-exec") else None
        sent = len(items)
        if added is not None:  # Codex lines sent again: read once (Claude Code's: live.opens)
            items = live.retried(fmt, old, facts, items, added)
        facts, cut = live.read_cut(fmt, old, items, facts)
        if turn is not None and tracker is not None and (why := live.over(turn, items, cut)):
            turn = self._ended(episode, turn, tracker)  # kept only once the add is stored
            notes.append({"reason": why})
            facts, cut = live.read_cut(fmt, [], items, turn.facts)
        if why := live.rewritten(fmt, items, facts):
            raise ValueError(why)
        old = turn.lines if turn is not None else []
        lines = [*old, *copy.deepcopy(items)]  # the scope's own copy: a caller may reuse its line dicts
        if fmt == "gemini-cli" and gemini_cli.rewind_elsewhere(lines, "data"):
            raise ValueError(gemini_cli.rewind_elsewhere(items, "data") or gemini_cli.rewind_elsewhere(lines, "data"))
        messages = live.chat(fmt, lines, facts).messages
        before = live.chat(fmt, lines[:cut], facts) if cut else None
        closed = before.messages if before is not None else []
        if messages[:len(closed)] != closed:  # the reader joined lines across the cut: the whole is the open turn
            cut, closed = 0, []
        elif before is not None and before.cwd:  # the directory the next open turn's lines are read in
            facts["cwd"] = before.cwd
        if added is not None:
            facts["added"], facts["added_lines"] = added, sent
        skip = {i for i, m in enumerate(messages) if _media_only(m.get("content"))}
        return messages, skip, (len(closed), lines, cut, facts, fmt), turn

    def _opened(self, episode: str, work: TranscriptState, opened: tuple, at: tuple, lo: int, start: int,
                row: list | None, base: int, logged: set[str], read: live.Read) -> live.OpenTurn:
        """The scope's open turn after an add: its lines, the tracker's mark and the recorder's row where they
        begin (the add's row after the event before them, or replayed on a scratch recorder from the row the add's
        records began at), of the history entries adds of the turn ``logged``, those of memories the next add reads
        again (from the event before the turn's), and the add's ``read`` of them (live.Read), from where they begin."""
        closed, lines, cut, facts, fmt = opened
        live.close(fmt, facts, lines[:cut])
        mark, first = at
        if first - 1 in read.rows:
            begun = read.rows[first - 1]
        else:
            scratch = MemoryRecorder()
            scratch.rollback({episode: row})
            for j in range(lo, first):
                e = self._event(work.events[j], base)
                scratch.revise(e) if j == start - 1 and row is not None else scratch.record(e)
            begun = scratch.mark([episode])[episode]
        again = {MemoryRecord.make_id(episode, base + j) for j in range(max(first - 1, 0), len(work.events))}
        kept = None if mark is None else live.Read(
            read.messages[closed:], {i - closed for i in read.skip if i >= closed}, read.policy,
            {i - closed: m for i, m in read.marks.items() if i >= closed and i >= len(read.messages) - live.KEEP_MARKS},
            {j: r for j, r in read.rows.items() if j >= first - 1})
        return live.OpenTurn(fmt, live.latest(fmt, lines[cut:]), first, mark, live.row(begun),
                             facts, sorted(e for e in logged if e.rpartition("@")[0] in again), kept
                             ).carry(self._open.get(episode))

    def _rows(self, episode: str, new: list[Event], at: int) -> dict[int, list | None]:
        """The recorder's row after each of the ``new`` events (the first at event ``at``), for the open turn's
        next add (live.Read): replayed on a scratch recorder from the store's row before them."""
        scratch = MemoryRecorder()
        scratch.rollback(self.store.recorder.mark([episode]))
        out = {}
        for j, e in enumerate(new, at):
            scratch.record(e)
            out[j] = scratch.mark([episode])[episode]
        return out

    def _close(self, episode: str) -> None:
        """Close the scope's open turn where its conversation now ends (another add, an update or a delete of one of
        its memories), keeping what the session's earlier lines said (live.OpenTurn's ``facts``: Codex's version,
        Gemini CLI's closed message ids, now with the turn's own, and the conversation's directory, which the turn's
        lines may have moved: the one before it, kept, read a Codex turn_context's new cwd back to the old for the
        next lines, and their paths under it untraced): its next lines are read as they come, as after a
        turn that closed (dropped whole, a Codex rollout's later parallel calls were read in file order, a Gemini
        CLI message written again was stored twice and its user or ``$set`` record alone refused). A codex exec
        run's lines continuing it are refused in one line (:meth:`_read_live`), so its turn goes whole."""
        turn, tracker = self._open.pop(episode, None), self._trackers.get(episode)
        if turn is None or tracker is None or turn.format == "codex-exec":
            return
        facts = {**turn.facts, **({"cwd": tracker.cwd} if tracker.cwd else {})}  # the directory the turn left
        live.close(turn.format, facts, turn.lines)
        self._open[episode] = live.OpenTurn(turn.format, [], len(tracker.events), tracker.mark(),
                                            live.row(self.store.recorder.mark([episode])[episode]), facts)

    def _ended(self, episode: str, turn: live.OpenTurn, tracker: TranscriptState) -> live.OpenTurn:
        """An open turn closed where the conversation ends, at its cap (live.over): none of its lines, the facts the
        session's lines said kept and the directory they told last (the conversation's), and, unlike
        :meth:`_close`, a codex exec run's or a Gemini CLI message's next lines read, not refused: a sidecar goes on
        past the cap, and a line refused would be lost to it."""
        facts = {**turn.facts, **({"cwd": tracker.cwd} if tracker.cwd else {})}
        return live.OpenTurn(turn.format, [], len(tracker.events), tracker.mark(),
                             live.row(self.store.recorder.mark([episode])[episode]), facts)

    def _catch_up(self, episode: str, tracker: TranscriptState) -> TranscriptState:
        """A conversation saved behind its memories (until 2026-12-05 an agent-log event added between chat
        messages took the steps the conversation's next messages would take, and was not in it) takes in the
        memories it missed, so that its next message gets the next free step, not a stored one's. Past MAX_CATCH_UP
        missing steps (an event kept a far step of its own) the conversation starts afresh after them instead (its
        earlier words are no longer traced); a missing step's place would cost a tracker event each."""
        start, end = self._base[episode] + len(tracker.events), self.store.next_step(episode) or 0
        if end <= start:
            return tracker
        self._open.pop(episode, None)
        if end - start > MAX_CATCH_UP:  # an event saved with a far step of its own: the conversation starts afresh
            fresh = TranscriptState(episode, result_limit=tracker.result_limit)
            fresh.policy_norm, self._trackers[episode], self._base[episode] = tracker.policy_norm, fresh, end
            fresh.cwd = tracker.cwd  # the working directory its paths are traced under (toolstate), as the policy
            return fresh
        stored = {h.step: self.store.memory(h.memory_id) for h in self.store.get_all(episode_id=episode)
                  if h.step is not None and h.step >= start}  # a chunked memory whole
        for step in range(start, end):
            h = stored.get(step)  # none: deleted since, a blank place (as a deleted memory's)
            tracker.note(h.kind if h else "system", _said(h) if h else "",
                         State(phase=h.phase).to_json() if h else tracker.snapshot())
        return tracker

    @staticmethod
    def _event(d: Mapping[str, Any], base: int) -> Event:
        """A tracker's event dict as a memory event (its labels are training data, not memory)."""
        return parse_event({**{k: v for k, v in d.items() if k != "useful_memory_steps"}, "step": d["step"] + base,
                            "text": fit(d["text"])}, "add(...)")

    # ---- reading by id (the search: sam_model.memory.scopedsearch) -----------------------------------------

    @staticmethod
    def _check_id(memory_id: Any) -> None:
        """Ids are strings (``<episode>#<step>``): a list or dict was a bare 'unhashable type' naming nothing, and a
        number was looked up as an id no memory has."""
        if not isinstance(memory_id, str):
            raise TypeError(f"memory_id must be a memory's id, a string such as 'mia#3' (from add, search or "
                            f"get_all), got {type(memory_id).__name__} {str(memory_id)[:40]!r}")

    def _own(self, memory_id: Any, scopes: Mapping[str, Any]) -> Hit | None:
        """The memory ``memory_id`` whole (a chunk's id names its memory), None when it is not stored or not of the
        scopes given (each scope given must be the memory's: another user's memory is not there for the caller).
        Called under ``self.lock``, the store's: a delete of the store itself between the look and the fetch had
        raised a bare KeyError."""
        self._check_id(memory_id)
        if not self.store.has(memory_id):
            return None
        hit = self.store.memory(memory_id)
        if hit.parent_id is not None:
            hit = self.store.memory(hit.parent_id)
        return hit if all(v is None or getattr(hit, n) == v for n, v in scopes.items()) else None

    @locked
    def get(self, memory_id: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None) -> dict[str, Any] | None:
        """The memory ``memory_id`` whole (None when there is none, as Mem0). Scopes, when given, must be the
        memory's (else None): a server that knows whose request it is passes them, so that an id of another
        user's memory reads nothing."""
        hit = self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False))
        return None if hit is None else self._result(hit)

    @locked
    def get_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: Mapping[str, Any] | None = None, limit: int | None = 100, *,
                all_scopes: bool = False) -> dict[str, list]:
        """The first ``limit`` memories of the scopes in write order (None: all), those that pass ``filters``.
        No scope at all is refused unless ``all_scopes=True``."""
        if limit is not None:
            check_count(limit, "limit", "how many memories to list; None lists them all",
                        "past any number of memories", 2**63 - 1)
        scopes, rest = self._scoped_filters({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters,
                                            all_scopes, "list")
        hits = [h for h in self._whole(self.store.get_all(**scopes)) if not rest or matches(self._record(h), rest)]
        return {"results": [self._result(h) for h in hits[:limit]]}

    def _whole(self, hits: list[Hit]) -> list[Hit]:
        """The memories of store hits, each once and whole: a chunked memory where its first chunk was written."""
        seen: set = set()
        return [h if h.parent_id is None else self.store.memory(h.parent_id) for h in hits
                if h.parent_id is None or not (h.parent_id in seen or seen.add(h.parent_id))]

    # ---- changing ------------------------------------------------------------------------------------------

    @locked
    def update(self, memory_id: Any, data: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None) -> dict[str, str]:
        """Replace the words of the memory ``memory_id`` by ``data`` (Mem0's ``update``): same id, scopes, step
        and place in the write order, a new vector; an UPDATE in its history. "Make the budget $3,500" is then
        one memory that says $3,500, not a second one beside the old. Scopes, when given, must be the memory's
        (else KeyError, as for an unknown id)."""
        if self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False)) is None:
            raise KeyError(f"memory {memory_id!r} is not in the store{_within(user_id, agent_id, run_id)} (ids come "
                           "from add, search or get_all)")
        if not isinstance(data, str) or not data.strip():
            raise ValueError(f"data must be the memory's new text (a non-empty string), got {data!r}")
        hit = self.store.memory(memory_id)  # a chunked memory whole: updated whole, by its id
        if hit.step is None:
            raise ValueError(f"memory {memory_id!r} has no step (an index saved before texts were kept): add it again")
        if hit.memory_id != memory_id:  # a chunk: its new words would stand for the whole memory's
            raise ValueError(f"{memory_id!r} is chunk {hit.chunk} of memory {hit.memory_id!r}: update the memory by "
                             "its id, with its whole new text")
        event = Event(hit.episode_id, hit.step, hit.kind, data, State(phase=hit.phase))
        # new words in the same place of its task: the memory that opened it still does (a task_opening model's flag)
        rec = dataclasses.replace(memory_record(event, None, self.store.recorder.task_start(hit.episode_id),
                                                self.store.opens_task(memory_id)), id=memory_id)
        self.store.update(rec)
        if (at := self._in_conversation(hit)) is not None:  # a later tool call that revises it keeps the new words
            at[0].rewrite(at[1], data)
        turn = self._open.get(hit.episode_id)
        if turn is not None and (at is None or at[1] >= turn.start - 1):  # its lines would be read again over it
            self._close(hit.episode_id)
        elif turn is not None:  # the turn's calls are traced again over the new words: all its messages fed again
            turn.read = None
        self._log(memory_id, "UPDATE", _said(hit), data)
        return {"message": f"memory {memory_id} updated"}

    @locked
    def history(self, memory_id: Any, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None) -> list[dict[str, Any]]:
        """The memory's ADD / UPDATE / DELETE events, oldest first (Mem0's ``history``; [] for an unknown id).
        Scopes, when given, must be the memory's (else []): a stored memory's own, a deleted one's those of its
        episode (``episode_of``), so that they hold after the memory is deleted."""
        self._check_id(memory_id)
        scopes = self._scopes(user_id, agent_id, run_id, need=False)
        if any(v is not None for v in scopes.values()):
            if self.store.has(memory_id):  # its own scopes (an older store's episode names place them otherwise)
                if self._own(memory_id, scopes) is None:
                    return []
            else:  # the scopes its id places, or those kept for an id of an older save, which does not place them
                places = (self._owners[memory_id] if memory_id in self._owners
                          else str(memory_id).rpartition("#")[0].split("/") + [""] * 3)
                if places is None or any(v is not None and places[n] != v for n, v in enumerate(scopes.values())):
                    return []
        return [dict(h) for h in self._history.get(memory_id, [])]

    # ---- forgetting ----------------------------------------------------------------------------------------

    @locked
    def delete(self, memory_id: Any, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None) -> dict[str, str]:
        """Delete the memory ``memory_id`` (a chunked memory: all its chunks), a DELETE in its history. Scopes,
        when given, must be the memory's (else KeyError, as for an unknown id). A chunk's id is refused: the
        search results name memories by their ids, and one chunk gone left the memory's other words stored.

        Its conversation forgets it too (TranscriptState.forget): its words, and a tool call's values (a card it paid
        with), which stayed in the conversation's and the store's states, searched by call and saved, until
        delete_all. The scope's last memory deleted, the conversation goes as delete_all's does."""
        hit = self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False))
        if hit is None:
            raise KeyError(f"memory {memory_id!r} is not in the store{_within(user_id, agent_id, run_id)} (ids come "
                           "from add, search or get_all)")
        if hit.id != memory_id:
            raise ValueError(f"{memory_id!r} is chunk {self.store.get(memory_id).chunk} of memory {hit.id!r}: delete "
                             "the memory by its id")
        self.store.delete([memory_id])
        episode = hit.episode_id
        if not self._holds_memories(hit):  # its last: the conversation goes as delete_all's does
            self._drop_conversation(episode)
        elif (at := self._in_conversation(hit)) is not None:
            tracker, step = at  # no later call is traced to it, no save of the conversation holds its words, nor
            until = tracker.forget(step)  # the values its tool call set (its state's, the store's last states)
            last = (self.store.next_step(episode) or 0) - 1 - self._base[episode]
            self.store.recorder.drop(episode, cleared(until, step, last), cleared(until, step, last - 1))
        self._close(episode)  # the values it set are gone from the conversation: the open turn's mark held them
        self._log(memory_id, "DELETE", _said(hit), None)
        return {"message": f"memory {memory_id} deleted"}

    def _holds_memories(self, hit: Hit) -> bool:
        """Whether the deleted memory ``hit``'s episode still has a memory: one of its conversation's events, newest
        first (deletes go oldest first, as get_all lists them), else one of the memories of the hit's scopes, which
        are its episode's (MemoryStore.has_episode; get_all(episode_id=...) read every memory of every scope at each
        delete)."""
        episode = hit.episode_id
        tracker, base = self._trackers.get(episode), self._base.get(episode, 0)
        events = tracker.events if tracker is not None else []
        if any(events[j]["text"] and self.store.has(MemoryRecord.make_id(episode, base + j))
               for j in reversed(range(len(events)))):
            return True
        return self.store.has_episode(episode, hit.user_id, hit.agent_id, hit.run_id)

    def _drop_conversation(self, episode: str) -> None:
        """Forget an episode whose memories are all deleted: its conversation (the values its tool calls set, its
        events' states) and the store's last state of it. Its next message starts afresh, at the next step."""
        self._trackers.pop(episode, None)
        self._base.pop(episode, None)
        self._open.pop(episode, None)
        self.store.recorder.forget(episode)

    def _in_conversation(self, hit: Hit) -> tuple[TranscriptState, int] | None:
        """(the conversation's tracker, the memory's event in it), None for a memory no conversation wrote. The
        tracker keeps every event's text to trace later tool-call arguments to it, and a tool call stores the event
        before it again with its decision state: an update or a delete of the memory must reach it too."""
        tracker, base = self._trackers.get(hit.episode_id), self._base.get(hit.episode_id)
        if tracker is None or base is None or hit.step is None or not 0 <= hit.step - base < len(tracker.events):
            return None
        return tracker, hit.step - base

    @locked
    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict:
        """Delete every memory of the scopes (at least one scope: ``reset`` forgets everything). A chunked memory
        is one memory: counted once, one DELETE in its history under its id, with its whole text."""
        scopes = self._scopes(user_id, agent_id, run_id, need="write")
        # the store held throughout (self.lock is the store's): a SAMStore sharing it wrote a namespace's first
        # memory between the listing of the live episodes and the forgetting of the others, and lost its state
        hits = self._whole(self.store.get_all(**scopes))
        self.store.delete([h.id for h in hits])
        for h in hits:
            self._log(h.id, "DELETE", _said(h), None)
        live = {h.episode_id for h in self.store.get_all()}  # once: per tracker it made delete_all quadratic
        for ep in (set(self._trackers) | self.store.recorder.episodes()) - live:  # nor the store's last state of it
            self._drop_conversation(ep)
        return {"message": f"{len(hits)} memories deleted"}

    @locked
    def reset(self) -> None:
        """Forget every memory of every scope (the ids start again from each scope's step 0; ids given to a
        SAMVectorStore lived in the memories' metadata and go with them)."""
        self.store.reset()
        self._trackers.clear()
        self._base.clear()
        self._open.clear()
        self._times.clear()
        self._history.clear()
        self._owners.clear()


__all__ = ["ScopedMemory", "unstored"]  # unstored: README names it here (its home: sam_model.memory.scopedinput)
