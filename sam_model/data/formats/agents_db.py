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
from itertools import chain
from pathlib import Path
from typing import Any

from sam_model.data.formats.base import TranscriptFormatError, unread_database
from sam_model.data.formats.sqlitestores import holds, opened
from sam_model.io import SAMFileError

TABLE = "agent_messages"  # SQLiteSession's default messages_table
COLUMNS = {"id", "session_id", "message_data"}
STRUCTURE = {"session_id", "message_id", "branch_id", "sequence_number"}  # AdvancedSQLiteSession's branches
WHAT = "an OpenAI Agents SDK session database"


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
    return holds(p, lambda con: bool(tables(con)), WHAT)


def _branches(con: sqlite3.Connection, table: str) -> Iterator[tuple[Any, Any, str, Iterator[tuple[Any, Any]]]]:
    """(name, group, where, rows) for an AdvancedSQLiteSession database's conversations, a branch each: its
    ``message_structure`` lists each branch's items in order (a branch from a turn shares the items before it), and
    all the rows read as one conversation merged a branch's rewritten turn into the original's, as if the user had
    said both (a walkthrough's). The main branch is named by the session id, another by the id and the branch, in
    the order of their first structure rows; items of no branch (a plain SQLiteSession's rows beside) end their
    session's main branch, or are read as a plain session after the branches. A session's branches are its group:
    they share a split, as they share their first turns. One branch's rows are read at a time."""
    t = _quoted(table)
    loose = f"FROM {t} WHERE id NOT IN (SELECT message_id FROM message_structure)"
    stray = [row[0] for row in con.execute(
        f"SELECT session_id {loose} GROUP BY session_id ORDER BY MIN(id), session_id")]
    pairs = con.execute(f"SELECT s.session_id, s.branch_id FROM message_structure s JOIN {t} m ON m.id = s.message_id "
                        "GROUP BY s.session_id, s.branch_id ORDER BY MIN(s.id), s.session_id, s.branch_id").fetchall()
    mains, strays = {sid for sid, branch in pairs if branch == "main"}, set(stray)
    where = "" if table == TABLE else f"table {table}, "
    for sid, branch in pairs:
        rows: Iterator[tuple[Any, Any]] = con.execute(
            f"SELECT m.id, m.message_data FROM {t} m JOIN message_structure s ON m.id = s.message_id "
            "WHERE s.session_id IS ? AND s.branch_id IS ? ORDER BY s.sequence_number, s.id", (sid, branch))
        if branch == "main" and sid in strays:
            rows = chain(rows, con.execute(f"SELECT id, message_data {loose} AND session_id IS ? ORDER BY id", (sid,)))
        name = sid if branch == "main" else f"{sid}_{branch}"
        yield name, sid, f"{where}session {name}", rows
    for sid in stray:
        if sid not in mains:
            rows = con.execute(f"SELECT id, message_data {loose} AND session_id IS ? ORDER BY id", (sid,))
            yield sid, sid, f"{where}session {sid}", rows


def _plain(con: sqlite3.Connection, found: list[str]) -> Iterator[tuple[Any, Any, str, Iterator[tuple[Any, Any]]]]:
    """(name, group, where, rows) for each session of each messages table (the tables by name), in the order of their
    first items (ties by session id). Two tables' sessions are two apps': where a file holds several, a session is
    named by its table and id, never merged with another table's of its id. One session's rows are read at a time."""
    for table in found:
        t = _quoted(table)
        sids = [row[0] for row in con.execute(
            f"SELECT session_id FROM {t} GROUP BY session_id ORDER BY MIN(id), session_id")]
        for sid in sids:
            rows = con.execute(f"SELECT id, message_data FROM {t} WHERE session_id IS ? ORDER BY id", (sid,))
            where = f"session {sid}" if table == TABLE else f"table {table}, session {sid}"
            name = sid if len(found) == 1 else f"{table}_{sid}"
            yield name, name, where, rows


def sessions(p: Path) -> Iterator[tuple[Any, str]]:
    """(a session's conversation or the error reading it, where) for each session (each branch of an
    AdvancedSQLiteSession's), in a stable order; a row whose message_data is no JSON object fails its session alone,
    naming the row. One session's rows are held at a time: a database of years of sessions is read in the memory of
    its longest."""
    con = opened(p, WHAT)
    try:
        found = tables(con)
        if len(found) == 1 and STRUCTURE <= {row[1] for row in con.execute("PRAGMA table_info(message_structure)")}:
            conversations = _branches(con, found[0])
        else:
            conversations = _plain(con, found)
        for name, group, where, rows in conversations:
            doc = _session(name, rows, f"{p}: {where}")
            yield ({**doc, "group": group} if isinstance(doc, dict) and group != name else doc), f"{p}: {where}"
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
