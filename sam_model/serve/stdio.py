"""``sam-serve --stdio``'s transport: the SDK's (mcp.server.stdio.stdio_server), fed stdin's lines read as bytes and
refused where the SDK's reading would change or lose what the client sent.

The SDK decodes stdin with ``errors="replace"``, so a line holding bytes that are no UTF-8 (a Latin-1 client's
"café") was stored with U+FFFD in place of them, and reads a key given twice in one object as its last value
(``remember(user_id="alice", user_id="bob")`` stored bob's memory). Here such a line is answered on stdout as the
SDK answers one it cannot parse over HTTP (a JSON-RPC error with code -32700), naming the line's number and what is
wrong, and never reaches the server; the next lines are served. So is a line the SDK's reader refuses (broken JSON, a
lone surrogate such as "\\ud800"; -32600 for JSON that is no JSON-RPC message), which the SDK's stdio dropped
unanswered. So is a line over the server's limit (sam-serve --max-body-mb, the HTTP body's), read on to its newline
unkept (one huge line, or bytes that never end, grew the memory without bound) and told once its id is read as it
passes (sam_model.serve.idscan), at its end at the latest. Each answer carries the request's id where it can be
read, as the client waits for that id, and says why where none can be; a blank line is skipped.
Everything else (initialize, notifications, shutdown at end of input once the requests read before it
are answered, fd 0 and 1 diverted while serving) is the SDK's own."""

from __future__ import annotations

import codecs
import logging
import math
import os
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO, NamedTuple

import anyio
from anyio import from_thread, lowlevel
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

from sam_model.limits import MAX_BODY_BYTES
from sam_model.serve.idscan import IdScan, scan_id
from sam_model.serve.jsonrpc import busy, id_of, invalid_request, parse_error, unreadable_text

log = logging.getLogger("sam_model.serve")


def refused(raw: bytes, number: int) -> tuple[str, str | None]:
    """(the line as text, None), or ("", why the line ``number`` (from 1) is refused unread: bytes that are no UTF-8,
    a key given twice in one object, a lone surrogate: jsonrpc.unreadable_text). A UTF-8 byte order mark opening the first line is no part of it (a stream of
    PowerShell's or .NET's writes one first: the client's initialize was no JSON, answered never)."""
    skip = len(codecs.BOM_UTF8) if number == 1 and raw.startswith(codecs.BOM_UTF8) else 0
    try:
        line = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        at = skip + err.start
        return "", (f"line {number} holds invalid UTF-8 at byte {at} (0x{raw[at]:02x}, counting from "
                    "0): send JSON encoded as UTF-8; nothing of this line was read")
    why = unreadable_text(line)
    return (line, None) if why is None else ("", f"line {number}: {why}; nothing of this line was read")


DRAIN_S = 60.0  # at the end of input, how long the requests read before it may take to be answered
MAX_IN_FLIGHT = 64  # requests read and not answered yet, before the next line is read: stdin's bytes wait in the pipe
# requests read past MAX_IN_FLIGHT while the server waits on the client and held in memory; past it, each is answered
# at once with an error (a client that never answers its server's requests would fill the memory otherwise)
MAX_HELD = 1024
CR = 13  # the byte "\r", of a line ending "\r\n"


class TooLong(NamedTuple):
    """A line longer than the server's limit, read past unkept: its size, if known (a line that never ends has none;
    one told before its end, its id read, neither), and its request's id or why none could be read
    (sam_model.serve.idscan, which read the whole line as it passed: the id was read from its first 64 KiB alone,
    and one after a long "params" was answered as null, its client waiting for ever)."""

    size: int | None
    request_id: int | str | None
    why: str | None


