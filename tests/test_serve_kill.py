"""sam-serve as a real process: kill -9 under load loses no acknowledged write and shows no tenant another's
memories (the fault bench, small and bounded), and the MCP tools answer an MCP client that has the tenant's key."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from serving import KEYS, keys_file, tiny_export  # noqa: E402

from sam_model.bench.serve import asker, free_port, main, start_server  # noqa: E402


@pytest.fixture(scope="module")
def export(tiny_bert_dir, tmp_path_factory):
    return tiny_export(tiny_bert_dir, tmp_path_factory.mktemp("export") / "export")


def test_kill_9_under_load_loses_no_acknowledged_write(export, tmp_path):
    out = tmp_path / "fault.json"
    assert main(["fault", "--model", str(export), "--kills", "2", "--clients", "4", "--kill-every", "1",
                 "--checkpoint-every", "5", "--workdir", str(tmp_path / "w"), "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["kills"] == 2 and got["acknowledged_writes"] > 5 and got["search"]["n"] > 5
    assert got["acknowledged_but_lost"] == 0, got["lost_ids"]
    assert got["cross_tenant_results"] == 0 and got["hostile_rounds"] > 0, got["cross_examples"]
    assert got["peeks"] > 0  # another user's memory asked for by id as one's own: every answer a 404


def test_mcp_tools_answer_a_client_with_the_tenants_key(export, tmp_path):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    proc = start_server(export, keys_file(tmp_path), tmp_path / "data", port, log=tmp_path / "server.log")

    async def session(key: str):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
        return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp/", http_client=http))

    async def calls():
        async with await session(KEYS["acme"]) as c:
            assert {t.name for t in (await c.list_tools()).tools} == {"remember", "recall", "forget", "forget_all"}
            added = await c.call_tool("remember", {"text": "my budget is $300", "user_id": "mia"})
            mid = json.loads(added.content[0].text)["results"][0]["id"]
            found = await c.call_tool("recall", {"query": "budget?", "user_id": "mia", "state": {"phase": "plan"}})
            assert [h["memory"] for h in json.loads(found.content[0].text)["results"]] == ["my budget is $300"]
            missing = await c.call_tool("recall", {"query": "budget?"})
            assert missing.is_error and "missing scope is refused" in missing.content[0].text
        async with await session(KEYS["globex"]) as c:  # another tenant: neither finds nor forgets it
            other = await c.call_tool("recall", {"query": "budget?", "user_id": "mia"})
            assert json.loads(other.content[0].text)["results"] == []
            assert (await c.call_tool("forget", {"memory_id": mid})).is_error
        with pytest.raises(Exception) as denied:  # a 401 at /mcp: the client shows its JSON-RPC error's line
            async with await session("not-a-key-0123456789") as c:
                await c.call_tool("recall", {"query": "budget?", "user_id": "mia"})
        assert "Unauthorized: missing or unknown API key" in repr(denied.value)
        async with await session(KEYS["acme"]) as c:
            assert not (await c.call_tool("forget", {"memory_id": mid})).is_error

    try:
        asyncio.run(calls())
    finally:
        proc.terminate()
        proc.wait(30)


def test_mcp_remembered_messages_survive_kill_9_and_stay_in_their_tenant(export, tmp_path):
    """An acknowledged MCP remember of messages (a tool call and its result) is in the log like an HTTP add: after
    kill -9 and a restart, recall by the next call gives the same state, traced to the tool's result; the other
    tenant's messages in the same scopes never reach it. Over HTTP, /mcp has the HTTP add's body limit."""
    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from test_mcp_remember import CANCEL, MIA, OPENAI

    from sam_model.data.toolstate import live_state
    from sam_model.serve.http import MAX_BODY_BYTES

    theirs = [{"role": "user", "content": "Cancel my trip please."}, {"role": "assistant", "content": "Which?"},
              {"role": "user", "content": "the Boston one"}]
    keys, data = keys_file(tmp_path), tmp_path / "data"

    async def calls(port: int, *asks: tuple[str, str, dict]) -> list[dict]:
        out = []
        for tenant, tool, args in asks:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEYS[tenant]}"})
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp/", http_client=http)) as c:
                got = await c.call_tool(tool, args)
                assert not got.is_error, got.content[0].text
                out.append(json.loads(got.content[0].text))
        return out

    port = free_port()
    proc = start_server(export, keys, data, port, log=tmp_path / "server.log")
    try:
        asyncio.run(calls(port, ("acme", "remember", {"messages": OPENAI, **MIA}),
                          ("globex", "remember", {"messages": theirs, **MIA})))
        big = httpx.post(f"http://127.0.0.1:{port}/mcp/", content=b"x" * (MAX_BODY_BYTES + 1),
                         headers={"Authorization": f"Bearer {KEYS['acme']}", "content-type": "application/json"})
        assert big.status_code == 413, big.text
    finally:
        proc.kill()  # kill -9: no shutdown, no checkpoint
        proc.wait(30)
    port = free_port()
    proc = start_server(export, keys, data, port, log=tmp_path / "server.log")
    try:
        ours, other = asyncio.run(calls(port, ("acme", "recall", {"query": "", "call": CANCEL, **MIA}),
                                        ("globex", "recall", {"query": "QX7Z9A", "call": CANCEL, **MIA})))
    finally:
        proc.terminate()
        proc.wait(30)
    assert ours["state"] == live_state(OPENAI, CANCEL)
    assert {"reservation_id", "cabin"} <= set(ours["state"]["uncertainty_flags"])
    assert OPENAI[0]["content"] in {h["memory"] for h in ours["results"]}
    assert OPENAI[-1]["content"] not in {h["memory"] for h in ours["results"]}  # the decision point's observation
    assert any(h["memory"].startswith("get_user: ") and "QX7Z9A" in h["memory"] for h in ours["results"])
    assert other["state"] == live_state(theirs, CANCEL) and other["state"]["uncertainty_flags"] == []
    assert {h["memory"] for h in other["results"]} <= {m["content"] for m in theirs}


def test_load_bench_rows_per_think_time(export, tmp_path):
    out = tmp_path / "load.json"
    assert main(["load", "--model", str(export), "--memories", "200", "--users", "4", "--clients", "4",
                 "--seconds", "3", "--think-ms", "0,200", "--workdir", str(tmp_path / "w"), "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [r["think_ms"] for r in runs] == [0.0, 200.0]
    for r in runs:
        assert r["search"]["n"] > 0 and r["errors"] == {} and r["cross_tenant_results"] == 0
    # 4 clients waiting 200 ms on average between calls send at most ~20 requests/s; a closed loop sends more
    assert runs[1]["qps"] < 4 / 0.2 * 1.5 and runs[1]["qps"] < runs[0]["qps"]


def test_think_times_are_checked():
    with pytest.raises(SystemExit):
        main(["load", "--think-ms", "0,-5"])
    with pytest.raises(SystemExit):
        main(["load", "--think-ms", "fast"])


def test_a_checkpoint_interval_under_1_is_refused_before_the_preload(capsys):
    with pytest.raises(SystemExit):
        main(["load", "--checkpoint-every", "0"])
    assert "--checkpoint-every must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["load", "--checkpoint-share", "-0.1"])
    assert "--checkpoint-share: the checkpoint share must be a number in [0, 10]" in capsys.readouterr().err


def test_demo_queries_send_states_as_long_as_agents_write():
    import random
    import statistics

    from sam_model.data.schema import as_state
    from sam_model.data.text import state_to_text

    def words(kind: str) -> float:
        ask, rng = asker(kind), random.Random(0)
        return statistics.median(len(state_to_text(as_state(ask(rng)[1])).split()) for _ in range(200))

    assert words("demo") > 2 * words("short")  # sub-goals, known values, the last result
    query, state = asker("demo")(random.Random(1))
    assert query and state["phase"] and state.get("uncertainty_flags")
    with pytest.raises(ValueError, match="--queries"):
        asker("long")


def test_load_bench_with_demo_queries(export, tmp_path):
    out = tmp_path / "load.json"
    assert main(["load", "--model", str(export), "--memories", "200", "--users", "4", "--clients", "4",
                 "--seconds", "2", "--queries", "demo", "--workdir", str(tmp_path / "w"), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["queries"] == "demo"
    (run,) = figures["runs"]
    assert run["search"]["n"] > 0 and run["errors"] == {} and run["cross_tenant_results"] == 0


def test_the_fault_bench_fails_when_it_checked_nothing(monkeypatch, tmp_path):
    """Found by review: a server answering every request but /health with 503 passed (0 lost, 0 crossed)."""
    import sam_model.bench.serve as bench

    nothing = {"mode": "fault", "acknowledged_writes": 0, "acknowledged_but_lost": 0, "cross_tenant_results": 0,
               "hostile_rounds": 0, "errors": {"add: HTTP 503": 354}}
    monkeypatch.setattr(bench, "fault_bench", lambda args, folder, log: nothing)
    assert bench.main(["fault", "--workdir", str(tmp_path)]) == 1
    monkeypatch.setattr(bench, "fault_bench", lambda args, folder, log: {**nothing, "acknowledged_writes": 5,
                                                                          "hostile_rounds": 2})
    assert bench.main(["fault", "--workdir", str(tmp_path)]) == 0
