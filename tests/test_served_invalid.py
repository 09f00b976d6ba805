"""A body or query parameter pydantic refuses is a 422 of one line a problem, naming the field and what to do, and
never echoing the input (sam_model.serve.invalid).

Found by a walkthrough as a telecom support agent: an add of 1,001 messages (838 KB) was answered with FastAPI's own
422, 1.67 MB, the messages echoed twice (once for each of ``messages``' types), and its first line was "Input should
be a valid string", the branch of the type the body never took."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from serving import KEYS  # noqa: E402
from test_served_session_lines import open_tenants  # noqa: E402

from sam_model.limits import MAX_ADD_ITEMS  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402

ACME = {"X-API-Key": KEYS["acme"]}
MARK = "Farid's router serial RX-55017"  # in every bad body: no answer may hold it


@pytest.fixture
def http(tmp_path):
    tenants = open_tenants(tmp_path)
    yield TestClient(create_app(tenants))
    tenants.close()


def test_an_add_of_too_many_messages_is_one_line_naming_the_limit(http):
    messages = [{"role": "user", "content": f"{MARK} " + "x" * 800}] * (MAX_ADD_ITEMS + 1)
    r = http.post("/v1/memories", headers=ACME, json={"messages": messages, "user_id": "farid"})
    assert r.status_code == 422
    assert r.json() == {"detail": f"messages holds {MAX_ADD_ITEMS + 1} items, more than the {MAX_ADD_ITEMS} one "
                                  "request takes: send them in several requests, in order"}
    assert len(r.content) < 300 and MARK not in r.text


@pytest.mark.parametrize("url, body, says", [
    ("/v1/memories", {"messages": 5, "user_id": "farid"}, ["messages must be a string or a list, got an integer"]),
    ("/v1/memories", {"messages": [MARK, {"role": "user", "content": MARK}], "user_id": "farid"},
     ["messages[0] must be an object, got a string"]),
    ("/v1/memories", {"messages": MARK, "user_id": "farid/bot", "agnet_id": MARK},
     ["user_id must be a non-empty string without '/' of at most 256 characters, got 'farid/bot'",
      "agnet_id is not a field of this call: leave it out or correct its name (agent_id, messages, metadata, run_id, "
      "user_id)"]),
    ("/v1/memories", {"user_id": "farid"}, ["messages is missing: give it"]),
    ("/v1/memories/search", {"query": MARK, "user_id": "farid", "call": MARK},
     ["call must be an object or a list, got a string"]),
    ("/v1/memories/search", {"query": MARK, "user_id": "", "limit": 0, "threshold": MARK},
     ["user_id must be a non-empty string without '/' of at most 256 characters, got ''",
      "limit must be at least 1, got a smaller one", "threshold must be a number, got a string"]),
    ("/v1/memories/search", {"query": MARK * 4000, "user_id": "farid"},
     ["query is longer than 100000 characters: shorten it"]),
    ("/v1/memories/search", [MARK], ["the request body must be a JSON object, got a list"]),
])
def test_each_problem_is_one_line_naming_its_field(http, url, body, says):
    r = http.post(url, headers=ACME, json=body)
    assert r.status_code == 422 and r.json()["detail"].split("\n") == says, r.text
    assert MARK not in r.text


def test_broken_json_and_bad_query_parameters_are_named(http):
    r = http.post("/v1/memories/search", headers={**ACME, "Content-Type": "application/json"},
                  content=f'{{"query": "{MARK}", '.encode())
    assert r.status_code == 422 and r.json()["detail"].startswith("the request body is not valid JSON at character")
    assert MARK not in r.text
    r = http.get("/v1/memories", headers=ACME, params={"user_id": "farid", "limit": MARK, "runId": MARK})
    assert r.status_code == 422 and r.json()["detail"].split("\n") == [
        "query parameter limit must be an integer, got text that is not one",
        "runId is not a query parameter of this call: leave it out or correct its name (agent_id, limit, run_id, "
        "user_id)"], r.text
    assert MARK not in r.text


def test_many_problems_are_cut_to_a_few_lines(http):
    r = http.post("/v1/memories", headers=ACME, json={"messages": [7] * 50, "user_id": "farid"})
    lines = r.json()["detail"].split("\n")
    assert r.status_code == 422 and len(lines) == 6 and lines[-1] == "(and 45 more)", r.text
    assert lines[0] == "messages[0] must be an object, got an integer"


def test_an_unknown_field_of_any_length_is_named_in_a_short_line(http):
    r = http.post("/v1/memories/search", headers=ACME, json={"query": "plan", "user_id": "farid", MARK * 3000: 1})
    assert r.status_code == 422 and len(r.content) < 400, r.text
    assert r.json()["detail"].startswith(f"{(MARK * 3000)[:57]}... is not a field of this call: leave it out"), r.text


@pytest.mark.parametrize("raw, says", [
    # bytes that are no UTF-8 (a client sending Latin-1): FastAPI's own 400 'There was an error parsing the body'
    (f'{{"messages": "{MARK} caf\xe9", "user_id": "farid"}}'.encode("latin-1"),
     "the request body is not UTF-8 (byte 0xe9 at position {at}): send JSON encoded as UTF-8"),
    # nested past what Python's JSON reader takes (a RecursionError inside it)
    (b'{"messages": "x", "user_id": "farid", "metadata": ' + b'[' * 100_000 + b']' * 100_000 + b'}',
     "the request body nests objects or lists too deep to read: flatten it (metadata takes 32 levels at most)"),
    # a number of more digits than Python turns into an int
    (b'{"messages": "x", "user_id": "farid", "metadata": {"n": ' + b'9' * 5000 + b'}}',
     "the request body holds a number of more than 4300 digits, which is read as no number: send it as a string"),
])
def test_a_body_that_cannot_be_read_is_a_422_saying_why(http, raw, says):
    """Each was FastAPI's 400 'There was an error parsing the body', naming neither the problem nor what to do."""
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json"}, content=raw)
    assert (r.status_code, r.json()) == (422, {"detail": says.format(at=raw.find(b"\xe9"))}), r.text
    assert http.get("/v1/memories", headers=ACME, params={"user_id": "farid"}).json() == {"results": []}


