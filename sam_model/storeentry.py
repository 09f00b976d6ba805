"""What a MemoryStore keeps of one memory besides its vector (_Entry), and the entry's object in store.json.

Apart from the store because it is the record and its file form, read alone: what an entry holds (text, kind,
step, write order, the slots it sets, its links, scopes, metadata, a chunk's parent and span, whether it opened its
task), how a file's entry is checked field by field before it is trusted, and how an entry is written (as a tuple of
its fields copied under the store's lock, then as its JSON object without it). The names keep their underscore:
they are the store's own, not an API.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Any

from sam_model.io import json_type
from sam_model.storechecks import chunk_problem


@dataclass
class _Entry:
    """What the store keeps of one memory besides its vector and its episode (which the index holds: the
    episode filters the search there, so it has one owner, ``index.episode_of``)."""

    id: str | int
    text: str
    content: str
    kind: str
    phase: str
    step: int | None
    seq: int
    sets: tuple[str, ...] = ()
    links: tuple = ()
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    parent: str | int | None = None  # a chunk's memory id (StoreConfig.chunking)
    chunk: int = 0
    span: tuple[int, int] | None = None
    opens_task: bool = False  # the first user event of its task (MemoryRecord.opens_task): a task_opening model reads it

    def to_json(self, openings: bool = True) -> dict[str, Any]:
        return _entry_json(_ENTRY_ROW(self), openings)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> _Entry:
        """An entry of store.json, its fields' types checked (ValueError naming the memory and the field: a file
        edited by hand or damaged must not load and fail later, far from it); ``episode_id`` (kept here too by
        stores saved before the index owned it) is checked against the index by the caller."""
        if not isinstance(d, dict):
            raise ValueError(f"an entry must be an object, got {json_type(d)}")
        d = {k: v for k, v in d.items() if k != "episode_id"}
        i = d.get("id")
        if isinstance(i, bool) or not isinstance(i, (str, int)):
            raise ValueError(f"an entry's id must be a string or an integer, got {i!r}")

        def bad(name: str, want: str) -> ValueError:
            return ValueError(f"memory {i!r}: field '{name}' must be {want}, got {d.get(name)!r:.60}")

        for name in ("text", "content", "kind", "phase"):
            if not isinstance(d.get(name), str):
                raise bad(name, "a string")
        for name, lo, opt in (("step", 0, True), ("seq", 0, False), ("chunk", 0, True)):
            v = d.get(name)
            if not (opt and v is None) and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
                raise bad(name, f"an integer >= {lo}")
        for name in ("user_id", "agent_id", "run_id"):
            if d.get(name) is not None and not isinstance(d[name], str):
                raise bad(name, "a string or null")
        if not isinstance(d.get("sets", []), list) or not all(isinstance(x, str) for x in d.get("sets", [])):
            raise bad("sets", "a list of strings")
        if not isinstance(d.get("links", []), list):
            raise bad("links", "a list")
        if not isinstance(d.get("metadata", {}), dict):
            raise bad("metadata", "an object")
        parent, span = d.get("parent"), d.get("span")
        if parent is not None and (isinstance(parent, bool) or not isinstance(parent, (str, int))):
            raise bad("parent", "a memory id (a string or an integer) or null")
        if span is not None and not (isinstance(span, list) and len(span) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) for x in span)):
            raise bad("span", "[start, end] or null")
        if (problem := chunk_problem(parent, span, d["content"])) is not None:
            raise bad("span", problem)
        if not isinstance(d.get("opens_task", False), bool):
            raise bad("opens_task", "true or false")
        return cls(**{**d, "sets": tuple(d.get("sets", ())), "links": tuple(d.get("links", ())),
                      "span": tuple(span) if span is not None else None})


_ENTRY_NAMES = tuple(f.name for f in dataclasses.fields(_Entry))
# An entry's fields as one tuple, in C: what a snapshot copies under the lock (every field is immutable, but for the
# metadata dict, which is set when a memory is added and never changed in place). ``dataclasses.asdict`` deep-copied
# every field instead: 5 of the 7 s that saving 100k memories held the lock.
_ENTRY_ROW = operator.attrgetter(*_ENTRY_NAMES)


def _entry_json(row: tuple, openings: bool = True) -> dict[str, Any]:
    """An entry's row (``_ENTRY_ROW``) as its store.json object. ``opens_task`` is written only where it is true and
    ``openings`` (the store keeps the flag, MemoryStore.keeps_openings): an entry of a store whose model does not
    read it is the object written before the flag existed, which older sam_model versions load."""
    d = dict(zip(_ENTRY_NAMES, row))
    d["sets"], d["links"] = list(d["sets"]), list(d["links"])
    if not (openings and d["opens_task"]):
        del d["opens_task"]
    return d


def _entry_json_with_openings(row: tuple) -> dict[str, Any]:
    return _entry_json(row, True)


def _entry_json_without_openings(row: tuple) -> dict[str, Any]:
    return _entry_json(row, False)
