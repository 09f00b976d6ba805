"""The id of a ``sam-serve --stdio`` line over --max-body-mb is read from the whole line as it streams past
(sam_model.serve.idscan), none of it held: it was read from the line's first 64 KiB alone, so a request writing "id"
after a long "params" was answered with id null and its client waited for ever. The scan is checked against
Python's JSON reader (sam_model.serve.jsonrpc.id_of) on lines that fit, fed whole and in pieces."""

from __future__ import annotations

import json
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from sam_model.serve.idscan import ID_BYTES, IdScan, scan_id  # noqa: E402
from sam_model.serve.jsonrpc import RESPONSE_KEYS, id_of  # noqa: E402
from sam_model.serve.stdio import TooLong, _raw_lines, too_long  # noqa: E402

LIMIT = 10_000
PARAMS = {"name": "remember", "arguments": {"text": "x" * 100_000, "user_id": "alice"}}


def _pipe_lines(data: bytes) -> list:
    """``data`` read by the server's reader from a real pipe, as stdin is read."""
    r, w = os.pipe()

    def write() -> None:
        with os.fdopen(w, "wb") as out:
            out.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    with os.fdopen(r, "rb") as source:
        got = list(_raw_lines(source, LIMIT))
    thread.join(10)
    return got


@pytest.mark.parametrize("request_id", [41, "call-41", 0])
def test_an_over_long_lines_id_after_its_params_is_answered(request_id):
    """The id past the first 64 KiB (after 100 KB of params): read as the line passes, told once it is read."""
    line = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": PARAMS, "id": request_id}).encode()
    assert line.index(b'"id"') > 1 << 16
    got = _pipe_lines(line + b"\n" + b'{"id": 10}\n')
    assert isinstance(got[0], TooLong) and got[0].request_id == request_id and got[0].why is None, got[0]
    assert got[1:] == [b'{"id": 10}\n']


def test_an_over_long_line_with_no_id_says_so_in_its_answer():
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": PARAMS}).encode()
    got = _pipe_lines(line + b"\r\n")
    assert len(got) == 1 and (got[0].request_id, got[0].why) == (None, "its object gives no id"), got
    said = too_long(3, LIMIT, got[0].size, got[0].why)
    assert said.endswith("the next lines are served; no id could be read of it (its object gives no id), so this "
                         "answer's id is null"), said
    assert "\n" not in said and "no id could be read" not in too_long(3, LIMIT, 5)


@pytest.mark.parametrize(("line", "why"), [
    (b'{"params": "x", "id": {"a": 1}}', "its id is no integer nor string"),
    (b'{"params": "x", "id": "' + b"7" * (ID_BYTES + 1) + b'"}', f"its id is longer than {ID_BYTES:,} bytes"),
    (b'{"params": "x" "id": 3}', "it is no JSON object (b'\"' where ',' or '}' follows a value at byte 15)"),
    (b'{"params": [1, 2', "no id was read before the line ended"),
    (b'{"jsonrpc": "2.0", "id": 3, "result": "x"}', "it is a response (its \"result\"), whose id is the server's own"),
])
def test_why_no_id_is_read_is_said(line, why):
    assert scan_id(line) == (None, why)


def test_a_request_is_decided_once_its_id_and_method_are_read():
    """A line that never ends is told at once where its id and method open it."""
    scan = IdScan()
    assert not scan.feed(b'{"jsonrpc": "2.0", "id": 5, "params": {"text": "')
    assert scan.feed(b'xx"}, "method": "tools/call", "params2": "') and scan.end() == (5, None)


_KEYS = st.sampled_from(["id", "method", "params", "jsonrpc", "result", "error", "x", 'i"d', "i\\d", "\u00e9", ""])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False),
                     st.text(max_size=12))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner,
                                                                                             max_size=3), max_leaves=8)


@st.composite
def _lines(draw) -> tuple[bytes, dict]:
    """A JSON object as a client might write it: members in any order, spaces or none, ASCII escapes or not, a key
    "id" written with escapes, and nested objects holding "id" too."""
    obj = draw(st.dictionaries(_KEYS, _VALUES | st.text(max_size=4) | st.integers(), max_size=6))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\r ")])))
    if draw(st.booleans()):
        text = text.replace('"id"', '"\\u0069d"', 1)
    return (draw(st.sampled_from(["", " ", "\t\r "])) + text).encode("utf-8"), obj


