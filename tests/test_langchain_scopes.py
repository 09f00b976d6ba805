"""Every LangChain entry point of the SAM retriever is scoped: two users' memories, and each path returns only the
caller's (run config or keyword arguments), a missing scope is refused on every path (never widened), and every
scope is searched only when asked for explicitly. Against the real langchain-core and langgraph packages."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
pytest.importorskip("langgraph", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")

from langchain_core.tools import create_retriever_tool  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from sam_model.integrations.langchain import SAMLangChainRetriever, SAMVectorStore  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

NO_SCOPE = "a missing scope is refused"


@pytest.fixture(scope="module")
def memory() -> ScopedMemory:
    m = ScopedMemory(HashingEncoder(256), k=10)
    m.add("anna wants a refund for the Lisbon flight", user_id="anna")
    m.add("bob wants a refund for the Boston hotel", user_id="bob")
    m.add("refund to bob's card ending 4421", user_id="bob", agent_id="billing")
    return m


def owners(docs) -> set:
    return {d.metadata["user_id"] for d in docs}


def tool_owners(text: str) -> set:
    return {u for u in ("anna", "bob") if f"{u} wants" in text or f"{u}'s" in text}


def run_async(coro):
    return asyncio.run(coro)


def entry_points(r: SAMLangChainRetriever, q: str, config: dict | None, kwargs: dict) -> dict:
    """name -> the documents (or tool text) each Runnable path returns for the same query and scope."""
    async def events():
        docs = []
        async for ev in r.astream_events(q, config, version="v2", **kwargs):
            if ev["event"] == "on_retriever_end":
                docs = ev["data"]["output"]
        return docs

    async def astream():
        return [chunk async for chunk in r.astream(q, config, **kwargs)][-1]

    out = {"invoke": r.invoke(q, config, **kwargs), "ainvoke": run_async(r.ainvoke(q, config, **kwargs)),
           "batch": r.batch([q, q], config, **kwargs)[1], "abatch": run_async(r.abatch([q, q], config, **kwargs))[1],
           "stream": list(r.stream(q, config, **kwargs))[-1], "astream": run_async(astream()),
           "astream_events": run_async(events())}
    if not kwargs:  # tools take the scope from the run config (their caller's), as LangChain passes it
        tool = create_retriever_tool(r, "memories", "the user's memories")
        out["create_retriever_tool"] = tool.invoke({"query": q}, config)
        out["create_retriever_tool (async)"] = run_async(tool.ainvoke({"query": q}, config))
        out["as_tool"] = r.as_tool(name="recall", description="memories").invoke(q, config)
        out["langgraph node"] = graph(r).invoke({"query": q, "docs": []}, config)["docs"]
        out["langgraph node (async)"] = run_async(graph(r).ainvoke({"query": q, "docs": []}, config))["docs"]
    return out


class S(TypedDict):
    query: str
    docs: list


def graph(r: SAMLangChainRetriever):
    """A LangGraph node that calls the retriever with no config of its own: the node's run config is used."""
    g = StateGraph(S)
    g.add_node("recall", lambda s: {"docs": r.invoke(s["query"])})
    g.add_edge(START, "recall")
    g.add_edge("recall", END)
    return g.compile()


@pytest.mark.parametrize("how", ["config", "kwargs"])
def test_every_entry_point_returns_only_the_callers_memories(memory, how):
    r = SAMLangChainRetriever(memory=memory, k=10)
    for user in ("anna", "bob"):
        config, kwargs = ({"configurable": {"user_id": user}}, {}) if how == "config" else (None, {"user_id": user})
        got = entry_points(r, "refund", config, kwargs)
        assert len(got) >= (12 if how == "config" else 7)
        for name, docs in got.items():
            who = tool_owners(docs) if isinstance(docs, str) else owners(docs)
            assert who == {user}, f"{name} for {user} returned memories of {who}"
        assert len(got["invoke"]) == (1 if user == "anna" else 2)
    billing = r.invoke("refund", {"configurable": {"user_id": "bob", "agent_id": "billing"}})
    assert [d.metadata["agent_id"] for d in billing] == ["billing"]


