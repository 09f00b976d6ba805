"""``sam-serve --stdio``'s lines are read as bytes, as the client wrote them: the SDK decoded stdin with replacement, so a
line holding bytes that are no UTF-8 was stored with U+FFFD in place of the user's bytes, and read a key given twice
in one object as its last value (``user_id`` alice, then bob: bob's memory), where HTTP's /mcp refuses such a body.
Now each such line is answered on stdout by a JSON-RPC parse error (-32700, the request's id where it can be read) naming its line and what is
wrong, nothing of it is stored, and the next lines are served. Run as a real subprocess, over its stdin and stdout."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from serving import keys_file, tiny_export  # noqa: E402

from sam_model.serve.stdio import refused  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}


def remember(request_id: int, arguments: str) -> bytes:
    """A tools/call of remember whose arguments are ``arguments``' JSON text as written (a key twice, say)."""
    return (b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "remember", "arguments": '
            % request_id + arguments.encode("utf-8") + b"}}\n")


class Served:
    """sam-serve --stdio acme as a subprocess: lines written to its stdin, its answers read from its stdout."""

    def __init__(self, folder: Path, export: Path, *options: str):
        args = ["--keys", str(keys_file(folder)), "--data", str(folder / "data"), "--model", str(export),
                "--stdio", "acme", "--threads", "1", *options]
        self.log = open(folder / "stderr.log", "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "sam_model.serve", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env={**os.environ, "PYTHONPATH": str(REPO)})
        self.pending = b""

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def answer(self, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            fd = self.proc.stdout.fileno()
            assert left > 0 and select.select([fd], [], [], left)[0], f"no answer: {self.stderr()}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"sam-serve closed its stdout: {self.stderr()}"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def ask(self, line: bytes) -> dict:
        self.send(line)
        return self.answer()

    def stderr(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-3000:]

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(120)
        self.log.close()
        return code


@pytest.fixture
def served(tmp_path, tiny_bert_dir):
    server = Served(tmp_path, tiny_export(tiny_bert_dir, tmp_path / "export"))
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait(60)


def recalled(server: Served, request_id: int, user_id: str) -> list[str]:
    """The memories of ``user_id`` the served memory holds (a recall of them all, by the same process)."""
    args = json.dumps({"query": "flies seat aisle", "user_id": user_id, "limit": 50})
    got = server.ask(b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "recall", '
                     b'"arguments": %s}}\n' % (request_id, args.encode()))
    assert not got["result"].get("isError"), got
    return [h["memory"] for h in json.loads(got["result"]["content"][0]["text"])["results"]]


def initialized(server: Served) -> Served:
    """``server`` after the client's first two lines: initialize (answered) and its notification (not)."""
    assert server.ask(json.dumps(INIT).encode() + b"\n")["result"]["serverInfo"]["name"] == "sam-memory"
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    return server


def test_a_line_of_invalid_utf8_is_refused_by_number_and_the_next_lines_are_served(served):
    latin1 = remember(2, '{"text": "Jos\u00e9 flies business", "user_id": "jose"}').replace(b"\xc3\xa9", b"\xe9")
    bad = initialized(served).ask(latin1)  # line 3
    assert bad["id"] == 2 and bad["error"]["code"] == -32700, bad  # it was stored as "Jos\ufffd flies business"
    said, at = bad["error"]["message"], latin1.index(bytes([0xE9]))
    assert said.startswith(f"Parse error: line 3 holds invalid UTF-8 at byte {at} (0xe9"), said
    fine = served.ask(remember(3, '{"text": "Jos\u00e9 flies economy", "user_id": "jose"}'))  # served after it
    assert fine["id"] == 3 and not fine["result"].get("isError"), fine
    assert json.loads(fine["result"]["content"][0]["text"])["results"][0]["memory"] == "Jos\u00e9 flies economy"
    assert recalled(served, 4, "jose") == ["Jos\u00e9 flies economy"]  # nothing with U+FFFD for the user's byte
    assert served.close() == 0, served.stderr()  # end of input: the SDK's shutdown


def test_a_line_giving_a_key_twice_is_refused_by_number_and_the_next_lines_are_served(served):
    twice = initialized(served).ask(remember(2, '{"text": "window seat", "user_id": "alice", "user_id": "bob"}'))
    assert twice["id"] == 2 and twice["error"]["code"] == -32700, twice  # it was stored as bob's
    assert twice["error"]["message"].startswith("Parse error: line 3: the key 'user_id' is given twice"), twice
    nested = served.ask(remember(3, '{"text": "aisle", "user_id": "alice", "metadata": {"a": 1, "a": 2}}'))
    assert nested["id"] == 3 and nested["error"]["message"].startswith("Parse error: line 4: the key 'a' is "
                                                                          "given twice"), nested
    fine = served.ask(remember(4, '{"text": "no red-eyes", "user_id": "alice"}'))  # line 5, served after them
    assert fine["id"] == 4 and not fine["result"].get("isError"), fine
    assert recalled(served, 5, "alice") == ["no red-eyes"] and recalled(served, 6, "bob") == []
    assert served.close() == 0, served.stderr()


def test_a_line_over_the_limit_is_answered_with_an_error_and_the_next_lines_are_served(tmp_path, tiny_bert_dir):
    """A line had no size limit: one huge line (or bytes that never end) was held whole, growing the memory without
    bound. Past --max-body-mb (the HTTP body's limit) it is answered with a parse error naming the limit and what to
    do, its id read from the line as it passes (wherever it stands in it), and the lines after it are served."""
    served = Served(tmp_path, tiny_export(tiny_bert_dir, tmp_path / "export"), "--max-body-mb", "1.5")
    try:
        huge = remember(2, json.dumps({"text": "x" * 1_600_000, "user_id": "alice"}))  # line 3
        over = initialized(served).ask(huge)
        assert over["id"] == 2 and over["error"]["code"] == -32700, over
        said = over["error"]["message"]
        # told once past the limit, before its end (bytes may never end): its size is not said
        assert said.startswith("Parse error: line 3 is over this server's limit of 1,500,000 bytes a line (sam-serve "
                               "--max-body-mb 1.5)"), said
        assert "larger --max-body-mb" in said and "\n" not in said, said
        # its id after 1.6 MB of params (JSON's members in any order): read as the line passed, where it was looked
        # for in the first 64 KiB alone and answered as null, the client waiting for ever
        late = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "remember", "arguments": {
            "text": "x" * 1_600_000, "user_id": "alice"}}, "id": "late-7"}
        over = served.ask(json.dumps(late).encode() + b"\n")  # line 4
        assert over["id"] == "late-7" and over["error"]["message"].startswith("Parse error: line 4 is over"), over
        del late["id"]
        unknown = served.ask(json.dumps(late).encode() + b"\n")  # line 5: no id to read, and said so
        assert unknown["id"] is None and unknown["error"]["message"].endswith(
            "no id could be read of it (its object gives no id), so this answer's id is null"), unknown
        fine = served.ask(remember(3, '{"text": "no red-eyes", "user_id": "alice"}'))  # line 6
        assert fine["id"] == 3 and not fine["result"].get("isError"), fine
        assert recalled(served, 4, "alice") == ["no red-eyes"]
        assert served.close() == 0, served.stderr()
    finally:
        if served.proc.poll() is None:
            served.proc.kill()
            served.proc.wait(60)


