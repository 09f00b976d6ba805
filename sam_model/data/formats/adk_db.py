"""Google ADK's session database: the SQLite file of ``DatabaseSessionService("sqlite:///sessions.db")`` or
``SqliteSessionService`` (``adk web --session_service_uri sqlite://...`` too), read as its sessions' dumps.

Why: an ADK app that keeps its sessions keeps them there, not as ``session.model_dump_json()`` files; given to
``sam-data transcripts`` the database was "not UTF-8 ... re-save the file as UTF-8", advice that loses the data. Both
services keep a table ``events`` of ``(id, app_name, user_id, session_id, invocation_id, timestamp, event_data)``,
``event_data`` the event's ``model_dump(exclude_none=True, mode="json")``; each session is rebuilt as
``get_session`` rebuilds it (its events by time, ties by id; the row's id, invocation id and, where the data has none,
time) and read by the ``adk`` reader as a saved session, named as it names one: by user, app and id (ADK's ids are
unique per app and user only). The database holds no agent instruction: no policy is read.
The file is opened read-only, so a running app's database is never written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sam_model.data.formats.base import TranscriptFormatError, unread_database
from sam_model.data.formats.sqlitestores import holds, opened
from sam_model.io import SAMFileError

COLUMNS = {"id", "app_name", "user_id", "session_id", "invocation_id", "timestamp", "event_data"}
KEYS = {"app_name", "user_id", "session_id"}  # what every ADK schema's events hold, the one before event_data too
SAVE = ("or save each session as a .json with session.model_dump_json() (a session service's get_session) and "
        "convert those")


WHAT = "a Google ADK session database"
# a file locked before its tables could be read: it may be the Agents SDK's as well (documents tests ADK's first)
EITHER = "a session database (Google ADK's or the Agents SDK's)"


def is_store(p: Path) -> bool:
    """An SQLite file holding ADK's events table (a folder's other databases are no runs, not errors)."""
    return holds(p, lambda con: COLUMNS <= _columns(con, "events"), EITHER)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def sessions(p: Path) -> Iterator[tuple[Any, str]]:
    """(a session's dump or the error reading it, where) for each session of the database, in the order of their
    first events (ties by app, user and id, so every run writes one order); a database that is no ADK session store
    is refused in one line saying what to give. One session's rows are held at a time: a database of years of
    sessions is read in the memory of its longest."""
    con = opened(p, WHAT)
    try:
        found = _columns(con, "events")
        if not KEYS <= found:  # no events table, or another app's (its own columns): no ADK session database
            raise SAMFileError(f"{p}: an SQLite database without " + ("an 'events' table" if not found else
                               "ADK's 'events' table (its events lack " + ", ".join(sorted(KEYS - found)) + ")")
                               + ", so no Google ADK session database, nor a table of id, session_id and message_data, so "
                               "no OpenAI Agents SDK session database (SQLiteSession) (the transcript formats sam-data "
                               "transcripts reads: sam-data formats)")
        if not COLUMNS <= found:
            raise SAMFileError(f"{p}: a Google ADK session database of the schema before event_data (its events "
                               f"lack {', '.join(sorted(COLUMNS - found))}): migrate it with adk migrate session "
                               f"--source_db_url sqlite:///{p} --dest_db_url sqlite:///NEW.db and convert NEW.db, "
                               + SAVE)
        keys = con.execute("SELECT app_name, user_id, session_id FROM events GROUP BY app_name, user_id, session_id "
                           "ORDER BY MIN(timestamp), app_name, user_id, session_id").fetchall()
        # ADK's session ids are unique per app and user only ("session_001" for every customer): the reader names
        # each session by its user, app and id, as it does a session's dump (files: adk.is_session), so none is
        # refused as another's "duplicate conversation id"
        lookup = _lookup(con)
        for app, user, sid in keys:
            rows = con.execute(lookup, {"app": app, "user": user, "sid": sid}).fetchall()
            where = f"{p}: session {sid} (app {app}, user {user})"
            yield _session(app, user, sid, rows, where), where
    except sqlite3.Error as exc:
        raise SAMFileError(unread_database(p, exc, WHAT, SAVE)) from None
    finally:
        con.close()


def _lookup(con: sqlite3.Connection) -> str:
    """The query of one session's rows (its :app, :user and :sid), through an index of the sessions' rows
    built in the connection's temporary database (the file stays unwritten): where the events' key opens with the
    event's id (DatabaseSessionService's), a query a session read the whole table each time, 15 s for 4,000
    sessions of 10 events. The rows are checked against the session's key again, so a row deleted and its rowid
    reused while the database is read is never another session's. A table without rowids: the scan."""
    where = "app_name IS :app AND user_id IS :user AND session_id IS :sid"
    try:
        con.execute("CREATE TEMP TABLE sam_rows AS SELECT rowid AS r, app_name, user_id, session_id FROM main.events")
        con.execute("CREATE INDEX temp.sam_rows_key ON sam_rows (app_name, user_id, session_id)")
    except sqlite3.OperationalError:  # WITHOUT ROWID ("no such column: rowid")
        return f"SELECT id, invocation_id, timestamp, event_data FROM events WHERE {where}"
    return (f"SELECT id, invocation_id, timestamp, event_data FROM main.events WHERE rowid IN (SELECT r FROM "
            f"temp.sam_rows WHERE {where}) AND {where}")


def _session(app: Any, user: Any, sid: Any, rows: list[tuple[Any, ...]], where: str) -> Any:
    """One session's dump from its rows, its events by time (ties by id) as get_session orders them, or the error
    of its first event_data that is no event object."""
    events: list[tuple[float, str, dict[str, Any]]] = []
    for eid, inv, stamp, data in rows:
        try:
            event = json.loads(data) if isinstance(data, (str, bytes)) else data
            if not isinstance(event, dict):
                raise ValueError(f"is {type(event).__name__}, expected an event object")
        except ValueError as exc:
            return TranscriptFormatError(where, f"event {eid}: event_data {exc}")
        when = event.get("timestamp")
        when = when if isinstance(when, (int, float)) else stamp if isinstance(stamp, (int, float)) else 0.0
        events.append((float(when), str(eid), {**event, "id": eid, "invocation_id": inv, "timestamp": when}))
    return {"id": sid, "app_name": app, "user_id": user, "state": {},
            "events": [e for _, _, e in sorted(events, key=lambda t: (t[0], t[1]))]}
