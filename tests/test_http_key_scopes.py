"""A key the keys file fixes to a scope (``{"key": ..., "user_id": "alice"}``: a SaaS hands one key to each of its
customers' users) serves that scope only, over every HTTP route and the MCP tools at /mcp: the scope is filled in
when a call names none, a call naming another value (a scope, or a scope in a search's filters) is a 403 in one
line naming the field and the key's value, with nothing written, and nothing is widened (get_all, delete_all and
search by agent alone, filters, another user's memory ids). Before, each call named its own user_id, so such a key
reached every user of its tenant. The keys file without such entries reads as before; a bad entry is one line
naming the file, the tenant's entry and the field."""

from __future__ import annotations

import contextlib
import json
import re
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from serving import keys_file  # noqa: E402

from sam_model.io import SAMFileError  # noqa: E402
from sam_model.memory import HashingEncoder  # noqa: E402
from sam_model.serve.batching import BatchedSearch  # noqa: E402
from sam_model.serve.cli import main as sam_serve  # noqa: E402
from sam_model.serve.cli import parser  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

ADMIN, ALICE, BOB, OTHER = ("acme-admin-key-0123456789", "acme-alice-key-0123456789", "acme-bob-key-0123456789ab",
                            "globex-key-0123456789abcd")
KEYS = {"acme": [ADMIN, {"key": ALICE, "user_id": "alice"}, {"key": BOB, "user_id": "bob"}], "globex": OTHER}
AS = {name: {"X-API-Key": key} for name, key in (("admin", ADMIN), ("alice", ALICE), ("bob", BOB), ("other", OTHER))}
REFUSED = "{} is fixed to 'alice' for this API key: leave {} out; another user's memory is not served here"
JSON_RPC = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def served(tmp_path):
    """(tenants, an HTTP client of sam-serve's app with MCP at /mcp) over acme's memory, seeded by the admin key
    with alice's and bob's memories, each with agent 'support' and without."""
    tenants = Tenants(read_keys(keys_file(tmp_path, KEYS)), tmp_path / "data", HashingEncoder(64), StoreConfig())
    mcp = create_mcp(tenants)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/", stateless_http=True, json_response=True,
                                      host="127.0.0.1")

    @contextlib.asynccontextmanager
    async def lifespan(_app):  # as sam-serve runs it (sam_model.serve.cli)
        async with mcp.session_manager.run():
            yield

    app = create_app(tenants, BatchedSearch(window=0.0), mcp_app, lifespan)
    with TestClient(app, base_url="http://127.0.0.1:8420") as http:
        for user in ("alice", "bob"):
            for extra in ({}, {"agent_id": "support"}):
                r = http.post("/v1/memories", headers=AS["admin"], json={
                    "messages": f"{user} {'support' if extra else 'plain'} flight note", "user_id": user, **extra})
                assert r.status_code == 200, r.text
        yield tenants, http
    tenants.close()


def users(tenants: Tenants, **scope) -> dict[str, int]:
    """How many memories each user of acme has (within ``scope``), read from the memory itself."""
    out: dict[str, int] = {}
    for m in tenants.tenants["acme"].memory.get_all(all_scopes=not scope, limit=None, **scope)["results"]:
        out[m["user_id"]] = out.get(m["user_id"], 0) + 1
    return out


def ids(tenants: Tenants, user: str) -> list[str]:
    return [m["id"] for m in tenants.tenants["acme"].memory.get_all(user_id=user)["results"]]


def writes(tenants: Tenants) -> int:
    return sum(r["op"] != "vectors" for r in tenants.tenants["acme"].wal.records())


def path(memory_id: str, route: str = "memories") -> str:
    return f"/v1/{route}/" + quote(memory_id, safe="")


def test_a_keys_scope_is_filled_in_when_the_call_names_none(served):
    tenants, http = served
    added = http.post("/v1/memories", headers=AS["alice"], json={"messages": "alice likes aisle seats"})
    assert added.status_code == 200, added.text
    assert users(tenants) == {"alice": 3, "bob": 2}
    found = http.post("/v1/memories/search", headers=AS["alice"], json={"query": "flight note seats", "limit": 20})
    assert found.status_code == 200, found.text
    assert {h["user_id"] for h in found.json()["results"]} == {"alice"} and len(found.json()["results"]) == 3
    listed = http.get("/v1/memories", headers=AS["alice"])
    assert [m["user_id"] for m in listed.json()["results"]] == ["alice"] * 3
    same = http.get("/v1/memories", headers=AS["alice"], params={"user_id": "alice"})  # its own value passes
    assert same.json() == listed.json()
    assert http.get("/v1/memories", headers=AS["admin"], params={"user_id": "bob"}).status_code == 200  # as before


