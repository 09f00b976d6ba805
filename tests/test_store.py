"""The memory store: hits that say why they ranked, exact ties in a fixed order, one re-rank depth, filters inside
the search, delete, atomic save/load, and older exports and saved retrievers read into the store's config."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sam_model.data.examples import MemoryRecord
from sam_model.io import SAMFileError
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.rerank import tie_keys
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.storefile import DIGEST_FILE

DIM = 8
pytestmark = pytest.mark.usefixtures("store_backend")  # every test on FAISS and on Qdrant (tests/conftest.py)


def records(n: int, ep: str = "e", sets=lambda i: ()) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep}", sets=tuple(sets(i))) for i in range(n)]


def unit(v) -> np.ndarray:
    v = np.asarray(v, np.float32)
    return v / np.linalg.norm(v)


def test_hits_say_what_the_memory_is_and_why_it_ranked():
    rng = np.random.default_rng(0)
    store = MemoryStore(None, StoreConfig(slot_match=100.0, provenance=False), DIM)
    x = rng.standard_normal((6, DIM)).astype(np.float32)
    store.add(records(6, sets=lambda i: ("date",) if i == 5 else ()), x, user_id="ana", metadata={"src": "t"})
    q = rng.standard_normal(DIM).astype(np.float32)
    hits = store.search_vector(q, 6, needs=["date"])
    assert hits[0].id == "e#5" and hits[0].rerank_bonus == pytest.approx(100.0)  # it alone sets what is needed
    for h in hits:
        i = int(h.id.split("#")[1])
        assert h.index_score == pytest.approx(float(x[i].astype(np.float64) @ q.astype(np.float64)))
        assert h.score == pytest.approx(h.index_score + h.rerank_bonus)
        assert (h.text, h.kind, h.step, h.episode_id, h.user_id, h.metadata) == \
            (f"memory {i} of e", "user", i, "e", "ana", {"src": "t"})
    plain = store.search_vector(q, 6, needs=["date"], rerank=False)
    assert [h.score for h in plain] == sorted([h.score for h in plain], reverse=True)
    assert all(h.rerank_bonus == 0 for h in plain)


def test_exact_ties_follow_the_write_order_hash_not_the_batch_or_the_index():
    """Six identical vectors: every store that wrote them in the same order ranks them the same, however they
    were added (one batch, one by one), and the order is the seeded tie hash, not the write order itself."""
    v = unit(np.ones(DIM))
    q = v.copy()
    a = MemoryStore(None, StoreConfig(provenance=False), DIM)
    a.add(records(6), np.tile(v, (6, 1)))
    b = MemoryStore(None, StoreConfig(provenance=False), DIM)
    for r in records(6):
        b.add([r], v[None])
    got = [h.id for h in a.search_vector(q, 6)]
    assert got == [h.id for h in b.search_vector(q, 6)]
    assert got != [f"e#{i}" for i in range(6)] and got != [f"e#{i}" for i in reversed(range(6))]
    c = MemoryStore(None, StoreConfig(provenance=False, tie_seed=1), DIM)
    c.add(records(6), np.tile(v, (6, 1)))
    assert [h.id for h in c.search_vector(q, 6)] != got  # the seed decides, nothing else


def test_the_cut_at_the_rerank_depth_does_not_depend_on_the_order_an_index_returns_ties_in():
    """Thirty equal scores across the cut at depth 5: the store, not the index, picks which go on (score, then
    the write-order tie key), so an index that returns its ties in another order (an IVF re-trained on load)
    gives the same hits, with or without the re-rank."""
    v = unit(np.ones(DIM))
    rng = np.random.default_rng(2)
    other = rng.standard_normal((10, DIM)).astype(np.float32) * 0.1
    stores = []
    for reverse_ties in (False, True):
        store = MemoryStore(None, StoreConfig(provenance=False, slot_match=0.5, rerank_depth=5), DIM)
        store.add(records(40, sets=lambda i: ("date",) if i == 29 else ()),
                  np.concatenate([np.tile(v, (30, 1)), other]))
        if reverse_ties:
            search = store.index.search

            def tie_reversed(q, k, _search=search, _store=store, **kw):
                ids, sc = _search(q, len(_store), **kw)
                row = sorted(range(len(ids[0])), key=lambda j: (-float(sc[0][j]), -j))[:k]
                return [[ids[0][j] for j in row]], sc[:, row]

            store.index.search = tie_reversed
        stores.append(store)
    for rerank in (False, True):
        a, b = ([h.id for h in s.search_vector(v, 5, needs=["date"], rerank=rerank)] for s in stores)
        assert a == b
    seqs = {f"e#{i}": stores[0]._entries[f"e#{i}"].seq for i in range(30)}
    first = sorted(seqs, key=lambda i: int(tie_keys([seqs[i]])[0]))[:5]  # the tie key's first five of the thirty
    assert [h.id for h in stores[0].search_vector(v, 5, rerank=False)] == first


def test_equal_memories_score_equal_wherever_they_stand_among_the_candidates():
    """Memories with one vector have one score, so the write-order tie key alone orders them, however many
    candidates a search re-scores: a matrix product's float64 sums depend on a row's place in the block (the BLAS
    kernel sums the last rows of a block otherwise), which gave equal vectors scores a last bit apart and ranked
    them by their place among the candidates: by how deep the search asked, how many used memories a reuse search
    added (evaluate.py's rankings of a reuse model moved when its replay stopped updating the index), the order an
    index holds them in."""
    dim = 66  # a reuse model's width in tests/test_live_reuse.py: long enough sums to round
    rng = np.random.default_rng(0)
    v, q = rng.standard_normal(dim).astype(np.float32), rng.standard_normal(dim).astype(np.float32)
    other = rng.standard_normal((100, dim)).astype(np.float32)
    store = MemoryStore(None, StoreConfig(provenance=False, rerank_depth=1), dim)
    store.add(records(130), np.concatenate([other[:50], np.tile(v, (30, 1)), other[50:]]))
    same = [f"e#{i}" for i in range(50, 80)]
    by_key = sorted(same, key=lambda i: int(tie_keys([store._entries[i].seq])[0]))
    for k in range(1, 131):
        hits = [h for h in store.search_vector(q, k, rerank=False) if h.id in same]
        assert len({h.score for h in hits}) <= 1
        assert [h.id for h in hits] == by_key[:len(hits)]


def test_the_cut_counts_past_the_memories_a_search_leaves_out():
    """Memories a search leaves out (``exclude``, or the query's episode at or after its step) still come back from
    the index, asked past; the tie check at the cut looked at the n-th place counting them, so where they stood
    above it the memories tied with the n-th of the others were not all fetched, and the index's order of ties, not
    the tie key, chose among them. Three left out at 10, two at 8, twenty tied at 5: k = 5 is the two and the tie
    key's first three of the twenty."""
    scores = [10.0] * 3 + [8.0] * 2 + [5.0] * 20 + [1.0] * 10
    x = np.zeros((len(scores), DIM), np.float32)
    x[:, 0] = scores
    q = np.zeros(DIM, np.float32)
    q[0] = 1.0
    store = MemoryStore(None, StoreConfig(provenance=False, rerank_depth=1), DIM)
    store.add(records(len(scores)), x)
    tied = [f"e#{i}" for i in range(5, 25)]
    first = sorted(tied, key=lambda i: int(tie_keys([store._entries[i].seq])[0]))[:3]
    for place in ({"exclude": ["e#0", "e#1", "e#2"]}, {"exclude": ["e#0", "e#1", "e#2"], "before": ("e", 30)}):
        assert [h.id for h in store.search_vector(q, 5, rerank=False, **place)] == ["e#3", "e#4", *first]


def test_a_shallow_search_is_a_prefix_of_a_deep_one_with_one_rerank_depth():
    rng = np.random.default_rng(1)
    cfg = StoreConfig(slot_match=0.3, provenance=True, rerank_depth=10)
    store = MemoryStore(None, cfg, DIM)
    recs = records(60, sets=lambda i: ("date",) if i % 7 == 0 else ())
    store.add(recs, rng.standard_normal((60, DIM)).astype(np.float32))
    for _ in range(20):
        q = rng.standard_normal(DIM).astype(np.float32)
        deep = [h.id for h in store.search_vector(q, 40, needs=["date"])]
        for k in (1, 5, 10, 11, 25):
            assert [h.id for h in store.search_vector(q, k, needs=["date"])] == deep[:k]
        # beyond the re-rank depth the index order holds
        plain = [h.id for h in store.search_vector(q, 40, rerank=False)]
        assert deep[10:] == [i for i in plain if i not in set(deep[:10])][: 30]


def test_filters_run_inside_the_search_and_delete_forgets():
    rng = np.random.default_rng(2)
    store = MemoryStore(None, StoreConfig(provenance=False), DIM)
    store.add(records(50, "big"), rng.standard_normal((50, DIM)).astype(np.float32), user_id="bo")
    store.add(records(2, "small"), rng.standard_normal((2, DIM)).astype(np.float32), user_id="ana", agent_id="x")
    q = rng.standard_normal(DIM).astype(np.float32)
    assert {h.id for h in store.search_vector(q, 5, user_id="ana")} == {"small#0", "small#1"}  # not starved
    assert {h.id for h in store.search_vector(q, 5, episode_id="small")} == {"small#0", "small#1"}
    assert store.search_vector(q, 5, user_id="ana", agent_id="y") == []
    assert all(h.user_id == "bo" for h in store.search_vector(q, 60, user_id="bo"))
    store.delete(["small#0"])
    assert [h.id for h in store.search_vector(q, 5, user_id="ana")] == ["small#1"]
    with pytest.raises(KeyError, match="small#0"):
        store.delete(["small#0"])
    with pytest.raises(ValueError, match="already in the store"):
        store.add(records(1, "big"), rng.standard_normal((1, DIM)).astype(np.float32))
    store.reset()
    assert len(store) == 0 and store.search_vector(q, 3) == []


def test_a_scope_that_is_not_a_string_is_refused_on_every_entry_point(tmp_path):
    """Found by review: ``user_id=True`` and ``user_id=1`` were one FAISS scope (equal dict keys: a search as user 1
    returned user True's memories) but two Qdrant payloads, and the store saved a store.json its load refused."""
    store = MemoryStore(None, StoreConfig(provenance=False), DIM)
    x = np.eye(DIM, dtype=np.float32)
    store.add(records(2, "a"), x[:2], user_id="1")
    for bad in (True, 1, 1.0, ["1"]):
        with pytest.raises(ValueError, match=r"^user_id must be a string \(or None\), got "):
            store.add(records(1, "b"), x[2:3], user_id=bad)
        with pytest.raises(ValueError, match=r"^user_id must be a string"):
            store.search_vector(x[0], 5, user_id=bad)
        with pytest.raises(ValueError, match=r"^user_id must be a string"):
            store.get_all(user_id=bad)
    with pytest.raises(ValueError, match=r"^run_id must be a string"):
        store.add(records(1, "b"), x[2:3], agent_id="x", run_id=7)
    assert store.ids() == ["a#0", "a#1"]  # the refused adds changed nothing
    assert [h.id for h in MemoryStore.load(store.save(tmp_path / "s")).search_vector(x[0], 5, user_id="1")] == \
        ["a#0", "a#1"]


def test_provenance_links_are_not_followed_out_of_scope_or_to_deleted_memories():
    store = MemoryStore(None, StoreConfig(provenance=True), DIM)
    src = MemoryRecord("e#0", "e", 0, "system", "p", "[system] How about Linn Terri?", "[system] How about Linn Terri?")
    acc = MemoryRecord("e#1", "e", 1, "user", "p", "[user] that one works", "[user] that one works",
                       adopted=("linn terri",))
    store.add([src, acc], np.stack([unit([1, 0, 0, 0, 0, 0, 0, 0]), unit([0, 1, 0, 0, 0, 0, 0, 0])]))
    assert store.links() == {"e#1": ("e#0",)}
    q = unit([0, 1, 0, 0, 0, 0, 0, 0])
    hits = store.search_vector(q, 2)
    assert [h.id for h in hits] == ["e#1", "e#0"] and hits[1].linked_from == "e#1"
    store.delete(["e#0"])
    assert [h.id for h in store.search_vector(q, 2)] == ["e#1"]


def test_a_linked_source_below_the_rerank_depth_gets_its_own_score_and_bonus():
    """Lives hold more candidates than the re-rank depth: the source an accepted offer links to may rank below
    the depth in the index; it is placed after its hit with its own index score and slot bonus."""
    store = MemoryStore(None, StoreConfig(provenance=True, slot_match=0.5, rerank_depth=2), DIM)
    src = MemoryRecord("e#0", "e", 0, "system", "p", "[system] How about Linn Terri?", "[system] How about Linn Terri?",
                       sets=("name",))
    acc = MemoryRecord("e#1", "e", 1, "user", "p", "[user] that one works", "[user] that one works",
                       adopted=("linn terri",))
    filler = [MemoryRecord(f"e#{i}", "e", i, "user", "p", f"[user] filler {i}") for i in range(2, 6)]
    vecs = [unit([0.1, 0, 0, 0, 0, 0, 0, 1]), unit([0, 1, 0, 0, 0, 0, 0, 0])]
    vecs += [unit([0, 1, 0.2 * i, 0, 0, 0, 0, 0]) for i in range(1, 5)]
    store.add([src, acc, *filler], np.stack(vecs))
    q = unit([0, 1, 0, 0, 0, 0, 0, 0])
    hits = store.search_vector(q, 6, needs=["name"])
    assert [h.id for h in hits][:2] == ["e#1", "e#0"] and hits[1].linked_from == "e#1"
    assert hits[1].index_score == pytest.approx(float(vecs[0] @ q)) and hits[1].rerank_bonus == pytest.approx(0.5)
    assert hits[1].score == pytest.approx(hits[1].index_score + 0.5)


def test_save_load_round_trip_and_damage_is_named(tmp_path):
    rng = np.random.default_rng(3)
    store = MemoryStore(None, StoreConfig(slot_match=0.2), DIM)
    store.add(records(9, sets=lambda i: ("a",) if i < 3 else ()), rng.standard_normal((9, DIM)).astype(np.float32),
              run_id="r1")
    q = rng.standard_normal(DIM).astype(np.float32)
    path = store.save(tmp_path / "store")
    back = MemoryStore.load(path)
    assert back.search_vector(q, 9, ["a"]) == store.search_vector(q, 9, ["a"])
    assert back.config == store.config and back.next_step("e") == 9
    (path / "store.json").write_text(json.dumps({**json.loads((path / "store.json").read_text()), "entries": []}))
    with pytest.raises(SAMFileError, match=r"store.json: not the file this store saved \(SHA-256 "):
        MemoryStore.load(path)
    (path / DIGEST_FILE).unlink()  # edited on purpose (or saved before the digest): its fields are checked still
    with pytest.raises(SAMFileError, match=r"store.json: memory store data is damaged or does not match"):
        MemoryStore.load(path)
    (path / "store.json").write_text("{")
    with pytest.raises(SAMFileError, match=r"store.json: unreadable memory store"):
        MemoryStore.load(path)
    with pytest.raises(SAMFileError, match="memory store not found"):
        MemoryStore.load(tmp_path / "nowhere")


def test_a_snapshot_is_of_its_moment_and_writes_the_state_dict(tmp_path):
    """A snapshot is copied under the lock and written later without it (a served tenant's checkpoint): what
    changes in between (an add, a revised text, a delete) is not in the files, which hold the state of the moment."""
    rng = np.random.default_rng(5)
    store = MemoryStore(None, StoreConfig(slot_match=0.2), DIM)
    store.add(records(5, sets=lambda i: ("a",) if i < 2 else ()), rng.standard_normal((5, DIM)).astype(np.float32),
              user_id="ana", metadata={"src": "t", "tags": ["x"]})
    want, q = store.state_dict(), rng.standard_normal(DIM).astype(np.float32)
    hits = store.search_vector(q, 5, ["a"])
    snap = store.snapshot()
    store.add(records(2, "later"), rng.standard_normal((2, DIM)).astype(np.float32))
    store.revise("e#0", text="revised", sets=["b"])
    store.delete(["e#4"])
    folder = tmp_path / "snap"
    folder.mkdir()
    store.write_snapshot(folder, snap)
    assert json.loads((folder / "store.json").read_text()) == json.loads(json.dumps(want))
    back = MemoryStore.load(folder)
    assert back.search_vector(q, 5, ["a"]) == hits and len(back) == 5


def test_the_episode_has_one_owner_and_the_old_layout_still_loads(tmp_path):
    """The index owns each memory's episode (it filters the search there); store.json no longer repeats it. A
    store saved when store.json kept it too loads, and one whose two copies disagree is a one-line error."""
    rng = np.random.default_rng(4)
    store = MemoryStore(None, StoreConfig(), DIM)
    store.add(records(4, "a") + records(3, "b"), rng.standard_normal((7, DIM)).astype(np.float32))
    path = store.save(tmp_path / "store")
    saved = json.loads((path / "store.json").read_text())
    assert all("episode_id" not in e for e in saved["entries"])
    old = {**saved, "entries": [{**e, "episode_id": e["id"].split("#")[0]} for e in saved["entries"]]}
    (path / "store.json").write_text(json.dumps(old))
    (path / DIGEST_FILE).unlink()  # saved before store.json.sha256 too
    back = MemoryStore.load(path)
    assert [h.episode_id for h in back.get_all()] == ["a"] * 4 + ["b"] * 3
    assert {h.id for h in back.get_all(episode_id="b")} == {"b#0", "b#1", "b#2"}
    q = rng.standard_normal(DIM).astype(np.float32)
    assert {h.episode_id for h in back.search_vector(q, 5, episode_id="a")} == {"a"}
    old["entries"][0]["episode_id"] = "b"
    (path / "store.json").write_text(json.dumps(old))
    with pytest.raises(SAMFileError, match=r"store.json: .*memory 'a#0' is of episode 'b' but the index says 'a'"):
        MemoryStore.load(path)


@pytest.mark.parametrize("bad, message", [
    ({"slot_match": -1}, r"field 'store.slot_match' must be a finite number >= 0"),
    ({"rerank_depth": 0}, r"field 'store.rerank_depth' must be an integer >= 1"),
    ({"provenance": "yes"}, r"field 'store.provenance' must be true or false"),
    ({"slotmatch": 1}, r"'store' has unknown field\(s\) \['slotmatch'\]"),
])
def test_store_config_fields_are_checked(bad, message):
    with pytest.raises(ValueError, match=message):
        StoreConfig.from_dict(bad, "store")


def _tiny_net(tiny_bert_dir) -> SAMNet:
    return SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32,
                            kinds=["user", "system"]))


