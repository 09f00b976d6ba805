"""The memory bank's invariants, each after the rules changed the bank: what the last review's invariants fuzzer
broke (a summary's step, the capacity bound, a moved ``corrects`` edge, a value with its unit)."""

from __future__ import annotations

import numpy as np

from sam_model.data.schema import Event, State
from sam_model.memory import BankRules, MemoryBank, MemoryConfig

DIM = 64


def _vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    return v


def test_a_summary_moved_to_a_later_step_says_it_in_the_store_too():
    """A summary that took a later unit's facts moved to that unit's step in the bank, not in the store it is
    searched through: a hit said step 0 where the unit said 1 (time priors and decay read one or the other)."""
    bank = MemoryBank(DIM, MemoryConfig(capacity=3, prune_batch=0.0, half_life=0.0))
    rules = BankRules(bank)
    known = {"budget": "500"}
    rules.observe(Event("e", 0, "user", "budget 500", State("plan", constraints=dict(known))), _vec(0))
    for s in range(1, 4):
        known[f"k{s}"] = str(s)
        rules.observe(Event("e", s, "user", f"k{s} is {s}", State("plan", constraints=dict(known))), _vec(s))
    summary = bank.units["e#summary:plan"]
    assert summary.covers == ["e#0", "e#1"] and summary.step == 1  # created at e#0's step, moved to e#1's
    for u in bank:
        assert bank.store.get(u.id).step == u.step, u.id
    hit = next(h for h in bank.search(bank.vector(summary.id), 3) if h.id == summary.id)
    assert hit.step == summary.step


def test_the_capacity_is_a_hard_bound_summaries_included():
    """The new unit and a new summary were both kept from pruning: capacity 1 held 2 units, capacity 2 held 3
    (a summary per phase). Now the summaries a prune made go too when only they are over the bound."""
    for cap in (1, 2, 3):
        bank = MemoryBank(DIM, MemoryConfig(capacity=cap, half_life=0.0))
        rules = BankRules(bank)
        known: dict[str, str] = {}
        for s, (phase, slot) in enumerate([("plan", "budget"), ("book", "city"), ("pay", "card"), ("pay", "tip"),
                                           ("done", "rating")]):
            known[slot] = str(100 + s)
            rules.observe(Event("e", s, "user", f"{slot} {100 + s}", State(phase, constraints=dict(known))), _vec(s))
            assert len(bank) <= cap, (cap, s, sorted(bank.units))
            assert f"e#{s}" in bank  # the unit just written is kept
            assert all(src is None or src in bank for _, src in bank.slots["e"].values())
        assert len(bank) == cap and len(bank.store) == cap


def _prune_one(bank: MemoryBank, rules: BankRules, uid: str) -> None:
    """Prune ``uid`` as the capacity rule does: its current facts to an heir, its edges repaired."""
    bank.remove(uid, rules.absorb(bank.units[uid], {uid}))


def test_a_corrects_edge_moves_to_the_heir_only_if_the_heir_held_the_corrected_value():
    """Paris (with the budget) corrected by Rome, then pruned: its budget went to the summary, and so did the
    'Rome corrects' edge, so the summary read as outdated by Rome (expansion walked from it to Rome, a prompt could
    say so) though it never held Paris. Now the edge is dropped there, and kept where the heir held Paris too."""
    bank = MemoryBank(DIM, MemoryConfig(half_life=0.0))
    rules = BankRules(bank)
    rules.observe(Event("e", 0, "user", "to paris, budget 500", State("plan", constraints={"city": "paris",
                                                                                         "budget": "500"})), _vec(0))
    rules.observe(Event("e", 1, "user", "rome instead", State("plan", constraints={"city": "rome",
                                                                                 "budget": "500"})), _vec(1))
    assert bank.graph.has_edge("e#1", "e#0", "corrects")
    _prune_one(bank, rules, "e#0")
    summary = bank.units["e#summary:plan"]
    assert summary.facts == {"budget": "500"}
    assert not bank.graph.has_edge("e#1", summary.id, "corrects")
    assert ("corrects", "e#1") not in bank.graph.in_edges(summary.id)

    # the heir held the corrected value: f#0 said Paris (and mentions the Ritz), f#2 restated Paris and set the
    # Ritz, f#3 corrected f#2's Paris; f#2, pruned, leaves the Ritz to f#0, which Rome corrects as well
    bank = MemoryBank(DIM, MemoryConfig(half_life=0.0))
    rules = BankRules(bank)
    for s, (text, known) in enumerate([("hotel=ritz, city paris", {"city": "paris"}), ("hmm", {}),
                                       ("paris, at the ritz", {"city": "paris", "hotel": "ritz"}),
                                       ("rome instead", {"city": "rome", "hotel": "ritz"})]):
        rules.observe(Event("f", s, "user", text, State("plan", constraints=known)), _vec(s))
    assert bank.graph.has_edge("f#3", "f#2", "corrects") and bank.slots["f"]["hotel"][1] == "f#2"
    _prune_one(bank, rules, "f#2")
    assert bank.slots["f"]["hotel"][1] == "f#0" and bank.units["f#0"].facts["city"] == "paris"
    assert bank.graph.has_edge("f#3", "f#0", "corrects")



