"""SAMStore against LangGraph's documented BaseStore semantics: the same operations run on LangGraph's own
InMemoryStore and on SAMStore give the same items (put/get/replace/delete, filters, offsets, namespaces with
prefix/suffix/wildcards/max_depth, batch read-before-write); query search stays inside its namespace prefix and
ranks as the one memory store does; and a compiled graph reads and writes it through ``store=``."""

from __future__ import annotations

import asyncio
import collections
import re

import pytest

pytest.importorskip("langgraph", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from sam_model.integrations.langgraph import SAMStore  # noqa: E402
from sam_model.limits import scope_flaw  # noqa: E402
from sam_model.memory import HashingEncoder  # noqa: E402

ITEMS = [(("memories", "anna"), "k1", {"content": "anna flies to Lisbon", "n": 1, "tag": {"a": 1}}),
         (("memories", "anna"), "k2", {"content": "anna is vegetarian", "n": 5, "tags": ["x", "y"]}),
         (("memories", "anna", "trips"), "t1", {"content": "anna booked seat 12A", "n": 3}),
         (("memories", "bob"), "k1", {"content": "bob flies to Boston", "n": 2}),
         (("prefs", "bob"), "p", {"content": "bob likes aisle seats", "n": 4})]


def fill(store: BaseStore) -> BaseStore:
    for ns, key, value in ITEMS:
        store.put(ns, key, value)
    store.put(("memories", "anna"), "k1", {"content": "anna flies to Porto", "n": 1, "tag": {"a": 1}})  # replace
    return store


def view(items) -> list:
    return [(i.namespace, i.key, i.value) for i in items]


def test_same_items_as_langgraphs_in_memory_store():
    ours, theirs = fill(SAMStore(HashingEncoder(256))), fill(InMemoryStore())
    for prefix, kw in [((), {}), (("memories",), {}), (("memories", "anna"), {}), (("memories",), {"limit": 2}),
                       (("memories",), {"offset": 1, "limit": 2}), ((), {"filter": {"n": {"$gte": 3}}}),
                       ((), {"filter": {"tag": {"a": 1}}}), ((), {"filter": {"tags": ["x", "y"]}}),
                       ((), {"filter": {"n": {"$ne": 2, "$lt": 5}}}), (("prefs",), {"filter": {"n": 4}})]:
        assert view(ours.search(prefix, **kw)) == view(theirs.search(prefix, **kw)), (prefix, kw)
    for kw in [{}, {"prefix": ("memories",)}, {"suffix": ("bob",)}, {"prefix": ("memories", "*")},
               {"prefix": ("*", "bob")}, {"max_depth": 1}, {"max_depth": 2, "prefix": ("memories",)},
               {"limit": 1, "offset": 1}]:
        assert ours.list_namespaces(**kw) == theirs.list_namespaces(**kw), kw
    for store in (ours, theirs):
        store.put(("memories", "gone"), "g", {"content": "deleted"})
        store.delete(("memories", "gone"), "g")
    for ns, key in [(("memories", "anna"), "k1"), (("memories", "bob"), "k1"), (("memories", "gone"), "g"),
                    (("nope",), "x")]:
        a, b = ours.get(ns, key), theirs.get(ns, key)
        assert (a is None) == (b is None) and (a is None or (a.value, a.key, a.namespace) == (b.value, b.key, b.namespace))
    # (InMemoryStore goes on listing a namespace whose items are all deleted, or that a get asked for; SAMStore
    # lists only namespaces that hold items.)
    assert ("memories", "gone") not in ours.list_namespaces() and ("nope",) not in ours.list_namespaces()
    for store in (ours, theirs):  # a batch reads the store as it was before its writes; the last write wins
        res = store.batch([PutOp(("b",), "x", {"content": "one"}), GetOp(("b",), "x"),
                           PutOp(("b",), "x", {"content": "two"}), SearchOp(("b",))])
        assert res == [None, None, None, []] and store.get(("b",), "x").value == {"content": "two"}
    item = ours.get(("memories", "anna"), "k1")
    assert item.created_at < item.updated_at  # replaced: created kept, updated renewed
    with pytest.raises(InvalidNamespaceError):
        ours.put(("a.b",), "k", {"content": "x"})
    with pytest.raises(InvalidNamespaceError):
        ours.put(("langgraph",), "k", {"content": "x"})


def test_query_search_stays_in_its_namespace_and_ranks_as_the_store():
    store = fill(SAMStore(HashingEncoder(512)))
    store.put(("memories", "anna"), "hidden", {"content": "anna flies often"}, index=False)
    got = store.search(("memories", "anna"), query="flies to Porto", limit=10)
    assert {i.namespace[:2] for i in got} == {("memories", "anna")}
    assert got[0].key == "k1" and got[0].score is not None and got[-1].key == "hidden" and got[-1].score is None
    assert [i.score for i in got[:-1]] == sorted((i.score for i in got[:-1]), reverse=True)
    assert [i.key for i in store.search(("memories",), query="flies", limit=2, offset=1)] == \
        [i.key for i in store.search(("memories",), query="flies", limit=3)][1:]
    assert all(i.namespace == ("memories", "bob") for i in store.search(("memories", "bob"), query="anna Lisbon"))
    assert [i.key for i in store.search((), query="seats", filter={"n": 4})] == ["p"]
    q = store.store.encoder.encode_text_queries(["flies to Porto"])[0]
    mine = [r.memory for ns, rows in store._data.items() if ns[:2] == ("memories", "anna") for r in rows.values()
            if r.memory is not None]
    want = [h.id for h in store.store.search_vector(q, 10, (), ids=mine)]
    assert [store._data[i.namespace][i.key].memory for i in got[:-1]] == want and len(want) == 3
    assert store.search(("memories", "anna"), query="x", limit=0) == []
    assert asyncio.run(store.asearch(("memories", "anna"), query="flies to Porto", limit=10)) == got
    store.delete(("memories", "anna"), "k1")
    assert all(i.key != "k1" for i in store.search(("memories", "anna"), query="flies to Porto"))
    assert len(store.store) == 4  # one memory per indexed item: replaced and deleted items left nothing behind


class S(TypedDict):
    user: str
    question: str
    answer: str


def test_a_compiled_graph_uses_it_as_its_store():
    def remember(state: S, *, store: BaseStore):
        store.put(("memories", state["user"]), "home", {"content": f"{state['user']} lives in Lisbon"})
        store.put(("memories", state["user"]), "diet", {"content": f"{state['user']} is vegetarian"})
        return {}

    def recall(state: S, *, store: BaseStore):
        found = store.search(("memories", state["user"]), query=state["question"], limit=1)
        return {"answer": found[0].value["content"]}

    g = StateGraph(S)
    g.add_node("remember", remember)
    g.add_node("recall", recall)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", END)
    store = SAMStore(HashingEncoder(512))
    graph = g.compile(store=store)
    assert graph.invoke({"user": "mia", "question": "mia lives in which city?", "answer": ""})["answer"] == \
        "mia lives in Lisbon"
    out = asyncio.run(graph.ainvoke({"user": "bo", "question": "is bo vegetarian?", "answer": ""}))
    assert out["answer"] == "bo is vegetarian"
    assert store.list_namespaces() == [("memories", "bo"), ("memories", "mia")]


def test_bad_puts_change_nothing_and_namespaces_keep_langgraphs_rule():
    from sam_model.data.schema import LogFormatError
    from sam_model.memory import ScopedMemory

    s = SAMStore(HashingEncoder(256))
    s.put(("u", "anna"), "home", {"content": "anna lives in Lisbon"})
    # a replacement that cannot be stored leaves the item as it was (it was deleted first, then lost)
    with pytest.raises(LogFormatError):
        s.put(("u", "anna"), "home", {"kind": "user", "text": "x", "state": "not a state"})
    assert [i.key for i in s.search(("u", "anna"), query="Lisbon")] == ["home"] and len(s.store) == 1
    # a batch with one bad put applies none of it
    with pytest.raises(LogFormatError):
        s.batch([PutOp(("u", "bob"), "a", {"content": "bob note"}),
                 PutOp(("u", "bob"), "b", {"kind": "user", "text": "x", "state": "bad"})])
    assert s.get(("u", "bob"), "a") is None and len(s.store) == 1
    # ops given to batch directly are checked as BaseStore's methods check them: "u.anna" is not ("u", "anna")
    with pytest.raises(InvalidNamespaceError):
        s.batch([PutOp(("u.anna",), "home", {"content": "x"})])
    with pytest.raises(InvalidNamespaceError):
        s.search(("u.anna",), query="", state={"phase": "x"})
    assert s.list_namespaces() == [("u", "anna")]
    # sharing a store with a ScopedMemory: its agent-only scope "/bot" and the namespace ("bot",) are two episodes
    m = ScopedMemory(HashingEncoder(256))
    shared = SAMStore(store=m.store)
    m.add("bot internal note", agent_id="bot")
    shared.put(("bot",), "k", {"content": "graph note"})
    assert len({h.episode_id for h in m.store.get_all()}) == 2


def test_a_long_item_on_a_chunking_store_is_one_memory_and_puts_from_threads_do_not_collide(run_threads):
    """On a store with chunking an item kept only its first chunk's id: its search saw chunk 0 alone, and a
    replace or delete left the other chunks behind. Puts from threads (parallel branches, abatch) read and bumped
    a namespace's step unlocked: two took one memory id (found by review)."""
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    store = SAMStore(store=MemoryStore(HashingEncoder(128), StoreConfig(chunking={"size": 120, "overlap": 30})))
    view = "\n".join(f"line {i}: filler words here" for i in range(40)) + "\nline 40: the_answer_is_fortytwo"
    store.put(("docs", "mia"), "file", {"content": view})
    assert len(store.store) > 5  # stored as chunks
    hits = store.search(("docs", "mia"), query="the_answer_is_fortytwo", limit=3)
    q = store.store.encoder.encode_text_queries(["the_answer_is_fortytwo"])[0]
    best = store.store.search_vector(q, 1)[0]
    assert [h.key for h in hits] == ["file"] and best.chunk > 0
    assert hits[0].score == pytest.approx(best.score)  # the best chunk's score, not chunk 0's
    store.put(("docs", "mia"), "file", {"content": "short now"})
    assert len(store.store) == 1
    store.delete(("docs", "mia"), "file")
    assert len(store.store) == 0

    threaded = SAMStore(HashingEncoder(64))  # puts from threads: the race showed in 1 of 40 puts
    errors = run_threads(*[(lambda i, t=t: threaded.put(("mem", "mia"), f"k{t}-{i}", {"content": f"fact {t} {i}"}),
                            100) for t in range(4)])
    assert errors == [] and len(threaded.search(("mem", "mia"), limit=1000)) == 400 == len(threaded.store)


@pytest.mark.parametrize("page, says", [(dict(limit=-1), "limit must be an integer from 0"),
                                        (dict(offset=-2), "offset must be a non-negative integer"),
                                        (dict(limit=20000), "limit must be an integer from 0 to 10000")])
def test_a_negative_or_huge_page_is_refused_naming_it(page, says):
    """A negative limit or offset sliced the items from their end (the last ones, silently); a huge limit was
    refused by the store naming its own 'k'."""
    s = fill(SAMStore(HashingEncoder(256)))
    for call in (lambda: s.search(("memories",), **page), lambda: s.search(("memories",), query="Lisbon", **page),
                 lambda: s.search(("memories",), query="", state={"phase": "x"}, **page),
                 lambda: s.list_namespaces(**page)):
        with pytest.raises(ValueError, match=says):
            call()
    assert len(s.search(("memories",), limit=0)) == 0 and len(s.search(("memories",), offset=1)) == 3


def test_a_saved_store_loads_with_its_items_memories_and_ranking(tmp_path):
    """LangGraph's InMemoryStore, and SAMStore before, forgot every item when the process ended."""
    import json

    from sam_model.io import SAMFileError

    model = HashingEncoder(256)
    s = fill(SAMStore(model))
    s.put(("memories", "anna"), "hidden", {"content": "anna's unindexed note"}, index=False)
    before = view(s.search(("memories",), query="flies to", limit=10))
    s.save(tmp_path / "graph-store")
    back = SAMStore.load(tmp_path / "graph-store", model)
    assert view(back.search(("memories",), query="flies to", limit=10)) == before
    assert view(back.search((), limit=20)) == view(s.search((), limit=20))
    assert back.get(("memories", "anna"), "k1").created_at == s.get(("memories", "anna"), "k1").created_at
    assert back.list_namespaces() == s.list_namespaces()
    back.put(("memories", "anna"), "k9", {"content": "anna moved to Faro"})  # writes go on after the old ones
    assert len({h.id for h in back.store.get_all()}) == len(back.store.get_all())
    assert back.search(("memories", "anna"), query="moved to Faro", limit=1)[0].key == "k9"
    saved = tmp_path / "graph-store" / "samstore.json"
    d = json.loads(saved.read_text())
    d["items"][0][5] = "nowhere#7"
    saved.write_text(json.dumps(d))
    with pytest.raises(SAMFileError, match=r"samstore.json: unreadable LangGraph store \(items\[0\]: memory "
                                           r"'nowhere#7' is not in store/"):
        SAMStore.load(tmp_path / "graph-store", model)
    with pytest.raises(SAMFileError, match="no samstore.json, so it is not a folder this save wrote"):
        s.save(tmp_path / "graph-store" / "store")  # the memory store's folder is no SAMStore's: not replaced


def test_puts_take_no_stored_memorys_id_in_a_shared_store_or_after_a_load_behind_it(tmp_path):
    """A second SAMStore over the same MemoryStore (store=, documented as shareable), or a samstore.json whose steps
    fell behind, numbered a namespace's memories from 0 again: the put was refused ('memory id ///memories.anna#0 is
    already in the store'; found by review). The next step is now past the memories the namespace holds."""
    import json

    model = HashingEncoder(256)
    s = fill(SAMStore(model))
    other = SAMStore(store=s.store)
    other.put(("memories", "anna"), "k7", {"content": "anna rents a car in Faro"})
    assert other.search(("memories", "anna"), query="anna rents a car in Faro", limit=1)[0].key == "k7"
    assert len({h.id for h in s.store.get_all()}) == len(s.store.get_all())
    s.save(tmp_path / "st")
    saved = tmp_path / "st" / "samstore.json"
    d = json.loads(saved.read_text())
    d["steps"] = []
    saved.write_text(json.dumps(d))
    back = SAMStore.load(tmp_path / "st", model)
    back.put(("memories", "anna"), "k8", {"content": "anna booked a hostel"})
    back.put(("log", "e1"), "s1", {"kind": "user", "text": "hi", "step": 0})  # a new namespace starts at 0
    assert back.search(("memories", "anna"), query="anna booked a hostel", limit=1)[0].key == "k8"
    assert len({h.id for h in back.store.get_all()}) == len(back.store.get_all()) == len(s.store.get_all()) + 2


def _with_second_item(d: dict) -> None:
    """A second item naming the first item's memory (an item written twice by hand)."""
    d["items"].append([["memories", "zed"], "k", {"content": "x"}, *d["items"][0][3:]])


@pytest.mark.parametrize("edit, says", [
    (lambda d: d.update(kind=None), r"kind must be a memory kind \(a non-empty string\), got 'None'"),
    (lambda d: d["items"][0].__setitem__(1, None), r"items\[0\]: the key must be a string, got null\)"),
    (lambda d: d["items"][0].pop(), r"items\[0\] must be \[namespace, key, value, created_at, updated_at, memory"),
    (lambda d: d["items"][0].__setitem__(3, 5), r"items\[0\] created_at must be an ISO 8601 time string, got a "
                                                r"number\)"),  # JSON's words for the file's values, not 'got int'
    (lambda d: d["items"][0].__setitem__(2, "x"), r"items\[0\]: an item's value must be an object, got a string\)"),
    (lambda d: d["items"][0].__setitem__(4, "2026-01-01T00:00:00"), r"items\[0\] updated_at '2026-01-01T00:00:00' "
                                                                    r"has no time zone"),
    (lambda d: d["items"][0].__setitem__(5, [1]), r"items\[0\]: the memory id must be a string or null, got a "
                                                  r"list\)"),
    (lambda d: d["items"].append(list(d["items"][0])), r"items\[\d+\]: \('memories', 'anna'\)/k2 is given twice"),
    (_with_second_item, r"items\[\d+\]: memory '///memories.anna#\d+' is items\[0\]'s too"),
    (lambda d: d["items"][0].__setitem__(0, ["memories.anna"]), r"items\[0\]: a namespace must be a list of "
                                                                r"non-empty strings without '.'"),
    (lambda d: d.update(items={}), r"items must be a list, got an object\)"),
    (lambda d: d.update(steps=[[["memories", "anna"]]]), r"steps\[0\] must be \[namespace, next step\]"),
    (lambda d: d.update(steps=[[["memories", "anna"], -1]]), r"steps\[0\] must be a non-negative integer \(the "
                                                              r"namespace's next step\), got -1\)"),
])
def test_a_hand_edited_samstore_json_is_refused_naming_the_field(tmp_path, edit, says):
    """Each field of samstore.json is checked and named (found by review): a null kind or key loaded as the string
    'None', a naive time loaded beside the store's UTC ones, an item given twice or two items naming one memory
    loaded silently (deleting one then took the other's memory: it vanished from every search), and a row of the
    wrong length or a bad time said only 'not enough values to unpack' or 'fromisoformat: argument must be str'."""
    import json

    from sam_model.io import SAMFileError

    model = HashingEncoder(64)
    s = SAMStore(model)
    s.put(("memories", "anna"), "k2", {"content": "anna is vegetarian"})
    s.save(tmp_path / "st")
    SAMStore.load(tmp_path / "st", model)  # as saved: loads
    saved = tmp_path / "st" / "samstore.json"
    d = json.loads(saved.read_text())
    edit(d)
    saved.write_text(json.dumps(d))
    with pytest.raises(SAMFileError, match=r"samstore.json: unreadable LangGraph store \(" + says):
        SAMStore.load(tmp_path / "st", model)


@pytest.mark.parametrize("bad, says", [({"content": "x", "when": __import__("datetime").date(2026, 1, 2)},
                                        "Object of type date is not JSON serializable"),
                                       ({"content": "half an emoji \ud83d"}, "can.t encode character")])
def test_a_value_that_is_not_json_is_refused_at_put_naming_it(tmp_path, bad, says):
    """BaseStore.put asks for JSON values; a datetime or a lone surrogate was taken, and every later save of the
    whole store then failed with json's or the codec's message naming no item (found by review)."""
    s = SAMStore(HashingEncoder(64))
    s.put(("memories", "anna"), "ok", {"content": "anna is vegetarian"})
    with pytest.raises(TypeError, match=rf"store value for \('memories', 'anna'\)/bad is not JSON \(.*{says}"):
        s.batch([PutOp(("memories", "anna"), "bad", bad), PutOp(("memories", "anna"), "ok2", {"content": "y"})])
    assert [i.key for i in s.search(("memories",))] == ["ok"]  # nothing of the batch
    s.save(tmp_path / "st")
    assert [i.key for i in SAMStore.load(tmp_path / "st", HashingEncoder(64)).search(("memories",))] == ["ok"]


LOG = [{"kind": "user", "text": "my budget for the hotel is $300", "step": 0},
       {"kind": "action", "text": "CALL search_hotels(city=Lyon)", "step": 1},
       {"kind": "result", "text": "Hotel Lumiere, $240 a night, hotel_id H-4471", "step": 2},
       {"kind": "user", "text": "book the hotel within my budget", "step": 3},
       {"kind": "user", "text": "and a late checkout please", "step": 4}]


@pytest.mark.parametrize("how", ["state", "text"])
def test_a_search_at_a_decisions_step_leaves_its_event_and_later_ones_out(how):
    """A graph writing its log into the store (its decision's event included) searches at the decision's step, as
    ScopedMemory.search, the LangChain retriever and sam-serve take it: that event and later ones are no candidates,
    the earlier ones rank as the store ranks them with the same step (MemoryStore.search's ``before``), and an other
    namespace under the prefix is untouched; with no step, now (the decision's event first, as before). SAMStore took
    no step: every search was made now, the event the agent had just written came back first."""
    store = SAMStore(HashingEncoder(512))
    ns = ("log", "mia")
    for n, event in enumerate(LOG):
        store.put(ns, f"e{n}", event)
    store.put(ns + ("notes",), "n", {"content": "book the hotel within my budget, said last week"})
    kw = {"state": {"phase": "book_hotel", "uncertainty_flags": ["max_price"]}} if how == "state" else {}
    query = LOG[3]["text"]
    now = store.search(ns, query=query, limit=10, **kw)
    assert now[0].key == "e3"
    at = store.search(ns, query=query, limit=10, step=3, **kw)
    assert {i.key for i in at} == {"e0", "e1", "e2", "n"}
    memory = {store._data[i.namespace][i.key].memory: i for i in at}
    mine = [r.memory for space, rows in store._data.items() for r in rows.values() if space[:2] == ns]
    want = store.store.search(kw.get("state", {}), query, 10, ids=mine, fold=True, query_episode="///log.mia", step=3)
    if how == "text":  # the encoder's content query (a plain query), as the store's text search
        q = store.store.encoder.encode_text_queries([query])[0]
        want = store.store.search_vector(q, 10, (), ids=mine, fold=True, before=("///log.mia", 3))
    assert list(memory) == [h.id for h in want] and [i.score for i in at] == pytest.approx([h.score for h in want])
    assert asyncio.run(store.asearch(ns, query=query, limit=10, step=3, **kw)) == at
    with pytest.raises(ValueError, match="step must be a non-negative integer"):
        store.search(ns, query=query, step=-1, **kw)


def test_a_listing_at_a_decisions_step_leaves_its_item_and_later_ones_out():
    """A search without a query lists the items in write order; given a step it listed the items at or after it too
    (a graph reading its log as of a decision got the decision's own event and later ones), where a query of "" at
    the same step left them out. An item not indexed has no step and is listed as before."""
    store = SAMStore(HashingEncoder(64))
    ns = ("log", "mia")
    for n, event in enumerate(LOG):
        store.put(ns, f"e{n}", event)
    store.put(ns, "raw", {"content": "not indexed"}, index=False)
    store.put(("log", "bob"), "b", {"content": "another user's"})
    assert [i.key for i in store.search(ns, step=3)] == ["e0", "e1", "e2", "raw"]
    assert {i.key for i in store.search(ns, query="", step=3)} == {"e0", "e1", "e2", "raw"}
    assert [i.key for i in store.search(ns)] == ["e0", "e1", "e2", "e3", "e4", "raw"]  # now: every item
    assert [i.key for i in store.search(ns, step=3, limit=2, offset=1)] == ["e1", "e2"]


@pytest.mark.parametrize("label", ["a\nb", "a\tb", "a\rb", "a\x1bb", "a\u2028b"])
def test_a_namespace_label_with_a_control_character_is_refused_as_every_scope_is(label):
    """A put under ("u", "a\\nb") was stored under the episode ``///u.a\\nb`` (LangGraph refuses NUL alone), where
    every other entry point refuses a scope holding a control character (sam_model.limits.check_scope_characters):
    its ids and any log line or save showing them were broken. Now each op naming such a namespace is refused in one
    line naming it, and nothing is stored; a delete is taken (it stores nothing)."""
    s = SAMStore(HashingEncoder(64))
    s.put(("u", "anna"), "home", {"content": "anna lives in Lisbon"})
    ns = ("u", label)
    for op in (lambda: s.put(ns, "k", {"content": "a note"}), lambda: s.put(ns, "k", {"content": "x"}, index=False),
               lambda: s.batch([PutOp(("u", "bob"), "a", {"content": "bob note"}), PutOp(ns, "k", {"content": "x"})]),
               lambda: s.get(ns, "k"), lambda: s.search(ns, query="note"),
               lambda: s.search(ns, query="", state={"phase": "x"})):
        with pytest.raises(ValueError) as refused:
            op()
        said = str(refused.value)
        assert said.startswith(f"namespace {ns!r}, label 1 holds the control character {label[1]!r}"), said
        assert "give an id of printable characters" in said and "\n" not in said
    assert s.list_namespaces() == [("u", "anna")] and len(s.store) == 1
    assert {h.episode_id for h in s.store.get_all()} == {"///u.anna"}
    s.delete(ns, "k")  # nothing there: a delete stores nothing, and is taken


def test_a_saved_namespace_with_a_control_character_loads_with_a_warning_and_can_be_moved(tmp_path, caplog):
    """A save from before the rule may hold such a namespace: it loads (refusing it would lose the items), one
    warning line names it and says how to keep its items, and the way it says works."""
    import json

    model = HashingEncoder(64)
    s = SAMStore(model)
    s.put(("u", "anna"), "home", {"content": "anna lives in Lisbon"})
    s.save(tmp_path / "st")
    saved = tmp_path / "st" / "samstore.json"
    d = json.loads(saved.read_text())
    d["items"][0][0] = ["u", "an\nna"]
    saved.write_text(json.dumps(d))
    with caplog.at_level("WARNING", logger="sam_model.integrations.langgraph"):
        back = SAMStore.load(tmp_path / "st", model)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "namespace ('u', 'an\\nna') holds the control character '\\n'" in said[0]
    assert "put each again under a namespace of labels a put takes (give an id of printable" in said[0]
    (old,) = back.search(("u",))
    back.put(("u", "anna"), old.key, old.value)
    back.delete(tuple(old.namespace), old.key)
    assert view(back.search(("u",))) == [(("u", "anna"), "home", {"content": "anna lives in Lisbon"})]
    assert back.list_namespaces() == [("u", "anna")]


def test_a_search_tells_the_store_the_items_the_tasks_calls_used():
    """SAMStore passed no used= to the store's search, so a store whose config set used_order ordered nothing (and
    a reuse model was told no use): a search's used= (the keys of the items of the prefix's own namespace the
    task's earlier calls took values from, with the ranks of their latest use, or the keys alone) is told to it,
    used_order= orders that search alone, and a bad one is refused in one line naming the caller's key."""
    import dataclasses

    from sam_model.storeconfig import StoreConfig

    store = SAMStore(HashingEncoder(512))
    ns = ("log", "mia")
    for n, event in enumerate(LOG):
        store.put(ns, f"e{n}", event)
    query = "and a late checkout please"
    plain = [i.key for i in store.search(ns, query=query, limit=5)]
    last = plain[-1]
    assert plain[0] != last  # the model's order puts it last: the test can fail
    assert [i.key for i in store.search(ns, query=query, limit=5, used={last: 1}, used_order="model")][0] == last
    assert [i.key for i in store.search(ns, query=query, limit=5, used=[last], used_order="off")] == plain
    on = SAMStore(HashingEncoder(512), dataclasses.replace(StoreConfig(), used_order="latest"))
    for n, event in enumerate(LOG):
        on.put(ns, f"e{n}", event)
    assert [i.key for i in on.search(ns, query=query, limit=5, used={last: 1, "gone": 2})][0] == last
    assert [i.key for i in on.search(ns, query=query, limit=5, used={last: 1}, state={"phase": "book"})][0] == last
    for bad, says in (({last: 0}, rf"used\['{last}'\] must be the rank"), ([1], "used must be a mapping"),
                      ("e1", "used must be a mapping")):
        with pytest.raises((TypeError, ValueError), match=says) as err:
            store.search(ns, query=query, used=bad, used_order="model")
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="used= and used_order= order a ranked search"):
        store.search(ns, used=[last])


