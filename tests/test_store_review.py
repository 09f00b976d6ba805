"""The store's write and read API, from a review that ran it: a refused call changes nothing (not the vectors,
not the recorder that compares each event with the state before it), an update re-teaches the provenance
linker, and a chunked memory's own id works wherever ids are taken."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.data.examples import MemoryRecord
from sam_model.data.schema import Event, State
from sam_model.memory.encoders import HashingEncoder
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig


def events(n: int, ep: str = "trip") -> list[Event]:
    """A conversation whose state sets a new slot at every step (so each memory's text says what it sets)."""
    return [Event(ep, i, "user", f"step {i}: slot_{i} is value_{i}",
                  State(phase="plan", constraints={f"slot_{j}": f"value_{j}" for j in range(i + 1)})) for i in range(n)]


def texts(store: MemoryStore) -> list[tuple]:
    return [(h.id, h.text, h.linked_from) for h in store.get_all()] + [("links", str(store.links()))]


def test_a_refused_add_leaves_the_recorder_as_it_was():
    """The recorder advanced before the refusal (wrong-shaped vectors, an id already stored), so the same add retried
    compared its first event with the refused batch's last state: other texts ("sets ...") and other links."""
    ev = events(8)
    clean = MemoryStore(HashingEncoder(128), StoreConfig())
    clean.add(ev[:3])
    clean.add(ev[3:6])
    for bad in ("vectors", "duplicate"):
        store = MemoryStore(HashingEncoder(128), StoreConfig())
        store.add(ev[:3])
        with pytest.raises(ValueError, match="shape" if bad == "vectors" else "already in the store"):
            if bad == "vectors":
                store.add(ev[3:6], vectors=np.zeros((1, 128), np.float32))
            else:
                store.add(ev[2:6])
        store.add(ev[3:6])
        assert texts(store) == texts(clean), bad


def test_a_refused_update_keeps_the_old_vector():
    """A NaN vector was refused by the index after the old vector was removed: the memory had no vector, get and
    get_all raised KeyError, and the saved folder did not load."""
    store = MemoryStore(None, StoreConfig(provenance=False), 4)
    rec = MemoryRecord("e#0", "e", 0, "user", "plan", "a fact", "[user] a fact")
    store.add([rec], np.eye(4, dtype=np.float32)[:1])
    with pytest.raises(ValueError, match="NaN or infinity"):
        store.update(rec, vector=np.full(4, np.nan, np.float32))
    with pytest.raises(ValueError, match="NaN or infinity"):
        store.add([MemoryRecord("e#1", "e", 1, "user", "plan", "b", "[user] b")], np.full((1, 4), np.inf, np.float32))
    assert store.get("e#0").text == "a fact" and len(store.index) == len(store) == 1
    assert [h.id for h in store.search_vector(np.eye(4, dtype=np.float32)[0], 1)] == ["e#0"]


def test_an_update_teaches_the_linker_the_new_words():
    """After "budget 1400" became "budget 3500", a later memory adopting 3500 got no link (the linker still held
    the old words), one adopting 1400 linked to it."""
    def state(budget: str | None) -> State:
        return State(phase="book", constraints={"budget": budget} if budget else {})

    store = MemoryStore(HashingEncoder(128), StoreConfig())
    store.add([Event("e", 0, "user", "my budget is 1400 dollars", state(None))])
    old = store.get("e#0")
    store.update(MemoryRecord("e#0", "e", 0, "user", "plan", "my budget is 3500 dollars",
                              "[user] my budget is 3500 dollars"))
    assert old.text != store.get("e#0").text
    store.add([Event("e", 1, "system", "ok, booking it", state("3500"))])
    assert store.links() == {"e#1": ("e#0",)}


def test_a_chunked_memory_is_found_by_its_own_id_and_a_deep_fold_stops_at_max_k(monkeypatch):
    """``search(ids=[memory id])`` of a chunked memory found nothing, ``get`` said only "not in the store", ids given as
    a string were read as a set of characters; fold over more chunks than MAX_K asked the index for k > MAX_K."""
    import sam_model.storesearch as search_module

    long = "view_file:\n" + "\n".join(f"{i:4d}  def handler_{i}(request): pass" for i in range(60))
    store = MemoryStore(HashingEncoder(128), StoreConfig(chunking={"size": 180, "overlap": 50}))
    store.add([Event("e", 0, "result", long, State(phase="view_file")),
               Event("e", 1, "user", "short one", State(phase="plan"))])
    parent = "e#0"
    hits = store.search(State(phase="edit"), "handler_57", k=3, ids=[parent], fold=True)
    assert [h.memory_id for h in hits] == [parent] and hits[0].chunk is not None
    gen = store.search(State(phase="edit"), "handler_57", k=3, ids=(i for i in [parent, "e#1"]), fold=True)
    assert {h.memory_id for h in gen} == {parent, "e#1"}  # a generator is read once, not once per deepening
    with pytest.raises(KeyError, match="stored as .* chunks"):
        store.get(parent)
    with pytest.raises(TypeError, match="ids must be a list"):
        store.search(State(phase="edit"), "x", ids="e#1")
    monkeypatch.setattr(search_module, "MAX_K", 4)  # fewer than the chunks: the fold returns what 4 found
    folded = store.search(State(phase="edit"), "handler_57", k=5, fold=True)
    assert 1 <= len(folded) <= 2 and len({h.memory_id for h in folded}) == len(folded)


def test_load_names_the_bad_argument_not_the_folder(tmp_path, tiny_bert_dir):
    """A bad backend, device or index_config was reported as "cannot load the retriever <folder>", blaming the
    folder; a path of None was a bare TypeError; index_config on a saved retriever was ignored while its config
    said otherwise."""
    from sam_model.io import SAMFileError
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever

    for kwargs, message in (({"backend": "bogus"}, "text backend must be one of"),
                            ({"device": "bogus"}, "device 'bogus' is not a torch device"),
                            ({"index_config": {"kind": "annoy"}}, "index.kind' must be one of")):
        with pytest.raises(ValueError, match=message):
            SAMRetriever.load("sam-general", **kwargs)
    with pytest.raises(TypeError, match="path must be an export folder"):
        SAMRetriever.load(None)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32,
                           kinds=["user"]))
    r = SAMRetriever(net)
    r.add_memories([Event("e", 0, "user", "a fact", State(phase="plan"))])
    r.save(tmp_path / "saved")
    with pytest.raises(SAMFileError, match="holds a saved store"):
        SAMRetriever.load(tmp_path / "saved", index_config={"kind": "hnsw"})
    assert len(SAMRetriever.load(tmp_path / "saved").store) == 1


