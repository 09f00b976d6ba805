"""The run-time memory: each updater rule, the graph and its expansion, tiers, search.

Vectors are hand-made one-hot rows (``vec(i)``) so that what similarity alone would return
is known exactly and every rule's effect can be told apart from it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sam_model.data.schema import Event, State
from sam_model.data.text import norm
from sam_model.memory import EDGE_TYPES, BankRules, MemoryBank, MemoryConfig, MemoryGraph, MemoryUnit
from sam_model.memory.config import DEFAULT_EDGE_WEIGHTS
from sam_model.memory.tiers import LONGTERM, WORKING
from sam_model.memory.unit import key_values, values_in

DIM = 16


def vec(*hot: int, scale: float = 1.0) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[list(hot)] = scale
    return v


def ev(step: int, kind: str, text: str, phase: str = "plan", ep: str = "e", **state) -> Event:
    st = State(phase, tuple(state.get("stack", ())), dict(state.get("constraints", {})),
               tuple(state.get("flags", ())), state.get("last", ""))
    return Event(ep, step, kind, text, st)


def make(**cfg) -> tuple[MemoryBank, BankRules]:
    base = {"half_life": 0.0, "importance_weight": 0.0}
    bank = MemoryBank(DIM, MemoryConfig(**{**base, **cfg}))
    return bank, BankRules(bank)


# -- units and text helpers ------------------------------------------------------------------

def test_unit_from_event_uses_retriever_text_and_records_facts():
    prev = State("plan", constraints={"origin": "Oslo"})
    e = ev(3, "user", "I want to go to Paris", constraints={"origin": "Oslo", "destination": "Paris"})
    u = MemoryUnit.from_event(e, prev, tick=7)
    assert u.id == "e#3" and u.tick == 7 and u.phase == "plan" and u.kind == "user"
    assert u.text == "[user] sets destination: I want to go to Paris"  # memory_to_text + constraints_delta
    assert u.content == "[user] I want to go to Paris"  # what a content-only retriever reads
    assert u.facts == {"destination": "paris"}


def test_value_helpers():
    assert norm("  New   York ") == "new york"
    assert key_values("CALL Book(to=Paris, pax=2)") == {"to": "paris", "pax": "2"}
    assert key_values("BookHotel: confirmed X. hotel=Casa Azul. rating=4") == {"hotel": "casa azul", "rating": "4"}
    assert values_in("Flying to Paris, not Parisville", {"paris", "rome"}) == {"paris"}
    assert values_in("Parisville only", {"paris"}) == set()


# -- write filter ------------------------------------------------------------------------------

def test_write_filter_keeps_kinds_by_phase():
    bank, up = make(keep_kinds={"booking": ["user", "action"], "*": ["user", "system", "action"]})
    assert up.observe(ev(0, "system", "chit chat", phase="booking"), vec(0)) is None
    assert up.observe(ev(1, "user", "book it", phase="booking"), vec(1)) is not None
    assert up.observe(ev(2, "system", "hello", phase="greet"), vec(2)) is not None
    assert up.observe(ev(3, "thought", "hmm", phase="greet"), vec(3)) is None
    assert sorted(bank.units) == ["e#1", "e#2"]
    assert bank.clock == 4  # filtered events still tick the clock


# -- importance --------------------------------------------------------------------------------

def test_importance_decays_exponentially_per_step():
    bank, up = make(half_life=10.0, fact_bonus=0.0)
    up.observe(ev(0, "user", "first"), vec(0))
    start = bank.importance("e#0")
    for s in range(1, 11):
        up.observe(ev(s, "system", f"filler {s}"), vec(1))
    assert bank.importance("e#0") == pytest.approx(start / 2, rel=1e-6)
    for s in range(11, 21):
        up.observe(ev(s, "system", f"filler {s}"), vec(1))
    assert bank.importance("e#0") == pytest.approx(start / 4, rel=1e-6)
    assert bank.importance("e#20") == pytest.approx(start)  # the newest has not decayed


def test_reinforcement_raises_importance_of_used_units_only_and_is_capped():
    bank, up = make(half_life=20.0, reinforce=1.0, max_importance=2.5, fact_bonus=0.0)
    up.observe(ev(0, "user", "a"), vec(0))
    up.observe(ev(1, "user", "b"), vec(1))
    for s in range(2, 12):
        up.observe(ev(s, "system", f"filler {s}"), vec(2))
    before_a, before_b = bank.importance("e#0"), bank.importance("e#1")
    up.reinforce(["e#0", "missing#9"])  # unknown ids are ignored
    assert bank.importance("e#0") == pytest.approx(before_a + 1.0)
    assert bank.importance("e#1") == pytest.approx(before_b)
    for _ in range(5):
        up.reinforce(["e#0"])
    assert bank.importance("e#0") == pytest.approx(2.5)



def test_reinforcing_a_unit_above_the_cap_never_lowers_it():
    """Found by review: reinforce set min(max_importance, i + reinforce), so a unit that started above the cap (a
    fact_bonus of 6 with max_importance 5: 7.0) fell to the cap for being used."""
    bank, up = make(fact_bonus=6.0, max_importance=5.0, reinforce=1.0)
    unit = up.observe(ev(0, "user", "to Paris", constraints={"city": "Paris"}), vec(0))
    start = bank.importance(unit.id)
    assert start > bank.config.max_importance  # 1 + fact_bonus
    up.reinforce([unit.id])
    assert bank.importance(unit.id) == pytest.approx(start)

def test_finished_phase_details_are_suppressed_but_current_facts_are_not():
    bank, up = make(suppress=0.25, fact_bonus=0.0)
    stack = ("trip", "hotel")
    up.observe(ev(0, "user", "Budget 500", phase="hotel", stack=stack, constraints={"budget": 500}), vec(0))
    up.observe(ev(1, "system", "Looking at hotels", phase="hotel", stack=stack, constraints={"budget": 500}), vec(1))
    # still in the stack: moving to a sub-phase does not finish "hotel"
    up.observe(ev(2, "system", "sub step", phase="compare", stack=(*stack, "compare"),
                  constraints={"budget": 500}), vec(2))
    assert bank.importance("e#1") == pytest.approx(1.0)
    up.observe(ev(3, "user", "Now the car", phase="car", stack=("trip", "car"), constraints={"budget": 500}), vec(3))
    assert bank.importance("e#1") == pytest.approx(0.25)  # a finished phase's detail
    assert bank.importance("e#0") == pytest.approx(1.0)  # holds the current budget: kept


# -- linking -----------------------------------------------------------------------------------

def test_correction_links_new_value_demotes_old_and_keeps_it():
    bank, up = make(demote=0.5, fact_bonus=0.0)
    up.observe(ev(0, "user", "Go to Paris", constraints={"destination": "Paris", "pax": 2}), vec(0))
    up.observe(ev(1, "user", "Actually Rome", constraints={"destination": "Rome", "pax": 2}), vec(1))
    g = bank.graph
    assert g.has_edge("e#1", "e#0", "corrects")
    assert "e#0" in bank  # kept for explanation
    assert bank.importance("e#0") == pytest.approx(0.5)
    assert bank.slots["e"]["destination"] == ["rome", "e#1"]
    assert bank.units["e#0"].superseded_by is None  # still the source of pax
    up.observe(ev(2, "user", "Make it 3 people", constraints={"destination": "Rome", "pax": 3}), vec(2))
    assert g.has_edge("e#2", "e#0", "corrects")
    assert bank.units["e#0"].superseded_by == "e#2"  # now nothing it said is current
    assert bank.importance("e#0") == pytest.approx(0.25)


def test_correct_kinds_restricts_who_can_correct():
    bank, up = make(correct_kinds=["user"])
    up.observe(ev(0, "user", "at 11:30", constraints={"time": "half past 11"}), vec(0))
    up.observe(ev(1, "result", "booked 11:30", constraints={"time": "11:30"}), vec(1))
    assert not bank.graph.has_edge("e#1", "e#0", "corrects")
    assert bank.units["e#0"].superseded_by is None


def test_decisions_derive_from_sources_and_restatements_confirm():
    bank, up = make()
    c = {"destination": "Paris", "date": "2025-05-03"}
    up.observe(ev(0, "user", "To Paris", constraints={"destination": "Paris"}), vec(0))
    up.observe(ev(1, "user", "On May 3", constraints=c), vec(1))
    up.observe(ev(2, "user", "ok go", flags=("destination",)), vec(2))  # decision point: values masked
    act = up.observe(ev(3, "action", "CALL Search(to=Paris, date=2025-05-03)", constraints=c), vec(3))
    g = bank.graph
    assert g.has_edge("e#3", "e#0", "derived_from") and g.has_edge("e#3", "e#1", "derived_from")
    assert act.facts == {}  # the agent restating known values establishes nothing new
    assert bank.slots["e"]["destination"][1] == "e#0"
    res = up.observe(ev(4, "result", "Search: 3 results in Paris", constraints=c), vec(4))
    assert g.has_edge("e#4", "e#0", "confirms")
    assert "paris" in res.entities
    assert g.has_edge("e#1", "e#2", "temporal_next") and g.has_edge("e#3", "e#4", "temporal_next")


def test_conflicting_slot_value_and_same_entity_links():
    bank, up = make()
    c = {"budget": 500, "hotel": "Casa Azul"}
    up.observe(ev(0, "user", "Budget 500 at Casa Azul", constraints=c), vec(0))
    up.observe(ev(1, "result", "Offer: budget=900, hotel=Casa Azul", constraints=c), vec(1))
    assert bank.graph.has_edge("e#1", "e#0", "conflicts_with")  # 900 is not the budget the state holds
    assert bank.graph.has_edge("e#1", "e#0", "confirms")  # but the hotel is the one it holds
    up.observe(ev(2, "system", "Anything else?", constraints=c), vec(2))
    up.observe(ev(3, "system", "Casa Azul has a pool", constraints=c), vec(3))
    assert bank.graph.has_edge("e#3", "e#0", "derived_from")
    assert bank.graph.has_edge("e#3", "e#1", "same_entity")  # the latest other unit naming it


# -- graph -------------------------------------------------------------------------------------

def _units(*ids: str) -> dict[str, MemoryUnit]:
    return {i: MemoryUnit(i, i, "user", "p") for i in ids}


def test_graph_rejects_unknown_types_and_detach_repairs_edges():
    g = MemoryGraph(_units("a", "b", "c", "d", "h"))
    with pytest.raises(ValueError, match="unknown edge type"):
        g.add_edge("a", "b", "likes")
    g.add_edge("a", "b", "temporal_next")
    g.add_edge("b", "c", "temporal_next")
    g.add_edge("d", "b", "derived_from")
    g.add_edge("a", "b", "same_entity")
    g.add_edge("b", "a", "corrects")
    g.add_edge("c", "b", "corrects")
    g.units["a"].facts, g.units["b"].facts = {"city": "paris"}, {"city": "rome"}
    g.units["c"].facts, g.units["h"].facts = {"city": "oslo"}, {"city": "lima"}
    for uid, says in (("d", ["ritz"]), ("b", ["ritz", "12"]), ("h", ["ritz"]), ("a", ["12"])):
        g.units[uid].entities = says  # h took b's hotel, not the 12 a and b share
    g.detach("b", heir="h")
    del g.units["b"]
    assert g.has_edge("a", "c", "temporal_next")  # the time line is closed over the gap
    assert g.has_edge("d", "h", "derived_from") and g.has_edge("h", "a", "corrects")  # moved to the heir
    assert not g.has_edge("c", "h", "corrects")  # h never held rome, the value c corrected
    assert not g.has_edge("a", "h", "same_entity")  # h never says 12, the value a and b shared
    assert all(t in g.units for u in g.units.values() for ts in u.relations.values() for t in ts)
    assert set(EDGE_TYPES) >= {k for u in g.units.values() for k in u.relations}


def test_expansion_follows_weights_and_is_bounded():
    g = MemoryGraph(_units("s", "x", "y", "z", *[f"n{i}" for i in range(20)]))
    g.add_edge("s", "x", "derived_from")
    g.add_edge("x", "y", "temporal_next")
    g.add_edge("z", "s", "corrects")  # z corrected s: reached backwards
    for i in range(20):
        g.add_edge(f"n{i}", "s", "same_entity")
    w = {"derived_from": (0.9, 0.1), "corrects": (0.2, 0.8), "temporal_next": (0.5, 0.5), "same_entity": (0.1, 0.1)}
    got = g.expand({"s": 1.0}, w, hop_decay=0.5, max_hops=2, max_new=3)
    assert list(got) == ["x", "z", "y"]
    assert got["x"][0] == pytest.approx(0.9) and got["x"][1:] == ("derived_from", "s")
    assert got["z"][0] == pytest.approx(0.8)
    assert got["y"][0] == pytest.approx(0.9 * 0.5 * 0.5)
    assert "y" not in g.expand({"s": 1.0}, w, max_hops=1)
    # a weak seed that a strong seed points at is lifted to the path's score (never ranks lower for being a seed)
    both = g.expand({"s": 1.0, "x": 0.1}, w, hop_decay=0.5, max_hops=1)
    assert both["x"][0] == pytest.approx(0.9) and both["x"][2] == "s" and "s" not in both


def test_search_expansion_pulls_in_the_constraint_a_decision_was_derived_from():
    bank, up = make(max_hops=1)
    c = {"budget": 500}
    up.observe(ev(0, "user", "Budget 500", constraints=c), vec(0))  # the constraint
    for s in range(1, 6):  # distractors, closer to the query than the constraint
        up.observe(ev(s, "system", f"noise {s}", constraints=c), vec(1, 2, scale=0.3 + 0.05 * s))
    up.observe(ev(6, "action", "CALL Book(max_price=500)", constraints=c), vec(3))  # the decision
    assert bank.graph.has_edge("e#6", "e#0", "derived_from")
    q = vec(3) + vec(1, 2, scale=0.5)
    plain = [h.id for h in bank.search(q, k=3, expand=False)]
    assert plain[0] == "e#6" and "e#0" not in plain
    hits = bank.search(q, k=3, expand=True)
    ids = [h.id for h in hits]
    assert ids[0] == "e#6" and "e#0" in ids
    reached = next(h for h in hits if h.id == "e#0")
    assert reached.via == "graph" and reached.edge == ("derived_from", "e#6") and reached.text == bank.unit("e#0").text
    assert reached.score == pytest.approx(reached.index_score + reached.rerank_bonus)
    assert hits[0].via == "index" and hits[0].edge is None  # one result type: the store's Hit, with how it came


def test_superseded_units_rank_below_their_correction():
    bank, up = make(superseded_factor=0.3, expand=False)
    up.observe(ev(0, "user", "Paris", constraints={"destination": "Paris"}), vec(0))
    up.observe(ev(1, "user", "Rome instead", constraints={"destination": "Rome"}), 0.96 * vec(0) + 0.2 * vec(1))
    _fill(up, 2, 3, constraints={"destination": "Rome"})
    assert bank.units["e#0"].superseded_by == "e#1"
    assert [h.id for h in bank.search(vec(0), k=2)] == ["e#1", "e#0"]
    bank.config.superseded_factor = 1.0
    assert [h.id for h in bank.search(vec(0), k=2)] == ["e#0", "e#1"]


# -- capacity ----------------------------------------------------------------------------------

def _fill(up: BankRules, start: int, n: int, **state) -> None:
    for s in range(start, start + n):
        up.observe(ev(s, "system", f"filler {s}", **state), vec(8 + s % 4))


def _check_graph(bank: MemoryBank) -> None:
    for u in bank:
        for targets in u.relations.values():
            assert all(t in bank for t in targets), f"dangling edge from {u.id}"
    for uid, by_kind in bank.graph.incoming.items():
        assert uid in bank or not any(by_kind.values())


def _fill_until_gone(up: BankRules, uid: str, start: int, **state) -> int:
    """Write fillers until ``uid`` is pruned; returns the next free step."""
    s = start
    while uid in up.bank:
        _fill(up, s, 1, **state)
        s += 1
        assert s < start + 100, f"{uid} was never pruned"
    return s


def test_pruning_drops_least_important_and_facts_survive_in_a_summary():
    bank, up = make(capacity=6, half_life=5.0, prune_batch=0.0)
    up.observe(ev(0, "user", "Budget is 500", constraints={"budget": 500}), vec(0))
    _fill(up, 1, 4)  # the task moves on: the state no longer holds the budget
    assert "e#0" in bank  # a fact unit outlives the details written with it
    s = _fill_until_gone(up, "e#0", 5)
    assert len(bank) <= 6
    holder = bank.units[bank.slots["e"]["budget"][1]]
    assert holder.kind == "summary" and holder.facts == {"budget": "500"}
    assert "e#0" in holder.sources() and "budget=500" in holder.text
    assert all(f"e#{i}" in bank for i in range(s - 4, s))  # the freshest survive
    chain = [u.id for u in bank if u.kind != "summary"]
    for a, b in zip(chain, chain[1:]):  # the time line stays connected across pruned units
        assert bank.graph.has_edge(a, b, "temporal_next")
    _check_graph(bank)
    _fill(up, s, 30, constraints={"budget": 500})  # the state holds the budget again: pinned
    assert holder.id in bank and len(bank) <= 6


def test_facts_the_state_still_holds_are_pruned_last():
    bank, up = make(capacity=4, half_life=2.0, prune_batch=0.0)
    up.observe(ev(0, "user", "Budget is 500", constraints={"budget": 500}), vec(0))
    _fill(up, 1, 30, constraints={"budget": 500})
    assert "e#0" in bank and len(bank) == 4
    up.observe(ev(31, "user", "ok, book it", flags=("budget",)), vec(1))  # needed (masked) counts too
    _fill(up, 32, 5, flags=("budget",))
    assert "e#0" in bank


def test_pruned_fact_passes_to_a_neighbour_that_mentions_it():
    bank, up = make(capacity=5, half_life=5.0, prune_batch=0.0, fact_bonus=0.0)
    c = {"hotel": "Casa Azul"}
    up.observe(ev(0, "result", "Booked: hotel=Casa Azul", constraints=c), vec(0))
    up.observe(ev(1, "system", "Your hotel Casa Azul is confirmed", constraints=c), vec(1))
    assert bank.graph.has_edge("e#1", "e#0", "derived_from")
    up.reinforce(["e#1"])  # used: it stays
    _fill_until_gone(up, "e#0", 2)
    assert "e#1" in bank
    assert bank.units["e#1"].facts == {"hotel": "casa azul"}
    assert "e#0" in bank.units["e#1"].covers
    assert bank.slots["e"]["hotel"][1] == "e#1"
    assert not any(u.kind == "summary" for u in bank)
    _check_graph(bank)


def test_summary_is_reencoded_when_an_encoder_is_given():
    bank = MemoryBank(DIM, MemoryConfig(capacity=4, half_life=2.0, prune_batch=0.0))
    seen = []

    def encode(units):
        seen.extend(u.text for u in units)
        return np.stack([vec(15) for _ in units])

    up = BankRules(bank, encode=encode)
    up.observe(ev(0, "user", "Budget is 500", constraints={"budget": 500}), vec(0))
    _fill_until_gone(up, "e#0", 1)
    sid = "e#summary:plan"
    assert sid in bank and seen == [bank.units[sid].text] and "budget=500" in seen[0]
    np.testing.assert_array_equal(bank.vector(sid), vec(15))
    assert bank.search(vec(15), k=1)[0].id == sid


# -- tiers -------------------------------------------------------------------------------------

def test_tiers_demote_overflow_and_promote_used_and_needed_units():
    bank, up = make(working_size=3, half_life=10.0, fact_bonus=0.0)
    up.observe(ev(0, "user", "Budget 500", constraints={"budget": 500}), vec(0))
    for s in range(1, 7):
        up.observe(ev(s, "system", f"detail {s}", constraints={"budget": 500}), vec(s))
    tiers = bank.tiers
    assert len(tiers.working) == 3 and len(tiers.longterm) == 4
    assert tiers.tier_of("e#0") == LONGTERM and tiers.tier_of("e#6") == WORKING
    up.reinforce(["e#1"])  # used again: promoted, someone else demoted
    assert tiers.tier_of("e#1") == WORKING and len(tiers.working) == 3
    up.observe(ev(7, "user", "ok book", flags=("budget",)), vec(7))  # the state needs the budget
    assert tiers.tier_of("e#0") == WORKING and len(tiers.working) == 3
    assert len(tiers) == len(bank) == 8
    # both tiers are searched: a long-term unit is still found
    lt = next(u for u in bank if tiers.tier_of(u.id) == LONGTERM)
    assert bank.search(bank.vector(lt.id), k=1, expand=False)[0].id == lt.id


def test_bad_inputs_are_named():
    bank, up = make()
    with pytest.raises(ValueError, match="dim 3"):
        up.observe(ev(0, "user", "x"), np.ones(3))
    up.observe(ev(1, "user", "x"), vec(1))
    with pytest.raises(ValueError, match="already in the bank"):
        up.observe(ev(1, "user", "again"), vec(1))
    with pytest.raises(ValueError, match="needs an embedding"):
        up.observe(ev(2, "user", "no vector"))
    with pytest.raises(ValueError, match="unknown field"):
        MemoryConfig.from_json({"capacity": 3, "capasity": 4})
    with pytest.raises(ValueError, match="half_life"):
        MemoryConfig(half_life=-1)
    with pytest.raises(ValueError, match="unknown edge type"):
        MemoryConfig(edge_weights={"likes": (1.0, 1.0)})
    assert math.isclose(MemoryConfig(half_life=1.0).decay, 0.5)


def test_an_episode_search_never_walks_into_another_episode():
    """A shared value links units across episodes ('same_entity'); a search of one episode must not reach the
    other's units over that edge (bob's search returned alice's password by the graph step)."""
    bank = MemoryBank(DIM, MemoryConfig(half_life=0.0, importance_weight=0.0))
    rules = BankRules(bank)
    rules.observe(Event("alice", 0, "user", "my account password is hunter2",
                        State("plan", constraints={"password": "hunter2"})), vec(5))
    rules.observe(Event("bob", 0, "user", "CALL Login(password=hunter2)", State("plan")), vec(0))
    assert ("same_entity", "alice#0") in bank.graph.out_edges("bob#0")  # the link exists (a global search uses it)
    assert [h.episode_id for h in bank.search(vec(0), k=5, episode_id="bob")] == ["bob"]
    assert "alice#0" in {h.id for h in bank.search(vec(0), k=5)}  # no episode given: every unit, as before


