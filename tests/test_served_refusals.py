"""What a served call's refusal says is something the caller can do over HTTP and MCP."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from mcp import Client  # noqa: E402
from serving import KEYS  # noqa: E402
from test_served_session_lines import open_tenants  # noqa: E402

from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402


def test_a_search_of_no_scope_is_refused_without_advice_the_server_refuses(tmp_path):
    """A search naming no scope was answered 'give user_id, agent_id or run_id (or all_scopes=True to search every
    scope on purpose)': ScopedMemory's advice, but a served search takes no all_scopes (HTTP answers the field with
    a 422 'Extra inputs are not permitted', MCP refuses the argument). The served refusal names the scopes alone."""
    tenants = open_tenants(tmp_path)
    http = TestClient(create_app(tenants))
    r = http.post("/v1/memories/search", headers={"X-API-Key": KEYS["acme"]}, json={"query": "plan"})
    assert r.status_code == 422 and "give user_id, agent_id or run_id" in r.json()["detail"], r.text
    tried = http.post("/v1/memories/search", headers={"X-API-Key": KEYS["acme"]},
                      json={"query": "plan", "all_scopes": True})
    assert tried.status_code == 422  # what the advice would have led to

    async def run():
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return await client.call_tool("recall", {"query": "plan"})
    answer = asyncio.run(run())
    assert answer.is_error and "give user_id, agent_id or run_id" in answer.content[0].text
    for said in (r.json()["detail"], answer.content[0].text):
        assert "all_scopes" not in said and "missing scope is refused" in said, said


def test_a_wildcard_scope_in_filters_is_refused_without_advice_the_server_refuses(tmp_path):
    """Found by a walkthrough: a search whose filters named a scope '*' was answered "... would search every user;
    give one, or all_scopes=True on purpose", the argument the served search refuses (the no-scope refusal above
    had lost it, this one kept it). Over HTTP it says what a caller can give: one scope."""
    http = TestClient(create_app(open_tenants(tmp_path)))
    for scope in ("user_id", "agent_id", "run_id"):
        r = http.post("/v1/memories/search", headers={"X-API-Key": KEYS["acme"]},
                      json={"query": "plan", "user_id": "mia", "filters": {scope: "*"}})
        assert (r.status_code, r.json()) == (422, {"detail": f"filters.{scope} '*' would search every "
                                                             f"{scope.removesuffix('_id')}; give one"}), r.text


def test_an_update_of_empty_data_is_refused_without_leave_it_out(tmp_path):
    """Found by a walkthrough: ``PUT /v1/memories/{id}`` with ``{"data": ""}`` was told to "give a value of at
    least 1 character(s), or leave it out", and leaving it out is a 422 "data is missing". Now it says to give the
    text alone; the memory is unchanged."""
    http = TestClient(create_app(open_tenants(tmp_path)))
    key = {"X-API-Key": KEYS["acme"]}
    mid = http.post("/v1/memories", headers=key, json={"messages": "I live in Paris", "user_id": "mia"}).json()
    mid = mid["results"][0]["id"]
    r = http.put(f"/v1/memories/{mid.replace('#', '%23')}", headers=key, json={"data": ""})
    assert (r.status_code, r.json()) == (422, {"detail": "data is empty: give a text of at least 1 character(s)"})
    assert http.get(f"/v1/memories/{mid.replace('#', '%23')}", headers=key).json()["memory"] == "I live in Paris"


def test_a_refusal_by_id_shows_the_callers_long_values_cut(tmp_path):
    """Found by a walkthrough: a 404 by id echoed the id whole (a path of 100,000 characters came back as 100 KB in
    one line), and an update of blank data its blank data whole; a refusal shows a caller's value as every other one
    does, cut at 60 characters (sam_model.limits.shown). Over HTTP and MCP's forget alike; a short id is shown whole."""
    tenants = open_tenants(tmp_path)
    http = TestClient(create_app(tenants))
    key = {"X-API-Key": KEYS["acme"]}
    mid = http.post("/v1/memories", headers=key, json={"messages": "I live in Paris", "user_id": "mia"}).json()
    path = f"/v1/memories/{mid['results'][0]['id'].replace('#', '%23')}"
    long_id, cut = "a" * 20_000, "'" + "a" * 56 + "..."
    for method, body in (("GET", None), ("DELETE", None), ("PUT", {"data": "x"})):
        r = http.request(method, f"/v1/memories/{long_id}", headers=key, json=body, params={"user_id": "m" * 300})
        assert r.status_code == 422 and len(r.text) < 400, (method, len(r.text))  # the scope's own rule, cut
        r = http.request(method, f"/v1/memories/{long_id}", headers=key, json=body, params={"user_id": "mia"})
        assert (r.status_code, r.json()) == (404, {"detail": f"memory {cut} is not in this tenant's memory within "
                                                             "user_id='mia'"}), (method, r.text[:200])
    r = http.put(path, headers=key, json={"data": " " * 99_999})
    assert (r.status_code, r.json()) == (422, {"detail": "data must be the memory's new text (a non-empty string), "
                                                         "got '" + " " * 56 + "..."}), r.text[:200]
    assert http.get(path, headers=key).json()["memory"] == "I live in Paris"
    r = http.get("/v1/memories/mia%23999", headers=key)
    assert r.json() == {"detail": "memory 'mia#999' is not in this tenant's memory"}

    async def run():
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return await client.call_tool("forget", {"memory_id": long_id})
    answer = asyncio.run(run())
    assert answer.is_error and answer.content[0].text.endswith(f"memory {cut} is not in this tenant's memory")