def test_the_sdks_stdio_client_is_served_as_before(tmp_path, tiny_bert_dir):
    """What the transport leaves to the SDK (initialize, the tools' list, calls, shutdown when the client goes), as
    an agent's MCP client meets it: the mcp SDK's own, launching sam-serve --stdio."""
    import asyncio

    from mcp import Client, StdioServerParameters

    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    args = ["-m", "sam_model.serve", "--keys", str(keys_file(tmp_path)), "--data", str(tmp_path / "data"),
            "--model", str(export), "--stdio", "acme", "--threads", "1"]

    async def run() -> tuple[set[str], dict]:
        server = StdioServerParameters(command=sys.executable, args=args, env={**os.environ, "PYTHONPATH": str(REPO)})
        async with Client(server) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            await client.call_tool("remember", {"text": "Jos\u00e9 prefers \u7a93\u8fba seats", "user_id": "jose"})
            found = await client.call_tool("recall", {"query": "seats", "user_id": "jose"})
            return tools, json.loads(found.content[0].text)

    tools, found = asyncio.run(run())
    assert tools == {"remember", "recall", "forget", "forget_all"}
    assert [h["memory"] for h in found["results"]] == ["Jos\u00e9 prefers \u7a93\u8fba seats"]


@pytest.mark.parametrize("raw, says", [
    (b'{"a": "caf\xe9"}\n', "line 7 holds invalid UTF-8 at byte 10 (0xe9"),
    (b'{"a": "\xed\xa0\x80"}\n', "line 7 holds invalid UTF-8 at byte 7 (0xed"),  # a surrogate, no UTF-8
    (b'[{"id": 1, "id": 2}]\n', "line 7: the key 'id' is given twice in one object (keep one)"),
])
def test_a_refused_line_names_its_number_and_what_is_wrong(raw, says):
    line, why = refused(raw, 7)
    assert line == "" and why is not None and why.startswith(says) and "\n" not in why, why