def test_a_pruned_units_facts_stay_in_its_episode():
    bank = MemoryBank(DIM, MemoryConfig(half_life=2.0, importance_weight=0.0, capacity=3, prune_batch=0.01,
                                        fact_bonus=0.0))
    rules = BankRules(bank)
    rules.observe(Event("alice", 0, "user", "my password is hunter2",
                        State("plan", constraints={"password": "hunter2"})), vec(5))
    rules.observe(Event("bob", 0, "user", "CALL Login(password=hunter2)", State("plan")), vec(0))
    bank.units["bob#0"].set_importance(5.0, bank.clock)
    for s in range(1, 3):
        rules.observe(Event("bob", s, "user", f"hello {s}", State("plan")), vec(s))
    assert "alice#0" not in bank  # pruned: its current fact needs an heir
    heir = bank.slots["alice"]["password"][1]
    assert bank.units[heir].episode_id == "alice" and bank.units["bob#0"].facts == {}


def test_expansion_ties_give_the_same_hits_after_a_save_and_load(tmp_path):
    """Found by review: expansion walked the incoming edges in the order their index held them (a set per edge
    type, rebuilt in another order by a load), and the ``max_expanded`` cut among equal paths kept whichever came
    first: the same bank searched differently after a save and load (and in another process). Ties now go to
    the newer unit, then the id."""
    bank = MemoryBank(DIM, MemoryConfig(importance_weight=0.0, superseded_factor=1.0, max_expanded=6, max_hops=1))
    bank.add(MemoryUnit("e#0", "seed", "user", "p", "e", 0, tick=0), vec(0))
    for i in range(1, 13):  # twelve neighbours the query does not match, each one edge of weight 0.6 from the seed
        bank.add(MemoryUnit(f"e#{i}", f"n{i}", "user", "p", "e", i, tick=i), vec(1 + i % 3))
    for i in range(13, 16):  # decoys the index ranks below a graph path, above the neighbours
        bank.add(MemoryUnit(f"e#{i}", f"d{i}", "user", "p", "e", i, tick=i), vec(0, scale=0.5) + vec(15, scale=0.8))
    kinds = {12: "same_entity", **{i: "confirms" for i in range(1, 7)}, **{i: "same_entity" for i in range(7, 12)}}
    for i, kind in kinds.items():  # same_entity indexed first here, confirms first when a load rebuilds the index
        bank.graph.add_edge(f"e#{i}", "e#0", kind)
    assert DEFAULT_EDGE_WEIGHTS["confirms"] == DEFAULT_EDGE_WEIGHTS["same_entity"]  # the paths tie
    back = MemoryBank.load(bank.save(tmp_path / "bank.npz"))
    hits = [(h.id, h.via) for h in bank.search(vec(0), 4, expand=True)]
    assert hits == [(h.id, h.via) for h in back.search(vec(0), 4, expand=True)]
    newest = sorted(kinds, reverse=True)[:3]
    assert hits == [("e#0", "index")] + [(f"e#{i}", "graph") for i in newest]
