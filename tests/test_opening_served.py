"""A task_opening model served on every entry point (sam_model.models.opening): the memory store, ScopedMemory,
sam-serve's HTTP API, the memory bank (SAMMemory) and LangGraph's store record each memory's opens_task by
MemoryRecorder's rule, keep it in their saves with the recorder's task openers, and rank as evaluate.py ranks the
same memories (their MemoryRecords' vectors given to a store). Before, the store refused to encode for such a model,
the bank's units could not say the flag, and a save forgot both the flags and which memory opened its task."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from serving import tiny_export

from sam_model.data.examples import episode_memories
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.io import SAMFileError
from sam_model.memory import ScopedMemory
from sam_model.store import MemoryStore, store_config_of

# The user states the task, then says the same words again: only the opening flag tells the two apart.
TASK = [("system", "You are a coding agent."), ("user", "fix foo in bar.py"), ("agent", "searching for foo"),
        ("tool", "bar.py:12: def foo():"), ("user", "fix foo in bar.py"), ("agent", "reading bar.py")]
STATE = {"phase": "collect", "uncertainty_flags": ["file"]}
NOW = "which file?"


def _events(episode: str, start: int = 0, task=TASK) -> list:
    return [parse_event({"episode_id": episode, "step": start + s, "kind": k, "text": t})
            for s, (k, t) in enumerate(task)]


def _weigh_openings(retriever, bias: float) -> None:
    """w(v_s) = bias for every state: the memory that opened its task gains ``bias`` (a trained head learns this)."""
    with torch.no_grad():
        retriever.encoder.net.opening.head.bias.fill_(bias)


@pytest.fixture(scope="module")
def opening(tiny_bert_dir, tmp_path_factory):
    """A tiny SAM network with task_opening, its weight set so the opening memory ranks first."""
    from sam_model.retriever import SAMRetriever

    sam = SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path_factory.mktemp("export") / "export",
                                        task_opening=True), device="cpu")
    _weigh_openings(sam, 5.0)
    return sam


def _evaluated(sam, events: list) -> MemoryStore:
    """evaluate.py's path: the log's MemoryRecords (episode_memories), encoded in a batch, given to a store."""
    records = episode_memories(Episode(events[0].episode_id, tuple(events)))
    store = MemoryStore(sam.encoder, store_config_of(sam))
    store.add(records, sam.encoder.encode_memories(records))
    return store


def _ranked(store: MemoryStore, episode: str, **scopes) -> list[tuple]:
    return [(h.id, round(h.score, 5)) for h in store.search(STATE, NOW, 6, episode_id=episode, **scopes)]


def test_the_store_records_and_encodes_the_flag_as_evaluate_does(opening):
    """Events added one add at a time (an agent writing as it goes) are stored with the flags and vectors of
    evaluate.py's records, and ranked alike: the task's statement first, its repeat below it."""
    events = _events("ep")
    live = MemoryStore(opening.encoder, store_config_of(opening))
    for e in events:
        live.add([e])
    want = _evaluated(opening, events)
    assert [live.opens_task(f"ep#{s}") for s in range(6)] == [False, True, False, False, False, False]
    np.testing.assert_allclose(live.index.get_vectors(live.ids()), want.index.get_vectors(want.ids()), atol=1e-6)
    got, expected = _ranked(live, "ep"), _ranked(want, "ep")
    assert [i for i, _ in got] == [i for i, _ in expected]
    # the vectors agree to 1e-6 (above), so the scores to about 1e-5: rounding them to 5 decimals and comparing
    # exactly failed whenever a score sat on a rounding boundary (5.32535 against 5.32534)
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-4)
    assert got[0][0] == "ep#1"


def _add(memory: ScopedMemory, user: str, task=TASK) -> list[str]:
    return [r["id"] for r in memory.add([{"kind": k, "text": t} for k, t in task], user_id=user)["results"]]


def _scoped_ranked(memory: ScopedMemory, user: str) -> list[tuple]:
    return [(r["id"], round(r["score"], 5)) for r in memory.search(NOW, STATE, user_id=user, limit=6)["results"]]


def test_scoped_memory_ranks_as_evaluate_keeps_each_scopes_opener_and_a_save_keeps_both(opening, tmp_path):
    """Two users' tasks: each scope's own first user event opens its task (one scope's opener is not another's),
    the ranking is evaluate.py's of the same events, and a saved and loaded memory keeps the flags and the openers:
    a user event added after the load opens no task, as in the memory never saved, while a new scope's first does."""
    memory = ScopedMemory(opening, store_config_of(opening), k=6)
    _add(memory, "mia")
    _add(memory, "bo", TASK[1:])  # no system prompt: bo's task opens at his first event
    assert [memory.store.opens_task(f"mia#{s}") for s in range(6)] == [False, True, False, False, False, False]
    assert [memory.store.opens_task(f"bo#{s}") for s in range(5)] == [True, False, False, False, False]
    assert _scoped_ranked(memory, "mia") == _ranked(_evaluated(opening, _events("mia")), "mia")
    assert _scoped_ranked(memory, "bo") == _ranked(_evaluated(opening, _events("bo", task=TASK[1:])), "bo")
    memory.update("mia#1", "fix foo and baz in bar.py")  # new words, still the statement of mia's task
    assert memory.store.opens_task("mia#1")

    memory.save(tmp_path / "mem")
    saved = json.loads((tmp_path / "mem" / "store" / "store.json").read_text())
    assert saved["openings"] is True and sorted(saved["recorder"]["opener"]) == [["bo", 0], ["mia", 1]]
    loaded = ScopedMemory.load(tmp_path / "mem", opening)
    for m in (memory, loaded):
        m.add("and fix baz too", user_id="mia")
        m.add("hello", user_id="ana")
    for m in (memory, loaded):
        assert [m.store.opens_task(f"mia#{s}") for s in range(7)] == [False, True] + [False] * 5
        assert m.store.opens_task("ana#0")
    np.testing.assert_allclose(loaded.store.index.get_vectors(memory.store.ids()),
                               memory.store.index.get_vectors(memory.store.ids()), atol=1e-6)
    assert _scoped_ranked(loaded, "mia") == _scoped_ranked(memory, "mia")


