"""A served add of an agent's session lines (sam-serve's HTTP add, MCP's remember) stores what ScopedMemory.add
stores of the same lines, line by line, a text past a memory's limit cut and noted alike.

The served check of an add (read_add, before the write is logged) did not know the scope's open turn, so the bare
items of a Codex rollout in the layout before the RolloutLine wrapper (after the ``{id, timestamp, instructions}``
meta line, which an earlier add gave) were checked as Responses items: a tool result (or a prompt) past the limit was
refused with a 422 ('messages, item 0.content has 150061 characters ... split it'), where the in-process add stores it
cut with a note, and the sidecar forwarding the line could not split it: the line was lost. The check now reads the
add with the scope's open turn, in the tenant's lock the write holds (nothing changes the turn between them)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from mcp import Client  # noqa: E402
from serving import KEYS, keys_file  # noqa: E402
from test_format_claude_code import to_claude_code  # noqa: E402
from test_format_codex import to_rollout  # noqa: E402
from test_format_gemini_cli import as_jsonl, to_gemini_cli  # noqa: E402
from test_format_headless import to_codex_exec  # noqa: E402
from test_live_adds import rich  # noqa: E402
from test_live_openhands import v1_example  # noqa: E402
from test_live_review_56 import huge  # noqa: E402
from test_openhands import codeact_run  # noqa: E402

from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402
from sam_model.memory.scopedinput import FIT_CHARS  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

SCOPE = {"user_id": "me", "run_id": "s"}
PROMPT = [{"role": "user", "content": "hello " * 30_000}]  # a prompt of 180,000 characters

LOG = "\nlog line" * 16_667  # a command's output of 150,000 characters
OLD_BODY_LIMIT = 4 * 100_000 + (1 << 20)  # sam-serve's body limit before --max-body-mb (1,448,576 bytes)


def claude_code_long() -> list[dict]:
    """Claude Code lines whose tool result line is 2.25 MB as JSON (its output of 1 MB is in the line twice: the
    tool_result block and toolUseResult), past the 1.4 MB a served add's body could hold before."""
    msgs = rich()
    msgs[3] = {**msgs[3], "content": msgs[3]["content"] + "\n" + "log line\n" * 112_500}
    return to_claude_code(msgs)


def openhands() -> list[dict]:
    """An OpenHands 0.x run whose test command's observation holds LOG."""
    events = codeact_run()
    events[10] = {**events[10], "content": events[10]["content"] + LOG}
    return events


def openhands_v1() -> list[dict]:
    """An OpenHands V1 run whose cancel's observation holds LOG."""
    events = v1_example()
    text = events[8]["observation"]["content"][0]
    events[8] = {**events[8], "observation": {**events[8]["observation"], "content": [{**text,
                                                                                        "text": text["text"] + LOG}]}}
    return events


LINES = {"codex old layout": lambda: to_rollout(huge(), old=True),
         "codex old layout, long prompt": lambda: to_rollout(PROMPT + rich()[1:], old=True),
         "codex": lambda: to_rollout(huge()),
         "claude-code": lambda: to_claude_code(huge()),
         "claude-code, long prompt": lambda: to_claude_code(PROMPT + rich()[1:]),
         "claude-code, 2.25 MB line": claude_code_long,
         "gemini-cli": lambda: as_jsonl(to_gemini_cli(huge())),
         "gemini-cli, long prompt": lambda: as_jsonl(to_gemini_cli(PROMPT + rich()[1:])),
         "codex exec": lambda: to_codex_exec(huge()),
         "openhands": openhands,
         "openhands v1": openhands_v1,
         "openai chat": huge}


def open_tenants(folder):
    return Tenants(read_keys(keys_file(folder)), folder / "data", HashingEncoder(32), StoreConfig())


def named(answer: dict | str) -> dict | str:
    """An add's answer, or its refusal's line, with the add's field (the API's name for it: ScopedMemory.add's
    ``data``, HTTP's and MCP's ``messages``) named ``FIELD`` where a reason starts with it."""
    field = lambda s: re.sub(r"^(data|messages)\b", "FIELD", s)  # noqa: E731
    if isinstance(answer, str):
        return field(answer.removeprefix("Error executing tool remember: "))
    return {k: [{**n, "reason": field(n["reason"])} for n in v] if k in ("skipped", "notes") else v
            for k, v in answer.items()}


def in_process(lines: list[dict]) -> tuple[list, list]:
    """Each line's add to a ScopedMemory (its answer, or its refusal), and what it stored."""
    memory, out = ScopedMemory(HashingEncoder(32)), []
    for x in lines:
        try:
            out.append(named(memory.add([x], **SCOPE)))
        except ValueError as err:
            out.append(named(str(err)))
    return out, kept(memory)


def kept(memory: ScopedMemory) -> list[tuple]:
    return [(r["id"], r["kind"], r["memory"]) for r in memory.get_all(**SCOPE, limit=None)["results"]]


