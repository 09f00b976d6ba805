"""A hostile review of stop 60's reader commits (conversions 116-119): where a new rule read real logs wrong more often
than the rule before it, the rule refined; each test fails on the code before its fix."""

from __future__ import annotations

import json

import pytest

from sam_model.data.sqlwords import sql_literals


@pytest.mark.parametrize("query, literals", [
    # PL/pgSQL (a function's parameter compared to a quoted column), as found in public repositories
    ('SELECT user_id FROM "User" u WHERE "Email" = email AND "user_password" = password__', None),
    ('SELECT * FROM users WHERE "Email" = email AND "user_password" = password__', None),
    ('SELECT * FROM posts p JOIN users u ON "authorId" = u.id WHERE u.id = 5', [5]),
    ("SELECT title FROM docs WHERE \"contentId\" = id AND lang = 'en'", ["en"]),
    ('SELECT * FROM users WHERE "Alice" = name AND "Bob" = other', None),  # the price: names, as before 119
    ('SELECT * FROM users WHERE "Alice" = name', None),
    ('SELECT * FROM "users" WHERE "Alice" = name AND city = "Paris"', None),  # FROM "users": names
    # a query writing its strings in double quotes where only a value stands (= "Paris", as it reads alone):
    # MySQL's, so "Alice" = name is its string too (all names until 2026-12-07, Paris too)
    ('SELECT * FROM users WHERE "Alice" = name AND city = "Paris"', ["Alice", "Paris"]),
    ('SELECT * FROM users WHERE "Alice" = name AND city LIKE "%Par%"', ["Alice", "Par"]),
    # but a join's ON compares columns: its quoted names are no MySQL strings, nor evidence of them (both read as
    # values on 2026-12-07, traced to any output saying postId)
    ('SELECT * FROM comments c JOIN posts p ON "postId" = p.id JOIN users u ON u.id = "authorId" WHERE p.id = 7',
     [7]),
    ('SELECT * FROM orders o JOIN users u ON "userId" = u.id WHERE u.created_at < "deletedAt"', None),
    ('SELECT * FROM posts p JOIN users u ON u.id = "authorId" WHERE "Alice" = name', None),
])
def test_a_quoted_name_compared_to_a_bare_column_stays_a_name(query, literals):
    """119 read a double-quoted token compared to a bare column after it as a MySQL string, for "Alice" = name: but
    PostgreSQL queries write a quoted camelCase name compared to a bare or qualified one (ON "userId" = u.id, WHERE
    "contentId" = id; public repositories hold many, and no MySQL value written first was found), which 119 read as
    literals, the names traced to any output saying them. A token shaped as a name stays a name there; one no name is
    shaped as ("alice@example.com" = email) is a string (tests/test_readers_leftovers_60.py)."""
    assert sql_literals(query) == literals


@pytest.mark.parametrize("said, item", [
    ("Ban users 123,456 from the channel.", "456"),
    ("Delete rows 212,345 from the sheet, they are duplicates.", "345"),
    ("Merge records 101,102 into one.", "102"),
])
def test_a_list_of_ids_after_people_rows_or_records_is_a_list(said, item):
    """118 read a number after any noun of counted things as a count, whatever its groups, for active users 123,456:
    but users, rows and records are listed by id (every 'users 123,456' public repositories hold is a list of user
    ids, --allowed-users 123,456), and a later call takes such an id (ban_user(456)), which 118 left said by no event.
    People are counted only after a word that says a count (active, total, ...); rows and records are listed as lines
    are; traffic and sizes (visitors, requests, ...) stay counts."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    assert says(norm(said), item)
    assert decide("ban_user", {"user_id": item}, said).labels == [0]


@pytest.mark.parametrize("said, value", [
    ("The dashboard shows active users 123,456 this week; log that figure.", 123456),
    ("Total customers 204,305 as of today, record it.", 204305),
    ("Visitors 204,305 came from search, record it.", 204305),
])
def test_a_count_of_people_after_a_word_saying_one_stays_a_number(said, value):
    """Guard (passes before): a count after active/total people or a traffic noun stays one number."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    assert decide("record_metric", {"value": value}, said).labels == [0]
    assert not says(norm(said), str(value)[3:])