def test_a_missing_scope_is_refused_on_every_path_and_all_scopes_is_explicit(memory):
    r = SAMLangChainRetriever(memory=memory, k=10)
    calls = {"invoke": lambda: r.invoke("refund"), "ainvoke": lambda: run_async(r.ainvoke("refund")),
             "batch": lambda: r.batch(["refund"]), "abatch": lambda: run_async(r.abatch(["refund"])),
             "stream": lambda: list(r.stream("refund")),
             "create_retriever_tool": lambda: create_retriever_tool(r, "m", "m").invoke({"query": "refund"}),
             "as_tool": lambda: r.as_tool(name="recall", description="m").invoke("refund"),
             "langgraph node": lambda: graph(r).invoke({"query": "refund", "docs": []})}
    for name, call in calls.items():
        with pytest.raises(ValueError, match=NO_SCOPE):
            call()
            pytest.fail(f"{name} searched without a scope")
    everyone = r.invoke("refund", all_scopes=True)
    assert owners(everyone) == {"anna", "bob"}
    assert owners(r.invoke("refund", {"configurable": {"sam_all_scopes": True}})) == {"anna", "bob"}
    assert owners(SAMLangChainRetriever(memory=memory, all_scopes=True).invoke("refund")) == {"anna", "bob"}
    bound = SAMLangChainRetriever(memory=memory, user_id="anna")
    assert owners(bound.invoke("refund")) == {"anna"}
    with pytest.raises(ValueError, match="bound to user_id='anna'"):
        bound.invoke("refund", {"configurable": {"user_id": "bob"}})
    with pytest.raises(TypeError, match="unknown argument"):
        r.invoke("refund", user_id="anna", usr="bob")


def test_vector_store_is_scoped_and_follows_langchains_contract():
    memory = ScopedMemory(HashingEncoder(256), k=10)
    anna = SAMVectorStore(memory, user_id="anna")
    ids = anna.add_texts(["anna flies to Lisbon", "anna is vegetarian"], [{"topic": "travel"}, {"topic": "food"}],
                         ids=["t1", "t2"])
    assert ids == ["t1", "t2"]
    from langchain_core.documents import Document

    bob_ids = SAMVectorStore(memory).add_documents([Document("bob flies to Boston", metadata={"topic": "travel"})],
                                                   user_id="bob")
    assert owners(anna.similarity_search("flies", k=5)) == {"anna"}
    assert [d.id for d in anna.get_by_ids(["t2", "nope"])] == ["t2"]
    assert anna.get_by_ids(["t2"])[0].page_content == "anna is vegetarian"
    assert [d.page_content for d in anna.similarity_search("flies", filter={"topic": "food"})] == ["anna is vegetarian"]
    docs, score = anna.similarity_search_with_score("Lisbon", k=1)[0]
    assert docs.id == "t1" and score > 0
    store = SAMVectorStore(memory)
    with pytest.raises(ValueError, match=NO_SCOPE):
        store.similarity_search("flies")
    assert owners(store.similarity_search("flies", user_id="bob")) == {"bob"}
    assert owners(store.as_retriever(search_kwargs={"user_id": "bob"}).invoke("flies")) == {"bob"}
    with pytest.raises(ValueError, match=NO_SCOPE):
        store.as_retriever().invoke("flies")
    assert owners(store.similarity_search("flies", all_scopes=True, k=5)) == {"anna", "bob"}
    anna.delete(["t1"])
    assert anna.get_by_ids(["t1"]) == [] and len(memory.get_all(user_id="anna")["results"]) == 1
    with pytest.raises(KeyError):
        anna.delete(["t1"])
    with pytest.raises(ValueError, match="no scope"):  # by id as by search: an unbound store read bob's (review)
        store.get_by_ids(bob_ids)
    with pytest.raises(ValueError, match="no scope"):
        store.delete(bob_ids)
    assert SAMVectorStore(memory, all_scopes=True).get_by_ids(bob_ids)[0].page_content == "bob flies to Boston"
    made = SAMVectorStore.from_texts(["mia likes aisle seats"], HashingEncoder(64), user_id="mia")
    assert made.similarity_search("aisle")[0].metadata["user_id"] == "mia"


