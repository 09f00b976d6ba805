"""sam-serve's search at a step: the HTTP body's and MCP recall's ``step`` (and ``task_start``), as
ScopedMemory.search takes them (tests/test_query_step.py: the message at the step and later ones of the scopes'
conversation are no candidates).

The served search took no step, so the message an agent added before searching came back at rank 1 there; and the
micro-batching path prepared its query without the search's step and task_start (ScopedMemory.query_input), so a
batched search given them ranked as one made now (the message at the step included, the time features read at the
wrong step)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from mcp import Client  # noqa: E402
from serving import KEYS, keys_file, tiny_export  # noqa: E402

from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402
from sam_model.serve.batching import BatchedSearch  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.store import store_config_of  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

SAID = ["My budget for the trip is $1,400", "I live in Lisbon and fly from there"]
NOW = "book me a hotel in Lisbon within my budget"
STATE = {"phase": "book_hotel", "uncertainty_flags": ["budget", "city"]}
ACME, GLOBEX = {"X-API-Key": KEYS["acme"]}, {"X-API-Key": KEYS["globex"]}


def ranked(answer: dict) -> list[tuple]:
    return [(r["id"], r["memory"], r["score"]) for r in answer["results"]]


@pytest.fixture(scope="module")
def timed(tiny_bert_dir, tmp_path_factory):
    """A tiny SAM network with time features: its query vector reads the search's step and task_start."""
    from sam_model.retriever import SAMRetriever

    folder = tmp_path_factory.mktemp("export") / "export"
    return SAMRetriever.load(tiny_export(tiny_bert_dir, folder, time_features=4), device="cpu")


def test_a_batched_search_at_a_step_ranks_as_the_in_process_search(timed):
    """Each search's ids and scores through BatchedSearch are ScopedMemory.search's with the same arguments: with a
    step the message at it is left out and the time features read it, with a task_start too; a plain query at a
    step leaves it out alike. Before, the batched query was prepared now: the newest message came back first."""
    memory = ScopedMemory(timed, store_config_of(timed), k=5)
    for text in SAID:
        memory.add(text, user_id="mia")
    current = memory.get(memory.add(NOW, user_id="mia")["results"][0]["id"])
    memory.add("I live in Porto", user_id="bo")
    batched, tenant = BatchedSearch(window=0.0), SimpleNamespace(memory=memory)
    for given in ({"state": STATE, "step": current["step"]}, {"state": "live", "step": current["step"], "task_start": 1},
                  {"state": STATE, "step": 1, "task_start": 0}, {"state": STATE, "task_start": 2},
                  {"state": None, "step": current["step"]}, {"state": STATE}):
        args = {"query": NOW, "user_id": "mia", "limit": 5, **given}
        want = memory.search(**args)
        assert ranked(batched(tenant, **args)) == ranked(want), given
        if given.get("step") == current["step"]:
            assert current["id"] not in [r["id"] for r in want["results"]], given
            assert want["results"], given


def open_tenants(folder) -> Tenants:
    return Tenants(read_keys(keys_file(folder)), folder / "data", HashingEncoder(256), StoreConfig())


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_a_served_search_at_a_step_leaves_the_message_added_before_it_out_and_stays_in_its_tenant(tmp_path, batched):
    """Over HTTP, acme's mia adds two messages and the one she is answering, then searches at that message's step:
    it is left out, the two earlier ones come back; with no step it is first (made now). globex's mia, in the same
    scopes, and acme's bo are never among the results, whatever the step (0: nothing of mia's; past everything: all
    of acme's mia and nothing more)."""
    tenants = open_tenants(tmp_path)
    http = TestClient(create_app(tenants, BatchedSearch(window=0.0) if batched else None))
    for headers, texts in ((GLOBEX, [NOW, "globex: my budget is $90"]), (ACME, [*SAID, NOW])):
        assert http.post("/v1/memories", headers=headers, json={"messages": [{"role": "user", "content": t}
                                                                             for t in texts], "user_id": "mia"}).status_code == 200
    assert http.post("/v1/memories", headers=ACME, json={"messages": NOW + " in Porto", "user_id": "bo"}).status_code == 200
    current = http.get("/v1/memories/mia%232", headers=ACME).json()
    assert current["memory"] == NOW

    def search(**body) -> list[dict]:
        r = http.post("/v1/memories/search", headers=ACME, json={"query": NOW, "user_id": "mia", "limit": 10, **body})
        assert r.status_code == 200, r.text
        return r.json()["results"]

    assert [r["memory"] for r in search(state=STATE)][0] == NOW
    at = search(state=STATE, step=current["step"])
    assert {r["memory"] for r in at} == set(SAID)
    assert at == [{**r, "score": pytest.approx(r["score"])} for r in
                  tenants.tenants["acme"].memory.search(NOW, STATE, "mia", limit=10, step=current["step"])["results"]]
    assert {r["memory"] for r in search(state=None, step=current["step"])} == set(SAID)  # a plain query alike
    assert search(state=STATE, step=0) == []
    for step, task_start in ((2**62, None), (current["step"] + 1, 0)):
        assert {r["memory"] for r in search(state=STATE, step=step, task_start=task_start)} == {*SAID, NOW}
        assert {r["user_id"] for r in search(state=STATE, step=step, task_start=task_start)} == {"mia"}
    tenants.close()


