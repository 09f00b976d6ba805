"""An OpenAI Agents SDK SQLiteSession database given to sam-data transcripts: each session a conversation.

The items are a real run's (openai-agents 0.24.0, a scripted Model: a failing tool call, a good one, a handoff as
a function call and the new agent's answer; tests/fixtures/openai_agents_items.json), stored as SQLiteSession stores
them (its schema copied here so the test needs no agents install). Before, the file was refused as "an SQLite
database without an 'events' table, so no Google ADK session database".
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sam_model.data.transcripts import iter_transcript_events, main

ITEMS = json.loads((Path(__file__).parent / "fixtures" / "openai_agents_items.json").read_text())
SCHEMA = ("CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
          " updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
          "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message_data "
          "TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (session_id) REFERENCES "
          "agent_sessions (session_id) ON DELETE CASCADE)")


def _database(path: Path, sessions: dict[str, list[dict]]) -> Path:
    with sqlite3.connect(path) as con:
        for statement in SCHEMA:
            con.execute(statement)
        # two sessions' rows interleaved, as two users' turns are: each is rebuilt by its own rows, in id order
        for sid in sessions:
            con.execute("INSERT INTO agent_sessions (session_id) VALUES (?)", (sid,))
        rows = [(sid, item) for i in range(max(map(len, sessions.values())))
                for sid, items in sessions.items() if i < len(items) for item in [items[i]]]
        con.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                        [(sid, json.dumps(item)) for sid, item in rows])
    con.close()
    return path


def test_each_session_of_the_database_is_a_conversation_read_as_its_items(tmp_path):
    bob = [{"content": "Hi, I am Bob.", "role": "user"},
           {"id": "msg_9", "content": [{"annotations": [], "text": "Hello Bob.", "type": "output_text"}],
            "role": "assistant", "status": "completed", "type": "message"}]
    db = _database(tmp_path / "sessions.db", {"conv-1": ITEMS, "conv-2": bob})
    events = list(iter_transcript_events(db))
    line = tmp_path / "items.jsonl"
    line.write_text(json.dumps({"id": "conv-1", "messages": ITEMS}) + "\n")
    assert [e for e in events if e["episode_id"] == "conv-1"] == list(iter_transcript_events(line))
    texts = [(e["episode_id"], e["kind"], e["text"]) for e in events]
    assert ("conv-1", "action", "CALL transfer_to_refunds()") in texts
    assert ("conv-1", "result", "lookup_order: order 42: shipped") in texts
    assert [t for t in texts if t[0] == "conv-2"][0] == ("conv-2", "user", "Hi, I am Bob.")
    assert main([str(db), str(tmp_path / "out.jsonl")]) == 0


def test_a_bad_row_fails_its_session_alone_naming_the_row(tmp_path, capsys):
    db = _database(tmp_path / "sessions.db", {"conv-1": ITEMS, "conv-2": [{"content": "Hi", "role": "user"}]})
    with sqlite3.connect(db) as con:
        con.execute("UPDATE agent_messages SET message_data = '[1]' WHERE session_id = 'conv-2'")
    con.close()
    assert main([str(db), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "session conv-2" in err and "message_data is list" in err, err
    assert main([str(db), str(tmp_path / "o.jsonl"), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in (tmp_path / "o.jsonl").read_text().splitlines()} == {"conv-1"}


def test_a_tool_that_raised_reads_as_failed(tmp_path):
    """The SDK answers a raising tool with a fixed text that does not start with "error" and flags nothing: the
    state after it said "lookup_order: ok"."""
    line = tmp_path / "items.jsonl"
    line.write_text(json.dumps({"id": "conv-1", "messages": ITEMS}) + "\n")
    events = list(iter_transcript_events(line))
    failed = next(e for e in events if e["kind"] == "result" and "An error occurred" in e["text"])
    assert failed["state"]["last_action_result"].startswith("lookup_order: error"), failed["state"]
    ok = next(e for e in events if e["text"] == "lookup_order: order 42: shipped")
    assert ok["state"]["last_action_result"] == "lookup_order: ok"


def test_a_json_of_the_items_alone_says_how_to_write_them(tmp_path, capsys):
    """result.to_input_list() dumped as it is: each item was "expected a tau-bench trajectory ... (got an object
    with keys 'content', 'role')", which did not say the file is one conversation's messages."""
    bare = tmp_path / "items.json"
    bare.write_text(json.dumps(ITEMS))
    assert main([str(bare), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert 'is written as {"id": NAME, "messages": [...]}' in err, err


def test_a_folder_reads_the_session_databases_it_holds(tmp_path):
    """An app's folder holding its SQLiteSession database (and another SQLite file, no run) reads each session as
    the database alone does (it was "a folder without ..." where the conversations were)."""
    from sam_model.data.formats.files import held_runs, layouts

    (tmp_path / "app").mkdir()
    _database(tmp_path / "app" / "conversations.db", {"conv-1": ITEMS})
    with sqlite3.connect(tmp_path / "app" / "cache.db") as con:
        con.execute("CREATE TABLE kv (k TEXT, v TEXT)")
    con.close()
    events = list(iter_transcript_events(tmp_path))
    assert events == list(iter_transcript_events(tmp_path / "app" / "conversations.db")) and events
    assert held_runs(layouts(tmp_path)) == ("1 OpenAI Agents SDK session database (SQLiteSession) (read by the "
                                            "responses reader)")


def test_locked_database_is_refused_naming_it_not_skipped(tmp_path):
    """A database a running app holds locked was taken for no SQLiteSession store (and left out of a folder)."""
    import sqlite3

    import pytest

    from sam_model.data.formats import agents_db
    from sam_model.io import SAMFileError

    db = tmp_path / "conversations.db"
    con = sqlite3.connect(db)
    for statement in SCHEMA:  # SQLiteSession's own (a table of its columns alone is another app's)
        con.execute(statement)
    con.commit()
    con.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SAMFileError, match=r"conversations\.db.*retry when the app is idle"):
            agents_db.is_store(db)
    finally:
        con.rollback()
        con.close()
    assert agents_db.is_store(db)


def test_sessions_are_read_one_at_a_time(tmp_path):
    """The reader held every row of the database at once; a session's rows alone are held now."""
    import json
    import sqlite3
    import tracemalloc

    from sam_model.data.formats import agents_db

    db = tmp_path / "big.db"
    con = sqlite3.connect(db)
    for statement in SCHEMA:  # SQLiteSession's own (a table of its columns alone is another app's)
        con.execute(statement)
    text = "x" * 20_000
    con.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                    [(f"s{i}", json.dumps({"role": "user", "content": text})) for i in range(600)])
    con.commit()
    con.close()
    tracemalloc.start()
    try:
        ids = [conv["id"] for conv, _ in agents_db.sessions(db)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ids == [f"s{i}" for i in range(600)]
    assert peak < 3_000_000, peak  # the database is 12 MB


def test_a_database_locked_while_read_says_what_to_do(tmp_path):
    """The lock taken after is_store (an app writing between the check and the read): the read's error was the bare
    "database is locked", without the advice is_store gives (each reader wrote its own text)."""
    import sqlite3

    import pytest

    from sam_model.data.formats import adk_db, agents_db
    from sam_model.io import SAMFileError

    db = _database(tmp_path / "conversations.db", {"s1": ITEMS})
    con = sqlite3.connect(db)
    con.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SAMFileError) as read:
            list(agents_db.sessions(db))
        with pytest.raises(SAMFileError) as checked:
            agents_db.is_store(db)
        with pytest.raises(SAMFileError) as adk:
            adk_db.is_store(db)
    finally:
        con.rollback()
        con.close()
    assert str(read.value) == str(checked.value), (str(read.value), str(checked.value))
    assert "retry when the app is idle" in str(read.value) and "OpenAI Agents SDK" in str(read.value)
    # ADK's test comes first and cannot tell whose a file locked before its tables is: it names both (one text)
    either = "a session database (Google ADK's or the Agents SDK's)"
    assert str(adk.value).replace(either, "an OpenAI Agents SDK session database").startswith(str(read.value))