@pytest.mark.parametrize("raw, key", [
    ('{"messages": "x", "user_id": "farid", "user_id": "bob"}', "user_id"),
    ('{"messages": [{"role": "user", "content": "a", "role": "tool"}], "user_id": "farid"}', "role"),
])
def test_a_key_given_twice_in_a_body_is_refused_not_read_as_the_last(http, raw, key):
    """Python's JSON reader kept the last of two values: '{"user_id": "farid", "user_id": "bob"}' stored the memory
    as bob's, where a proxy or a log reading the first saw farid's (a query parameter given twice is refused too)."""
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json"}, content=raw.encode())
    assert (r.status_code, r.json()) == (422, {"detail": f"the request body is refused: the key {key!r} is given twice "
                                                         "in one object (keep one)"}), r.text
    for user in ("farid", "bob"):
        assert http.get("/v1/memories", headers=ACME, params={"user_id": user}).json() == {"results": []}


def test_a_key_given_twice_in_an_mcp_call_over_http_is_refused_not_read_as_the_last(tmp_path):
    """The MCP tools at /mcp read their JSON-RPC body by the SDK (pydantic), which kept the last of two values too:
    remember(user_id="alice", user_id="bob") stored bob's memory."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from test_isolation_keys import AS, JSON_RPC, client, open_tenants

    tenants = open_tenants(tmp_path)
    with client(tenants) as mcp_http:
        raw = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": '
               '{"text": "x", "user_id": "alice", "user_id": "bob"}}}')
        r = mcp_http.post("/mcp/", headers={**AS["admin"], **JSON_RPC, "Content-Type": "application/json"},
                          content=raw.encode())
        assert (r.status_code, r.json()) == (400, {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32700, "message": "Parse error: the key 'user_id' is given twice in one object (keep one)"}})
        r = mcp_http.post("/mcp/", headers={**AS["admin"], **JSON_RPC}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {
                "text": "x", "user_id": "alice"}}})
        assert r.status_code == 200 and not r.json()["result"]["isError"], r.text
    assert [m["user_id"] for m in tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"]] == ["alice"]
    tenants.close()


def test_an_mcp_body_that_is_no_utf8_is_refused_saying_what_to_send(tmp_path):
    """Found by a walkthrough: a remember over /mcp holding a Latin-1 'café' was answered by the SDK's "Parse error:
    invalid unicode code point at line 1 column 99", which names no byte and says nothing of what to send. Now it
    is the HTTP routes' line, as a JSON-RPC parse error, and nothing is stored."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from test_isolation_keys import AS, JSON_RPC, client, open_tenants

    tenants = open_tenants(tmp_path)
    raw = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": '
           '{"text": "caf\xe9", "user_id": "alice"}}}').encode("latin-1")
    with client(tenants) as mcp_http:
        r = mcp_http.post("/mcp/", headers={**AS["admin"], **JSON_RPC, "Content-Type": "application/json"},
                          content=raw)
    at = raw.index(b"\xe9")
    assert (r.status_code, r.json()) == (400, {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": f"Parse error: the request body is not UTF-8 (byte 0xe9 at position {at}): send "
                                   "JSON encoded as UTF-8"}}), r.text
    assert tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"] == []
    tenants.close()


