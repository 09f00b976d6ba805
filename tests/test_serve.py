"""sam-serve over HTTP (in-process): Mem0's operations per scope, tenant isolation against a hostile tenant,
validated bodies with clear 4xx, size limits, and a restart without a clean shutdown that loses no write."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from serving import KEYS, keys_file, tiny_export  # noqa: E402

from sam_model.io import SAMFileError  # noqa: E402
from sam_model.retriever import SAMRetriever  # noqa: E402
from sam_model.serve.batching import BatchedSearch  # noqa: E402
from sam_model.serve.http import MAX_BODY_BYTES, create_app  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.store import store_config_of  # noqa: E402

A = {"Authorization": f"Bearer {KEYS['acme']}"}
G = {"X-API-Key": KEYS["globex"]}


@pytest.fixture(scope="module")
def retriever(tiny_bert_dir, tmp_path_factory):
    return SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path_factory.mktemp("export") / "export"), device="cpu")


def open_tenants(retriever, folder, backend: str = "faiss") -> Tenants:
    cfg = store_config_of(retriever)
    if backend == "qdrant":
        cfg.index = {"kind": "qdrant", "path": str(folder / "qdrant")}
    elif backend == "qdrant-edge":
        cfg.index = {"kind": "qdrant-edge", "path": str(folder / "edge")}
    return Tenants(read_keys(keys_file(folder)), folder / "data", retriever, cfg, checkpoint_every=3)


@pytest.fixture(params=["faiss", "qdrant"])
def served(request, retriever, tmp_path):
    if request.param == "qdrant":
        pytest.importorskip("qdrant_client")
    tenants = open_tenants(retriever, tmp_path, request.param)
    batched = BatchedSearch(0.001, 8)
    return tenants, TestClient(create_app(tenants, batched))


def writes(tenant) -> list[dict]:
    """The writes in a tenant's log (not the records of their vectors)."""
    return [r for r in tenant.wal.records() if r["op"] != "vectors"]


def hold_checkpoints(monkeypatch) -> tuple:
    """Checkpoints stop after their copy, before their files are written: (writing, release), the event set when
    one is held and the one that lets it go on."""
    import threading

    from sam_model.memory.scoped import ScopedMemory

    writing, release = threading.Event(), threading.Event()
    real = ScopedMemory.write_snapshot

    def slow(self, path, snap):
        writing.set()
        assert release.wait(30)
        return real(self, path, snap)

    monkeypatch.setattr(ScopedMemory, "write_snapshot", slow)
    return writing, release


def url(memory_id: str) -> str:
    return "/v1/memories/" + quote(memory_id, safe="")


def test_mem0_operations_over_http(served):
    tenants, http = served
    r = http.post("/v1/memories", headers=A, json={"messages": "I live in Paris", "user_id": "mia",
                                                   "metadata": {"topic": "home"}})
    assert r.status_code == 200, r.text
    mid = r.json()["results"][0]["id"]
    http.post("/v1/memories", headers=A, json={"messages": [{"role": "user", "content": "my budget is $300"}],
                                               "user_id": "mia", "run_id": "trip"})
    found = http.post("/v1/memories/search", headers=A, json={"query": "where do I live?", "user_id": "mia",
                                                               "limit": 5}).json()["results"]
    assert {h["memory"] for h in found} == {"I live in Paris", "my budget is $300"}
    stated = http.post("/v1/memories/search", headers=A, json={"query": "budget?", "user_id": "mia",
                                                                "state": {"phase": "plan"}, "limit": 1}).json()
    assert len(stated["results"]) == 1
    assert http.get(url(mid), headers=A).json()["memory"] == "I live in Paris"
    assert [m["memory"] for m in http.get("/v1/memories", headers=A, params={"user_id": "mia", "run_id": "trip"})
            .json()["results"]] == ["my budget is $300"]
    assert http.put(url(mid), headers=A, json={"data": "I live in Lyon"}).status_code == 200
    assert http.get(url(mid), headers=A).json()["memory"] == "I live in Lyon"
    assert [h["event"] for h in http.get("/v1/history/" + quote(mid, safe=""), headers=A).json()] == ["ADD", "UPDATE"]
    assert http.delete(url(mid), headers=A).status_code == 200
    assert http.get(url(mid), headers=A).status_code == 404
    assert http.delete("/v1/memories", headers=A, params={"user_id": "mia"}).json()["message"] == "1 memories deleted"
    assert http.get("/health").json()["status"] == "ok"


def test_a_hostile_tenant_reaches_nothing_of_another(served):
    tenants, http = served
    secret = http.post("/v1/memories", headers=A, json={"messages": "acme secret plan", "user_id": "mia"}).json()
    sid = secret["results"][0]["id"]
    http.post("/v1/memories", headers=G, json={"messages": "globex note", "user_id": "bob"})
    for bad in ({}, {"Authorization": "Bearer nope-nope-nope-nope"}, {"X-API-Key": KEYS["acme"][:-1]},
                {"Authorization": KEYS["acme"]}):  # no key, unknown keys, a key without "Bearer "
        r = http.post("/v1/memories/search", headers=bad, json={"query": "plan", "user_id": "mia"})
        assert r.status_code == 401 and "API key" in r.json()["detail"]
    # the other tenant's ids, users and filters that try to widen the scope find nothing of acme's
    assert http.get(url(sid), headers=G).status_code == 404
    assert http.put(url(sid), headers=G, json={"data": "overwritten"}).status_code == 404
    assert http.delete(url(sid), headers=G).status_code == 404
    assert http.get("/v1/history/" + quote(sid, safe=""), headers=G).json() == []
    assert http.get("/v1/memories", headers=G, params={"user_id": "mia"}).json()["results"] == []
    assert http.delete("/v1/memories", headers=G, params={"user_id": "mia"}).json()["message"] == "0 memories deleted"
    for filters in ({"user_id": {"in": ["mia", "bob"]}}, {"OR": [{"user_id": "mia"}, {"user_id": "bob"}]},
                    {"user_id": {"ne": "nobody"}}):
        found = http.post("/v1/memories/search", headers=G, json={"query": "plan", "user_id": "bob",
                                                                   "filters": filters, "limit": 10}).json()
        assert all(h["memory"] == "globex note" for h in found.get("results", [])), filters
    no_scope = http.post("/v1/memories/search", headers=G, json={"query": "plan", "filters": {"user_id": {"ne": "x"}}})
    assert no_scope.status_code == 422 and "missing scope is refused" in no_scope.json()["detail"]
    assert http.get(url(sid), headers=A).json()["memory"] == "acme secret plan"  # untouched
    # nor by timing: the tenants share one encoder, which keeps no text vectors, so globex searching acme's text
    # runs BERT as for a text nobody sent (a cache hit would answer faster)
    text = tenants.retriever.net.state_encoder.text_encoder
    http.post("/v1/memories/search", headers=A, json={"query": "acme secret plan", "user_id": "mia"})
    n = text.encoded
    http.post("/v1/memories/search", headers=G, json={"query": "acme secret plan", "user_id": "bob"})
    assert text.encoded > n and not text._cache


