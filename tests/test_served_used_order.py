"""The used memories first, served (issues 21 and 24): a store search's ``used_order`` puts the memories the task's
earlier tool calls took values from first, in the model's order ("model") or by their latest use ("latest"), then
the rest (sam_model.data.reuse.used_first), however far below the top k the model ranks them; ScopedMemory passes it
on and a store's StoreConfig.used_order makes it every search's default (what sam-serve's searches get). evaluate's
``NAME+used`` rows are measured through it (tests/test_used_order.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_agreement import DEPTH, retriever
from test_chunks import LONG, WordEncoder, record
from test_live_reuse import CHAT, _live, reuse_net  # noqa: F401  (reuse_net: the fixture)

from sam_model.data.reuse import used_first
from sam_model.memory import ScopedMemory
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

N, DIM = 80, 16  # more memories than the re-rank's depth (50): a used one below it is still placed


def _store(config: StoreConfig | None = None, scoped: bool = False) -> tuple[MemoryStore, np.ndarray, list]:
    x = np.random.default_rng(0).standard_normal((N, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    store = MemoryStore(None, config or StoreConfig(provenance=False), DIM)
    recs = [record(f"memory {i}", i) for i in range(N)]
    if scoped:  # two users, the even steps a's, the odd ones b's
        ids = [store.add([r], x[i : i + 1], user_id="ab"[i % 2])[0] for i, r in enumerate(recs)]
    else:
        ids = store.add(recs, x)
    return store, np.random.default_rng(1).standard_normal(DIM).astype(np.float32), ids


def _full(store: MemoryStore, q: np.ndarray, **kw) -> list:
    return [h.id for h in store.search_vector(q, N, **kw)]


def test_a_used_memory_far_below_the_top_k_comes_first_in_the_models_order():
    store, q, _ = _store()
    full = _full(store, q)
    low, lower = full[-10], full[-1]  # ranked 71st and 80th of 80
    got = [h.id for h in store.search_vector(q, 5, used=[lower, low], used_order="model")]
    assert got == [low, lower, *full[:3]]  # the model's order among them, then the model's top
    assert [h.id for h in store.search_vector(q, 5, used=[lower, low])] == full[:5]  # off by default
    assert [h.used for h in store.search_vector(q, 3, used=[low], used_order="model")] == [True, False, False]


def test_latest_orders_the_used_ones_by_the_rank_of_their_latest_use_ties_in_the_models_order():
    store, q, _ = _store()
    full = _full(store, q)
    a, b, c = full[-1], full[-20], full[2]
    got = [h.id for h in store.search_vector(q, 5, used={a: 1, b: 2, c: 1}, used_order="latest")]
    assert got == [c, a, b, full[0], full[1]]  # rank 1: c before a (the model's order), then b (rank 2)
    assert got == used_first(full, {a, b, c}, {a: 1, b: 2, c: 1})[:5]  # the one rule


def test_the_stores_config_orders_every_search_and_a_call_overrides_it(tmp_path):
    store, q, _ = _store(StoreConfig(provenance=False, used_order="model"))
    full = _full(store, q, used_order="off")
    assert [h.id for h in store.search_vector(q, 2, used=[full[-1]])] == [full[-1], full[0]]
    assert [h.id for h in store.search_vector(q, 2, used=[full[-1]], used_order="off")] == full[:2]
    assert [h.id for h in store.search_vector(q, 2)] == full[:2]  # told of no use: nothing to order
    store.save(tmp_path / "s")
    assert MemoryStore.load(tmp_path / "s").config.used_order == "model"  # saved with the store


def test_refusals_are_one_line():
    store, q, ids = _store()
    for kw, words in [({"used": ids[:2], "used_order": "latest"}, "needs used= as a mapping id -> rank"),
                      ({"used": ids[:2], "used_order": "newest"}, "used_order must be 'model', 'latest', 'needed', 'off'"),
                      ({"used_order": "model"}, "used_order='model' needs used="),
                      ({"used": {ids[0]: 0}, "used_order": "latest"}, "must be the rank of its latest use")]:
        with pytest.raises(ValueError) as err:
            store.search_vector(q, 3, **kw)
        assert words in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"field 'store.used_order' must be \"model\" or \"latest\" or \"needed\" or null"):
        StoreConfig.from_dict({"used_order": "first"})


def test_a_used_memory_of_another_scope_is_never_returned():
    store, q, ids = _store(scoped=True)
    theirs = [i for n, i in enumerate(ids) if n % 2]  # b's
    hits = store.search_vector(q, 5, user_id="a", used=theirs + [ids[0]], used_order="model")
    assert ids[0] == hits[0].id and not {h.id for h in hits} & set(theirs)
    assert len(hits) == 5


def test_a_used_chunked_memorys_chunks_count_as_used():
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG, 0), *(record(f"method_{i} is short here", i + 1) for i in range(6))])
    assert len(store) > 10  # the long one is chunks
    query = ({"phase": "view_file"}, "method_3 is short here")
    plain = store.search(*query, k=3, fold=True)
    assert "e#0" not in [h.memory_id for h in plain]
    hits = store.search(*query, k=3, fold=True, used=["e#0"], used_order="model")
    assert [h.memory_id for h in hits] == ["e#0", *(h.memory_id for h in plain[:2])]
    assert hits[0].used and hits[0].parent_id == "e#0"  # its best chunk, marked used


def test_scoped_memory_passes_it_on_and_its_stores_config_makes_it_the_default(reuse_net, tmp_path):  # noqa: F811
    """A live conversation's uses (ScopedMemory.used: //a#0, #4 and #8 last used by the latest call, #2 earlier) come
    first by their latest use, then the model's ranking; with the store's config, without a flag, and after a save
    (what sam-serve's tenants load)."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    _live(memory, "a")
    used = memory.used(memory.query_input("", run_id="a")[1])
    assert used == {"//a#0": 1, "//a#2": 4, "//a#4": 1, "//a#8": 1}
    model = [r["id"] for r in memory.search("", run_id="a")["results"]]
    want = used_first(model, used, used)[:6]
    assert want[:4] != model[:4]  # the order differs from the model's: the test can fail
    assert [r["id"] for r in memory.search("", run_id="a", limit=6, used_order="latest")["results"]] == want
    on = ScopedMemory(retriever(reuse_net).encoder, StoreConfig(slot_match=0.3, provenance=True,
                                                                source_kinds=["user", "system"], used_order="latest"),
                      k=6)
    _live(on, "a")
    assert [r["id"] for r in on.search("", run_id="a")["results"]] == want
    on.save(tmp_path / "saved")
    loaded = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net).encoder)
    assert [r["id"] for r in loaded.search("", run_id="a")["results"]] == want
    assert [r["id"] for r in loaded.search("", run_id="a", used_order="off")["results"]] == model[:6]