def test_tool_call_memories_in_a_node_keep_the_runs_scopes():
    """Called without a config inside a LangGraph node, it searches with the run's user and thread (it built a
    new config, whose 'configurable' replaced the run's: a retriever bound to an agent then got every user's)."""
    from langchain_core.messages import AIMessage, HumanMessage

    from sam_model.integrations.langchain import tool_call_memories

    m = ScopedMemory(HashingEncoder(256), k=10)
    m.add("anna's card ending 1111, refund Lisbon", user_id="anna", agent_id="billing")
    m.add("bob's card ending 4421, refund Boston", user_id="bob", agent_id="billing")
    msgs = [HumanMessage("refund my card"), AIMessage("", tool_calls=[{"name": "refund", "args": {"card": "x"},
                                                                        "id": "c1"}])]
    r = SAMLangChainRetriever(memory=m, agent_id="billing")

    class S(TypedDict):
        out: list

    def node(s):
        return {"out": [d.metadata["user_id"] for d in tool_call_memories(r, msgs)["c1"]]}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    assert g.compile().invoke({"out": []}, {"configurable": {"user_id": "anna"}})["out"] == ["anna"]


def test_vector_store_ids_are_the_scopes_own(memory):
    m = ScopedMemory(HashingEncoder(256))
    anna, bob, mallory = (SAMVectorStore(m, user_id=u) for u in ("anna", "bob", "mallory"))
    passport = anna.add_texts(["anna's passport is X123"])[0]
    assert mallory.get_by_ids([passport]) == [] and anna.get_by_ids([passport])[0].page_content.startswith("anna")
    with pytest.raises(KeyError, match="not in the store's scopes"):
        mallory.delete([passport])
    assert anna.get_by_ids([passport])  # still there
    # the same given id in two scopes: two memories, each found and deleted in its own scope only
    anna.add_texts(["anna's note"], ids=["doc1"])
    bob.add_texts(["bob's note"], ids=["doc1"])
    assert anna.get_by_ids(["doc1"])[0].page_content == "anna's note"
    assert bob.get_by_ids(["doc1"])[0].page_content == "bob's note"
    bob.delete(["doc1"])
    assert anna.get_by_ids(["doc1"])[0].page_content == "anna's note" and bob.get_by_ids(["doc1"]) == []
    # one store, scopes per call: the same given id in two scopes is two memories, never one overwritten
    store = SAMVectorStore(m, all_scopes=True)  # reads by id without a scope only with all_scopes
    store.add_texts(["anna's draft"], ids=["d"], user_id="anna")
    store.add_texts(["bob's draft"], ids=["d"], user_id="bob")
    with pytest.raises(ValueError, match="in 2 scopes"):
        store.get_by_ids(["d"])
    store.delete(["d"], user_id="anna")  # anna's only
    assert [d.page_content for d in store.get_by_ids(["d"])] == ["bob's draft"]
    # given again in one scope: the text replaces its memory (no orphan left behind)
    anna.add_texts(["anna's new note"], ids=["doc1"])
    assert [d.page_content for d in anna.get_by_ids(["doc1"])] == ["anna's new note"]
    assert [r["memory"] for r in m.get_all(user_id="anna")["results"]] == ["anna's passport is X123",
                                                                           "anna's new note"]