def test_the_sdks_tables_are_told_by_their_schema_not_their_name(tmp_path):
    """Another app's agent_messages (its columns, no sessions table) was read as the SDK's, each row refused as no
    input item; the SDK's tables under the names an app gave (SQLiteSession(sessions_table=, messages_table=)) were
    no session database."""
    from sam_model.data.formats import agents_db

    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT, "
                    "sender TEXT)")
        con.execute("INSERT INTO agent_messages (session_id, message_data, sender) VALUES ('s1', '\"hi\"', 'bot')")
    con.close()
    assert not agents_db.is_store(foreign)

    named = tmp_path / "named.db"
    with sqlite3.connect(named) as con:
        for statement in SCHEMA:
            con.execute(statement.replace("agent_sessions", "shop_sessions").replace("agent_messages", "shop_items"))
        con.executemany('INSERT INTO shop_items (session_id, message_data) VALUES (?, ?)',
                        [("s1", json.dumps(item)) for item in ITEMS])
    con.close()
    assert agents_db.is_store(named)
    (conv, where), = agents_db.sessions(named)
    assert conv == {"id": "s1", "messages": ITEMS} and "table shop_items, session s1" in where
    events = list(iter_transcript_events(named))
    assert events == list(iter_transcript_events(_database(tmp_path / "default.db", {"s1": ITEMS}))) and events


