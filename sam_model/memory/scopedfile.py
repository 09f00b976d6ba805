"""How a ScopedMemory is saved and loaded: one folder, ``store/`` (the memory store, sam_model.storefile) and
``scoped.json`` (each memory's times and history, the owners of moved memories, and the conversations' running
states: each episode's tracker, its first step, an agent's open turn, the labels of agent-log events added with
their steps, ``labels``, which a save before them lacks: none), written atomically as a whole
(sam_model.io.atomic_dir) with the lock held only while the memory is copied, and read held still.

A save of version 1 (before each combination of scopes had an episode of its own) is moved to this version's
episodes as it is loaded (_place_episodes), its ids kept, and the memory says so (``migrated``).

Apart from ScopedMemory because the file is its own idea, read alone: ScopedFiles is a mixin of
sam_model.memory.scoped.ScopedMemory (its only user), writing and reading back its store and running states.
``load`` returns ``cls``, a ScopedMemory, a name this module cannot import (sam_model.memory.scoped imports it): its
annotation says it with ``noqa: F821``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sam_model.data.examples import MemoryRecord
from sam_model.data.toolstate import TranscriptState
from sam_model.io import (
    SAMFileError,
    atomic_dir,
    json_type,
    reading,
    refuse_links,
    unique_keys,
    write_json_lists,
)
from sam_model.limits import check_count, check_k
from sam_model.locking import gc_paused, locked
from sam_model.memory import live, live_responses, resent
from sam_model.memory.scopedsteps import Numbering
from sam_model.store import MemoryStore, encoder_of

SCOPED_FILE = "scoped.json"
# scoped.json's version: 2 since each combination of scopes has an episode of its own (ScopedMemory.episode_of); a
# save without one may hold episodes two scopes shared (ScopedMemory._place_episodes). 3 since 2026-12-07: its kept
# adds may hold a conversation's opening and the formats responses, gemini and adk, which a sam_model reading 2
# refused as "unreadable memory ... save the memory again" (advice it cannot follow); told the version, it says to
# upgrade. This sam_model reads 1, 2 and 3 (2 and 3 alike)
VERSION = 3
READS = (1, 2, 3)


def _shareable(episode: Any) -> bool:
    """Whether the episode naming before 2026-12-05 gave this name to two or three combinations of scopes (one or two
    values: 'bot' was user, agent or run 'bot'); names with an empty place or three values were one's alone."""
    return isinstance(episode, str) and 1 <= len(episode.split("/")) <= 2 and all(episode.split("/"))


def _owner(o: Any, i: Any) -> tuple:
    """An ``owners`` entry of scoped.json: the three scopes of a memory, each a string or null."""
    if not (isinstance(o, list) and len(o) == 3 and all(v is None or isinstance(v, str) for v in o)):
        raise ValueError(f"owners of {i!r} must be [user_id, agent_id, run_id], each a string or null")
    return tuple(o)


def _labels(kept: Any, episode: str) -> dict[int, tuple[int, ...]]:
    """A ``labels`` entry of scoped.json: [[step, [label steps]], ...] of an episode's agent-log decision points."""
    ok = lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0  # noqa: E731
    if not isinstance(kept, list) or not all(isinstance(p, list) and len(p) == 2 and ok(p[0]) and isinstance(p[1], list)
                                             and all(map(ok, p[1])) for p in kept):
        raise ValueError(f"labels of {episode!r} must be [[step, [label steps]], ...], steps non-negative integers")
    return {p[0]: tuple(p[1]) for p in kept}


def _needs(kept: Any, episode: str) -> dict[int, tuple[str, ...]]:
    """A ``needs`` entry of scoped.json: [[step, [needed paths]], ...] of an episode's agent-log decision points."""
    ok = lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0  # noqa: E731
    if not isinstance(kept, list) or not all(isinstance(p, list) and len(p) == 2 and ok(p[0]) and isinstance(p[1], list)
                                             and all(isinstance(f, str) for f in p[1]) for p in kept):
        raise ValueError(f"needs of {episode!r} must be [[step, [needed paths]], ...], steps non-negative integers, "
                         "paths strings")
    return {p[0]: tuple(p[1]) for p in kept}