def test_all_scopes_must_be_a_bool_and_metadata_cannot_pose_as_the_scope(memory):
    r = SAMLangChainRetriever(memory=memory)
    with pytest.raises(TypeError, match="all_scopes must be true or false"):
        r.invoke("refund", {"configurable": {"sam_all_scopes": "false"}})
    with pytest.raises(TypeError, match="all_scopes must be true or false"):
        memory.get_all(all_scopes=[0])
    m = ScopedMemory(HashingEncoder(256))
    anna = SAMVectorStore(m, user_id="anna")
    anna.add_texts(["anna's note"], metadatas=[{"user_id": "bob", "score": 99, "id": "bob#0", "topic": "x"}])
    doc = anna.similarity_search("note")[0]
    assert doc.metadata["user_id"] == "anna" and doc.metadata["score"] != 99 and doc.metadata["topic"] == "x"


def test_the_run_scope_is_read_from_run_id_too_and_k_zero_is_refused():
    """A run_id keyword (ScopedMemory's own name) was ignored, widening a search to every run of the user, and
    ``k=0`` was taken as the default (found by review). ``configurable.run_id`` is not a scope: LangGraph servers put
    the run's own UUID there beside ``thread_id`` (a second review); ``sam_run_id`` is SAM's key for it."""
    import uuid

    m = ScopedMemory(HashingEncoder(256), k=10)
    m.add("run t1: my PIN is 4321", user_id="mia", run_id="t1")
    m.add("run t2: my dog is Rex", user_id="mia", run_id="t2")
    r = SAMLangChainRetriever(memory=m, k=10)
    docs = r.invoke("PIN", {"configurable": {"user_id": "mia", "sam_run_id": "t2"}})
    assert [d.metadata["run_id"] for d in docs] == ["t2"]
    assert [d.metadata["run_id"] for d in r.invoke("PIN", user_id="mia", run_id="t1")] == ["t1"]
    served = {"configurable": {"user_id": "mia", "thread_id": "t2", "run_id": str(uuid.uuid4())}}
    assert [d.metadata["run_id"] for d in r.invoke("PIN", served)] == ["t2"]
    with pytest.raises(ValueError, match="both name the run scope"):
        r.invoke("PIN", {"configurable": {"user_id": "mia", "sam_run_id": "t2", "thread_id": "t1"}})
    with pytest.raises(ValueError, match="^k must be an integer from 1 to"):  # it said "limit must be ..."
        r.invoke("PIN", {"configurable": {"user_id": "mia"}}, k=0)
    with pytest.raises(ValueError, match="k\n.*greater than or equal to 1"):  # pydantic's, naming the field
        SAMLangChainRetriever(memory=m, k=-1)
    with pytest.raises(ValueError, match="from 1 to"):
        SAMVectorStore(m, user_id="mia").similarity_search("PIN", k=0)


def test_vector_store_deletes_and_replaces_a_chunked_memory_by_its_id():
    """Found by review: on a chunking store delete(["doc1"]) answered True and deleted nothing (the memory's id is
    none of the store's entries, only its chunks are), and an id given again left the old memory searchable."""
    from sam_model.storeconfig import StoreConfig

    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 40, "overlap": 10}), k=10)
    store = SAMVectorStore(memory, user_id="alice")
    long = "alice's PIN is 4242\nshe flies to Boston on Friday\nher passport is X1234567\n"
    assert store.add_texts([long], ids=["doc1"]) == ["doc1"]
    assert len(memory.store.get_all(user_id="alice")) > 1  # chunks
    assert store.delete(["doc1"]) and memory.store.get_all(user_id="alice") == []
    store.add_texts([long], ids=["d"])
    store.add_texts(["a short replacement"], ids=["d"])
    assert [r["memory"] for r in memory.get_all(user_id="alice")["results"]] == ["a short replacement"]
    store.add_texts([long])
    (hit,) = [d for d in store.similarity_search("passport", k=5) if d.page_content != "a short replacement"]
    assert "/" not in hit.id and store.get_by_ids([hit.id])[0].page_content == long  # the memory's id, whole
    store.delete([hit.id])
    assert [r["memory"] for r in memory.get_all(user_id="alice")["results"]] == ["a short replacement"]