def too_long(number: int, limit: int, size: int | None, why: str | None = None) -> str:
    """The refusal of the line ``number`` over ``limit`` bytes: the limit, where it is set and what a client can do;
    ``why`` its id could not be read, where it could not (the answer's id is then null)."""
    said = f"of {size:,} bytes " if size is not None else ""
    unfound = f"; no id could be read of it ({why}), so this answer's id is null" if why is not None else ""
    return (f"line {number} {said}is over this server's limit of {limit:,} bytes a line (sam-serve --max-body-mb "
            f"{limit / 1e6:g}): send fewer messages a remember, or start the server with a larger --max-body-mb; "
            f"nothing of this line was read; the next lines are served{unfound}")


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
        self.lines.asking(item.message)  # before it goes: the client may answer at once
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
    """stdin's lines as the messages the SDK's server reads (an async iterable), each refused line answered on the
    SDK's write stream (its one writer of stdout: no answer can tear another) instead of passed on. A line is read
    as JSON twice, not three times: once for a key given twice (Python's reader, whose pairs the SDK's cannot
    show), once by the SDK's own reader (pydantic's), whose message is then the server's; the SDK's stdio read each
    line it was given again. On a 1 MB line each read takes about 1.5 ms, a remember's encoding far more.

    stdin is read on a daemon thread of its own, one line ahead at most while the bound holds: with
    :data:`MAX_IN_FLIGHT` requests unanswered the next lines wait in the pipe. Except while the server waits on the
    client (a tool's sampling, elicitation or ping: a request the server sent, not answered nor cancelled yet): then
    the lines are read on, the client's answers and notifications passed on at once and its new requests held, in
    order, until the bound lets them through; past :data:`MAX_HELD` held, a new one is answered with an error.
    The bound held every line, so 64 tools waiting on the client's answers stopped the
    reader from reading them: none was ever answered. The thread is a daemon's so that a stop other than the end of
    input (a signal) is not held up by a read that waits on the client for ever."""

    def __init__(self, source: BinaryIO, max_body: int = MAX_BODY_BYTES):
        self.source = source
        self.max_body = max_body  # a line's bytes at most (sam-serve --max-body-mb): the bytes one request holds
        self.answers: Any = None
        self.opened = anyio.Event()
        self.unanswered: set[int | str] = set()  # ids of the requests passed on, not answered yet
        self.asked: set[int | str] = set()  # ids of the server's requests to the client, not answered yet
        self.incoming: deque[bytes | TooLong] = deque()  # lines read by the thread, not looked at yet
        self.held: deque[Any] = deque()  # the client's requests read past the bound, as read
        self.ended = False  # the thread read the end of input (or stdin failed)
        self.ended_at: float | None = None  # when, on the event loop's clock
        self.changed = anyio.Event()
        self.gate = threading.Event()  # set: the thread may read the next line
        self.stopped = False  # the server stopped: the thread reads no further line

    def open(self, answers: Any) -> None:
        """The SDK's write stream is open: lines may be read and answered."""
        self.answers = answers
        self.opened.set()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._read()

    def answered(self, message: Any) -> None:
        """``message`` goes to stdout: a request it answers is no longer in flight."""
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.unanswered.discard(message.id)
            self._changed()

    def asking(self, message: Any) -> None:
        """``message`` goes to stdout: a request of the server's is one the client's answer to must be read; the
        server's cancel of one (it gave up: its timeout, its tool cancelled) is one no answer is waited for any more.
        It was waited for still, so a client that never answered lifted the bound for good."""
        if isinstance(message, JSONRPCRequest):
            self.asked.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self.asked.discard((message.params or {}).get("requestId"))  # type: ignore[arg-type]
        else:
            return
        self._changed()

    def _changed(self) -> None:
        """Something the reader waits on changed: wake it, and open or close the thread's gate."""
        self.changed.set()
        self.changed = anyio.Event()
        full = len(self.unanswered) + len(self.held) >= MAX_IN_FLIGHT and not self.asked
        if (self.incoming or full) and not self.stopped:
            self.gate.clear()
        else:
            self.gate.set()

    def stop(self) -> None:
        """The server stopped: the thread ends at its next line or the end of input, where it waited on its gate for
        ever (the bound full), one thread left per server run in the process."""
        self.stopped = True
        self.gate.set()

    def _arrived(self, raw: bytes | TooLong | None) -> None:
        """On the event loop: the thread read ``raw`` (None: the end of input)."""
        if raw is None:
            self.ended, self.ended_at = True, anyio.current_time()
        else:
            self.incoming.append(raw)
        self._changed()

    def _pump(self, token: Any) -> None:
        """The thread: stdin's lines handed to the event loop, each read only once the gate is open."""
        lines = _raw_lines(self.source, self.max_body)
        try:
            while True:
                try:
                    raw = next(lines, None)
                except (OSError, ValueError) as exc:  # stdin failed (EIO, closed under it): its end, said
                    # taken below for the loop gone, the end was never told: the reader waited for ever
                    log.warning("sam-serve --stdio: reading stdin failed (%s): read as the end of input; the "
                                "requests read are answered, then the server stops (start it again to go on)", exc)
                    raw = None
                from_thread.run_sync(self._arrived, raw, token=token)
                if raw is None:
                    return
                self.gate.wait()
                if self.stopped:
                    return
        except Exception:  # noqa: BLE001 (the loop is gone: the server stopped, nothing to tell)
            return

    async def _drained(self) -> None:
        """The end of input: the SDK's server cancels every request still in flight when its read stream ends, so a
        client's last requests (``cat calls.jsonl | sam-serve --stdio``) were answered never and their memories not
        stored. Wait for their answers first, up to :data:`DRAIN_S` (a request the client cancelled gets none)."""
        with anyio.move_on_after(DRAIN_S):
            while self.unanswered:
                await anyio.sleep(0.02)

    async def _read(self) -> AsyncIterator[Any]:
        await self.opened.wait()
        self._changed()
        threading.Thread(target=self._pump, args=(lowlevel.current_token(),), name="sam-serve stdin",
                         daemon=True).start()
        number = 0
        while True:
            if self.held and (len(self.unanswered) < MAX_IN_FLIGHT or self._waited_out() <= 0):
                message = self.held.popleft()
                self._note(message)
                self._changed()
                yield message
            elif self.incoming:
                raw = self.incoming.popleft()
                self._changed()
                number += 1
                message, answer = self._take(raw, number)
                if answer is not None:
                    await self.answers.send(SessionMessage(jsonrpc_message_adapter.validate_python(
                        answer, by_name=False)))
                elif message is not None:
                    yield message
            elif self.ended and not self.held:  # held requests are passed on first
                break
            else:
                with anyio.move_on_after(self._waited_out()):
                    await self.changed.wait()
        await self._drained()

    def _waited_out(self) -> float:
        """How long held requests may wait for room still: after the end of input, up to :data:`DRAIN_S`, then they
        are passed on past the bound (read already, they hold no more memory so), where the reader waited for ever
        on tools waiting on a client that could answer no more, and the server never stopped nor saved."""
        if self.ended_at is None:
            return math.inf
        return self.ended_at + DRAIN_S - anyio.current_time()

    def _take(self, raw: bytes | TooLong, number: int) -> tuple[Any, dict[str, Any] | None]:
        """(the message to pass on now, None), (None, the error answering it) or (None, None): a blank line, or a
        request held while :data:`MAX_IN_FLIGHT` are unanswered (or others are held before it)."""
        if isinstance(raw, TooLong):
            return None, parse_error(too_long(number, self.max_body, raw.size, raw.why), raw.request_id)
        line, why = refused(raw, number)
        if why is not None:
            return None, parse_error(why, id_of(raw.decode("utf-8", "surrogateescape")))
        if not line.strip():
            return None, None  # a blank line holds no message: nothing to answer
        message, answer = unread(line, number)
        if answer is not None:
            return None, answer
        if isinstance(message, JSONRPCRequest) and (self.held or len(self.unanswered) >= MAX_IN_FLIGHT):
            if len(self.held) >= MAX_HELD:
                return None, busy(f"line {number}: {MAX_HELD} requests wait already, read while the server waits on "
                                  "your answer to its request (sampling, elicitation, a ping); send it again once "
                                  "earlier ones are answered; nothing of this line was run", message.id)
            self.held.append(message)
            self._changed()
            return None, None
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.asked.discard(message.id)  # type: ignore[arg-type]
        self._note(message)
        return message, None

    def _note(self, message: Any) -> None:
        """A request passed on is in flight until answered; one the client cancels is answered never."""
        if isinstance(message, JSONRPCRequest):
            self.unanswered.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self.unanswered.discard((message.params or {}).get("requestId"))  # type: ignore[arg-type]