def test_a_log_of_conversations_beside_a_folder_s_database_is_not_left_out_without_a_word(tmp_path, capsys):
    """A walkthrough's app kept its sessions in sessions.db and logged other conversations as {"id", "messages":
    result.to_input_list()} lines in chats.jsonl beside it: the folder converted the database's sessions alone, the
    log's 30 conversations left out without a word. The folder is refused naming the log and what to give."""
    from sam_model.data import validate

    (tmp_path / "app").mkdir()
    _database(tmp_path / "app" / "sessions.db", {"conv-1": ITEMS})
    log = tmp_path / "app" / "chats.jsonl"
    log.write_text(json.dumps({"id": "conv-2", "messages": ITEMS}) + "\n")
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{log}" in err and "not read by the folder" in err and "give it as its own source" in err, err
    assert err.count("\n") == 1
    assert validate.main([str(tmp_path)]) == 2 and str(log) in capsys.readouterr().err
    assert main([str(log), str(tmp_path / "o.jsonl")]) == 0  # as said: each its own source
    (tmp_path / "app" / "notes.jsonl").write_text('{"note": "no conversation"}\n')  # no log of conversations: no run
    log.unlink()
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 0


def test_a_session_s_own_table_names_are_read(tmp_path, capsys):
    """SQLiteSession(session_id, db_path, sessions_table=..., messages_table=...) keeps its items under the names
    given (a walkthrough's claims desk database, "claims_messages"): its sessions read as the default table's would.
    Two such tables are two apps': their sessions of one id were two conversations of that one name; they are named
    by the table now."""
    default = _database(tmp_path / "default.db", {"conv-1": ITEMS})
    custom = tmp_path / "custom.db"
    with sqlite3.connect(custom) as con:
        for statement in SCHEMA:
            con.execute(statement.replace("agent_", "claims_"))
        con.executemany("INSERT INTO claims_messages (session_id, message_data) VALUES (?, ?)",
                        [("conv-1", json.dumps(item)) for item in ITEMS])
    con.close()
    strip = lambda es: [(e["episode_id"], e["step"], e["kind"], e["text"]) for e in es]  # noqa: E731
    assert strip(iter_transcript_events(custom)) == strip(iter_transcript_events(default))
    assert main([str(custom), str(tmp_path / "o.jsonl")]) == 0
    with sqlite3.connect(custom) as con:  # a second app's table beside it, the same session id
        for statement in SCHEMA:
            con.execute(statement.replace("agent_", "refunds_"))
        con.executemany("INSERT INTO refunds_messages (session_id, message_data) VALUES (?, ?)",
                        [("conv-1", json.dumps(item)) for item in ITEMS[:2]])
    con.close()
    events = list(iter_transcript_events(custom))
    assert sorted({e["episode_id"] for e in events}) == ["claims_messages_conv-1", "refunds_messages_conv-1"]
    assert len(events) > len(list(iter_transcript_events(default)))


