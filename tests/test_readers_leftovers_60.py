"""Stop 59's reader leftovers (its note's "Left" and final review): each fix's test fails on the code before it; the
guards beside them (a value replacing a streamed string, names that stay names, a refused add at the cap) hold what
must stay as it was."""

from __future__ import annotations

import json

import pytest
from test_format_gemini_stream import piece

from sam_model.data.formats import to_chat


class Counted(str):
    """A streamed piece that counts the characters each ``+`` joining it to the text before copies (``old + piece``
    tries ``Counted.__radd__`` first, a subclass of str overriding it): how the reader's cost grows, without timing."""

    copied = 0

    def __radd__(self, other: str) -> str:
        Counted.copied += len(other) + len(self)
        return str.__add__(other, str(self))


def test_a_long_streamed_string_is_joined_once_not_piece_by_piece():
    """Gemini/Vertex streamed string arguments were appended piece by piece (old + piece), each piece copying the
    text so far: quadratic in the pieces, 20,000 chunks of 6 characters copied ~1.2 * 10^9 characters. The pieces are
    kept and joined once when the call ends: the same arguments, no characters copied by +."""
    n = 20_000
    texts = [f"{k:05d}|" for k in range(n)]
    Counted.copied = 0
    contents = [{"role": "user", "parts": [{"text": "Write it."}]}, piece(name="write"),
                piece([{"jsonPath": "$.path", "stringValue": "a.py"}]),
                *(piece([{"jsonPath": "$.text", "stringValue": Counted(t)}]) for t in texts),
                piece([{"jsonPath": "$.mode", "numberValue": 6.0}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"path": "a.py", "text": "".join(texts), "mode": 6}
    assert type(call["function"]["arguments"]["text"]) is str
    assert Counted.copied <= len("".join(texts))  # linear: at most the text once (quadratic before: ~n^2 / 2 * 6)


def test_a_streamed_string_replaced_by_a_value_or_whole_args_keeps_the_last():
    """What a piece gives whole at a streamed string's path replaces it, as before (the pieces are not joined
    after it): a number at the path, then a string streamed again from scratch; args given whole by a piece."""
    contents = [{"role": "user", "parts": [{"text": "Go."}]}, piece(name="go"),
                piece([{"jsonPath": "$.a", "stringValue": "x"}, {"jsonPath": "$.a", "stringValue": "y"},
                       {"jsonPath": "$.a", "numberValue": 3.0}, {"jsonPath": "$.a", "stringValue": "z"},
                       {"jsonPath": "$.b", "stringValue": "p"}, {"jsonPath": "$.b", "stringValue": "q"}]),
                piece(args={"b": "whole"}),
                piece([{"jsonPath": "$.b", "stringValue": "+r"}, {"jsonPath": "$.c[0]", "stringValue": "l"},
                       {"jsonPath": "$.c[0]", "stringValue": "m"}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"a": "z", "b": "whole+r", "c": ["lm"]}


GOOD_ARGS = {"account_id": "BL-175954", "day": "Monday"}
CUT_ARGS = '{"account_id": "BL-175954", "day": "Mon'


def _good_and_cut():
    """ChatOpenAI's AI message whose second call was cut short: the first parsed (tool_calls), the second not
    (invalid_tool_calls), both kept raw in additional_kwargs.tool_calls, in the model's order."""
    from langchain_core.messages import AIMessage

    raw = [{"id": f"c{k}", "type": "function", "function": {"name": "book", "arguments": a}}
           for k, a in ((1, json.dumps(GOOD_ARGS)), (2, CUT_ARGS))]
    return AIMessage(content="", additional_kwargs={"tool_calls": raw},
                     tool_calls=[{"name": "book", "args": GOOD_ARGS, "id": "c1", "type": "tool_call"}],
                     invalid_tool_calls=[{"type": "invalid_tool_call", "name": "book", "args": CUT_ARGS, "id": "c2",
                                          "error": None}])


def test_a_good_call_beside_a_cut_one_is_read_with_it_from_a_dump():
    """A LangChain message with one call that parsed and one cut short was read as the good call alone, the cut one
    counted: both are read now, from the raw calls the integration kept, the cut one's arguments as their text, as
    a lone cut call is read (and as the OpenAI reader reads the same turn)."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from langchain_core.messages import HumanMessage, messages_to_dict

    for dump in ([HumanMessage("Monday").model_dump(), _good_and_cut().model_dump()],
                 messages_to_dict([HumanMessage("Monday"), _good_and_cut()])):
        calls = to_chat(dump, "x").messages[-1]["tool_calls"]
        assert [(c["id"], c["function"]["arguments"]) for c in calls] == [("c1", json.dumps(GOOD_ARGS)), ("c2", CUT_ARGS)]


def test_a_good_call_beside_a_cut_one_is_refused_alike_as_object_and_dump():
    """The live path (state_from_messages) read the object as its good call alone and returned a state: the object
    and its dump are refused alike now, in one line naming the cut call's field, as a lone cut call is."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from langchain_core.messages import HumanMessage

    from sam_model.integrations.langchain import state_from_messages

    ai = _good_and_cut()
    for messages in ([HumanMessage("Monday"), ai], [HumanMessage("Monday").model_dump(), ai.model_dump()]):
        with pytest.raises(ValueError) as refused:
            state_from_messages(messages)
        text = str(refused.value)
        assert text.startswith("messages[1].additional_kwargs.tool_calls[1].function.arguments: not valid JSON"), text
        assert "\n" not in text


def test_requests_whose_ids_loop_are_read_alone_and_reported_in_one_line(tmp_path):
    """An app that makes up its ids can write a loop (a continues b, b continues a, or a request its own id): no
    first request starts it, so each such line was read as a conversation of its own with nothing said why. They
    are still all read (nothing lost), and the report names how many, the first line and the ids followed."""
    from test_response_chains import conversation, convert, requests, write

    lines = requests(conversation(), "k")
    lines[0]["previous_response_id"] = lines[-1]["id"]  # the first request made to continue the last: a loop
    alone = requests(conversation(), "m")[:1]
    alone[0]["previous_response_id"] = alone[0]["id"]  # a request its own id
    path = write(tmp_path / "loop.jsonl.gz", [*lines, *alone])
    events, report = convert(path)
    assert report.conversations == len(lines) + 1  # each read alone, as before: none dropped
    assert report.looping[:2] == [f"{path}:1, ids resp_k0 -> resp_k5 -> resp_k4 -> resp_k3 -> resp_k2 -> resp_k1 -> "
                                  "resp_k0", f"{path}:2, ids resp_k1 -> resp_k0 -> resp_k5 -> resp_k4 -> resp_k3 -> "
                                  "resp_k2 -> resp_k1"]
    assert report.looping[-1] == f"{path}:7, ids resp_m0 -> resp_m0" and len(report.looping) == 7
    (note,) = [n for n in report.lines() if "round a loop" in n]
    assert note.startswith("7 requests read as conversations of their own: following previous_response_id from each "
                           f"leads round a loop of ids, none of them a first request (the first at {path}:1, ids "
                           "resp_k0 -> ")
    assert "\n" not in note
    _, clean = convert(write(tmp_path / "clean.jsonl.gz", requests(conversation(), "k")))
    assert clean.conversations == 1 and not clean.looping


def test_plus_used_names_the_clashing_method(tmp_path):
    """evaluate(plus_used=True) with a --compare model named like another's +used ranking listed every method and
    said 'a method name ending in +used is taken', not which: the error names the clash and whose +used it is (and
    still lists the methods), in one line."""
    from test_evaluate import HashedBowRetriever, _fixture_log

    from sam_model.evaluation import evaluate

    log = tmp_path / "demo.jsonl.gz"
    _fixture_log(log)
    compare = {"reuse": HashedBowRetriever(), "reuse+used": HashedBowRetriever(), "other": HashedBowRetriever()}
    with pytest.raises(ValueError) as refused:
        evaluate(log, tmp_path / "o", None, baselines=["recency"], compare=compare, latency_queries=1, quiet=True,
                 plus_used=True)
    text = str(refused.value)
    assert text.startswith("plus_used: 'reuse+used' would name two methods, a --compare model and the +used ranking "
                           "of 'reuse'; rename that --compare model"), text
    assert ("(the methods: recency, reuse, reuse+used, other, reuse+used, reuse+used+used, other+used, "
            "reuse+used-latest, reuse+used+used-latest, other+used-latest, reuse+used-needed, reuse+used+used-needed, "
            "other+used-needed)") in text and "\n" not in text


def test_a_claude_code_sessions_links_are_extended_not_copied_at_each_turn():
    """An open Claude Code turn keeps the links of the lines earlier adds stored (facts["links"], what tells a rewind
    of them): each closed turn copied the whole list into a new one, quadratic in a session added a line at a time.
    The list is extended in place: one list over the session, the same links, the same memories as one add."""
    from test_format_claude_code import Session, text, tool_use

    from sam_model.data.formats import claude_code
    from sam_model.memory import HashingEncoder, ScopedMemory

    ann = {"user_id": "ann", "run_id": "s1"}
    s = Session()
    for k in range(30):
        s.user(f"Look up reservation R{k:04d}.")
        s.respond(tool_use(f"t{k}", "get_reservation", {"reservation_id": f"R{k:04d}"}))
        s.result(f"t{k}", f"R{k:04d}: economy")
        s.respond(text(f"R{k:04d} is an economy seat."))
    one, whole = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16))
    lists: list[list] = []  # each list object facts["links"] was (kept alive, so no two share an id)
    for e in s.entries:
        one.add([e], **ann)
        (turn,) = one._open.values()
        if "links" in turn.facts and not any(x is turn.facts["links"] for x in lists):
            lists.append(turn.facts["links"])
    whole.add(s.entries, **ann)
    assert len(lists) == 1  # before: a new list at each of the 119 closed turns
    (turn,) = one._open.values()
    n = len(turn.facts["links"])
    assert n >= len(s.entries) - 4 and turn.facts["links"] == [claude_code.link(e) for e in s.entries[:n]]
    said = [[r["memory"] for r in m.get_all(**ann, limit=None)["results"]] for m in (one, whole)]
    assert said[0] == said[1] and len(said[0]) >= 4 * 30


def test_a_refused_add_at_the_open_turns_cap_leaves_its_links_as_they_were(monkeypatch):
    """The turn an add closes at the cap (live.over) is the scope's again if the add is refused: its links list, now
    extended in place, is copied there, so a refused add does not leave the open turn's lines among its links."""
    from test_format_claude_code import Session, text, tool_use

    from sam_model.memory import HashingEncoder, ScopedMemory, live

    ann = {"user_id": "ann", "run_id": "s1"}
    s = Session()
    s.user("Look up R0001.")
    s.respond(tool_use("t1", "get_reservation", {"reservation_id": "R0001"}))
    s.result("t1", "R0001: economy")
    s.respond(text("Economy."))
    s.user("And R0002?")
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(s.entries[:3], **ann)
    memory.add(s.entries[3:4], **ann)
    (turn,) = memory._open.values()
    before = list(turn.facts["links"])
    monkeypatch.setattr(live, "MAX_OPEN_LINES", 0)  # the next add closes the open turn at the cap
    monkeypatch.setattr(memory.store, "add", lambda *a, **k: (_ for _ in ()).throw(ValueError("store down")))
    with pytest.raises(ValueError, match="store down"):
        memory.add(s.entries[4:], **ann)
    (kept,) = memory._open.values()
    assert kept is turn and kept.facts["links"] == before


def test_a_streamed_path_with_a_hyphenated_key_is_assembled():
    """A jsonPath of a key with a hyphen in shorthand ($.check-in, RFC 9535's $['check-in']) was refused as 'not a
    path of names and indices': google-adk reads the name up to the next '.', so such a stream is the call its
    args say. Both spellings are one key; a name still starts with a letter or '_' ($.-x is refused)."""
    from sam_model.data.formats.base import TranscriptFormatError

    contents = [{"role": "user", "parts": [{"text": "Book it."}]}, piece(name="book"),
                piece([{"jsonPath": "$.check-in", "stringValue": "2026-"}, {"jsonPath": "$['check-in']",
                                                                            "stringValue": "12-06"}]),
                piece([{"jsonPath": "$.guest.first-name", "stringValue": "Ann"},
                       {"jsonPath": "$.rooms[0].bed-type", "stringValue": "king"}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"check-in": "2026-12-06", "guest": {"first-name": "Ann"},
                                             "rooms": [{"bed-type": "king"}]}
    bad = [*contents[:2], piece([{"jsonPath": "$.-x", "stringValue": "y"}], more=False)]
    with pytest.raises(TranscriptFormatError, match=r"jsonPath' '\$\.-x' is not a path of names and indices"):
        to_chat(bad, "x")


@pytest.mark.parametrize("said, value", [
    ("The dashboard shows active users 123,456 this week; log that figure.", 123456),
    ("Visitors 204,305 came from search, record it.", 204305),
    ("Table: sessions 120,455 | requests 845,210", 845210),
])
def test_a_count_after_a_noun_of_counted_things_is_one_number_whatever_its_groups(said, value):
    """A count of list-like groups after its noun (users 123,456: every group three digits, none 000) was read as a
    list of 123 and 456, the count said by no event, where the rule's intent is that counts after their noun stay
    numbers (active users 12,345). A noun of what is counted (visitors, sessions, requests, ...; people after a word
    that says a count, active users: tests/test_readers_review_60.py) is no list's."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    d = decide("record_metric", {"value": value}, said)
    assert d.labels == [0] and d.needed
    assert not says(norm(said), str(value)[3:])  # no item of a list inside it
    listed = decide("get_order_details", {"order_id": "456"}, "Please check orders 123,456 and 789.")
    assert listed.labels == [0]  # a list after a noun of things listed by id, as before
    assert says(norm("The linter flags lines 212,345 of app.py."), "345")  # line numbers: listed


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM users WHERE "Alice Smith" = name', ["Alice Smith"]),
    ('SELECT * FROM users u WHERE "acme corp" <> u.tenant AND status = "open" AND id > 7', ["acme corp", 7]),
    ('SELECT * FROM users WHERE "alice@example.com" = email AND city = "Paris"', ["alice@example.com", "Paris"]),
])
def test_a_mysql_string_before_its_column_is_a_string(query, literals):
    """MySQL lets a comparison name its value first ("alice@example.com" = email): read as a PostgreSQL name before
    an operator, it made every double-quoted token of the query a name, the user's value no literal. Before a
    comparison with a bare column a token no name is shaped as is a string (one shaped as a name stays a name there,
    tests/test_readers_review_60.py; a state word still the schema's: status = "open")."""
    from sam_model.data.sqlwords import sql_literals

    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM t WHERE "status" = \'open\' OR "total" > 100', [100]),  # a value after: a name before it
    ('SELECT * FROM orders WHERE "shippedAt" = "deliveredAt" AND customer_id = 42', [42]),  # a quoted name after
    ('SELECT * FROM "users" WHERE "Alice" = name', None),  # a query quoting its names (FROM "users"): names
    ('SELECT * FROM t WHERE "x" = NULL AND "y" = NOW()', None),  # NULL and a function's call are no column
])
def test_a_name_before_a_value_or_a_quoted_name_stays_a_name(query, literals):
    """Guard (passes before): PostgreSQL's quoted names before a value, a quoted name or NULL stay names."""
    from sam_model.data.sqlwords import sql_literals

    assert sql_literals(query) == literals
