"""Trying to get out of a key's fixed scope: an attacker holding alice's key of tenant acme (``{"key": ...,
"user_id": "alice"}``) names other users every way the HTTP routes and the MCP tools at /mcp take them (bodies, query
strings, filters with operators, case and Unicode variants, lists, objects, null, agent or run alone, other users'
memory ids, metadata, message and event fields, a search by call, restarts, keys-file neighbours). Every other
scope's memories hold a marker word that no answer to alice's key may carry, and are the same after each attempt."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from serving import keys_file  # noqa: E402

from sam_model.memory import HashingEncoder  # noqa: E402
from sam_model.serve.batching import BatchedSearch  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

ADMIN, ALICE, STAR, HASH = ("acme-admin-key-0123456789", "acme-alice-key-0123456789", "acme-star-key-01234567890",
                            "acme-hash-key-01234567890")
GLOBEX, GALICE = "globex-admin-key-0123456789", "globex-alice-key-0123456789"
KEYS = {"acme": [ADMIN, {"key": ALICE, "user_id": "alice"}, {"key": STAR, "user_id": "*"},
                 {"key": HASH, "user_id": "bob#0"}],
        "globex": [GLOBEX, {"key": GALICE, "user_id": "alice"}]}
AS = {name: {"X-API-Key": key} for name, key in (("admin", ADMIN), ("alice", ALICE), ("star", STAR), ("hash", HASH),
                                                  ("globex", GLOBEX), ("galice", GALICE))}
JSON_RPC = {"Accept": "application/json, text/event-stream"}
SECRET = "SECRET"  # in every memory not alice's of acme: no answer to alice's key may hold it
SEED = [  # (tenant key, body) written before each attempt
    ("admin", {"messages": "alice plain flight note", "user_id": "alice"}),
    ("admin", {"messages": "alice support flight note", "user_id": "alice", "agent_id": "support"}),
    ("admin", {"messages": "bob SECRET plain flight note", "user_id": "bob"}),
    ("admin", {"messages": "bob SECRET support flight note", "user_id": "bob", "agent_id": "support"}),
    ("admin", {"messages": "support SECRET flight note of no user", "agent_id": "support"}),
    ("admin", {"messages": "trip SECRET flight note of no user", "run_id": "trip"}),
    ("admin", {"messages": [{"role": "user", "content": "bob SECRET: my city is Lyon, budget 300"},
                            {"role": "assistant", "content": "bob SECRET noted"}],
               "user_id": "bob", "run_id": "trip", "metadata": {"topic": "travel"}}),
    ("admin", {"messages": "Alice SECRET capital flight note", "user_id": "Alice"}),
    ("admin", {"messages": "alice-space SECRET flight note", "user_id": "alice "}),
    ("admin", {"messages": "bob-hash SECRET flight note", "user_id": "bob#0"}),
    ("globex", {"messages": "globex alice SECRET flight note", "user_id": "alice"}),
]


def open_tenants(folder: Path) -> Tenants:
    return Tenants(read_keys(keys_file(folder, KEYS)), folder / "data", HashingEncoder(64), StoreConfig(), fsync=False)


@contextlib.contextmanager
def client(tenants: Tenants):
    """An HTTP client of sam-serve's app with MCP at /mcp, as sam_model.serve.cli runs it."""
    mcp = create_mcp(tenants)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/", stateless_http=True, json_response=True,
                                      host="127.0.0.1")

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with mcp.session_manager.run():
            yield

    with TestClient(create_app(tenants, BatchedSearch(window=0.0), mcp_app, lifespan),
                    base_url="http://127.0.0.1:8420") as http:
        yield http


def seed(http: TestClient) -> None:
    for who, body in SEED:
        r = http.post("/v1/memories", headers=AS[who], json=body)
        assert r.status_code == 200, r.text