@pytest.mark.parametrize("body, status, says", [
    ({"user_id": "mia"}, 422, "messages"),
    ({"messages": "x", "user_id": "mia", "usr": 1}, 422, "usr"),
    ({"messages": "x", "user_id": "a/b"}, 422, "user_id"),
    ({"messages": "   ", "user_id": "mia"}, 422, "must not be empty"),
    ({"messages": "x"}, 422, "every memory belongs to a scope"),
    ({"messages": [], "user_id": "mia"}, 422, "messages"),
    # a call whose every argument value is traced through the whole conversation: bounded
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {
        f"k{i}": f"v{i}" for i in range(300)}}}]}], "user_id": "mia"}, 422, "300 argument values, more than 256"),
    # metadata that could be stored but not read back (every later list of the scope failed to serialise it)
    ({"messages": "x", "user_id": "mia", "metadata": json.loads('{"a":' * 40 + '1' + '}' * 40)}, 422,
     "nested more than 32 levels"),
    # a batch with one bad message is refused whole: the good message before it is not stored either
    ({"messages": [{"role": "user", "content": "first"}, {"role": "user", "content": 5}], "user_id": "mia"}, 422,
     "messages[1]: 'content' is a number; expected a string"),
    ({"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "tool_calls": "x"}],
      "user_id": "mia"}, 422, "'tool_calls' is a string, expected"),
    ({"messages": [{"role": "user", "content": "first"}, {"role": "tool", "tool_call_id": ["c9"], "content": "ok"}],
      "user_id": "mia"}, 422, "'tool_call_id' is"),
    # a lone surrogate (valid JSON, no Unicode): it was a 422 naming a byte position of the log record
    ({"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "bad \ud800 half"}],
      "user_id": "mia"}, 422, "messages[1].content holds a lone UTF-16 surrogate"),
    ({"messages": "x", "user_id": "mia", "metadata": {"note": ["fine", "\udfff"]}}, 422,
     "metadata.note[1] holds a lone UTF-16 surrogate"),
])
def test_bad_writes_get_a_clear_4xx_and_change_nothing(served, body, status, says):
    tenants, http = served
    r = http.post("/v1/memories", headers={**A, "content-type": "application/json"}, content=json.dumps(body))
    assert r.status_code == status and says in json.dumps(r.json())
    assert len(tenants.tenants["acme"].memory.store) == 0
    assert writes(tenants.tenants["acme"]) == []  # nor in the log: a refused write is taken back from it


def test_a_write_the_log_cannot_take_is_a_503_and_applies_nothing(served, monkeypatch):
    tenants, http = served
    assert http.post("/v1/memories", headers=A, json={"messages": "I live in Paris", "user_id": "mia"}).status_code == 200
    real = os.write

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    r = http.delete(url("mia#0"), headers=A)
    monkeypatch.setattr(os, "write", real)
    assert r.status_code == 503 and "send it again" in r.json()["detail"]
    acme = tenants.tenants["acme"]
    assert "mia#0" in acme.memory.store and [w["op"] for w in writes(acme)] == ["add"]
    assert http.delete(url("mia#0"), headers=A).status_code == 200  # sent again, with space: done


def test_a_tenant_folder_is_its_server_user_alone(served):
    tenants, http = served
    http.post("/v1/memories", headers=A, json={"messages": "I live in Paris", "user_id": "mia"})
    for t in tenants.tenants.values():
        assert t.folder.stat().st_mode & 0o077 == 0


def test_a_batched_search_reads_the_scopes_given_in_filters(served):
    """The batcher encodes the query apart from the search: the live state it reads must be that of the scopes
    the search runs in, also when they come only inside ``filters``."""
    tenants, http = served
    http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": [
        {"role": "user", "content": "I am mia_li_3668, cancel my Boston flight"},
        {"role": "assistant", "content": "Let me look it up."},
        {"role": "assistant", "tool_calls": [{"function": {"name": "get_user_details",
                                                           "arguments": {"user_id": "mia_li_3668"}}}]}]})
    body = {"query": "", "state": "live", "filters": {"user_id": "mia"}, "limit": 3}
    got = http.post("/v1/memories/search", headers=A, json=body).json()["results"]
    want = tenants.tenants["acme"].memory.search(**body)["results"]
    assert [(h["id"], round(h["score"], 5)) for h in got] == [(h["id"], round(h["score"], 5)) for h in want]