def test_vector_store_calls_from_threads_do_not_race_on_its_ids(run_threads):
    """Found by review: the given-id map was read (searches, deletes) while another thread's add_texts wrote it:
    'dictionary changed size during iteration' in 13 of 30 searches. Given ids now live in the memories' metadata;
    adds, searches and deletes by id from threads still see one consistent store."""
    memory = ScopedMemory(HashingEncoder(64), k=2)
    store = SAMVectorStore(memory, user_id="mia")
    store.add_texts([f"old note {i}" for i in range(60)], ids=[f"old{i}" for i in range(60)])
    errors = run_threads((lambda i: store.add_texts([f"note {i}"], ids=[f"a{i}"]), 60),
                         (lambda i: store.similarity_search("note", k=2), 30), (lambda i: store.delete([f"old{i}"]), 30))
    assert errors == []
    assert [d.id for d in store.get_by_ids([f"a{i}" for i in range(60)])] == [f"a{i}" for i in range(60)]
    assert [d.id for d in store.get_by_ids([f"old{i}" for i in range(60)])] == [f"old{i}" for i in range(30, 60)]


def test_given_ids_hold_for_every_store_over_the_memory_and_after_a_save(tmp_path):
    """The given ids lived in the store object: a second store over the same memory (one per request), or the
    memory saved and loaded, did not know "pin": get_by_ids found nothing, delete raised, and an add_texts of
    "pin" put a second memory beside the first."""
    memory = ScopedMemory(HashingEncoder(64))
    SAMVectorStore(memory, user_id="mia").add_texts(["my PIN is 4242"], [{"topic": "bank"}], ids=["pin"])
    again = SAMVectorStore(memory, user_id="mia")
    [doc] = again.get_by_ids(["pin"])
    assert doc.id == "pin" and doc.page_content == "my PIN is 4242" and doc.metadata["topic"] == "bank"
    assert "langchain_id" not in doc.metadata and again.similarity_search("PIN")[0].id == "pin"
    again.add_texts(["my PIN is 1111"], ids=["pin"])  # replaces, not beside
    assert [d.page_content for d in again.similarity_search("PIN", k=5)] == ["my PIN is 1111"]
    assert SAMVectorStore(memory, user_id="bob").get_by_ids(["pin"]) == []  # another scope's id is not there
    memory.save(tmp_path / "mem")
    back = SAMVectorStore(ScopedMemory.load(tmp_path / "mem", memory.store.encoder), user_id="mia")
    assert [d.page_content for d in back.get_by_ids(["pin"])] == ["my PIN is 1111"]
    back.delete(["pin"])
    assert back.get_by_ids(["pin"]) == [] and back.similarity_search("PIN") == []
    with pytest.raises(ValueError, match="metadatas\\[0\\].langchain_id is the store's own key"):
        back.add_texts(["x"], [{"langchain_id": "other"}])


def test_add_texts_refuses_a_string_and_checks_every_text_before_writing_any():
    """Found walking the README: add_texts("I prefer aisle seats") stored one memory per character, ids="abc" named
    three texts a, b, c, and a bad text or metadata after good ones left those stored with no ids returned."""
    memory = ScopedMemory(HashingEncoder(64))
    store = SAMVectorStore(memory, user_id="mia")
    with pytest.raises(TypeError, match=r"^texts must be a list .*got str 'hello'"):
        store.add_texts("hello")
    with pytest.raises(TypeError, match=r"^ids must be a list"):
        store.add_texts(["x1", "x2", "x3"], ids="abc")
    with pytest.raises(TypeError, match=r"^metadatas must be a list"):
        store.add_texts(["x1"], {"topic": "seats"})
    with pytest.raises(ValueError, match=r"^texts\[1\] must not be empty"):
        store.add_texts(["good one", "  "])
    with pytest.raises(TypeError, match=r"^texts\[1\] must be a string"):
        store.add_texts(["good one", 7])
    with pytest.raises(TypeError, match=r"^metadatas\[1\]\.b must be a string"):
        store.add_texts(["good one", "good two"], [{"a": 1}, {"b": object()}])
    assert memory.get_all(user_id="mia")["results"] == []  # nothing of a refused batch
    assert len(store.add_texts(t for t in ["aisle seat", "window seat"])) == 2  # any iterable of texts
    assert [r["memory"] for r in memory.get_all(user_id="mia")["results"]] == ["aisle seat", "window seat"]