@pytest.fixture
def served(tmp_path):
    tenants = open_tenants(tmp_path)
    with client(tenants) as http:
        seed(http)
        yield tenants, http
    tenants.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One seeded server for the many attempts (each checks that every memory not alice's is as it was before it,
    so one that got through is caught where it did), with bob's last memory of run trip deleted (its history
    kept)."""
    tenants = open_tenants(tmp_path_factory.mktemp("world"))
    with client(tenants) as http:
        seed(http)
        deleted = ids(tenants, user_id="bob", run_id="trip")[-1]
        assert http.delete(path(deleted), headers=AS["admin"]).status_code == 200
        yield tenants, http, deleted
    tenants.close()


def others(tenants: Tenants, times: bool = True) -> list[tuple]:
    """Every memory of every tenant that is not alice's of acme, whole (words, scopes, metadata, history; ``times``:
    when it was last written, which a replay makes anew)."""
    out = []
    for name, tenant in sorted(tenants.tenants.items()):
        memory = tenant.memory
        for m in memory.get_all(all_scopes=True, limit=None)["results"]:
            if (name, m["user_id"]) != ("acme", "alice"):
                out.append((name, m["id"], m["memory"], m["user_id"], m["agent_id"], m["run_id"],
                            json.dumps(m["metadata"], sort_keys=True), m["updated_at"] if times else None,
                            len(memory.history(m["id"]))))
    return sorted(out)


def mine(tenants: Tenants) -> list[dict]:
    return tenants.tenants["acme"].memory.get_all(user_id="alice", limit=None)["results"]


def ids(tenants: Tenants, tenant: str = "acme", **scope) -> list[str]:
    return [m["id"] for m in tenants.tenants[tenant].memory.get_all(**scope, limit=None)["results"]]


def path(memory_id: str, route: str = "memories") -> str:
    return f"/v1/{route}/" + quote(memory_id, safe="")


def results_users(answer: object) -> set:
    """The user_id of every memory an answer lists (a search's or get_all's results, a get's memory)."""
    if isinstance(answer, dict) and "results" in answer:  # an add's results name no scope: mine() checks those
        return {m["user_id"] for m in answer["results"] if "user_id" in m}
    if isinstance(answer, dict) and "memory" in answer:
        return {answer.get("user_id")}
    return set()


def check_held(tenants: Tenants, before: list[tuple], text: str) -> None:
    assert SECRET not in text, text
    assert others(tenants) == before


FULL_WIDTH = "\uff41\uff4c\uff49\uff43\uff45"  # ａｌｉｃｅ
BOB_NAMES = ["bob", "Alice", "ALICE", "alice ", " alice", FULL_WIDTH, "alice\x00", "ali\u0441e", "alice\u200b", "*",
             "alice*", ".*", "^a", "%", "alice/x"]
ID_NAMES = (0, 1, 5, 9)  # the names (BOB_NAMES' indexes) tried on the routes by id too: bob, Alice, full width, *
BAD_TYPES = [["alice", "bob"], ["bob"], {"eq": "bob"}, {"in": ["alice", "bob"]}, 7, True]
FILTERS = [
    {"user_id": "bob"}, {"user_id": ["alice", "bob"]}, {"user_id": "*"}, {"user_id": "Alice"}, {"user_id": None},
    {"user_id": ""}, {"user_id": FULL_WIDTH}, {"user_id": {"in": ["alice", "bob"]}}, {"user_id": {"ne": "alice"}},
    {"user_id": {"nin": ["alice"]}}, {"user_id": {"contains": "b"}}, {"user_id": {"icontains": ""}},
    {"user_id": {"eq": "bob"}}, {"user_id": {"ne": None}}, {"AND": [{"user_id": "bob"}]},
    {"OR": [{"user_id": "bob"}, {"user_id": "alice"}]}, {"NOT": [{"user_id": "alice"}]},
    {"OR": [{"AND": [{"user_id": "bob"}]}, {"NOT": [{"user_id": "alice"}]}]}, {"OR": [{"user_id": "*"}]},
    {"agent_id": "support"}, {"agent_id": "*"}, {"run_id": "trip"}, {"topic": "travel"}, {"topic": "*"},
    {"user_id": "alice", "agent_id": {"ne": "nobody"}}, {"AND": {"user_id": "bob"}}, {"episode_id": "bob"},
    {"episode_id": {"contains": "bob"}}, {"kind": {"ne": "x"}},
]


def rest_attempts() -> list[tuple[str, str, str, dict | None, dict | None]]:
    """(id, method, route, query, body) of every REST attempt; routes with ``{bob}`` take bob's first memory id."""
    out: list[tuple[str, str, str, dict | None, dict | None]] = []
    for n, name in enumerate(BOB_NAMES + BAD_TYPES + [""]):
        out.append((f"add-user-{n}", "POST", "/v1/memories", None, {"messages": "planted", "user_id": name}))
        out.append((f"search-user-{n}", "POST", "/v1/memories/search", None, {"query": "flight note", "user_id": name,
                                                                               "limit": 50}))
        if isinstance(name, str):
            for route in ("/v1/memories", "{bob}", "{alice}", "{bob-history}"):
                for method in ("GET", "DELETE") + (("PUT",) if route in ("{bob}", "{alice}") else ()):
                    if route == "{bob-history}" and method == "DELETE" or route != "/v1/memories" and n not in ID_NAMES:
                        continue
                    body = {"data": "overwritten SECRETLESS"} if method == "PUT" else None
                    out.append((f"{method.lower()}-{route.strip('{}').replace('/v1/', '')}-query-user-{n}", method,
                                route, {"user_id": name}, body))
    for n, f in enumerate(FILTERS):
        out.append((f"search-filters-{n}", "POST", "/v1/memories/search", None,
                    {"query": "flight note", "filters": f, "limit": 50}))
        out.append((f"search-filters-agent-{n}", "POST", "/v1/memories/search", None,
                    {"query": "flight note", "agent_id": "support", "filters": f, "limit": 50}))
        out.append((f"search-live-filters-{n}", "POST", "/v1/memories/search", None,
                    {"query": "", "state": "live", "run_id": "trip", "filters": f, "limit": 50}))
    for scope in ({"agent_id": "support"}, {"run_id": "trip"}, {"agent_id": "support", "run_id": "trip"}):
        tag = "-".join(scope)
        out += [(f"get_all-{tag}", "GET", "/v1/memories", scope, None),
                (f"search-{tag}", "POST", "/v1/memories/search", None, {"query": "flight note", **scope, "limit": 50}),
                (f"search-live-{tag}", "POST", "/v1/memories/search", None, {"query": "", "state": "live", **scope}),
                (f"search-call-{tag}", "POST", "/v1/memories/search", None,
                 {"query": "", "call": {"name": "book", "arguments": {"city": "Lyon", "budget": 300}}, **scope}),
                (f"get-bob-{tag}", "GET", "{bob}", scope, None), (f"put-bob-{tag}", "PUT", "{bob}", scope,
                                                                   {"data": "overwritten"}),
                (f"delete-bob-{tag}", "DELETE", "{bob}", scope, None),
                (f"history-bob-{tag}", "GET", "{bob-history}", scope, None),
                (f"get-run-{tag}", "GET", "{trip}", scope, None), (f"delete-run-{tag}", "DELETE", "{trip}", scope, None),
                (f"delete_all-{tag}", "DELETE", "/v1/memories", scope, None)]
    out += [
        ("search-call-bobs-conversation", "POST", "/v1/memories/search", None,
         {"query": "", "run_id": "trip", "call": [{"name": "book", "arguments": {"user_id": "bob", "city": "Lyon"}},
                                                   {"name": "lookup", "arguments": {"user": "bob"}}]}),
        ("search-query-string-bob", "POST", "/v1/memories/search?user_id=bob", None, {"query": "flight note"}),
        ("add-query-string-bob", "POST", "/v1/memories?user_id=bob", None, {"messages": "planted"}),
        ("add-metadata-bob", "POST", "/v1/memories", None,
         {"messages": "planted", "metadata": {"user_id": "bob", "agent_id": "support", "run_id": "trip"}}),
        ("add-message-fields-bob", "POST", "/v1/memories", None,
         {"messages": [{"role": "user", "content": "planted", "name": "bob", "user_id": "bob"}]}),
        ("add-events-episode-bob", "POST", "/v1/memories", None,
         {"messages": [{"kind": "user", "text": "planted", "episode_id": "bob", "step": 0}]}),
        ("add-events-episode-bob-run", "POST", "/v1/memories", None,
         {"messages": [{"kind": "user", "text": "planted", "episode_id": "bob//trip", "step": 5}], "run_id": "trip"}),
        ("add-user-and-query-alice", "POST", "/v1/memories?user_id=alice", None,
         {"messages": "planted", "user_id": "bob"}),
        ("put-body-user", "PUT", "{alice}", None, {"data": "moved", "user_id": "bob"}),
        ("put-body-metadata", "PUT", "{alice}", None, {"data": "moved", "metadata": {"user_id": "bob"}}),
        ("put-body-agent", "PUT", "{alice}", None, {"data": "moved", "agent_id": "support"}),
        ("get_all-twice", "GET", "/v1/memories?user_id=alice&user_id=bob", None, None),
        ("get_all-twice-agent", "GET", "/v1/memories?agent_id=support&agent_id=x", None, None),
        ("get_all-filters-param", "GET", "/v1/memories", {"filters": json.dumps({"user_id": "bob"})}, None),
        ("get_all-all_scopes", "GET", "/v1/memories", {"all_scopes": "true"}, None),
        ("get_all-limit", "GET", "/v1/memories", {"limit": 1_000_000}, None),
        ("get_all-limit-0", "GET", "/v1/memories", {"limit": 0}, None),
        ("delete_all-all_scopes", "DELETE", "/v1/memories", {"all_scopes": "true"}, None),
        ("search-all_scopes", "POST", "/v1/memories/search", None, {"query": "flight note", "all_scopes": True}),
        ("search-limit-max", "POST", "/v1/memories/search", None, {"query": "flight note", "limit": 1000}),
        ("search-threshold", "POST", "/v1/memories/search", None, {"query": "flight note", "threshold": -1e9}),
        ("get-deleted-bob-history", "GET", "{bob-deleted-history}", None, None),
        ("get-star-id", "GET", "{star}", None, None),
        ("get-no-user-id", "GET", "{support}", None, None), ("delete-no-user-id", "DELETE", "{support}", None, None),
        ("history-no-user-id", "GET", "{support-history}", None, None),
        ("get-globex-alice-id", "GET", "{globex}", None, None),
        ("delete-globex-alice-id", "DELETE", "{globex}", None, None),
        ("get-crafted-id", "GET", path("alice/../bob#0"), None, None),
        ("history-crafted-id", "GET", path("alice/../bob#0", "history"), None, None),
        ("history-crafted-id-2", "GET", path("alice#0/../../bob#0", "history"), None, None),
        ("get-bob-id-unencoded", "GET", "/v1/memories/bob#0", None, None),
        ("get-trailing-slash", "GET", "/v1/memories/", {"user_id": "bob"}, None),
        ("health", "GET", "/health", None, None), ("openapi", "GET", "/openapi.json", None, None),
        ("docs", "GET", "/docs", None, None),
    ]
    for route in ("/v1/memories/batch", "/v1/batch", "/v1/export", "/v1/exports", "/v1/stats", "/v1/admin",
                  "/admin", "/v1/reset", "/v1/users", "/v1/entities", "/v2/memories", "/v2/memories/search",
                  "/v1/memories/export", "/v1/state", "/v1/live_state", "/v1/conversation"):
        for method in ("GET", "POST"):
            out.append((f"{method.lower()}-{route}", method, route, {"user_id": "bob"},
                        {"user_id": "bob", "query": "x"} if method == "POST" else None))
    return out


REST = rest_attempts()
ROUTES = {("/health", "GET"), ("/v1/memories", "POST"), ("/v1/memories/search", "POST"), ("/v1/memories", "GET"),
          ("/v1/memories", "DELETE"), ("/v1/memories/{memory_id:path}", "GET"), ("/v1/memories/{memory_id:path}", "PUT"),
          ("/v1/memories/{memory_id:path}", "DELETE"), ("/v1/history/{memory_id:path}", "GET")}


def test_the_attempts_cover_every_route_the_app_has(world):
    """A route added later is one these attempts do not try: name it here, and try it above."""
    from fastapi.routing import APIRoute
    from starlette.routing import Mount

    app = world[1].app
    routes = {(r.path, m) for r in app.routes if isinstance(r, APIRoute) for m in r.methods}
    assert routes == ROUTES
    assert [r.path for r in app.routes if isinstance(r, Mount)] == ["/mcp"]
    tried = {(route if route.startswith("/") else "/v1/" + ("history" if "history" in route else "memories")
              + "/{memory_id:path}", method) for _, method, route, _, _ in REST}
    assert ROUTES <= tried


@pytest.mark.parametrize("method, route, query, body", [a[1:] for a in REST], ids=[a[0] for a in REST])
def test_alices_key_reaches_nothing_but_alices_memory_over_rest(world, method, route, query, body):
    tenants, http, deleted = world
    acme = tenants.tenants["acme"].memory
    if not mine(tenants):  # an attempt before deleted them (as alice may)
        assert http.post("/v1/memories", headers=AS["admin"], json=SEED[0][1]).status_code == 200
    bob, trip = ids(tenants, user_id="bob")[0], ids(tenants, run_id="trip")[0]
    named = {"{bob}": path(bob), "{alice}": path(ids(tenants, user_id="alice")[0]),
             "{bob-history}": path(bob, "history"), "{trip}": path(trip),
             "{bob-deleted-history}": path(deleted, "history"),
             "{star}": path(ids(tenants, user_id="alice")[0].replace("alice", "*")),
             "{support}": path(ids(tenants, agent_id="support")[-1]),
             "{support-history}": path(ids(tenants, agent_id="support")[-1], "history"),
             "{globex}": path(ids(tenants, "globex", user_id="alice")[0])}
    before = others(tenants)
    r = http.request(method, named.get(route, route), headers=AS["alice"], params=query,
                     **({} if body is None else {"json": body}))
    check_held(tenants, before, r.text)
    assert r.status_code < 500, r.text
    if r.status_code == 200 and r.headers.get("content-type", "").startswith("application/json"):
        answer = r.json()
        assert results_users(answer) <= {"alice"}, answer
        if isinstance(answer, list):  # a history: only of alice's memories
            assert all(h["memory_id"] in {m["id"] for m in acme.get_all(user_id="alice", limit=None)["results"]} or
                       h["memory_id"].startswith("alice") for h in answer), answer
    assert all(m["user_id"] == "alice" for m in mine(tenants))


def mcp_call(http: TestClient, who: str, tool: str, arguments: dict, headers: dict | None = None) -> tuple[bool, str]:
    r = http.post("/mcp/", headers={**AS[who], **JSON_RPC, **(headers or {})}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
    assert r.status_code == 200, r.text
    if "error" in r.json():
        return True, json.dumps(r.json()["error"])
    result = r.json()["result"]
    return result["isError"], result["content"][0]["text"]


def mcp_attempts() -> list[tuple[str, str, dict]]:
    out: list[tuple[str, str, dict]] = []
    for n, name in enumerate(BOB_NAMES + BAD_TYPES + [""]):
        for scope in ("user_id", "agent_id", "run_id"):
            if scope != "user_id" and n:
                continue
            out += [(f"remember-{scope}-{n}", "remember", {"text": "planted", scope: name}),
                    (f"recall-{scope}-{n}", "recall", {"query": "flight note", scope: name, "limit": 50}),
                    (f"forget-{scope}-{n}", "forget", {"memory_id": "{bob}", scope: name}),
                    (f"forget_all-{scope}-{n}", "forget_all", {scope: name})]
    for scope in ({"agent_id": "support"}, {"run_id": "trip"}, {}):
        tag = "-".join(scope) or "none"
        out += [(f"recall-{tag}", "recall", {"query": "flight note", **scope, "limit": 50}),
                (f"recall-live-{tag}", "recall", {"query": "", "state": "live", **scope}),
                (f"recall-call-{tag}", "recall", {"query": "", "call": {"name": "book", "arguments": {"city": "Lyon"}},
                                                  **scope}),
                (f"forget-bob-{tag}", "forget", {"memory_id": "{bob}", **scope}),
                (f"forget-no-user-{tag}", "forget", {"memory_id": "{support}", **scope}),
                (f"forget-globex-{tag}", "forget", {"memory_id": "{globex}", **scope}),
                (f"forget_all-{tag}", "forget_all", scope)]
    out += [("recall-filters", "recall", {"query": "flight", "filters": {"user_id": "bob"}}),
            ("recall-all_scopes", "recall", {"query": "flight", "all_scopes": True}),
            ("forget_all-all_scopes", "forget_all", {"all_scopes": True}),
            ("remember-metadata-bob", "remember", {"text": "planted", "metadata": {"user_id": "bob"}}),
            ("remember-messages-bob", "remember", {"messages": [{"role": "user", "content": "planted",
                                                                 "user_id": "bob", "name": "bob"}]}),
            ("remember-events-bob", "remember", {"messages": [{"kind": "user", "text": "planted",
                                                               "episode_id": "bob", "step": 0}]}),
            ("recall-limit", "recall", {"query": "flight note", "limit": 1000})]
    return out


MCP = mcp_attempts()


@pytest.mark.parametrize("tool, arguments", [a[1:] for a in MCP], ids=[a[0] for a in MCP])
def test_alices_key_reaches_nothing_but_alices_memory_over_mcp(world, tool, arguments):
    tenants, http, _ = world
    named = {"{bob}": ids(tenants, user_id="bob")[0], "{support}": ids(tenants, agent_id="support")[-1],
             "{globex}": ids(tenants, "globex", user_id="alice")[0]}
    arguments = {k: named.get(v, v) if isinstance(v, str) else v for k, v in arguments.items()}
    before = others(tenants)
    error, text = mcp_call(http, "alice", tool, arguments)
    check_held(tenants, before, text)
    if not error and tool == "recall":
        assert results_users(json.loads(text)) <= {"alice"}, text
    assert all(m["user_id"] == "alice" for m in mine(tenants))


def test_mcp_takes_its_key_from_each_request_not_the_body_or_a_second_header(served):
    tenants, http = served
    before = others(tenants)
    for headers in ({"Authorization": f"Bearer {ADMIN[:-1]}"}, {"X-API-Key": ""}, {"x-api-key": ALICE.upper()}):
        r = http.post("/mcp/", headers={**JSON_RPC, **headers}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "flight", "user_id": "bob"},
                       "_meta": {"headers": {"X-API-Key": ADMIN}}}})
        check_held(tenants, before, r.text)
    error, text = mcp_call(http, "alice", "recall", {"query": "flight note", "limit": 50},
                           {"Authorization": "Bearer not-a-key-at-all-000"})  # X-API-Key wins: alice's
    assert not error and results_users(json.loads(text)) == {"alice"}
    check_held(tenants, before, text)