def test_bad_searches_and_oversized_bodies_are_refused(served):
    _, http = served
    http.post("/v1/memories", headers=A, json={"messages": "a fact", "user_id": "m"})
    assert http.post("/v1/memories/search", headers=A, json={"query": "x", "user_id": "m", "limit": 0}).status_code == 422
    assert http.post("/v1/memories/search", headers=A, json={"query": "x", "user_id": "m", "limit": 10**9}).status_code == 422
    bad_op = http.post("/v1/memories/search", headers=A, json={"query": "x", "user_id": "m", "filters": {"t": {"like": 1}}})
    assert bad_op.status_code == 422 and "unknown operator 'like'" in bad_op.json()["detail"]
    assert http.put(url("nope#1"), headers=A, json={"data": ""}).status_code == 422
    big = http.post("/v1/memories", headers={**A, "content-type": "application/json"},
                    content=b" " * (MAX_BODY_BYTES + 1))
    assert big.status_code == 413 and "over this server's limit" in big.json()["detail"]
    # sent chunked, with no Content-Length: counted as read, refused past the limit, passed on whole below it
    chunk = b" " * (1 << 20)
    big = http.post("/v1/memories", headers={**A, "content-type": "application/json"},
                    content=iter([chunk] * (MAX_BODY_BYTES // len(chunk) + 1)))
    assert big.status_code == 413 and "over this server's limit" in big.json()["detail"]
    body = json.dumps({"messages": "a chunked fact", "user_id": "m"}).encode()
    ok = http.post("/v1/memories", headers={**A, "content-type": "application/json"},
                   content=iter([body[:7], body[7:]]))
    assert ok.status_code == 200, ok.text
    found = http.post("/v1/memories/search", headers=A, json={"query": "chunked fact", "user_id": "m", "limit": 5})
    assert "a chunked fact" in [r["memory"] for r in found.json()["results"]]


def test_a_misspelt_or_mistyped_parameter_is_refused_not_ignored(served):
    """Found by review: unknown query parameters were ignored, so ``DELETE /v1/memories?user_id=mia&runId=trip-2``
    deleted every memory of mia's; a body's ``limit: true`` was 1 and ``threshold: "0.5"`` 0.5; a trailing slash
    made ``DELETE /v1/memories/?user_id=mia`` a delete of the memory ''."""
    tenants, http = served
    for run in (None, "trip-2"):
        assert http.post("/v1/memories", headers=A, json={"messages": "a fact", "user_id": "mia",
                                                          "run_id": run}).status_code == 200
    r = http.delete("/v1/memories?user_id=mia&runId=trip-2", headers=A)
    assert r.status_code == 422 and "runId" in r.text
    assert http.get("/v1/memories?user_id=mia&usr=bob", headers=A).status_code == 422
    assert len(tenants.tenants["acme"].memory.store) == 2
    assert len(http.get("/v1/memories?user_id=mia&limit=1", headers=A).json()["results"]) == 1  # text is parsed
    for bad in ({"limit": True}, {"threshold": "0.5"}, {"limit": 2.0}):
        r = http.post("/v1/memories/search", headers=A, json={"query": "fact", "user_id": "mia", **bad})
        assert r.status_code == 422 and next(iter(bad)) in r.text
    r = http.delete("/v1/memories/?user_id=mia", headers=A)
    assert r.status_code == 404 and "no memory id in the path" in r.json()["detail"]
    r = http.delete("/v1/memories?user_id=mia&user_id=bob", headers=A)  # FastAPI took the last: bob's
    assert r.status_code == 422 and "'user_id' given 2 times" in r.json()["detail"]
    assert http.get("/v1/memories?user_id=mia&limit=1&limit=5", headers=A).status_code == 422
    assert len(tenants.tenants["acme"].memory.store) == 2


def test_an_event_add_between_messages_survives_a_restart(retriever, tmp_path):
    """Found by review: chat, then an event, then chat in one scope: the second message was refused as a duplicate
    id, and after a kill -9 the log's replay dropped the acknowledged message after it."""
    tenants = open_tenants(retriever, tmp_path)
    http = TestClient(create_app(tenants))
    for messages in ("hello", [{"kind": "result", "text": "order 55 shipped"}], "my card ends 4444",
                     "my zip is 90210"):
        assert http.post("/v1/memories", headers=A, json={"messages": messages, "user_id": "fz"}).status_code == 200
    live = [(r["id"], r["memory"]) for r in http.get("/v1/memories?user_id=fz", headers=A).json()["results"]]
    assert [m for _, m in live] == ["hello", "order 55 shipped", "my card ends 4444", "my zip is 90210"]
    again = TestClient(create_app(open_tenants(retriever, tmp_path)))  # no shutdown: checkpoint + log replay
    assert [(r["id"], r["memory"]) for r in again.get("/v1/memories?user_id=fz", headers=A).json()["results"]] == live


def test_a_chunked_memory_is_read_updated_and_deleted_by_the_id_its_add_gave(retriever, tmp_path):
    """Found by review: on a chunking store the id an add answered was 404 for GET, PUT and DELETE."""
    from dataclasses import replace

    cfg = replace(store_config_of(retriever), chunking={"size": 40, "overlap": 10})
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, cfg, checkpoint_every=3)
    http = TestClient(create_app(tenants))
    long = "".join(f"line {i} of a long tool output\n" for i in range(6))
    mid = http.post("/v1/memories", headers=A, json={"messages": long, "user_id": "mia"}).json()["results"][0]["id"]
    assert mid == "mia#0" and http.get(url(mid), headers=A).json()["memory"] == long
    assert http.put(url(mid), headers=A, json={"data": "short now"}).status_code == 200
    assert http.get(url(mid), headers=A).json()["memory"] == "short now"
    assert http.delete(url(mid), headers=A).status_code == 200 and http.get(url(mid), headers=A).status_code == 404


def test_calls_by_id_given_a_scope_reach_only_its_memories_and_search_names_memories(retriever, tmp_path):
    """Found by review: ids are guessable ('bob#0') and GET/PUT/DELETE/history took any of the tenant's; now
    ``?user_id=`` (agent_id, run_id) makes another's memory a 404 (history: []), logged writes included; and on
    a chunking store a search named chunks ('mia#0/2'), whose DELETE left the memory's other words stored."""
    from dataclasses import replace

    cfg = replace(store_config_of(retriever), chunking={"size": 40, "overlap": 10})
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, cfg, checkpoint_every=3)
    http = TestClient(create_app(tenants))
    bob = http.post("/v1/memories", headers=A, json={"messages": "my PIN is 4242", "user_id": "bob"}).json()
    bob = bob["results"][0]["id"]
    assert http.get(url(bob) + "?user_id=mia", headers=A).status_code == 404
    assert http.get(url(bob) + "?user_id=bob", headers=A).json()["memory"] == "my PIN is 4242"
    assert http.put(url(bob) + "?user_id=mia", headers=A, json={"data": "PIN 0000"}).status_code == 404
    assert http.delete(url(bob) + "?user_id=mia", headers=A).status_code == 404
    assert http.get(f"/v1/history/{quote(bob, safe='')}?user_id=mia", headers=A).json() == []
    assert http.get(url(bob) + "?user_id=mia&user_id=bob", headers=A).status_code == 422
    assert http.delete(url(bob) + "?userid=bob", headers=A).status_code == 422  # misspelt: refused, not ignored
    assert http.get(url(bob), headers=A).json()["memory"] == "my PIN is 4242"
    assert http.delete(url(bob) + "?user_id=bob", headers=A).status_code == 200
    long = "".join(f"line {i} of a long tool output\n" for i in range(6))
    http.post("/v1/memories", headers=A, json={"messages": long, "user_id": "mia"})
    found = http.post("/v1/memories/search", headers=A, json={"query": "line 4 of a long tool output",
                                                              "user_id": "mia"}).json()["results"]
    assert [r["id"] for r in found] == ["mia#0"] and "span" in found[0]["chunk"]
    assert http.delete(url("mia#0/1"), headers=A).status_code == 422  # a chunk is not deleted alone
    assert http.delete(url("mia#0"), headers=A).status_code == 200
    again = TestClient(create_app(Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, cfg)))
    assert again.get("/v1/memories?user_id=mia", headers=A).json()["results"] == []  # the log replayed
    assert again.get(url(bob), headers=A).status_code == 404


def test_memories_written_by_another_model_are_refused_or_reencoded(retriever, tiny_bert_dir, tmp_path):
    """Found by a walkthrough: restarted with another --model (say, the adapted one), the server searched the old
    model's vectors with the new model's queries, silently (held-out airline: 0.627 MRR where either model alone
    ranked 0.905). Now such a tenant is refused in one line, and --reencode moves its memories to the new model,
    the log's writes included."""
    import torch

    from sam_model.io import SAMFileError

    torch.manual_seed(1)
    other = SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path / "other"), device="cpu")
    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3: the fourth and fifth writes stay in the log
    http = TestClient(create_app(tenants))
    for i in range(5):
        assert http.post("/v1/memories", headers=A, json={"messages": f"fact {i}", "user_id": "mia"}).status_code == 200
    cfg = store_config_of(other)
    with pytest.raises(SAMFileError, match="encoded by another model .* --reencode"):
        Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", other, cfg)
    moved = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", other, cfg, reencode=True)
    (tmp_path / "f").mkdir()
    fresh = Tenants(read_keys(keys_file(tmp_path / "f")), tmp_path / "f" / "data", other, cfg)
    for i in range(5):
        fresh.tenants["acme"].write("add", {"data": f"fact {i}", "user_id": "mia"})
    query = {"query": "fact 3", "user_id": "mia", "limit": 5}
    got, want = (t.tenants["acme"].memory.search(**query)["results"] for t in (moved, fresh))
    assert [(h["id"], round(h["score"], 5)) for h in got] == [(h["id"], round(h["score"], 5)) for h in want]
    moved.close()
    again = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", other, cfg)  # saved as the new model's
    assert len(again.tenants["acme"].memory.store) == 5


def test_an_mcp_tool_refuses_an_argument_it_does_not_name(retriever, tmp_path):
    """Found by review: the SDK ignores unknown arguments, so ``remember(user_id="mia", agnet_id="bot")`` was
    stored without its agent and ``recall(all_scopes=True)`` answered as if not asked."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from mcp import Client

    from sam_model.serve.mcp import create_mcp

    tenants = open_tenants(retriever, tmp_path)
    server = create_mcp(tenants, stdio_tenant="acme")

    async def calls() -> list:
        async with Client(server) as client:
            schemas = [t.input_schema.get("additionalProperties") for t in (await client.list_tools()).tools]
            return schemas + [await client.call_tool(tool, args) for tool, args in (
                ("remember", {"text": "x", "user_id": "mia", "agnet_id": "bot"}),
                ("recall", {"query": "x", "user_id": "mia", "all_scopes": True}),
                ("remember", {"text": "y", "user_id": "u" * 300}),
                ("remember", {"text": "z", "user_id": "mia"}),
                ("recall", {"query": "z", "user_id": "mia", "state": "live"}),
                ("recall", {"query": "z", "user_id": "mia", "limit": True}))]

    *schemas, typo, widen, long, ok, live, true = asyncio.run(calls())
    assert true.is_error and "limit" in true.content[0].text  # numbers strict, as over HTTP
    assert schemas == [False] * 4  # remember, recall, forget, forget_all
    assert typo.is_error and "agnet_id" in typo.content[0].text
    assert widen.is_error and "all_scopes" in widen.content[0].text
    assert long.is_error and "at most 256 characters" in long.content[0].text
    assert not ok.is_error and not live.is_error and len(tenants.tenants["acme"].memory.store) == 1


def test_an_mcp_tool_refuses_a_mistyped_argument_in_one_line_naming_it(retriever, tmp_path):
    """Found by review: a mistyped argument came back as pydantic's dump (four lines, a link to its docs), and an
    empty text was refused as 'data', a field the tool does not have."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from mcp import Client

    from sam_model.serve.mcp import create_mcp

    tenants = open_tenants(retriever, tmp_path)
    server = create_mcp(tenants, stdio_tenant="acme")
    asks = [(("forget", {"memory_id": ["mia#0"]}), "argument 'memory_id' must be a string, got array"),
            (("recall", {"query": 5, "user_id": "mia", "limit": "5"}),
             "argument 'query' must be a string, got integer; argument 'limit' must be an integer, got string"),
            (("recall", {"query": "x", "user_id": "mia", "state": 5}),
             "argument 'state' must be an object, a string or null, got integer"),
            (("remember", {"text": "x", "user_id": 7, "metadata": "m"}),
             "argument 'user_id' must be a string or null, got integer; argument 'metadata' must be an object or "
             "null, got string"),
            (("remember", {"user_id": "mia"}), "give text or messages: text for one thing said"),
            (("remember", {"text": " ", "user_id": "mia"}), "text must not be empty")]

    async def calls() -> list:
        async with Client(server) as client:
            return [await client.call_tool(tool, args) for (tool, args), _ in asks]

    for got, ((tool, _), want) in zip(asyncio.run(calls()), asks):
        assert got.is_error and got.content[0].text.startswith(f"Error executing tool {tool}: {want}")
        assert "\n" not in got.content[0].text
    assert len(tenants.tenants["acme"].memory.store) == 0


