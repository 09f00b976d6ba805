"""What both Qdrant engines (the client's collection and the embedded Edge shard) do alike: their configs' keys
and strings, a search's arguments and its padded rows, and a saved meta.json's fields are checked by one code
(sam_model.backends.points), so each case runs on each engine; both filter scopes inside their own search; and a
store over either ranks as FAISS's does (assert_ranks_as_faiss, run by tests/test_backends.py and
test_backends_edge.py with each engine's settings)."""

from __future__ import annotations

import importlib
import json
import re

import numpy as np
import pytest

from sam_model.data.examples import MemoryRecord
from sam_model.io import SAMFileError
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

DIM = 16
ENGINES = {"qdrant": ("qdrant_client", "sam_model.backends.qdrant", "QdrantIndex"),
           "qdrant-edge": ("qdrant_edge", "sam_model.backends.qdrant_edge", "QdrantEdgeIndex")}


ASKS = [{}, {"user_id": "ana"}, {"user_id": "cy"}, {"agent_id": "a1"}, {"user_id": "bo", "run_id": "r"},
        {"episode_id": "bo"}, {"user_id": "ana", "ids": ["ana#0", "ana#1", "ana#9", "bo#2"]},
        {"user_id": "ana", "agent_id": "a2"}]  # the scopes and filters a parity run searches through


def records(n: int, ep: str, start: int = 0) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep}", sets=("date",) * (i % 5 == 0))
            for i in range(start, start + n)]


def fill(store: MemoryStore, rng: np.random.Generator, tie: bool = True) -> None:
    """Three users, two agents, a run; with ``tie`` an exact tie (the seeded tie order decides); then deletes and
    an update."""
    for u, n in (("ana", 40), ("bo", 25), ("cy", 3)):
        x = rng.standard_normal((n, DIM)).astype(np.float32)
        if tie:
            x[1] = x[0]
        store.add(records(n, u), x, user_id=u, agent_id="a1" if u != "cy" else "a2", run_id="r" if u == "bo" else None,
                  metadata={"u": u})
    store.delete(["ana#3", "bo#7"])
    store.update(records(1, "ana", 5)[0], rng.standard_normal(DIM).astype(np.float32))


def assert_ranks_as_faiss(index: dict, tie: bool, repeats: int) -> MemoryStore:
    """A store over the engine of ``index`` and one over FAISS, filled alike, give the same ids in the same order
    (scores within 1e-9) to ``repeats`` random queries through each of ASKS, and nothing in a scope with no
    memory. Returns the engine's store."""
    cfg = dict(slot_match=0.3, provenance=True, rerank_depth=8)
    faiss_store = MemoryStore(None, StoreConfig(**cfg), DIM)
    store = MemoryStore(None, StoreConfig(**cfg, index=index), DIM)
    fill(faiss_store, np.random.default_rng(0), tie)
    fill(store, np.random.default_rng(0), tie)
    rng = np.random.default_rng(1)
    for ask in ASKS:
        for _ in range(repeats):
            q = rng.standard_normal(DIM).astype(np.float32)
            want = faiss_store.search_vector(q, 12, ["date"], **ask)
            got = store.search_vector(q, 12, ["date"], **ask)
            assert [h.id for h in got] == [h.id for h in want], ask
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-9)
    assert store.search_vector(q, 5, user_id="ana", agent_id="a2") == []
    return store


@pytest.fixture(params=list(ENGINES))
def engine(request, tmp_path):
    """(kind, the index class, a new empty index of dim DIM)."""
    library, module, name = ENGINES[request.param]
    pytest.importorskip(library, reason=f"{library} is not installed")
    cls = getattr(importlib.import_module(module), name)
    extra = {"path": str(tmp_path / "live")} if request.param == "qdrant-edge" else {}
    index = cls(DIM, **extra)
    yield request.param, cls, index
    getattr(index, "close", lambda: None)()