def test_mcp_without_a_known_key_is_a_401_before_the_sdk_reads_it(served):
    """Found by a walkthrough: /mcp answered a caller with no key or a wrong one 200 (initialize and tools/list
    served, a tool call's refusal a 200 whose result was the error), where every route answers 401. Now the mount
    answers 401 with the routes' line as a JSON-RPC error (what an MCP client shows), the body unread (a key given
    twice in it would be a 400); a known key is served."""
    tenants, http = served
    before = others(tenants)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    recall = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "recall", "arguments": {"query": "flight", "user_id": "bob"}}}
    for headers in ({}, {"X-API-Key": ""}, {"Authorization": f"Bearer {ADMIN[:-1]}"}, {"X-API-Key": ALICE.upper()},
                    {"Authorization": ADMIN}):  # no scheme: no key
        for body in (initialize, listing, recall):
            r = http.post("/mcp/", headers={**JSON_RPC, **headers}, json=body)
            assert (r.status_code, r.json(), r.headers.get("www-authenticate")) == (401, {
                "jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Unauthorized: missing or unknown "
                                                        "API key: send 'Authorization: Bearer <key>' or 'X-API-Key: "
                                                        "<key>'"}}, "Bearer"), (headers, body, r.text)
        twice = b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}'
        r = http.post("/mcp/", headers={**JSON_RPC, **headers, "Content-Type": "application/json"}, content=twice)
        assert r.status_code == 401, r.text
        assert http.get("/mcp/", headers={**JSON_RPC, **headers}).status_code == 401
    check_held(tenants, before, "")
    for who in ("admin", "alice"):
        r = http.post("/mcp/", headers={**JSON_RPC, **AS[who]}, json=listing)
        assert r.status_code == 200 and {t["name"] for t in r.json()["result"]["tools"]} == {
            "remember", "recall", "forget", "forget_all"}, r.text


