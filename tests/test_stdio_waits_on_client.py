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
from collections.abc import Callable

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


def serve_over_pipes(server: MCPServer, client: Callable[[int, int], None], done: Callable[[], bool]) -> None:
    """``server`` over sam-serve's stdio transport, the client a thread writing to one pipe and reading the other,
    until ``done()``, the client ends, or 30 s."""
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    thread = threading.Thread(target=client, args=(to_server_w, from_server_r), daemon=True)
    thread.start()

    async def serve() -> None:
        stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(from_server_w, "wb"), encoding="utf-8"))
        with anyio.move_on_after(30):
            async with strict_stdio(os.fdopen(to_server_r, "rb"), stdout) as (read_stream, write_stream):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(server._lowlevel_server.run, read_stream, write_stream,
                                  server._lowlevel_server.create_initialization_options())
                    while not done() and thread.is_alive():
                        await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()

    anyio.run(serve)


def test_tools_waiting_on_the_client_are_answered_past_the_bound():
    server = MCPServer("waits")

    @server.tool()
    async def asks_the_client(ctx: Context) -> str:
        await ctx.session.send_ping()  # a request of the server's: the client's answer must be read
        return "pong read"

    answered: list[dict] = []
    serve_over_pipes(server, lambda to_server, from_server: fake_client(to_server, from_server, answered),
                     lambda: len(answered) == CALLS)
    assert len(answered) == CALLS, f"{len(answered)} of {CALLS} calls answered: the reader stopped at the bound"
    assert sorted(a["id"] for a in answered) == list(range(CALLS))
    assert all(a["result"]["content"][0]["text"] == "pong read" for a in answered), answered[:2]


class Counting:
    """A TypeAdapter's stand-in counting the JSON texts it reads."""

    def __init__(self, adapter):
        self.adapter, self.reads = adapter, 0

    def validate_json(self, *args, **kwargs):
        self.reads += 1
        return self.adapter.validate_json(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.adapter, name)


def test_each_line_is_read_by_the_sdks_reader_once(monkeypatch):
    """Each line was read as JSON three times: for a key given twice, by the SDK's reader to tell a line it cannot
    read, then by the SDK's stdio once more. Now the message the SDK's reader made is the server's."""
    import mcp_types

    import sam_model.serve.stdio as stdio

    counting = Counting(mcp_types.jsonrpc_message_adapter)
    monkeypatch.setattr(mcp_types, "jsonrpc_message_adapter", counting)
    monkeypatch.setattr(stdio, "jsonrpc_message_adapter", counting)
    server = MCPServer("echo")

    @server.tool()
    def echo(text: str) -> str:
        return text

    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {
        "text": f"said {i}"}}} for i in range(5)]
    answered: list[dict] = []

    def client(to_server: int, from_server: int) -> None:
        with os.fdopen(to_server, "wb", buffering=0) as out, os.fdopen(from_server, "rb") as inp:
            out.write(line(INIT) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            out.write(b"".join(map(line, calls)))
            answered.extend(json.loads(inp.readline()) for _ in range(1 + len(calls)))

    serve_over_pipes(server, client, lambda: len(answered) == 1 + len(calls))
    assert sorted(a["result"]["content"][0]["text"] for a in answered[1:]) == [f"said {i}" for i in range(5)]
    assert counting.reads == 2 + len(calls), f"{counting.reads} reads of {2 + len(calls)} lines"


def test_requests_held_past_the_bound_at_the_end_of_input_are_passed_on():
    """While the server waits on the client the lines are read on, its new requests held; the end of input came
    with requests still held (the bound full) and ended the reading: they were never passed on nor answered."""
    from mcp_types import JSONRPCRequest, JSONRPCResponse

    from sam_model.serve.stdio import _Lines

    requests = [line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "x"}})
                for i in range(CALLS)]
    answer = line({"jsonrpc": "2.0", "id": "s1", "result": {}})
    lines = _Lines(io.BytesIO(b"".join(requests) + answer))
    lines.asking(JSONRPCRequest(jsonrpc="2.0", id="s1", method="ping"))  # the server waits on the client
    taken: list = []

    async def run() -> None:
        async def read() -> None:
            async for message in lines:
                taken.append(message)

        async with anyio.create_task_group() as tg:
            lines.open(None)
            tg.start_soon(read)
            await anyio.sleep(0.5)  # the bound's requests, then the client's answer past the held ones
            assert [getattr(m, "id", None) for m in taken] == [*range(MAX_IN_FLIGHT), "s1"]
            for i in range(CALLS):
                lines.answered(JSONRPCResponse(jsonrpc="2.0", id=i, result={}))
                await anyio.sleep(0.01)
            with anyio.fail_after(10):
                while len(taken) < CALLS + 1:
                    await anyio.sleep(0.05)

    anyio.run(run)
    assert [m.id for m in taken] == [*range(MAX_IN_FLIGHT), "s1", *range(MAX_IN_FLIGHT, CALLS)]


