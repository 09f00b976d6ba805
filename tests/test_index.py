"""MemoryIndex: exactness, recall, episode scope, removal, persistence and every error path."""

from __future__ import annotations

import json
import re

import faiss
import numpy as np
import pytest

import sam_model.index as index_mod
from sam_model.index import MemoryIndex
from sam_model.io import SAMFileError
from sam_model.storeconfig import StoreConfig

DIM = 24
KINDS = ("flat", "ivf", "hnsw")
SMALL = {"flat": {}, "ivf": {"nlist": 16, "nprobe": 8}, "hnsw": {"M": 16, "ef_search": 64}}


def clustered(n: int, seed: int = 0, clusters: int = 20, dim: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((clusters, dim))
    x = centers[rng.integers(0, clusters, n)] + 0.4 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def bank(kind: str, n: int = 1200, episodes: int = 6, seed: int = 0) -> tuple[MemoryIndex, np.ndarray, list, list]:
    """An index over n clustered vectors, ids "e<j>#<i>", episode e<j> = i % episodes.

    With nlist=16 the IVF trains after 624 vectors, so n=1200 exercises the trained path."""
    x = clustered(n, seed)
    ids = [f"e{i % episodes}#{i}" for i in range(n)]
    eps = [f"e{i % episodes}" for i in range(n)]
    ix = MemoryIndex(DIM, kind, **SMALL[kind])
    ix.add(ids, x, eps)
    return ix, x, ids, eps


def brute(q: np.ndarray, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    s = q @ x.T
    top = np.argsort(-s, axis=1, kind="stable")[:, :k]
    return top, np.take_along_axis(s, top, axis=1)


def recall(got: list[list], want: np.ndarray, ids: list) -> float:
    return float(np.mean([len(set(g) & {ids[j] for j in w}) / len(w) for g, w in zip(got, want)]))


# ---- search quality ---------------------------------------------------------------------


def test_flat_is_exact_brute_force():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, DIM)).astype(np.float32)  # unnormalised: inner product, not cosine
    q = rng.standard_normal((9, DIM)).astype(np.float32)
    ix = MemoryIndex(DIM, "flat")
    ix.add(list(range(100, 400)), x)
    got, scores = ix.search(q, 7)
    top, want = brute(q, x, 7)
    assert got == [[100 + j for j in row] for row in top.tolist()]
    np.testing.assert_allclose(scores, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_kinds_have_high_recall_on_clustered_data(kind):
    ix, x, ids, _ = bank(kind, n=3000)
    assert ix.trained
    q = clustered(100, seed=5)
    got, scores = ix.search(q, 10)
    top, _ = brute(q, x, 10)
    assert recall(got, top, ids) >= 0.9
    assert np.all(np.diff(scores, axis=1) <= 1e-6), "scores must come sorted best first"


def test_ivf_buffers_small_banks_and_searches_them_exactly():
    ix = MemoryIndex(DIM, "ivf", nlist=16)
    x = clustered(300)
    ix.add(range(300), x)
    assert not ix.trained and len(ix) == 300
    q = clustered(5, seed=3)
    got, _ = ix.search(q, 5)
    assert got == brute(q, x, 5)[0].tolist()
    ix.add(range(300, 700), clustered(400, seed=9))  # 700 >= 39 * 16: trains now
    assert ix.trained and ix.nlist == 16 and len(ix) == 700
    np.testing.assert_allclose(ix.get_vectors([0, 299]), x[[0, 299]], atol=1e-6)


def test_ivf_explicit_train_and_auto_nlist():
    ix = MemoryIndex(DIM, "ivf")
    ix.add(["a", "b"], clustered(2))
    ix.train(clustered(800, seed=2))  # nlist None -> 4*sqrt(800) ~ 113
    assert ix.trained and ix.nlist == index_mod.auto_nlist(800)
    assert ix.search(clustered(1), 2)[0][0] != [None, None]
    with pytest.raises(ValueError, match="already trained"):
        ix.train(clustered(800))


def test_k_larger_than_bank_pads_with_none_and_minus_inf():
    for kind in KINDS:
        ix = MemoryIndex(DIM, kind, **SMALL[kind])
        got, scores = ix.search(clustered(2), 3)  # empty bank
        assert got == [[None] * 3] * 2 and np.isneginf(scores).all()
        ix.add(["a", "b"], clustered(2))
        got, scores = ix.search(clustered(1, seed=4)[0], 5)  # 1-D query is one query
        assert sorted(got[0][:2]) == ["a", "b"] and got[0][2:] == [None] * 3
        assert np.isfinite(scores[0, :2]).all() and np.isneginf(scores[0, 2:]).all()


# ---- episode scope ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_episode_scope_returns_only_that_episode(kind):
    ix, x, ids, eps = bank(kind)
    q = clustered(8, seed=7)
    got, scores = ix.search(q, 10, episode_id="e2")
    assert all(g is not None and g.startswith("e2#") for row in got for g in row)
    members = [i for i, e in enumerate(eps) if e == "e2"]
    top, want = brute(q, x[members], 10)
    if kind == "flat":
        assert got == [[ids[members[j]] for j in row] for row in top.tolist()]
        np.testing.assert_allclose(scores, want, rtol=1e-5, atol=1e-5)
    else:
        assert recall(got, np.asarray(members)[top], ids) >= 0.8
    per_query = ["e1", None, "nope", "e4"] * 2  # one scope per query
    got, scores = ix.search(q, 5, episode_id=per_query)
    for row, ep in zip(got, per_query):
        if ep == "nope":
            assert row == [None] * 5
        elif ep is not None:
            assert all(g.startswith(ep + "#") for g in row)
    assert np.isneginf(scores[2]).all()


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_tiny_episode_in_a_large_approximate_bank_is_still_found(kind):
    """A 3-memory episode far from the query: the ANN walk misses it, the exact redo must not."""
    ix, x, ids, _ = bank(kind, n=2000)
    far = -clustered(3, seed=11)  # opposite side of the sphere from the queries
    ix.add(["tiny#0", "tiny#1", "tiny#2"], far, "tiny")
    q = clustered(4, seed=12)
    got, scores = ix.search(q, 10, episode_id="tiny")
    for row in got:
        assert sorted(row[:3]) == ["tiny#0", "tiny#1", "tiny#2"] and row[3:] == [None] * 7
    np.testing.assert_allclose(scores[:, :3], np.sort(q @ far.T, axis=1)[:, ::-1], atol=1e-5)


# ---- removal --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_small_scope_is_ranked_exactly_by_its_own_vectors(kind, monkeypatch):
    """A scope of at most SMALL_SCOPE memories (and an eighth of the index) is scored from its members' vectors
    instead of a selector scan of the whole index: the same top-k as brute force over the scope, ties in
    insertion order, on every kind; above the bound the selector scan answers, with the same results on flat."""
    ix, x, ids, _ = bank(kind, n=1200)
    x[7] = x[3]  # an exact tie inside the scope: the earlier memory first, as FAISS's flat scan keeps it
    ix.remove([ids[7]])
    ix.add([ids[7]], x[7:8], [f"e{7 % 6}"])
    q = clustered(5, seed=9)
    small = [ids[i] for i in range(0, 1200, 13)] + [ids[3]]  # 93 + 1 of 1,200: under an eighth
    calls = []
    real = index_mod.MemoryIndex._exact_among
    monkeypatch.setattr(index_mod.MemoryIndex, "_exact_among",
                        lambda self, *a: (calls.append(len(a[1])), real(self, *a))[1])
    got, scores = ix.search(q, 10, within=small)
    assert calls == [len(set(small))]
    rows = sorted({ids.index(i) for i in small})
    top, want = brute(q, x[rows], 10)
    assert got == [[ids[rows[j]] for j in r] for r in top]
    assert np.allclose(scores, want, atol=1e-6)
    assert index_mod.SMALL_SCOPE * 8 > len(ids)  # a scope over an eighth of this index takes the selector scan
    big = ids[:300]
    calls.clear()
    got_big, _ = ix.search(q, 10, within=big)
    assert calls == []
    if kind == "flat":
        top, _ = brute(q, x[:300], 10)
        assert got_big == [[ids[j] for j in r] for r in top]
    tied, _ = ix.search(x[3:4], 2, within=[ids[3], ids[7], ids[11]])
    assert tied[0] == [ids[3], ids[7]]


@pytest.mark.parametrize("kind", KINDS)
def test_remove(kind):
    ix, x, ids, _ = bank(kind)
    q = x[:5]  # each query's best match is itself
    assert [row[0] for row in ix.search(q, 1)[0]] == ids[:5]
    ix.remove(ids[:5])
    assert len(ix) == len(ids) - 5 and ids[0] not in ix and ids[0] not in ix.ids()
    got, _ = ix.search(q, 20)
    assert not set(ids[:5]) & {g for row in got for g in row}
    got, _ = ix.search(q, 20, episode_id="e0")
    assert ids[0] not in {g for row in got for g in row}
    ix.remove([ids[5]])  # a second removal after a search (HNSW caches its tombstone selector)
    assert ix.search(x[5:6], 1)[0][0][0] not in (ids[5], None)
    with pytest.raises(KeyError, match="e0#0"):
        ix.get_vectors([ids[0]])
    ix.add([ids[0]], -x[:1], "e0")  # an id can come back after removal, with a new vector
    np.testing.assert_allclose(ix.get_vectors([ids[0]]), -x[:1], atol=1e-6)
    with pytest.raises(KeyError, match="'ghost'"):
        ix.remove([ids[6], "ghost"])
    assert ids[6] in ix, "remove must be all-or-nothing"


def test_hnsw_tombstones_are_compacted():
    ix, x, ids, _ = bank("hnsw", n=3000)
    ix.remove(ids[:1000])
    assert len(ix._tombstones) == 1000 and ix._index.ntotal == 3000
    ix.remove(ids[1000:2100])  # tombstones now outnumber the 900 live memories
    assert not ix._tombstones and ix._index.ntotal == 900 == len(ix)
    got, _ = ix.search(x[2100:2110], 1)
    assert [row[0] for row in got] == ids[2100:2110]


# ---- persistence ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [200, 1200])  # untrained (buffered) and trained IVF
def test_save_load_round_trip(tmp_path, kind, n):
    ix, x, ids, _ = bank(kind, n=n)
    ix.remove(ids[:3])
    ix.add([7, 8], clustered(2, seed=8), ["e1", None])  # int ids and no-episode memories survive
    ix.save(tmp_path / "ix")
    back = MemoryIndex.load(tmp_path / "ix", expected_dim=DIM)
    assert (back.kind, back.trained, back.nlist, back.nprobe) == (ix.kind, ix.trained, ix.nlist, ix.nprobe)
    assert back.ids() == ix.ids() and back.episode_of(7) == "e1" and back.episode_of(8) is None
    q = clustered(6, seed=13)
    for ep in (None, "e1"):
        a, sa = ix.search(q, 8, episode_id=ep)
        b, sb = back.search(q, 8, episode_id=ep)
        assert a == b
        np.testing.assert_allclose(sa, sb)
    np.testing.assert_allclose(back.get_vectors(ids[3:6]), x[3:6], atol=1e-6)
    back.add(["new"], clustered(1, seed=14))  # internal ids continue, no collision
    assert "new" in back and len(back) == len(ix) + 1


def test_failed_save_leaves_the_previous_one_loadable(tmp_path, monkeypatch):
    ix, _, ids, _ = bank("flat", n=50)
    ix.save(tmp_path / "ix")
    ix.remove(ids[:10])

    def boom(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(faiss, "write_index", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        ix.save(tmp_path / "ix")
    monkeypatch.undo()
    monkeypatch.setattr(index_mod, "atomic_write_text", boom)  # index written, metadata fails
    with pytest.raises(RuntimeError, match="disk full"):
        ix.save(tmp_path / "ix")
    monkeypatch.undo()
    assert len(MemoryIndex.load(tmp_path / "ix")) == 50
    assert sorted(p.name for p in (tmp_path / "ix").iterdir() if p.suffix != ".json") == \
        [json.loads((tmp_path / "ix" / "meta.json").read_text())["index_file"]], "no leftovers"
    ix.save(tmp_path / "ix")
    assert len(MemoryIndex.load(tmp_path / "ix")) == 40
    assert len(list((tmp_path / "ix").glob("*.faiss"))) == 1


def _meta(folder):
    return json.loads((folder / "meta.json").read_text())


def _write_meta(folder, meta):
    (folder / "meta.json").write_text(json.dumps(meta))


def test_load_errors_name_the_file_and_say_rebuild(tmp_path):
    with pytest.raises(SAMFileError, match="meta.json is missing"):
        MemoryIndex.load(tmp_path / "nowhere")
    ix, _, _, _ = bank("hnsw", n=40)
    folder = ix.save(tmp_path / "ix")
    good = _meta(folder)

    with pytest.raises(SAMFileError, match="dim 24 but the model expects dim 32"):
        MemoryIndex.load(folder, expected_dim=32)
    _write_meta(folder, {**good, "version": 99})
    with pytest.raises(SAMFileError, match="version 99.*rebuild"):
        MemoryIndex.load(folder)
    _write_meta(folder, {**good, "ids": good["ids"][:-1], "internal": good["internal"][:-1],
                         "episodes": good["episodes"][:-1]})
    with pytest.raises(SAMFileError, match="holds 40 vectors but .* lists 39 memories"):
        MemoryIndex.load(folder)
    _write_meta(folder, {**good, "dim": 32})
    with pytest.raises(SAMFileError, match="FAISS index has dim 24"):
        MemoryIndex.load(folder)
    (folder / "meta.json").write_text("{not json")
    with pytest.raises(SAMFileError, match="unreadable MemoryIndex metadata"):
        MemoryIndex.load(folder)
    _write_meta(folder, {k: v for k, v in good.items() if k != "sha256"})  # a save before the digest: FAISS reads it
    index_file = folder / good["index_file"]
    index_file.write_bytes(b"garbage" * 20)
    with pytest.raises(SAMFileError, match=rf"{good['index_file']}: corrupt .*rebuild"):
        MemoryIndex.load(folder)
    index_file.unlink()
    with pytest.raises(SAMFileError, match="index file not found"):
        MemoryIndex.load(folder)
    with pytest.raises(SAMFileError, match="is a file"):
        ix.save(folder / "meta.json")


# ---- input errors ---------------------------------------------------------------------------


def test_bad_inputs_give_clear_errors():
    ix = MemoryIndex(DIM, "flat")
    ix.add(["a"], clustered(1))
    with pytest.raises(ValueError, match="duplicate memory id 'a'"):
        ix.add(["a"], clustered(1))
    with pytest.raises(ValueError, match="duplicate memory id 'b'"):
        ix.add(["b", "b"], clustered(2))
    assert len(ix) == 1, "a failed add must not add anything"
    with pytest.raises(ValueError, match="dim 16 but this index has dim 24"):
        ix.add(["c"], np.zeros((1, 16), np.float32))
    with pytest.raises(ValueError, match="dim 16 but this index has dim 24"):
        ix.search(np.zeros((1, 16), np.float32), 1)
    bad = clustered(3)
    bad[2, 5] = np.nan
    with pytest.raises(ValueError, match="NaN or inf .*row 2"):
        ix.add(["c", "d", "e"], bad)
    with pytest.raises(ValueError, match="NaN or inf"):
        ix.search(np.full((1, DIM), np.inf, np.float32), 1)
    with pytest.raises(TypeError, match="str or int"):
        ix.add([1.5], clustered(1))
    with pytest.raises(ValueError, match="2 ids but 1 vectors"):
        ix.add(["c", "d"], clustered(1))
    with pytest.raises(ValueError, match="2 ids but 1 episode_ids"):
        ix.add(["c", "d"], clustered(2), ["e"])
    with pytest.raises(KeyError, match="'zzz' is not in the index"):
        ix.remove(["zzz"])
    with pytest.raises(ValueError, match="k must be an integer from 1 to"):
        ix.search(clustered(1), 0)
    with pytest.raises(ValueError, match="2 entries but there are 1 queries"):
        ix.search(clustered(1), 1, episode_id=["x", "y"])
    with pytest.raises(ValueError, match=r"field 'index.kind' must be one of"):
        MemoryIndex(DIM, "lsh")
    with pytest.raises(ValueError, match=r"field 'index' has unknown key\(s\) \['n_probe'\]"):
        MemoryIndex.from_config(DIM, {"kind": "ivf", "n_probe": 3})
    with pytest.raises(ValueError, match=r"^field 'store.index.M' must be an integer from 1 to \d+, got -5$"):
        StoreConfig.from_dict({"index": {"kind": "hnsw", "M": -5}}, "store")
    assert MemoryIndex.from_config(DIM, {"kind": "hnsw", "M": 8}).M == 8


# ---- GPU replica, faked on CPU ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_gpu_replica_follows_adds_and_removes(monkeypatch, kind):
    """A stand-in for faiss-gpu (a CPU clone) checks the replica bookkeeping without a GPU."""
    clones = []

    def to_gpu(res, device, index):
        clones.append(device)
        return faiss.clone_index(index)

    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1, raising=False)
    monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
    monkeypatch.setattr(faiss, "index_cpu_to_gpu", to_gpu, raising=False)
    ix = MemoryIndex(DIM, kind, **SMALL[kind], device="cuda:1")
    assert ix.device == "cuda:1"
    x = clustered(1000)
    ix.add(range(1000), x)
    assert ix._gpu is not None and ix._gpu.ntotal == 1000
    ix.add([1000], -x[:1])  # incremental add to the replica
    assert ix._gpu.ntotal == 1001
    ix.remove([0, 1])  # removal re-clones lazily at the next unscoped search
    got, _ = ix.search(x[:2], 3)
    assert ix._gpu.ntotal == 999 and not {0, 1} & set(got[0] + got[1])
    assert clones and set(clones) == {1}
    assert MemoryIndex(DIM, "hnsw").device == "cpu"
    assert MemoryIndex(DIM, kind, device="cpu").device == "cpu"


# ---- benchmark CLI smoke test and the BLAS knob --------------------------------------------------


def test_tune_blas_threshold_is_per_thread(monkeypatch):
    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", faiss.cvar.distance_compute_blas_threshold)
    assert index_mod.tune_blas_threshold(3) == 2400 == faiss.cvar.distance_compute_blas_threshold


def test_search_bench_writes_json_and_markdown(tmp_path, monkeypatch):
    from sam_model.bench import search as bench

    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", faiss.cvar.distance_compute_blas_threshold)
    out = tmp_path / "bench"
    result = bench.main(["--sizes", "700", "--out", str(out), "--dim", "16", "--latent-dim", "8", "--clusters", "10",
                         "--queries", "70", "--b1-queries", "3", "--nlist", "8", "--sweep-ef", "8,16", "--threads", "1"])
    saved = json.loads((out / "search.json").read_text())
    assert saved == json.loads(json.dumps(result))
    rows = {r["kind"]: r for r in saved["results"]}
    assert set(rows) == set(KINDS) and all(r["size"] == 700 for r in rows.values())
    assert rows["flat"]["plain"]["recall@10"] == 1.0 == rows["flat"]["state"]["recall@10"]
    assert rows["ivf"]["trained"] and 0.0 < rows["hnsw"]["plain"]["recall@10"] <= 1.0
    assert [s["ef_search"] for s in saved["sweeps"]] == [8, 16]
    md = (out / "search.md").read_text()
    assert all(f"| {kind} | 700 |" in md for kind in KINDS) and "| ef_search=16 |" in md
    with pytest.raises(SystemExit):
        bench.main(["--sizes", "10", "--out", str(out), "--kinds", "flat,annoy"])


@pytest.mark.parametrize("edit, says", [
    (lambda m: m.update(ids=["a0", "a0", "a2", "a3"]), "distinct strings or integers"),
    (lambda m: m.update(ids=[["x"], "a1", "a2", "a3"]), "distinct strings or integers"),
    (lambda m: m.update(next_id=2), "below next_id"),
    (lambda m: m.update(next_id=10**12), "below next_id"),
    (lambda m: m.update(internal=[0, 0, 2, 3]), "distinct integers"),
    (lambda m: m.update(internal=["0", 1, 2, 3]), "distinct integers"),
    (lambda m: m.update(ids="abcd"), "must be lists"),
    (lambda m: m.update(episodes=[{}, None, None, None]), "episodes must be"),
    (lambda m: m.update(trained="yes"), "'trained' must be true or false"),
    (lambda m: m["config"].update(kind="hnsw"), "does not match kind 'hnsw'"),
])
def test_a_damaged_meta_json_is_one_line_not_a_traceback_or_a_silent_load(tmp_path, edit, says):
    """Found by an adversarial review: duplicate ids loaded (and a removed id stayed searchable), a huge next_id
    was a MemoryError, a list id a TypeError, a flat FAISS file loaded as 'hnsw'."""
    ix = MemoryIndex(8)
    ix.add([f"a{i}" for i in range(4)], np.eye(8, dtype=np.float32)[:4])
    folder = ix.save(tmp_path / "ix")
    meta = json.loads((folder / "meta.json").read_text())
    edit(meta)
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(SAMFileError, match=says):
        MemoryIndex.load(folder)


@pytest.mark.parametrize("kind", KINDS)
def test_a_faiss_file_damaged_inside_its_vectors_is_refused_not_loaded(tmp_path, kind):
    """Bytes flipped inside the vectors of index-<token>.faiss (a disk, a copy, a hand) kept FAISS's framing, so the
    index loaded with NaN or other vectors: its searches ranked by them, NaN scores that a served search could not
    answer in JSON. The save records the file's SHA-256 in meta.json; a file that differs is refused naming it."""
    ix, _, ids, _ = bank(kind, n=700)
    folder = ix.save(tmp_path / "ix")
    f = next(folder.glob("*.faiss"))
    data = bytearray(f.read_bytes())
    at = len(data) // 2
    data[at:at + 64] = bytes(b ^ 0xFF for b in data[at:at + 64])
    f.write_bytes(bytes(data))
    with pytest.raises(SAMFileError, match=rf"{f.name}: not the file this index saved \(SHA-256 "):
        MemoryIndex.load(folder)


def test_an_index_saved_before_it_kept_its_files_digest_still_loads(tmp_path):
    ix, _, ids, _ = bank("flat", n=50)
    folder = ix.save(tmp_path / "ix")
    meta = json.loads((folder / "meta.json").read_text())
    meta.pop("sha256", None)
    (folder / "meta.json").write_text(json.dumps(meta))
    assert MemoryIndex.load(folder).ids() == ix.ids()


@pytest.mark.parametrize("change, refused", [
    (str.upper, None),  # the same digest in capitals (PowerShell's Get-FileHash): the file is the one saved
    (lambda d: "z" + d[1:], "field 'sha256' must be "),  # no hex: meta.json's field is damaged, not the FAISS file
])
def test_an_index_digest_is_read_as_hex_digits_of_either_case(tmp_path, change, refused):
    """meta.json's sha256 was compared as text: the right digest in capitals was refused as 'not the file this index
    saved ... it is damaged', and a field of 64 characters that are no hex digits blamed the FAISS file, not
    meta.json."""
    ix, _, ids, _ = bank("flat", n=50)
    folder = ix.save(tmp_path / "ix")
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "sha256": change(meta["sha256"])}))
    if refused is None:
        assert MemoryIndex.load(folder).ids() == ix.ids()
    else:
        with pytest.raises(SAMFileError, match=r"meta\.json: " + re.escape(refused)):
            MemoryIndex.load(folder)