def test_a_corrects_edge_from_a_pruned_unit_moves_to_an_heir_that_gave_the_slot_another_value():
    """date 2, then 3, then 2 again: the 3 pruned, its heir (the unit that corrected it) took its edge '3 corrects
    2' as '2 corrects 2'. Now it moves only where the heir's value differs (2, 3, 4: '4 corrects 2' holds)."""
    for last, moved in (("2", False), ("4", True)):
        bank = MemoryBank(DIM, MemoryConfig(half_life=0.0))
        rules = BankRules(bank)
        for s, date in enumerate(["2", "3", last]):
            rules.observe(Event("e", s, "user", f"on the {date}th", State("plan", constraints={"date": date})),
                          _vec(s))
        assert bank.graph.has_edge("e#1", "e#0", "corrects") and bank.graph.has_edge("e#2", "e#1", "corrects")
        _prune_one(bank, rules, "e#1")
        assert bank.graph.has_edge("e#2", "e#0", "corrects") == moved, last


def test_a_value_edge_moves_to_the_heir_only_if_the_heir_says_its_value():
    """Found by review: a pruned unit's edges other than ``corrects`` moved to its heir whatever they were about: a
    'same_entity' edge for bags=12 reached the unit that took the pruned one's Paris and never said 12. Now an
    edge whose meaning is a value moves only where the heir says it: a decision derived from Paris follows Paris to
    the heir, the '12' edge is dropped; and a decision derived from an outdated value does not move to the unit
    that replaced it."""
    bank = MemoryBank(DIM, MemoryConfig(half_life=0.0))
    rules = BankRules(bank)
    for s, (kind, text) in enumerate([("user", "to paris, bags=12"), ("user", "ok"), ("user", "bags=12, fine"),
                                      ("action", "book paris"), ("action", "pay for paris")]):
        rules.observe(Event("e", s, kind, text, State("plan", constraints={"city": "paris"})), _vec(s))
    assert bank.graph.has_edge("e#2", "e#0", "same_entity")
    assert bank.graph.has_edge("e#3", "e#0", "derived_from") and bank.graph.has_edge("e#4", "e#0", "derived_from")
    _prune_one(bank, rules, "e#0")
    heir = bank.slots["e"]["city"][1]
    other = ({"e#3", "e#4"} - {heir}).pop()
    assert heir in ("e#3", "e#4") and "12" not in bank.graph.mentions(heir)
    assert bank.graph.has_edge(other, heir, "derived_from")  # the heir holds Paris: the edge holds of it
    assert not bank.graph.has_edge("e#2", heir, "same_entity")  # it never says 12

    bank = MemoryBank(DIM, MemoryConfig(half_life=0.0))
    rules = BankRules(bank)
    for s, (kind, text, city) in enumerate([("user", "to paris", "paris"), ("action", "search paris", "paris"),
                                            ("user", "rome instead", "rome")]):
        rules.observe(Event("f", s, kind, text, State("plan", constraints={"city": city})), _vec(s))
    assert bank.graph.has_edge("f#1", "f#0", "derived_from") and bank.units["f#0"].superseded_by == "f#2"
    _prune_one(bank, rules, "f#0")  # outdated: its heir is the unit that corrected it, which says Rome
    assert not bank.graph.has_edge("f#1", "f#2", "derived_from")


