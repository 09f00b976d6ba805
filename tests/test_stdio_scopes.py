"""``sam-serve --stdio TENANT --user-id ID`` (``--agent-id``, ``--run-id``) serves one scope: a coding agent starts
the memory itself and its model cannot see its session's id, so a model that forgot ``user_id`` (or misspelt it)
wrote to or read another scope. With a scope fixed, every tool's argument defaults to it, its description says so,
and a call that gives another value is refused in one line, never widened or switched (``forget_all()`` deletes
only the fixed user's memories); the scopes not fixed behave as before. Called in-process (the stdio tenant: calls
without headers), as tests/test_mcp_remember.py does."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from mcp import Client  # noqa: E402
from serving import keys_file  # noqa: E402

from sam_model.memory import HashingEncoder  # noqa: E402
from sam_model.serve.cli import main as sam_serve  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

ME = {"user_id": "me"}
CALL = {"name": "book_flight", "arguments": {"user_id": "me", "cabin": "economy"}}
CHAT = [{"role": "user", "content": "I always fly economy"}, {"role": "assistant", "content": "Noted."}]


def open_tenants(folder) -> Tenants:
    return Tenants(read_keys(keys_file(folder)), folder / "data", HashingEncoder(32), StoreConfig())


def calls(tenants: Tenants, *made: tuple[str, dict], scopes: dict | None = None) -> list:
    """The answers to ``made`` (tool, arguments) of an MCP client of acme's memory served with ``scopes`` fixed."""
    async def run() -> list:
        async with Client(create_mcp(tenants, stdio_tenant="acme", scopes=scopes)) as client:
            return [await client.call_tool(tool, args) for tool, args in made]
    return asyncio.run(run())


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def owners(tenants: Tenants, **scope) -> set[str]:
    return {m["memory"] for m in tenants.tenants["acme"].memory.get_all(**scope)["results"]}


def writes(tenants: Tenants) -> int:
    return sum(r["op"] != "vectors" for r in tenants.tenants["acme"].wal.records())


@pytest.fixture
def seeded(tmp_path):
    """acme's memory with one memory of me and one of bob (written by a server without fixed scopes)."""
    tenants = open_tenants(tmp_path)
    calls(tenants, ("remember", {"text": "bob flies business", "user_id": "bob"}),
          ("remember", {"text": "me: window seat", **ME}))
    yield tenants
    tenants.close()


def test_every_tool_takes_the_fixed_scope_when_the_call_names_none(seeded):
    tenants = seeded
    bob_id = tenants.tenants["acme"].memory.get_all(user_id="bob")["results"][0]["id"]
    text, chat, found, by_call, wrong, *_ = calls(tenants, ("remember", {"text": "me: no red-eyes"}),
                                                  ("remember", {"messages": CHAT}),
                                                  ("recall", {"query": "flies seat", "limit": 50}),
                                                  ("recall", {"query": "", "call": CALL}),
                                                  ("forget", {"memory_id": bob_id}), scopes=ME)
    added = {m["memory"] for m in answer(text)["results"] + answer(chat)["results"]}
    assert len(added) == 1 + len(CHAT) and owners(tenants, user_id="me") == {"me: window seat", *added}
    assert {h["memory"] for h in answer(found)["results"]} == owners(tenants, user_id="me")  # never bob's
    assert {h["user_id"] for h in answer(found)["results"] + answer(by_call)["results"]} == {"me"}
    assert answer(by_call)["state"]["phase"] == "book_flight"  # me's recorded conversation, traced for the call
    assert wrong.is_error and owners(tenants, user_id="bob") == {"bob flies business"}  # bob's id is not me's
    mine = answer(text)["results"][0]["id"]
    gone, cleared = calls(tenants, ("forget", {"memory_id": mine}), ("forget_all", {}), scopes=ME)
    assert not gone.is_error and not cleared.is_error
    assert owners(tenants, user_id="me") == set()
    assert owners(tenants, user_id="bob") == {"bob flies business"}  # forget_all() never widened to every user


@pytest.mark.parametrize("tool, args", [
    ("remember", {"text": "bob: aisle"}),
    ("remember", {"messages": CHAT}),
    ("recall", {"query": "flies"}),
    ("recall", {"query": "", "call": CALL}),
    ("forget", {"memory_id": "0"}),
    ("forget_all", {}),
], ids=["remember-text", "remember-messages", "recall", "recall-call", "forget", "forget_all"])
def test_a_call_naming_another_value_of_a_fixed_scope_is_refused_in_one_line(seeded, tool, args):
    tenants = seeded
    before = writes(tenants)
    bob_id = tenants.tenants["acme"].memory.get_all(user_id="bob")["results"][0]["id"]
    args = {**args, "memory_id": bob_id} if tool == "forget" else args
    refused, same = calls(tenants, (tool, {**args, "user_id": "bob"}), (tool, {**args, **ME}), scopes=ME)
    assert refused.is_error and "\n" not in refused.content[0].text
    assert refused.content[0].text == (f"Error executing tool {tool}: user_id is fixed to 'me' for this server "
                                       "(--user-id): leave user_id out; another user's memory is not served here")
    assert owners(tenants, user_id="bob") == {"bob flies business"}
    if tool == "forget":  # the same value passes: bob's id is still not me's memory
        assert same.is_error and same.content[0].text.endswith("is not in this tenant's memory within user_id='me'")
    else:
        assert not same.is_error, same.content[0].text
    assert writes(tenants) == before + (tool in ("remember", "forget_all"))  # the refused call logged nothing