class _Skipped:
    """A line over the limit, read past to its newline: its bytes counted and its id read as they pass, none kept."""

    def __init__(self) -> None:
        self.scan, self.size, self.told, self.cr = IdScan(), 0, False, False

    def read(self, piece: bytes) -> TooLong | None:
        """The line's next bytes; the refusal to tell now, if its id is read (or none can be): a line that never
        ends is told at once, where its id opens it or its bytes are no JSON."""
        self.size += len(piece)
        self.cr = piece.endswith(b"\r") if piece else self.cr
        if self.told or not self.scan.feed(piece):
            return None
        self.told = True
        return TooLong(None, *self.scan.end())

    def ended(self, newline: bool) -> TooLong | None:
        """The line ended (at a newline, or at the end of input: its "\r" then of it); the refusal, if not told."""
        if self.told:
            return None
        return TooLong(self.size - (newline and self.cr), *self.scan.end())


def _over(line: bytes, size: int) -> TooLong:
    """The refusal of ``line``, held whole already (of ``size`` bytes, its newline not counted)."""
    return TooLong(size, *scan_id(line))


def _raw_lines(source: BinaryIO, limit: int = MAX_BODY_BYTES) -> Iterator[bytes | TooLong]:
    """``source``'s lines as bytes, each one longer than ``limit`` bytes (its newline not counted, "\\r\\n" nor
    "\\n": a Windows client's line as long as the HTTP body the limit takes was refused for its "\\r") as a
    :class:`TooLong`, read from its file descriptor where it has one: a daemon thread blocked in a buffered file's
    read holds its lock, which the interpreter's exit then waits on (a fatal error), where one blocked in os.read
    holds nothing. Read so, at most ``limit`` bytes and a read's are held: a line past them is read on to its newline
    unkept (a line of gigabytes, or bytes that never end, grew the memory until the process was killed), and told
    once its id is read or none can be (:class:`_Skipped`), at its end at the latest. A source with no descriptor (a
    test's lines) is read by its own lines."""
    try:
        fd = source.fileno()
    except (AttributeError, OSError, ValueError):
        for line in source:
            size = len(line) - line.endswith(b"\n") - line.endswith(b"\r\n")
            yield _over(line, size) if size > limit else line
        return
    pending = bytearray()
    skipping: _Skipped | None = None  # an over-long line, read past to its newline
    while chunk := os.read(fd, 1 << 16):
        if skipping is not None:
            at = chunk.find(b"\n")
            if (told := skipping.read(chunk if at < 0 else chunk[:at])) is not None:
                yield told
            if at < 0:
                continue
            if (told := skipping.ended(newline=True)) is not None:
                yield told
            chunk, skipping = chunk[at + 1:], None
        start = len(pending)  # where a newline may be: the bytes before held none
        pending += chunk
        cut = 0
        while (at := pending.find(b"\n", start)) >= 0:
            size = at - cut - (at > cut and pending[at - 1] == CR)
            yield _over(bytes(pending[cut:at]), size) if size > limit else bytes(pending[cut:at + 1])
            cut = start = at + 1
        del pending[:cut]
        if len(pending) - pending.endswith(b"\r") > limit:  # past the limit, no newline yet: a line may never end
            skipping = _Skipped()
            if (told := skipping.read(bytes(pending))) is not None:
                yield told
            pending.clear()
    if skipping is not None and (told := skipping.ended(newline=False)) is not None:
        yield told
    if pending:  # the last line, no newline after it: its "\r" is of it
        yield _over(bytes(pending), len(pending)) if len(pending) > limit else bytes(pending)


