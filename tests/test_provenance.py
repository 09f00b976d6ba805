"""Provenance links: adopted values, backward-only links, the re-rank, and the retriever's use of them."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from sam_model.data.examples import episode_memories
from sam_model.data.provenance import (
    ProvenanceLinker,
    adopted_values,
    contains_value,
    expand,
    provenance_links,
)
from sam_model.data.reader import Episode
from sam_model.data.schema import Event, State
from sam_model.io import SAMFileError
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.rerank import rerank, slot_bonus, tie_keys
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig


def ev(step: int, kind: str, text: str, constraints: dict | None = None, ep: str = "e1", **state) -> Event:
    return Event(episode_id=ep, step=step, kind=kind, text=text,
                 state=State(phase=state.pop("phase", "talk"), constraints=constraints or {}, **state))


def offer_episode(ep: str = "e1") -> list[Event]:
    """The system offers two therapists; the user accepts the second without naming it."""
    return [
        ev(0, "user", "Find me a psychologist in Napa.", {"city": "Napa"}, ep),
        ev(1, "result", "FindProvider: 2 results. Garcia Daniel | Linn Terri", {"city": "Napa"}, ep),
        ev(2, "system", "How about Garcia Daniel? He is in Napa.", {"city": "Napa"}, ep),
        ev(3, "user", "Anyone else?", {"city": "Napa"}, ep),
        ev(4, "system", "Linn Terri is another psychiatrist in Napa.", {"city": "Napa"}, ep),
        ev(5, "user", "Great, that one works for me.", {"city": "Napa", "therapist": "Linn Terri"}, ep),
        ev(6, "user", "Book it for the 2nd, at 12 pm.", {"city": "Napa", "therapist": "Linn Terri",
                                                          "date": "the 2nd", "time": "12 pm"}, ep),
    ]


def test_adopted_values_are_new_values_the_event_does_not_say():
    before = State(constraints={"city": "Napa"})
    assert adopted_values(before, State(constraints={"city": "Napa", "therapist": "Linn  Terri"}),
                          "that one works") == ("linn terri",)
    # said in the event itself: not adopted from elsewhere; unchanged values are not new
    assert adopted_values(before, State(constraints={"city": "Napa", "date": "the 2nd"}), "The 2nd, please") == ()
    # list values are flattened; the first state has no "before"
    assert adopted_values(None, State(constraints={"who": ["Ann", "Bob"]}), "with Ann") == ("bob",)
    assert contains_value("at 12 pm", "12 pm") and not contains_value("12 results", "2")


def test_links_point_back_to_the_first_source_kind_memory_that_said_the_value():
    mems = episode_memories(Episode("e1", tuple(offer_episode())))
    links = provenance_links(mems, source_kinds={"user", "system"})
    assert links[5] == (4,)  # the system's offer, not the result list (step 1) that named it first
    assert all(src < i for i, ls in enumerate(links) for src in ls)  # never forwards
    assert links[6] == ()  # "the 2nd" and "12 pm" are said by the event itself
    # without a kind filter the result list is the first to say it
    assert provenance_links(mems)[5] == (1,)


def test_links_stay_inside_their_task_in_a_life():
    """Two tasks in one life (meta.source_episode): the second task's acceptance links to its own offer, not to
    the first task's, which said the same value earlier; a value only the first task said links nowhere."""
    first = [dataclasses.replace(e, meta={"source_episode": "a"}) for e in offer_episode("life")]
    second = [dataclasses.replace(e, step=e.step + 7, meta={"source_episode": "b"}) for e in offer_episode("life")]
    mems = episode_memories(Episode("life", tuple(first + second)))
    assert mems[12].task_start == 7 and mems[5].task_start == 0
    links = provenance_links(mems, source_kinds={"user", "system"})
    assert links[5] == (4,) and links[12] == (11,)  # the second task's own offer, step 11
    only_first = first + [ev(7, "user", "Hi again.", {}, "life"),
                          ev(8, "user", "The same one as before.", {"therapist": "Linn Terri"}, "life")]
    only_first[-2:] = [dataclasses.replace(e, meta={"source_episode": "b"}) for e in only_first[-2:]]
    mems = episode_memories(Episode("life", tuple(only_first)))
    assert provenance_links(mems, source_kinds={"user", "system"})[-1] == ()


