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

And whatever it ranks by, a search is told which of the episode's memories the earlier tool calls of its task took
values from (before its step, from its task start on), read off the scopes' own conversation's labels as evaluate.py
reads a log's (sam_model.memory.scopeduses): each result says so (``used``; left out where it is not known: a
memory of another episode than the scopes' own, a task whose labels were dropped), and a model that scores it
(``task_reuse``) ranks by it as evaluate.py's replay does. Agent-log episodes added to one scope, each with steps
from 0, are stored as evaluate.py's life of them: each a task, its labels its own (sam_model.memory.scopedsteps).

Threads: one ScopedMemory may serve every request thread of an agent server. Each method holds ``memory.lock``
(a re-entrant lock, sam_model.locking: the store's own, ``memory.store.lock``), so concurrent adds, searches,
deletes and saves of any users run one at a time, every search sees only its scopes, every save loads back, and
whatever else shares the store (a SAMStore, a direct call, a save of the store) sees each call whole.

One idea a module: this one keeps the scopes and their episodes, each memory's times and history, and the lookups,
updates and deletes; ScopedMemory inherits its adds (sam_model.memory.scopedwrite), its search
(sam_model.memory.scopedsearch) and its save and load (sam_model.memory.scopedfile); what an add is given is checked
in sam_model.memory.scopedinput, filters are sam_model.memory.scopedfilters, results sam_model.memory.scopedresult,
the memories earlier calls used sam_model.memory.scopeduses.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timezone
from typing import Any

from sam_model.data.examples import MemoryRecord, memory_record
from sam_model.data.schema import Event, State
from sam_model.data.toolstate import TranscriptState, cleared
from sam_model.hit import Hit
from sam_model.limits import check_count, check_k, check_scope, episode_of
from sam_model.locking import locked
from sam_model.memory import live, live_responses, resent
from sam_model.memory.scopedfile import ScopedFiles
from sam_model.memory.scopedfilters import matches
from sam_model.memory.scopedinput import unstored
from sam_model.memory.scopedresult import _said, result
from sam_model.memory.scopedsearch import ScopedSearch
from sam_model.memory.scopedsteps import Numbering
from sam_model.memory.scopedwrite import ScopedWrites
from sam_model.store import MemoryStore, encoder_of, store_config_of
from sam_model.storeconfig import StoreConfig

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
DROPPED_SCOPES = 256  # deleted scopes whose kept adds' keys stay (ScopedMemory._keep_dropped), the last deleted
NO_SCOPE = ("give user_id, agent_id or run_id (or all_scopes=True to {} every scope on purpose): a missing "
            "scope is refused, never widened to every user")


def _within(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    given = ", ".join(f"{n}={v!r}" for n, v in zip(SCOPE_KEYS, (user_id, agent_id, run_id)) if v is not None)
    return f" within {given}" if given else ""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class ScopedMemory(ScopedWrites, ScopedSearch, ScopedFiles):
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
        # episode -> its last adds of agent histories' messages (resent.FORMATS),
        # [[digest, count(, true)(, opening), format], ...] newest last, KEPT a format (sam_model.memory.resent): one
        # sent again whole with the next turn's is read once
        self._sent: dict[str, list] = {}
        # episode -> [[digest, count, format], ...] of every message of each of those formats it was given, in order
        # (resent.given): a whole history sent after messages added one at a time opens with them
        self._given: dict[str, list] = {}
        # episode -> the ids (digests) of the Responses message items whose memories were deleted (live_responses.deleted)
        # when the scope's last went: its conversation and open turn are dropped, and a streaming agent's .done of
        # such an item, read by a fresh turn, brought the words back; the scope's next Responses turn takes them
        self._gone: dict[str, list[str]] = {}
        # the episodes of the two above whose memories are all deleted, the last deleted last: the oldest past
        # DROPPED_SCOPES are forgotten (_keep_dropped), so a memory whose scopes come and go stays bounded
        self._dropped: dict[str, None] = {}
        # episode -> how far an adapter that adds a whole source again has read it (the ADK service: a session's chat
        # messages stored, [to, digest]; :meth:`progress`), no word of it: kept when the episode's memories are all
        # deleted (as ``_sent``, for the last DROPPED_SCOPES), else the source sent again stored them all again
        self._progress: dict[str, Any] = {}
        # episode -> step -> the labels of an agent-log event added with its own step (a decision point of a log
        # replayed): what its call took values from, read as the conversation's are (sam_model.memory.scopeduses)
        self._labels: dict[str, dict[int, tuple[int, ...]]] = {}
        # episode -> step -> the needed paths of such a decision point (its state's uncertainty_flags): the slots its
        # labels supplied, which a search ordered "needed" reads (sam_model.memory.scopeduses); saves before: none
        self._needs: dict[str, dict[int, tuple[str, ...]]] = {}
        # episode -> the agent-log episode its events with steps of their own now continue (where the next ones go:
        # sam_model.memory.scopedsteps)
        self._numbering: dict[str, Numbering] = {}
        # episode -> the steps of decision points whose labels are not known (agent-log events numbered on): the
        # uses of a task holding one are not known whole (a search's Hit.used says None but where it is known used)
        self._unknown: dict[str, set[int]] = {}
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

    episode_of = staticmethod(episode_of)  # sam_model.limits': the log readers name a scope's episode by it too

    @staticmethod
    def _scopes(user_id, agent_id, run_id, need: bool = True, all_scopes: bool = False,
                verb: str = "search", held: Callable[[str, Mapping[str, Any], str], bool] | None = None
                ) -> dict[str, Any]:
        """The scopes, checked (check_scope). ``held(name, scopes given, value)``: whether a value no add may name
        any more still holds memories within the other scopes given, which a read or a delete then takes as written
        (:meth:`_held`); an add passes none."""
        given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        for name, v in given.items():  # held within the other scopes given (the caller's own user_id)
            check_scope(v, name) if held is None else check_scope(v, name, functools.partial(held, name, given))
        if not isinstance(all_scopes, bool):  # "false" is truthy: a string must not widen a search to every user
            raise TypeError(f"all_scopes must be true or false, got {all_scopes!r}")
        if user_id is None and agent_id is None and run_id is None:
            if need == "write":
                raise ValueError("give user_id, agent_id or run_id: every memory belongs to a scope")
            if need and not all_scopes:
                raise ValueError(NO_SCOPE.format(verb))
        return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}

    def _held(self, name: str, given: Mapping[str, Any], value: str) -> bool:
        """Whether the store holds memories under exactly this scope value, within the other scopes ``given``: a
        read or delete naming a value saved before its rule came (limits.scope_flaw) reaches them as written, so
        their user can still list, export and erase them; an add under it stays refused, and no other id is
        reached. Held by other users' memories alone, it was taken still, and told bob alice's scope name."""
        return self.store.holds_scope(name, value, given)

    def _scoped_filters(self, scopes: dict[str, Any], filters: Mapping[str, Any] | None, all_scopes: bool,
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
        return self._scopes(*(scopes[n] for n in SCOPE_KEYS), need=True, all_scopes=all_scopes, verb=verb,
                            held=self._held), rest

    def search_scopes(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      filters: Mapping[str, Any] | None = None,
                      all_scopes: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the scopes a search runs in, its other filters): the arguments' scopes and those given inside
        ``filters`` (Mem0 takes both), checked as :meth:`search` checks them. One place, so that a caller that
        encodes the query apart (sam_model.serve.batching) reads the same scopes' live state as the search."""
        return self._scoped_filters({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters,
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
        hit = self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False, held=self._held))
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
        (else KeyError, as for an unknown id). A scope no add takes any more (limits.scope_flaw) is taken where
        memories are held under it, as by a read or delete: the memory's user corrects its words where they are."""
        if self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False, held=self._held)) is None:
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
        places = (self._owners[memory_id] if memory_id in self._owners  # a deleted memory's: its id places them,
                  else str(memory_id).rpartition("#")[0].split("/") + [""] * 3)  # or kept for an older save's id
        # a value no add may name is taken where it is this memory's own (a deleted one's history is still its user's)
        scopes = self._scopes(user_id, agent_id, run_id, need=False,
                              held=lambda name, given, v: self._held(name, given, v) or (
                                  places is not None and places[SCOPE_KEYS.index(name)] == v))
        if any(v is not None for v in scopes.values()):
            if self.store.has(memory_id):  # its own scopes (an older store's episode names place them otherwise)
                if self._own(memory_id, scopes) is None:
                    return []
            elif places is None or any(v is not None and places[n] != v for n, v in enumerate(scopes.values())):
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
        delete_all. The scope's last memory deleted, the conversation goes as delete_all's does. The scope's open
        turn of an agent's session lines is closed where it held what the memory set (a delete of a tool call that
        set values, of the event before the turn or of one of its own), else kept open: until 2026-12-06 every
        delete closed it, and a streamed Responses item's ``.done`` after a delete of an unrelated memory was read
        as a new item, stored twice."""
        hit = self._own(memory_id, self._scopes(user_id, agent_id, run_id, need=False, held=self._held))
        if hit is None:
            raise KeyError(f"memory {memory_id!r} is not in the store{_within(user_id, agent_id, run_id)} (ids come "
                           "from add, search or get_all)")
        if hit.id != memory_id:
            raise ValueError(f"{memory_id!r} is chunk {self.store.get(memory_id).chunk} of memory {hit.id!r}: delete "
                             "the memory by its id")
        self.store.delete([memory_id])
        episode = hit.episode_id
        apart = False  # its words alone gone, before the open turn's lines: the turn's mark holds nothing of it
        if not self._holds_memories(hit):  # its last: the conversation goes as delete_all's does
            self._gone_items(episode, hit)
            self._drop_conversation(episode)
        elif (at := self._in_conversation(hit)) is not None:
            tracker, step = at  # no later call is traced to it, no save of the conversation holds its words, nor
            held = (len(tracker.writes), len(tracker.shown))
            until = tracker.forget(step)  # the values its tool call set (its state's, the store's last states)
            last = (self.store.next_step(episode) or 0) - 1 - self._base[episode]
            self.store.recorder.drop(episode, cleared(until, step, last), cleared(until, step, last - 1))
            turn = self._open.get(episode)
            apart = turn is not None and step < turn.start - 1 and not until and held == (
                len(tracker.writes), len(tracker.shown))
        if not apart:  # the values it set are gone from the conversation: the open turn's mark held them
            self._gone_items(episode, hit)  # its later versions stay out
            self._close(episode)
        self._log(memory_id, "DELETE", _said(hit), None)
        return {"message": f"memory {memory_id} deleted"}

    @locked
    def progress(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                 mark: Any = None) -> Any:
        """How far an adapter that adds a whole source again has read the scopes' (the ADK service: a session's
        chat messages stored), None if never told; with ``mark`` (JSON: no words, a count and a digest), told it.
        Saved with the memory and kept when the scopes' memories are all deleted, for the last DROPPED_SCOPES
        deleted: what the memories' own metadata said went with them, and the source sent again after a restart
        was stored again, the deleted memories back."""
        episode = self.episode_of(**self._scopes(user_id, agent_id, run_id, need="write", held=self._held))
        if mark is not None:
            self._progress[episode] = json.loads(json.dumps(mark))  # a copy, JSON as a save writes it
        return self._progress.get(episode)

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
        events' states) and the store's last state of it. Its next message starts afresh, at the next step. The key
        of its last adds of agent histories' messages (resent.FORMATS) stays (``_sent``: a digest and a count, no word
        of them; the older ones no longer the whole conversation, resent.dropped), and so does the digest of all it
        was given of them (``_given``): an agent that sends its whole history again after each turn (a Strands hook, Pydantic AI's
        all_messages(), an AutoGen context's messages) still holds the deleted turns, and its next add, opening
        with them, stored them all again, the deleted memories back after one turn. Their start is read once (the add's notes say so), as after a delete of
        any other memory of them. So do the ids of its open Responses turn's items deleted one by one (``_gone``,
        :meth:`delete`), which a streaming agent adds again at their ``.done``; delete_all marks none (its refusals
        of a rewound session say to delete_all and add the session's lines again from its start). Both are kept for
        the last DROPPED_SCOPES scopes so deleted (:meth:`_keep_dropped`)."""
        self._trackers.pop(episode, None)
        self._base.pop(episode, None)
        if (turn := self._open.pop(episode, None)) is not None and turn.facts.get("gone"):  # its next turn's
            self._gone[episode] = list(dict.fromkeys([*self._gone.get(episode, ()), *turn.facts["gone"]]))[
                -live_responses.SEEN_ITEMS:]
        self._labels.pop(episode, None)
        self._needs.pop(episode, None)
        self._numbering.pop(episode, None)
        self._unknown.pop(episode, None)
        self.store.recorder.forget(episode)
        if episode in self._sent:  # only its last add still stands for the whole conversation the agent holds
            self._sent[episode] = resent.dropped(self._sent[episode])
        if episode in self._sent or episode in self._gone or episode in self._progress:
            self._dropped.pop(episode, None)
            self._dropped[episode] = None
            self._keep_dropped()

    def _keep_dropped(self) -> None:
        """Forget the kept adds' keys and deleted items' ids (``_sent``, ``_gone``) of the scopes deleted longest
        ago past the last DROPPED_SCOPES: until stop 63 every deleted scope's stayed for good (up to 8 keys a format,
        the digests of the last Pydantic AI and LlamaIndex adds' last 256 messages and of 256 deleted Responses items:
        ~17 KB of one format, ~26 KB of them all, ~0.5 KB for 8 Converse adds), in memory and in every save, so a
        server whose users' runs come and go grew without bound (now at most ~6.6 MB, ~130 KB of Converse keys). An agent sends a deleted
        history again soon after the delete (its next turn), so the scopes deleted last keep theirs (a history sent
        again after DROPPED_SCOPES later deletes is stored again). A scope added to since is no deleted one: its
        keys are its conversation's."""
        while len(self._dropped) > DROPPED_SCOPES:
            episode = next(iter(self._dropped))
            del self._dropped[episode]
            if episode not in self._trackers:
                self._sent.pop(episode, None)
                self._given.pop(episode, None)
                self._gone.pop(episode, None)
                self._progress.pop(episode, None)

    def _gone_items(self, episode: str, hit: Hit) -> None:
        """Keep in the episode's open Responses turn's facts the message items whose words were the deleted
        memory ``hit``'s (live_responses.deleted): a streaming agent adds each again at its ``.done``."""
        turn = self._open.get(episode)
        if turn is not None and turn.format == live_responses.FORMAT:
            live_responses.deleted(turn.facts, turn.lines, _said(hit))

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
        scopes = self._scopes(user_id, agent_id, run_id, need="write", held=self._held)
        # the store held throughout (self.lock is the store's): a SAMStore sharing it wrote a namespace's first
        # memory between the listing of the live episodes and the forgetting of the others, and lost its state
        hits = self._whole(self.store.get_all(**scopes))
        self.store.delete([h.id for h in hits])
        for h in hits:
            self._log(h.id, "DELETE", _said(h), None)
        live = {h.episode_id for h in self.store.get_all()}  # once: per tracker it made delete_all quadratic
        for ep in sorted((set(self._trackers) | set(self._labels) | set(self._numbering) | set(self._unknown)
                          | self.store.recorder.episodes()) - live):  # nor the store's last state, labels, numbering
            # in order: which scopes' kept keys a later delete forgets (_keep_dropped) is the same in a log's replay
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
        self._sent.clear()
        self._given.clear()
        self._gone.clear()
        self._progress.clear()
        self._dropped.clear()
        self._labels.clear()
        self._needs.clear()
        self._numbering.clear()
        self._unknown.clear()
        self._times.clear()
        self._history.clear()
        self._owners.clear()


__all__ = ["ScopedMemory", "unstored"]  # unstored: README names it here (its home: sam_model.memory.scopedinput)