@settings(max_examples=400, deadline=None)
@given(_lines(), st.lists(st.integers(1, 40), max_size=8))
def test_the_scan_reads_the_id_json_reads_whole_or_in_pieces(drawn, cuts):
    line, obj = drawn
    whole = scan_id(line)[0]
    if not ("method" in obj and any(key in obj for key in RESPONSE_KEYS)):  # a request and a response at once:
        assert whole == id_of(line.decode("utf-8"))  # the scan takes the first to come, Python's reader neither
    scan, at = IdScan(), 0
    for cut in cuts:  # the same line in pieces, as reads of a pipe cut it
        if scan.feed(line[at:at + cut]):
            break
        at += cut
    else:
        scan.feed(line[at:])
    assert scan.end()[0] == whole


@pytest.mark.parametrize("written", [b"5\x00", b"1\x00\x00\x00", b"\xef\xbb\xbf5", b"\xff\xfe5\x00", b"\xfe\xff\x005"])
def test_an_id_written_in_bytes_no_json_reader_takes_is_none(written):
    """The id's bytes are read as UTF-8, as the line is: Python's reader of bytes guesses their encoding, so a number
    followed by NULs ('5' + NUL, UTF-16) or after a byte order mark was read as the id 5, which the client never
    wrote as JSON."""
    line = b'{"jsonrpc": "2.0", "id": ' + written + b', "method": "tools/call", "params": "x"}'
    with pytest.raises(ValueError):
        json.loads(line.decode("utf-8", "replace"))  # no JSON: no id was sent
    assert scan_id(line) == (None, "its id is no integer nor string")


def test_an_id_given_again_after_the_answer_went_is_not_read():
    """The answer goes once the id and "method" are read (a line may never end): an "id" given again after them is
    past it, so the first is answered; given twice before, neither is (docs/serving.md says which)."""
    assert scan_id(b'{"id": 1, "method": "m", "params": "x", "id": 2}') == (1, None)
    assert scan_id(b'{"id": 1, "params": "x", "id": 2, "method": "m"}') == (None, 'it gives "id" twice')


@pytest.mark.parametrize("obj", [
    {"jsonrpc": "2.0", "method": "tools/call", "params": {"result": {"x": 1}, "text": "y" * 50}, "id": 7},
    {"jsonrpc": "2.0", "params": {"error": "e", "result": [1, {"result": 2}]}, "method": "m", "id": "s-7"},
    {"params": {"arguments": {"text": "\"result\": 1, \"id\": 9", "result": None}}, "id": 11, "method": "m"},
    {"jsonrpc": "2.0", "params": [{"error": {"id": 3}}, "result"], "id": 0, "method": "m"},
    {"params": {"result": 1}, "id": 12},
])
def test_a_result_or_error_key_within_params_leaves_the_request_its_id(obj):
    """Only a top-level "result" or "error" makes a line a response: one within the params (a tool's own field, a
    string quoting one) is skipped with its value, and the "id" after it is the request's, whole or in pieces."""
    for separators in ((",", ":"), (", ", ": ")):
        line = json.dumps(obj, separators=separators).encode()
        assert scan_id(line) == (id_of(line.decode()), None) == (obj["id"], None), line
        scan = IdScan()
        for at in range(0, len(line), 3):
            if scan.feed(line[at:at + 3]):
                break
        assert scan.end() == (obj["id"], None), line


@pytest.mark.parametrize("key", RESPONSE_KEYS)
@pytest.mark.parametrize("ends", [True, False], ids=["ended", "never ends"])
def test_an_over_long_response_is_answered_saying_it_is_one(key, ends):
    """A client's answer to the server's request (sampling) past the limit: its id is the server's, so the answer's
    id is null, and its message says why in words, not a bare null."""
    line = json.dumps({"jsonrpc": "2.0", "id": 3, key: {"content": "x" * 2 * LIMIT}}).encode()
    (got,) = _pipe_lines(line + b"\n" if ends else line[:LIMIT + 100])
    assert got.request_id is None, got
    said = too_long(4, LIMIT, got.size, got.why)
    assert said.endswith(f'no id could be read of it (it is a response (its "{key}"), whose id is the server\'s '
                         "own), so this answer's id is null"), said
