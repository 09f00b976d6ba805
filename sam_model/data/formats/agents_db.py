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

from sam_model.data.formats.base import TranscriptFormatError
from sam_model.io import SAMFileError

TABLE = "agent_messages"  # SQLiteSession's default messages_table
COLUMNS = {"id", "session_id", "message_data"}


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
        raise SAMFileError(f"cannot read {p} as an OpenAI Agents SDK session database: {exc} (an app writing it?): "
                           f"retry when the app is idle, or convert a copy (sqlite3 {p} '.backup COPY.db')") from None
    except (OSError, sqlite3.Error):
        return False


def sessions(p: Path) -> Iterator[tuple[Any, str]]:
    """(a session's conversation or the error reading it, where) for each session, in the order of their first
    items; a row whose message_data is no JSON object fails its session alone, naming the row."""
    try:
        con = _open(p)
        try:
            rows = con.execute(f"SELECT session_id, id, message_data FROM {TABLE} ORDER BY id").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SAMFileError(f"cannot read {p} as an OpenAI Agents SDK session database: {exc}") from None
    items: dict[Any, list[dict[str, Any]]] = {}
    bad: dict[Any, str] = {}
    for sid, rid, data in rows:
        items.setdefault(sid, [])
        try:
            item = json.loads(data)
            if not isinstance(item, dict):
                raise ValueError(f"is {type(item).__name__}, expected an input item object")
        except ValueError as exc:
            bad.setdefault(sid, f"row {rid}: message_data {exc}")
            continue
        items[sid].append(item)
    for sid, listed in items.items():
        where = f"{p}: session {sid}"
        yield (TranscriptFormatError(where, bad[sid]) if sid in bad else {"id": sid, "messages": listed}), where