@pytest.mark.parametrize("method, route, body, field", [
    ("post", "/v1/memories", {"messages": "bob: window please", "user_id": "bob"}, "user_id"),
    ("post", "/v1/memories/search", {"query": "flight", "user_id": "bob"}, "user_id"),
    ("post", "/v1/memories/search", {"query": "flight", "filters": {"user_id": "bob"}}, "filters.user_id"),
    ("post", "/v1/memories/search", {"query": "flight", "filters": {"user_id": "*"}}, "filters.user_id"),
    ("get", "/v1/memories", None, "user_id"),
    ("delete", "/v1/memories", None, "user_id"),
    ("get", "{alice}", None, "user_id"),
    ("put", "{alice}", {"data": "changed"}, "user_id"),
    ("delete", "{alice}", None, "user_id"),
    ("get", "{alice-history}", None, "user_id"),
], ids=["add", "search", "search-filters", "search-filters-star", "get_all", "delete_all", "get", "update", "delete",
        "history"])
def test_a_call_naming_another_user_is_refused_in_one_line_and_writes_nothing(served, method, route, body, field):
    tenants, http = served
    before, mine = writes(tenants), ids(tenants, "alice")[0]
    route = {"{alice}": path(mine), "{alice-history}": path(mine, "history")}.get(route, route)
    params = None if method == "post" else {"user_id": "bob"}
    kw = {} if body is None else {"json": body}
    r = http.request(method.upper(), route, headers=AS["alice"], params=params, **kw)
    assert r.status_code == 403, r.text
    assert r.json()["detail"] == REFUSED.format(field, field)
    assert writes(tenants) == before and users(tenants) == {"alice": 2, "bob": 2}
    assert tenants.tenants["acme"].memory.get(mine)["memory"] == "alice plain flight note"


@pytest.mark.parametrize("filters", [{"user_id": {"in": ["alice", "bob"]}}, {"user_id": {"ne": "alice"}},
                                     {"OR": [{"user_id": "bob"}, {"agent_id": "support"}]},
                                     {"NOT": [{"user_id": "alice"}]}, {"user_id": "alice"}])
def test_a_searchs_filters_stay_inside_the_keys_user(served, filters):
    tenants, http = served
    r = http.post("/v1/memories/search", headers=AS["alice"], json={"query": "flight note", "limit": 20,
                                                                     "filters": filters})
    assert r.status_code == 200, r.text
    assert {h["user_id"] for h in r.json()["results"]} <= {"alice"}
    wide = http.post("/v1/memories/search", headers=AS["admin"], json={"query": "flight note", "limit": 20,
                                                                       "agent_id": "support", "filters": filters})
    assert wide.status_code == 200, wide.text  # the same filters by the tenant's own key: not refused


def test_listing_searching_and_deleting_by_agent_alone_reach_only_the_keys_user(served):
    tenants, http = served
    support = {"agent_id": "support"}
    listed = http.get("/v1/memories", headers=AS["alice"], params=support)
    assert [(m["user_id"], m["agent_id"]) for m in listed.json()["results"]] == [("alice", "support")]
    found = http.post("/v1/memories/search", headers=AS["alice"], json={"query": "support flight", **support})
    assert [h["user_id"] for h in found.json()["results"]] == ["alice"]
    http.post("/v1/memories", headers=AS["admin"], json={"messages": "alice wants an aisle seat", "user_id": "alice",
                                                          **support})  # the newest: the decision point, left out
    by_call = http.post("/v1/memories/search", headers=AS["alice"], json={
        "query": "", "call": {"name": "book", "arguments": {"seat": "aisle"}}, "limit": 20, **support})
    assert [h["memory"] for h in by_call.json()["results"]] == ["alice support flight note"]
    http.delete(path(ids(tenants, "alice")[-1]), headers=AS["alice"])
    bobs = ids(tenants, "bob")
    assert http.get(path(bobs[0], "history"), headers=AS["alice"]).json() == []  # no scope given: still alice's
    cleared = http.delete("/v1/memories", headers=AS["alice"], params=support)
    assert cleared.json()["message"] == "1 memories deleted"
    assert users(tenants) == {"alice": 1, "bob": 2} and users(tenants, **support) == {"bob": 1}
    assert http.delete("/v1/memories", headers=AS["alice"]).json()["message"] == "1 memories deleted"
    assert users(tenants) == {"bob": 2}


def test_another_users_ids_are_answered_as_another_tenants(served):
    tenants, http = served
    bobs = ids(tenants, "bob")
    for mid in bobs:
        for who in ("alice", "other"):  # the same answers as the other tenant's key gets
            assert http.get(path(mid), headers=AS[who]).status_code == 404
            assert http.put(path(mid), headers=AS[who], json={"data": "overwritten"}).status_code == 404
            assert http.delete(path(mid), headers=AS[who]).status_code == 404
            assert http.get(path(mid, "history"), headers=AS[who]).json() == []
    assert [m["memory"] for m in tenants.tenants["acme"].memory.get_all(user_id="bob")["results"]] == [
        "bob plain flight note", "bob support flight note"]
    assert [h["event"] for h in http.get(path(bobs[0], "history"), headers=AS["bob"]).json()] == ["ADD"]