def test_links_stay_inside_their_episode_and_survive_a_state_dict_round_trip():
    a = episode_memories(Episode("a", tuple(offer_episode("a"))))
    b = episode_memories(Episode("b", tuple(offer_episode("b"))))
    linker = ProvenanceLinker({"user", "system"})
    linker.add(a[:5], keys=[m.id for m in a[:5]])
    restored = ProvenanceLinker.from_state_dict(json.loads(json.dumps(linker.state_dict())))
    # episode b never said "Linn Terri": its acceptance links to nothing in a
    assert restored.add([b[5]], keys=[b[5].id]) == [()]
    assert restored.add([a[5]], keys=[a[5].id]) == [("a#4",)]


def test_expand_places_sources_after_their_hit_once_and_only_allowed_ones():
    links = {5: (4,), 6: (9,), 3: (0,)}
    assert expand([5, 6, 4, 3], links, allowed=range(0, 8)) == [5, 4, 6, 3, 0]
    assert expand([5, 6, 4, 3], links, depth=3) == [5, 4, 6]
    assert expand([2, 1], [(), (0,), ()]) == [2, 1, 0]


def test_retriever_follows_links_and_keeps_them_when_saved(tmp_path, tiny_bert_dir):
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32,
                           kinds=["user", "system", "result"]))
    r = SAMRetriever(net, StoreConfig(source_kinds=["user", "system"]))
    events = offer_episode()
    r.add_memories(events[:6])  # Events: the store tracks each episode's previous state itself
    assert r.store.links() == {"e1#5": ("e1#4",)}
    plain = [h.id for h in r.search(events[6].state, events[6].text, k=6, episode_id="e1", rerank=False)]
    hits = r.search(events[6].state, events[6].text, k=6, episode_id="e1")
    ids = [h.id for h in hits]
    assert sorted(ids) == sorted(plain) and ids.index("e1#4") <= ids.index("e1#5") + 1
    assert ids == expand(plain, r.store.links())
    q = r.encode_queries([events[6].state], [events[6].text])[0]
    assert np.allclose([h.index_score for h in hits], r.store.index.get_vectors(ids) @ q, atol=1e-5)  # own scores
    linked = next(h for h in hits if h.id == "e1#4")
    assert linked.linked_from in (None, "e1#5") and hits[0].text.startswith("[")
    # when the search ranks the acceptance first and its source nowhere, the source still comes second
    index_search = r.store.index.search
    r.store.index.search = lambda q, k, episode_id=None, within=None: ([["e1#5"] + [None] * (k - 1)], np.zeros((1, k)))
    got = r.search(events[6].state, events[6].text, k=2, episode_id="e1")
    assert [h.id for h in got] == ["e1#5", "e1#4"] and got[1].linked_from == "e1#5"
    r.store.index.search = index_search

    saved = r.save(tmp_path / "exp")
    r2 = SAMRetriever.load(saved)
    assert r2.store.links() == r.store.links()
    assert [h.id for h in r2.search(events[6].state, events[6].text, k=6, episode_id="e1")] == ids

    (saved / "store" / "store.json").write_text("{broken")
    with pytest.raises(SAMFileError, match="store.json"):
        SAMRetriever.load(saved)


def test_content_only_retriever_never_reranks_by_state(tiny_bert_dir):
    r = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32,
                                      query_input="observation")), StoreConfig(source_kinds=["user"], slot_match=0.5))
    assert not r.store.provenance and r.store.slot_match == 0.0 and not r.store.reranks