def _times(entries: Any) -> dict[Any, list]:
    """scoped.json's ``times``, [[memory id, created_at, updated_at], ...], as memory id -> [created_at, updated_at].
    A time that is no string was loaded and answered as the memory's, and every search filtering on it was refused
    as the caller's mistake ('filters.created_at: cannot compare')."""
    out: dict[Any, list] = {}
    for n, e in enumerate(entries if isinstance(entries, list) else [entries]):
        if not (isinstance(e, list) and len(e) == 3 and isinstance(e[0], str)):  # an id a list: 'unhashable type'
            raise ValueError(f"times entry {n} must be [memory id, created_at, updated_at], the id a string, got "
                             f"{json.dumps(e)[:60]}")
        if not all(isinstance(t, str) for t in e[1:]):
            raise ValueError(f"times of {e[0]!r} must be [created_at, updated_at], each an ISO 8601 time (a string)")
        out[e[0]] = e[1:]
    return out


def _steps(kept: Any, where: str) -> list[int]:
    """A list of steps of scoped.json (``unknown``: an episode's decision points whose labels are not known)."""
    if not isinstance(kept, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in kept):
        raise ValueError(f"{where} must be a list of steps, non-negative integers")
    return kept


def _by_scope(d: Mapping, field: str, required: bool = False) -> dict:
    """A field of scoped.json holding what each scope's episode keeps (``base`` and ``trackers``, which every save
    holds: ``required``, its absence a KeyError naming it; the others a save from before them lacks, holding none:
    ``open``, ``labels``, ``numbering``, ``unknown``, ``progress``, and ``sent``, ``given``, ``gone`` to read an add
    sent again), else a ValueError naming it: of another shape (a list, null) it was "'list' object has no attribute
    'items'", naming no field."""
    kept = d[field] if required else d.get(field, {})
    if not isinstance(kept, dict):
        raise ValueError(f"{field} must be an object of the scopes' episodes (strings) to what each keeps, got "
                         f"{json_type(kept)}")
    return kept