@pytest.mark.parametrize("raw", [b'{"a": "caf\xc3\xa9", "b": {"a": 1}}\r\n', b"\n", b"{broken\n", b'{"a": 1}'])
def test_other_lines_are_passed_on_as_sent(raw):
    """A line that is no JSON is left to the next check (stdio.unread); a key in two objects is no key twice."""
    assert refused(raw, 1) == (raw.decode("utf-8"), None)


def test_a_refused_request_is_answered_with_its_id_and_a_line_the_sdk_cannot_read_is_answered_too(served):
    """A client waits for the answer carrying its request's id: an error with id null matched no request (the SDK's
    client drops it), so the call hung. And a line the SDK cannot read (a lone surrogate, valid JSON the SDK's reader
    refuses; broken JSON) was logged by the SDK at debug level and answered never: the caller hung as well."""
    initialized(served)
    served.send(remember(2, '{"text": "window seat", "user_id": "alice", "user_id": "bob"}'))  # line 3
    served.send(remember(3, '{"text": "Jos\\ud800 flies", "user_id": "jose"}'))  # line 4
    served.send(b'{"jsonrpc": "2.0", "id": 4, "method": \n')  # line 5: no id can be read
    served.send(b'{"jsonrpc": "2.0", "id": "five", "method": "tools/call", "params": 7}\n')  # line 6
    served.send(b"\n")  # a blank line: nothing to answer
    served.send(remember(6, '{"text": "no red-eyes", "user_id": "alice"}'))  # line 8
    twice, lone, broken, invalid, fine = (served.answer(30) for _ in range(5))
    assert twice["id"] == 2 and twice["error"]["code"] == -32700, twice
    assert twice["error"]["message"].startswith("Parse error: line 3: the key 'user_id' is given twice"), twice
    assert lone["id"] == 3 and lone["error"]["code"] == -32700, lone
    assert lone["error"]["message"] == ("Parse error: line 4: params.arguments.text holds a lone UTF-16 surrogate "
                                        "('\\ud800'), which is no Unicode text: send valid UTF-8 (a JSON \\ud83d "
                                        "must be followed by its low half, as in an emoji); nothing of this line was "
                                        "read"), lone  # where the SDK's said "unexpected end of hex escape"
    assert broken["id"] is None and broken["error"]["code"] == -32700, broken
    assert broken["error"]["message"].startswith("Parse error: line 5 "), broken
    assert invalid["id"] == "five" and invalid["error"]["code"] == -32600, invalid
    assert invalid["error"]["message"].startswith("Invalid Request: line 6 "), invalid
    assert fine["id"] == 6 and not fine["result"].get("isError"), fine
    assert recalled(served, 7, "alice") == ["no red-eyes"] and recalled(served, 8, "jose") == []
    assert served.close() == 0, served.stderr()


