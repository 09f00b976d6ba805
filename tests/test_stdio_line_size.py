"""``sam-serve --stdio`` reads a line of at most its limit (``--max-body-mb``, the HTTP body's): a line had no size
limit, so one huge line, or bytes that never end, was held whole and grew the memory until the process was killed.
Now a line past the limit is told at once, read on to its newline without being kept, and the next line is read as
usual. The reader is run over a real pipe, as stdin is read."""

from __future__ import annotations

import io
import itertools
import os
import threading
import tracemalloc
from collections.abc import Iterable

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from sam_model.serve.idscan import scan_id  # noqa: E402
from sam_model.serve.stdio import TooLong, _raw_lines  # noqa: E402

LIMIT = 10_000
CHUNK = b"x" * (1 << 16)


def _writer(fd: int, chunks: Iterable[bytes]) -> threading.Thread:
    """A thread writing ``chunks`` to ``fd``, then closing it (a reader gone: it stops)."""
    def write() -> None:
        try:
            for chunk in chunks:
                os.write(fd, chunk)
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_line_past_the_limit_is_told_and_skipped_unkept_and_the_next_line_is_read():
    r, w = os.pipe()
    head = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"a": "'
    os.write(w, head)
    thread = _writer(w, [*[CHUNK] * 320, b'"}}\n{"id": 10}\n'])  # a line of 20 MB
    tracemalloc.start()
    try:
        with os.fdopen(r, "rb") as source:
            got = list(_raw_lines(source, LIMIT))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    thread.join(10)
    assert len(got) == 2 and isinstance(got[0], TooLong) and got[1] == b'{"id": 10}\n', got[1:]
    assert got[0].request_id == 9 and got[0].why is None and got[0].size is None  # told once its id was read
    assert peak < 1_000_000, f"reading a 20 MB line held {peak:,} bytes at its peak"  # it was the whole line


def test_bytes_that_never_end_are_told_at_once():
    """No newline ever comes: the line is refused once past the limit, not at its end (it has none)."""
    r, w = os.pipe()
    stop = threading.Event()
    thread = _writer(w, itertools.takewhile(lambda _: not stop.is_set(), itertools.repeat(CHUNK)))
    with os.fdopen(r, "rb") as source:
        lines = _raw_lines(source, LIMIT)
        first = next(lines)
        stop.set()
        assert isinstance(first, TooLong) and first.size is None and first.request_id is None
        assert first.why == "it is no JSON object (b'x' where '{' opens it at byte 0)"
        assert list(lines) == []  # the rest read past, to the end of input
    thread.join(10)


@pytest.mark.parametrize("sent, expected", [
    ([b"a" * LIMIT + b"\n", b"b" * LIMIT], [b"a" * LIMIT + b"\n", b"b" * LIMIT]),  # at the limit: read
    ([b"a" * (LIMIT + 1) + b"\n", b"{}\n"], [LIMIT + 1, b"{}\n"]),  # past it: its size said
    ([b"\n", b"a" * (LIMIT + 1)], [b"\n", None]),  # the last line, with no newline: no size known
    # a Windows client's "\r\n" is its newline: a line at the limit is read, one byte more is not
    ([b"a" * LIMIT + b"\r\n", b"{}\r\n"], [b"a" * LIMIT + b"\r\n", b"{}\r\n"]),
    ([b"a" * LIMIT + b"\r", b"\n{}\n"], [b"a" * LIMIT + b"\r\n", b"{}\n"]),  # the "\r" read before its "\n"
    ([b"a" * (LIMIT + 1) + b"\r\n", b"{}\n"], [LIMIT + 1, b"{}\n"]),
    ([b"a" * LIMIT + b"\rb\n", b"{}\n"], [LIMIT + 2, b"{}\n"]),  # a "\r" within a line is of it
    ([b"{}\n", b"a" * LIMIT + b"\r"], [b"{}\n", LIMIT + 1]),  # so is one ending the input, no "\n" after it
])
def test_the_limit_counts_a_lines_bytes_without_its_newline(sent, expected):
    r, w = os.pipe()
    thread = _writer(w, sent)
    with os.fdopen(r, "rb") as source:
        got = list(_raw_lines(source, LIMIT))
    thread.join(10)
    assert [g.size if isinstance(g, TooLong) else g for g in got] == expected
    # a source with no file descriptor (read by its own lines) counts alike
    got = list(_raw_lines(io.BytesIO(b"".join(sent)), LIMIT))
    assert [g.size if isinstance(g, TooLong) else g for g in got] == [e for e in expected if e is not None] + \
        [LIMIT + 1 for e in expected if e is None]


@pytest.mark.parametrize("line, expected", [
    (b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {"text": "xx', 4),
    (b'\xef\xbb\xbf { "id" : "four" , "params": [1, 2', "four"),  # a byte order mark, spaces
    (b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"id": 5, "text": "xx', None),  # not the request's
    (b'{"id": 4, "id": 5, "params": "xx', None),  # twice: neither
    (b'{"id": 4, "params": "\xc3\xa9\xc3', 4),  # the input ended within a character
    (b'{"id": true, "params": "', None), (b'[{"id": 4}, "', None), (b'{"id": 4', 4),  # the line's end ends the 4
    (b'{"params": {"id": 4, "text": "x"}, "id": 5, "method": "x", "params2": "xx', 5),  # a nested id read past
    (b'{"text": "\\"id\\": 4", "id": 6, "params": "xx', 6),  # "id" within a string, its quotes escaped
    # the client's answer to the server's request (sampling): its id is the server's, not a request of the client's
    (b'{"jsonrpc": "2.0", "id": 0, "result": {"content": {"text": "xx', None),
    (b'{"jsonrpc": "2.0", "id": 0, "error": {"code": -1, "message": "xx', None),
])
def test_the_id_of_a_line_too_long_is_read_where_it_is_whole(line, expected):
    assert scan_id(line)[0] == expected