def _claim_stdin() -> tuple[BinaryIO, Any]:
    """(stdin's bytes, what gives fd 0 back), as the SDK claims it when it reads stdin itself: fd 0 then reads the
    null device, so a child process cannot take the client's lines. An SDK without that claim: stdin's buffer."""
    try:
        from mcp.server.stdio import _claim_fd, _open_stdin_diversion
    except ImportError:
        return sys.stdin.buffer, None
    return _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)


class _NoLines:
    """The SDK's stdio_server's own stdin: no line, ended once ``done`` is set. Its reader would read each line as
    JSON once more; the server reads the messages :class:`_Lines` read instead, and the SDK's stdout is kept."""

    def __init__(self, done: anyio.Event):
        self.done = done

    def __aiter__(self) -> _NoLines:
        return self

    async def __anext__(self) -> str:
        await self.done.wait()
        raise StopAsyncIteration


@asynccontextmanager
async def strict_stdio(source: BinaryIO | None = None, stdout: Any = None,
                       max_body: int = MAX_BODY_BYTES) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for an MCP server, as the SDK's stdio_server yields them; ``source`` (bytes) and
    ``stdout`` (an anyio text file): a client's pipes instead of the process's stdin and stdout (a test's);
    ``max_body``: a line's bytes at most (sam-serve --max-body-mb), a longer one answered with an error."""
    source, release = _claim_stdin() if source is None else (source, None)
    lines, done = _Lines(source, max_body), anyio.Event()
    sender, receiver = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def feed() -> None:
        async with sender:
            async for message in lines:
                await sender.send(SessionMessage(message))

    try:
        async with stdio_server(stdin=_NoLines(done), stdout=stdout) as (_, write_stream):  # type: ignore[arg-type]
            lines.open(write_stream)
            async with anyio.create_task_group() as tg:
                tg.start_soon(feed)
                try:
                    yield receiver, _Answers(write_stream, lines)
                finally:
                    done.set()
                    lines.stop()
                    tg.cancel_scope.cancel()
    finally:
        if release is not None:
            release()


__all__ = ["TooLong", "refused", "strict_stdio", "too_long"]
