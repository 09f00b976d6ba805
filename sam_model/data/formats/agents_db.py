"""The OpenAI Agents SDK's session database: the SQLite file of ``SQLiteSession(session_id, db_path)``, read as
its sessions' conversations.

Why: an Agents SDK app that keeps its conversations keeps them there; given to ``sam-data transcripts`` the file was
refused as "an SQLite database without an 'events' table, so no Google ADK session database". SQLiteSession keeps a
table ``agent_messages`` of ``(id, session_id, message_data, created_at)``, ``message_data`` one Responses API input
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


def is_store(p: Path) -> bool:
    """An SQLite file holding SQLiteSession's messages table (a folder's other databases are no runs)."""
    try:
        con = _open(p)
        try:
            return COLUMNS <= {row[1] for row in con.execute(f"PRAGMA table_info({TABLE})")}
        finally:
            con.close()
    except sqlite3.OperationalError as exc:  # locked by a writer: maybe a store, so not skipped without a word
        raise SAMFileError(unread_database(p, exc, WHAT)) from None
    except (OSError, sqlite3.Error):
        return False


def sessions(p: Path) -> Iterator[tuple[Any, str]]:
    """(a session's conversation or the error reading it, where) for each session, in the order of their first
    items (ties by session id); a row whose message_data is no JSON object fails its session alone, naming the row.
    One session's rows are held at a time: a database of years of sessions is read in the memory of its longest."""
    try:
        con = _open(p)
    except sqlite3.Error as exc:
        raise SAMFileError(f"cannot read {p} as {WHAT}: {exc}") from None
    try:
        sids = [row[0] for row in con.execute(
            f"SELECT session_id FROM {TABLE} GROUP BY session_id ORDER BY MIN(id), session_id")]
        for sid in sids:
            rows = con.execute(f"SELECT id, message_data FROM {TABLE} WHERE session_id IS ? ORDER BY id", (sid,))
            where = f"{p}: session {sid}"
            yield _session(sid, rows, where), where
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
