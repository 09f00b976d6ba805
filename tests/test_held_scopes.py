"""Memories saved under a scope id no add takes any more (not NFC, an invisible or control character:
sam_model.limits.scope_flaw) stay reachable by their user: a read or a delete naming the id exactly as stored lists,
searches and erases them (in-process, over HTTP and MCP), while an add under it stays refused, an id holding no
memories stays refused, and no other id (its NFC form, the id without the character) is ever reached."""

from __future__ import annotations

import asyncio
import json
import unicodedata

import pytest

import sam_model.memory.scoped as scoped_module
import sam_model.store as store_module
from sam_model.memory import HashingEncoder, ScopedMemory

NFC = "Jos\u00e9"
NFD = unicodedata.normalize("NFD", NFC)
ZW = "mia\u200b"


def _old(memory: ScopedMemory, monkeypatch) -> None:
    """Memories added as before 2026-12-07, when each flawed id was a scope of its own."""
    with monkeypatch.context() as before:
        before.setattr(scoped_module, "check_scope", lambda value, name: value)
        before.setattr(store_module, "check_scope_characters", lambda value, name: value)
        memory.add("my card ends 4242", user_id=NFD)
        memory.add("I fly on Monday", user_id=ZW)
    memory.add("I live in Lyon", user_id=NFC)
    memory.add("my plan is FIBER100", user_id="mia")


def _said(found: dict) -> list[str]:
    return [r["memory"] for r in found["results"]]


def test_reads_and_deletes_reach_an_old_flawed_id_as_stored_and_nothing_else(monkeypatch):
    memory = ScopedMemory(HashingEncoder(32))
    _old(memory, monkeypatch)
    assert _said(memory.get_all(user_id=NFD)) == ["my card ends 4242"]
    assert _said(memory.get_all(user_id=ZW)) == ["I fly on Monday"]
    assert _said(memory.search("card", user_id=NFD, limit=10)) == ["my card ends 4242"]
    assert _said(memory.search("card", filters={"user_id": ZW}, limit=10)) == ["I fly on Monday"]
    old = memory.get_all(user_id=NFD)["results"][0]["id"]
    assert memory.get(old, user_id=NFD)["memory"] == "my card ends 4242"
    assert memory.get(old, user_id=NFC) is None  # the NFC id is another scope
    for add in (lambda: memory.add("hello", user_id=NFD), lambda: memory.add("hello", user_id=ZW)):
        with pytest.raises(ValueError, match="^user_id (is not in Unicode NFC|holds the invisible)"):
            add()
    assert memory.delete_all(user_id=NFD) == {"message": "1 memories deleted"}
    assert [h["event"] for h in memory.history(old, user_id=NFD)] == ["ADD", "DELETE"]  # its own, once deleted
    assert _said(memory.get_all(user_id=NFC)) == ["I live in Lyon"]
    with pytest.raises(ValueError) as refused:  # nothing held under it any more: refused, saying so in one line
        memory.get_all(user_id=NFD)
    assert "no memory is stored under it" in str(refused.value) and "\n" not in str(refused.value)
    memory.delete(memory.get_all(user_id=ZW)["results"][0]["id"], user_id=ZW)
    assert _said(memory.get_all(all_scopes=True)) == ["I live in Lyon", "my plan is FIBER100"]


def test_served_reads_and_deletes_reach_it_and_a_fixed_key_never_widens(tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from mcp import Client
    from serving import KEYS
    from test_served_session_lines import open_tenants

    from sam_model.serve.http import create_app
    from sam_model.serve.mcp import create_mcp

    tenants = open_tenants(tmp_path)
    _old(tenants.tenants["acme"].memory, monkeypatch)
    http, headers = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}
    listed = http.get("/v1/memories", headers=headers, params={"user_id": NFD})
    assert listed.status_code == 200 and _said(listed.json()) == ["my card ends 4242"], listed.text
    found = http.post("/v1/memories/search", headers=headers, json={"query": "fly", "user_id": ZW})
    assert found.status_code == 200 and _said(found.json()) == ["I fly on Monday"], found.text
    added = http.post("/v1/memories", headers=headers, json={"messages": "hello", "user_id": NFD})
    assert added.status_code == 422 and "not in Unicode NFC" in added.json()["detail"], added.text
    gone = http.delete("/v1/memories", headers=headers, params={"user_id": NFD})
    assert gone.status_code == 200, gone.text
    again = http.get("/v1/memories", headers=headers, params={"user_id": NFD})
    assert again.status_code == 422 and "no memory is stored under it" in again.json()["detail"], again.text

    async def forget():
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return await client.call_tool("forget_all", {"user_id": ZW})
    assert not asyncio.run(forget()).is_error
    assert _said(tenants.tenants["acme"].memory.get_all(all_scopes=True)) == ["I live in Lyon", "my plan is FIBER100"]
    tenants.close()


def test_a_key_fixed_to_an_id_never_reaches_its_look_alike(tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    path = keys_file(tmp_path, {"acme": [KEYS["acme"], {"key": "k" * 24, "user_id": NFC},
                                         {"key": "m" * 24, "user_id": "mia"}]})
    tenants = Tenants(read_keys(path), tmp_path / "data", HashingEncoder(32), StoreConfig())
    _old(tenants.tenants["acme"].memory, monkeypatch)
    http = TestClient(create_app(tenants))
    for key, other in (("k" * 24, NFD), ("m" * 24, ZW)):
        for r in (http.get("/v1/memories", headers={"X-API-Key": key}, params={"user_id": other}),
                  http.delete("/v1/memories", headers={"X-API-Key": key}, params={"user_id": other})):
            assert r.status_code in (403, 422), r.text
    assert len(tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"]) == 4
    tenants.close()


def test_a_key_fixed_to_a_flawed_id_says_its_memories_are_cut_off_and_what_to_do(tmp_path):
    from serving import KEYS

    from sam_model.io import SAMFileError
    from sam_model.serve.tenants import read_keys

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"acme": {"key": KEYS["acme"], "user_id": NFD}}))
    with pytest.raises((SAMFileError, ValueError)) as refused:
        read_keys(keys)
    said = str(refused.value)
    assert "\n" not in said and "field 'user_id'" in said and "not in Unicode NFC" in said
    assert "cut off from them" in said and "fixes no user_id" in said and "erased" in said
