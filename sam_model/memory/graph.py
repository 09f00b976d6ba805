"""Typed edges between memories, and retrieval expansion along them.

Similarity finds memories that look like the query; edges find memories that
*belong* with them: the constraint a retrieved decision was derived from, the
unit that corrected a retrieved (outdated) value. Edges live on the units
(``unit.relations``, outgoing) so they are saved with them; this class adds the
incoming index and the graph operations.

Edge directions: ``temporal_next`` earlier -> later; ``derived_from`` decision ->
source; ``confirms``, ``conflicts_with``, ``corrects``, ``same_entity`` new -> old.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from sam_model.memory.unit import MemoryUnit, key_values, same_value

EDGE_TYPES = ("temporal_next", "same_entity", "derived_from", "confirms", "conflicts_with", "corrects")


def check_edge_type(kind: str) -> str:
    if kind not in EDGE_TYPES:
        raise ValueError(f"unknown edge type {kind!r}; known: {', '.join(EDGE_TYPES)}")
    return kind


class MemoryGraph:
    """Typed directed edges over a dict of units (shared with the bank)."""

    def __init__(self, units: dict[str, MemoryUnit]):
        self.units = units
        self.incoming: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for u in units.values():
            for kind, targets in u.relations.items():
                for t in targets:
                    self.incoming[t][kind].add(u.id)

    def add_edge(self, src: str, dst: str, kind: str) -> bool:
        """Add ``src -kind-> dst``; False if it exists, is a self loop or an end is missing."""
        check_edge_type(kind)
        if src == dst or src not in self.units or dst not in self.units:
            return False
        targets = self.units[src].relations.setdefault(kind, [])
        if dst in targets:
            return False
        targets.append(dst)
        self.incoming[dst][kind].add(src)
        return True

    def remove_edge(self, src: str, dst: str, kind: str) -> None:
        targets = self.units[src].relations.get(kind, [])
        if dst in targets:
            targets.remove(dst)
            if not targets:
                del self.units[src].relations[kind]
        self.incoming.get(dst, {}).get(kind, set()).discard(src)

    def out_edges(self, uid: str) -> list[tuple[str, str]]:
        """(type, target) of the edges leaving ``uid``."""
        return [(k, t) for k, ts in self.units[uid].relations.items() for t in ts]

    def in_edges(self, uid: str) -> list[tuple[str, str]]:
        """(type, source) of the edges entering ``uid``."""
        return [(k, s) for k, ss in self.incoming.get(uid, {}).items() for s in ss]

    def has_edge(self, src: str, dst: str, kind: str) -> bool:
        return src in self.units and dst in self.units[src].relations.get(kind, [])

    def neighbours(self, uid: str) -> set[str]:
        return {t for _, t in self.out_edges(uid)} | {s for _, s in self.in_edges(uid)}

    def detach(self, uid: str, heir: str | None = None) -> None:
        """Remove every edge of ``uid`` and repair the graph around it.

        The temporal chain is closed (predecessor -> successor), and the other edges move to ``heir`` (the unit
        that took over the removed unit's facts, or for an outdated unit the one that corrected it) where their
        meaning still holds of the heir, else they are dropped (:meth:`still_holds`). Every edge type but
        ``temporal_next`` says something of a value its ends hold, so each moves only where the heir holds
        that value:

        - ``same_entity``, ``confirms``, ``derived_from``: the heir mentions a value the edge linked by
          (:meth:`linked_values`): a decision derived from a pruned constraint stays derived from the summary that
          took its value, but a ``same_entity`` edge for "2" never reaches an heir that never says 2, nor does a
          decision derived from Paris reach the unit that replaced Paris by Rome;
        - ``conflicts_with``: the heir gives the slot a value the written one still disagrees with
          (:meth:`conflicted`);
        - ``corrects``: the heir holds the value the edge corrected, or gave the corrected unit's slot another
          value (:meth:`corrected`): a summary that took a corrected unit's other, current facts was never
          outdated by it, nor was a unit by the heir that restated its value.
        """
        outs, ins = self.out_edges(uid), self.in_edges(uid)
        if heir is not None and heir in self.units:  # read while the edges and the unit are there
            moves = [(heir, t, k) for k, t in outs if k != "temporal_next" and self.still_holds(k, uid, t, heir, t)]
            moves += [(s, heir, k) for k, s in ins if k != "temporal_next" and self.still_holds(k, s, uid, s, heir)]
        else:
            moves = []
        for kind, t in outs:
            self.remove_edge(uid, t, kind)
        for kind, s in ins:
            self.remove_edge(s, uid, kind)
        preds = [s for k, s in ins if k == "temporal_next"]
        succs = [t for k, t in outs if k == "temporal_next"]
        for p in preds:
            for s in succs:
                self.add_edge(p, s, "temporal_next")
        for src, dst, kind in moves:
            self.add_edge(src, dst, kind)
        self.incoming.pop(uid, None)

    def still_holds(self, kind: str, src: str, dst: str, new_src: str, new_dst: str) -> bool:
        """Whether ``src -kind-> dst`` says something of ``new_src -kind-> new_dst`` (one end replaced by its heir):
        the rule of :meth:`detach`, per edge type."""
        if kind == "corrects":
            return bool(self.corrected(src, dst) & self.corrected(new_src, new_dst)) if new_src != src else any(
                self.units[new_dst].facts.get(slot) == self.units[dst].facts[slot] for slot in self.corrected(src, dst))
        if kind == "conflicts_with":
            return bool(self.conflicted(src, dst) & self.conflicted(new_src, new_dst))
        heir = self.mentions(new_src if new_src != src else new_dst)
        return any(same_value(v, w) for v in self.linked_values(src, dst) for w in heir)

    def corrected(self, src: str, dst: str) -> set[str]:
        """The slots ``dst`` holds a value of that ``src`` holds another value of: what ``src -corrects-> dst``
        says (the units' facts keep the values each one set)."""
        new, old = self.units[src].facts, self.units[dst].facts
        return {slot for slot, v in old.items() if slot in new and new[slot] != v}

    def conflicted(self, src: str, dst: str) -> set[str]:
        """The slots ``src`` writes (``slot=value``) a value of that disagrees with the value ``dst`` holds: what
        ``src -conflicts_with-> dst`` says."""
        held = self.units[dst].facts
        return {slot for slot, v in key_values(self.units[src].text).items()
                if slot in held and not same_value(v, held[slot])}

    def mentions(self, uid: str) -> set[str]:
        """The values ``uid`` says: those its text mentions and the facts it holds (normalised)."""
        u = self.units[uid]
        return set(u.entities) | set(u.facts.values())

    def shared(self, a: str, b: str) -> set[str]:
        """The values ``a`` says that ``b`` says too (a number with its unit, "2 pax", says 2: same_value)."""
        theirs = self.mentions(b)
        return {v for v in self.mentions(a) if any(same_value(v, w) for w in theirs)}

    def linked_values(self, src: str, dst: str) -> set[str]:
        """The values a ``same_entity``, ``confirms`` or ``derived_from`` edge links by: those both ends say; for
        a decision that restated a known value without writing it (its fact is dropped as a repeat), the values
        ``dst`` holds."""
        return self.shared(src, dst) or set(self.units[dst].facts.values())

    def expand(
        self,
        seeds: dict[str, float],
        weights: dict[str, tuple[float, float]],
        hop_decay: float = 0.7,
        max_hops: int = 2,
        max_new: int = 10,
        node_weight: Callable[[str], float] | None = None,
        allowed: Callable[[str], bool] | None = None,
    ) -> dict[str, tuple[float, str, str]]:
        """Units reached from ``seeds`` (id -> score in [0, 1]) along weighted edges.

        A neighbour reached over an edge of weight ``w`` (forward or backward) at hop
        ``h`` scores ``parent * w * hop_decay**(h-1)``; each unit keeps its best path.
        Returns id -> (score, edge type, the unit it was reached from) for at most
        ``max_new`` units that are not seeds (ties: the newer unit first, see :meth:`_rank`), plus the seeds that a path scores higher than
        their own seed score (a unit must not rank lower for having been found directly).
        Bounded by hops and count, so a hub (a value every memory mentions) cannot flood
        the result. ``node_weight(id)``
        scales a unit's own score but not what flows through it to the next hop (the bank
        uses it to favour units that hold what the state needs, whatever the path). ``allowed(id)``: False for a
        unit the search may not see (another episode's, under an episode scope): it is neither reached nor walked
        through, so nothing of it reaches the result, not even its influence on a path.
        """
        best: dict[str, tuple[float, str, str]] = {}
        frontier = dict(seeds)
        for hop in range(1, max_hops + 1):
            factor = hop_decay ** (hop - 1)
            nxt: dict[str, float] = {}
            for uid, score in frontier.items():
                if uid not in self.units:
                    continue
                for kind, other, w in self._steps(uid, weights):
                    walk = score * w * factor  # what flows on to the next hop
                    if walk <= 0 or other == uid or allowed is not None and not allowed(other):
                        continue
                    cand = walk * node_weight(other) if node_weight is not None else walk
                    if cand > best.get(other, (seeds.get(other, 0.0),))[0]:
                        best[other] = (cand, kind, uid)
                    if other not in seeds:  # seeds were expanded at hop 1 already
                        nxt[other] = max(nxt.get(other, 0.0), walk)
            frontier = nxt
            if not frontier:
                break
        lifted = {u: v for u, v in best.items() if u in seeds}
        new = sorted(((u, v) for u, v in best.items() if u not in seeds), key=lambda kv: self._rank(kv[0], kv[1][0]))
        return {**lifted, **dict(new[:max_new])}

    def _steps(self, uid: str, weights: dict[str, tuple[float, float]]) -> list[tuple[str, str, float]]:
        """(type, neighbour, weight) of every edge at ``uid``, forward then backward, in a fixed order: the incoming
        index is a set per type, built in another order by a load (and hashed per process), so walking it as it
        lies gave tied paths (equal weights are the rule) other winners after a save and load."""
        out = sorted((k, t, weights.get(k, (0.0, 0.0))[0]) for k, t in self.out_edges(uid))
        return out + sorted((k, s, weights.get(k, (0.0, 0.0))[1]) for k, s in self.in_edges(uid))

    def _rank(self, uid: str, score: float) -> tuple[float, int, str]:
        """Sort key of a reached unit: best path first; among equal paths the newer unit (higher bank tick), then
        the id, so the ``max_new`` cut keeps the same units in every process and after a save and load."""
        return -score, -self.units[uid].tick, uid
