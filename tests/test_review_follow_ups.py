"""Follow-ups of the reviews: a re-encode that is all or nothing, a served tenant that saves a migrated checkpoint at
once, benches that write their results atomically, and the paired table that uses the one paired difference."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from sam_model.data.examples import MemoryRecord
from sam_model.memory.encoders import HashingEncoder
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

try:  # a Qdrant server answered by qdrant-client's local mode (a fixture), a save of before version 2
    from test_backend_leftovers import old_save, server  # noqa: F401
except pytest.skip.Exception:  # no qdrant-client: the tests that use them skip themselves
    old_save = None

DIM = 16


def records(n: int, ep: str, start: int = 0) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep} about handler_{i}")
            for i in range(start, start + n)]


def three_users(index: dict | None = None) -> MemoryStore:
    """Two memories of each of three users: a re-encode writes one scope after another."""
    store = MemoryStore(HashingEncoder(DIM), StoreConfig(provenance=False, index=index or {}))
    for user in ("mia", "bob", "ann"):
        store.add(records(2, user), user_id=user)
    return store


def vectors(store: MemoryStore) -> dict:
    """Every memory's vector and episode, as the index holds them."""
    ids = store.ids()
    return {i: (store.index.episode_of(i), v.round(6).tolist()) for i, v in zip(ids, store.index.get_vectors(ids))}


class Down(ConnectionError):
    """The backend went away during a write (its answer lost, when it wrote first)."""