def mcp_call(http: TestClient, who: str, tool: str, arguments: dict) -> tuple[bool, str]:
    """(is_error, text) of one MCP tool call at /mcp with ``who``'s key (JSON-RPC over streamable HTTP)."""
    r = http.post("/mcp/", headers={**AS[who], **JSON_RPC}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    return result["isError"], result["content"][0]["text"]


def test_mcp_over_http_serves_the_keys_user_only(served):
    tenants, http = served
    bob_id = ids(tenants, "bob")[0]
    error, text = mcp_call(http, "alice", "remember", {"text": "alice: no red-eyes"})
    assert not error, text
    assert users(tenants) == {"alice": 3, "bob": 2}
    error, text = mcp_call(http, "alice", "recall", {"query": "flight note", "agent_id": "support", "limit": 20})
    assert not error and [h["user_id"] for h in json.loads(text)["results"]] == ["alice"]
    before = writes(tenants)
    for tool, args in (("remember", {"text": "x"}), ("recall", {"query": "x"}), ("forget", {"memory_id": bob_id}),
                       ("forget_all", {})):
        error, text = mcp_call(http, "alice", tool, {**args, "user_id": "bob"})
        assert error and text == f"Error executing tool {tool}: " + REFUSED.format("user_id", "user_id")
    assert writes(tenants) == before
    error, text = mcp_call(http, "alice", "forget", {"memory_id": bob_id})
    assert error and "is not in this tenant's memory within user_id='alice'" in text
    error, text = mcp_call(http, "alice", "forget_all", {"agent_id": "support"})
    assert not error and json.loads(text)["message"] == "1 memories deleted"
    assert users(tenants) == {"alice": 2, "bob": 2}
    error, text = mcp_call(http, "admin", "recall", {"query": "flight", "user_id": "bob"})  # a tenant key: as before
    assert not error and {h["user_id"] for h in json.loads(text)["results"]} == {"bob"}


@pytest.mark.parametrize("entry, says", [
    ([ADMIN, {"key": ALICE, "user_id": ""}], "tenant 'acme' (entry 2), field 'user_id': user_id must be a non-empty "
                                             "string without '/'"),
    ({"key": ALICE, "user_id": "al/ice"}, "tenant 'acme', field 'user_id': user_id must be a non-empty string"),
    ({"key": ALICE, "user_id": None}, "tenant 'acme', field 'user_id': null fixes no user"),
    ({"key": ALICE, "user": "alice"}, "tenant 'acme', field 'user': unknown; a key entry takes key, user_id"),
    ({"user_id": "alice"}, "tenant 'acme' has no field 'key'"),
    ([ADMIN, {"key": "short", "user_id": "alice"}], "the key of tenant 'acme' (entry 2) must be a string of at "
                                                    "least 16"),
    ([ADMIN, {"key": ADMIN, "user_id": "alice"}], "tenant 'acme' (entry 1) and tenant 'acme' (entry 2) have the "
                                                  "same key"),
    ([ADMIN, 7], "tenant 'acme' (entry 2): want a key (a string) or"),
    ([], "tenant 'acme' has an empty list of keys"),
], ids=["empty", "slash", "null", "unknown-field", "no-key", "short-key", "same-key", "number", "empty-list"])
def test_a_bad_key_entry_is_named_in_one_line(tmp_path, capsys, entry, says):
    keys = keys_file(tmp_path, {"acme": entry})
    with pytest.raises(SAMFileError) as err:
        read_keys(keys)
    assert str(err.value).startswith(f"{keys}: {says}") and "\n" not in str(err.value), str(err.value)
    assert ALICE not in str(err.value) and ADMIN not in str(err.value)  # a key is a secret: named by its place
    rc = sam_serve(["--keys", str(keys), "--data", str(tmp_path / "data"), "--model", str(tmp_path / "no-model")])
    assert rc != 0 and capsys.readouterr().err.strip().splitlines()[-1].startswith(f"error: {err.value} (")


def test_the_keys_file_reads_as_before_and_the_readme_and_help_describe_entries(tmp_path):
    old = read_keys(keys_file(tmp_path, {"acme": ADMIN, "globex": OTHER}))
    assert old == {ADMIN: ("acme", {}), OTHER: ("globex", {})}
    new = read_keys(keys_file(tmp_path, KEYS))
    assert new[ALICE] == ("acme", {"user_id": "alice"}) and new[ADMIN] == ("acme", {})
    import docset

    readme = docset.text()  # README.md and docs/*.md: the passage may live in either
    example = next(b for b in re.findall(r"^```json\n(.*?)^```", readme, re.S | re.M) if '"user_id": "alice"' in b)
    shown = read_keys(keys_file(tmp_path, json.loads(example)))
    assert [(a.tenant, dict(a.scopes)) for a in shown.values()] == [
        ("acme", {}), ("saas", {}), ("saas", {"user_id": "alice"}), ("saas", {"user_id": "bob", "agent_id": "support"})]
    keys_help = next(a.help for a in parser()._actions if "--keys" in a.option_strings)
    assert '"user_id"' in keys_help and "403" in keys_help
