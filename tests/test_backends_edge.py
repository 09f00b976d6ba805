"""The embedded Qdrant Edge backend (sam_model.backends.qdrant_edge) under the one store: it ranks as FAISS does
through every scope and filter, builds its HNSW graph when asked, saves a copy of its shard that a load opens
without writing the saved folder, and names bad configs and damaged saves (it keeps tenants apart inside its own
search, and the checks it shares with the client's engine: tests/test_point_engines.py). The whole store suite
also runs over it: tests/conftest.py's store_backend."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed (pip install -e '.[qdrant-edge]')")

from test_point_engines import assert_ranks_as_faiss, records  # noqa: E402

from sam_model.backends import index_from_config  # noqa: E402
from sam_model.backends.qdrant_edge import QdrantEdgeIndex  # noqa: E402
from sam_model.io import SAMFileError  # noqa: E402
from sam_model.store import MemoryStore  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

DIM = 16


@pytest.mark.parametrize("index", [{"kind": "qdrant-edge", "exact": True}, {"kind": "qdrant-edge", "hnsw_ef": 64}])
def test_edge_ranks_as_faiss_through_every_scope_and_filter(index, tmp_path):
    """No exact ties here: a tie cut in two by the top-k is an engine's choice (the store suite's tie tests keep
    both of a tied pair inside the cut, and run over this engine too)."""
    store = assert_ranks_as_faiss({**index, "path": str(tmp_path)}, tie=False, repeats=3)
    assert isinstance(store.index, QdrantEdgeIndex)


def test_hnsw_is_built_on_compact_and_the_live_shard_goes_with_the_index(tmp_path):
    """(Its scopes as payload filters inside the search: tests/test_point_engines.py, on both engines.)"""
    index = QdrantEdgeIndex(DIM, path=str(tmp_path), optimize="manual")
    index.add([f"b#{i}" for i in range(301)], np.random.default_rng(2).standard_normal((301, DIM)).astype(np.float32),
              "b", scopes={"user_id": "bo"})
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