def failing_add(index, n: int, wrote: bool):
    """An ``add`` for ``index`` whose call number ``n`` raises Down, after writing when ``wrote``."""
    real, calls = index.add, []

    def add(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            if wrote:
                real(*args, **kwargs)
            raise Down("the backend went away")
        return real(*args, **kwargs)

    return add, calls


# ---- 1. a re-encode is all or nothing ------------------------------------------------------------------------


@pytest.mark.parametrize("wrote", [False, True], ids=["refused", "answer-lost"])
def test_a_reencode_the_index_refuses_midway_keeps_every_old_vector(store_backend, monkeypatch, wrote):
    """Found by review: a re-encode removed and re-added the vectors one scope at a time, so the index refusing the
    second scope left the first with the new model's vectors and the rest with the old one's (on a Qdrant server the
    collection stayed so after the failed load). The old vectors now come back in every scope written, and the
    re-encode retried goes through."""
    store = three_users()
    before = vectors(store)
    store.encoder = HashingEncoder(DIM, seed=1)  # another model
    add, calls = failing_add(store.index, 2, wrote)
    monkeypatch.setattr(store.index, "add", add)
    with pytest.raises(Down):
        store.reencode()
    assert len(calls) >= 2, "the fault was not reached"
    monkeypatch.undo()
    assert vectors(store) == before and len(store.index) == len(store) == 6
    assert store.reencode() == 6
    want = store.encoder.encode_memories([store.memory(i) for i in store.ids()])
    np.testing.assert_allclose(store.index.get_vectors(store.ids()), want, atol=1e-6)
    assert {h.id for h in store.search_vector(want[0], 6, user_id="mia")} == {"mia#0", "mia#1"}


def test_a_reencode_whose_rollback_is_refused_too_keeps_the_store_and_index_in_step(monkeypatch, caplog):
    """The backend still down for the rollback: the memories whose vectors it lost leave the store too (as an
    update's rollback does), so that a search and a save do not meet a memory without a vector."""
    store = three_users()
    store.encoder = HashingEncoder(DIM, seed=1)
    real_add, calls = store.index.add, []

    def add(*args, **kwargs):  # the second scope's add fails, and every add after it
        calls.append(1)
        if len(calls) >= 2:
            raise Down("the backend went away")
        return real_add(*args, **kwargs)

    monkeypatch.setattr(store.index, "add", add)
    with pytest.raises(Down):
        store.reencode()
    monkeypatch.undo()
    assert sorted(map(str, store.index.ids())) == sorted(store.ids()) and len(store) < 6
    assert "could not be taken back" in caplog.text and "scopes" in caplog.text


SERVER_MODE = pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")


@SERVER_MODE
@pytest.mark.parametrize("wrote", [False, True], ids=["refused", "answer-lost"])
def test_a_server_load_whose_reencode_fails_leaves_the_collection_as_it_was(server, tmp_path, monkeypatch,  # noqa: F811
                                                                            wrote):
    """On a Qdrant server the collection outlives a load that failed: a re-encode refused midway left it half the
    new model's. It is now as it was, and the load retried re-encodes it whole."""
    import sam_model.backends.qdrant as qdrant

    store = three_users({"kind": "qdrant", "url": server})
    saved = store.save(tmp_path / "s")
    before = vectors(store)
    real = qdrant.QdrantIndex.add
    calls = []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            if wrote:
                real(self, *args, **kwargs)
            raise Down("the server went away")
        return real(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(qdrant.QdrantIndex, "add", add)
        with pytest.raises(Down):
            MemoryStore.load(saved, HashingEncoder(DIM, seed=1), reencode=True)
    assert len(calls) >= 2, "the fault was not reached"
    assert vectors(store) == before  # the collection, read through the first store (the same server and collection)
    back = MemoryStore.load(saved, HashingEncoder(DIM, seed=1), reencode=True)
    want = back.encoder.encode_memories([back.memory(i) for i in back.ids()])
    np.testing.assert_allclose(back.index.get_vectors(back.ids()), want, atol=1e-6)
    assert back.index._count() == 6


# ---- 2. a served tenant checkpoints a migrated save at once ----------------------------------------------------


@SERVER_MODE
@pytest.mark.parametrize("index", ["flat", "server"])
def test_a_tenant_checkpoints_a_migrated_save_at_once_so_the_next_start_does_not_migrate(
        index, tmp_path, monkeypatch, request):
    """Found by review: a tenant whose checkpoint was a save of before version 2 (scoped.json without a version)
    was moved to each scope's own episode when it was loaded, but not saved: every restart moved it again (on a
    Qdrant server, re-encoding the memories it moved) until the next due checkpoint. The tenant now checkpoints at
    once after a migration; the next start loads a version-2 save and moves nothing."""
    if old_save is None:
        pytest.skip("the [serve] extra is not installed (pip install -e '.[serve]')")
    from sam_model.memory import ScopedMemory
    from sam_model.serve.tenants import Tenant

    cfg = {"kind": "flat"} if index == "flat" else {"kind": "qdrant", "url": request.getfixturevalue("server")}
    folder = tmp_path / "acme"
    (folder / "checkpoint").mkdir(parents=True)
    shutil.move(old_save(tmp_path, monkeypatch, cfg), folder / "checkpoint" / "memory")
    (folder / "checkpoint" / "seq.json").write_text(json.dumps({"seq": 0}))
    enc = HashingEncoder(256)
    moved, encoded = [], []
    real_place, real_encode = ScopedMemory._place_episodes, MemoryStore._encode_stale
    monkeypatch.setattr(ScopedMemory, "_place_episodes", lambda self: moved.append(1) or real_place(self))
    monkeypatch.setattr(MemoryStore, "_encode_stale", lambda self, *a: encoded.append(1) or real_encode(self, *a))

    def start() -> Tenant:
        return Tenant("acme", folder, lambda: ScopedMemory(enc, StoreConfig(index=cfg)),
                      lambda f: ScopedMemory.load(f, enc), checkpoint_every=1000)

    tenant = start()
    assert moved == [1], "the old save was not migrated"
    scoped = json.loads((folder / "checkpoint" / "memory" / "scoped.json").read_text())
    assert scoped["version"] == 3  # on disk before any write or shutdown
    want = {h.id: h.episode_id for h in tenant.memory.store.get_all()}
    tenant.release()  # a kill: no checkpoint at shutdown
    moved.clear()
    encoded.clear()
    again = start()
    assert moved == [] and encoded == []
    assert {h.id: h.episode_id for h in again.memory.store.get_all()} == want
    for h in again.memory.store.get_all():
        assert h.episode_id == ScopedMemory.episode_of(h.user_id, h.agent_id, h.run_id), h.id
    again.release()


# ---- 3. the benches write their results atomically ------------------------------------------------------------


def torn(self, data, *args, **kwargs):
    """A write that took part of its file and failed (a full disk): what a plain write_text left behind."""
    with open(self, "wb") as f:
        f.write(b"{")
    raise OSError(28, "No space left on device")


def test_a_search_bench_whose_write_fails_keeps_the_earlier_results(tmp_path, monkeypatch):
    """Found by review: bench.search wrote search.json (after every index, so that partial results survive) and
    search.md with a plain write_text, so a write that failed midway (a full disk, a kill) left a torn file where
    the earlier run's results were. They are now written atomically (sam_model.io.atomic_write_text), as every
    other bench's are."""
    from pathlib import Path

    from sam_model.bench import search

    argv = ["--sizes", "200", "--dim", "8", "--latent-dim", "4", "--clusters", "4", "--queries", "16",
            "--b1-queries", "2", "--kinds", "flat", "--threads", "1", "--out", str(tmp_path / "out")]
    search.main(argv)
    before = {f: (tmp_path / "out" / f).read_bytes() for f in ("search.json", "search.md")}
    assert json.loads(before["search.json"])["results"]
    monkeypatch.setattr(Path, "write_text", torn)
    monkeypatch.setattr(Path, "write_bytes", torn)
    with pytest.raises(OSError, match="No space left"):
        search.main(argv)
    monkeypatch.undo()
    assert {f: (tmp_path / "out" / f).read_bytes() for f in before} == before


def test_a_memory_plot_whose_save_fails_keeps_the_earlier_png(tmp_path, monkeypatch):
    """bench.memory saved memory.png with fig.savefig to its final path (a failed save left half an image that looks
    like a result); it now goes through the one atomic figure save (sam_model.evaluation.diagnostics.save_figure)."""
    from matplotlib.figure import Figure

    from sam_model.bench import memory

    results = {"store only": {"size_curve": [(1, 1), (21, 15), (40, 30)], "rr_curve": [1.0, 0.0, 0.5, 0.5]}}
    png = tmp_path / "memory.png"
    memory.plot(results, png, window=2)
    before = png.read_bytes()
    assert before.startswith(b"\x89PNG")
    real = Figure.savefig

    def half(self, fname, *args, **kwargs):
        real(self, fname, *args, **kwargs)
        with open(fname, "r+b") as f:
            f.truncate(100)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half)
    with pytest.raises(OSError, match="No space left"):
        memory.plot(results, png, window=2)
    monkeypatch.undo()
    assert png.read_bytes() == before


# ---- 4. the paired table uses the one paired difference -------------------------------------------------------


def test_the_paired_table_gives_stats_paired_figures_and_computes_them_there(tmp_path, monkeypatch):
    """bench.paired's table computed the paired difference inline beside sam_model.janus.stats.paired, the same
    calculation twice (a change to one would leave the other). It now calls stats.paired: on random decisions of
    random conversations its figures are stats.paired's, and they come from a call to it."""
    import sam_model.bench.paired as bench
    from sam_model.bench.chunk_table import fmt
    from sam_model.janus import stats

    rng = np.random.default_rng(7)
    n = 60
    groups = [f"c{int(g)}" for g in rng.integers(0, 12, n)]
    rr = {m: rng.uniform(0, 1, n) for m in ("sam", "shipped")}
    hit = {m: rng.integers(0, 2, n).astype(float) for m in rr}
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": groups[i], "step": i, "methods": {
            m: {"rr": float(rr[m][i]), "recall@5": float(hit[m][i])} for m in rr}}) + "\n" for i in range(n)))
    calls = []
    monkeypatch.setattr(bench, "paired", lambda a, b, **kw: calls.append(kw) or stats.paired(a, b, **kw))
    rows = {line.split(" | ")[0]: line for line in bench.table(tmp_path, "sam", "shipped").splitlines()}
    for title, values in (("| MRR", rr), ("| Recall@5", hit)):
        want = fmt(stats.paired(values["sam"], values["shipped"], groups=groups), True)
        assert rows[title].endswith(f"| {want} |"), (title, want)
    assert len(calls) == 2 and all(kw == {"groups": groups} for kw in calls)
