"""A search made at a step ranks the memories written before it, as evaluate.py ranks a decision point's candidates
(the events before the decision's own: sam_model.data.examples.RetrievalExample.candidate_range): the agent's current
event, already added, and anything after it in its episode are no candidates, on every entry point (the store's
search and search_vector, SAMRetriever, ScopedMemory and so sam-serve, SAMMemory). A search that gives no step is made
now, after every memory written, and leaves nothing out."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.data.schema import Event, State
from sam_model.memory import HashingEncoder, SAMMemory, ScopedMemory
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

WORDS = ["flight", "Boston", "refund", "hotel", "Lisbon", "budget", "card", "window", "seat", "dinner"]
CONFIG = StoreConfig(slot_match=0.3, provenance=True, source_kinds=["user", "system"])


def events(episode: str, n: int = 12, seed: int = 0) -> list[Event]:
    """A conversation whose values are set and adopted (so the store's slot match and provenance links act)."""
    rng = np.random.default_rng(seed)
    out, constraints = [], {}
    for step in range(n):
        words = [WORDS[i] for i in rng.choice(len(WORDS), 4, replace=False)]
        if step % 3 == 1:
            constraints = {**constraints, f"slot{step}": words[0]}
        kind = ["user", "system", "action", "result"][step % 4]
        out.append(Event(episode, step, kind, " ".join(words),
                         State("plan", constraints=dict(constraints), uncertainty_flags=(f"slot{step - 2}",))))
    return out


def ids(hits) -> list:
    return [h.id for h in hits]


def test_the_current_event_already_added_is_no_candidate_of_a_search_at_its_step():
    """The walkthrough: the agent adds its newest message, then searches with its state at that message's step; the
    message came back first (its own words match the query best), though it is the agent's context already."""
    memory = ScopedMemory(HashingEncoder(256), k=5)
    memory.add("My budget for the trip is $1,400", user_id="mia")
    memory.add("I live in Lisbon and fly from there", user_id="mia")
    now = "book me a hotel in Lisbon within my budget"
    current = memory.get(memory.add(now, user_id="mia")["results"][0]["id"])
    state = {"phase": "book_hotel", "uncertainty_flags": ["budget", "city"]}
    found = memory.search(now, state=state, user_id="mia", step=current["step"])["results"]
    assert current["id"] not in [r["id"] for r in found]
    assert {r["memory"] for r in found} == {"I live in Lisbon and fly from there", "My budget for the trip is $1,400"}
    # no step: the search is made now, after every memory written, the newest message too (README: give its step)
    assert memory.search(now, state=state, user_id="mia")["results"][0]["id"] == current["id"]
    # the step is the scopes' own episode's: mia's run and another user keep their steps, and scoping holds
    memory.add([{"role": "user", "content": t} for t in ("a hotel in Lisbon near the river", "my budget is firm")],
               user_id="mia", run_id="trip")
    memory.add(now, user_id="bo")
    found = memory.search(now, state=state, user_id="mia", step=0, limit=10)["results"]
    assert {r["episode_id"] for r in found} == {"mia//trip"} and len(found) == 2
    plain = [r["id"] for r in memory.search(now, user_id="mia", limit=10)["results"]]  # words, no state
    assert current["id"] in plain and current["id"] not in \
        [r["id"] for r in memory.search(now, user_id="mia", step=current["step"], limit=10)["results"]]


@pytest.mark.usefixtures("store_backend")  # on FAISS and on Qdrant (tests/conftest.py)
@pytest.mark.parametrize("at", [0, 1, 5, 11])
def test_a_search_at_a_step_ranks_as_a_store_written_up_to_it(at):
    """Over a store that holds the whole episode (and another), a search at step ``at`` gives the hits, scores and
    reasons of a store that holds only the memories written before it: evaluate.py's candidates, in every path."""
    mine, other = events("e"), events("f", seed=1)
    full, before = MemoryStore(HashingEncoder(64), CONFIG), MemoryStore(HashingEncoder(64), CONFIG)
    for store, written in ((full, mine), (before, mine[:at])):
        store.add(other, user_id="ana")
        if written:
            store.add(written, user_id="ana")
    e = mine[at]
    for scope in ({"episode_id": "e"}, {"user_id": "ana", "query_episode": "e"}):
        got = full.search(e.state, e.text, 30, step=at, **scope)
        want = before.search(e.state, e.text, 30, step=at, **scope)
        assert ids(got) == ids(want) and not [h for h in got if h.episode_id == "e" and h.step >= at]
        assert [(h.score, h.linked_from) for h in got] == [(h.score, h.linked_from) for h in want]
    q = full.encoder.encode_queries([e.state], [e.text])[0]
    assert ids(full.search_vector(q, 30, e.state.uncertainty_flags, episode_id="e", before=("e", at))) == \
        ids(before.search_vector(q, 30, e.state.uncertainty_flags, episode_id="e"))
    # a k smaller than the episode is not starved by the memories left out
    assert ids(full.search(e.state, e.text, 3, episode_id="e", step=at)) == \
        ids(before.search(e.state, e.text, 3, episode_id="e", step=at))


def test_an_agent_memory_retrieve_at_a_step_leaves_that_step_and_later_out():
    mem = SAMMemory(HashingEncoder(64), episode_id="trip", k=20)
    for e in events("trip"):
        mem.observe(e)
    e = events("trip")[6]
    got = mem.retrieve(e.state, e.text, step=6)
    assert got and all(h.step < 6 for h in got)
    assert {h.step for h in mem.retrieve(e.state, e.text)} == set(range(12))  # now: every memory
    other = SAMMemory(HashingEncoder(64), mem.bank, episode_id="trip", k=20)  # an agent sharing the episode
    other.observe("a later note on the window seat", State("plan"), kind="user")
    assert 12 in {h.step for h in mem.retrieve(e.state, e.text)}  # now is after it too, whoever wrote it


def late_on_top(rng, dim: int, n: int, at: int):
    """(vectors, query, events) of episode "e"'s n memories, those at and after step ``at`` scoring highest."""
    x = rng.standard_normal((n, dim)).astype(np.float32)
    q = rng.standard_normal(dim).astype(np.float32)
    x[at:] = 3 * q + 0.1 * x[at:]
    return x, q, [Event("e", i, "user", f"memory {i}", State("plan")) for i in range(n)]


@pytest.mark.usefixtures("store_backend")
def test_the_memories_left_out_do_not_starve_a_shallow_search():
    """The index is asked past the memories at or after the step (however many of its top they take), so a search
    of k below the store's size still gives k hits, the top k of the memories before the step."""
    rng, dim, n, at = np.random.default_rng(5), 8, 40, 25
    x, q, recs = late_on_top(rng, dim, n, at)
    config = StoreConfig(provenance=False, rerank_depth=1)
    full, before = MemoryStore(None, config, dim), MemoryStore(None, config, dim)
    full.add(recs, x)
    before.add(recs[:at], x[:at])
    top = ids(full.search_vector(q, 5))
    assert all(int(i.split("#")[1]) >= at for i in top)  # the case: the top is all late
    for k in (1, 5, 20):
        got = ids(full.search_vector(q, k, episode_id="e", before=("e", at)))
        assert got == ids(before.search_vector(q, k, episode_id="e")) and len(got) == k
    assert full.search_vector(q, 5, before=("e", 0)) == []  # nothing before step 0
    with pytest.raises(TypeError, match="before must be"):
        full.search_vector(q, 5, before=at)


@pytest.mark.usefixtures("store_backend")
def test_more_late_memories_than_one_search_may_ask_past_still_give_k_hits(monkeypatch):
    """A search at an early step of a long episode whose top is all late: the index was asked past them n at a time
    (a search per n of them: 197 searches and 23 s at 20,000 memories) and, at MAX_K deep, none of the memories
    before the step was in what came back, so it gave no hit at all. It now asks past twice as many each time and,
    at MAX_K, among the memories before the step: the top k of a store written up to it, in a few index searches."""
    import sam_model.storesearch

    rng, dim, n, at = np.random.default_rng(7), 8, 400, 40
    x, q, recs = late_on_top(rng, dim, n, at)
    other = [Event("f", i, "user", f"other {i}", State("plan")) for i in range(20)]
    y = rng.standard_normal((20, dim)).astype(np.float32)
    config = StoreConfig(provenance=False, rerank_depth=1)
    full, before = MemoryStore(None, config, dim), MemoryStore(None, config, dim)
    for store, written, vectors in ((full, recs, x), (before, recs[:at], x[:at])):
        store.add(other, y)
        store.add(written, vectors)
    calls = []
    search = full.index.search
    monkeypatch.setattr(full.index, "search", lambda *a, **kw: calls.append(1) or search(*a, **kw))
    for k in (1, 5, 30):
        for scope in ({"episode_id": "e"}, {}):
            calls.clear()
            got = ids(full.search_vector(q, k, before=("e", at), **scope))
            assert got == ids(before.search_vector(q, k, **scope)) and len(got) == k, (k, scope)
            assert len(calls) <= 12, (k, scope, len(calls))  # asked past twice as many each time, not k+1 at a time
    monkeypatch.setattr(sam_model.storesearch, "MAX_K", 64)  # more late memories (360) than a search may ask past
    for k in (1, 5, 30):
        for scope in ({"episode_id": "e"}, {}):
            got = ids(full.search_vector(q, k, before=("e", at), **scope))
            assert got == ids(before.search_vector(q, k, **scope)) and len(got) == k, (k, scope)