@pytest.mark.parametrize("backend", ["faiss", "qdrant-edge"])
def test_a_restart_without_shutdown_replays_every_acknowledged_write(retriever, tmp_path, backend):
    if backend == "qdrant-edge":
        pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed")
    tenants = open_tenants(retriever, tmp_path, backend)
    http = TestClient(create_app(tenants))
    ids = [http.post("/v1/memories", headers=A, json={"messages": f"fact {i}", "user_id": "mia"}).json()["results"][0]["id"]
           for i in range(7)]  # checkpoint_every=3: two checkpoints, then one write only in the log
    http.put(url(ids[0]), headers=A, json={"data": "fact zero, revised"})
    http.delete(url(ids[1]), headers=A)
    want = http.get("/v1/memories", headers=A, params={"user_id": "mia"}).json()["results"]
    del tenants, http  # no close(): as after kill -9, the last writes are only in the log
    back = open_tenants(retriever, tmp_path, backend)
    got = TestClient(create_app(back)).get("/v1/memories", headers=A, params={"user_id": "mia"}).json()["results"]
    assert [(m["id"], m["memory"]) for m in got] == [(m["id"], m["memory"]) for m in want]
    assert len(got) == 6 and got[0]["memory"] == "fact zero, revised"


def test_a_replay_takes_the_logged_vectors_not_the_encoder(retriever, tmp_path, monkeypatch, caplog):
    """A write's memory vectors are logged after it (under its seq), so a restart replays the log without
    encoding its memories again, to the same vectors; a write logged without them (a log of an older version,
    a kill between the two lines) is encoded again."""
    from sam_model.store import encoder_of

    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3: writes 4 and 5 stay in the log
    http = TestClient(create_app(tenants))
    for i in range(5):
        assert http.post("/v1/memories", headers=A, json={"messages": f"fact {i}", "user_id": "mia"}).status_code == 200
    log = tenants.tenants["acme"].wal
    assert [(r["seq"], r["op"]) for r in log.records()] == [(4, "add"), (4, "vectors"), (5, "add"), (5, "vectors")]
    query = {"query": "fact", "user_id": "mia", "limit": 5}
    want = http.post("/v1/memories/search", headers=A, json=query).json()["results"]
    encoded: list[int] = []
    kind = type(encoder_of(retriever))
    real = kind.encode_memories
    def counting(self, m, *a, **k):  # the memories' encodes (a load also checks the model on 3 fixed probe texts)
        if not all(str(x.id).startswith("probe#") for x in m):
            encoded.append(len(m))
        return real(self, m, *a, **k)

    monkeypatch.setattr(kind, "encode_memories", counting)

    def search_after_restart() -> list[dict]:
        back = open_tenants(retriever, tmp_path)  # no close(): a restart after a kill
        return TestClient(create_app(back)).post("/v1/memories/search", headers=A, json=query).json()["results"]

    ranked = [(h["id"], h["score"]) for h in want]  # (created_at is the replay's time: README "Durability")
    caplog.set_level("INFO", logger="sam_model.serve.tenants")
    assert [(h["id"], h["score"]) for h in search_after_restart()] == ranked and encoded == []  # the same floats
    assert "2 writes replayed, 0 memories of them encoded again" in caplog.text
    lines = log.path.read_bytes().splitlines(keepends=True)
    log.path.write_bytes(b"".join(x for x in lines if b'"op":"vectors"' not in x))
    got = search_after_restart()
    assert encoded == [1, 1] and [h["id"] for h in got] == [h["id"] for h in want]
    assert "2 writes replayed, 2 memories of them encoded again" in caplog.text
    assert [h["score"] for h in got] == pytest.approx([h["score"] for h in want], abs=1e-5)


def test_a_checkpoint_waits_for_a_share_of_the_memories_in_writes(retriever, tmp_path):
    """With checkpoint_share, a tenant of 10 memories checkpoints after 10 more writes at a share of 0.5 (half of
    the 20 it then holds), not after checkpoint_every (1); every write is in the checkpoint or the log."""
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, store_config_of(retriever),
                      checkpoint_every=1, checkpoint_share=0.0)
    tenant = tenants.tenants["acme"]
    for i in range(10):
        tenant.write("add", {"data": f"fact {i}", "user_id": "mia"})
        assert writes(tenant) == []  # share 0: a checkpoint after every write
    tenant.checkpoint_share = 0.5
    for i in range(10, 19):
        tenant.write("add", {"data": f"fact {i}", "user_id": "mia"})
    assert len(writes(tenant)) == 9  # 9 < 0.5 x 19 memories
    tenant.write("add", {"data": "fact 19", "user_id": "mia"})
    assert writes(tenant) == []  # 10 >= 0.5 x 20
    back = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, store_config_of(retriever))
    assert len(back.tenants["acme"].memory.store) == 20
    for bad in (-0.1, float("nan"), "0.1", True):  # the library refuses what sam-serve's option refuses
        with pytest.raises(ValueError, match=r"checkpoint share must be a number in \[0, 10\]"):
            Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", retriever, store_config_of(retriever),
                    checkpoint_share=bad)


def test_searches_and_writes_go_on_while_a_checkpoint_is_written(retriever, tmp_path, monkeypatch):
    """The memory is copied under its lock and written without it: a search and a write made while the files are
    written do not wait for them, and the write, logged after the copy, survives a restart without shutdown."""
    import threading


    tenants = open_tenants(retriever, tmp_path)
    tenant = tenants.tenants["acme"]
    http = TestClient(create_app(tenants))
    for i in range(2):
        http.post("/v1/memories", headers=A, json={"messages": f"fact {i}", "user_id": "mia"})
    writing, release = hold_checkpoints(monkeypatch)
    ckpt = threading.Thread(target=tenant.checkpoint)
    ckpt.start()
    assert writing.wait(30)
    try:
        assert tenant.lock.acquire(timeout=5)  # the memory's lock is free while the files are written
        tenant.lock.release()
        r = http.post("/v1/memories/search", headers=A, json={"query": "fact", "user_id": "mia"})
        assert r.status_code == 200 and len(r.json()["results"]) == 2
        r = http.post("/v1/memories", headers=A, json={"messages": "fact during", "user_id": "mia"})
        assert r.status_code == 200
    finally:
        release.set()
        ckpt.join(30)
    assert not ckpt.is_alive() and [x["args"]["data"] for x in writes(tenant)] == ["fact during"]
    monkeypatch.undo()
    back = open_tenants(retriever, tmp_path)  # no close(): the checkpoint lacks the last write, the log has it
    got = TestClient(create_app(back)).get("/v1/memories", headers=A, params={"user_id": "mia"}).json()["results"]
    assert sorted(m["memory"] for m in got) == ["fact 0", "fact 1", "fact during"]


