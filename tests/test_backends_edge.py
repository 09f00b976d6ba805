"""The embedded Qdrant Edge backend (sam_model.backends.qdrant_edge) under the one store: it ranks as FAISS does
through every scope and filter, keeps tenants apart inside its own search, builds its HNSW graph when asked, saves
a copy of its shard that a load opens without writing the saved folder, and names bad configs and damaged saves.
(The whole store suite also runs over it: tests/conftest.py's store_backend.)"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed (pip install -e '.[qdrant-edge]')")

from sam_model.backends import index_from_config  # noqa: E402
from sam_model.backends.qdrant_edge import QdrantEdgeIndex  # noqa: E402
from sam_model.data.examples import MemoryRecord  # noqa: E402
from sam_model.io import SAMFileError  # noqa: E402
from sam_model.store import MemoryStore, StoreConfig  # noqa: E402

DIM = 16


def records(n: int, ep: str, start: int = 0) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep}", sets=("date",) * (i % 5 == 0))
            for i in range(start, start + n)]


def fill(store: MemoryStore, rng: np.random.Generator, tie: bool = True) -> None:
    """Three users, two agents, a run; an exact tie; then deletes and an update."""
    for u, n in (("ana", 40), ("bo", 25), ("cy", 3)):
        x = rng.standard_normal((n, DIM)).astype(np.float32)
        if tie:  # which of two tied vectors the engine keeps at the candidate cut is its own (varying) choice
            x[1] = x[0]
        store.add(records(n, u), x, user_id=u, agent_id="a1" if u != "cy" else "a2", run_id="r" if u == "bo" else None)
    store.delete(["ana#3", "bo#7"])
    store.update(records(1, "ana", 5)[0], rng.standard_normal(DIM).astype(np.float32))


@pytest.mark.parametrize("index", [{"kind": "qdrant-edge", "exact": True}, {"kind": "qdrant-edge", "hnsw_ef": 64}])
def test_edge_ranks_as_faiss_through_every_scope_and_filter(index, tmp_path):
    """No exact ties here: a tie cut in two by the top-k is an engine's choice (the store suite's tie tests keep
    both of a tied pair inside the cut, and run over this engine too)."""
    cfg = dict(slot_match=0.3, provenance=True, rerank_depth=8)
    faiss_store = MemoryStore(None, StoreConfig(**cfg), DIM)
    edge_store = MemoryStore(None, StoreConfig(**cfg, index={**index, "path": str(tmp_path)}), DIM)
    assert isinstance(edge_store.index, QdrantEdgeIndex)
    fill(faiss_store, np.random.default_rng(0), tie=False)
    fill(edge_store, np.random.default_rng(0), tie=False)
    rng = np.random.default_rng(1)
    asks = [{}, {"user_id": "ana"}, {"user_id": "cy"}, {"agent_id": "a1"}, {"user_id": "bo", "run_id": "r"},
            {"episode_id": "bo"}, {"user_id": "ana", "ids": ["ana#0", "ana#1", "ana#9", "bo#2"]}]
    for ask in asks:
        for _ in range(3):
            q = rng.standard_normal(DIM).astype(np.float32)
            want = faiss_store.search_vector(q, 12, ["date"], **ask)
            got = edge_store.search_vector(q, 12, ["date"], **ask)
            assert [h.id for h in got] == [h.id for h in want], ask
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-9)
    assert edge_store.search_vector(q, 5, user_id="ana", agent_id="a2") == []


def test_scopes_are_payload_filters_inside_the_search_and_hnsw_is_built_on_compact(tmp_path):
    index = QdrantEdgeIndex(DIM, path=str(tmp_path), optimize="manual")
    rng = np.random.default_rng(2)
    big = rng.standard_normal((300, DIM)).astype(np.float32)
    index.add([f"b#{i}" for i in range(300)], big, "b", scopes={"user_id": "bo"})
    index.add(["a#0"], -big[:1], "a", scopes={"user_id": "ana"})  # the worst match of every query near big[0]
    ids, scores = index.search(big[:1], 5, scopes={"user_id": "ana"})
    assert ids == [["a#0", None, None, None, None]] and np.isneginf(scores[0, 1:]).all()
    assert index.search(big[:1], 5, scopes={"user_id": "nobody"})[0] == [[None] * 5]
    assert index.search(big[:2], 1, episode_id=["b", "a"])[0] == [["b#0"], ["a#0"]]  # one episode per query
    index.compact()  # Qdrant's optimisers, in this thread (nothing to index at this size, and no error)
    assert index.info()["points"] == 301
    folder = index.folder
    index.close()  # the live shard is private scratch: gone with the index
    assert not (tmp_path / folder).exists()


def test_a_save_is_a_copy_that_a_load_opens_without_writing_it(tmp_path):
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant-edge", "path": str(tmp_path / "live")}),
                        DIM)
    rng = np.random.default_rng(3)
    store.add(records(6, "e"), rng.standard_normal((6, DIM)).astype(np.float32), user_id="ana")
    saved = store.save(tmp_path / "store")
    files = {p: p.read_bytes() for p in saved.rglob("*") if p.is_file()}
    assert sum(p.stat().st_blocks for p in files) * 512 < 8 << 20  # Qdrant's sparse preallocations stay sparse
    store.add(records(4, "e", 6), rng.standard_normal((4, DIM)).astype(np.float32), user_id="ana")  # after the save
    q = rng.standard_normal(DIM).astype(np.float32)
    back = MemoryStore.load(saved)
    assert len(back) == 6 and back.index.info()["points"] == 6
    assert {h.id for h in back.search_vector(q, 10, user_id="ana")} == {f"e#{i}" for i in range(6)}
    back.add(records(1, "e", 6), rng.standard_normal((1, DIM)).astype(np.float32), user_id="ana")  # ids reusable
    back.delete(["e#0"])
    assert {p: p.read_bytes() for p in saved.rglob("*") if p.is_file()} == files  # the save is never written
    again = MemoryStore.load(saved)
    assert [h.id for h in again.search_vector(q, 3)] == [h.id for h in MemoryStore.load(saved).search_vector(q, 3)]
    for seg in (saved / "index" / "shard" / "segments").iterdir():
        for f in seg.rglob("*"):
            if f.is_file():
                f.unlink()
    with pytest.raises(SAMFileError, match="(cannot open the saved shard|holds 0 points but)"):
        MemoryStore.load(saved)


def test_a_missing_shard_is_named(tmp_path):
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant-edge", "path": str(tmp_path)}), DIM)
    store.add(records(2, "e"), np.ones((2, DIM), np.float32))
    saved = store.save(tmp_path / "s")
    shutil.rmtree(saved / "index" / "shard")
    with pytest.raises(SAMFileError, match="the Qdrant Edge shard is missing; save the store again"):
        MemoryStore.load(saved)


def test_index_from_config_builds_the_edge_engine(tmp_path):
    index = index_from_config(DIM, {"kind": "qdrant-edge", "path": str(tmp_path), "m": 8, "ef_construct": 32})
    assert isinstance(index, QdrantEdgeIndex) and index.config()["m"] == 8 and "m=8" in index.backend


@pytest.mark.parametrize("bad, message", [
    ({"kind": "qdrant-edge", "url": "http://x"}, r"field 'store.index' has unknown key\(s\) \['url'\]"),
    ({"kind": "qdrant-edge", "m": 1}, r"field 'store.index.m' must be an integer from 2"),
    ({"kind": "qdrant-edge", "hnsw_ef": 0}, r"field 'store.index.hnsw_ef' must be an integer from 1"),
    ({"kind": "qdrant-edge", "exact": "yes"}, r"field 'store.index.exact' must be true or false"),
    ({"kind": "qdrant-edge", "optimize": "never"}, r"field 'store.index.optimize' must be one of \('auto', 'manual'\)"),
])
def test_edge_configs_are_checked(bad, message):
    with pytest.raises(ValueError, match=message):
        StoreConfig.from_dict({"index": bad}, "store")


def test_the_backends_bench_measures_edge_at_each_hnsw_ef(tmp_path):
    from sam_model.bench.backends import main

    out = tmp_path / "b.json"
    assert main(["--n", "3000", "--dim", "16", "--clusters", "20", "--users", "10", "--queries", "5", "--no-qdrant",
                 "--edge-ef", "default,32,exact", "--query-centres", "data", "--json", str(out),
                 "--log", str(tmp_path / "b.log")]) == 0
    got = json.loads(out.read_text())
    assert got["qdrant_edge_info"]["points"] == 3000 and got["qdrant_edge_build_s"] >= got["qdrant_edge_upsert_s"]
    assert {"qdrant_edge_efdefault", "qdrant_edge_ef32", "qdrant_edge_exact", "qdrant_edge_scoped"} <= got.keys()
    assert got["qdrant_edge_exact"]["recall_at_k"] == 1.0 and got["query_centres"] == "data"
    assert got["qdrant_edge_scoped"]["recall_at_k"] == 1.0  # a 300-point user: Qdrant scans it exactly
    assert "qdrant-edge: indexed in" in (tmp_path / "b.log").read_text()