@pytest.mark.parametrize("line, expected", [
    ('{"jsonrpc": "2.0", "id": 7, "method": "x", "params": {"id": 1, "a": 1, "a": 2}}', 7),
    ('{"id": "seven", "id": "eight"}', None),  # the id itself given twice: neither is the request's
    ('{"id": true}', None), ('{"id": 1.5}', None), ('[{"id": 1}]', None), ('{"id": 1, ', None),
    ('{"id": "\\ud800"}', None),  # no Unicode text, which no answer can carry
    # the client's answer to the server's request: its id is in the server's numbering, no request of the client's
    ('{"jsonrpc": "2.0", "id": 0, "result": {"a": 1, "a": 2}}', None), ('{"id": 0, "error": {}}', None),
])
def test_the_id_a_refusal_answers_to_is_read_only_where_it_is_unambiguous(line, expected):
    from sam_model.serve.jsonrpc import id_of

    assert id_of(line) == expected


def test_requests_before_the_end_of_input_are_answered_and_stored(served, tmp_path):
    """A client may write its last requests and close stdin (``cat calls.jsonl | sam-serve --stdio``, the last
    line without a newline): the SDK's server cancelled every request in flight at the end of input, so they were
    answered never and their memories were not stored."""
    initialized(served)
    served.send(remember(2, '{"text": "window seat", "user_id": "alice"}'))
    served.send(remember(3, '{"text": "no red-eyes", "user_id": "alice"}').rstrip(b"\n"))
    served.proc.stdin.close()
    answers = sorted((served.answer(30) for _ in range(2)), key=lambda a: a["id"])
    assert [a["id"] for a in answers] == [2, 3] and not any(a["result"].get("isError") for a in answers), answers
    assert served.proc.wait(60) == 0, served.stderr()
    again = Served(tmp_path, tmp_path / "export")
    try:
        assert sorted(recalled(initialized(again), 4, "alice")) == ["no red-eyes", "window seat"]
    finally:
        again.close()


def test_a_byte_order_mark_before_the_first_line_is_skipped(served):
    """A client whose stream writes a UTF-8 BOM first (PowerShell's, .NET's with UTF8Encoding(true)) sends it before
    its initialize: read as part of the line, the line was no JSON and the client's initialize went unanswered."""
    first = served.ask(b"\xef\xbb\xbf" + json.dumps(INIT).encode() + b"\r\n")
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "sam-memory", first
    assert served.close() == 0, served.stderr()


def test_the_byte_a_refused_first_line_names_counts_from_the_line_as_sent():
    line, why = refused(b'\xef\xbb\xbf{"a": "caf\xe9"}\n', 1)
    assert line == "" and why is not None and why.startswith("line 1 holds invalid UTF-8 at byte 13 (0xe9"), why
    assert refused(b'\xef\xbb\xbf{"a": 1}\n', 1) == ('{"a": 1}\n', None)
    assert refused(b'\xef\xbb\xbf{"a": 1}\n', 2)[1] is None and refused(b'\xef\xbb\xbf{"a": 1}\n', 2)[0][0] == "\ufeff"


def test_the_requests_read_ahead_of_their_answers_are_bounded():
    """A client writing 10,000 calls at once: each line read was a task holding its request (10 MB each, say) until
    answered, all of stdin in memory; now the lines wait in the pipe while MAX_IN_FLIGHT requests are unanswered."""
    import io

    import anyio
    from mcp_types import JSONRPCResponse

    from sam_model.serve.stdio import MAX_IN_FLIGHT, _Lines

    lines = _Lines(io.BytesIO(b"".join(remember(i, '{"text": "x", "user_id": "u"}') for i in range(3 * MAX_IN_FLIGHT))))
    taken: list[str] = []

    async def run() -> None:
        async def read() -> None:
            async for line in lines:
                taken.append(line)

        async with anyio.create_task_group() as tg:
            lines.open(None)
            tg.start_soon(read)
            await anyio.sleep(0.5)
            assert len(taken) == MAX_IN_FLIGHT
            for i in range(5):
                lines.answered(JSONRPCResponse(jsonrpc="2.0", id=i, result={}))
            await anyio.sleep(0.5)
            assert len(taken) == MAX_IN_FLIGHT + 5
            tg.cancel_scope.cancel()

    anyio.run(run)
