"""``sam-serve --stdio`` bounds the requests read ahead of their answers (MAX_IN_FLIGHT); a tool that waits on the
client (sampling, elicitation, a ping: a request of the server's) is answered only once the client's answer is read.
The bound held every line, so with MAX_IN_FLIGHT such calls in flight the reader stopped reading and the client's
answers waited in the pipe behind its next requests: nothing was answered again. Now answers and notifications are
read through the bound and only new requests wait. A fake client over pipes, the SDK's server, in-process."""

from __future__ import annotations

import io
import json
import os
import threading

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

import anyio  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402

from sam_model.serve.stdio import MAX_IN_FLIGHT, strict_stdio  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fake", "version": "0"}}}
CALLS = MAX_IN_FLIGHT + 6


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def fake_client(to_server: int, from_server: int, answered: list[dict]) -> None:
    """Writes initialize and CALLS tool calls at once, then answers each ping of the server's as it reads it (its
    answers queue behind its calls in the pipe, as an agent's writer queues them), until every call is answered."""
    with os.fdopen(to_server, "wb", buffering=0) as out, os.fdopen(from_server, "rb") as inp:
        out.write(line(INIT))
        assert json.loads(inp.readline())["id"] == "init"
        out.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        out.write(b"".join(line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": "asks_the_client", "arguments": {}}}) for i in range(CALLS)))
        for raw in inp:
            message = json.loads(raw)
            if message.get("method") == "ping":
                out.write(line({"jsonrpc": "2.0", "id": message["id"], "result": {}}))
            elif "id" in message:
                answered.append(message)
                if len(answered) == CALLS:
                    return


def test_tools_waiting_on_the_client_are_answered_past_the_bound():
    server = MCPServer("waits")

    @server.tool()
    async def asks_the_client(ctx: Context) -> str:
        await ctx.session.send_ping()  # a request of the server's: the client's answer must be read
        return "pong read"

    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    answered: list[dict] = []
    client = threading.Thread(target=fake_client, args=(to_server_w, from_server_r, answered), daemon=True)
    client.start()

    async def serve() -> None:
        stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(from_server_w, "wb"), encoding="utf-8"))
        with anyio.move_on_after(30):
            async with strict_stdio(os.fdopen(to_server_r, "rb"), stdout) as (read_stream, write_stream):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(server._lowlevel_server.run, read_stream, write_stream,
                                  server._lowlevel_server.create_initialization_options())
                    while len(answered) < CALLS and client.is_alive():
                        await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()

    anyio.run(serve)
    assert len(answered) == CALLS, f"{len(answered)} of {CALLS} calls answered: the reader stopped at the bound"
    assert sorted(a["id"] for a in answered) == list(range(CALLS))
    assert all(a["result"]["content"][0]["text"] == "pong read" for a in answered), answered[:2]