def test_a_write_is_answered_before_its_checkpoint_is_written(retriever, tmp_path, monkeypatch):
    """The write that makes a checkpoint due gets its answer first: the service sends the response, then writes
    the checkpoint (a background task), so that client does not wait seconds for it."""
    import asyncio

    from sam_model.serve.tenants import Tenant

    events: list[str] = []
    real = Tenant.checkpoint_if_due
    monkeypatch.setattr(Tenant, "checkpoint_if_due", lambda self: (events.append("checkpoint"), real(self))[1])
    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3
    app = create_app(tenants)

    async def post(text: str) -> None:
        body = json.dumps({"messages": text, "user_id": "mia"}).encode()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/v1/memories", "raw_path": b"/v1/memories", "query_string": b"",
                 "headers": [(b"authorization", A["Authorization"].encode()), (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
        sent = False

        async def receive():
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            if message["type"] == "http.response.start":
                events.append(f"answer {message['status']}")

        await app(scope, receive, send)

    for i in range(3):
        asyncio.run(post(f"fact {i}"))
    assert events == ["answer 200", "checkpoint"] * 3  # each answer sent before the check that may checkpoint
    assert tenants.tenants["acme"].wal.records() == []  # the third write's checkpoint, after its answer, took all


def test_an_mcp_write_does_not_wait_for_its_checkpoint(retriever, tmp_path, monkeypatch):
    """MCP's remember answers while the checkpoint it made due is still being written (on a thread of its own),
    one checkpoint at a time, and that checkpoint then holds the writes."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio
    import threading

    from mcp import Client

    from sam_model.serve.mcp import create_mcp

    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3
    tenant, server = tenants.tenants["acme"], create_mcp(tenants, stdio_tenant="acme")
    writing, release = hold_checkpoints(monkeypatch)

    async def remember(n: int) -> None:
        async with Client(server) as client:  # in-process, no headers: the stdio tenant
            for i in range(n):
                assert not (await client.call_tool("remember", {"text": f"fact {i}", "user_id": "mia"})).is_error

    try:
        asyncio.run(remember(3))
        assert writing.wait(30)  # the third answer came back; its checkpoint is still being written
        assert len(writes(tenant)) == 3 and tenant.checkpoint_in_background() is None  # one at a time
    finally:
        release.set()
    for thread in threading.enumerate():
        if thread.name == "checkpoint-acme":
            thread.join(30)
    assert tenant.wal.records() == []
    assert tenant.checkpoint_in_background() is None  # nothing due


def test_a_failed_checkpoint_does_not_fail_the_durable_write(retriever, tmp_path, monkeypatch, caplog):
    """A write is durable once logged: a checkpoint that fails after it (a full disk) is logged, the write answered
    200 and kept in the log, and the next checkpoint that succeeds takes the log's records."""
    from sam_model.memory.scoped import ScopedMemory

    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3
    tenant, http = tenants.tenants["acme"], TestClient(create_app(tenants))

    def full(self, path, snap):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ScopedMemory, "write_snapshot", full)
    codes = [http.post("/v1/memories", headers=A, json={"messages": f"fact {i}", "user_id": "mia"}).status_code
             for i in range(4)]
    assert codes == [200] * 4 and "checkpoint failed" in caplog.text
    assert [r["args"]["data"] for r in writes(tenant)] == [f"fact {i}" for i in range(4)]
    monkeypatch.undo()
    http.post("/v1/memories", headers=A, json={"messages": "fact 4", "user_id": "mia"})
    assert tenant.wal.records() == []  # this write's checkpoint holds all five
    back = open_tenants(retriever, tmp_path)
    got = TestClient(create_app(back)).get("/v1/memories", headers=A, params={"user_id": "mia"}).json()["results"]
    assert sorted(m["memory"] for m in got) == [f"fact {i}" for i in range(5)]


@pytest.mark.parametrize("keys, says", [
    ({}, "non-empty JSON object"),
    ({"a b": "k" * 20}, "tenant name 'a b'"),
    ({"acme": "short"}, "at least 16 characters"),
    ({"acme": "k" * 20, "globex": "k" * 20}, "have the same key"),
    ({"acme": "k" * 20, "Acme": "j" * 20}, "differ only in case"),  # one folder on a case-insensitive disk
    ({"\u212bngstrom": "k" * 20}, "ASCII letters"),  # the Angstrom sign, which a normalising disk folds to Å (U+00C5)
])
def test_bad_keys_files_are_named(tmp_path, keys, says):
    from sam_model.io import SAMFileError

    with pytest.raises(SAMFileError, match=says):
        read_keys(keys_file(tmp_path, keys))


@pytest.mark.parametrize("key", ["acme-key-0123456789abcdef\n", "acme-key-0123456789abcdef ", "clé-0123456789abcdef",
                                 " acme-key-0123456789abcdef", "acme-key-0123456789\tabcdef"])
def test_a_key_no_client_can_send_is_refused_at_start(tmp_path, key):
    """Found by review: a key with a trailing newline or space (the header loses it) or a non-ASCII letter (the
    server reads header bytes as Latin-1) was taken, and its tenant answered every request 401."""
    path = keys_file(tmp_path, {"acme": key})
    with pytest.raises(SAMFileError, match=r"keys\.json: the key of tenant 'acme' holds .* printable ASCII only"):
        read_keys(path)
    spaced = {"acme": "acme key 0123456789abcdef"}  # a space inside is sent as it is: taken, and it reaches acme
    assert read_keys(keys_file(tmp_path, spaced)) == {spaced["acme"]: ("acme", {})}  # no scope fixed


def test_a_tenant_given_twice_in_the_keys_file_is_refused(tmp_path):
    """Python's json keeps the last of two values silently: the first key (an operator's old one, still in use by
    its agents) would stop working with no word why."""
    from sam_model.io import SAMFileError

    path = tmp_path / "keys.json"
    path.write_text(f'{{"acme": "{"k" * 20}", "acme": "{"j" * 20}"}}')
    with pytest.raises(SAMFileError, match=r"keys\.json: .*the key 'acme' is given twice"):
        read_keys(path)


def test_the_service_leaves_bf16_out_of_auto_unless_asked(tiny_bert_dir, tmp_path, monkeypatch):
    from sam_model.models import bf16_text
    from sam_model.serve.cli import build, parser

    monkeypatch.setattr(bf16_text, "native", lambda: True)  # as on a CPU with bfloat16 units
    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    args = parser().parse_args(["--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "d"), "--model",
                                str(export), "--device", "cpu"])
    monkeypatch.delenv(bf16_text.AUTO_ENV)
    tenants, _ = build(args)
    assert "bf16" not in tenants.retriever.encoder.backend and os.environ[bf16_text.AUTO_ENV] == "0"
    tenants.close()
    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")  # asked for
    tenants, _ = build(parser().parse_args(["--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "e"),
                                            "--model", str(export), "--device", "cpu"]))
    assert "bf16" in tenants.retriever.encoder.backend
    tenants.close()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux-only")
def test_the_encoder_threads_default_to_the_cores_the_process_may_use():
    """Measured on two quiet cores, 2 threads beat 1 (README 'Served memory'); a process pinned to fewer cores
    (taskset, a cpuset) must not start more threads than it has cores."""
    import subprocess
    import sys

    code = ("import os; from sam_model.serve.cli import parser; "
            "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "print(parser().parse_args(['--keys', 'k']).threads)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"
    import math
    from pathlib import Path

    from sam_model.cpus import cpu_quota
    from sam_model.serve.cli import parser

    quota = cpu_quota(Path("/sys/fs/cgroup"))  # a CI container may have one
    mask = len(os.sched_getaffinity(0))
    assert parser().parse_args(["--keys", "k"]).threads == (min(mask, math.ceil(quota)) if quota else mask)


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "150000 100000\n"}, 1.5),                                      # cgroup v2, docker --cpus 1.5
    ({"cpu.max": "max 100000\n"}, None),                                        # v2, unlimited
    ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),  # cgroup v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),     # v1, unlimited
    ({"cpu.max": "garbage"}, None),
    ({}, None),                                                                 # no cgroup file system
])
def test_a_cgroup_cpu_quota_caps_the_encoder_threads(tmp_path, files, quota):
    """A container limited to 1.5 CPUs on a bigger node sees every core in its mask; the default threads must
    follow the quota (rounded up), not the mask."""
    from sam_model.cpus import cores, cpu_quota

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    own = tmp_path / "no-such-proc-file"  # the root's limit alone, as inside a container's cgroup namespace
    assert cpu_quota(tmp_path, own) == quota
    mask = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert cores(tmp_path, own) == (min(mask, 2) if quota else mask)


