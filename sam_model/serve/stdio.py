"""``sam-serve --stdio``'s transport: the SDK's (mcp.server.stdio.stdio_server), fed stdin's lines read as bytes and
refused where the SDK's reading would change or lose what the client sent.

The SDK decodes stdin with ``errors="replace"``, so a line holding bytes that are no UTF-8 (a Latin-1 client's
"café") was stored with U+FFFD in place of them, and reads a key given twice in one object as its last value
(``remember(user_id="alice", user_id="bob")`` stored bob's memory). Here such a line is answered on stdout as the
SDK answers one it cannot parse over HTTP (a JSON-RPC error with code -32700), naming the line's number and what is
wrong, and never reaches the server; the next lines are served. So is a line the SDK's reader refuses (broken JSON, a
lone surrogate such as "\\ud800"; -32600 for JSON that is no JSON-RPC message), which the SDK's stdio dropped
unanswered. Each answer carries the request's id where it can be read, as the client waits for that id; a blank line
is skipped. Everything else (initialize, notifications, shutdown at end of input once the requests read before it
are answered, fd 0 and 1 diverted while serving) is the SDK's own."""

from __future__ import annotations

import codecs
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from sam_model.serve.jsonrpc import id_of, invalid_request, key_twice, parse_error


def refused(raw: bytes, number: int) -> tuple[str, str | None]:
    """(the line as text, None), or ("", why the line ``number`` (from 1) is refused unread: bytes that are no UTF-8,
    a key given twice in one object). A UTF-8 byte order mark opening the first line is no part of it (a stream of
    PowerShell's or .NET's writes one first: the client's initialize was no JSON, answered never)."""
    skip = len(codecs.BOM_UTF8) if number == 1 and raw.startswith(codecs.BOM_UTF8) else 0
    try:
        line = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        at = skip + err.start
        return "", (f"line {number} holds invalid UTF-8 at byte {at} (0x{raw[at]:02x}, counting from "
                    "0): send JSON encoded as UTF-8; nothing of this line was read")
    twice = key_twice(line)
    return (line, None) if twice is None else ("", f"line {number}: {twice}; nothing of this line was read")


DRAIN_S = 60.0  # at the end of input, how long the requests read before it may take to be answered
MAX_IN_FLIGHT = 64  # requests read and not answered yet, before the next line is read: stdin's bytes wait in the pipe


def unread(line: str, number: int) -> tuple[Any, dict[str, Any] | None]:
    """(the message, None), or (None, the error answering the line ``number``): text the SDK's reader cannot take
    (JSON it refuses, such as a lone surrogate "\\ud800", or no JSON-RPC message). The SDK's stdio logs such a line
    at debug level and answers nothing, so the client waited for its request's answer forever."""
    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False), None
    except ValidationError as err:
        first = err.errors()[0]
        if first["type"] == "json_invalid":
            why = f"line {number} is no JSON the server reads ({first['msg']}); nothing of this line was read"
            return None, parse_error(why, id_of(line))
        return None, invalid_request(f"line {number} is no JSON-RPC 2.0 request, notification or response; nothing "
                                     "of this line was read", id_of(line))


class _Answers:
    """The server's write stream, telling the lines each answer it writes (what :meth:`_Lines._drained` awaits)."""

    def __init__(self, stream: Any, lines: _Lines):
        self.stream = stream
        self.lines = lines

    async def send(self, item: SessionMessage) -> None:
        await self.stream.send(item)
        self.lines.answered(item.message)

    async def __aenter__(self) -> _Answers:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _Lines:
    """stdin's lines as the SDK's reader takes them (an async iterable of text), each refused one answered on the
    SDK's write stream (its one writer of stdout: no answer can tear another) instead of passed on."""

    def __init__(self, source: BinaryIO):
        self.source = source
        self.answers: Any = None
        self.opened = anyio.Event()
        self.unanswered: set[int | str] = set()  # ids of the requests passed on, not answered yet
        self.freed = anyio.Event()

    def open(self, answers: Any) -> None:
        """The SDK's write stream is open: lines may be read and answered."""
        self.answers = answers
        self.opened.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    def answered(self, message: Any) -> None:
        """``message`` goes to stdout: a request it answers is no longer in flight."""
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.unanswered.discard(message.id)
            self.freed.set()

    async def _drained(self) -> None:
        """The end of input: the SDK's server cancels every request still in flight when its read stream ends, so a
        client's last requests (``cat calls.jsonl | sam-serve --stdio``) were answered never and their memories not
        stored. Wait for their answers first, up to :data:`DRAIN_S` (a request the client cancelled gets none)."""
        with anyio.move_on_after(DRAIN_S):
            while self.unanswered:
                await anyio.sleep(0.02)

    async def _read(self) -> AsyncIterator[str]:
        await self.opened.wait()
        number = 0
        async for raw in anyio.wrap_file(self.source):
            while len(self.unanswered) >= MAX_IN_FLIGHT:  # the SDK's server takes each request as a task, unbounded
                self.freed = anyio.Event()
                await self.freed.wait()
            number += 1
            line, why = refused(raw, number)
            if why is None and not line.strip():
                continue  # a blank line holds no message: nothing to answer
            if why is None:
                message, answer = unread(line, number)
                if answer is None:
                    self._note(message)
                    yield line
                    continue
            else:
                answer = parse_error(why, id_of(raw.decode("utf-8", "surrogateescape")))
            error = jsonrpc_message_adapter.validate_python(answer, by_name=False)
            await self.answers.send(SessionMessage(error))
        await self._drained()

    def _note(self, message: Any) -> None:
        """A request passed on is in flight until answered; one the client cancels is answered never."""
        if isinstance(message, JSONRPCRequest):
            self.unanswered.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self.unanswered.discard((message.params or {}).get("requestId"))  # type: ignore[arg-type]


def _claim_stdin() -> tuple[BinaryIO, Any]:
    """(stdin's bytes, what gives fd 0 back), as the SDK claims it when it reads stdin itself: fd 0 then reads the
    null device, so a child process cannot take the client's lines. An SDK without that claim: stdin's buffer."""
    try:
        from mcp.server.stdio import _claim_fd, _open_stdin_diversion
    except ImportError:
        return sys.stdin.buffer, None
    return _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)


@asynccontextmanager
async def strict_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for an MCP server, as the SDK's stdio_server yields them."""
    source, release = _claim_stdin()
    lines = _Lines(source)
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.open(write_stream)
            yield read_stream, _Answers(write_stream, lines)
    finally:
        if release is not None:
            release()


__all__ = ["refused", "strict_stdio"]