def test_sam_serve_searches_get_the_stores_setting(reuse_net, tmp_path):  # noqa: F811
    """sam-serve's HTTP search goes through ScopedMemory.search: a server whose store config sets used_order answers
    with the used memories first, as the tenant's memory ordered by that option does, not as with it off."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import dataclasses

    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.store import store_config_of

    sam = retriever(reuse_net)
    config = dataclasses.replace(store_config_of(sam), used_order="latest")
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", sam, config)
    http, acme = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}
    assert http.post("/v1/memories", headers=acme, json={"messages": CHAT, "run_id": "a"}).status_code == 200
    got = http.post("/v1/memories/search", headers=acme, json={"query": "", "run_id": "a", "limit": 6})
    assert got.status_code == 200, got.text
    memory = tenants.tenants["acme"].memory
    assert memory.used(memory.query_input("", run_id="a")[1])  # the conversation's calls used memories
    ids = [r["id"] for r in got.json()["results"]]
    assert ids == [r["id"] for r in memory.search("", run_id="a", limit=6, used_order="latest")["results"]]
    assert ids != [r["id"] for r in memory.search("", run_id="a", limit=6, used_order="off")["results"]]


def test_used_given_as_a_generator_is_read_once_and_told_to_every_search_of_a_fold():
    """A folded search (ScopedMemory's, a chunked store's) searches again deeper, told ``used`` again: given as a
    generator (accepted as ids are), it was read by the first search only, so the deeper one placed and marked none."""
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG, 0), *(record(f"method_{i} is short here", i + 1) for i in range(6))])
    query = ({"phase": "view_file"}, "method_3 is short here")
    want = [h.memory_id for h in store.search(*query, k=3, fold=True, used=["e#0"], used_order="model")]
    assert want[0] == "e#0"
    got = store.search(*query, k=3, fold=True, used=(i for i in ["e#0"]), used_order="model")
    assert [h.memory_id for h in got] == want and got[0].used


def test_a_threshold_keeps_limit_results_when_the_used_ones_first_score_below_it(reuse_net):  # noqa: F811
    """``threshold`` keeps the results scoring at least it, ``limit`` of them: the used memories placed first whatever
    their score took places among the limit and were then dropped by the threshold, so fewer than ``limit`` came
    back though more memories score above it (without the ordering the ranking is by score and this cannot be)."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    _live(memory, "a")
    every = memory.search("", run_id="a", limit=DEPTH, used_order="latest")["results"]
    used = set(memory.used(memory.query_input("", run_id="a")[1]))
    low = min(r["score"] for r in every if r["id"] in used)
    above = sorted((r["score"] for r in every if r["id"] not in used and r["score"] > low), reverse=True)
    assert len(above) >= 4  # the test can fail: memories not used score above a used one
    t = (above[3] + low) / 2 if above[3] > low else above[3]
    want = [r["id"] for r in every if r["score"] >= t][:4]
    got = memory.search("", run_id="a", limit=4, used_order="latest", threshold=t)["results"]
    assert [r["id"] for r in got] == want and len(want) == 4