def test_a_write_by_alices_key_lands_in_alices_scope_whatever_it_claims(served):
    tenants, http = served
    for body in ({"messages": "m1", "metadata": {"user_id": "bob"}},
                 {"messages": [{"kind": "user", "text": "m2", "episode_id": "bob", "step": 0}]},
                 {"messages": [{"role": "user", "content": "m3", "name": "bob"}], "agent_id": "support"}):
        r = http.post("/v1/memories?user_id=bob", headers=AS["alice"], json=body)
        assert r.status_code == 200, r.text
    got = {m["memory"]: (m["user_id"], m["episode_id"]) for m in mine(tenants)}
    assert got["m1"] == ("alice", "alice") and got["m2"] == ("alice", "alice") and got["m3"] == ("alice",
                                                                                                  "alice/support")
    found = http.post("/v1/memories/search", headers=AS["admin"], json={"query": "m1 m2 m3", "user_id": "bob",
                                                                        "limit": 50})
    assert not {"m1", "m2", "m3"} & {h["memory"] for h in found.json()["results"]}


def test_a_search_by_call_traces_alices_conversation_only(served):
    tenants, http = served
    r = http.post("/v1/memories/search", headers=AS["alice"], json={
        "query": "", "run_id": "trip", "call": {"name": "book", "arguments": {"city": "Lyon", "budget": 300}}})
    assert r.status_code == 200, r.text
    assert r.json()["results"] == [] and r.json()["state"]["phase"] == "book"
    bobs = http.post("/v1/memories/search", headers=AS["admin"], json={
        "query": "", "user_id": "bob", "run_id": "trip",
        "call": {"name": "book", "arguments": {"city": "Lyon", "budget": 300}}})
    assert bobs.json()["state"] != r.json()["state"]  # bob's conversation said Lyon and 300: his state differs


