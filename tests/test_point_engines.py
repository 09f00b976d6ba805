"""What both Qdrant engines (the client's collection and the embedded Edge shard) check alike: their configs'
keys and strings, a search's arguments and its padded rows, and a saved meta.json's fields; one code serves
both (sam_model.backends.points), so each case runs on each engine."""

from __future__ import annotations

import importlib
import json
import re

import numpy as np
import pytest

from sam_model.io import SAMFileError

DIM = 16
ENGINES = {"qdrant": ("qdrant_client", "sam_model.backends.qdrant", "QdrantIndex"),
           "qdrant-edge": ("qdrant_edge", "sam_model.backends.qdrant_edge", "QdrantEdgeIndex")}


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