class ScopedFiles:
    """A ScopedMemory's save and load (mixin of sam_model.memory.scoped.ScopedMemory; see the module doc)."""

    def save(self, path: str | os.PathLike) -> Path:
        """The store and the conversations' running states as one folder, atomically (sam_model.io). The lock is
        held while they are copied (:meth:`snapshot`), not while the files are written, so the searches of a
        server go on meanwhile."""
        return self.write_snapshot(path, self.snapshot())

    @locked
    def snapshot(self) -> tuple[tuple[dict, Any], tuple[list, list, str]]:
        """The store's snapshot and the running states of one moment, for :meth:`write_snapshot`.

        The per-memory states are copied, not encoded: a memory's times are a list changed in place and its
        history a list appended to (its events, dicts, never change once logged; an open turn's UPDATE is replaced by
        a new one), so each is copied as a tuple here
        and turned into JSON by write_snapshot, without the lock (at 100k memories, encoding them here held it for
        0.5-0.9 s). The conversations' trackers (one per episode, dicts they change in place) are encoded here."""
        with gc_paused():
            return self.store.snapshot(), (
                [(i, *t) for i, t in self._times.items()], [(i, tuple(h)) for i, h in self._history.items()],
                json.dumps({"version": VERSION, "k": self.k, "base": self._base,
                            "owners": [[i, None if s is None else list(s)] for i, s in self._owners.items()],
                            "trackers": {ep: t.state_dict() for ep, t in self._trackers.items()},
                            "open": {ep: t.state_dict() for ep, t in self._open.items()},
                            **({"labels": {ep: [[st, list(ls)] for st, ls in kept.items()]
                                           for ep, kept in self._labels.items()}} if self._labels else {}),
                            **({"needs": {ep: [[st, list(fs)] for st, fs in kept.items()]
                                          for ep, kept in self._needs.items()}} if self._needs else {}),
                            **({"numbering": {ep: n.to_json() for ep, n in self._numbering.items()}}
                               if self._numbering else {}),
                            **({"unknown": {ep: sorted(st) for ep, st in self._unknown.items()}}
                               if self._unknown else {}),
                            **({"sent": self._sent} if self._sent else {}),
                            **({"given": self._given} if self._given else {}),
                            **({"gone": self._gone} if self._gone else {}),
                            **({"progress": self._progress} if self._progress else {}),
                            **({"dropped": list(self._dropped)} if self._dropped else {})}))

    def write_snapshot(self, path: str | os.PathLike, snap: tuple[tuple[dict, Any], tuple[list, list, str]]) -> Path:
        """Write a :meth:`snapshot` as the folder ``path``, atomically, without the lock."""
        out = Path(path)
        store, (times, history, rest) = snap
        with atomic_dir(out, SCOPED_FILE, ("times", "k")) as tmp:
            (tmp / "store").mkdir()
            self.store.write_snapshot(tmp / "store", store)
            write_json_lists(tmp / SCOPED_FILE, {"times": (times, None), "history": (history, None)}, rest)
        return out

    def _place_episodes(self) -> None:
        """A save from before each scope had its place in its episode's name (scoped.json without a version): then
        only the given scopes' values were joined, so ``{user alice, agent bot}`` and ``{agent alice, run bot}``
        wrote one episode 'alice/bot', one conversation, and loaded as it was, the first's tool call was traced to
        the second's words and revised its memory. Each memory moves to its scopes' own episode (:meth:`episode_of`;
        MemoryStore.move), its id kept, and a conversation that may hold another scope's words or tool-call values is
        dropped with the store's last state of it, so that scope's next message starts afresh (compared with no
        earlier state, no earlier word traced): one that lost a memory it moved, and one of a name two scopes could
        have shared (:func:`_shareable`) with an event whose memory is gone (whose it was, the old name does not
        say). The ids keep the old names, which do not place the scopes: the owner of each moved memory is kept for
        :meth:`history`, and a memory of such a name deleted before the save is nobody's there (its history is shown
        only to a call without scopes)."""
        moves: dict[str, list] = {}
        mixed: set = set()
        for h in self.store.get_all():
            scopes = (h.user_id, h.agent_id, h.run_id)
            new, old = self.episode_of(*scopes), "/".join(v for v in scopes if v is not None)
            if old and h.episode_id == old != new:
                moves.setdefault(new, []).append(h.memory_id)
                mixed.add(old)
                self._owners[h.memory_id] = scopes
        for ep, tracker in self._trackers.items():
            base = self._base.get(ep, 0)
            if _shareable(ep) and not all(self.store.has(MemoryRecord.make_id(ep, base + j))
                                         for j in range(len(tracker.events))):
                mixed.add(ep)
        for ep in self.store.recorder.episodes():
            last = self.store.next_step(ep)
            if _shareable(ep) and (last is None or not self.store.has(MemoryRecord.make_id(ep, last - 1))):
                mixed.add(ep)
        for new, ids in moves.items():
            self.store.move(list(dict.fromkeys(ids)), new)
        for ep in mixed:
            self._open.pop(ep, None)
            self._sent.pop(ep, None)
            self._given.pop(ep, None)
            self._trackers.pop(ep, None)
            self._base.pop(ep, None)
            self.store.recorder.forget(ep)
        for i in self._history:
            if not self.store.has(i) and _shareable(str(i).rpartition("#")[0]):  # deleted before the save: whose,
                self._owners.setdefault(i, None)  # its id does not say

    @classmethod
    def load(cls, path: str | os.PathLike, encoder: Any, reencode: bool = False) -> ScopedMemory:  # noqa: F821
        """A memory saved by :meth:`save`. ``encoder`` must be the model that wrote it (refused otherwise, in one
        line), unless ``reencode``: every memory is then encoded again with it (MemoryStore.reencode)."""
        with reading(path) as folder:
            refuse_links(folder, "memory", "save the memory again")  # a store/ linked to another user's, say
            store = MemoryStore.read(folder / "store", encoder_of(encoder), reencode=reencode)
            f = folder / SCOPED_FILE
            try:
                d = json.loads(f.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
                version = d.get("version", 1)  # none: saved before each scope had its own episode
                if version not in READS or isinstance(version, bool):
                    raise SAMFileError(f"{f}: field 'version' is {json.dumps(version)[:40]}, which this sam_model "
                                       f"does not read (it reads {', '.join(map(str, READS))}): load it with the "
                                       "sam_model that saved it, or upgrade sam_model")
                self = cls(encoder, store.config, check_k(d["k"], "k"), store=store)
                self._base = {ep: check_count(b, f"base[{ep!r}]", "the step of the scope's first tracked event",
                                            "past any step a memory can have")
                              for ep, b in _by_scope(d, "base", required=True).items()}
                self._trackers = {ep: TranscriptState.from_state_dict(t)
                                  for ep, t in _by_scope(d, "trackers", required=True).items()}
                self._open = {ep: live.OpenTurn.from_state_dict(t) for ep, t in _by_scope(d, "open").items()
                              if ep in self._trackers}  # saves before open turns: none
                self._labels = {ep: _labels(kept, ep) for ep, kept in _by_scope(d, "labels").items()}  # before: none
                self._needs = {ep: _needs(kept, ep) for ep, kept in _by_scope(d, "needs").items()}  # before 2026-12-07
                self._numbering = {ep: Numbering.from_json(n, f"numbering of {ep!r}")  # saves before 2026-12-06: none
                                   for ep, n in _by_scope(d, "numbering").items()}
                self._unknown = {ep: set(_steps(st, f"unknown of {ep!r}"))
                                 for ep, st in _by_scope(d, "unknown").items()}
                # saves before 2026-12-06: none; kept for a scope whose memories are all deleted (_drop_conversation)
                self._sent = {ep: resent.check(k, f"sent of {ep!r}") for ep, k in _by_scope(d, "sent").items()}
                self._given = {ep: resent.check_given(k, f"given of {ep!r}")  # saves before stop 64: none
                               for ep, k in _by_scope(d, "given").items() if k != ["", 0]}  # stop 64's nothing
                self._gone = {ep: live_responses.check_gone(g, f"gone of {ep!r}")  # saves before stop 62: none
                              for ep, g in _by_scope(d, "gone").items()}
                self._progress = dict(_by_scope(d, "progress"))  # saves before 2026-12-07: none
                self._dropped = dict.fromkeys(_dropped(d.get("dropped"), self))  # the deleted scopes' order
                self._times = _times(d.get("times", []))  # saves before times: none
                self._history = {i: list(h) for i, h in d.get("history", [])}
                for i, h in self._history.items():
                    if not all(isinstance(e, Mapping) for e in h):
                        raise ValueError(f"history of {i!r} must be a list of objects")
                self._owners = {i: None if o is None else _owner(o, i) for i, o in d.get("owners", [])}
                if version == 1:
                    self._place_episodes()
                    self.migrated = True
                self._dropped = {ep: None for ep in self._dropped
                                 if ep in self._sent or ep in self._gone or ep in self._progress}
                for ep in self._dropped.keys() & self._sent.keys():  # a save before stop 64 kept older adds' marks
                    self._sent[ep] = resent.dropped(self._sent[ep])
                self._keep_dropped()  # a save of more (before stop 63: every deleted scope's) keeps the bound
            except SAMFileError:
                raise
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, OverflowError) as err:
                raise SAMFileError(f"{f}: unreadable memory ({str(err)[:160]}); save the memory again") from None
        return self


def _dropped(d: Any, memory: Any) -> list[str]:
    """A save's deleted scopes whose keys it keeps, the last deleted last, else a ValueError naming ``dropped``;
    a save before stop 63 holds none: its scopes with kept keys and no conversation, in the order saved."""
    if d is None:
        return [ep for ep in dict.fromkeys([*memory._sent, *memory._gone, *memory._progress])
                if ep not in memory._trackers]
    if not (isinstance(d, list) and all(isinstance(ep, str) for ep in d)):
        raise ValueError("dropped must be a list of the episodes (strings) of deleted scopes whose keys are kept")
    return d


__all__ = ["SCOPED_FILE", "VERSION", "ScopedFiles"]