@pytest.mark.parametrize("kept", [{"x": 1}, ["oops"], [{"name": "search", "args": {"q": "x"}}]])
def test_a_good_call_beside_a_cut_one_reads_where_the_kept_calls_are_no_openai_calls(kept, tmp_path):
    """116 read a LangChain ai message with a good call (tool_calls) beside a cut one (invalid_tool_calls) from
    additional_kwargs.tool_calls whatever they held: kept calls of no OpenAI shape refused the whole file ('tool
    call 0 has no function name', of a call that has one), where before the good call was read. Only calls in
    OpenAI's shape are read so; else the good ones, the cut one counted, as before."""
    from sam_model.data.transcripts import iter_transcript_events

    good = {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    cut = {"name": "write", "args": '{"a": ', "id": "c2", "error": "cut", "type": "invalid_tool_call"}
    conv = {"id": "c", "messages": [
        {"type": "human", "data": {"content": "find x"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [good], "invalid_tool_calls": [cut],
                                "additional_kwargs": {"tool_calls": kept}}},
        {"type": "tool", "data": {"content": "found", "tool_call_id": "c1"}}]}
    path = tmp_path / "lc.jsonl"
    path.write_text(json.dumps(conv) + "\n")
    events = list(iter_transcript_events(path))
    assert [e["kind"] for e in events] == ["user", "action", "result"]


@pytest.mark.parametrize("plus_used", [True, False])
def test_a_compare_model_named_as_a_baseline_is_refused_by_name(tmp_path, plus_used):
    """4207562 narrowed plus_used's check of method names to those ending in +used: a --compare model given through
    the API under a baseline's name (the CLI refuses it) then passed with plus_used, where it had been refused, and
    its results and the baseline's shared one key, one overwriting the other (so without plus_used too). Any name
    two methods would take is refused, named, in one line."""
    from test_evaluate import HashedBowRetriever, _fixture_log

    from sam_model.evaluation import evaluate

    log = tmp_path / "demo.jsonl.gz"
    _fixture_log(log)
    with pytest.raises(ValueError, match=r"^'recency' would name two methods .*rename that --compare model") as no:
        evaluate(log, tmp_path / "o", None, baselines=["recency"], compare={"recency": HashedBowRetriever()},
                 latency_queries=1, quiet=True, plus_used=plus_used)
    assert "\n" not in str(no.value)


def test_links_extended_in_place_stay_each_scopes_own(monkeypatch, tmp_path):
    """Guard (passes before): cbeb39a extends an open Claude Code turn's facts["links"] in place, so any list two
    turns share would take the other's lines: a failing add (the store down, no cap) leaves the links as they were,
    and two memories loaded from one save, or two scopes of one memory, share no list."""
    from test_format_claude_code import Session, text, tool_use

    from sam_model.memory import HashingEncoder, ScopedMemory

    def session(tag: str) -> list[dict]:
        s = Session()
        for k in range(3):
            s.user(f"Look up {tag}{k}.")
            s.respond(tool_use(f"t{k}", "get_reservation", {"reservation_id": f"{tag}{k}"}))
            s.result(f"t{k}", f"{tag}{k}: economy")
            s.respond(text("Economy."))
        return s.entries

    ann, bob = {"user_id": "ann", "run_id": "s1"}, {"user_id": "bob", "run_id": "s1"}
    a, b = session("A"), session("B")
    memory = ScopedMemory(HashingEncoder(16))
    for e in a[:8]:
        memory.add([e], **ann)
    for e in b[:8]:
        memory.add([e], **bob)
    turns = list(memory._open.values())
    assert len(turns) == 2 and turns[0].facts["links"] is not turns[1].facts["links"]
    memory.save(tmp_path / "m")
    one, two = (ScopedMemory.load(tmp_path / "m", HashingEncoder(16)) for _ in range(2))
    links = [list(t.facts["links"]) for t in two._open.values()]
    for e in a[8:]:
        one.add([e], **ann)
    assert [t.facts["links"] for t in two._open.values()] == links
    held = memory._open[ScopedMemory.episode_of(**ann)]
    before = list(held.facts["links"])
    monkeypatch.setattr(memory.store, "add", lambda *x, **k: (_ for _ in ()).throw(ValueError("store down")))
    with pytest.raises(ValueError, match="store down"):
        memory.add(a[8:], **ann)
    assert held.facts["links"] == before
