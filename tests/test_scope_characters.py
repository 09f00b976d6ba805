"""A user_id, agent_id or run_id holding a control character or a line break is refused in one line naming it, on
every entry point: ScopedMemory, the LangChain retriever, sam-serve's HTTP bodies and query parameters, MCP's tools,
a keys file's fixed scope and ``--user-id`` (sam_model.limits.check_scope, the one rule).

Found by a walkthrough as a telecom support agent: ``user_id="a\\nb"`` was taken, and its memories' ids were
``a\\nb#0``: a log line or a CSV row showing one is broken, and a NUL or a tab looks like nothing at all."""

from __future__ import annotations

import asyncio
import json

import pytest

from sam_model.memory import HashingEncoder, ScopedMemory

BAD = ["a\nb", "a\x00", "\tfarid", "farid\r", "a\x7fb", "a\u2028b", "a\x85b"]
SAYS = "holds the control character"


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("name", ["user_id", "agent_id", "run_id"])
def test_in_process_every_method_refuses_it_naming_the_scope(name, value):
    memory = ScopedMemory(HashingEncoder(32))
    memory.add("my router is a FritzBox 7590", user_id="farid")
    mid = memory.get_all(user_id="farid")["results"][0]["id"]
    for ask in (lambda s: memory.add("my plan is FIBER100", **s), lambda s: memory.search("plan", **s),
                lambda s: memory.get_all(**s), lambda s: memory.delete_all(**s), lambda s: memory.get(mid, **s),
                lambda s: memory.update(mid, "FIBER500", **s), lambda s: memory.delete(mid, **s),
                lambda s: memory.history(mid, **s), lambda s: memory.live_state(**s)):
        with pytest.raises(ValueError) as refused:
            ask({name: value})
        assert str(refused.value).startswith(f"{name} {SAYS} {value[[ch.isprintable() for ch in value].index(False)]!r}")
    assert [r["memory"] for r in memory.get_all(user_id="farid")["results"]] == ["my router is a FritzBox 7590"]
    assert len(memory.get_all(all_scopes=True)["results"]) == 1  # nothing written under a bad scope


def test_printable_ids_are_taken():
    from sam_model.limits import check_scope

    for value in ("farid", "Farid Haddad", "caf\u00e9-\u4e2d\u6587", "\U0001f469\U0001f4bb", "a#b", "a b"):
        assert check_scope(value, "user_id") == value


def test_the_langchain_retriever_refuses_it():
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import SAMLangChainRetriever

    retriever = SAMLangChainRetriever(memory=ScopedMemory(HashingEncoder(32)))
    with pytest.raises(ValueError, match=f"^user_id {SAYS} '\\\\n'"):
        retriever.invoke("plan", {"configurable": {"user_id": "a\nb"}})


def test_served_entry_points_refuse_it(tmp_path):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from mcp import Client
    from serving import KEYS
    from test_served_session_lines import open_tenants

    from sam_model.io import SAMFileError
    from sam_model.serve.http import create_app
    from sam_model.serve.mcp import create_mcp, fixed_scopes
    from sam_model.serve.tenants import read_keys

    tenants = open_tenants(tmp_path)
    http, headers = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}
    for r in (http.post("/v1/memories", headers=headers, json={"messages": "FIBER100", "user_id": "a\nb"}),
              http.post("/v1/memories/search", headers=headers, json={"query": "plan", "user_id": "a\nb"}),
              http.get("/v1/memories", headers=headers, params={"user_id": "a\nb"}),
              http.delete("/v1/memories", headers=headers, params={"user_id": "a\nb"}),
              http.get("/v1/memories/farid%230", headers=headers, params={"user_id": "a\nb"})):
        assert r.status_code == 422 and r.json()["detail"].startswith(f"user_id {SAYS} '\\n' at position 1"), r.text
    r = http.post("/v1/memories", headers=headers, json={"messages": "FIBER100", "run_id": "chat\x001"})
    assert r.status_code == 422 and r.json()["detail"].startswith(f"run_id {SAYS} '\\x00'"), r.text

    async def tools():
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return [await client.call_tool(name, {**args, "agent_id": "bot\n"}) for name, args in (
                ("remember", {"text": "FIBER100"}), ("recall", {"query": "plan"}), ("forget_all", {}))]
    for answer in asyncio.run(tools()):
        assert answer.is_error and f"agent_id {SAYS} '\\n'" in answer.content[0].text, answer.content[0].text
    assert tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"] == []
    tenants.close()

    with pytest.raises(ValueError, match=f"^--user-id: user_id {SAYS} '\\\\t'"):
        fixed_scopes({"user_id": "\tfarid"})
    keys = tmp_path / "fixed.json"
    keys.write_text(json.dumps({"acme": {"key": KEYS["acme"], "user_id": "farid\n"}}))
    with pytest.raises((SAMFileError, ValueError), match=f"field 'user_id': user_id {SAYS}"):
        read_keys(keys)