@pytest.mark.parametrize("own, files, quota", [
    # cgroup v2 on a host: the limit sits on the process's slice, the root has none
    ("0::/user.slice/app.scope\n", {"cgroup.controllers": "cpu\n", "user.slice/app.scope/cpu.max": "50000 100000\n"},
     0.5),
    # limits nest: the smallest on the way up counts, an unlimited leaf under a limited parent too
    ("0::/a/b\n", {"cgroup.controllers": "", "a/cpu.max": "300000 100000\n", "a/b/cpu.max": "max 100000\n"}, 3.0),
    ("0::/a/b\n", {"cgroup.controllers": "", "a/cpu.max": "300000 100000\n", "a/b/cpu.max": "120000 100000\n"}, 1.2),
    # cgroup v1: the hierarchy whose controllers include cpu
    ("4:memory:/m\n3:cpu,cpuacct:/docker/c1\n", {"cpu/docker/c1/cpu.cfs_quota_us": "250000\n",
                                                   "cpu/docker/c1/cpu.cfs_period_us": "100000\n"}, 2.5),
    # the own cgroup's folder is not there (another namespace's path): its ancestors still count
    ("0::/gone/away\n", {"cgroup.controllers": "", "cpu.max": "200000 100000\n"}, 2.0),
    ("0::/x\n", {"cgroup.controllers": ""}, None),
])
def test_the_cpu_quota_is_read_from_the_process_own_cgroup_up(tmp_path, own, files, quota):
    """On a host without a cgroup namespace (a systemd service with CPUQuota=, a process in a sub-cgroup) the limit
    is on the process's own cgroup or an ancestor, not on the root the first reading looked at."""
    from sam_model.cpus import cpu_quota

    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "self").write_text(own)
    assert cpu_quota(root, tmp_path / "self") == quota


def test_a_write_whose_vectors_cannot_be_logged_is_still_answered(served, monkeypatch):
    """The vectors' record is an optimisation of the replay: the write itself is logged and applied, so failing
    to log its vectors must not answer 503 (a client would send a done write again)."""
    from sam_model.serve.wal import LogWriteError, WriteAheadLog

    tenants, http = served

    def full(self, seq, op, args):
        raise LogWriteError("disk full")

    monkeypatch.setattr(WriteAheadLog, "attach", full)
    r = http.post("/v1/memories", headers=A, json={"messages": "I live in Paris", "user_id": "mia"})
    assert r.status_code == 200 and "mia#0" in tenants.tenants["acme"].memory.store
    assert [w["op"] for w in writes(tenants.tenants["acme"])] == ["add"]