def test_given_ids_do_not_name_the_memories_written_after_a_reset():
    """Found walking the README: after memory.reset() the scope's ids start again, so the id "pin" given before named
    the next memory written ("I like green tea"): get_by_ids returned it and add_texts(ids=["pin"]) deleted it."""
    memory = ScopedMemory(HashingEncoder(64))
    store = SAMVectorStore(memory, user_id="mia")
    store.add_texts(["my PIN is 4242"], ids=["pin"])
    memory.reset()
    memory.add("I like green tea", user_id="mia")
    assert store.get_by_ids(["pin"]) == []
    with pytest.raises(KeyError, match="'pin' is not in the store's scopes"):
        store.delete(["pin"])
    store.add_texts(["my PIN is 0000"], ids=["pin"])
    assert sorted(r["memory"] for r in memory.get_all(user_id="mia")["results"]) == ["I like green tea",
                                                                                     "my PIN is 0000"]
    assert [d.page_content for d in store.get_by_ids(["pin"])] == ["my PIN is 0000"]


def test_a_searched_document_added_back_replaces_its_memory():
    """LangChain's add_documents passes each Document's id: a Document from a search (its memory's own id, "mia#0")
    added back with new words went in beside its memory, both then shown as "mia#0" (get_by_ids and delete reached
    only the new one, the old words stayed searchable; found by review). It now replaces the memory, in the
    memory's own scopes, and another user's memory id given by mia names nothing of bob's."""
    memory = ScopedMemory(HashingEncoder(64), k=10)
    mia, bob = SAMVectorStore(memory, user_id="mia"), SAMVectorStore(memory, user_id="bob")
    mia.add_texts(["mia's PIN is 4242", "mia likes aisle seats"])
    bob.add_texts(["bob's PIN is 9999"])
    memory.add("the bot's note: PIN reset sent", user_id="mia", agent_id="bot")
    docs = {d.page_content: d for d in mia.similarity_search("PIN", k=10)}
    pin, note = docs["mia's PIN is 4242"], docs["the bot's note: PIN reset sent"]
    pin.page_content, note.page_content = "mia's PIN is 1111", "the bot's note: PIN changed"
    assert mia.add_documents([pin, note]) == [pin.id, note.id]
    assert sorted((d.id, d.page_content) for d in mia.similarity_search("PIN", k=10)) == sorted(
        [(pin.id, "mia's PIN is 1111"), (note.id, "the bot's note: PIN changed"), ("mia#1", "mia likes aisle seats")])
    assert [r["memory"] for r in memory.get_all(user_id="mia", agent_id="bot")["results"]] == [
        "the bot's note: PIN changed"]  # replaced where it was: in the bot's scope
    assert [d.page_content for d in mia.get_by_ids([pin.id])] == ["mia's PIN is 1111"]
    mia.delete([pin.id])
    assert "mia's PIN" not in str([r["memory"] for r in memory.get_all(user_id="mia")["results"]])
    bobs = bob.similarity_search("PIN")[0]
    mia.add_texts(["mia's own text"], ids=[bobs.id])  # bob's memory id, given by mia: a new id of mia's
    assert [d.page_content for d in bob.get_by_ids([bobs.id])] == ["bob's PIN is 9999"]
    assert [d.page_content for d in mia.get_by_ids([bobs.id])] == ["mia's own text"]


