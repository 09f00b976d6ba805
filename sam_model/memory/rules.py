"""The rules that change the bank, driven by the agent's state.

Every observed event ticks the bank clock and passes through, in order:

1. **state hooks** — a phase (or sub-goal) of the previous state that is neither the
   current phase nor on the sub-goal stack is finished: its details are suppressed
   (importance x ``suppress``) except the units that still hold a current slot value.
   Slots the state says it needs (``uncertainty_flags``) have their source units
   promoted to the working tier.
2. **write filter** — ``config.keep_kinds`` says which kinds are written in which phase.
3. **linking** — ``temporal_next`` from the previous unit; a slot set to a new value
   ``corrects`` its previous source (demoted, kept for explanation); a current value
   restated or mentioned links to its source: ``derived_from`` for decisions (the agent
   acting on it), ``confirms`` otherwise (a user or result restating a value also becomes
   its newest source); a ``slot=value`` that disagrees with the state ``conflicts_with``
   the source (a number written with its unit, "n=2 pax", agrees with 2); shared values
   link ``same_entity``. The slot table (slot -> value, source unit) per episode is what
   these rules read and write.
4. **capacity** — over ``capacity``, the least important units are pruned (the units that
   hold what the current state knows or needs go last); each pruned unit's current facts
   pass to a neighbour that already mentions them, or else to a summary unit of its phase,
   which then stands for it (``covers``). The capacity is a hard bound on the units after a
   write, summaries included: when only the units that just took pruned facts are over it,
   they are pruned too. Edges are repaired: the time line is closed over
   the gap and other edges move to the heir (for an outdated unit, the unit that
   corrected it) only where the value they are about still holds of the heir, else they
   are dropped (``MemoryGraph.detach``): ``same_entity``, ``confirms`` and ``derived_from``
   where the heir says the value the edge linked by, ``conflicts_with`` where the heir gives
   the slot a value the written one disagrees with, ``corrects`` where the heir holds the
   corrected value or gives that slot another value.
5. **tiers** — the working tier keeps the ``working_size`` most important units (and the
   sources of what the state needs); the rest live in the long-term IVF tier.

Importance decays exponentially per tick (lazily, see ``MemoryUnit.importance_at``) and
grows by ``reinforce`` when a retrieved unit is used (:meth:`BankRules.reinforce`).

A unit's text and set slots are its event's MemoryRecord (the bank's MemoryRecorder: compared with the
state before it in its task), so the bank stores and searches exactly the memories evaluate.py reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from sam_model.data.schema import Event, State
from sam_model.data.text import norm
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.tiers import LONGTERM, WORKING
from sam_model.memory.unit import MemoryUnit, key_values, same_value, values_in
from sam_model.storechecks import check_memory

Encode = Callable[[list[MemoryUnit]], np.ndarray]


class BankRules:
    """Applies the state-driven rules to a bank. ``encode`` embeds new units and re-embeds summaries."""

    def __init__(self, bank: MemoryBank, encode: Encode | None = None):
        self.bank = bank
        self.encode = encode

    @property
    def cfg(self) -> MemoryConfig:
        return self.bank.config

    def now(self) -> int:
        return self.bank.clock

    # -- 1. one event
    def observe(self, event: Event, embedding: np.ndarray | None = None,
                state: State | None = None) -> MemoryUnit | None:
        """Tick, apply the state hooks, and write ``event`` if the state keeps its kind.

        ``state`` overrides ``event.state``. Without ``embedding`` the unit is encoded with
        ``encode`` (after the filter, so dropped events cost no encoding). Returns the new
        unit, or None when the write filter dropped the event.
        """
        bank = self.bank
        state = event.state if state is None else state
        if not isinstance(state, State):
            raise TypeError(f"state must be a sam_model.data.schema.State, got {type(state).__name__}")
        check_memory(dataclasses.replace(event, text="-"), "event")  # id, step, kind; the text once it is kept
        if f"{event.episode_id}#{event.step}" in bank:
            raise ValueError(f"memory {event.episode_id}#{event.step} is already in the bank: "
                             "steps must be unique within an episode")
        # What can still fail (the record, the encoder) runs before anything changes: a write that failed (an
        # encoder timeout) and was retried must find the bank as it was, or the retry's record lost its facts
        record = bank.recorder.record(event, state, commit=False)
        kept = self.keeps(event.kind, state.phase)
        if kept:
            check_memory(event, "event")  # a dropped event's text may be blank or long, as a log's may
            unit = MemoryUnit.from_record(record, event, bank.clock + 1, state)
            if embedding is None:
                if self.encode is None:
                    raise ValueError("BankRules.observe needs an embedding, or BankRules built with encode=...")
                embedding = self.encode([unit])[0]
            embedding = bank.check_vector(embedding, unit.id)
        bank.clock += 1
        ep = event.episode_id
        prev = bank.last_state.get(ep)
        bank.last_state[ep] = state
        self.on_state(ep, prev, state)
        bank.recorder.record(event, state)  # every event: the next one is compared with this state
        if not kept:
            return None
        bank.add(unit, embedding, record)
        self.link(unit, state)
        unit.set_importance(1.0 + (self.cfg.fact_bonus if unit.facts else 0.0), bank.clock)
        self.enforce_capacity(protect={unit.id}, last=self.pinned(ep))
        self.balance_tiers(protect={unit.id} | self.pinned(ep, needed_only=True))
        return unit

    def keeps(self, kind: str, phase: str) -> bool:
        kinds = self.cfg.kinds_kept(phase)
        return kinds is None or kind in kinds

    def on_state(self, ep: str, prev: State | None, state: State) -> None:
        if prev is not None:
            now = {state.phase, *state.subgoal_stack}
            for phase in [prev.phase, *prev.subgoal_stack]:
                if phase and phase not in now:  # left the phase and its sub-goal is off the stack
                    self.suppress_phase(ep, phase)
        if self.bank.tiers.tiered and state.uncertainty_flags:
            self.promote(sorted(self.pinned(ep, needed_only=True)))

    def pinned(self, ep: str, needed_only: bool = False) -> set[str]:
        """Units holding what the episode's latest state still knows (same value) or needs.

        These are the current task's facts: pruned last, and (the needed ones) kept in the
        working tier.
        """
        state = self.bank.last_state.get(ep)
        if state is None:
            return set()
        out = set()
        for slot, (value, src) in self.bank.slots.get(ep, {}).items():
            if src is None:
                continue
            if slot in state.uncertainty_flags or (not needed_only and slot in state.constraints
                                                   and norm(state.constraints[slot]) == value):
                out.add(src)
        return out

    # -- 2. importance
    def suppress_phase(self, ep: str, phase: str) -> None:
        """A finished phase's details fade; units holding a current slot value do not."""
        bank, now, decay = self.bank, self.now(), self.cfg.decay
        current = {entry[1] for entry in bank.slots.get(ep, {}).values()}
        for uid in bank.by_phase.get((ep, phase), ()):
            if uid not in current:
                u = bank.units[uid]
                u.set_importance(u.importance_at(now, decay) * self.cfg.suppress, now)

    def reinforce(self, ids: Sequence[str]) -> None:
        """Units that were retrieved *and used* gain importance and come back to the working tier.

        i -> max(i, min(max_importance, i + reinforce)): the cap bounds the gain, never takes from a unit that
        starts above it (1 + fact_bonus or summary_importance may exceed max_importance; min alone cut such a unit
        down for being used)."""
        bank, now, cfg = self.bank, self.now(), self.cfg
        hit = [uid for uid in ids if uid in bank]
        for uid in hit:
            u = bank.units[uid]
            i = u.importance_at(now, cfg.decay)
            u.set_importance(max(i, min(cfg.max_importance, i + cfg.reinforce)), now)
        self.promote(hit)

    # -- 3. linking
    def link(self, unit: MemoryUnit, state: State) -> None:
        bank, graph, cfg = self.bank, self.bank.graph, self.cfg
        ep = unit.episode_id
        table = bank.slots.setdefault(ep, {})
        last = bank.last_unit.get(ep)
        if last is not None and last in bank:
            graph.add_edge(last, unit.id, "temporal_next")
        bank.last_unit[ep] = unit.id
        restated: dict[str, str] = {}
        for slot, value in list(unit.facts.items()):
            old = table.get(slot)
            if old is not None and old[1] in bank:
                if old[0] == value and unit.kind in cfg.decision_kinds:  # the agent restating a known value
                    restated[slot] = old[1]
                    del unit.facts[slot]
                    continue
                if old[0] == value:  # the user or the world saying it again: the newest source, confirming
                    graph.add_edge(unit.id, old[1], "confirms")
                    table[slot] = [value, unit.id]
                    continue
                if cfg.correct_kinds is None or unit.kind in cfg.correct_kinds:
                    table[slot] = [value, unit.id]
                    self.correct(old[1], unit)
                    continue
            table[slot] = [value, unit.id]
        kv = key_values(unit.text)
        known = {entry[0] for entry in table.values()} | {norm(v) for v in state.constraints.values()}
        unit.entities = sorted(values_in(unit.text, known | set(kv.values())) | set(unit.facts.values()))
        ents = set(unit.entities)
        derived = "derived_from" if unit.kind in cfg.decision_kinds else "confirms"
        for slot, (value, src) in table.items():
            if src is None or src == unit.id or src not in bank or slot in unit.facts:
                continue
            if value in ents or restated.get(slot) == src:
                graph.add_edge(unit.id, src, derived)
        for key, value in kv.items():
            entry = table.get(key)
            if entry and entry[1] and not same_value(value, entry[0]) and entry[1] != unit.id and entry[1] in bank:
                graph.add_edge(unit.id, entry[1], "conflicts_with")
        linked, n = graph.neighbours(unit.id), 0
        for v in unit.entities:
            ids = bank.entity_index.setdefault(v, [])
            prior = next((i for i in reversed(ids) if i in bank and i not in linked), None)
            if prior is not None and n < cfg.max_entity_links:
                graph.add_edge(unit.id, prior, "same_entity")
                linked.add(prior)
                n += 1
            ids.append(unit.id)
            del ids[:-8]

    def correct(self, old_id: str, unit: MemoryUnit) -> None:
        """``unit`` gave a slot a new value: link it, demote the old source, keep it for explanation."""
        bank = self.bank
        bank.graph.add_edge(unit.id, old_id, "corrects")
        old = bank.units[old_id]
        old.set_importance(old.importance_at(self.now(), self.cfg.decay) * self.cfg.demote, self.now())
        still_source = any(entry[1] == old_id for entry in bank.slots.get(old.episode_id, {}).values())
        if not still_source:
            old.superseded_by = unit.id

    # -- 4. capacity
    def enforce_capacity(self, protect: set[str] = frozenset(), last: set[str] = frozenset()) -> list[str]:
        """Prune down to capacity, least important first (units in ``last`` after all others).

        Returns the pruned ids. ``protect`` is never pruned in this call (the unit just written). The units that
        took a pruned unit's facts in this call (a summary, a neighbour) are pruned only when nothing else is left
        to prune: then they go too, least important first, and what they alone held is forgotten. So the capacity
        is a hard bound (summaries count), never overshot by the summaries a prune makes: at capacity 1 the new
        unit and its phase's new summary were both kept, and each new phase's summary added one more.
        """
        bank, cfg = self.bank, self.cfg
        if cfg.capacity <= 0 or len(bank) <= cfg.capacity:
            return []
        batch = max(1, int(cfg.capacity * cfg.prune_batch))
        pruned: list[str] = []
        touched: set[str] = set()
        keep, heirs_go = set(protect), False
        while len(bank) > cfg.capacity:
            now, decay = self.now(), cfg.decay
            order = sorted((u for u in bank.units.values() if u.id not in keep),
                           key=lambda u: (u.id in last, u.importance_at(now, decay), u.tick))
            if not order and keep != set(protect):  # only this call's heirs are over the bound: they go too,
                keep, heirs_go = set(protect), True  # no more of them than the bound needs
                continue
            victims = order[:len(bank) - cfg.capacity + (0 if heirs_go else batch - 1)]
            if not victims:
                break
            out = {u.id for u in victims}
            for u in victims:
                if u.id in keep:  # took a pruned unit's facts in this batch (a summary): pruning it lost them
                    out.discard(u.id)
                    continue
                heir = self.absorb(u, out)
                if heir is not None:
                    touched.add(heir)
                    keep.add(heir)
                bank.remove(u.id, heir)
                pruned.append(u.id)
        self.embed_summaries([t for t in touched if t in bank and bank.units[t].kind == "summary"])
        return pruned

    def absorb(self, victim: MemoryUnit, leaving: set[str]) -> str | None:
        """Find who keeps ``victim``'s current facts: a neighbour that mentions them, or a summary."""
        bank = self.bank
        table = bank.slots.get(victim.episode_id, {})
        live = {s: v for s, v in victim.facts.items() if s in table and table[s][1] == victim.id}
        if not live:  # nothing current to keep; an outdated unit's edges go to what corrected it
            heir = victim.superseded_by
            return heir if heir in bank and heir not in leaving else None
        values = set(live.values())
        holders = [bank.units[n] for n in bank.graph.neighbours(victim.id)  # its episode's: facts stay in their scope
                   if n not in leaving and bank.units[n].episode_id == victim.episode_id
                   and bank.units[n].kind != "summary"
                   and bank.units[n].superseded_by is None and values <= set(bank.units[n].entities)]
        if holders:
            now, decay = self.now(), self.cfg.decay
            heir = max(holders, key=lambda u: u.importance_at(now, decay))
        else:
            heir = self.summary_for(victim)
            if heir is None:
                return None
        for s, v in live.items():
            heir.facts[s] = v
        if heir.kind == "summary":  # a summary keeps current facts only
            heir.facts = {s: v for s, v in heir.facts.items() if s in table and table[s][1] in (victim.id, heir.id)}
        heir.entities = sorted(set(heir.entities) | values)
        heir.covers = sorted(set(heir.covers) | victim.sources())
        if heir.kind != "summary":
            bank.store.revise(heir.id, sets=set(bank.store.sets_of(heir.id)) | set(live))
        if heir.kind == "summary":
            heir.text = summary_text(heir.phase, heir.facts)
            heir.step = max(heir.step, victim.step)
            keep = max(heir.importance_at(self.now(), self.cfg.decay), self.cfg.summary_importance)
            heir.set_importance(keep, self.now())
            bank.store.revise(heir.id, text=heir.text, sets=heir.facts, step=heir.step)  # one step, bank and store
        return heir.id

    def summary_for(self, victim: MemoryUnit) -> MemoryUnit | None:
        """The summary unit of the victim's (episode, phase), created on first use."""
        bank = self.bank
        sid = f"{victim.episode_id}#summary:{victim.phase}"
        if sid == victim.id:
            return None  # a summary being pruned: its facts are forgotten
        other = bank.units.get(sid)
        if other is not None and (other.kind != "summary" or other.episode_id != victim.episode_id):
            return None  # the id is another episode's memory ('a' in phase 'p#5', episode 'a#summary:p' at step 5)
        if sid not in bank:
            unit = MemoryUnit(sid, summary_text(victim.phase, {}), "summary", victim.phase, victim.episode_id,
                              victim.step, victim.time, self.now(), stamp=self.now())
            bank.add(unit, bank.vector(victim.id))
        return bank.units[sid]

    def embed_summaries(self, ids: list[str]) -> None:
        """Re-embed changed summaries with ``encode``; without it they keep a member's vector."""
        if not ids or self.encode is None:
            return
        units = [self.bank.units[i] for i in ids]
        vecs = np.asarray(self.encode(units), np.float32)
        for uid, v in zip(ids, vecs):
            self.bank.set_embedding(uid, v)

    # -- 5. tiers
    def promote(self, ids: Sequence[str]) -> None:
        tiers = self.bank.tiers
        up = [uid for uid in ids if uid in self.bank and tiers.tier_of(uid) == LONGTERM]
        if up:
            tiers.move(up, WORKING)
            self.balance_tiers(protect=set(up))

    def balance_tiers(self, protect: set[str] = frozenset()) -> None:
        """Demote the least important working units while the working tier is over size."""
        bank, cfg = self.bank, self.cfg
        if not bank.tiers.tiered:
            return
        over = len(bank.tiers.working) - cfg.working_size
        if over <= 0:
            return
        now, decay = self.now(), cfg.decay
        cands = [bank.units[i] for i in bank.tiers.working.ids() if i not in protect]
        cands.sort(key=lambda u: (u.importance_at(now, decay), u.tick))
        down = [u.id for u in cands[:over]]
        if down:
            bank.tiers.move(down, LONGTERM)


def summary_text(phase: str, facts: dict[str, str]) -> str:
    """A summary written like the memories the retriever was trained on: kind, slots, content."""
    if not facts:
        return f"[summary] {phase or 'none'}: nothing yet"
    slots = sorted(facts)
    return f"[summary] sets {', '.join(slots)}: " + "; ".join(f"{s}={facts[s]}" for s in slots)