def test_one_querys_encoder_error_fails_only_that_query_in_a_batch():
    """Queries of every tenant share one forward; one that makes the encoder fail used to fail them all."""
    import threading

    import numpy as np

    class Memory:
        def __init__(self):
            self.store = type("S", (), {"encoder": object()})()

        def encode_query(self, kind, inputs):
            if any(i["text"] == "bad" for i in inputs):
                raise RuntimeError("encoder failed on 'bad'")
            return np.ones((len(inputs), 4))

    batched, memory = BatchedSearch(0.2, 8), Memory()
    out: dict = {}

    def ask(text):
        try:
            out[text] = batched.encode(memory, "text", {"text": text})
        except RuntimeError as err:
            out[text] = err

    threads = [threading.Thread(target=ask, args=(t,)) for t in ("good", "bad", "fine")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert batched.batches == 1 and isinstance(out["bad"], RuntimeError)
    assert out["good"].shape == (4,) and out["fine"].shape == (4,)


def test_a_write_that_fails_unexpectedly_leaves_no_record_and_the_server_restarts(retriever, tmp_path, monkeypatch):
    """A write that failed when applied (an error the memory does not refuse cleanly) stayed in the log, and the
    replay met the same error at every start: the server could not come back."""
    from sam_model.memory.scoped import ScopedMemory

    tenants = open_tenants(retriever, tmp_path)
    http = TestClient(create_app(tenants), raise_server_exceptions=False)
    assert http.post("/v1/memories", headers=A, json={"messages": "fact 0", "user_id": "mia"}).status_code == 200
    real = ScopedMemory.add

    def broken(self, data, **kw):
        if data == "poison":
            raise RuntimeError("the encoder failed")
        return real(self, data, **kw)

    monkeypatch.setattr(ScopedMemory, "add", broken)
    assert http.post("/v1/memories", headers=A, json={"messages": "poison", "user_id": "mia"}).status_code == 500
    assert [w["args"]["data"] for w in writes(tenants.tenants["acme"])] == ["fact 0"]
    back = open_tenants(retriever, tmp_path)  # the restart replays the log: the poison is not in it
    assert len(back.tenants["acme"].memory.store) == 1


def test_an_unreachable_qdrant_is_one_line(tiny_bert_dir, tmp_path, capsys):
    """Found by a walkthrough: 132 lines of the client's traceback."""
    pytest.importorskip("qdrant_client")
    from sam_model.serve.cli import main

    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    rc = main(["--keys", str(keys_file(tmp_path)), "--model", str(export), "--data", str(tmp_path / "d"),
               "--qdrant-url", "http://127.0.0.1:1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err[-1].startswith("error: ") and "is the Qdrant server at --qdrant-url running" in err[-1]
    assert not any(line.startswith("Traceback") for line in err)


def logged_tenant(retriever, tmp_path, n: int = 3):
    """A tenant folder whose log holds ``n`` acknowledged adds after a checkpoint of seq 0 (no shutdown: as after
    a kill); returns (its folder, the data the adds gave, in order)."""
    tenants = open_tenants(retriever, tmp_path)  # checkpoint_every=3: n <= 2 stay in the log alone
    facts = [f"fact {i}" for i in range(n)]
    for fact in facts:
        tenants.tenants["acme"].write("add", {"data": fact, "user_id": "mia"}, checkpoint=False)
    for t in tenants.tenants.values():
        t.wal.close()
    return tmp_path / "data" / "acme", facts


@pytest.mark.parametrize("seq, says", [
    ('{"seq": 1.9}', r"field 'seq' must be an integer >= 0 .*got 1\.9"),  # was int()-ed to 1: write 1 dropped
    ('{"seq": true}', "field 'seq' must be an integer >= 0"),
    ('{"seq": -1}', "field 'seq' must be an integer >= 0"),
    ('{"seq": "x"}', "field 'seq' must be an integer >= 0"),
    ("{}", 'must be {"seq": <the last write the checkpoint holds>}, got {}'),  # was a KeyError traceback
    ("[1]", r'must be {"seq": <the last write the checkpoint holds>}, got \[1\]'),  # was a TypeError traceback
    ('{"seq": ', "unreadable checkpoint seq file"),
    ('{"seq": 0, "seq": 3}', "given twice"),
])
def test_a_damaged_checkpoint_seq_is_named_and_loses_no_write(retriever, tmp_path, seq, says):
    folder, facts = logged_tenant(retriever, tmp_path, 2)
    log, seq_file = folder / "wal.log", folder / "checkpoint" / "seq.json"
    before = log.read_bytes()
    seq_file.write_text(seq)
    with pytest.raises(SAMFileError, match=r"acme/checkpoint/seq\.json: .*" + says + ".*restore the checkpoint"):
        open_tenants(retriever, tmp_path)
    assert log.read_bytes() == before
    seq_file.write_text('{"seq": 0}')
    back = open_tenants(retriever, tmp_path)
    assert [m["memory"] for m in back.tenants["acme"].memory.get_all(user_id="mia")["results"]] == facts


def test_a_log_that_does_not_fit_its_checkpoint_is_refused_not_truncated(retriever, tmp_path):
    """A checkpoint ahead of every write in the log ({"seq": 99} beside writes 1-2) started with 0 memories and
    emptied the log at shutdown: both writes lost for good. A log that starts after the checkpoint's next write
    has lost writes already. Both are refused in one line, and the log is left as it is."""
    folder, facts = logged_tenant(retriever, tmp_path, 2)
    log, seq_file = folder / "wal.log", folder / "checkpoint" / "seq.json"
    before = log.read_bytes()
    seq_file.write_text('{"seq": 99}')
    with pytest.raises(SAMFileError, match=r"acme/wal\.log: its writes go up to 2, yet the checkpoint "
                                           r"\(.*seq\.json\) holds writes 1-99, .*move the log away"):
        open_tenants(retriever, tmp_path)
    assert log.read_bytes() == before
    seq_file.write_text('{"seq": 0}')
    log.write_bytes(b"".join(x for x in before.splitlines(keepends=True) if not x[9:].startswith(b'{"seq":1,')))
    with pytest.raises(SAMFileError, match=r"acme/wal\.log: its writes start at 2, yet the checkpoint .* holds no "
                                           "writes: write 1 is in neither"):
        open_tenants(retriever, tmp_path)
    log.write_bytes(before)
    seq_file.write_text('{"seq": 2}')  # a kill between a checkpoint's swap and the log's cut: nothing replayed twice
    assert open_tenants(retriever, tmp_path).tenants["acme"].wal.seq == 2


@pytest.mark.parametrize("record, says", [
    ({"op": "add", "args": {"user_id": "mia"}}, "KeyError: 'data'"),  # was skipped on replay, logged at INFO
    ({"op": "frob", "args": {}}, "unknown write 'frob'"),
    ({"op": "delete", "args": {"memory_id": "nope"}}, "KeyError: .*'nope'"),
])
def test_a_logged_write_that_cannot_be_applied_stops_the_start_in_one_line(retriever, tmp_path, record, says):
    """Every write in the log was applied when it was made (one that failed is taken back), so one that cannot
    be applied on replay is named, with its line; skipping it lost an acknowledged write silently (and the next
    checkpoint cut it off the log)."""
    import zlib

    folder, _ = logged_tenant(retriever, tmp_path, 2)
    log = folder / "wal.log"
    body = json.dumps({"seq": 3, **record}, separators=(",", ":")).encode()
    with open(log, "ab") as f:
        f.write(b"%08x %s\n" % (zlib.crc32(body), body))
    before = log.read_bytes()
    with pytest.raises(SAMFileError, match=rf"acme/wal\.log: line 5, write 3 \('{record['op']}'\), cannot be "
                                           rf"applied .*{says}.*restore the checkpoint and the log"):
        open_tenants(retriever, tmp_path)
    assert log.read_bytes() == before


def test_a_keys_file_with_a_byte_order_mark_is_read(tmp_path):
    """Found by review: a keys file saved by a Windows editor (UTF-8 with a BOM) was 'unreadable'."""
    path = tmp_path / "keys.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"acme": "k" * 20}).encode())
    assert read_keys(path) == {"k" * 20: ("acme", {})}


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_keys_file_other_users_may_read_is_said_at_start(tmp_path, caplog):
    """Found by a walkthrough: the README's keys line (``> keys.json``) makes a file of mode 0644, so every account
    of the machine could read each tenant's key and, through the server on 127.0.0.1, its memories (the tenants'
    folders are 0700 for that reason), and sam-serve said nothing. One warning names the file and the fix; a file
    of its owner's alone is read without a word."""
    path = keys_file(tmp_path)
    for mode, warned in ((0o644, True), (0o660, True), (0o600, False), (0o400, False)):
        caplog.clear()
        path.chmod(mode)
        with caplog.at_level("WARNING", logger="sam_model.serve.tenants"):
            assert set(read_keys(path)) == set(KEYS.values())
        said = [r.getMessage() for r in caplog.records]
        if warned:
            assert said == [f"{path}: the keys file is open to other users of this machine (mode {mode:04o}), and "
                            f"each key reaches its tenant's memories: chmod 600 {path}"], said
        else:
            assert said == [], said


def test_a_second_server_on_the_same_data_is_refused_while_the_first_runs(tiny_bert_dir, tmp_path):
    """Found by review: a second sam-serve on one --data (a restart while the old one still ran, or one that only
    failed to bind its port) replayed the log and wrote into it beside the first, each checkpoint cutting it at its
    own offsets, so acknowledged writes were lost. Now the second stops in one line; a dead server holds nothing."""
    from sam_model.bench.serve import free_port, start_server

    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    keys = keys_file(tmp_path)
    retriever = SAMRetriever.load(export, device="cpu")
    port = free_port()
    proc = start_server(export, keys, tmp_path / "data", port, log=tmp_path / "server.log")
    try:
        with pytest.raises(SAMFileError, match=r"data/acme: another process .* is serving this tenant"):
            Tenants(read_keys(keys), tmp_path / "data", retriever, store_config_of(retriever))
    finally:
        proc.kill()
        proc.wait(30)
    again = Tenants(read_keys(keys), tmp_path / "data", retriever, store_config_of(retriever))  # killed: let go
    assert set(again.tenants) == {"acme", "globex"}
    again.close()


@pytest.mark.parametrize("ms", ["inf", "nan", "5000", "-1"])
def test_a_batch_window_out_of_range_stops_the_start_in_one_line(tmp_path, ms):
    """Found by review: --batch-ms inf passed, the encoder thread's wait overflowed and died, and every search then
    hung for ever; nan turned batching off and -1 too, silently; 5000 held each lone search 5 s."""
    from sam_model.serve.cli import main

    with pytest.raises(SystemExit) as stop:  # before the model loads: none is found here
        main(["--keys", str(keys_file(tmp_path)), "--model", str(tmp_path / "no-model"), "--data",
              str(tmp_path / "d"), "--batch-ms", ms])
    assert "--batch-ms must be a number of milliseconds from 0 to 1000" in str(stop.value.code)
    with pytest.raises(ValueError, match="batch window must be 0-1.0 s"):
        BatchedSearch(float(ms) / 1000, 8)


def test_the_bearer_scheme_is_read_in_any_case(served):
    """Found by review: an auth scheme is case-insensitive (RFC 9110), yet ``Authorization: bearer <key>``, as
    some HTTP clients send it, was a 401; another scheme with the key is still refused."""
    _, http = served
    for scheme in ("bearer", "BEARER"):
        r = http.post("/v1/memories", headers={"Authorization": f"{scheme} {KEYS['acme']}"},
                      json={"messages": f"sent with {scheme}", "user_id": "mia"})
        assert r.status_code == 200, r.text
    assert [m["memory"] for m in http.get("/v1/memories?user_id=mia", headers=A).json()["results"]] == [
        "sent with bearer", "sent with BEARER"]
    assert http.get("/v1/memories?user_id=mia", headers={"Authorization": f"Basic {KEYS['acme']}"}).status_code == 401


def test_closing_goes_on_past_a_tenant_whose_checkpoint_fails(retriever, tmp_path, monkeypatch):
    """Found by review: Tenants.close stopped at the first tenant whose checkpoint failed (a full disk), so the
    others stayed open and held their folders; now every tenant is closed and the first error raised after."""
    tenants = open_tenants(retriever, tmp_path)
    first, second = tenants.tenants.values()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(first, "checkpoint", full_disk)
    with pytest.raises(OSError, match="No space left"):
        tenants.close()
    for t in (first, second):  # both logs closed (the second was left open), both folders' locks let go
        for fd in (t.wal._fd, t._held):
            with pytest.raises(OSError):
                os.fstat(fd)
    monkeypatch.undo()


def hashed_app(tmp_path):
    """(tenants, client) of a service over a hashing encoder: for tests of the HTTP layer, not of the model."""
    from sam_model.memory import HashingEncoder
    from sam_model.storeconfig import StoreConfig

    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    return tenants, TestClient(create_app(tenants))


def test_an_add_of_no_messages_is_refused_alike_in_process_and_over_http(tmp_path):
    """``ScopedMemory.add([])`` answered ``{"results": []}`` where sam-serve's add of ``"messages": []`` was a 422 in
    pydantic's words (a union's two branches, neither naming what to send). One rule now, the memory's: refused in
    one line naming each face's field and what to send, nothing stored and nothing in the log."""
    from sam_model.memory.scopedinput import NoTextError

    tenants, http = hashed_app(tmp_path)
    r = http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": []})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == ("messages is an empty list: nothing to store; send at least one message (or "
                                  "agent-log event)")
    memory = tenants.tenants["acme"].memory
    for empty in ([], ()):
        with pytest.raises(NoTextError, match=r"^data is an empty list: nothing to store; send at least one message"):
            memory.add(empty, user_id="mia")
    assert writes(tenants.tenants["acme"]) == [] and memory.get_all(user_id="mia")["results"] == []
    assert http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": [
        {"role": "user", "content": "a fact"}]}).status_code == 200