def test_after_a_restart_alices_key_still_reaches_alice_only(tmp_path):
    tenants = open_tenants(tmp_path)
    with client(tenants) as http:
        for who, body in SEED:
            assert http.post("/v1/memories", headers=AS[who], json=body).status_code == 200
        assert http.post("/v1/memories", headers=AS["alice"], json={"messages": "alice logged note",
                                                                    "agent_id": "support"}).status_code == 200
        assert http.delete(path(ids(tenants, user_id="alice")[0]), headers=AS["alice"]).status_code == 200
    before = others(tenants, times=False)
    del tenants, http  # no close(): as after kill -9, every write is only in the log, replayed on start
    again = open_tenants(tmp_path)
    try:
        assert others(again, times=False) == before
        with client(again) as http:
            for scope in ({}, {"agent_id": "support"}, {"run_id": "trip"}):
                listed = http.get("/v1/memories", headers=AS["alice"], params=scope)
                found = http.post("/v1/memories/search", headers=AS["alice"], json={"query": "flight note logged",
                                                                                    "limit": 50, **scope})
                for r in (listed, found):
                    assert r.status_code == 200 and SECRET not in r.text, r.text
                    assert results_users(r.json()) <= {"alice"}
            assert {m["memory"] for m in mine(again)} == {"alice support flight note", "alice logged note"}
            assert http.delete("/v1/memories", headers=AS["alice"], params={"agent_id": "support"}).status_code == 200
            assert mine(again) == [] and others(again, times=False) == before
    finally:
        again.close()