@pytest.mark.faiss_only
def test_older_exports_and_saved_retrievers_search_as_before(tmp_path, tiny_bert_dir):
    """An export that kept the search settings in ``sam`` (SAMConfig) and a retriever saved with ``index/`` +
    rerank.json load into the store's config and rank as they did."""
    r = SAMRetriever(_tiny_net(tiny_bert_dir), StoreConfig(slot_match=0.25, provenance=True, source_kinds=["user"]))
    recs = records(5, sets=lambda i: ("date",) if i == 3 else ())
    r.add_memories(recs)
    state = {"phase": "plan", "uncertainty_flags": ["date"]}
    want = [h.id for h in r.search(state, "ok", k=5, episode_id="e")]
    saved = r.save(tmp_path / "new")
    # rewrite it as the previous version wrote it: settings in "sam", the index in index/ with rerank.json
    old = tmp_path / "old"
    old.mkdir()
    for name in ("model.safetensors", "vocab.json"):
        (old / name).write_bytes((saved / name).read_bytes())
    import shutil

    shutil.copytree(saved / "tokenizer", old / "tokenizer")
    config = json.loads((saved / "config.json").read_text())
    store = config.pop("store")
    config["sam"].update(slot_match=store["slot_match"], provenance=store["provenance"],
                         source_kinds=store["source_kinds"])
    (old / "config.json").write_text(json.dumps(config))
    r.store.index.save(old / "index")
    (old / "index" / "rerank.json").write_text(json.dumps({
        "linker": r.store.linker.state_dict(), "links": [], "sets": [["e#3", ["date"]]]}))
    back = SAMRetriever.load(old)
    assert back.store.config.slot_match == 0.25 and back.store.config.source_kinds == ["user"]
    assert [h.id for h in back.search(state, "ok", k=5, episode_id="e")] == want
    # an export from before provenance links (no source_kinds) searches without them
    config["sam"].pop("source_kinds")
    (old / "config.json").write_text(json.dumps(config))
    assert SAMRetriever.load(old).store.provenance is False


def test_a_memory_left_out_is_no_candidate_and_the_rest_rank_as_before():
    """``exclude`` (a search by call leaves its decision point's own event out, as evaluate.py does) was an id filter
    of every other memory of the scope, a set of the scope built per search and, on a Qdrant server, the list of them
    sent; now the index is asked for as many more and the left-out memories dropped: the same hits."""
    rng = np.random.default_rng(3)
    store = MemoryStore(None, StoreConfig(provenance=False), DIM)
    x = rng.standard_normal((30, DIM)).astype(np.float32)
    store.add(records(30), x, user_id="ana")
    store.add(records(5, ep="f"), rng.standard_normal((5, DIM)).astype(np.float32), user_id="bo")
    q = rng.standard_normal(DIM).astype(np.float32)
    for scope in ({}, {"user_id": "ana"}):
        full = [h.id for h in store.search_vector(q, 10, **scope)]
        out = full[:3]
        got = [h.id for h in store.search_vector(q, 10, **scope, exclude=out)]
        want = [h.id for h in store.search_vector(q, 13, **scope)][3:]
        assert got == want and not set(got) & set(out)
    assert store.search_vector(q, 5, user_id="bo", exclude=[f"f#{i}" for i in range(5)]) == []