def over_http(tenants: Tenants, lines: list[dict], key: str = KEYS["acme"], scope: dict = SCOPE) -> list:
    http = TestClient(create_app(tenants))
    out = []
    for x in lines:
        r = http.post("/v1/memories", headers={"X-API-Key": key}, json={"messages": [x], **scope})
        assert r.status_code in (200, 422), r.text
        out.append(named(r.json() if r.status_code == 200 else r.json()["detail"]))
    return out


def over_mcp(tenants: Tenants, lines: list[dict]) -> list:
    async def run() -> list:
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return [await client.call_tool("remember", {"messages": [x], **SCOPE}) for x in lines]
    return [named(r.content[0].text if r.is_error else json.loads(r.content[0].text)) for r in asyncio.run(run())]


@pytest.mark.parametrize("lines", LINES)
@pytest.mark.parametrize("served", [over_http, over_mcp], ids=["http", "mcp"])
def test_a_served_add_of_each_line_answers_and_stores_what_the_in_process_add_does(tmp_path, lines, served):
    """Every line's answer (its results, notes on what was cut, or its one-line refusal) and the memories stored
    are the in-process add's, and so are those a restart replays from the write-ahead log; where a line holds a text
    past the limit, it is stored cut and noted, not refused (a chat message's own content past it is refused by
    both, naming the API's field)."""
    session, lines = lines != "openai chat", LINES[lines]()
    want, memories = in_process(lines)
    tenants = open_tenants(tmp_path)
    assert served(tenants, lines) == want
    assert kept(tenants.tenants["acme"].memory) == memories
    assert tenants.tenants["acme"].wal.records()
    for tenant in tenants.tenants.values():  # no checkpoint: every add is replayed from the log
        tenant.release()
    again = open_tenants(tmp_path)
    assert kept(again.tenants["acme"].memory) == memories
    again.close()
    if session:  # an agent's session lines: none refused, the long text stored cut
        assert not any(isinstance(a, str) for a in want)
        assert any("more than a memory holds" in n["reason"] for a in want for n in a.get("notes", []))
        assert any(len(t) > FIT_CHARS - 40 for *_, t in memories)


def test_an_open_turn_reads_only_its_own_scopes_and_tenants_lines(tmp_path):
    """The old-layout bare item is taken for the scope whose open turn follows the rollout's meta line; the same
    item to another run, or to another tenant's same scope, has no such turn and is refused as in-process (a chat
    message's content past the limit), naming the field; neither sees the other's memories."""
    lines = to_rollout(PROMPT + rich()[1:], old=True)
    tenants = open_tenants(tmp_path)
    assert not any(isinstance(a, str) for a in over_http(tenants, lines[:2]))
    for key, scope in ((KEYS["acme"], {**SCOPE, "run_id": "t"}), (KEYS["globex"], SCOPE)):
        refused = over_http(tenants, lines[1:2], key, scope)[0]
        assert refused.startswith("FIELD, item 0.content has 180000 characters, more than the limit"), refused
    assert len(kept(tenants.tenants["acme"].memory)) == 1
    assert tenants.tenants["globex"].memory.get_all(user_id="me", limit=None)["results"] == []


def test_the_long_claude_code_line_is_past_the_old_body_limit_and_within_the_new():
    """What the "2.25 MB line" case above sends: one line of 2.25 MB as JSON, which the 1.4 MB limit refused."""
    from sam_model.limits import MAX_BODY_BYTES

    sizes = [len(json.dumps({"messages": [x], **SCOPE})) for x in claude_code_long()]
    assert 2_200_000 < max(sizes) < MAX_BODY_BYTES and max(sizes) > OLD_BODY_LIMIT


@pytest.mark.parametrize("served", ["http", "mcp"])
def test_a_bad_session_line_is_refused_naming_the_callers_field(tmp_path, served):
    """A sidecar's Claude Code line (its entry's fields trimmed to type and message) whose tool_use has no name was
    refused as ``data, entry 0, content block 0: tool call without a name``: ScopedMemory.add's argument, as the
    line is read by the add, after the served check; no HTTP or MCP caller sends a ``data``. The refusal names
    ``messages``, the field it sent, and stores nothing."""
    line = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "input": {}}]}}
    tenants = open_tenants(tmp_path)
    if served == "http":
        r = TestClient(create_app(tenants)).post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                                                 json={"messages": [line], **SCOPE})
        assert r.status_code == 422, r.text
        said = r.json()["detail"]
    else:
        async def run():
            async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
                return await client.call_tool("remember", {"messages": [line], **SCOPE})
        answer = asyncio.run(run())
        assert answer.is_error
        said = answer.content[0].text.removeprefix("Error executing tool remember: ")
    assert said.startswith("messages, entry 0") and "without a name" in said, said
    assert kept(tenants.tenants["acme"].memory) == []