def test_a_save_that_does_not_say_the_flags_is_refused_by_a_model_that_reads_them(opening, tmp_path):
    """A store saved before stores kept opens_task (no "openings" in store.json) holds memories whose flags are
    unknown: a task_opening model refuses it in one line naming the file and what to do, re-encoding it too."""
    store = MemoryStore(opening.encoder, store_config_of(opening))
    store.add(_events("ep"))
    store.save(tmp_path / "s")
    path = tmp_path / "s" / "store.json"
    d = json.loads(path.read_text())
    del d["openings"]
    for e in d["entries"]:
        e.pop("opens_task", None)
    d["recorder"].pop("opener")
    path.write_text(json.dumps(d))
    (tmp_path / "s" / "store.json.sha256").unlink()  # saved before store.json.sha256 too
    for reencode in (False, True):
        with pytest.raises(SAMFileError, match=r"store\.json: this save does not say which memory opened its task.*"
                                               r"add the memories' events again"):
            MemoryStore.load(tmp_path / "s", opening.encoder, reencode=reencode)
    assert len(MemoryStore.load(tmp_path / "s")) == 6  # without the model: the memories, each flag false


def test_a_model_without_the_flag_saves_as_before(tiny_bert_dir, tmp_path):
    """Off, a store's save holds none of the new keys: the store.json written before the flag existed, which older
    versions load (a guard: it passes before the flag was kept too)."""
    from sam_model.retriever import SAMRetriever

    off = SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path / "off"), device="cpu")
    memory = ScopedMemory(off, store_config_of(off))
    _add(memory, "mia")
    memory.save(tmp_path / "mem")
    text = (tmp_path / "mem" / "store" / "store.json").read_text()
    assert not any(key in text for key in ('"opens_task"', '"openings"', '"opener"'))
    memory.save(tmp_path / "again")
    loaded = ScopedMemory.load(tmp_path / "mem", off)
    loaded.save(tmp_path / "loaded")  # a save and its load are one store
    assert (tmp_path / "loaded" / "store" / "store.json").read_text() == (
        tmp_path / "again" / "store" / "store.json").read_text()