def test_scopes_not_fixed_work_as_before_within_the_fixed_one(seeded):
    tenants = seeded
    calls(tenants, ("remember", {"text": "trip one: Boston", "run_id": "t1"}),
          ("remember", {"text": "trip two: Oslo", "run_id": "t2", "user_id": "me"}), scopes=ME)
    assert owners(tenants, user_id="me", run_id="t1") == {"trip one: Boston"}
    found, cleared = calls(tenants, ("recall", {"query": "trip", "run_id": "t2"}),
                           ("forget_all", {"run_id": "t1"}), scopes=ME)
    assert [h["memory"] for h in answer(found)["results"]] == ["trip two: Oslo"]
    assert not cleared.is_error and owners(tenants, user_id="me", run_id="t1") == set()
    assert owners(tenants, user_id="me") == {"me: window seat", "trip two: Oslo"}
    assert owners(tenants, user_id="bob") == {"bob flies business"}


def test_a_fixed_agent_and_run_are_fixed_alike(seeded):
    tenants = seeded
    fixed = {"agent_id": "codex", "run_id": "repo"}
    kept, switched, other_agent = calls(tenants, ("remember", {"text": "uses pytest", **ME}),
                                        ("remember", {"text": "x", "run_id": "other"}),
                                        ("recall", {"query": "pytest", "agent_id": "claude"}), scopes=fixed)
    assert not kept.is_error and owners(tenants, user_id="me", agent_id="codex", run_id="repo") == {"uses pytest"}
    assert switched.is_error and "run_id is fixed to 'repo'" in switched.content[0].text
    assert other_agent.is_error and "agent_id is fixed to 'codex'" in other_agent.content[0].text
    assert owners(tenants, run_id="other") == set()
    assert not calls(tenants, ("forget_all", {}), scopes=fixed)[0].is_error
    assert owners(tenants, agent_id="codex") == set()
    assert owners(tenants, user_id="me") == {"me: window seat"} and owners(tenants, user_id="bob")


def test_the_tools_tell_the_model_which_scopes_are_fixed(tmp_path):
    tenants = open_tenants(tmp_path)

    async def tools(scopes) -> dict:
        async with Client(create_mcp(tenants, stdio_tenant="acme", scopes=scopes)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    fixed, free = asyncio.run(tools(ME)), asyncio.run(tools(None))
    assert set(fixed) == {"remember", "recall", "forget", "forget_all"}
    for name, tool in fixed.items():
        assert "serves user_id 'me' only: leave user_id out" in tool.description, name
        assert "fixed to 'me'" in tool.input_schema["properties"]["user_id"]["description"]
        assert "description" not in tool.input_schema["properties"]["agent_id"]  # not fixed: as before
        assert "fixed" not in free[name].description and "description" not in \
            free[name].input_schema["properties"]["user_id"]
    tenants.close()


@pytest.mark.parametrize("argv, says", [
    (["--user-id", "me"], "sam-serve: --user-id fixes the scope of a --stdio server only"),
    (["--run-id", "r", "--agent-id", "a"], "sam-serve: --agent-id and --run-id fix the scope of a --stdio server"),
])
def test_a_fixed_scope_without_stdio_is_refused_in_one_line(tmp_path, argv, says):
    with pytest.raises(SystemExit) as stop:
        sam_serve(["--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "data"), *argv])
    assert str(stop.value.code).startswith(says) and "\n" not in str(stop.value.code)
    assert not (tmp_path / "data").exists()  # refused before anything was opened


@pytest.mark.parametrize("value", ["", "me/you", "u" * 300])
def test_a_bad_fixed_scope_is_refused_before_the_model_loads(tmp_path, capsys, value):
    rc = sam_serve(["--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "data"), "--stdio", "acme",
                    "--model", str(tmp_path / "no-such-model"), "--user-id", value])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc != 0 and err.startswith("error: --user-id: user_id must be a non-empty string without '/'"), err
    assert not (tmp_path / "data").exists()


def test_faiss_loader_lines_stay_out_of_the_servers_log(tmp_path):
    """At every start faiss' loader said in nine INFO lines that it could not load its AVX512 builds
    ('ModuleNotFoundError(...)'): over --stdio the server's stderr is Codex's or Claude Code's MCP log, where they read
    as the memory's errors (a walkthrough's first stdio session). sam-serve's logging now keeps that library to
    warnings at the default level; its own lines stay."""
    import subprocess
    import sys

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"acme": "k" * 24}))
    code = ("import sys\nfrom sam_model.serve import cli\n"
            f"cli.main(['--keys', {str(keys)!r}, '--stdio', 'acme', '--model', {str(tmp_path / 'none')!r}, "
            f"'--data', {str(tmp_path / 'data')!r}])\n"
            "import logging\nlogging.getLogger('sam_model.serve').info('still said')\n"
            "import faiss.loader  # noqa: F401\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert "still said" in got.stderr, got.stderr
    assert "faiss.loader" not in got.stderr, got.stderr