def test_a_content_length_that_is_no_number_is_a_400_not_a_413(tmp_path):
    """The app answered a Content-Length of 'abc' with 413 "request body over 1448576 bytes": a body it had not
    measured, and advice (split the memories) that does not help. uvicorn answers 400 before the app; the app
    answers the same when called in-process or served otherwise."""
    tenants, http = hashed_app(tmp_path)
    body = b'{"messages": "a fact", "user_id": "m"}'
    for size in ("abc", "-1", "1e3"):
        r = http.post("/v1/memories", headers={**A, "content-type": "application/json", "content-length": size},
                      content=body)
        assert r.status_code == 400 and repr(size) in r.json()["detail"], (size, r.text)
        assert "number of bytes" in r.json()["detail"]
    assert tenants.tenants["acme"].memory.get_all(user_id="m")["results"] == []
    ok = http.post("/v1/memories", headers={**A, "content-type": "application/json"}, content=body)
    assert ok.status_code == 200
    tenants.close()


def test_an_add_of_messages_with_no_text_is_a_422_over_http_and_an_error_over_mcp(tmp_path):
    """``{"messages": [{"role": "user"}]}`` or an image alone was answered 200 ``{"results": []}`` and stored nothing.
    Now a message with no (or blank) content is a 422 naming ``messages[i].content`` and what to send, MCP's remember
    refuses an empty text naming ``text`` (ScopedMemory's one rule, each face naming its own field); images alone or
    beside a text are stored as nothing and said in ``skipped``. A refused add leaves nothing in the log."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from mcp import Client

    from sam_model.serve.mcp import create_mcp

    tenants, http = hashed_app(tmp_path)
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    for messages in ([{"role": "user"}], [{"role": "user", "content": "ok"}, {"role": "user", "content": " "}]):
        r = http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": messages})
        where = f"messages[{len(messages) - 1}].content"
        assert r.status_code == 422 and r.json()["detail"].startswith(where), r.text
        assert "send the message's words as its content" in r.json()["detail"]
    tenant = tenants.tenants["acme"]
    assert writes(tenant) == [] and tenant.memory.get_all(user_id="mia")["results"] == []
    r = http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": [{"role": "user", "content": [image]}]})
    assert r.status_code == 200 and r.json()["results"] == [] and r.json()["skipped"][0]["message"] == 0, r.text
    r = http.post("/v1/memories", headers=A, json={"user_id": "mia", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "my receipt"}, image]}, {"role": "user", "content": [image]}]})
    assert r.status_code == 200 and [m["memory"] for m in r.json()["results"]] == ["my receipt"]
    assert [(n["message"], n.get("part")) for n in r.json()["skipped"]] == [(0, 1), (1, None)]
    server = create_mcp(tenants, stdio_tenant="acme")

    async def remember(text: str):
        async with Client(server) as client:
            return await client.call_tool("remember", {"text": text, "user_id": "bob"})

    empty = asyncio.run(remember(""))
    assert empty.is_error and empty.content[0].text.endswith(": text must not be empty or only whitespace, got ''")
    assert not asyncio.run(remember("bob's words")).is_error
    assert [m["memory"] for m in tenant.memory.get_all(user_id="bob")["results"]] == ["bob's words"]
    tenants.close()


def test_a_logged_add_that_stores_nothing_is_passed_over_on_replay(tmp_path):
    """Adds of messages with no text were answered 200, and logged, before they were refused: a log holding one must
    still start (it stored nothing then, nor now), not stop the start as a write that cannot be applied."""
    tenants, _ = hashed_app(tmp_path)
    tenant = tenants.tenants["acme"]
    tenant.wal.append("add", {"data": [{"role": "user"}], "user_id": "mia", "agent_id": None, "run_id": None,
                              "metadata": None})
    tenant.write("add", {"data": "my PIN is 4242", "user_id": "mia"})
    for t in tenants.tenants.values():
        t.release()  # no checkpoint: the log replays
    again, _ = hashed_app(tmp_path)
    assert [m["memory"] for m in again.tenants["acme"].memory.get_all(user_id="mia")["results"]] == ["my PIN is 4242"]
    again.close()


def test_the_service_says_which_model_it_loaded(tiny_bert_dir, tmp_path, caplog):
    """A user who adapted a model and serves it must be able to see which one answers (a walkthrough found the
    start-up log silent on it)."""
    import logging

    from sam_model.serve.cli import build, parser

    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    with caplog.at_level(logging.INFO, logger="sam_model.serve"):
        tenants, _ = build(parser().parse_args(["--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "d"),
                                                "--model", str(export), "--device", "cpu"]))
    tenants.close()
    assert f"sam-serve: model {export.resolve()}" in caplog.text


def test_the_log_file_is_created_readable_by_its_owner_alone(tmp_path):
    """sam-serve --log-file: its lines can name users (a tool error's scopes), so it is created 0600, as the tenants'
    folders are 0700; a file that exists keeps the mode its owner gave it."""
    import os
    import stat

    from sam_model.serve.cli import log_handlers

    new, old = tmp_path / "serve.log", tmp_path / "old.log"
    old.write_text("")
    old.chmod(0o644)
    for path in (new, old):
        for h in log_handlers(str(path))[1:]:
            h.close()
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o644