class CountingLines:
    """stdin's lines (no file descriptor: read by its own lines), counting those the reader took."""

    def __init__(self, lines: list[bytes]):
        self.lines, self.read = lines, 0

    def __iter__(self):
        for raw in self.lines:
            self.read += 1
            yield raw


def read_for(lines, seconds: float, before: Callable[[], None] = lambda: None) -> list:
    """The messages ``lines`` (a _Lines) passes on in ``seconds``, none of them answered; ``before()`` once open."""
    taken: list = []

    async def run() -> None:
        async def read() -> None:
            async for message in lines:
                taken.append(message)

        async with anyio.create_task_group() as tg:
            lines.open(None)
            before()
            tg.start_soon(read)
            await anyio.sleep(seconds)
            tg.cancel_scope.cancel()

    anyio.run(run)
    return taken


def test_the_bound_holds_again_once_the_server_cancels_its_request_to_the_client():
    """A request of the server's that the client never answers is given up (its timeout, its tool cancelled) with
    a notifications/cancelled: the reader went on waiting for its answer, the bound lifted for good, so every line
    was read and each request held in memory however many the client wrote."""
    from mcp_types import JSONRPCNotification, JSONRPCRequest

    from sam_model.serve.stdio import _Lines

    source = CountingLines([line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "x"}})
                            for i in range(4 * MAX_IN_FLIGHT)])
    lines = _Lines(source)

    def ask_then_give_up() -> None:
        lines.asking(JSONRPCRequest(jsonrpc="2.0", id="s1", method="ping"))
        lines.asking(JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                          params={"requestId": "s1", "reason": "timed out"}))

    taken = read_for(lines, 0.5, ask_then_give_up)
    assert len(taken) == MAX_IN_FLIGHT
    assert source.read <= MAX_IN_FLIGHT + 1, f"{source.read} lines read past a bound of {MAX_IN_FLIGHT}"
    assert len(lines.held) <= 1  # the one line read ahead


def test_requests_held_while_the_server_waits_on_the_client_are_bounded():
    """While the server waits on a client that never answers, the client's new requests were held without bound
    (each a line of any size, in memory). Past MAX_HELD each is answered at once with an error saying to send it
    again, its id the request's, and the client's lines are still read (its answer may come)."""
    from mcp_types import JSONRPCRequest

    from sam_model.serve.stdio import MAX_HELD, _Lines

    calls = MAX_IN_FLIGHT + MAX_HELD + 5
    source = CountingLines([line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "x"}})
                            for i in range(calls)])
    lines = _Lines(source)
    sent: list = []

    class Answers:
        async def send(self, item) -> None:
            sent.append(item.message)

    taken: list = []

    async def run() -> None:
        async def read() -> None:
            async for message in lines:
                taken.append(message)

        async with anyio.create_task_group() as tg:
            lines.open(Answers())
            lines.asking(JSONRPCRequest(jsonrpc="2.0", id="s1", method="ping"))  # never answered
            tg.start_soon(read)
            await anyio.sleep(1.0)
            tg.cancel_scope.cancel()

    anyio.run(run)
    assert source.read == calls and len(taken) == MAX_IN_FLIGHT and len(lines.held) == MAX_HELD
    assert [m.id for m in sent] == list(range(MAX_IN_FLIGHT + MAX_HELD, calls)), sent[:2]
    said = sent[0].error.message
    assert f"{MAX_HELD} requests wait" in said and "send it again" in said and "\n" not in said, said