def test_an_mcp_body_holding_a_lone_surrogate_is_refused_naming_it(tmp_path):
    """Found by a walkthrough: a remember over /mcp whose text held a lone surrogate (valid JSON, "\\ud800", no
    Unicode text) was answered by the SDK's "Parse error: unexpected end of hex escape at line 1 column 102", which
    names neither the surrogate nor the fix. Now it is named by its place in the message, as the HTTP routes name a
    field holding one, and nothing is stored; an emoji's pair of halves is text, and stored."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from test_isolation_keys import AS, JSON_RPC, client, open_tenants

    tenants = open_tenants(tmp_path)
    call = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": '
            '{"text": "Jos%s flies", "user_id": "alice"}}}')
    with client(tenants) as mcp_http:
        r = mcp_http.post("/mcp/", headers={**AS["admin"], **JSON_RPC, "Content-Type": "application/json"},
                          content=(call % "\\ud800").encode())
        assert (r.status_code, r.json()) == (400, {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32700, "message": "Parse error: params.arguments.text holds a lone UTF-16 surrogate ('\\ud800'), "
                                       "which is no Unicode text: send valid UTF-8 (a JSON \\ud83d must be followed "
                                       "by its low half, as in an emoji)"}}), r.text
        assert tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"] == []
        r = mcp_http.post("/mcp/", headers={**AS["admin"], **JSON_RPC, "Content-Type": "application/json"},
                          content=(call % "\\ud83d\\ude00").encode())
        assert r.status_code == 200 and not r.json()["result"]["isError"], r.text
    assert [m["memory"] for m in tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"]] == [
        "Jos\U0001f600 flies"]
    tenants.close()


@pytest.mark.parametrize("method, url, says", [
    ("GET", "/v1/memories?user_id=Jos%E8", "query parameter user_id is not UTF-8 (byte 0xe8 at position 3)"),
    ("DELETE", "/v1/memories?user_id=Jos%E8", "query parameter user_id is not UTF-8 (byte 0xe8 at position 3)"),
    ("GET", "/v1/memories/Jos%E8%230", "the path is not UTF-8 (byte 0xe8 at position 16)"),
    ("GET", "/v1/history/Jos%E8%230", "the path is not UTF-8 (byte 0xe8 at position 15)"),
])
def test_query_parameters_and_ids_that_are_no_utf8_are_refused_not_read_as_another_scope(http, method, url, says):
    """Bytes of a query parameter or a path that are no UTF-8 were read with U+FFFD in their place, so every such
    byte was one character: a Latin-1 client's ?user_id=Jos%E8 (Josè) listed and deleted the memories of the user
    'Jos\\ufffd', as would Jos%E9 (José) or any other. Refused in one line naming the parameter and what to send."""
    r = http.post("/v1/memories", headers=ACME, json={"messages": f"{MARK} of another user", "user_id": "Jos\ufffd"})
    assert r.status_code == 200, r.text
    r = http.request(method, url, headers=ACME)
    assert (r.status_code, r.json()) == (422, {"detail": f"{says}: percent-encode the UTF-8 bytes of each character "
                                                         "(é is %C3%A9)"}), r.text
    assert [m["memory"] for m in http.get("/v1/memories", headers=ACME, params={"user_id": "Jos\ufffd"}).json()[
        "results"]] == [f"{MARK} of another user"]


def test_a_tool_calls_argument_no_json_number_holds_is_named_as_the_callers_field(http):
    """A call's arguments (an object) holding 1e400, read as infinity, were refused by the store as 'add(...):0:
    'state.constraints.x' must be a finite number', naming a field no caller sends; in-process NaN and infinity
    alike. One line naming the message, the call and the argument, before anything is stored."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    raw = ('{"user_id": "farid", "messages": [{"role": "user", "content": "book it"}, {"role": "assistant", '
           '"content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", '
           '"arguments": {"seats": 2, "fare": {"max": 1e400}}}}]}]}')
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json"}, content=raw.encode())
    assert (r.status_code, r.json()) == (422, {"detail": "messages[1]: tool call 0 ('book'), argument fare.max, is inf, "
                                                         "which is no JSON number: send a finite number, or the "
                                                         "number as a string"}), r.text
    assert http.get("/v1/memories", headers=ACME, params={"user_id": "farid"}).json() == {"results": []}
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^data\[0\]: tool call 0 \('book'\), argument seats\[1\], is nan, "):
        memory.add([{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "book", "arguments": {"seats": [1, float("nan")]}}}]}], user_id="farid")
    assert memory.get_all(user_id="farid") == {"results": []}