def test_a_written_value_with_its_unit_agrees_with_the_known_number():
    """The parser reads "n=2 pax" as the value "2 pax" (a value runs to a separator: "hotel=Casa Azul" stays
    whole); the bank compared that with the state's 2 and linked the booking that restated it as conflicting
    with the unit that set it. A number with one word after it (its unit) is the number; another number, or
    another value, still conflicts."""
    from sam_model.memory.unit import key_values, same_value

    assert key_values("book(n=2 pax)") == {"n": "2 pax"}
    assert same_value("2 pax", "2") and same_value("500", "500 eur") and same_value("casa azul", "casa azul")
    assert not same_value("3 pax", "2") and not same_value("new york", "new") and not same_value("2 pax", "20")
    assert not same_value("2 pax or 3", "2")
    bank = MemoryBank(DIM, MemoryConfig())
    rules = BankRules(bank)
    st = State("book", constraints={"n": 2, "budget": "500 EUR"})
    rules.observe(Event("e", 0, "user", "we are two, 500 EUR at most", st), _vec(0))
    for s, text in enumerate(["book(n=2 pax, budget=500)", "booked: n=2 pax."], start=1):
        u = rules.observe(Event("e", s, "action", text, st), _vec(s))
        assert "conflicts_with" not in u.relations, text
    u = rules.observe(Event("e", 3, "action", "book(n=3 pax)", st), _vec(3))
    assert u.relations["conflicts_with"] == ["e#0"]


def _check(bank: MemoryBank, where: tuple) -> None:
    """What must hold after every write: within the capacity; bank, store and index hold the same units at the same
    steps; every edge has both ends and is in the incoming index; every slot source is a unit of its episode; an
    edge about a value (same_entity, confirms, derived_from, conflicts_with) joins units that hold it."""
    cap = bank.config.capacity
    assert cap == 0 or len(bank) <= cap, where
    assert sorted(bank.units) == sorted(bank.store.ids()) == sorted(bank.tiers.ids()), where
    for u in bank:
        assert bank.store.get(u.id).step == u.step, (where, u.id)
        for kind, t in bank.graph.out_edges(u.id):
            assert t in bank and u.id in bank.graph.incoming[t][kind], (where, u.id, kind, t)
    for t, kinds in bank.graph.incoming.items():
        assert all(s in bank and bank.graph.has_edge(s, t, k) for k, ss in kinds.items() for s in ss), (where, t)
    for ep, table in bank.slots.items():
        assert all(src is None or bank.units[src].episode_id == ep for _, src in table.values()), (where, ep)
    g = bank.graph  # an edge about a value joins units that hold it (a pruned unit's edges move only so)
    for u in bank:
        for kind, t in g.out_edges(u.id):
            if kind == "same_entity":
                assert g.shared(u.id, t), (where, u.id, kind, t)
            elif kind in ("confirms", "derived_from"):
                assert g.linked_values(u.id, t), (where, u.id, kind, t)
            elif kind == "conflicts_with":
                assert g.conflicted(u.id, t), (where, u.id, kind, t)


def test_the_bank_invariants_hold_over_random_lives_under_small_capacities():
    """The review's invariants fuzz, seeded: two episodes changing, restating and dropping slot values across
    phases, with reinforcement, under capacities from 1, with and without tiers."""
    import random

    from sam_model.memory import HashingEncoder

    enc = HashingEncoder(DIM)
    for seed in range(12):
        rng = random.Random(seed)
        bank = MemoryBank(DIM, MemoryConfig(capacity=rng.choice([1, 2, 3, 5, 8]), half_life=rng.choice([0.0, 5.0]),
                                            prune_batch=rng.choice([0.0, 0.3]), working_size=rng.choice([0, 2])))
        rules = BankRules(bank, encode=enc.encode_memories)
        known: dict[str, dict[str, str]] = {"a": {}, "b": {}}
        steps, phase = {"a": 0, "b": 0}, {"a": "plan", "b": "plan"}
        for n in range(60):
            ep = rng.choice("ab")
            c = known[ep]
            if rng.random() < 0.4:
                c[rng.choice(["city", "date", "pax"])] = rng.choice(["paris", "rome", "2", "3"])
            if rng.random() < 0.05 and c:
                c.pop(rng.choice(sorted(c)))
            if rng.random() < 0.15:
                phase[ep] = rng.choice(["plan", "book", "pay"])
            kind = rng.choice(["user", "action", "result", "thought"])
            text = f"{kind} {n} " + " ".join(f"{k}={v} pax" if k == "pax" else f"{k}={v}" for k, v in c.items()
                                             if rng.random() < 0.5)
            unit = rules.observe(Event(ep, steps[ep], kind, text, State(phase[ep], constraints=dict(c))))
            steps[ep] += 1
            assert unit.id in bank
            if rng.random() < 0.2:
                rules.reinforce(rng.sample(sorted(bank.units), min(2, len(bank))))
            _check(bank, (seed, n))
