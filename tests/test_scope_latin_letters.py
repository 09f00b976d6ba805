"""Scope ids written in Latin letters that look like ASCII ones are taken on every entry point: Turkish names whose
one non-ASCII letter is the dotless ı ('Aydın', 'Yılmaz'), Icelandic words with þ alone, Ewe, Kabiyè and Khoekhoe
words, and 'paypaı' or 'ɡoogle' too. A rule refused them from 2026-12-07 until the owner withdrew it the same day
(docs/integrations.md keeps its measured cost): a keys file holding one stopped sam-serve's start, and every adapter
refused one at construction. Each stays a scope of its own, exactly matched: 'Yılmaz' and 'Yilmaz' are two users,
and nothing of one reaches the other."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from sam_model.integrations.scopes import fixed_scopes
from sam_model.limits import check_scope, scope_flaw
from sam_model.memory import HashingEncoder, ScopedMemory

# each with the ASCII id it looks like, another user's
IDS = [("Ayd\u0131n", "Aydin"), ("Y\u0131lmaz", "Yilmaz"), ("Y\u0131ld\u0131z", "Yildiz"),  # Turkish names
       ("\u00feetta", "petta"), ("\u00feak", "pak"),  # Icelandic: þ the one letter beyond ASCII
       ("\u028bu", "uu"), ("\u0192o", "fo"),  # Ewe: ʋ, ƒ
       ("k\u0269ma", "kima"), ("\u01c0ui", "lui"),  # Kabiyè ɩ, Khoekhoe ǀ (a click)
       ("paypa\u0131", "paypai"), ("\u0261oogle", "google"), ("user-\u01b7", "user-3")]
NAMES = [name for name, _ in IDS]
AYDIN = "Ayd\u0131n"


@pytest.mark.parametrize("value", NAMES)
def test_the_rule_takes_them(value):
    assert scope_flaw(value) is None
    assert check_scope(value, "user_id") == value


@pytest.mark.parametrize(("value", "ascii_twin"), IDS)
def test_a_scoped_memory_takes_them_on_every_method_each_a_scope_apart_from_its_ascii_twin(value, ascii_twin):
    m = ScopedMemory(HashingEncoder(32))
    m.add("the twin's card ends 4242", user_id=ascii_twin)
    mine = m.add("I fly to Izmir on Monday", user_id=value, agent_id=value, run_id=value)["results"][0]["id"]
    scopes = {"user_id": value, "agent_id": value, "run_id": value}
    assert [r["memory"] for r in m.search("card Izmir", **scopes)["results"]] == ["I fly to Izmir on Monday"]
    assert [r["memory"] for r in m.get_all(user_id=value)["results"]] == ["I fly to Izmir on Monday"]
    m.update(mine, "I fly to Izmir on Tuesday", **scopes)
    assert m.get(mine, user_id=value)["memory"] == "I fly to Izmir on Tuesday"
    assert m.get(mine, user_id=ascii_twin) is None  # exactly matched: the twin reaches none of it
    assert m.delete_all(user_id=value)["message"] == "1 memories deleted"
    assert [r["memory"] for r in m.get_all(user_id=ascii_twin)["results"]] == ["the twin's card ends 4242"]


def test_a_save_under_them_loads_without_a_warning(tmp_path, caplog):
    m = ScopedMemory(HashingEncoder(16))
    for value in NAMES:
        m.add(f"a note of {value}", user_id=value)
    m.save(tmp_path / "m")
    with caplog.at_level(logging.WARNING, logger="sam_model"):
        back = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    assert caplog.records == []
    for value in NAMES:
        assert [r["memory"] for r in back.get_all(user_id=value)["results"]] == [f"a note of {value}"]
        back.add("one more", user_id=value)


@pytest.mark.parametrize("owner", ["SAMAutoGenMemory", "SAMMemoryBlock", "SAMSession", "SAMStepCallback",
                                   "SAMContextProvider", "SAMCapability", "SAMMemoryService"])
def test_an_adapter_takes_them_at_construction(owner):
    """Every adapter fixes its scopes when made (sam_model.integrations.scopes.fixed_scopes): a store saved under
    'Aydın' could not be given to one."""
    assert fixed_scopes(owner, AYDIN, "\u0261oogle", "\u00feetta") == {"user_id": AYDIN, "agent_id": "\u0261oogle",
                                                                       "run_id": "\u00feetta"}


def test_the_langchain_retriever_and_langgraph_store_take_them():
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import SAMLangChainRetriever

    memory = ScopedMemory(HashingEncoder(32))
    memory.add("Aydın lives in Izmir", user_id=AYDIN)
    memory.add("Aydin lives in Ankara", user_id="Aydin")
    found = SAMLangChainRetriever(memory=memory, user_id=AYDIN).invoke("where does he live")
    assert [d.page_content for d in found] == ["Aydın lives in Izmir"]
    pytest.importorskip("langgraph", reason="the [langgraph] extra is not installed")
    from sam_model.integrations.langgraph import SAMStore

    store = SAMStore(HashingEncoder(32))
    store.put(("users", AYDIN), "home", {"content": "Aydın lives in Izmir"})
    store.put(("users", "Aydin"), "home", {"content": "Aydin lives in Ankara"})
    assert store.get(("users", AYDIN), "home").value == {"content": "Aydın lives in Izmir"}
    assert [i.value["content"] for i in store.search(("users", AYDIN), query="Izmir")] == ["Aydın lives in Izmir"]


def test_served_entry_points_take_them(tmp_path):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from mcp import Client
    from serving import KEYS
    from test_served_session_lines import open_tenants

    from sam_model.serve.http import create_app
    from sam_model.serve.mcp import create_mcp
    from sam_model.serve.mcp import fixed_scopes as served_scopes

    tenants = open_tenants(tmp_path)
    http, headers = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}
    for value in NAMES:
        r = http.post("/v1/memories", headers=headers, json={"messages": f"note of {value}", "user_id": value})
        assert r.status_code == 200, r.text
        r = http.post("/v1/memories/search", headers=headers, json={"query": "note", "user_id": value})
        assert r.status_code == 200 and [x["memory"] for x in r.json()["results"]] == [f"note of {value}"], r.text
        r = http.get("/v1/memories", headers=headers, params={"user_id": value})
        assert r.status_code == 200 and [x["user_id"] for x in r.json()["results"]] == [value], r.text
        r = http.delete("/v1/memories", headers=headers, params={"user_id": value})
        assert r.status_code == 200, r.text
    assert tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"] == []

    async def tools(scopes: dict[str, str] | None, args: dict[str, str]) -> list:
        async with Client(create_mcp(tenants, stdio_tenant="acme", scopes=scopes)) as client:
            return [await client.call_tool(name, {**extra, **args}) for name, extra in (
                ("remember", {"text": "I fly to Izmir"}), ("recall", {"query": "Izmir"}))]
    for scopes, args in ((None, {"user_id": AYDIN, "agent_id": "\u0261oogle"}), ({"user_id": AYDIN}, {})):
        for answer in asyncio.run(tools(scopes, args)):  # a call naming it; sam-serve --stdio --user-id Aydın
            assert not answer.is_error, answer.content[0].text
        memory = tenants.tenants["acme"].memory
        assert [r["user_id"] for r in memory.get_all(all_scopes=True)["results"]] == [AYDIN]
        memory.delete_all(user_id=AYDIN)
    assert served_scopes({"user_id": AYDIN}) == {"user_id": AYDIN}
    tenants.close()


def test_a_keys_file_fixing_such_an_id_starts_the_server_and_serves_that_user(tmp_path):
    """A keys file holding one stopped the whole server's start after the upgrade of 2026-12-07."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.store import StoreConfig

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"acme": [{"key": KEYS["acme"], "user_id": AYDIN}, KEYS["acme"] + "-admin"]}),
                    encoding="utf-8")
    tenants = Tenants(read_keys(keys), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http = TestClient(create_app(tenants))
    r = http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]}, json={"messages": "I fly to Izmir"})
    assert r.status_code == 200, r.text
    r = http.get("/v1/memories", headers={"X-API-Key": KEYS["acme"] + "-admin"}, params={"user_id": AYDIN})
    assert [x["memory"] for x in r.json()["results"]] == ["I fly to Izmir"], r.text
    tenants.close()