def test_two_tenants_users_named_alike_never_meet(served):
    tenants, http = served
    for who, other in (("alice", "globex"), ("galice", "acme")):
        listed = http.get("/v1/memories", headers=AS[who])
        assert listed.status_code == 200 and listed.json()["results"]
        assert all(m["memory"].startswith("globex") == (who == "galice") for m in listed.json()["results"])
        theirs = {m["memory"] for m in tenants.tenants[other].memory.get_all(user_id="alice")["results"]}
        for mid in ids(tenants, other, user_id="alice"):  # the same ids name the key's own tenant's memories
            got = http.get(path(mid), headers=AS[who])
            assert got.status_code == 404 or got.json()["memory"] not in theirs, got.text


def test_the_tenants_plain_key_reaches_every_user_as_the_readme_says(served):
    tenants, http = served
    listed = http.get("/v1/memories", headers=AS["admin"], params={"agent_id": "support"})
    assert {m["user_id"] for m in listed.json()["results"]} == {"alice", "bob", None}
    import docset

    readme = docset.text()  # README.md and docs/*.md: the passage may live in either
    assert "A plain key, as acme's and saas's operator keys below, reaches every user of its tenant" in readme


def test_keys_fixed_to_values_the_memory_reads_specially_reach_only_that_value(served):
    tenants, http = served
    before = others(tenants)
    star = http.get("/v1/memories", headers=AS["star"])
    assert star.status_code == 200 and star.json()["results"] == []  # no user '*': every user is not '*'
    found = http.post("/v1/memories/search", headers=AS["star"], json={"query": "flight note", "limit": 50})
    assert found.status_code == 200 and found.json()["results"] == []
    assert http.post("/v1/memories/search", headers=AS["star"], json={"query": "x", "filters": {
        "user_id": "*"}}).status_code in (403, 422)
    assert http.delete("/v1/memories", headers=AS["star"]).json()["message"] == "0 memories deleted"
    hashed = http.get("/v1/memories", headers=AS["hash"]).json()["results"]
    assert [m["memory"] for m in hashed] == ["bob-hash SECRET flight note"]
    bob = ids(tenants, user_id="bob")[0]  # 'bob#0': the id of bob's first memory, the name of the key's user
    assert bob == "bob#0" and http.get(path(bob), headers=AS["hash"]).status_code == 404
    assert http.get(path(bob, "history"), headers=AS["hash"]).json() == []
    assert http.delete(path(bob), headers=AS["hash"]).status_code == 404
    assert others(tenants) == before