def test_a_config_that_is_no_object_has_an_unknown_key_or_an_empty_path_is_named(engine):
    kind, cls, _ = engine
    for bad, message in [(["x"], f"field 'store.index' must be an object such as {{\"kind\": \"{kind}\"}}"),
                         ({"kind": kind, "colour": 1}, f"unknown key(s) ['colour']; allowed for kind '{kind}'"),
                         ({"kind": kind, "path": ""}, "field 'store.index.path' must be a non-empty string"),
                         ({"kind": kind, "exact": 1}, "field 'store.index.exact' must be true or false, got 1")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            cls.check_config(bad, "store.index")


def test_a_search_checks_its_arguments_and_pads_its_rows(engine):
    _, _, index = engine
    x = np.eye(DIM, dtype=np.float32)
    index.add(["a", "b"], x[:2], ["e1", "e2"])
    ids, scores = index.search(x[0], 3)  # one query as a vector: one row, padded past the two memories
    assert ids == [["a", "b", None]] and scores.shape == (1, 3) and scores[0, 2] == -np.inf
    ids, scores = index.search(x[:2], 2, episode_id=["e2", "e1"])  # an episode per query
    assert ids == [["b", None], ["a", None]] and scores[0, 0] == pytest.approx(0.0) and scores[1, 0] == 0.0
    ids, scores = index.search(x[:2], 2, within=[])  # nothing allowed: padded rows, no engine call
    assert ids == [[None, None], [None, None]] and np.all(scores == -np.inf) and scores.dtype == np.float32
    assert index.search(x[:1], 2, within=["b"])[0] == [["b", None]]
    with pytest.raises(ValueError, match="k"):
        index.search(x[0], 0)
    with pytest.raises(ValueError, match="queries"):
        index.search(np.ones(DIM + 1, np.float32), 2)
    with pytest.raises(ValueError, match="episode_id has 1 entries but there are 2 queries"):
        index.search(x[:2], 2, episode_id=["e1"])


def test_scopes_are_payload_filters_inside_the_engines_search_not_a_global_top_k(engine):
    _, _, index = engine
    big = np.random.default_rng(2).standard_normal((300, DIM)).astype(np.float32)
    index.add([f"b#{i}" for i in range(300)], big, "b", scopes={"user_id": "bo"})
    index.add(["a#0"], -big[:1], "a", scopes={"user_id": "ana"})  # the worst match of every query near big[0]
    ids, scores = index.search(big[:1], 5, scopes={"user_id": "ana"})
    assert ids == [["a#0", None, None, None, None]] and np.isneginf(scores[0, 1:]).all()
    assert index.search(big[:1], 5, scopes={"user_id": "nobody"})[0] == [[None] * 5]
    assert index.search(big[:2], 1, episode_id=["b", "a"])[0] == [["b#0"], ["a#0"]]  # one episode per query


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.pop("dim"), "index metadata lacks or mangles 'dim'; save the store again, or rebuild it"),
    (lambda m: m.update(episodes=m["episodes"][:1]), "ids and episodes differ in length"),
    (lambda m: m.update(config=[1]), "index metadata lacks or mangles"),
])
def test_a_saved_meta_json_that_lacks_or_mangles_a_field_is_named(engine, tmp_path, edit, message):
    _, cls, index = engine
    index.add(["a", "b"], np.eye(DIM, dtype=np.float32)[:2], "e")
    meta_path = index.save(tmp_path / "saved") / "meta.json"
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(SAMFileError, match=f"{meta_path}: {message}"):
        cls.load(meta_path.parent)


def test_a_save_of_another_dim_is_named(engine, tmp_path):
    _, cls, index = engine
    saved = index.save(tmp_path / "saved")
    with pytest.raises(SAMFileError, match=f"{saved / 'meta.json'}: index has dim {DIM} but the model expects dim 8"):
        cls.load(saved, expected_dim=8)
    assert len(cls.load(saved, expected_dim=DIM)) == 0


def test_a_qdrant_save_without_its_write_count_is_named(tmp_path):
    pytest.importorskip("qdrant_client", reason="qdrant-client is not installed")
    from sam_model.backends.qdrant import QdrantIndex

    saved = QdrantIndex(DIM).save(tmp_path / "saved")
    meta = json.loads((saved / "meta.json").read_text())
    del meta["next_wseq"]
    (saved / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(SAMFileError, match="index metadata lacks or mangles 'next_wseq'"):
        QdrantIndex.load(saved)