def test_what_is_refused_names_the_agents_sdk_database_too(tmp_path, capsys):
    """An SQLite file of neither store, and a folder of no runs, were refused naming ADK's session databases alone,
    as if an Agents SDK app's were not read: a walkthrough's user took their SQLiteSession database for unsupported.
    Both name it (and the table it must hold)."""
    from sam_model.data.sources import source_kind
    from sam_model.io import SAMFileError

    other = tmp_path / "app.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE orders (id TEXT)")
    con.close()
    assert main([str(other), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "no OpenAI Agents SDK session database (SQLiteSession)" in err and "message_data" in err, err
    assert err.count("\n") == 1
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), str(tmp_path / "o.jsonl")]) == 1
    assert "OpenAI Agents SDK session databases (SQLiteSession)" in capsys.readouterr().err
    with pytest.raises(SAMFileError, match=r"OpenAI Agents SDK session databases \(SQLiteSession\)"):
        source_kind(tmp_path / "empty")


def test_sam_data_formats_says_how_an_agents_sdk_app_s_conversations_are_given(capsys):
    """sam-data formats, where the README sends a user to find their format, listed the responses reader's request
    lines alone: an Agents SDK user found neither their result.to_input_list() lines nor their SQLiteSession
    database there (a walkthrough's)."""
    from sam_model.data.cli import main as sam_data

    assert sam_data(["formats"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("\nresponses "):out.index("\notel ")]
    assert "result.to_input_list()" in block and "SQLiteSession database" in block, block


STRUCTURE = ("CREATE TABLE message_structure (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
             "message_id INTEGER NOT NULL, branch_id TEXT NOT NULL DEFAULT 'main', message_type TEXT NOT NULL, "
             "sequence_number INTEGER NOT NULL)")  # AdvancedSQLiteSession's, the columns read


def _peak(read) -> tuple[object, int]:
    import tracemalloc

    tracemalloc.start()
    try:
        out = read()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_two_tables_and_branches_are_read_a_session_and_a_branch_at_a_time(tmp_path):
    """The reader of custom tables and AdvancedSQLiteSession's branches fetched every row at once, as the reader
    before one session at a time did: a database of years of sessions in memory. Each table's sessions and each
    branch are read alone now, in the same order (a table's, the default first, by first item; branches by their
    first structure row, each in its sequence), rows of no branch ending their session's main branch, a session's
    branches in its group."""
    from sam_model.data.formats import agents_db

    text = "x" * 20_000
    tables = tmp_path / "tables.db"
    with sqlite3.connect(tables) as con:
        for prefix in ("refunds_", "agent_"):
            for statement in SCHEMA:
                con.execute(statement.replace("agent_", prefix))
            con.executemany(f"INSERT INTO {prefix}messages (session_id, message_data) VALUES (?, ?)",
                            [(f"s{299 - i}", json.dumps({"role": "user", "content": text})) for i in range(300)])
    con.close()
    ids, peak = _peak(lambda: [doc["id"] for doc, _ in agents_db.sessions(tables)])
    assert ids == [f"{t}_s{299 - i}" for t in ("agent_messages", "refunds_messages") for i in range(300)]
    assert peak < 3_000_000, peak  # the database is 12 MB

    branched = tmp_path / "branched.db"
    with sqlite3.connect(branched) as con:
        con.execute(SCHEMA[1])
        con.execute(STRUCTURE)
        for i in range(300):  # each session: a turn, a branch ("b") rewriting it, the main branch's items listed last
            mid = con.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                              (f"s{i}", json.dumps({"role": "user", "content": f"{i} {text}"}))).lastrowid
            alt = con.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                              (f"s{i}", json.dumps({"role": "user", "content": f"b{i}"}))).lastrowid
            con.executemany("INSERT INTO message_structure (session_id, message_id, branch_id, message_type, "
                            "sequence_number) VALUES (?, ?, ?, 'user', ?)",
                            [(f"s{i}", alt, "b", 1), (f"s{i}", mid, "b", 0), (f"s{i}", mid, "main", 0)])
        stray = con.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('s0', ?)",
                            (json.dumps({"role": "user", "content": "no branch"}),)).lastrowid
    con.close()
    docs, peak = _peak(lambda: [(doc["id"], doc.get("group"), [m["content"][:2] for m in doc["messages"]])
                                for doc, _ in agents_db.sessions(branched)])
    assert docs[:3] == [("s0_b", "s0", ["0 ", "b0"]), ("s0", None, ["0 ", "no"]), ("s1_b", "s1", ["1 ", "b1"])]
    assert len(docs) == 600 and stray > 600
    assert peak < 3_000_000, peak  # each session's branches hold its first turn: the database's items read 12 MB