@pytest.mark.parametrize("value", ["al\ud800ice", "\udcff"])
def test_a_fixed_scope_no_log_line_can_hold_is_refused_at_start(tmp_path, value):
    """A keys-file user_id holding a lone surrogate (valid JSON "\\ud800"; an undecodable byte of --user-id reads as
    one) started the server, and every write of its key was then a 422 blaming the caller's user_id, which it had
    not sent: the value is now refused where it is given, in one line naming the file, the entry and the field
    (the option, for --user-id)."""
    from sam_model.io import SAMFileError
    from sam_model.serve.mcp import fixed_scopes

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"acme": [ADMIN, {"key": ALICE, "user_id": value}]}), encoding="utf-8")
    with pytest.raises(SAMFileError) as err:
        read_keys(keys)
    said = str(err.value)
    assert said.startswith(f"{keys}: tenant 'acme' (entry 2), field 'user_id': user_id holds a lone UTF-16 surrogate")
    assert "\n" not in said and ALICE not in said
    with pytest.raises(ValueError, match=r"^--user-id: user_id holds a lone UTF-16 surrogate"):
        fixed_scopes({"user_id": value})


def test_sam_serve_stdio_user_id_holds_to_the_same_rule(served):
    """``sam-serve --stdio acme --user-id alice`` (calls without headers, in-process as tests/test_stdio_scopes.py
    makes them): the same attempts as alice's key over /mcp reach nothing else."""
    import asyncio

    from mcp import Client

    tenants, _ = served
    named = {"{bob}": ids(tenants, user_id="bob")[0], "{support}": ids(tenants, agent_id="support")[-1]}
    attempts = [(tool, {k: named.get(v, v) if isinstance(v, str) else v for k, v in args.items()})
                for _, tool, args in MCP if "{globex}" not in args.values()]
    before = others(tenants)

    async def run() -> list:
        async with Client(create_mcp(tenants, stdio_tenant="acme", scopes={"user_id": "alice"})) as mcp:
            out = []
            for tool, args in attempts:
                try:
                    out.append((tool, await mcp.call_tool(tool, args)))
                except Exception as err:  # noqa: BLE001 - an argument the SDK refuses before the tool: refused
                    out.append((tool, str(err)))
            return out

    for tool, got in asyncio.run(run()):
        text = got if isinstance(got, str) else got.content[0].text
        check_held(tenants, before, text)
        if not isinstance(got, str) and not got.is_error and tool == "recall":
            assert results_users(json.loads(text)) <= {"alice"}, text
    assert all(m["user_id"] == "alice" for m in mine(tenants))
