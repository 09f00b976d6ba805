"""What a walkthrough of the README as a Google ADK team found (an electricity and gas utility's customer-service
desk, tests/adk_utility.py): the session database ADK apps keep their sessions in was read as an agent log, "not
UTF-8 ... re-save the file as UTF-8"; and the recipe end to end on such sessions, small, where google-adk is
installed (run with its environment, as tests/test_adk_memory.py says)."""

from __future__ import annotations

import importlib.util
import json
import random
import sqlite3
import sys
from pathlib import Path

import pytest

from sam_model.data import validate
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "logs" / "adk.json"
EITHER = "a session database (Google ADK's or the Agents SDK's)"  # what a locked SQLite file is read as
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



def test_a_session_id_two_users_share_names_each_by_its_app_and_user(tmp_path):
    """ADK's session ids are unique per app and user: a client giving every customer's session one id
    ("session_001") made the whole database "duplicate conversation id 'session_001'". Each session is named by its
    user, app and id (ADK's key of a session), as a session's dump is."""
    doc = json.loads(EXAMPLE.read_text())
    ann, bo, cy = saved(doc, "session_001", "ann"), saved(doc, "session_001", "bo"), saved(doc, "s-9", "cy")
    bo["events"] = [{**e, "id": "bo-" + e["id"]} for e in bo["events"]]
    cy["events"] = [{**e, "id": "cy-" + e["id"], "timestamp": e["timestamp"] + 500} for e in cy["events"]]
    db = database(tmp_path / "sessions.db", [ann, bo, cy])
    report = ImportReport()
    events = list(iter_transcript_events(db, report=report))
    assert report.formats == {"adk": 3}
    names = ["ann_airline_session_001", "bo_airline_session_001", "cy_airline_s-9"]
    assert list(dict.fromkeys(e["episode_id"] for e in events)) == names
    one = [e["text"] for e in events if e["episode_id"] == names[0]]
    assert one and all([e["text"] for e in events if e["episode_id"] == n] == one for n in names)