def test_slot_match_lifts_memories_that_set_needed_slots():
    sets = {"a": ("city",), "b": ("date", "time"), "c": ("date",), "d": ()}
    assert np.allclose(slot_bonus({"date"}, [sets[k] for k in "abcd"], 0.2), [0, 0.1, 0.2, 0])
    scores, ties = np.array([0.50, 0.45, 0.40, 0.39]), tie_keys(range(4))

    def order(*args, **kw):
        return [c for c, _, _ in rerank(list("abcd"), scores, ties, *args, **kw)]

    assert order({"date"}, sets.get, 0.0) == list("abcd")  # off: the search order
    assert order({"date"}, sets.get, 0.2) == list("cbad")
    assert order((), sets.get, 0.2) == list("abcd")  # nothing needed: no change
    # both steps: slot match first, then each hit's provenance source right after it
    assert order({"date"}, sets.get, 0.2, links={"c": ("d",)})[:3] == list("cdb")
    # exact ties follow the seeded tie keys, not the input order
    flat = np.zeros(4)
    want = [list("abcd")[i] for i in np.argsort(tie_keys(range(4)), kind="stable")]
    assert [c for c, _, _ in rerank(list("abcd"), flat, tie_keys(range(4)), (), sets.get)] == want


def test_retriever_slot_match_uses_the_set_slots_it_stored(tmp_path, tiny_bert_dir):
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32))
    r = SAMRetriever(net, StoreConfig(source_kinds=["user", "system"], provenance=False, slot_match=100.0))
    events = offer_episode()
    r.add_memories(events[:7])
    assert r.store.sets_of("e1#6") == ("date", "time") and r.store.sets_of("e1#3") == ()
    state = State(phase="book", constraints={"city": "Napa"}, uncertainty_flags=("date", "time"))
    hits = r.search(state, "ok, go ahead", k=3, episode_id="e1")
    assert hits[0].id == "e1#6" and hits[0].rerank_bonus == pytest.approx(100.0)  # it alone set the needed slots
    back = SAMRetriever.load(r.save(tmp_path / "exp"))
    assert back.store.sets_of("e1#6") == ("date", "time") and back.store.config.slot_match == 100.0


def test_configs_saved_before_provenance_load_without_it():
    old = {"slot_match": 0.2}  # a network config saved before provenance links: no source_kinds
    assert StoreConfig.from_legacy(old).provenance is False
    cfg = StoreConfig.from_legacy({"slot_match": 0.2, "provenance": True, "source_kinds": ["user"]})
    assert cfg.provenance is True and cfg.source_kinds == ["user"] and cfg.slot_match == 0.2
    # the network config drops them: they are the store's now
    net = SAMConfig.from_saved({**SAMConfig().to_dict(), "slot_match": 0.2, "provenance": True, "source_kinds": []})
    assert not hasattr(net, "slot_match")


def test_source_kinds_are_the_kinds_training_labels_call_useful(write_log, tmp_path):
    from sam_model.training.datamodule import AgentLogDataModule

    lines = []
    for e in range(4):
        ep = f"ep{e}"
        lines += [{"episode_id": ep, "step": 0, "kind": "user", "text": "Napa please", "state": {"phase": "a"}},
                  {"episode_id": ep, "step": 1, "kind": "result", "text": "3 results", "state": {"phase": "a"}},
                  {"episode_id": ep, "step": 2, "kind": "system", "text": "How about Linn?", "state": {"phase": "a"}},
                  {"episode_id": ep, "step": 3, "kind": "user", "text": "ok", "state": {"phase": "b"},
                   "useful_memory_steps": [0, 2] if e % 2 else [0]}]
    dm = AgentLogDataModule(train=[str(write_log(lines))], val_fraction=0.25, cache_dir=str(tmp_path / "cache"))
    vocab = dm.vocab
    assert vocab["kinds"] == ["result", "system", "user"]
    # labels seen in the training split only: user always, system in the odd episodes that remain there
    assert set(vocab["source_kinds"]) <= {"system", "user"} and "user" in vocab["source_kinds"]
    assert "result" not in vocab["source_kinds"]
