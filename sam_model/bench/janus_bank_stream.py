"""The bank stream: a memory bank that accumulates knowledge, batch after batch, with faults in some batches.

An agent serves SGD dialogues (real task-oriented conversations: restaurants, flights, banks, ...). Its
memory is one :class:`~sam_model.memory.bank.MemoryBank`; each dialogue is an episode in it. A stream
batch t brings

- ``new`` dialogues: every event is observed by the bank's own updater (writes, ``corrects`` links,
  decay, pruning to capacity, tier moves);
- ``visits``: users coming back to earlier dialogues with one more value ("Quick update on my earlier
  Restaurants request: party size 4."): a slot of an old episode gets a new value, which the bank
  records as a correction of the unit that held it.

What the memory is asked (tasks) is *recall*: in dialogue X, what is slot s? (:class:`RecallTask`; the
state says which slot it needs and knows the dialogue's other values, as an agent resuming X would.)
Per dialogue, ``probes`` slots whose final value some event set are asked: half are the stream's tasks
(Janus sees them: E_t is drawn from them), half are held out (the benchmark's accuracy). The truth of a
probed slot never changes: clean visits only change slots nobody asks about, so old answers stay right.

**Faults** (a seeded share of batches; the kinds in a balanced, shuffled order):

- ``misread``: the batch's visits are misread. Each one is written exactly like a clean visit (same
  template, same count), but it sets a *probed* slot of the old dialogue to a wrong value of that slot
  (drawn from other dialogues): the state tracker heard something else. The bank records it as a
  ``corrects`` of the right value, which is demoted and superseded.
- ``prune``: after the batch, one pruning pass runs with an over-eager capacity (``prune_keep`` of the
  bank's size; a mis-set limit), by the bank's own pruning rules (least important first, facts passed to
  a neighbour or a summary).
- ``flood``: a tool call of one new dialogue hangs in a retry loop that logs its result ``flood`` times
  ("... (retry 17)"): near-duplicate writes that push older units out through the capacity.

Everything is a pure function of (dialogues, config, seed), so every policy sees the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from sam_model.data.schema import Event, State, parse_event
from sam_model.data.text import constraints_delta, norm
from sam_model.janus.adapters.bank_recall import BankBatch, RecallTask, Visit

FAULTS = ("misread", "prune", "flood")
VISIT_TEMPLATES = ("Quick update on my earlier {service} request: {words} {value}.",
                   "About my {service} booking from before: the {words} is {value}.",
                   "Coming back to my {service} request: {words} should be {value}.")
PROBE_TEMPLATES = ("Remind me, what was the {words}?", "What {words} did we settle on?",
                   "Can you check the {words} for me again?", "Which {words} was it again?")
VISIT_STEP, FLOOD_STEP = 10_000, 20_000  # steps of visit and flood events: after every dialogue's own steps


@dataclass
class BankStream:
    history: list[Event]  # dialogues the bank observed before the stream (M_0), no faults
    history_tasks: list[RecallTask]  # their stream probes: Janus's tasks seen before the stream
    batches: list[BankBatch]
    heldout: list[RecallTask]  # the accuracy: held-out probes of every dialogue, history included

    @property
    def faulty(self) -> list[int]:
        return [b.t for b in self.batches if b.fault]


@dataclass
class Dialogue:
    """One converted SGD dialogue and what the stream needs of it."""

    episode_id: str
    service: str
    events: list[Event]
    final: State
    fact_slots: dict[str, str]  # slot -> phase of the event that set its final value (probe-able slots)


def parse_dialogue(raw: dict) -> Dialogue:
    """An SGD dialogue, unmasked (states carry the values they learned), with its probe-able slots."""
    from sam_model.data.sgd import convert_dialogue

    events = [parse_event(e, f"sgd:{raw['dialogue_id']}", i) for i, e in enumerate(convert_dialogue(raw, "origin",
                                                                                                     False))]
    return dialogue_from_events(events, raw["services"][0].split("_")[0])


def dialogue_from_events(events: Sequence[Event], service: str) -> Dialogue:
    """Any agent-log episode as a stream dialogue: a slot is probe-able when an event set its final value."""
    events = [Event(e.episode_id, e.step, e.kind, e.text, e.state) for e in events]  # labels are not used here
    final = events[-1].state
    fact_slots: dict[str, str] = {}
    prev = None
    for e in events:
        for s in constraints_delta(prev, e.state):
            if s in final.constraints and norm(e.state.constraints[s]) == norm(final.constraints[s]):
                fact_slots[s] = e.state.phase
        prev = e.state
    return Dialogue(events[0].episode_id, service, events, final, fact_slots)


def _words(slot: str) -> str:
    return slot.replace("_", " ")


def _probe(d: Dialogue, slot: str, batch: int, rng: random.Random) -> RecallTask:
    known = {k: v for k, v in d.final.constraints.items() if k != slot}
    state = State(phase=d.fact_slots[slot], subgoal_stack=d.final.subgoal_stack, constraints=known,
                  uncertainty_flags=(slot,), last_action_result=d.final.last_action_result)
    text = rng.choice(PROBE_TEMPLATES).format(words=_words(slot))
    return RecallTask(f"{d.episode_id}?{slot}", d.episode_id, slot, norm(d.final.constraints[slot]), state, text,
                      batch)


def fault_schedule(n_batches: int, share: float, kinds: Sequence[str], seed: int) -> list[str | None]:
    """round(share·n) faulty batches (never the first), the kinds balanced and shuffled, drawn by ``seed``."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"fault share is a fraction of batches in [0, 1], got {share}")
    bad = set(kinds) - set(FAULTS)
    if bad:
        raise ValueError(f"unknown fault kinds {sorted(bad)}; known: {FAULTS}")
    k = round(share * n_batches)
    if k and not kinds:
        raise ValueError("a fault share > 0 needs at least one fault kind")
    rng = random.Random(f"faults/{seed}")
    where = sorted(rng.sample(range(1, n_batches), min(k, n_batches - 1))) if k else []
    order = [kinds[i % len(kinds)] for i in range(len(where))]
    rng.shuffle(order)
    out: list[str | None] = [None] * n_batches
    for i, kind in zip(where, order):
        out[i] = kind
    return out