@pytest.mark.parametrize("event, says", [
    ({"kind": 5, "text": "x"}, "field 'kind' must be a non-empty string"),
    ({"kind": "user", "text": "x", "state": {"phase": "plan", "constraints": {"budget": float("inf")}}},
     "'state.constraints.budget' must be a finite number, got inf"),
    ({"kind": "user", "text": "x", "step": -1}, "field 'step' must be >= 0, got -1"),
])
def test_a_bad_agent_log_event_is_named_by_its_place_in_the_add(http, event, says):
    """An event dict the event reader refused was named 'add(...):2: ...': ScopedMemory.add's name and the event's
    count from 1, neither the HTTP field (messages[1]) nor the in-process argument (data[1])."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = [{"kind": "user", "text": f"{MARK} first"}, event]
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json"},
                  content=json.dumps({"messages": events, "user_id": "farid"}).encode())
    assert (r.status_code, r.json()) == (422, {"detail": f"messages[1]: {says}"}), r.text
    assert MARK not in r.text and http.get("/v1/memories", headers=ACME, params={"user_id": "farid"}).json() == {
        "results": []}
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^" + re.escape(f"data[1]: {says}") + "$"):
        memory.add(events, user_id="farid")
    assert memory.get_all(user_id="farid") == {"results": []}


@pytest.mark.parametrize("messages, says", [
    ([{"kind": "user", "text": f"{MARK} first"}, {"text": "no kind"}],
     "[1]: give chat messages (dicts with 'role'), Events or event dicts (with 'kind' and 'text'), not a mix; got "
     "an object without 'kind'"),
    ([{"role": "user", "content": f"{MARK} first"}, {"kind": "user", "text": "an event"}],
     "[1]: give chat messages (dicts with 'role'), Events or event dicts (with 'kind' and 'text'), not a mix: "
     "the first is a chat message, this one an object without 'role'"),
])
def test_an_add_mixing_events_and_other_items_names_the_item_by_its_place(http, messages, says):
    """Beside an event the reader refused (messages[1]), an item that is no event in an add of events, or no chat
    message in an add of messages, was named 'add(...) item 1', ScopedMemory.add's name, over HTTP as in-process."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    r = http.post("/v1/memories", headers=ACME, json={"messages": messages, "user_id": "farid"})
    assert (r.status_code, r.json()) == (422, {"detail": f"messages{says}"}), r.text
    assert http.get("/v1/memories", headers=ACME, params={"user_id": "farid"}).json() == {"results": []}
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(TypeError, match="^" + re.escape(f"data{says}") + "$"):
        memory.add(messages, user_id="farid")


def test_one_event_dict_added_alone_is_named_as_the_argument():
    """An event dict given as the add's data (not in a list) was named 'data[0]', an item of a list never given."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^data: field 'kind' must be a non-empty string$"):
        memory.add({"kind": 5, "text": "x"}, user_id="farid")
    with pytest.raises(ValueError, match=r"^data: an Event's step must be an integer from 0 to "):
        from sam_model.data.schema import Event
        memory.add(Event(episode_id="e", step=-1, kind="user", text="x"), user_id="farid")
    assert memory.get_all(user_id="farid") == {"results": []}


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate, gzip"])
def test_a_compressed_body_is_named_as_compressed_not_as_no_utf8(http, coding):
    """A body sent with Content-Encoding (a client or proxy gzipping its requests) was answered 'the request body is
    not UTF-8 (byte 0x8b at position 1): send JSON encoded as UTF-8': the client had, then compressed it. The line
    names the coding and what to send; nothing is stored."""
    import gzip

    raw = gzip.compress(json.dumps({"messages": MARK, "user_id": "farid"}).encode())
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json", "Content-Encoding": coding},
                  content=raw)
    assert (r.status_code, r.json()) == (415, {"detail": f"the request body is compressed (Content-Encoding {coding}), "
                                                         "which this server does not read: send it uncompressed"}), r.text
    assert http.get("/v1/memories", headers=ACME, params={"user_id": "farid"}).json() == {"results": []}
    r = http.post("/v1/memories", headers={**ACME, "Content-Type": "application/json", "Content-Encoding": "identity"},
                  content=json.dumps({"messages": MARK, "user_id": "farid"}).encode())
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("method, url", [
    ("GET", "/v1/memories?user_id=Jos%E8"), ("DELETE", "/v1/memories?user_id=Jos%E8"),
    ("GET", "/v1/memories/Jos%E8%230"), ("GET", "/v1/memories?user_id=mia&user_id=bob"),
    ("PUT", "/v1/memories/Jos%E8%230"), ("GET", "/v1/history/x?user_id=mia&user_id=bob"),
])
def test_a_call_without_a_key_is_a_401_before_its_query_is_judged(http, method, url):
    """The checks of query parameters and paths (once, utf8) ran before the key's: a caller with no key was told
    what was wrong with its query (422), where every call but /health is a 401 without a known key."""
    r = http.request(method, url, **({"json": {"data": "x"}} if method == "PUT" else {}))
    assert (r.status_code, r.json()) == (401, {"detail": "missing or unknown API key: send 'Authorization: Bearer "
                                                         "<key>' or 'X-API-Key: <key>'"}), r.text