def test_every_backend_places_the_used_ones_alike_within_the_scope_and_before_the_step(store_backend):
    """FAISS, Qdrant and Qdrant Edge give the same ordering: a used memory far below the top k comes first, one of
    another user never comes back, and one written at or after the query's step is not placed (it is no candidate)."""
    store, q, ids = _store(scoped=True)
    full = [h.id for h in store.search_vector(q, N, user_id="a")]
    theirs = [i for n, i in enumerate(ids) if n % 2]
    late = next(i for i in reversed(full) if store.get(i).step >= 40)  # a's, ranked low, written at step 40 or later
    early = next(i for i in reversed(full) if store.get(i).step < 40)
    got = [h.id for h in store.search_vector(q, 5, user_id="a", used={late: 1, early: 2, **dict.fromkeys(theirs, 1)},
                                             used_order="latest", before=("e", 40))]
    assert got[0] == early and late not in got and not set(got) & set(theirs)
    assert got[1:] == [i for i in full if store.get(i).step < 40 and i != early][:4]


def test_a_bare_list_refused_by_the_stores_latest_default_says_where_the_order_comes_from():
    """A store whose StoreConfig.used_order is "latest" refuses a search given used= as a bare list: the caller gave
    no order, so the line names the store's setting and how to search without it (it said used_order='latest',
    which the caller never wrote)."""
    store, q, ids = _store(StoreConfig(provenance=False, used_order="latest"))
    with pytest.raises(ValueError) as err:
        store.search_vector(q, 3, used=ids[:2])
    words = str(err.value)
    assert "StoreConfig.used_order" in words and "used_order='model' or 'off'" in words and "\n" not in words
    assert {h.id for h in store.search_vector(q, 3, used=ids[:2], used_order="model")[:2]} == set(ids[:2])
    assert store.search_vector(q, 3, used=ids[:2], used_order="off")  # the ways out it names work


def test_ranks_given_as_numpy_integers_are_ranks():
    """used= ranks computed with numpy (np.int64) are integers: since every mapping's ranks are checked (not only a
    recency model's), a store that does not score recency refused them ("an integer from 1, got np.int64(1)"), which
    it took before; a bool or a rank below 1 is still refused."""
    store, q, ids = _store()
    full = _full(store, q)
    got = store.search_vector(q, 3, used={full[-1]: np.int64(2), full[-2]: np.int64(1)}, used_order="latest")
    assert [h.id for h in got] == [full[-2], full[-1], full[0]]
    for bad in (np.int64(0), True, np.bool_(True), 1.0):
        with pytest.raises(ValueError, match="must be the rank of its latest use"):
            store.search_vector(q, 3, used={full[0]: bad})