def test_used_takes_any_collection_of_keys_its_signature_names():
    """SAMStore.search's used= is typed a Mapping or a Collection of keys, but a list, tuple or set alone was taken:
    the keys of a mapping of ranks (ranks.keys()) or a deque were refused as 'got a Python dict_keys'. Any
    collection of keys is taken, as a list of them; a string or a generator (read once) is still refused."""
    store = SAMStore(HashingEncoder(512))
    ns = ("log", "mia")
    for n, event in enumerate(LOG):
        store.put(ns, f"e{n}", event)
    query = "and a late checkout please"
    plain = [i.key for i in store.search(ns, query=query, limit=5)]
    last = plain[-1]
    first = [i.key for i in store.search(ns, query=query, limit=5, used=[last], used_order="model")]
    assert first[0] == last != plain[0]
    for keys in ({last: 1}.keys(), collections.deque([last])):
        assert [i.key for i in store.search(ns, query=query, limit=5, used=keys, used_order="model")] == first
    for bad in ("e1", (k for k in [last])):
        with pytest.raises(TypeError, match="used must be a mapping"):
            store.search(ns, query=query, used=bad, used_order="model")


@pytest.mark.parametrize("label", ["Jose\u0301", "\u0430nna", "an\u200bna", "an\nna"])
def test_a_saved_namespace_a_put_no_longer_takes_is_read_by_its_own_name(tmp_path, label):
    """A save from before a rule holds ("u", "José") written in NFD (refused since 2026-12-07, as a mixed, invisible
    or control character is): a get or search naming it was refused, so its user's items were reached only by a
    search over a shorter prefix, among every other user's. A read of a namespace that holds items is taken, as
    ScopedMemory reads a scope it holds memories under; a put under it, and a read of one holding none, are not."""
    import json

    model = HashingEncoder(64)
    s = SAMStore(model)
    s.put(("u", "anna"), "home", {"content": "anna lives in Lisbon"})
    s.put(("u", "bob"), "home", {"content": "bob lives in Porto"})
    s.save(tmp_path / "st")
    saved = tmp_path / "st" / "samstore.json"
    d = json.loads(saved.read_text())
    d["items"][0][0] = ["u", label]
    saved.write_text(json.dumps(d))
    back = SAMStore.load(tmp_path / "st", model)
    ns = ("u", label)
    assert back.get(ns, "home").value == {"content": "anna lives in Lisbon"}
    assert [i.key for i in back.search(ns, query="Lisbon")] == ["home"]
    assert [i.key for i in back.search(ns, query="", state={"phase": "x"})] == ["home"]
    assert [i.key for i in back.search(ns)] == ["home"]  # its own items, not bob's
    for op in (lambda: back.put(ns, "k", {"content": "a note"}), lambda: back.get(("u", label, "x"), "home"),
               lambda: back.search(("v", label), query="Lisbon")):
        with pytest.raises(ValueError, match=f"^namespace \\(.*\\), label 1 {re.escape(scope_flaw(label).what)}"):
            op()
    back.delete(ns, "home")
    with pytest.raises(ValueError):  # it holds none now
        back.get(ns, "home")


def test_a_read_of_a_printable_namespace_does_not_scan_the_store(monkeypatch):
    """Whether a namespace holds items (what lets a read name a label no put takes) is asked only of a label that
    has a flaw, as check_scope asks it: asked first, every get and search scanned every namespace stored."""
    s = SAMStore(HashingEncoder(64))
    for i in range(3):
        s.put(("u", f"user{i}"), "home", {"content": f"user{i} lives in Lisbon"})
    asked = []
    monkeypatch.setattr(s, "_holds", lambda prefix: asked.append(prefix) or False)
    assert s.get(("u", "user1"), "home").value == {"content": "user1 lives in Lisbon"}
    assert [i.key for i in s.search(("u", "user2"), query="Lisbon")] == ["home"]
    assert [i.key for i in s.search(("u", "user0"), query="", state={"phase": "x"})] == ["home"]
    assert asked == []
    with pytest.raises(ValueError, match="label 1"):
        s.get(("u", "an\nna"), "home")
    assert asked == [("u", "an\nna")]