WHAT = "(a step of the conversation: the number after the last '#' of a memory's id)"


@pytest.mark.parametrize("body, says", [({"step": -1}, f"step must be a non-negative integer {WHAT}, got -1"),
                                        ({"task_start": -3}, f"task_start must be a non-negative integer {WHAT}"),
                                        ({"step": 2**62 + 1},
                                         f"step must be a non-negative integer {WHAT} no larger than 2**62")])
def test_a_bad_step_is_a_422_naming_it(tmp_path, body, says):
    """The 422 says what a step is and that it is >= 0; it said "an integer from 0 to 4611686018427387904", a bound
    no caller should pick from and no statement of what the field holds."""
    tenants = open_tenants(tmp_path)
    http = TestClient(create_app(tenants, BatchedSearch(window=0.0)))
    r = http.post("/v1/memories/search", headers=ACME, json={"query": NOW, "user_id": "mia", **body})
    assert r.status_code == 422 and r.json()["detail"].startswith(says), r.text
    assert "4611686018427387904" not in r.json()["detail"]
    tenants.close()


@pytest.mark.parametrize("value, got", [("3", "a string"), (1.5, "a number"), (True, "true or false")])
@pytest.mark.parametrize("field", ["step", "task_start"])
def test_a_step_of_another_type_is_a_422_naming_the_field(tmp_path, field, value, got):
    tenants = open_tenants(tmp_path)
    r = TestClient(create_app(tenants)).post("/v1/memories/search", headers=ACME,
                                             json={"query": NOW, "user_id": "mia", field: value})
    assert r.status_code == 422 and r.json()["detail"] == f"{field} must be an integer, got {got}", r.text
    tenants.close()


def test_mcp_recall_takes_a_step_described_for_the_model(tmp_path):
    """recall's step leaves the message remembered at it out, as the HTTP search's does; the tool's schema says what
    it is and that it may be left out; a negative one is refused naming it."""
    tenants = open_tenants(tmp_path)

    async def run() -> tuple:
        async with Client(create_mcp(tenants, BatchedSearch(window=0.0), stdio_tenant="acme")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            said = await client.call_tool("remember", {"messages": [{"role": "user", "content": t}
                                                                    for t in (*SAID, NOW)], "user_id": "mia"})
            step = int(json.loads(said.content[0].text)["results"][-1]["id"].rsplit("#", 1)[1])
            args = {"query": NOW, "user_id": "mia", "state": STATE, "limit": 10}
            found = [await client.call_tool("recall", {**args, **more}) for more in ({}, {"step": step})]
            bad = await client.call_tool("recall", {**args, "step": -1})
            return tools["recall"].input_schema["properties"], found, bad

    props, (now, at), bad = asyncio.run(run())
    assert "leave it out" in props["step"]["description"] and "task_start" in props
    assert json.loads(now.content[0].text)["results"][0]["memory"] == NOW
    assert {r["memory"] for r in json.loads(at.content[0].text)["results"]} == set(SAID)
    assert bad.is_error and f"step must be a non-negative integer {WHAT}, got -1" in bad.content[0].text
    assert "4611686018427387904" not in bad.content[0].text
    tenants.close()


def test_remember_answers_the_step_recall_takes_not_the_agents_own_count(tmp_path):
    """A turn remembered with its tool call and result: the memory numbers every message, so the user's second message
    is step 3, not turn 2 (what an agent counting its own messages or turns would give). remember answers each
    memory's 'step' (it answered ids alone, and an agent had to parse the id's '#N' or count), the HTTP add alike;
    recall given that step leaves the message out; recall's schema says where the step comes from and that it is
    not the agent's count."""
    tenants = open_tenants(tmp_path)
    turn = [{"role": "user", "content": SAID[0]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "find_hotels", "arguments": '{"city": "Lisbon"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Hotel Lumiere, $240 a night"},
            {"role": "user", "content": NOW}]

    async def run() -> tuple:
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            said = json.loads((await client.call_tool("remember", {"messages": turn, "user_id": "mia"})).content[0].text)
            step = said["results"][-1]["step"]
            args = {"query": NOW, "user_id": "mia", "state": STATE, "limit": 10}
            found = [json.loads((await client.call_tool("recall", {**args, **more})).content[0].text)
                     for more in ({}, {"step": step})]
            return tools, said, found

    tools, said, (now, at) = asyncio.run(run())
    assert [r["step"] for r in said["results"]] == [int(r["id"].rsplit("#", 1)[1]) for r in said["results"]]
    assert said["results"][-1]["memory"] == NOW and said["results"][-1]["step"] == 3
    assert now["results"][0]["memory"] == NOW and NOW not in [r["memory"] for r in at["results"]]
    assert {r["step"] for r in at["results"]} == {0, 1, 2}
    described = tools["recall"].input_schema["properties"]["step"]["description"]
    assert "remember answered" in described and "not your count" in described
    assert "'step'" in tools["remember"].description
    added = TestClient(create_app(tenants)).post("/v1/memories", headers=ACME, json={
        "messages": "I fly back on Sunday", "user_id": "mia"}).json()["results"]
    assert [r["step"] for r in added] == [tenants.tenants["acme"].memory.get(r["id"])["step"] for r in added] == [4]
    tenants.close()
