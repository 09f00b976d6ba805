"""What a walkthrough of the README as a Google ADK team found (an electricity and gas utility's customer-service
desk, tests/adk_utility.py): the session database ADK apps keep their sessions in was read as an agent log, "not
UTF-8 ... re-save the file as UTF-8"."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

from sam_model.data import validate
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "logs" / "adk.json"
# SqliteSessionService's tables (google-adk 2.13.0); DatabaseSessionService's v1 schema has the same columns
SCHEMA = """
CREATE TABLE sessions (app_name TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, state TEXT NOT NULL,
    create_time REAL NOT NULL, update_time REAL NOT NULL, PRIMARY KEY (app_name, user_id, id));
CREATE TABLE events (id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    invocation_id TEXT NOT NULL, timestamp REAL NOT NULL, event_data TEXT NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id, id));
"""


def database(path: Path, sessions: list[dict], seed: int = 0) -> Path:
    """An ADK session database holding ``sessions`` (dumps), each event a row as the service stores it, the rows
    written in a shuffled order (a database keeps no order of its own)."""
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    rows = []
    for s in sessions:
        con.execute("INSERT INTO sessions VALUES (?, ?, ?, '{}', 0, 0)", (s["app_name"], s["user_id"], s["id"]))
        for e in s["events"]:
            data = {k: v for k, v in e.items() if v is not None}
            rows.append((e["id"], s["app_name"], s["user_id"], s["id"], e["invocation_id"], e["timestamp"],
                         json.dumps(data)))
    random.Random(seed).shuffle(rows)
    con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


def saved(doc: dict, sid: str, user: str) -> dict:
    """The example session as another user's session of the same app, without the instruction beside it."""
    return {**{k: v for k, v in doc.items() if k != "system"}, "id": sid, "user_id": user,
            "events": [{**e, "id": f"{sid}-{e['id']}", "timestamp": e["timestamp"] + (100 if user == "bo" else 0)}
                       for e in doc["events"]]}


def test_a_session_database_converts_each_session_as_its_saved_dump(tmp_path, capsys):
    """sessions.db (DatabaseSessionService("sqlite:///sessions.db"), SqliteSessionService) was "not UTF-8 (byte 103
    of the line is 0xf8); re-save the file as UTF-8". Each session converts as its model_dump_json() does, its
    events in time order whatever the rows' order; train.py and evaluate.py take the file as it is."""
    doc = json.loads(EXAMPLE.read_text())
    one, two = saved(doc, "s-1", "ann"), saved(doc, "s-2", "bo")
    db = database(tmp_path / "sessions.db", [two, one])
    for s in (one, two):
        (tmp_path / f"{s['id']}.json").write_text(json.dumps(s))
    report = ImportReport()
    events = list(iter_transcript_events(db, report=report))
    assert report.formats == {"adk": 2}
    want = [e for s in ("s-1", "s-2") for e in iter_transcript_events(tmp_path / f"{s}.json")]
    assert [{k: v for k, v in e.items() if k != "meta"} for e in events] == \
        [{k: v for k, v in e.items() if k != "meta"} for e in want]
    assert sum(e["kind"] == "action" for e in events) == 2 * sum(
        "function_call" in json.dumps(e.get("content")) for e in doc["events"])
    assert main([str(db), str(tmp_path / "out.jsonl")]) == 0
    from sam_model.data.sources import materialise, source_kind

    assert source_kind(db) == "transcripts"
    assert materialise(db, cache_dir=tmp_path / "cache").read_text().count('"episode_id": "s-2"') == \
        sum(e["episode_id"] == "s-2" for e in events)
    capsys.readouterr()
    assert validate.main([str(db)]) == 1
    err = capsys.readouterr().err
    assert "an SQLite database, not an agent log" in err and f"sam-data transcripts {db} OUT.jsonl" in err
    assert err.count("\n") == 1 and "UTF-8" not in err


def test_other_databases_are_refused_saying_what_to_give(tmp_path, capsys):
    """An SQLite file that is no ADK store, and one of the schema before event_data (ADK 1.x's pickled columns),
    are refused in one line (they too were "not UTF-8")."""
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE orders (id TEXT)")
    assert main([str(other), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "an SQLite database without an 'events' table, so no Google ADK session database" in err, err
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as con:
        con.execute("CREATE TABLE events (id TEXT, app_name TEXT, user_id TEXT, session_id TEXT, invocation_id TEXT, "
                    "author TEXT, timestamp REAL, content TEXT, actions BLOB)")
    assert main([str(old), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "the schema before event_data (its events lack event_data): migrate it with adk migrate session" in err
    assert err.count("\n") == 1