def test_a_given_id_that_a_store_shows_it_also_finds():
    """A store of user mia searches her bot's memories too and shows their given ids ("pin2"), but get_by_ids and
    delete looked given ids up in mia's own scope only: the Document it returned named a memory it could not find.
    Now they reach what the search reaches; an id given in two such scopes is ambiguous; mia's own comes first."""
    memory = ScopedMemory(HashingEncoder(64))
    mia, bots = SAMVectorStore(memory, user_id="mia"), SAMVectorStore(memory, user_id="mia", agent_id="bot")
    bots.add_texts(["the bot's PIN note"], ids=["pin2"])
    [shown] = [d for d in mia.similarity_search("PIN note", k=5) if d.page_content == "the bot's PIN note"]
    assert shown.id == "pin2" and [d.page_content for d in mia.get_by_ids(["pin2"])] == ["the bot's PIN note"]
    assert SAMVectorStore(memory, user_id="bob").get_by_ids(["pin2"]) == []  # another user's: not there
    SAMVectorStore(memory, user_id="mia", agent_id="other").add_texts(["other bot's note"], ids=["pin2"])
    with pytest.raises(ValueError, match="'pin2' was given to add_texts in 2 scopes"):
        mia.get_by_ids(["pin2"])
    memory.add("mia's own note", user_id="mia", metadata={"langchain_id": "pin2"})  # her own scope's "pin2" too
    assert [d.page_content for d in mia.get_by_ids(["pin2"])] == ["mia's own note"]  # that one, not ambiguous
    mia.delete(["pin2"])
    assert [d.page_content for d in bots.get_by_ids(["pin2"])] == ["the bot's PIN note"]  # the bot's stays


def test_given_ids_past_a_listing_page_are_found_and_replaced():
    """The given ids are read in one pass over the scope's memories per call (not a pass per id): that pass must
    see every memory, not the first page of 100 a listing returns by default."""
    memory = ScopedMemory(HashingEncoder(64))
    store = SAMVectorStore(memory, user_id="mia")
    ids = [f"doc{i}" for i in range(150)]
    store.add_texts([f"note {i}" for i in range(150)], ids=ids)
    assert [d.id for d in store.get_by_ids(ids)] == ids
    store.add_texts(["note 149, revised", "note 0, revised"], ids=["doc149", "doc0"])
    assert len(memory.get_all(user_id="mia", limit=None)["results"]) == 150  # replaced, not beside
    assert [d.page_content for d in store.get_by_ids(["doc149", "doc0"])] == ["note 149, revised", "note 0, revised"]
    store.delete(ids[100:])
    assert len(store.get_by_ids(ids)) == 100