def test_the_reader_thread_ends_with_its_input_after_the_server_stops():
    """The server stopped (a signal, a cancel) with the bound full: the reader thread waited on its gate for ever,
    past the end of its input, one thread left per server run in the process."""
    to_server_r, to_server_w = os.pipe()
    before = set(threading.enumerate())
    os.write(to_server_w, b"".join(line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "x"}})
                                   for i in range(MAX_IN_FLIGHT + 3)))

    async def serve() -> None:
        stdout = anyio.wrap_file(io.TextIOWrapper(open(os.devnull, "wb"), encoding="utf-8"))
        async with strict_stdio(os.fdopen(to_server_r, "rb"), stdout) as (read_stream, write_stream):
            async with write_stream:  # closed as the server closes it when it stops
                with anyio.fail_after(10):
                    for _ in range(MAX_IN_FLIGHT):  # read, never answered: the bound is full
                        await read_stream.receive()
                await anyio.sleep(0.2)

    anyio.run(serve)
    readers = [t for t in set(threading.enumerate()) - before if t.name == "sam-serve stdin"]
    assert len(readers) <= 1  # none: it ended already at the stop (its gate opened), a race with this look
    os.close(to_server_w)  # the end of input
    for reader in readers:
        reader.join(5)
    assert not any(r.is_alive() for r in readers), "the reader thread outlived its input"


def test_requests_held_at_the_end_of_input_wait_for_room_a_bounded_time(monkeypatch):
    """The end of input with requests held and the bound full of tools waiting on the client, which can answer no
    more: the reader waited for room for ever, so the server never stopped (nor saved). Now held requests wait up
    to DRAIN_S after the end of input, then are passed on (they are read already: the bound saves no memory now),
    and the reading ends."""
    from mcp_types import JSONRPCRequest

    import sam_model.serve.stdio as stdio

    monkeypatch.setattr(stdio, "DRAIN_S", 0.3)
    calls = MAX_IN_FLIGHT + 3
    lines = stdio._Lines(io.BytesIO(b"".join(line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                                    "params": {"name": "x"}}) for i in range(calls))))
    taken: list = []
    finished = []

    async def run() -> None:
        async def read() -> None:
            async for message in lines:
                taken.append(message)
            finished.append(True)

        async with anyio.create_task_group() as tg:
            lines.open(None)
            lines.asking(JSONRPCRequest(jsonrpc="2.0", id="s1", method="ping"))  # never answered
            tg.start_soon(read)
            await anyio.sleep(3)
            tg.cancel_scope.cancel()

    anyio.run(run)
    assert [m.id for m in taken] == list(range(calls)), [m.id for m in taken][-4:]
    assert finished, "the reading never ended after the end of input"


class _FailingStdin:
    """stdin whose read fails after its first line (EIO: the client's terminal or pipe gone wrong)."""

    def __init__(self, first: bytes):
        self.first = first

    def __iter__(self):
        yield self.first
        raise OSError(5, "Input/output error")


def test_a_failed_read_of_stdin_ends_the_input_said(caplog):
    """stdin's read failing (an OSError on the reader thread) was taken for the server having stopped: the thread
    returned without a word and without telling the end of input, so the reader waited for ever, the requests read
    never drained and the server never stopped nor saved. Now it is the end of input, warned of in one line."""
    import sam_model.serve.stdio as stdio

    lines = stdio._Lines(_FailingStdin(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "x"}})))
    taken: list = []
    finished = []

    async def run() -> None:
        async def read() -> None:
            async for message in lines:
                taken.append(message)
                lines.unanswered.clear()  # answered: the end of input then waits on nothing in flight
            finished.append(True)

        async with anyio.create_task_group() as tg:
            lines.open(None)
            tg.start_soon(read)
            with anyio.move_on_after(3):
                while not finished:
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()

    with caplog.at_level("WARNING", logger="sam_model.serve"):
        anyio.run(run)
    assert [m.id for m in taken] == [1]
    assert finished, "the reading never ended after stdin's read failed"
    said = [r.getMessage() for r in caplog.records if "stdin" in r.getMessage()]
    assert len(said) == 1 and "Input/output error" in said[0] and "\n" not in said[0], said