def test_an_add_interrupted_after_the_index_took_it_is_taken_back_whole(monkeypatch):
    """Interrupted between the index and the entries (a KeyboardInterrupt), the index kept vectors the store did not
    know: every retry was a duplicate id and delete could not reach them (a second review). A chunked memory's
    update whose new version is refused kept nothing (deleted first)."""
    import sam_model.store as store_module

    ev = events(6)
    clean = MemoryStore(HashingEncoder(128), StoreConfig())
    clean.add(ev)
    store = MemoryStore(HashingEncoder(128), StoreConfig())
    store.add(ev[:3])
    made = store_module._Entry
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return made(*args, **kwargs)

    monkeypatch.setattr(store_module, "_Entry", flaky)
    with pytest.raises(KeyboardInterrupt):
        store.add(ev[3:])
    monkeypatch.setattr(store_module, "_Entry", made)
    assert len(store) == len(store.index) == 3
    store.add(ev[3:])
    assert texts(store) == texts(clean)

    long = "view_file:\n" + "\n".join(f"{i:4d}  def handler_{i}(request): pass" for i in range(60))
    chunked = MemoryStore(HashingEncoder(128), StoreConfig(chunking={"size": 180, "overlap": 50}))
    chunked.add([Event("e", 0, "result", long, State(phase="view_file"))], user_id="mia")
    before = [h.id for h in chunked.get_all()]
    encode = chunked.encoder.encode_memories

    def nan(recs, *a, **k):
        x = encode(recs, *a, **k)
        x[0, 0] = np.nan
        return x

    monkeypatch.setattr(chunked.encoder, "encode_memories", nan)
    new = MemoryRecord("e#0", "e", 0, "result", "view_file", "[result] " + long.replace("pass", "return 1"),
                       "[result] " + long.replace("pass", "return 1"))
    with pytest.raises(ValueError, match="NaN"):
        chunked.update(new)
    assert [h.id for h in chunked.get_all()] == before and len(chunked.index) == len(before)


def whole_state(store: MemoryStore) -> tuple:
    """Everything a write may change: the saved state (entries in order, linker, steps), the index's ids and the
    vectors by id, the chunk lists, links and scopes (tests/test_store_leftovers.py uses it too)."""
    ids = store.ids()
    return (store.state_dict(), sorted(map(str, store.index.ids())), store.index.get_vectors(ids).tolist(),
            {k: list(v) for k, v in store._chunks.items()}, store.links(),
            {k: sorted(map(str, v)) for k, v in store._scopes.items()})


