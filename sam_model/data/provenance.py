"""Provenance links: the earlier memory that a newly adopted state value came from.

An agent forgets *why* its state holds a value. When the user answers "that one works for me",
the state adopts ``therapist_name=Linn Terri`` although the event's own words never say it: the
value came from an earlier memory (the system's offer). A later decision that needs
``therapist_name`` wants that offer, and its own words ("yes, book it") do not lead there.

At write time each memory records the values its state adopted without saying them
(``MemoryRecord.adopted``); :class:`ProvenanceLinker` then links it to the first earlier memory
of the same episode that says each value, among the memory kinds the training labels call
useful (``source_kinds``: in SGD the user and system turns, not the tool results that list
every option). Links only point backwards, so they never use the future. Retrieval places a
linked memory right after the memory that links to it (:func:`expand`): a re-rank after the
index search, which stays exact.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container, Hashable, Iterable, Mapping, Sequence
from numbers import Integral
from typing import Any

from sam_model.data.schema import State
from sam_model.data.text import norm


def contains_value(text_norm: str, value_norm: str) -> bool:
    """``value`` occurs in ``text`` as whole words ("2" is not in "12 results"). A text that does not hold the value
    at all is not scanned by the regex: the substring test is about ten times faster, and the labelling rule asks
    this of every earlier event for every argument value (a whole tool result of a megabyte took 34 ms a value)."""
    return bool(value_norm) and value_norm in text_norm and re.search(
        r"(?<!\w)" + re.escape(value_norm) + r"(?!\w)", text_norm) is not None


def _flat(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, Mapping):
        return [x for v in value.values() for x in _flat(v)]
    text = norm(value) if value is not None else ""
    return [text] if text else []


def adopted_values(previous: State | None, state: State, text: str) -> tuple[str, ...]:
    """Normalised values of constraints that ``state`` sets or changes and that ``text`` does not say."""
    before = previous.constraints if previous is not None else {}
    own = norm(text)
    out: list[str] = []
    for k, v in state.constraints.items():
        if before.get(k) == v:
            continue
        out += [x for x in _flat(v) if not contains_value(own, x) and x not in out]
    return tuple(out)


class ProvenanceLinker:
    """Assigns links online, memory by memory, as a memory bank or an index receives them.

    ``add`` takes memories in write order (anything with ``episode_id``, ``kind``, ``content`` or
    ``text``, and ``adopted``; ``step`` and ``task_start`` when known) and their keys (ids; default: the
    running position), and returns for each memory the keys of the earlier memories its adopted values came
    from.

    Links stay inside the memory's task (sources at or after its ``task_start``): in an agent life values
    recur from task to task (the same city, the same party size), and a link to an earlier task's mention
    would place that task's memory in the current one's top k (SGD lives of 8 on train dialogues no run was
    trained on: Recall@5 0.953 with cross-task links, 0.964 with none, the index alone 0.965).
    """

    def __init__(self, source_kinds: Collection[str] = ()):
        self.source_kinds = frozenset(source_kinds)
        # episode -> [(key, normalised text, step or None)]
        self._episodes: dict[Hashable, list[tuple[Hashable, str, int | None]]] = {}
        self._n = 0

    def is_source(self, kind: str) -> bool:
        return not self.source_kinds or kind in self.source_kinds

    def add(self, memories: Iterable[Any], keys: Iterable[Hashable] | None = None) -> list[tuple[Hashable, ...]]:
        memories = list(memories)
        keys = list(keys) if keys is not None else list(range(self._n, self._n + len(memories)))
        if len(keys) != len(memories):
            raise ValueError(f"ProvenanceLinker.add got {len(memories)} memories but {len(keys)} keys")
        out: list[tuple[Hashable, ...]] = []
        for key, m in zip(keys, memories):
            out.append(self.links_of(m))
            if self.is_source(m.kind):
                self._episodes.setdefault(getattr(m, "episode_id", None), []).append(
                    (key, norm(getattr(m, "content", "") or m.text), getattr(m, "step", None)))
            self._n += 1
        return out

    def links_of(self, m: Any) -> tuple[Hashable, ...]:
        """The keys of the earlier memories ``m``'s adopted values came from, without recording ``m`` (for a
        memory whose state was revised after it was written)."""
        adopted = getattr(m, "adopted", ()) or ()
        if not adopted:  # most memories adopt nothing: no scan of the episode's history
            return ()
        history = self._episodes.get(getattr(m, "episode_id", None), [])
        start, own = getattr(m, "task_start", None), getattr(m, "id", None)
        links: list[Hashable] = []
        for value in adopted:
            source = next((k for k, text, step in history if k != own and (start is None or step is None or step >= start)
                           and contains_value(text, value)), None)
            if source is not None and source not in links:
                links.append(source)
        return tuple(links)

    def revise(self, key: Hashable, m: Any) -> None:
        """Memory ``key`` now says what ``m`` says (an update): later memories link to it by its new words."""
        history = self._episodes.get(getattr(m, "episode_id", None), [])
        for j, (k, _, step) in enumerate(history):
            if k == key:
                history[j] = (k, norm(getattr(m, "content", "") or m.text), step)

    def copy(self) -> ProvenanceLinker:
        """A linker that ``add`` and ``forget`` on this one leave as it is (to put back after a failed write)."""
        other = ProvenanceLinker(self.source_kinds)
        other._episodes, other._n = {ep: list(h) for ep, h in self._episodes.items()}, self._n
        return other

    def forget(self, keys: Collection[Hashable]) -> None:
        """Stop linking to these keys (deleted memories)."""
        gone = set(keys)
        for ep, history in self._episodes.items():
            self._episodes[ep] = [h for h in history if h[0] not in gone]

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state, so a saved retriever keeps linking new memories to old ones."""
        return {"source_kinds": sorted(self.source_kinds), "n": self._n,
                "episodes": [[ep, [list(x) for x in h]] for ep, h in self._episodes.items()]}

    @classmethod
    def from_state_dict(cls, d: Mapping[str, Any]) -> ProvenanceLinker:
        linker = cls(d.get("source_kinds", ()))
        linker._n = int(d.get("n", 0))
        # entries saved before links knew tasks are (key, text): their step is unknown, so they link as before
        linker._episodes = {ep: [(x[0], str(x[1]), x[2] if len(x) > 2 else None) for x in h]
                            for ep, h in d.get("episodes", [])}
        return linker