def test_add_texts_replaces_the_memory_get_by_ids_finds_and_nothing_outside_the_stores_reach():
    """add_texts replaced a given id only in exactly its own scopes, while get_by_ids and delete reached the scopes
    the store's search reaches: a store of mia found her bot's "pin", and adding "pin" put a second "pin" beside it
    (both shown as "pin", get_by_ids returning one). One rule now: add_texts replaces the memory get_by_ids finds,
    where it is; a narrower store does not reach a wider scope's memory, another user's is never touched, and an id
    that names memories of two scopes is refused before anything is written."""
    memory = ScopedMemory(HashingEncoder(64), k=10)
    mia, bots = SAMVectorStore(memory, user_id="mia"), SAMVectorStore(memory, user_id="mia", agent_id="bot")
    bob = SAMVectorStore(memory, user_id="bob")
    bots.add_texts(["the bot's PIN note"], ids=["pin"])
    bob.add_texts(["bob's PIN note"], ids=["pin"])
    assert [d.page_content for d in mia.get_by_ids(["pin"])] == ["the bot's PIN note"]
    assert mia.add_texts(["mia's PIN is 1111"], ids=["pin"]) == ["pin"]
    assert [(d.id, d.page_content) for d in mia.similarity_search("PIN", k=10)] == [("pin", "mia's PIN is 1111")]
    assert [d.page_content for d in mia.get_by_ids(["pin"])] == [d.page_content for d in bots.get_by_ids(["pin"])] \
        == [r["memory"] for r in memory.get_all(user_id="mia", agent_id="bot")["results"]] == ["mia's PIN is 1111"]
    assert [r["memory"] for r in memory.get_all(user_id="bob")["results"]] == ["bob's PIN note"]
    # the store of mia's bot does not reach mia's own scope: its "note" is its own, each store finds and replaces its
    mia.add_texts(["mia's note"], ids=["note"])
    bots.add_texts(["the bot's note"], ids=["note"])
    mia.add_texts(["mia's note, revised"], ids=["note"])
    assert [d.page_content for d in mia.get_by_ids(["note"])] == ["mia's note, revised"]
    assert [d.page_content for d in bots.get_by_ids(["note"])] == ["the bot's note"]
    SAMVectorStore(memory, user_id="mia", agent_id="other").add_texts(["the other bot's x"], ids=["x"])
    bots.add_texts(["the bot's x"], ids=["x"])
    before = [r["memory"] for r in memory.get_all(all_scopes=True, limit=None)["results"]]
    with pytest.raises(ValueError, match="^id 'x' was given to add_texts in 2 scopes: give user_id, agent_id"):
        mia.add_texts(["a fresh text", "x, revised"], ids=["fresh", "x"])
    assert [r["memory"] for r in memory.get_all(all_scopes=True, limit=None)["results"]] == before


def test_a_searched_document_added_back_leaves_sams_fields_out_of_its_metadata():
    """A Document from a search carries SAM's fields in its metadata (score, why, scopes, times, ...); added back
    (add_documents, or aadd_documents) they were stored in the memory's metadata, stale, beside its own. Now the
    fields the store itself sets (DOCUMENT_FIELDS, the one list document() writes) are left out, the Document's own
    metadata kept."""
    from sam_model.integrations.langchain import DOCUMENT_FIELDS
    from sam_model.storeconfig import StoreConfig

    memory = ScopedMemory(HashingEncoder(64), k=10)
    mia = SAMVectorStore(memory, user_id="mia")
    mia.add_texts(["my PIN is 4242", "I like aisle seats"], [{"topic": "bank"}, {"topic": "travel"}])
    [doc] = mia.similarity_search("PIN", k=1)
    assert {"score", "why", "user_id", "created_at"} <= set(doc.metadata) and doc.metadata["topic"] == "bank"
    doc.page_content = "my PIN is 1111"
    mia.add_documents([doc])
    [seats] = [d for d in mia.similarity_search("aisle", k=5) if d.page_content == "I like aisle seats"]
    asyncio.run(mia.aadd_documents([seats]))
    assert sorted((r["memory"], r["metadata"].get("topic"), sorted(set(r["metadata"]) & set(DOCUMENT_FIELDS)))
                  for r in memory.get_all(user_id="mia")["results"]) == [("I like aisle seats", "travel", []),
                                                                           ("my PIN is 1111", "bank", [])]
    with pytest.raises(TypeError, match=r"^documents\[0\] must be a LangChain Document"):
        mia.add_documents(doc)
    # every field a result carries is one the list names (a chunk's too), so none can slip past it
    chunky = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 40, "overlap": 10}), k=10)
    chunky.add("alice's PIN is 4242\nshe flies to Boston on Friday\nher passport is X1234567\n", user_id="alice")
    found = chunky.search("passport", user_id="alice")["results"] + memory.search("PIN", user_id="mia")["results"]
    assert "chunk" in found[0] and {k for r in found for k in r} - {"memory", "metadata"} <= set(DOCUMENT_FIELDS)
