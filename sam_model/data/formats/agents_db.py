"""The OpenAI Agents SDK's session database: the SQLite file of ``SQLiteSession(session_id, db_path)``, read as
its sessions' conversations.

Why: an Agents SDK app that keeps its conversations keeps them there; given to ``sam-data transcripts`` the file was
refused as "an SQLite database without an 'events' table, so no Google ADK session database". SQLiteSession keeps a
table ``agent_messages`` of ``(id, session_id, message_data, created_at)``, its session_id a foreign key to the
sessions table's (``agent_sessions``; both names the app's to choose: ``SQLiteSession(..., sessions_table=,
messages_table=)``, AsyncSQLiteSession's and SQLAlchemySession's the same), ``message_data`` one Responses API input
item as JSON (what ``result.to_input_list()`` lists); each session is rebuilt as ``get_items`` rebuilds it (its rows
by id) and read as the conversation ``{"id": session_id, "messages": items}``, which the Responses reader reads as
it reads a run's items written as a line. The database holds no agent instructions: no policy is read.
The file is opened read-only, so a running app's database is never written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sam_model.data.formats.base import TranscriptFormatError, unread_database
from sam_model.io import SAMFileError

TABLE = "agent_messages"  # SQLiteSession's default messages_table
COLUMNS = {"id", "session_id", "message_data"}
WHAT = "an OpenAI Agents SDK session database"


def _open(p: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)


def tables(con: sqlite3.Connection) -> list[str]:
    """The messages tables of the Agents SDK's sessions, by name: those of its columns whose session_id references a
    sessions table's. Taken by its name and columns alone, another app's agent_messages was read as the SDK's (its
    rows refused as no items, or read as conversations), and one of a name the app gave (messages_table) was not."""
    names = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return [t for t in names if COLUMNS <= {row[1] for row in con.execute(f"PRAGMA table_info({_quoted(t)})")}
            and any(row[3] == "session_id" and row[4] == "session_id"
                    for row in con.execute(f"PRAGMA foreign_key_list({_quoted(t)})"))]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def is_store(p: Path) -> bool:
    """An SQLite file holding the SDK's messages table (a folder's other databases are no runs)."""
    try:
        con = _open(p)
        try:
            return bool(tables(con))
        finally:
            con.close()
    except sqlite3.OperationalError as exc:  # locked by a writer: maybe a store, so not skipped without a word
        raise SAMFileError(unread_database(p, exc, WHAT)) from None
    except (OSError, sqlite3.Error):
        return False


def sessions(p: Path) -> Iterator[tuple[Any, str]]:
    """(a session's conversation or the error reading it, where) for each session of each messages table (the
    tables by name), in the order of their first items (ties by session id); a row whose message_data is no JSON
    object fails its session alone, naming the row. Two tables' sessions are two apps': where a file holds several,
    a session is named by its table and id, never merged with another table's of its id. One session's rows are
    held at a time: a database of years of sessions is read in the memory of its longest."""
    try:
        con = _open(p)
    except sqlite3.Error as exc:
        raise SAMFileError(f"cannot read {p} as {WHAT}: {exc}") from None
    try:
        found = tables(con)
        for table in found:
            sids = [row[0] for row in con.execute(
                f"SELECT session_id FROM {_quoted(table)} GROUP BY session_id ORDER BY MIN(id), session_id")]
            for sid in sids:
                rows = con.execute(f"SELECT id, message_data FROM {_quoted(table)} WHERE session_id IS ? ORDER BY id",
                                   (sid,))
                where = f"{p}: session {sid}" if table == TABLE else f"{p}: table {table}, session {sid}"
                yield _session(sid if len(found) == 1 else f"{table}_{sid}", rows, where), where
    except sqlite3.Error as exc:  # a writer's lock taken after is_store: the same advice
        raise SAMFileError(unread_database(p, exc, WHAT)) from None
    finally:
        con.close()


def _session(sid: Any, rows: Iterator[tuple[Any, Any]], where: str) -> Any:
    """One session's conversation from its rows, or the error naming its first bad row."""
    listed: list[dict[str, Any]] = []
    for rid, data in rows:
        try:
            item = json.loads(data)
            if not isinstance(item, dict):
                raise ValueError(f"is {type(item).__name__}, expected an input item object")
        except ValueError as exc:
            return TranscriptFormatError(where, f"row {rid}: message_data {exc}")
        listed.append(item)
    return {"id": sid, "messages": listed}
