"""SAMStore: LangGraph's long-term memory store (``BaseStore``) over the one SAM memory store.

    pip install 'sam_model[langchain]'

    store = SAMStore(SAMRetriever.from_pretrained("sam-general"))
    graph = builder.compile(store=store)                       # nodes get it as ``store`` (LangGraph's injection)
    store.put(("memories", "mia"), "budget", {"content": "my budget is $3,500"})
    store.search(("memories", "mia"), query="what is my budget?", limit=3)   # SearchItems, best first
    store.search(("memories", "mia"), query="", state=decision_state)        # SAM's state-adaptive query

Namespaces are the scopes: a search over ``namespace_prefix`` sees only the items of the namespaces that start
with it, and the prefix (with ``filter``) is applied *inside* the index search (sam_model.store.MemoryStore's
``ids``), so one user's namespace is never starved or leaked by a global top-k. The semantics are LangGraph's
own (langgraph.store.base, checked against its InMemoryStore in tests/test_langgraph_store.py):

- ``put(namespace, key, value)`` writes or replaces an item (``created_at`` kept, ``updated_at`` renewed);
  ``value=None`` / ``delete`` removes it; ``index=False`` keeps it out of query search (it is still listed, and
  fills a query search's page after the ranked items, as InMemoryStore does); ``index=[fields]`` names the
  fields whose text is the memory;
- ``get``; ``search(prefix, query=None, filter=None, limit, offset)``: without a query, the matching items in
  write order; with one, ranked by SAM (text alone: the model's content block, as ScopedMemory.search with no
  state; ``state=``: the state-adaptive query evaluate.py runs), ``score`` the store's; ``step=`` (and
  ``task_start=``): made at a decision's step in the prefix's own namespace, its items at or after it no candidates
  (default: now), as every other entry point searches;
- ``list_namespaces(prefix, suffix, max_depth, limit, offset)`` with ``"*"`` wildcards;
- ``batch`` / ``abatch``: reads see the store as it was before the batch's writes, the last write to a key wins.

An item's memory text is its ``content``, ``memory`` or ``text`` field (a string), else the value as JSON; a value
that is an agent-log event (``kind``, ``text``, optional ``state``, ``step``, ``meta``) is stored as that event, so
a graph that writes its log into the store ranks exactly as evaluate.py does on the log. No TTL.
``save(path)`` / ``SAMStore.load(path, model)`` keep the items and their memories across restarts (one folder,
written atomically).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from sam_model.data.lives import USER_KIND
from sam_model.data.schema import Event, State, parse_event
from sam_model.io import SAMFileError, atomic_dir, json_type, reading, refuse_links, unique_keys
from sam_model.limits import MAX_K, check_count, check_int, check_scope_characters, check_step, scope_flaw
from sam_model.locking import locked, new_lock
from sam_model.store import MemoryStore, encoder_of, refuse_reuse, store_config_of
from sam_model.storeconfig import StoreConfig

TEXT_FIELDS = ("content", "memory", "text")
ITEMS_FILE = "samstore.json"  # a saved SAMStore: its items (values, times, memory ids) beside store/ (the memories)
log = logging.getLogger(__name__)


class _Row:
    """One item: its value, times and, when it is searchable, its memory id in the store."""

    __slots__ = ("value", "created", "updated", "memory")

    def __init__(self, value: dict, created: datetime, updated: datetime, memory: Any):
        self.value, self.created, self.updated, self.memory = value, created, updated, memory


class SAMStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are memories of one sam_model.store.MemoryStore (module doc)."""

    supports_ttl = False

    def __init__(self, model: Any = None, store_config: StoreConfig | None = None, *, store: MemoryStore | None = None,
                 kind: str = "user"):
        """``model``: a SAMRetriever (its encoder and search settings) or an encoder; or ``store``, an existing
        MemoryStore to share. ``kind``: the memory kind of items that do not say theirs."""
        if store is None:
            if model is None:
                raise ValueError("SAMStore needs a model (SAMRetriever.from_pretrained(...)) or store=MemoryStore")
            store = MemoryStore(encoder_of(model), store_config or store_config_of(model))
        refuse_reuse(store.encoder, "SAMStore")  # no conversation: taken, every query search was refused
        self.store, self.kind = store, kind
        self.lock = new_lock()  # batches one at a time (sam_model.locking): a put reads then bumps its namespace's step
        self._data: dict[tuple[str, ...], dict[str, _Row]] = {}
        self._steps: dict[tuple[str, ...], int] = {}

    # ---- BaseStore -----------------------------------------------------------------------------------------

    @locked
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """LangGraph's batch. Every op's namespace is checked first (LangGraph's own rule: a label such as
        "users.alice" must not address ("users", "alice")), and every put is made ready (its event built) before
        any is applied: a batch with a bad op changes nothing. A namespace label with a control character is
        refused as every scope is (:func:`_check_labels`)."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
            _check_page(op)
            _check_labels(op, self._holds)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        with self.store.lock:  # a step read from the store is taken by its add in one hold: another SAMStore may share it
            steps = dict(self._steps)
            try:
                ready = [self._ready(op) for op in puts.values()]
            except Exception:
                self._steps = steps  # the events made ready took steps: give them back
                raise
            for op, event in ready:
                self._put(op, event)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def search(self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None,
               filter: dict[str, Any] | None = None, limit: int = 10, offset: int = 0, refresh_ttl: bool | None = None,
               state: State | Mapping | None = None, step: int | None = None,
               task_start: int | None = None, used: Mapping[str, int] | Collection[str] | None = None,
               used_order: str | None = None) -> list[SearchItem]:
        """BaseStore.search, and ``state``: rank by SAM's state-adaptive query for this agent state (the query
        text is then the observation); ``step`` (and ``task_start``): when the query is made, as every other entry
        point takes them (ScopedMemory.search, the LangChain retriever, sam-serve): the step of the decision in
        ``namespace_prefix``'s own namespace (its items' steps: an agent-log event value's ``step``, else the item's
        place among the namespace's indexed puts, from 0), whose items at or after it are then no candidates (MemoryStore.search_vector's
        ``before``), as evaluate.py ranks a decision point; default: now, after every item. A graph that writes its
        log into the store, the decision's event included, before searching gave no step and got that event back
        first. ``used``: the keys of the items of ``namespace_prefix``'s own namespace that the task's earlier tool
        calls took values from (a mapping key -> the rank of its latest use, 1 the latest, or the keys alone), told
        to the store's search as ScopedMemory tells it its conversation's (MemoryStore.search's ``used``: a reuse
        model's u_m, and ``used_order``, "model", "latest", "needed" (told no slots: as "latest"; the keys alone
        under the store's default: as "model") or "off", this
        search's order of them, default the
        store's StoreConfig.used_order); a key the namespace does not hold (deleted) is passed over. SAMStore
        passed none, so a store whose config set used_order ordered nothing, and a reuse model was told no use."""
        if state is None and step is None and task_start is None and used is None and used_order is None:
            return super().search(namespace_prefix, query=query, filter=filter, limit=limit, offset=offset,
                                  refresh_ttl=refresh_ttl)
        op = SearchOp(tuple(namespace_prefix), filter, limit, offset, query if state is None else query or "")
        validate_op_namespace(op)
        _check_page(op)
        with self.lock:  # what it holds, read under the lock its puts take
            _check_labels(op, self._holds)
        check_step(step), check_step(task_start, "task_start")
        if (used is not None or used_order is not None) and op.query is None:
            raise ValueError("used= and used_order= order a ranked search: give query= or state= (a listing is in "
                             "write order)")
        with self.lock:
            return self._search(op, state, (step, task_start), self._used(tuple(namespace_prefix), used), used_order)

    async def asearch(self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None,
                      filter: dict[str, Any] | None = None, limit: int = 10, offset: int = 0,
                      refresh_ttl: bool | None = None, state: State | Mapping | None = None, step: int | None = None,
                      task_start: int | None = None, used: Mapping[str, int] | Collection[str] | None = None,
                      used_order: str | None = None) -> list[SearchItem]:
        """:meth:`search` from async code (an async node): ``state``, ``step``, ``task_start``, ``used`` and
        ``used_order`` too."""
        return await asyncio.get_running_loop().run_in_executor(None, lambda: self.search(
            namespace_prefix, query=query, filter=filter, limit=limit, offset=offset, refresh_ttl=refresh_ttl,
            state=state, step=step, task_start=task_start, used=used, used_order=used_order))

    def _used(self, ns: tuple[str, ...], used: Any) -> dict[Any, Any] | list[Any] | None:
        """``used`` (:meth:`search`) as the memory ids of the items of ``ns`` it names (their ranks kept), or None;
        a one-line refusal for anything but a mapping or a collection of string keys (``ranks.keys()`` too; a
        generator is none: it would be read once)."""
        if used is None:
            return None
        keys = list(used) if isinstance(used, Collection) and not isinstance(used, (str, bytes)) else None
        if keys is None or not all(isinstance(k, str) for k in keys):
            raise TypeError(f"used must be a mapping of item keys -> the rank of their latest use, or a list of item "
                            f"keys (strings) of the namespace {ns!r}, got {json_type(used)}")
        for k in keys if isinstance(used, Mapping) else ():  # named by the caller's key, not the memory's id
            if isinstance(used[k], bool) or not isinstance(used[k], int) or used[k] < 1:
                raise ValueError(f"used[{k!r}] must be the rank of the item's latest use, an integer >= 1 (1: the "
                                 f"latest), got {used[k]!r}")
        rows = self._data.get(ns, {})
        held = [k for k in keys if k in rows and rows[k].memory is not None]
        if isinstance(used, Mapping):
            return {rows[k].memory: used[k] for k in held}
        return [rows[k].memory for k in held]

    # ---- persistence ---------------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """The items and their memories as one folder, atomically (sam_model.io: a kill leaves the old folder or
        the new one): ``store/`` (the MemoryStore) and samstore.json (each item's namespace, key, value, times and
        memory id). LangGraph's InMemoryStore forgets everything when the process ends; this one is reloaded with
        :meth:`load`."""
        with self.lock:  # the items and the memories of one moment
            snap = self.store.snapshot()
            items = [[list(ns), key, row.value, row.created.isoformat(), row.updated.isoformat(), row.memory]
                     for ns, rows in self._data.items() for key, row in rows.items()]
            text = json.dumps({"format": 1, "kind": self.kind, "items": items,
                               "steps": [[list(ns), n] for ns, n in self._steps.items()]}, ensure_ascii=False)
        out = Path(path)
        with atomic_dir(out, ITEMS_FILE, ("items",)) as tmp:
            (tmp / "store").mkdir()
            self.store.write_snapshot(tmp / "store", snap)
            (tmp / ITEMS_FILE).write_text(text, encoding="utf-8")
        return out

    @classmethod
    def load(cls, path: str | os.PathLike, model: Any, reencode: bool = False) -> SAMStore:
        """A store saved by :meth:`save`. ``model`` must be the one that wrote it (refused otherwise, in one line),
        unless ``reencode``: every memory is then encoded again with it. A damaged samstore.json is one line naming
        it and the item at fault."""
        with reading(path) as folder:
            refuse_links(folder, "LangGraph store", "save the store again")
            store = MemoryStore.read(folder / "store", encoder_of(model), reencode=reencode)
            refuse_reuse(store.encoder, "SAMStore")  # the model's refusal, not the file's "unreadable" below
            f = folder / ITEMS_FILE
            try:
                d = json.loads(f.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
                self = _restore(d, store)
                _unprintable(self._data, f)
            except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
                raise SAMFileError(f"{f}: unreadable LangGraph store ({str(err)[:160]}); save the store again") \
                    from None
        return self

    # ---- operations ----------------------------------------------------------------------------------------

    def _holds(self, prefix: tuple[str, ...]) -> bool:
        """Whether an item is stored under a namespace ``prefix`` opens (:func:`_check_labels`' ``held``)."""
        return any(ns[:len(prefix)] == prefix and rows for ns, rows in self._data.items())

    def _get(self, op: GetOp) -> Item | None:
        row = self._data.get(tuple(op.namespace), {}).get(op.key)
        return None if row is None else Item(value=dict(row.value), key=op.key, namespace=tuple(op.namespace),
                                             created_at=row.created, updated_at=row.updated)

    def _ready(self, op: PutOp) -> tuple[PutOp, Event | None]:
        """A put checked, with the memory event it writes (None: a delete, or nothing to index)."""
        if op.value is None:
            return op, None
        if not isinstance(op.value, Mapping):
            raise TypeError(f"store value for {tuple(op.namespace)}/{op.key} must be a mapping, got "
                            f"{type(op.value).__name__}")
        _check_json(op.value, f"{tuple(op.namespace)}/{op.key}")
        return op, None if op.index is False else self._event(tuple(op.namespace), dict(op.value), op.index)

    def _put(self, op: PutOp, event: Event | None) -> None:
        """Apply a put made ready by :meth:`_ready`. A replaced item's new memory is added before its old one is
        deleted, so an add that fails leaves the item as it was."""
        ns = tuple(op.namespace)
        rows = self._data.setdefault(ns, {})
        old = rows.get(op.key)
        if op.value is None:
            if old is not None:
                if old.memory is not None:
                    self.store.delete([old.memory])
                del rows[op.key]
                if old.memory is not None:
                    self._forget_if_empty(ns, rows)
            if not rows:
                self._data.pop(ns, None)
            return
        value, now = dict(op.value), datetime.now(timezone.utc)
        memory = None
        if event is not None:  # the memory's own id: a long item stored as chunks is deleted and searched whole
            mark = self.store.recorder.mark([event.episode_id])
            if old is not None and old.memory is not None and event.kind == USER_KIND:
                # the opening item rewritten, a statement still: its new memory opens. Rewritten as a tool's or an
                # agent's item, it is the opener deleted: its place keeps the flag (no later item takes it)
                self.store.recorder.reopen(event.episode_id, self.store.memory(old.memory).step)
            try:
                first = self.store.add([event])[0]
            except BaseException:
                self.store.recorder.rollback(mark)  # the opener as it was, with the item
                raise
            memory = self.store.get(first).parent_id or first
        if old is not None and old.memory is not None:
            self.store.delete([old.memory])
            if memory is None:
                self._forget_if_empty(ns, {k: r for k, r in rows.items() if k != op.key})
        rows[op.key] = _Row(value, old.created if old is not None else now, now, memory)

    def _forget_if_empty(self, ns: tuple[str, ...], rows: Mapping[str, _Row]) -> None:
        """Forget what the store's recorder keeps of a namespace none of whose items (``rows``, the one deleted aside)
        has a memory left (nor any other writer of its episode: a SAMStore sharing the store): its opener and the last
        state its gone items set, as ScopedMemory forgets a scope whose memories are all deleted. Its next item then
        opens a task, compared with no earlier state; kept, it opened none (the gone item had) and the save kept the
        gone items' state."""
        episode = _episode(ns)
        if not any(r.memory is not None for r in rows.values()) and not self.store.has_episode(episode):
            self.store.recorder.forget(episode)

    def _event(self, ns: tuple[str, ...], value: dict, fields: list[str] | None) -> Event | None:
        """The item as a memory event (None when it has no text to index)."""
        episode = _episode(ns)
        step = self._next(ns, episode)
        if fields is None and isinstance(value.get("kind"), str) and isinstance(value.get("text"), str):
            given = value.get("step")
            if isinstance(given, int) and not isinstance(given, bool) and given >= step:
                step = given
            ev = parse_event({"episode_id": episode, "step": step, "kind": value["kind"], "text": value["text"],
                              **{k: value[k] for k in ("state", "meta") if k in value}}, f"store item {ns}")
        else:
            text = _text(value, fields)
            if not text.strip():
                return None
            kind = value.get("kind") if isinstance(value.get("kind"), str) else self.kind
            ev = Event(episode, step, kind, text, State())
        self._steps[ns] = step + 1
        return ev

    def _next(self, ns: tuple[str, ...], episode: str) -> int:
        """The namespace's next step: past this store's own count and past the memories its episode holds, which
        another SAMStore over the same MemoryStore (``store=``, documented as shareable) or a samstore.json whose
        ``steps`` fell behind wrote: a put then took a stored memory's id and was refused ('already in the store')."""
        return max(self._steps.get(ns, 0), self.store.next_step(episode) or 0)

    def _rows(self, prefix: tuple[str, ...], filt: dict | None) -> list[tuple[tuple[str, ...], str, _Row]]:
        n = len(prefix)
        return [(ns, key, row) for ns, rows in self._data.items() if ns[:n] == tuple(prefix)
                for key, row in rows.items() if not filt or all(_compare(row.value.get(k), v) for k, v in filt.items())]

    def _search(self, op: SearchOp, state: State | Mapping | None = None,
                at: tuple[int | None, int | None] = (None, None), used: Any = None,
                used_order: str | None = None) -> list[SearchItem]:
        """``at``: the query's (step, task_start) in the prefix's own namespace (:meth:`search`); (None, None): now.
        ``used`` (memory ids) and ``used_order``: told to the store's search (:meth:`search`)."""
        told = {"used": used, "used_order": used_order}
        rows = self._rows(op.namespace_prefix, op.filter)
        if op.query is None and state is None or not rows:  # a listing: at a step, without the items at or after it
            late = self.store.late((_episode(tuple(op.namespace_prefix)), at[0])) if at[0] is not None else None
            rows = [r for r in rows if late is None or r[2].memory is None or not late(r[2].memory)]
            return [_item(ns, key, row) for ns, key, row in rows[op.offset:op.offset + op.limit]]
        by_memory = {row.memory: (ns, key, row) for ns, key, row in rows if row.memory is not None}
        want = op.offset + op.limit
        hits = []
        spaces = {ns for ns, _, _ in by_memory.values()}
        step, task_start = at
        # the query's episode: the prefix's own namespace when a step is given; else the one namespace searched (now,
        # and its task's start)
        episode = _episode(tuple(op.namespace_prefix)) if at != (None, None) else (
            _episode(next(iter(spaces))) if len(spaces) == 1 else None)
        if by_memory and want > 0:
            if state is not None:
                hits = self.store.search(state, op.query or "", want, ids=list(by_memory), fold=True,
                                         query_episode=episode, step=step, task_start=task_start, **told)
            elif op.query.strip() and getattr(self.store.encoder, "text_queries", False):
                q = self.store.encoder.encode_text_queries([op.query])[0]
                before = None if step is None else (episode, step)
                hits = self.store.search_vector(q, want, (), ids=list(by_memory), fold=True, before=before, **told)
            else:  # a plain query: made at no step unless one is given (as ScopedMemory's)
                hits = self.store.search(State(), op.query, want, ids=list(by_memory), fold=True,
                                         query_episode=None if at == (None, None) else episode, step=step,
                                         task_start=task_start, **told)
        out = [_item(*by_memory[h.memory_id], score=h.score) for h in hits][op.offset:]
        if len(out) < op.limit:  # as InMemoryStore: items without a vector fill the page, unscored
            out += [_item(ns, key, row) for ns, key, row in rows if row.memory is None][:op.limit - len(out)]
        return out

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = [ns for ns in self._data if all(_matches(c.match_type, c.path, ns) for c in op.match_conditions or ())]
        names = sorted({ns[:op.max_depth] for ns in names} if op.max_depth is not None else names)
        return names[op.offset:op.offset + op.limit]


def _restore(d: Any, store: MemoryStore) -> SAMStore:
    """A SAMStore from a samstore.json's document over its loaded ``store``, every field checked and the item at
    fault named: a hand-edited or damaged file loaded a key or kind null as the string 'None', and two items naming
    one memory (an item written twice) loaded silently, so a delete of one took the other's memory with it."""
    if not isinstance(d, dict) or d.get("format") != 1:
        raise ValueError("not a saved SAMStore (format 1)")
    kind = d.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"kind must be a memory kind (a non-empty string), got {str(kind)[:40]!r}")
    self = SAMStore(store=store, kind=kind)
    owner: dict[Any, int] = {}
    for n, row in enumerate(_listed(d.get("items"), "items")):
        where = f"items[{n}]"
        if not isinstance(row, list) or len(row) != 6:
            raise ValueError(f"{where} must be [namespace, key, value, created_at, updated_at, memory id]")
        ns, key, value, created, updated, memory = row
        if not isinstance(key, str):
            raise ValueError(f"{where}: the key must be a string, got {json_type(key)}")
        rows = self._data.setdefault(_namespace(ns, where), {})
        if key in rows:
            raise ValueError(f"{where}: {tuple(ns)}/{key} is given twice (keep one)")
        if _memory(store, memory, where) is not None and owner.setdefault(memory, n) != n:
            raise ValueError(f"{where}: memory {str(memory)[:60]!r} is items[{owner[memory]}]'s too (keep one)")
        rows[key] = _Row(_value(value, where), _time(created, f"{where} created_at"),
                         _time(updated, f"{where} updated_at"), memory)
    for n, pair in enumerate(_listed(d.get("steps"), "steps")):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"steps[{n}] must be [namespace, next step]")
        self._steps[_namespace(pair[0], f"steps[{n}]")] = check_count(
            pair[1], f"steps[{n}]", "the namespace's next step", "past any step a memory can have")
    return self