def provenance_links(memories: Sequence[Any], source_kinds: Collection[str] = ()) -> list[tuple[int, ...]]:
    """Links of every memory of a list in write order (positions in that list)."""
    return ProvenanceLinker(source_kinds).add(memories)  # type: ignore[return-value]


def expand(ranked: Iterable[Hashable], links: Sequence[Sequence[Hashable]] | Mapping[Hashable, Sequence[Hashable]],
           allowed: Container[Hashable] | None = None, depth: int | None = None) -> list[Hashable]:
    """A ranking with each memory's linked sources placed right after it (each memory once, at its best place).

    ``links``: per memory key (a mapping) or per position (a sequence). ``allowed``: the query's candidates;
    a link to anything else (removed, later, or another scope's memory) is not followed.
    """
    return [q for q, _ in expand_with_sources(ranked, links, allowed, depth)]


def expand_with_sources(ranked: Iterable[Hashable],
                        links: Sequence[Sequence[Hashable]] | Mapping[Hashable, Sequence[Hashable]],
                        allowed: Container[Hashable] | None = None,
                        depth: int | None = None) -> list[tuple[Hashable, Hashable | None]]:
    """:func:`expand` with, for each placed memory, the memory whose link placed it (None: ranked itself)."""
    if isinstance(links, Mapping):
        get = links.get
    else:
        def get(p, default=()):
            return links[p] if isinstance(p, Integral) and 0 <= p < len(links) else default
    out: list[tuple[Hashable, Hashable | None]] = []
    seen: set[Hashable] = set()
    for p in ranked:
        for q in (p, *get(p, ())):
            if q in seen or (q != p and allowed is not None and q not in allowed):
                continue
            seen.add(q)
            out.append((q, None if q == p else p))
            if depth is not None and len(out) >= depth:
                return out
    return out
