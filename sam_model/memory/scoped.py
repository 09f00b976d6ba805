"""ScopedMemory: a Mem0-style memory API for users who want one object — SAM underneath.

    memory = ScopedMemory(SAMRetriever.load("checkpoints/tools/export"))
    memory.add([{"role": "user", "content": "I'm mia_li_3668, cancel my Boston flight"}], user_id="mia")
    memory.add(events, user_id="mia", run_id="trip-2")            # agent-log Events (or event dicts) work too
    found = memory.search("which reservation?", user_id="mia", k=5)
    found["results"][0]["memory"], found["results"][0]["score"], found["results"][0]["why"]
    memory.get_all(user_id="mia"); memory.delete(memory_id); memory.delete_all(user_id="mia"); memory.reset()

Scopes (``user_id``, ``agent_id``, ``run_id``) are filters of the one memory store (sam_model.store): they are
applied inside the index search, so one user's search never returns another's memories. Each combination of
scopes is one episode (``"mia/trip-2"``); chat messages become events exactly as the tool-call transcript
importer writes them (sam_model.data.transcripts.TranscriptState.feed: a tool call fixes the state of the
event before it), so the memories, and the ranking, are what evaluate.py measures on the same conversation.
``search`` without a ``state`` uses the run's live state (the last event's); give the state of a tool call about
to be made (sam_model.data.transcripts.live_state) to retrieve its arguments' values.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sam_model.data.schema import Event, State, parse_event
from sam_model.data.text import norm
from sam_model.data.transcripts import TranscriptState, policy_of
from sam_model.io import SAMFileError, atomic_dir, reading
from sam_model.store import Hit, MemoryStore, StoreConfig, encoder_of, store_config_of

SCOPED_FILE = "scoped.json"


def _said(hit: Hit) -> str:
    """The memory's own words: its content without the ``[kind]`` prefix."""
    prefix = f"[{hit.kind}] "
    return hit.content[len(prefix):] if hit.content.startswith(prefix) else hit.content


def result(hit: Hit) -> dict[str, Any]:
    """A hit in Mem0's result shape, plus what SAM knows: kind, step, episode and why it ranked."""
    return {"id": hit.id, "memory": _said(hit), "score": hit.score, "metadata": dict(hit.metadata),
            "user_id": hit.user_id, "agent_id": hit.agent_id, "run_id": hit.run_id, "kind": hit.kind,
            "step": hit.step, "episode_id": hit.episode_id,
            "why": {"index_score": hit.index_score, "rerank_bonus": hit.rerank_bonus, "linked_from": hit.linked_from}}