def _listed(value: Any, name: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list, got {json_type(value)}")
    return value


def _time(value: Any, where: str) -> datetime:
    """An item's time as save wrote it (ISO 8601 with its zone: every put's is UTC)."""
    if not isinstance(value, str):
        raise ValueError(f"{where} must be an ISO 8601 time string, got {json_type(value)}")
    t = datetime.fromisoformat(value)
    if t.tzinfo is None:
        raise ValueError(f"{where} {value[:40]!r} has no time zone (write it as save does, e.g. +00:00)")
    return t


def _check_json(value: Mapping[str, Any], where: str) -> None:
    """A put's value must be JSON, as BaseStore.put asks ("JSON-serializable values"): save writes it so, and a value
    holding a datetime or half an emoji (a lone surrogate) was taken, then made every later save of the whole store
    fail with json's or the codec's message, naming no item."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError) as err:
        raise TypeError(f"store value for {where} is not JSON ({str(err)[:80]}): store it as JSON values (a "
                        "datetime as its isoformat() string)") from None


def _check_page(op: Op) -> None:
    """A search's or listing's ``limit`` and ``offset``: integers, limit from 0 to MAX_K, offset from 0. Why: a
    negative one sliced the results from their end (the last items, silently), and a limit over MAX_K was refused
    by the store naming its own ``k``."""
    if isinstance(op, (SearchOp, ListNamespacesOp)):
        check_int(op.limit, "limit", 0, MAX_K)
        check_count(op.offset, "offset", "how many results to skip", "past any number of results")


def _check_labels(op: Op, held: Callable[[tuple[str, ...]], bool] = lambda ns: False) -> None:
    """The namespace a get, search or put names holds no control character or line break in a label (LangGraph
    refuses NUL alone): its memories' episode is its labels joined (:func:`_episode`), and a scope holding a newline
    is refused by every other entry point (sam_model.limits.check_scope_characters, the same rule and words), so a
    put stored ``///users.a\nb`` in the shared store, its ids and every log line or save showing them broken. A
    delete (a put of None) is taken: it stores nothing, and is how an item that a save from before 2026-12-06 holds
    under such a namespace is removed once put again under a printable one (the load warns of it). A listing names
    no namespace to store under. A get or search of a namespace that ``held`` says holds items is taken, as
    ScopedMemory reads a scope it holds memories under: a save from before a rule ('José' in NFD, refused since
    2026-12-07) was otherwise read only by a search over a shorter prefix, among every other user's items."""
    if isinstance(op, PutOp) and op.value is None:
        return
    ns = op.namespace_prefix if isinstance(op, SearchOp) else getattr(op, "namespace", ())
    for i, label in enumerate(ns):
        try:
            check_scope_characters(label, f"namespace {tuple(ns)!r}, label {i}")
        except ValueError:  # only then is ``held`` asked (as check_scope asks it): it scans every namespace stored
            if isinstance(op, GetOp | SearchOp) and held(tuple(ns)):
                return
            raise


def _namespace(ns: Any, where: str) -> tuple[str, ...]:
    if not isinstance(ns, list) or not ns or not all(isinstance(p, str) and p and "." not in p for p in ns):
        raise ValueError(f"{where}: a namespace must be a list of non-empty strings without '.' (LangGraph's rule: "
                         f"its memories' episode joins them by '.'), got {str(ns)[:60]}")
    return tuple(ns)


def _unprintable(namespaces: Iterable[tuple[str, ...]], where: Any) -> None:
    """One warning line per loaded namespace with a label no put takes (a control character, taken until
    2026-12-06; an invisible character or a form other than NFC, until 2026-12-07: :func:`_check_labels`), naming
    it and how to keep its items. Not refused: that would lose them; a get or search naming it, or a search or
    listing over a shorter prefix, still reaches them, and a delete of one is taken."""
    for ns in namespaces:
        bad = [(i, flaw) for i, p in enumerate(ns) if (flaw := scope_flaw(p)) is not None]
        if bad:
            i, flaw = bad[0]
            log.warning("%s: namespace %r %s of label %d, which no put takes since %s: its items are loaded and found "
                        "by a get or search naming it; to keep them, put each again under a namespace of labels "
                        "a put takes (%s) and delete the old one", where, ns, flaw.what, i, flaw.since, flaw.fix)


def _value(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: an item's value must be an object, got {json_type(value)}")
    return value


def _memory(store: MemoryStore, memory: Any, where: str) -> Any:
    """An item's memory id, which must be in the saved store (else its search would name a memory not there)."""
    if memory is not None and not isinstance(memory, str):
        raise ValueError(f"{where}: the memory id must be a string or null, got {json_type(memory)}")
    if memory is not None and not store.has(memory):
        raise ValueError(f"{where}: memory {str(memory)[:60]!r} is not in store/ (the two were not saved together)")
    return memory


def _episode(ns: tuple[str, ...]) -> str:
    """The episode of a namespace's memories: ``///`` and its labels joined by '.' (labels hold no '.': LangGraph's
    rule, checked). Three slashes, because a ScopedMemory sharing the store writes episodes of at most two
    (sam_model.memory.scoped.ScopedMemory.episode_of: ``/bot`` is its agent-only scope)."""
    return "///" + ".".join(ns)


def _item(ns: tuple[str, ...], key: str, row: _Row, score: float | None = None) -> SearchItem:
    return SearchItem(namespace=ns, key=key, value=dict(row.value), created_at=row.created, updated_at=row.updated,
                      score=score)


def _text(value: Mapping[str, Any], fields: list[str] | None) -> str:
    """The memory text of an item: the named fields (dotted paths), else a text field, else the value as JSON."""
    if fields:
        parts = []
        for path in fields:
            v: Any = value
            for part in path.split("."):
                v = v.get(part) if isinstance(v, Mapping) else None
            if v is not None:
                parts.append(v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str))
        return " ".join(parts)
    for name in TEXT_FIELDS:
        if isinstance(value.get(name), str):
            return value[name]
    return json.dumps(value, sort_keys=True, default=str)


def _matches(kind: str, path: tuple[str, ...], ns: tuple[str, ...]) -> bool:
    """LangGraph's namespace match: a prefix or suffix with ``"*"`` wildcards."""
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if kind == "prefix" else zip(reversed(ns), reversed(path))
    return all(p == "*" or a == p for a, p in pairs)


_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: float(a) > float(b),
        "$gte": lambda a, b: float(a) >= float(b), "$lt": lambda a, b: float(a) < float(b),
        "$lte": lambda a, b: float(a) <= float(b)}


def _compare(got: Any, want: Any) -> bool:
    """LangGraph's filter semantics: exact match, nested objects, lists element-wise, ``$eq``/``$ne``/``$gt``/
    ``$gte``/``$lt``/``$lte`` operators."""
    if isinstance(want, Mapping):
        if any(str(k).startswith("$") for k in want):
            bad = [k for k in want if k not in _OPS]
            if bad:
                raise ValueError(f"unsupported filter operator {bad[0]!r}; use one of {sorted(_OPS)}")
            return got is not None and all(_OPS[k](got, v) for k, v in want.items())
        return isinstance(got, Mapping) and all(_compare(got.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(_compare, got, want))
    return got == want


__all__ = ["SAMStore"]