def test_sessions_saved_under_one_id_by_two_agents_name_each_by_its_app(tmp_path, capsys):
    """adk run --save_session writes AGENT/ID.session.json (camelCase, exclude_none), the id typed at its prompt: two
    agents' s1.session.json made their folder "duplicate conversation id 's1' ... the same conversation logged
    again", refused. Each session is named by its user, app and id (ADK's key); one session saved twice
    is still said to be logged again."""
    from sam_model.data.formats import gemini

    doc = json.loads(EXAMPLE.read_text())
    for app, user in (("billing", "ann"), ("outages", "ann")):
        (tmp_path / app).mkdir()
        one = saved(doc, "s1", user)
        one["events"][0] = {**one["events"][0], "content": {"role": "user", "parts": [{"text": f"hi {app}"}]}}
        camel = {gemini.camel(k): v for k, v in {**one, "app_name": app}.items()}
        (tmp_path / app / "s1.session.json").write_text(json.dumps(camel, indent=2))
    events = list(iter_transcript_events(tmp_path))
    assert sorted({e["episode_id"] for e in events}) == ["ann_billing_s1", "ann_outages_s1"]
    assert [e["text"] for e in events if e["step"] == 0] == ["hi billing", "hi outages"]
    (tmp_path / "outages" / "copy.session.json").write_text((tmp_path / "outages" / "s1.session.json").read_text())
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 1
    assert "duplicate conversation id 'ann_outages_s1'" in capsys.readouterr().err

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
    # another app's events table was told to migrate with adk migrate session, as ADK's own of ADK 1.x
    mine = tmp_path / "analytics.db"
    with sqlite3.connect(mine) as con:
        con.execute("CREATE TABLE events (id INTEGER, name TEXT, timestamp REAL)")
    assert main([str(mine), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "without ADK's 'events' table (its events lack app_name, session_id, user_id), so no Google ADK" in err
    assert "migrate" not in err, err
    assert err.count("\n") == 1



def test_a_folder_of_agents_reads_the_session_database_each_keeps(tmp_path):
    """adk web and adk run keep an agent's sessions in its folder's .adk/session.db (SqliteSessionService): the
    agents' folder was "a folder without SWE-agent .traj files, ..." where its conversations were. Each database is
    read as it is alone; another SQLite file beside them is no run, and the agents' own .json files are not read."""
    from sam_model.data.formats.files import held_runs, layouts
    from sam_model.data.sources import source_kind

    doc = json.loads(EXAMPLE.read_text())
    for name, (sid, user) in (("billing", ("s-1", "ann")), ("outages", ("s-2", "bo"))):
        (tmp_path / name / ".adk").mkdir(parents=True)
        (tmp_path / name / "agent.py").write_text("root_agent = None\n")
        (tmp_path / name / "config.json").write_text(json.dumps({"name": name}))
        database(tmp_path / name / ".adk" / "session.db", [saved(doc, sid, user)])
    with sqlite3.connect(tmp_path / "billing" / "cache.db") as con:
        con.execute("CREATE TABLE kv (k TEXT, v TEXT)")
    report = ImportReport()
    events = list(iter_transcript_events(tmp_path, report=report))
    assert report.formats == {"adk": 2}
    alone = [e for name in ("billing", "outages")
             for e in iter_transcript_events(tmp_path / name / ".adk" / "session.db")]
    strip = lambda es: sorted((e["episode_id"], e["step"], e["text"]) for e in es)  # noqa: E731
    assert strip(events) == strip(alone) and {e["episode_id"] for e in events} == {"ann_airline_s-1", "bo_airline_s-2"}
    assert source_kind(tmp_path) == "transcripts"
    assert held_runs(layouts(tmp_path)) == "2 ADK session databases (.adk/session.db) (read by the adk reader)"

# the tables an Agents SDK SQLiteSession creates (its messages' session_id a foreign key of its sessions table)
SDK_SCHEMA = ("CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY);"
              "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
              "message_data TEXT NOT NULL, FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id));")


def test_a_folder_s_sqlite_files_are_each_tested_once(tmp_path, monkeypatch):
    """The folder was walked once for ADK's databases and again for the Agents SDK's, the Agents SDK's test opening
    the ADK stores too and the ADK test its stores twice: each file is tested once by the ADK test, and once by the
    Agents SDK's where it is no ADK store."""
    from sam_model.data.formats import adk_db, agents_db, files

    for name in ("a", "b"):
        with sqlite3.connect(tmp_path / f"{name}.db") as con:
            con.execute("CREATE TABLE kv (k TEXT, v TEXT)")
    database(tmp_path / "session.db", [saved(json.loads(EXAMPLE.read_text()), "s-1", "ann")])
    with sqlite3.connect(tmp_path / "agents.db") as con:
        con.executescript(SDK_SCHEMA)
        con.execute("INSERT INTO agent_sessions (session_id) VALUES ('c1')")
        con.execute("""INSERT INTO agent_messages (session_id, message_data) VALUES ('c1', '{"role": "user", "content": "hi"}')""")
    tested: list[str] = []
    for module in (adk_db, agents_db):
        monkeypatch.setattr(module, "is_store", lambda q, test=module.is_store, m=module.__name__.rsplit(".")[-1]: (
            tested.append(f"{m} {q.name}"), test(q))[1])
    found = files.layouts(tmp_path)
    assert found["adk-db"] == [tmp_path / "session.db"] and found["agents-db"] == [tmp_path / "agents.db"]
    assert sorted(tested) == ["adk_db a.db", "adk_db agents.db", "adk_db b.db", "adk_db session.db", "agents_db a.db",
                              "agents_db agents.db", "agents_db b.db"]


def test_a_folder_s_database_a_writer_holds_locked_is_not_skipped_without_a_word(tmp_path, capsys):
    """An agent's .adk/session.db that a running app held locked (a write transaction) was taken for no session
    database and left out of its folder, the other agents' sessions converted as if it held none; it is refused
    naming the file and what to do."""
    doc = json.loads(EXAMPLE.read_text())
    for name, (sid, user) in (("billing", ("s-1", "ann")), ("outages", ("s-2", "bo"))):
        (tmp_path / name / ".adk").mkdir(parents=True)
        database(tmp_path / name / ".adk" / "session.db", [saved(doc, sid, user)])
    locked = tmp_path / "outages" / ".adk" / "session.db"
    writer = sqlite3.connect(locked, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 1
        err = capsys.readouterr().err
        assert f"cannot read {locked} as {EITHER}: database is locked" in err, err
        assert "retry when the app is idle" in err and err.count("\n") == 1
        assert validate.main([str(tmp_path)]) == 2  # a folder: what it holds, here why one of them is not read
    finally:
        writer.close()
    err = capsys.readouterr().err
    assert f"cannot read {locked} as {EITHER}: database is locked" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 0  # once the writer is done, both agents' sessions
    assert len({json.loads(line)["episode_id"] for line in (tmp_path / "o.jsonl").read_text().splitlines()}) == 2


def test_a_locked_database_given_alone_is_not_named_the_agents_sdk_s(tmp_path, capsys):
    """A locked ADK database given alone was "cannot read ... as an OpenAI Agents SDK session database", as the Agents
    SDK's test ran first; locked, whose it is cannot be told, and the line says either's."""
    path = database(tmp_path / "sessions.db", [saved(json.loads(EXAMPLE.read_text()), "s-1", "ann")])
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    finally:
        writer.close()
    err = capsys.readouterr().err
    assert f"cannot read {path} as {EITHER}: database is locked" in err and "Agents SDK session database" not in err
    assert "retry when the app is idle" in err and err.count("\n") == 1, err
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0


def test_a_database_a_crashed_writer_left_a_journal_of_is_not_skipped_without_a_word(tmp_path, capsys):
    """A database whose app died in a write (its -journal beside it, which a read-only reader may not roll back) was
    taken for no session database and left out of its folder; it is refused naming the file."""
    import subprocess

    doc = json.loads(EXAMPLE.read_text())
    for name, (sid, user) in (("billing", ("s-1", "ann")), ("outages", ("s-2", "bo"))):
        (tmp_path / name / ".adk").mkdir(parents=True)
        database(tmp_path / name / ".adk" / "session.db", [saved(doc, sid, user)])
    crashed = tmp_path / "outages" / ".adk" / "session.db"
    subprocess.run([sys.executable, "-c", f"import os, sqlite3; c = sqlite3.connect({str(crashed)!r}); "
                    "c.execute('PRAGMA cache_size=1'); c.execute('BEGIN'); "
                    "[c.execute('UPDATE events SET event_data = event_data') for _ in range(3)]; "
                    "c.executemany('INSERT INTO events VALUES (?, 1, 1, 1, 1, 1, ?)', "
                    "[(str(i), 'x' * 4000) for i in range(500)]); os._exit(0)"], check=True)
    assert crashed.with_name("session.db-journal").exists()
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"cannot read {crashed} as {EITHER}" in err and err.count("\n") == 1, err


def test_a_database_s_sessions_come_one_at_a_time_in_one_order(tmp_path):
    """The reader held every row of the database at once (years of an app's sessions in memory) and ordered sessions
    whose first events share a time as a set iterates (another order each run, so output files differed byte for
    byte); it holds one session's rows at a time, ties ordered by app, user and id."""
    import tracemalloc

    from sam_model.data.formats import adk_db

    big = "x" * 20_000
    sessions = [{"id": f"s{n:03d}", "app_name": "desk", "user_id": f"u{(n * 7) % 200:03d}",
                 "events": [{"id": f"e{n}-{i}", "invocation_id": "i", "timestamp": float(i), "author": "user",
                             "content": {"role": "user", "parts": [{"text": big}]}} for i in range(5)]}
                for n in range(200)]
    path = database(tmp_path / "sessions.db", sessions)
    tracemalloc.start()
    try:
        names = [(doc["user_id"], doc["id"]) for doc, _ in adk_db.sessions(path)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert names == sorted(names) and len(names) == 200  # every first event at time 0: by user, then id
    assert peak < 5_000_000, peak  # the rows hold 20 MB


def test_a_database_whose_events_key_opens_with_their_id_is_not_scanned_once_a_session(tmp_path,
                                                                                  monkeypatch):
    """DatabaseSessionService keys its events by (id, app_name, user_id, session_id): the reader's query of each
    session's rows could use no index, so it read the whole table once a session (4,000 sessions of 10 events:
    15 s). Counted in SQLite's own steps, four times the sessions now cost about four times the work, not
    sixteen; and each session still gets its own rows alone."""
    from sam_model.data.formats import adk_db

    connect, steps = sqlite3.connect, [0]

    def counted(*args, **kwargs):
        con = connect(*args, **kwargs)
        con.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1), 100)
        return con

    def work(n: int) -> int:
        path = tmp_path / f"s{n}.db"
        con = connect(path)
        con.execute("CREATE TABLE events (id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL, "
                    "session_id TEXT NOT NULL, invocation_id TEXT, timestamp REAL, event_data TEXT, "
                    "PRIMARY KEY (id, app_name, user_id, session_id))")
        con.executemany("INSERT INTO events VALUES (?, 'desk', ?, ?, 'i', ?, ?)", [
            (f"e{s}-{i}", f"u{s % 7}", f"s{s}", float(s), json.dumps({"author": "user", "content": {
                "role": "user", "parts": [{"text": f"session {s}"}]}})) for s in range(n) for i in range(3)])
        con.commit()
        con.close()
        steps[0] = 0
        monkeypatch.setattr(sqlite3, "connect", counted)
        try:
            docs = [doc for doc, _ in adk_db.sessions(path)]
        finally:
            monkeypatch.setattr(sqlite3, "connect", connect)
        assert [d["id"] for d in docs] == [f"s{s}" for s in range(n)]
        assert all({e["id"].split("-")[0] for e in d["events"]} == {f"e{d['id'][1:]}"} and len(d["events"]) == 3
                   for d in docs)
        return steps[0]

    small, large = work(150), work(600)
    assert large < 8 * small, (small, large)  # 4.0x; scanned once a session: 15.5x


REAL = importlib.util.find_spec("google") is not None and importlib.util.find_spec("google.adk") is not None


@pytest.mark.skipif(not REAL or importlib.util.find_spec("aiosqlite") is None,
                    reason="google-adk and aiosqlite are not installed (run with their environment)")
def test_a_real_sqlite_session_service_s_database_reads_as_its_sessions_saved(tmp_path):
    """What ADK's own SqliteSessionService (adk web's .adk/session.db) wrote, two customers' sessions of a real Runner:
    each converts as its session.model_dump_json() does."""
    import asyncio

    from adk_utility import plans, run
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    db = tmp_path / "agent" / ".adk" / "session.db"
    db.parent.mkdir(parents=True)
    service = SqliteSessionService(db_path=str(db))
    for plan in plans(2, 3):
        doc = asyncio.run(run(plan, sessions=service))
        (tmp_path / f"{plan[0]}.json").write_text(json.dumps({k: v for k, v in doc.items() if k != "system"}))
    strip = lambda es: [{k: v for k, v in e.items() if k != "meta"} for e in es]  # noqa: E731
    want = [e for plan in plans(2, 3) for e in iter_transcript_events(tmp_path / f"{plan[0]}.json")]
    assert strip(iter_transcript_events(db)) == strip(want) and any(e["kind"] == "action" for e in want)
    assert strip(iter_transcript_events(tmp_path / "agent")) == strip(want)


@pytest.mark.slow
@pytest.mark.skipif(not REAL, reason="google-adk is not installed (run with its environment, as "
                                     "tests/test_adk_memory.py says)")
def test_the_recipe_end_to_end_on_a_desks_sessions(tmp_path, monkeypatch, capsys):
    """The README's recipe, small, as the walkthrough ran it: sessions of a real Runner (a scripted model) kept in the
    app's session database, given to sam-data transcripts and to sam-train fit --config adapt.yaml as it is (one
    epoch), the export evaluated on other sessions beside sam-general and a baseline, then loaded into
    SAMMemoryService in a real Runner: preload_memory gives the customer their own account number, never another's."""
    import asyncio

    from adk_utility import POLICY, TOOLS, conversations, plans, run
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import preload_memory
    from test_adk_memory import Scripted

    from sam_model import SAMRetriever
    from sam_model.data.cli import main as sam_data
    from sam_model.evaluation.run import main as sam_eval
    from sam_model.integrations.adk import SAMMemoryService
    from sam_model.memory import ScopedMemory
    from sam_model.training.cli import run as sam_train

    train, held = conversations(24, 0), conversations(8, 1)
    database(tmp_path / "sessions.db", [doc for _, doc in train])
    (tmp_path / "held").mkdir()
    for sid, doc in held:
        (tmp_path / "held" / f"{sid}.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["sam-train"])
    assert sam_data(["transcripts", "sessions.db", "check.jsonl"]) == 0
    assert sam_data(["validate", "check.jsonl"]) == 0
    assert "24 conversations" in capsys.readouterr().out
    assert sam_train(["fit", "--config", "adapt.yaml", "--data.train", "[sessions.db]", "--run", "desk",
                      "--trainer.max_epochs=1", f"--model.text_cache_dir={tmp_path / 'text'}",
                      f"--data.cache_dir={tmp_path / 'cache'}"]) == 0
    export = tmp_path / "checkpoints" / "desk" / "export"
    assert sam_eval(["--retriever", str(export), "--data", "held", "--compare", "general=sam-general",
                     "--baselines", "used-first", "--out", "eval"]) == 0
    mrr = {m: r["mrr"] for m, r in json.loads((tmp_path / "eval" / "report.json").read_text())["methods"].items()}
    assert mrr["sam"] > mrr["used-first"] and mrr["general"] > mrr["used-first"], mrr

    memory = SAMMemoryService(ScopedMemory(SAMRetriever.load(export)), system=POLICY)
    sessions = InMemorySessionService()

    people = plans(2, 5)
    for plan in people:  # two customers' sessions, each added after every turn
        asyncio.run(run(plan, memory))
    assert people[0][1] != people[1][1]  # two customers
    for (_, user, w, _, _), (_, other, v, _, _) in zip(people, people[::-1]):
        agent = LlmAgent(name="utility_agent", model=Scripted(script=[["Welcome back."]], requests=[]),
                         instruction=POLICY, tools=[*TOOLS, preload_memory])
        runner = Runner(agent=agent, app_name="utility", session_service=sessions, memory_service=memory)
        asyncio.run(_ask(runner, sessions, user, "What is my account number again?"))
        sent = "".join(p.text or "" for c in agent.model.requests[0].contents for p in c.parts or [])
        recalled = sent[sent.index("<PAST_CONVERSATIONS>"):sent.index("</PAST_CONVERSATIONS>")]
        assert w["account"]["account_number"] in recalled, recalled
        assert v["account"]["account_number"] not in recalled and other not in recalled


async def _ask(runner, sessions, user: str, text: str) -> None:
    from google.genai import types

    made = await sessions.create_session(app_name="utility", user_id=user)
    async for _ in runner.run_async(user_id=user, session_id=made.id,
                                    new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        pass
