"""The store's used_order "needed" (docs/benchmarks/leave-one-domain-out.md, "The used ordering narrowed to the call's
needed slots"): of the memories the task's earlier calls took values from, only those an earlier decision of the
task needing a slot this call needs took values from come first (by their latest use, ties in the model's order),
the task's other used memories in the model's order with the rest. A slot is the last word of a needed path,
lower-cased, indices dropped; a decision that says no needed path counts as needing any slot.

Over random lives (several tasks, labels reaching into earlier tasks, decisions of several labels, random needed
paths), evaluate.py's replay and the live path (ScopedMemory fed the events one by one, saved and loaded half way)
are told what a brute force of the rule gives; the store's search is the post-hoc rule over every candidate.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_opening import make_net
from test_reuse_recent import recent_net  # noqa: F401 - its module fixture, the reuse-recent network
from test_reuse_recent_review import _life as _plain_life
from test_task_first import EMPTY, data_of, write

from sam_model.data.reader import read_episodes
from sam_model.data.reuse import ANY_SLOT, earlier_supplies, needed_used, slot_name, task_supplies, used_first
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.methods import retriever_methods
from sam_model.evaluation.ranking import used_memories, used_ranks, used_supplies
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig

PATHS = ("user_id", "flights[0].date", "flights.1.Date", "city", "reservation_id", "payment.method")


def test_a_slot_is_the_last_word_of_the_path_lower_cased_without_indices():
    assert [slot_name(p) for p in PATHS] == ["user_id", "date", "date", "city", "reservation_id", "method"]
    assert slot_name("items[3]") == "items" and slot_name("0") == "0"


def test_supplies_count_earlier_decisions_only_each_slot_with_its_latest_use():
    steps = [0, 1, 2, 3, 4, 5]
    labels = [[], [0], [], [0, 2], [], [1]]
    needs = [None, ["user_id"], None, ["flights[0].date"], None, []]
    got = earlier_supplies(steps, labels, needs)
    assert got[0] == got[1] == () and got[2] == ((0, (("user_id", 1),)),)  # its own labels do not count at 1
    assert got[4] == ((0, (("date", 3), ("user_id", 1))), (2, (("date", 3),)))
    assert got[5] == got[4]  # step 5's own labels (memory 1, no path said) count only after it
    after = earlier_supplies([*steps, 6], [*labels, []], [*needs, None])[6]
    assert dict(after)[1] == ((ANY_SLOT, 5),)  # a decision that says no needed path: any slot
    assert task_supplies(got[4], 2) == {0: frozenset({"date"}), 2: frozenset({"date"})}  # from its task start on
    assert task_supplies(got[4], None) == {0: frozenset({"date", "user_id"}), 2: frozenset({"date"})}
    used, supplied = {"a": 1, "b": 2, "c": 1}, {"a": {"date"}, "b": {"user_id"}, "c": {ANY_SLOT}}
    assert needed_used(used, supplied, ["flights[2].Date"]) == {"a": 1, "c": 1}  # ranks kept as given
    assert needed_used(used, supplied, []) == {"c": 1}


def _life(rng: random.Random, episode: str) -> list[dict]:
    """One of tests/test_reuse_recent_review.py's random lives (tasks, labels reaching into earlier tasks, decisions
    of several labels), each decision point needing 1-2 random paths (one in ten none)."""
    out = _plain_life(rng, episode)
    for e in out:
        if e.get("useful_memory_steps"):
            flags = [] if rng.random() < 0.1 else sorted(rng.sample(PATHS, rng.randint(1, 2)))
            e["state"] = {**EMPTY, "uncertainty_flags": flags}
    return out


def _brute(events: list[dict], i: int) -> set[int]:
    """The rule at events[i], from scratch: the memories labelled by a decision before it, at or after its task's
    start, that needed a slot it needs (or said none)."""
    src = events[i]["meta"]["source_episode"]
    start = min(e["step"] for e in events if e["meta"]["source_episode"] == src)
    want = {slot_name(p) for p in events[i]["state"]["uncertainty_flags"]}
    out = set()
    for e in events[:i]:
        if e["step"] >= start and e.get("useful_memory_steps"):
            slots = {slot_name(p) for p in e["state"]["uncertainty_flags"]}
            if not slots or slots & want:
                out.update(e["useful_memory_steps"])
    return out


@pytest.fixture(scope="module")
def lives(tmp_path_factory):
    rng = random.Random(7)
    episodes = [_life(rng, f"E{n}") for n in range(10)]
    log = write(tmp_path_factory.mktemp("needed") / "lives.jsonl", [e for ep in episodes for e in ep])
    want = {(ep[0]["episode_id"], e["step"]): _brute(ep, i) for ep in episodes for i, e in enumerate(ep)
            if e.get("useful_memory_steps")}
    return episodes, log, want


def _lifted(data, ex) -> set[int]:
    ranks = used_ranks(data.memories, ex)
    return {data.memories[p].step for p in needed_used(ranks, used_supplies(data.memories, ex), ex.state.uncertainty_flags)}


def test_evaluates_replay_is_told_the_rules_memories(lives):
    _, log, want = lives
    data = data_of(log)
    got = {(ex.episode_id, ex.step): _lifted(data, ex) for ex in data.examples}
    assert got == want
    used = {(ex.episode_id, ex.step): {data.memories[p].step for p in used_memories(data.memories, ex)}
            for ex in data.examples}
    assert sum(0 < len(got[k]) < len(used[k]) for k in got) > 5  # the rule leaves used memories out: it can fail


def test_scoped_memory_fed_the_lives_is_told_what_the_replay_is_and_keeps_it_through_a_save(lives, recent_net,  # noqa: F811
                                                                                             tmp_path):
    """The live path whole: each life's events added one by one (their steps, labels and task keys, as an agent's
    log is added), each decision point told, before its event is written, the rule's memories; half way the memory
    is saved and loaded (the decisions' needed paths go with it)."""
    from test_agreement import DEPTH, retriever

    from sam_model.data.reuse import needed_used as rule
    from sam_model.data.schema import parse_event
    from sam_model.memory import ScopedMemory

    episodes, _, want = lives
    memory, told, expect = ScopedMemory(retriever(recent_net), k=DEPTH), [], []
    for ep in episodes[:4]:
        for j, d in enumerate(ep):
            if j == len(ep) // 2:  # mid-episode: its earlier decisions' paths must come back with it
                memory.save(tmp_path / "m")
                memory = ScopedMemory.load(tmp_path / "m", retriever(recent_net))
            e = parse_event(d, "test")
            if e.is_decision_point:
                start = min(x["step"] for x in ep if x["meta"] == d["meta"])
                inputs = memory.query_input(e.text, e.state, user_id=e.episode_id, task_start=start)[1]
                lifted = rule(memory.used(inputs), memory.supplied(inputs), e.state.uncertainty_flags)
                told.append({int(i.rpartition("#")[2]) for i in lifted})
                expect.append(want[(e.episode_id, e.step)])
                memory.search(e.text, e.state, user_id=e.episode_id, task_start=start, used_order="needed")
            memory.add(d, user_id=e.episode_id)
    assert told == expect and any(told)


@pytest.mark.parametrize("scope", ["episode", "global"])
def test_the_store_path_is_the_post_hoc_rule_with_the_rerank(tiny_bert_dir, lives, scope):
    """Through a store that re-ranks, the search ordered "needed" is the model's ranking of every candidate with the
    rule's memories moved first by their latest use (sam_model.data.reuse.used_first), cut at the depth."""
    _, log, _ = lives
    net = make_net(tiny_bert_dir, task_opening=True).eval()
    data = build_eval_data(str(log), read_episodes(log), scope)
    model = retriever_methods("m", SAMRetriever(net, StoreConfig(slot_match=0.3, provenance=True,
                                                                 source_kinds=["user", "system"])))[0]
    assert model.ordered("needed").name == "m+used-needed"
    jitter = np.zeros(len(data.memories))
    every = model.rank(data, scope, len(data.memories), jitter)
    for depth in (3, 10):
        want = []
        for r, ex in zip(every, data.examples, strict=True):
            lift = needed_used(used_ranks(data.memories, ex), used_supplies(data.memories, ex), ex.state.uncertainty_flags)
            want.append(used_first(r.tolist(), lift, lift)[:depth])
        got = [g.tolist() for g in model.ordered("needed").rank(data, scope, depth, jitter)]
        assert got == want
        assert got != [g.tolist() for g in model.ordered("latest").rank(data, scope, depth, jitter)]


def test_the_store_refuses_bad_slots_or_no_ranks_and_without_slots_lifts_as_latest(tiny_bert_dir, tmp_path):
    from sam_model.data.schema import Event, State
    from sam_model.store import MemoryStore

    net = make_net(tiny_bert_dir).eval()
    store = MemoryStore(SAMRetriever(net).encoder, StoreConfig(provenance=False))
    store.add([Event("E", s, "user", f"said w{s}", State()) for s in range(3)])
    state = State(uncertainty_flags=["city"])
    with pytest.raises(ValueError, match="supplied must be a mapping"):
        store.search(state, "", 2, used={"E#0": 1}, used_order="needed", supplied=["E#0"])
    told = {"E#0": 1, "E#1": 2}  # without the slots (a LangGraph graph's used=): as "latest"
    assert [h.id for h in store.search(state, "", 3, used=told, used_order="needed")] == \
        [h.id for h in store.search(state, "", 3, used=told, used_order="latest")][:3]
    with pytest.raises(ValueError, match=r"supplied\['E#0'\] must be a list of slot names"):
        store.search(state, "", 2, used={"E#0": 1}, used_order="needed", supplied={"E#0": "city"})
    with pytest.raises(ValueError, match="needs used= as a mapping"):
        store.search(state, "", 2, used=["E#0"], used_order="needed", supplied={"E#0": ["city"]})
    hit = store.search(state, "", 3, used={"E#0": 1, "E#1": 1}, used_order="needed",
                       supplied={"E#0": ["date"], "E#1": ["city"]})
    assert hit[0].id == "E#1"  # the one that supplied the needed slot; the other is ranked as the model ranks it
    assert StoreConfig(used_order="needed").used_order == "needed"


def test_the_card_says_the_stores_used_order_and_the_packaged_card_says_needed():
    from pathlib import Path

    from sam_model.card import render

    line = lambda store: next(x for x in render({"dim": 8}, {}, store=store).splitlines() if "re-rank (store)" in x)  # noqa: E731
    assert "used memories first: needed" in line({"used_order": "needed"})
    assert "used memories first" not in line({})
    import sam_model.pretrained

    packaged = Path(sam_model.pretrained.__file__).parent / "sam-general"
    assert "used memories first: needed" in (packaged / "README.md").read_text(encoding="utf-8")


def test_the_packaged_defaults_needed_takes_keys_alone_as_the_models_order_and_never_refuses():
    """A LangGraph graph's used= may be the keys alone (docs/integrations.md), and so may a direct search's: under
    the packaged model's default used_order "needed" (its config, no order given) such a search was refused ("needs
    used= as a mapping"), where before the default shipped it searched. Told no ranks and no slots, every used memory
    comes first in the model's order (what "latest" does with every rank tied); an order the caller names is still
    checked."""
    import dataclasses

    from test_langgraph_store import LOG, HashingEncoder

    from sam_model.integrations.langgraph import SAMStore

    graph = SAMStore(HashingEncoder(512), dataclasses.replace(StoreConfig(), used_order="needed"))
    ns = ("log", "mia")
    for n, event in enumerate(LOG):
        graph.put(ns, f"e{n}", event)
    query = "and a late checkout please"
    plain = [i.key for i in graph.search(ns, query=query, limit=5, used_order="off", used=[])]
    low = plain[-2:]
    assert plain[:2] != low  # the model ranks them last: the test can fail
    got = [i.key for i in graph.search(ns, query=query, limit=5, used=low)]
    assert got == [k for k in plain if k in low] + [k for k in plain if k not in low][:3]
    assert got == [i.key for i in graph.search(ns, query=query, limit=5, used=low, used_order="model")]
    with pytest.raises(ValueError, match="needs used= as a mapping"):
        graph.search(ns, query=query, used=low, used_order="needed")


def test_a_long_sessions_slots_are_read_once_per_path_and_only_for_a_search_ordered_needed(monkeypatch):
    """Every search of the packaged model reads the slots of the whole scope's decisions (its conversation's and its
    log's) again; each read split each decision's needed paths anew (16,000 events: ~0.2 s a search, six times
    used()'s), and ScopedMemory read them for searches ordered otherwise too. Now a path's slot is read once, and
    only a search ordered "needed" and told a use reads the slots."""
    import types

    from sam_model.data import reuse
    from sam_model.memory import scopedsearch
    from sam_model.memory.scopeduses import supplied_steps

    split = reuse.re.split
    calls = []
    monkeypatch.setattr(reuse, "re", types.SimpleNamespace(split=lambda *a: calls.append(a) or split(*a)))
    rng = random.Random(3)
    logged = {s: (rng.randrange(s),) for s in range(1, 2000, 2)}
    needs = {s: (rng.choice(PATHS), f"k{s % 7}.Leaf") for s in logged}
    first = supplied_steps(None, 0, logged, needs, None, 0)
    assert supplied_steps(None, 0, logged, needs, None, 0) == first and any(v != {"leaf"} for v in first.values())
    assert len(calls) <= len(PATHS) + 7  # each distinct path once, not once per decision and search

    from test_langgraph_store import HashingEncoder

    from sam_model.memory import ScopedMemory

    read = []
    monkeypatch.setattr(scopedsearch, "supplied_steps", lambda *a: read.append(a) or {})
    memory = ScopedMemory(HashingEncoder(512), StoreConfig(used_order="needed"))
    memory.add("I am mia_li_3668", user_id="u")
    for order in ("off", "model", "latest"):
        memory.search("mia", user_id="u", used_order=order)
    assert not read
    memory.search("mia", user_id="u")  # the store's own, "needed", but no call of the task used a memory (a chat of
    assert not read  # no tool call): nothing to read, at every search
    monkeypatch.setattr(memory, "used", lambda inputs: {"u#0": 1})  # told a use: the slots are read, once
    memory.search("mia", user_id="u")
    assert len(read) == 1


def test_choosing_an_order_for_a_store_that_serves_needed_says_it_is_not_among_those_scored(tiny_bert_dir, tmp_path):
    """sam_model.choose_order (and a fit's export.used_order auto, adapt.yaml's) scores off, model and latest: run on
    the packaged model (its store serves "needed") it wrote the best of those three in its place, a tie to off,
    without a word that the ordering served was never scored. Now it says so, in one line, with how to keep it."""
    from test_choose_order import _log, _new, _retriever

    from sam_model.choose_order import ORDERS, choose_order

    said: list[str] = []
    record = choose_order(_retriever(tiny_bert_dir, "needed"), _log(tmp_path, _new), say=said.append, lexicals=None)
    assert record["used_order"] in ORDERS and "needed" not in ORDERS  # it is replaced: the warning is due
    (line,) = [s for s in said if "'needed'" in s]
    assert line.startswith("warning:") and "not score" in line and "\n" not in line
    quiet: list[str] = []
    choose_order(_retriever(tiny_bert_dir, "latest"), _log(tmp_path, _new), say=quiet.append, lexicals=None)
    assert not [s for s in quiet if "does not score" in s]