LONG_VIEW = "view_file:\n" + "\n".join(f"{i:4d}  def handler_{i}(request): pass" for i in range(60))


def an_update(shape: str) -> tuple[MemoryStore, MemoryRecord]:
    """mia's store of two memories and a new version of the first: ``shape`` "chunked" (a long view, chunked, and
    its new version), "whole" (a short memory, no chunking) or "whole to chunked" (a short memory in a chunking
    store, its new version long enough to chunk)."""
    chunking = None if shape == "whole" else {"size": 180, "overlap": 50}
    store = MemoryStore(HashingEncoder(128), StoreConfig(chunking=chunking))
    first = LONG_VIEW if shape == "chunked" else "my budget is 1400 dollars"
    store.add([Event("e", 0, "result", first, State(phase="view_file"))], user_id="mia")
    store.add([Event("e", 1, "user", "the handler_7 budget is fine", State(phase="plan"))], user_id="mia")
    new_text = "[result] " + (LONG_VIEW.replace("pass", "return 1") if shape != "whole" else "budget 3500")
    return store, MemoryRecord("e#0", "e", 0, "result", "view_file", new_text, new_text)


@pytest.mark.parametrize("where", ["index", "entries"])
@pytest.mark.parametrize("shape", ["chunked", "whole", "whole to chunked"])
def test_an_update_that_fails_after_the_old_version_went_leaves_the_old_version(monkeypatch, where, shape):
    """Found by review: a chunked memory's update deleted the old chunks, then added the new ones; a backend error
    or an interrupt in that add lost the memory (a whole memory's update likewise lost its vector when the index
    refused the new one after removing the old). An update is now all or nothing: the old version, its place in
    the write order, vectors, scopes and links are as they were, and the update retried goes through."""
    import sam_model.store as store_module

    store, new = an_update(shape)
    before = whole_state(store)
    target = (store.index, "add") if where == "index" else (store_module, "_Entry")
    real, calls = getattr(*target), []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt if where == "entries" else ConnectionError("backend down")
        return real(*args, **kwargs)

    if where == "entries" and shape == "whole":  # a whole memory's update makes no entry: it fails in the linker
        target, real = (store.linker, "revise"), store.linker.revise
    monkeypatch.setattr(*target, fails_once)
    with pytest.raises((KeyboardInterrupt, ConnectionError)):
        store.update(new)
    assert calls, "the failure was not reached"
    assert whole_state(store) == before
    monkeypatch.setattr(*target, real)
    store.update(new)
    assert store.memory("e#0").content == new.content
    assert store.search(State(phase="plan"), "handler_7 return", k=1, user_id="mia", fold=True)


@pytest.mark.parametrize("refused", [{1, 3}, {1, 2}])
def test_a_failed_chunked_update_puts_its_old_chunks_back_all_or_none(monkeypatch, refused):
    """Found by review: a chunked update whose new chunks the index refused put the old chunks back one index call
    each; a backend failing again meanwhile left some chunks back and the rest gone, each stored without its
    vector (a search found a piece of the memory, a save held entries its index had no vectors for). They now go
    back in one call: all of them (the store as before), or, refused again, none (the memory gone from the entries
    too, the error raised): the entries and the index always agree."""
    store = MemoryStore(HashingEncoder(128), StoreConfig(chunking={"size": 180, "overlap": 50}))
    store.add([Event("e", 0, "result", LONG_VIEW, State(phase="view_file"))], user_id="mia")
    store.add([Event("e", 1, "user", "the handler_7 budget is fine", State(phase="plan"))], user_id="mia")
    assert len(store._chunks["e#0"]) > 2
    before = whole_state(store)
    new_text = "[result] " + LONG_VIEW.replace("pass", "return 1")
    real, calls = store.index.add, []

    def refuses(*args, **kwargs):  # the new chunks (the first call) refused, and the calls after as `refused` says
        calls.append(1)
        if len(calls) in refused:
            raise ConnectionError("backend down")
        return real(*args, **kwargs)

    monkeypatch.setattr(store.index, "add", refuses)
    with pytest.raises(ConnectionError):
        store.update(MemoryRecord("e#0", "e", 0, "result", "view_file", new_text, new_text))
    assert sorted(map(str, store.index.ids())) == sorted(map(str, store.ids()))
    if 2 in refused:  # the put back refused: none of it
        assert not store.has("e#0") and store.ids() == ["e#1"] and "e#0" not in store._chunks
    else:
        assert whole_state(store) == before