def test_sam_memory_units_say_the_flag_and_the_bank_file_keeps_it(opening, tmp_path):
    """The memory bank (SAMMemory): each unit is its record's, opens_task included, and its vector the one
    evaluate.py's record has; a saved bank keeps the flags and its recorder's openers."""
    from sam_model.memory import MemoryBank, SAMMemory

    mem = SAMMemory(opening, episode_id="ep")
    events = _events("ep")
    for e in events:
        mem.observe(e)
    records = episode_memories(Episode("ep", tuple(events)))
    kept = [r for r in records if r.id in mem.bank]
    assert [mem.bank.unit(r.id).opens_task for r in kept] == [r.opens_task for r in kept] and any(
        r.opens_task for r in kept)
    np.testing.assert_allclose(mem.bank.vectors([r.id for r in kept]), opening.encoder.encode_memories(kept),
                               atol=1e-6)
    mem.bank.save(tmp_path / "bank.npz")
    again = SAMMemory(opening, MemoryBank.load(tmp_path / "bank.npz"), episode_id="ep")
    assert [again.bank.unit(r.id).opens_task for r in kept] == [r.opens_task for r in kept]
    again.observe(parse_event({"episode_id": "ep", "step": 6, "kind": "user", "text": "and baz"}))
    assert not again.bank.unit("ep#6").opens_task  # the task was opened before the save


def test_a_served_memory_ranks_as_evaluate_and_keeps_the_flags_across_a_restart(opening, tmp_path):
    """Over sam-serve's HTTP API, acme's mia and globex's mia (one scope name, two tenants) each get their own
    opener; the served ranking is evaluate.py's of the same events; a restart, from the log replayed after a kill or
    from a checkpoint, keeps the flags and the opener: a later user message of mia's task opens none."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys

    def serve():
        tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", opening, store_config_of(opening))
        return tenants, TestClient(create_app(tenants))

    acme, globex = {"X-API-Key": KEYS["acme"]}, {"X-API-Key": KEYS["globex"]}
    tenants, http = serve()
    for headers, task in ((globex, TASK[1:]), (acme, TASK)):
        r = http.post("/v1/memories", headers=headers,
                      json={"messages": [{"kind": k, "text": t} for k, t in task], "user_id": "mia"})
        assert r.status_code == 200, r.text
    want = _ranked(_evaluated(opening, _events("mia")), "mia")
    r = http.post("/v1/memories/search", headers=acme, json={"query": NOW, "state": STATE, "user_id": "mia", "limit": 6})
    assert [(h["id"], round(h["score"], 5)) for h in r.json()["results"]] == want and want[0][0] == "mia#1"
    assert tenants.tenants["globex"].memory.store.opens_task("mia#0")
    for n, (text, stop) in enumerate((("and baz", "kill"), ("and qux", "close"), ("and quux", "close"))):
        r = http.post("/v1/memories", headers=acme, json={"messages": [{"role": "user", "content": text}],
                                                          "user_id": "mia"})
        assert r.status_code == 200, r.text
        store = tenants.tenants["acme"].memory.store
        assert [store.opens_task(f"mia#{s}") for s in range(7 + n)] == [False, True] + [False] * (5 + n)
        if stop == "kill":  # no checkpoint: the restart replays the log's writes
            for t in tenants.tenants.values():
                t.release()
        else:
            tenants.close()
        tenants, http = serve()
    tenants.close()


def test_langgraph_puts_record_the_flag(opening):
    """SAMStore (LangGraph): each namespace is an episode whose first user item opens its task."""
    pytest.importorskip("langgraph", reason="langgraph is not installed")
    from sam_model.integrations.langgraph import SAMStore

    store = SAMStore(opening)
    for n, (kind, text) in enumerate(TASK):
        store.put(("mia", "memories"), f"k{n}", {"kind": kind, "text": text})
    store.put(("bo", "memories"), "k0", {"kind": "user", "text": "hello"})
    flags = {h.id: store.store.opens_task(h.id) for h in store.store.get_all()}
    assert sum(flags.values()) == 2 and len(flags) == 7


def test_langchain_texts_record_the_flag(opening):
    """SAMVectorStore (LangChain) writes through ScopedMemory: the scope's first text opens its task, per scope."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import SAMVectorStore

    memory = ScopedMemory(opening, store_config_of(opening))
    for user in ("mia", "bo"):
        SAMVectorStore(memory, user_id=user).add_texts(["fix foo in bar.py", "fix foo in bar.py"])
    assert {h.id: memory.store.opens_task(h.id) for h in memory.store.get_all()} == {
        "mia#0": True, "mia#1": False, "bo#0": True, "bo#1": False}


