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