def build_bank_stream(dialogues: Sequence[Dialogue], n_history: int, n_batches: int, per_batch: int,
                      visits: int, probes: int, share: float, kinds: Sequence[str], flood: int,
                      seed: int) -> BankStream:
    """The stream of one seed: a seeded sample of ``dialogues`` (each needs ``probes`` + 1 probe-able slots)."""
    need = n_history + n_batches * per_batch
    pool = [d for d in dialogues if len(d.fact_slots) >= probes + 1]
    if len(pool) < need:
        raise ValueError(f"the stream needs {need} dialogues with at least {probes + 1} probe-able slots; only "
                         f"{len(pool)} of {len(dialogues)} have them (read more dialogues or lower the sizes)")
    rng = random.Random(f"bank-stream/{seed}")
    chosen = rng.sample(pool, need)
    values: dict[str, list[str]] = {}  # slot -> values seen in any chosen dialogue (wrong or new values)
    for d in chosen:
        for e in d.events:
            for s, v in e.state.constraints.items():
                values.setdefault(s, [])
                if norm(v) not in values[s]:
                    values[s].append(norm(v))
    probed: dict[str, list[str]] = {}
    heldout: list[RecallTask] = []
    tasks_of: dict[str, list[RecallTask]] = {}
    for i, d in enumerate(chosen):
        batch = 0 if i < n_history else 1 + (i - n_history) // per_batch
        slots = sorted(d.fact_slots)
        rng.shuffle(slots)
        probed[d.episode_id] = slots[:probes]
        asked = [_probe(d, s, batch, rng) for s in slots[:probes]]
        tasks_of[d.episode_id] = asked[: probes // 2]
        heldout += asked[probes // 2 :]
    faults = fault_schedule(n_batches, share, kinds, seed)
    by_id = {d.episode_id: d for d in chosen}
    seen = [d.episode_id for d in chosen[:n_history]]
    batches: list[BankBatch] = []
    for t in range(1, n_batches + 1):
        new = chosen[n_history + (t - 1) * per_batch : n_history + t * per_batch]
        fault = faults[t - 1]
        vs: list[Visit] = []
        for ep in rng.sample(seen, min(visits, len(seen))):
            d = by_id[ep]
            misread = fault == "misread"
            choices = probed[ep] if misread else [s for s in sorted(d.fact_slots) if s not in probed[ep]] + \
                [s for s in sorted(d.final.constraints) if s not in d.fact_slots]
            slot = rng.choice(choices)
            current = norm(d.final.constraints.get(slot, ""))
            others = [v for v in values.get(slot, []) if v != current]
            if not others:
                continue
            value = rng.choice(others)
            text = rng.choice(VISIT_TEMPLATES).format(service=d.service, words=_words(slot), value=value)
            vs.append(Visit(ep, slot, value, text, VISIT_STEP + t, misread))
        flood_events: list[Event] = []
        if fault == "flood":
            d = new[rng.randrange(len(new))]
            base = next((e for e in reversed(d.events) if e.kind == "result"), d.events[-1])
            flood_events = [Event(d.episode_id, FLOOD_STEP + j, base.kind, f"{base.text} (retry {j + 1})",
                                  d.events[-1].state) for j in range(flood)]
        batches.append(BankBatch(t, [e for d in new for e in d.events], vs,
                                 [task for d in new for task in tasks_of[d.episode_id]], fault, flood_events))
        seen += [d.episode_id for d in new]
    history = [e for d in chosen[:n_history] for e in d.events]
    history_tasks = [task for d in chosen[:n_history] for task in tasks_of[d.episode_id]]
    return BankStream(history, history_tasks, batches, heldout)