def test_mcp_remember_records_the_flag_and_recall_ranks_by_it(opening, tmp_path):
    """sam-serve's MCP tools: remember flags each scope's first user message, recall ranks it first (its weight)."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from mcp import Client
    from serving import keys_file

    from sam_model.serve.mcp import create_mcp
    from sam_model.serve.tenants import Tenants, read_keys

    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", opening, store_config_of(opening))
    said = [{"role": "user", "content": "fix foo in bar.py"}, {"role": "assistant", "content": "on it"},
            {"role": "user", "content": "fix foo in bar.py"}]

    async def run() -> dict:
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            for user in ("mia", "bo"):
                await client.call_tool("remember", {"messages": said, "user_id": user})
            found = await client.call_tool("recall", {"query": NOW, "user_id": "mia", "state": STATE, "limit": 3})
            return json.loads(found.content[0].text)

    found = asyncio.run(run())
    store = tenants.tenants["acme"].memory.store
    assert {h.id: store.opens_task(h.id) for h in store.get_all()} == {
        "mia#0": True, "mia#1": False, "mia#2": False, "bo#0": True, "bo#1": False, "bo#2": False}
    assert found["results"][0]["id"] == "mia#0"
    tenants.close()


def _event(step: int, kind: str, text: str) -> object:
    return parse_event({"episode_id": "ep", "step": step, "kind": kind, "text": text})


def test_a_refused_add_neither_loses_nor_keeps_an_opener(opening):
    """The recorder's rollback after a refused add restores the task opener with the last state: an add of an id
    already stored (a client sending its add again) at step 0 dropped the opener of the task step 0 opened,
    so the next user event opened it a second time; an add refused after recording a first user event kept that
    opener (vectors of the wrong size), so a user event at a later step opened nothing."""
    store = MemoryStore(opening.encoder, store_config_of(opening))
    store.add([_event(0, "user", "fix foo in bar.py")])
    with pytest.raises(ValueError, match="already"):
        store.add([_event(0, "agent", "searching for foo")])
    store.add([_event(1, "user", "and baz")])
    assert [store.opens_task("ep#0"), store.opens_task("ep#1")] == [True, False]

    other = MemoryStore(opening.encoder, store_config_of(opening))
    other.add([_event(0, "system", "You are a coding agent.")])
    with pytest.raises(ValueError, match="vectors"):
        other.add([_event(2, "user", "fix foo in bar.py")], vectors=np.zeros((1, 3)))
    other.add([_event(5, "user", "fix foo in bar.py")])
    assert other.opens_task("ep#5")


def test_an_event_written_at_an_earlier_step_opens_no_second_task(opening):
    """An add whose explicit step is below the task's opener (an event written late) is no try rolled back: the
    opener stays, and the next user event opens nothing (it had been flagged as a second opener)."""
    store = MemoryStore(opening.encoder, store_config_of(opening))
    store.add([_event(5, "user", "fix foo in bar.py")])
    store.add([_event(3, "agent", "searching for foo")])
    store.add([_event(6, "user", "and baz")])
    assert [store.opens_task(f"ep#{s}") for s in (3, 5, 6)] == [False, True, False]