class ScopedMemory:
    """Memories of many users, agents and runs in one store, every call scoped (see the module doc)."""

    def __init__(self, encoder: Any = None, store_config: StoreConfig | None = None, k: int = 5):
        """``encoder``: a SAMRetriever (its encoder and its export's search settings) or any
        sam_model.encoder.Encoder (then a plain search unless ``store_config`` says otherwise); None: the
        packaged default retriever, SAMRetriever.from_pretrained("sam-general")."""
        if encoder is None:
            from sam_model.pretrained import default_retriever

            encoder = default_retriever()
        self.store = MemoryStore(encoder_of(encoder), store_config or store_config_of(encoder))
        self.k = k
        self._trackers: dict[str, TranscriptState] = {}  # episode -> the conversation's running state
        self._base: dict[str, int] = {}  # episode -> step of the tracker's first event

    @staticmethod
    def episode_of(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> str:
        """The episode a combination of scopes writes to."""
        return "/".join(str(p) for p in (user_id, agent_id, run_id) if p is not None)

    @staticmethod
    def _scopes(user_id, agent_id, run_id, need: bool = True) -> dict[str, Any]:
        for name, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
            if v is not None and (not isinstance(v, str) or not v or "/" in v):
                raise ValueError(f"{name} must be a non-empty string without '/', got {v!r}")
        if need and user_id is None and agent_id is None and run_id is None:
            raise ValueError("give user_id, agent_id or run_id: every memory belongs to a scope")
        return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}

    # ---- writing -------------------------------------------------------------------------------------------

    def add(self, data: str | Mapping | Event | Sequence, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None) -> dict[str, list]:
        """Write chat messages (a string is one user message; dicts with ``role`` as OpenAI messages) or
        agent-log events (Events, or dicts with ``kind`` and ``text``) into the scopes' episode, in order.
        Returns ``{"results": [{"id", "memory", "event": "ADD" | "UPDATE"}, ...]}``."""
        scopes = self._scopes(user_id, agent_id, run_id)
        episode = self.episode_of(user_id, agent_id, run_id)
        items = [{"role": "user", "content": data}] if isinstance(data, str) else (
            [data] if isinstance(data, (Mapping, Event)) else list(data))
        if not items:
            return {"results": []}
        if all(isinstance(m, Mapping) and "role" in m for m in items):
            return {"results": self._add_messages(items, episode, scopes, metadata)}
        events = []
        for i, m in enumerate(items):
            if isinstance(m, Mapping) and "kind" in m:
                m = parse_event({"episode_id": episode, "step": 0, **m}, "add(...)", i + 1)
            if not isinstance(m, Event):
                raise TypeError(f"add(...) item {i}: give chat messages (dicts with 'role'), Events or event dicts "
                                f"(with 'kind' and 'text'), not a mix; got {type(m).__name__}")
            events.append(m)
        return {"results": self._add_events(events, episode, scopes, metadata)}

    def _add_events(self, events: list[Event], episode: str, scopes: dict, metadata) -> list[dict]:
        """Events keep their steps when they have them in order after the episode's; else they are numbered on."""
        nxt = self.store.next_step(episode) or 0
        keep = [e.step for e in events] == sorted({e.step for e in events}) and events[0].step >= nxt
        out = [dataclasses.replace(e, episode_id=episode, step=e.step if keep else nxt + j) for j, e in enumerate(events)]
        ids = self.store.add(out, **scopes, metadata=metadata)
        return [{"id": i, "memory": e.text, "event": "ADD"} for i, e in zip(ids, out)]

    def _add_messages(self, messages: list[Mapping], episode: str, scopes: dict, metadata) -> list[dict]:
        tracker = self._trackers.get(episode)
        if tracker is None:
            tracker = self._trackers[episode] = TranscriptState(episode, policy_of(messages, "add(...)"))
            self._base[episode] = self.store.next_step(episode) or 0
        elif any(m.get("role") == "system" for m in messages):
            tracker.policy_norm = " ".join(filter(None, (tracker.policy_norm, norm(policy_of(messages, "add(...)")))))
        base, out = self._base[episode], []
        for i, message in enumerate(messages):
            n = len(tracker.events)
            _, revised = tracker.feed(message, f"add(...) message {i}")
            if revised:  # a tool call fixed the state of the event before it: store that version
                e = self._event(tracker.events[n - 1], base)
                self.store.update(self.store.recorder.revise(e))
                out.append({"id": f"{e.episode_id}#{e.step}", "memory": e.text, "event": "UPDATE"})
            new = [self._event(d, base) for d in tracker.events[n:]]
            ids = self.store.add(new, **scopes, metadata=metadata) if new else []
            out += [{"id": j, "memory": e.text, "event": "ADD"} for j, e in zip(ids, new)]
        return out

    @staticmethod
    def _event(d: Mapping[str, Any], base: int) -> Event:
        """A tracker's event dict as a memory event (its labels are training data, not memory)."""
        return parse_event({**{k: v for k, v in d.items() if k != "useful_memory_steps"}, "step": d["step"] + base},
                           "add(...)")

    # ---- reading -------------------------------------------------------------------------------------------

    def search(self, query: str, state: State | Mapping | None = None, user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None, k: int | None = None,
               step: int | None = None, task_start: int | None = None) -> dict[str, list]:
        """The k best memories of the scopes for the query text and the agent's state, best first.

        ``state``: the state to search for (default: the live state of the scopes' episode, the last event's);
        ``step`` / ``task_start``: when the query is made and where its task began (default: now, and the
        episode's current task), for a model with time features."""
        scopes = self._scopes(user_id, agent_id, run_id, need=False)
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        episode = self.episode_of(user_id, agent_id, run_id)
        if state is None:
            state = self.live_state(user_id, agent_id, run_id)
        hits = self.store.search(state, query, k or self.k, **scopes,
                                 step=self.store.next_step(episode) if step is None else step,
                                 task_start=self.store.recorder.task_start(episode) if task_start is None else task_start)
        return {"results": [result(h) for h in hits]}

    def live_state(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> State:
        """The state of the scopes' newest event (an empty State when the episode has none)."""
        tracker = self._trackers.get(self.episode_of(user_id, agent_id, run_id))
        if tracker is not None and tracker.events:
            return State.from_json(tracker.events[-1]["state"])
        hits = self.store.get_all(episode_id=self.episode_of(user_id, agent_id, run_id))
        return State(phase=hits[-1].phase) if hits else State()

    def get(self, memory_id: Any) -> dict[str, Any]:
        return result(self.store.get(memory_id))

    def get_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                limit: int | None = None) -> dict[str, list]:
        """Every memory of the scopes (all of them with no scope), in write order."""
        hits = self.store.get_all(**self._scopes(user_id, agent_id, run_id, need=False))
        return {"results": [result(h) for h in hits[:limit]]}

    # ---- forgetting ----------------------------------------------------------------------------------------

    def delete(self, memory_id: Any) -> dict[str, str]:
        self.store.delete([memory_id])
        return {"message": f"memory {memory_id} deleted"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict:
        """Delete every memory of the scopes (at least one scope: ``reset`` forgets everything)."""
        scopes = self._scopes(user_id, agent_id, run_id)
        ids = [h.id for h in self.store.get_all(**scopes)]
        self.store.delete(ids)
        for ep in [ep for ep in self._trackers if ep not in {h.episode_id for h in self.store.get_all()}]:
            self._trackers.pop(ep)
            self._base.pop(ep)
        return {"message": f"{len(ids)} memories deleted"}

    def reset(self) -> None:
        """Forget every memory of every scope."""
        self.store.reset()
        self._trackers.clear()
        self._base.clear()

    # ---- persistence ---------------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """The store and the conversations' running states as one folder, atomically (sam_model.io)."""
        out = Path(path)
        with atomic_dir(out) as tmp:
            (tmp / "store").mkdir()
            self.store.write(tmp / "store")
            (tmp / SCOPED_FILE).write_text(json.dumps({
                "k": self.k, "base": self._base,
                "trackers": {ep: t.state_dict() for ep, t in self._trackers.items()}}), encoding="utf-8")
        return out

    @classmethod
    def load(cls, path: str | os.PathLike, encoder: Any) -> ScopedMemory:
        with reading(path) as folder:
            store = MemoryStore.read(folder / "store", encoder_of(encoder))
            f = folder / SCOPED_FILE
            try:
                d = json.loads(f.read_text(encoding="utf-8"))
                self = cls(encoder, store.config, int(d["k"]))
                self._base = {ep: int(b) for ep, b in d["base"].items()}
                self._trackers = {ep: TranscriptState.from_state_dict(t) for ep, t in d["trackers"].items()}
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
                raise SAMFileError(f"{f}: unreadable memory ({err}); save the memory again") from None
        self.store = store
        return self


__all__ = ["ScopedMemory", "result"]
