"""What the readers of agent frameworks' SQLite session databases share (Google ADK's, adk_db; the OpenAI Agents
SDK's, agents_db): telling an SQLite file by its header, opening it read-only, and asking whether it holds a
reader's tables, where a writer's lock is said, not taken for "no store". Each reader wrote its own: the Agents SDK's
never checked the header, and each caught the lock apart."""

from __future__ import annotations

import shlex
import sqlite3
from collections.abc import Callable
from pathlib import Path

from sam_model.data.formats.base import unread_database
from sam_model.io import SAMFileError

MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
SUFFIXES = (".db", ".sqlite", ".sqlite3")  # the names a folder's session databases are looked for by
# Windows Explorer's thumbnail caches (lowercased): named as databases, never sessions, held locked while browsed
THUMBNAIL_CACHES = frozenset({"thumbs.db", "ehthumbs.db", "ehthumbs_vista.db"})


def is_database(head: bytes) -> bool:
    """A file whose first bytes are SQLite's header."""
    return head.startswith(MAGIC)


def is_sqlite(p: Path) -> bool:
    """A file that opens with SQLite's header (one that cannot be read: no, its reader names the fault)."""
    try:
        with open(p, "rb") as fh:
            return is_database(fh.read(len(MAGIC)))
    except OSError:
        return False


def unopened(p: Path) -> str | None:
    """Why a file a folder names as a database (:data:`SUFFIXES`) is no SQLite file, so no log to read (None: it
    opens with SQLite's header, or may be a session database: :func:`holds` reads or refuses it): empty, another
    program's file (Windows' Thumbs.db), or a thumbnail cache that cannot be opened (Explorer holds Thumbs.db locked).
    Such a file refused the whole folder, or was passed over without a word: its folder passes it over saying why,
    as the user's data is never in it. Any other file that cannot be opened may be the user's sessions (an app's
    sessions.db of another user's permissions): passed over, the folder was converted without them."""
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError as exc:
        if p.name.lower() not in THUMBNAIL_CACHES:
            return None
        return f"cannot be opened ({exc.strerror or exc}; Windows' thumbnail cache, which Explorer holds locked)"
    return None if is_database(head) else "is empty" if not head else "is not an SQLite file"


def read_only(p: Path) -> sqlite3.Connection:
    """``p`` opened read-only (a running app's database is never written)."""
    return sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)


def opened(p: Path, what: str) -> sqlite3.Connection:
    """``p`` opened read-only for a reader's sessions (ADK's, the Agents SDK's), or one line naming it, ``what`` it was
    read as and what to do: each reader said its own words, ADK's "as an SQLite database", and neither what to do."""
    try:
        return read_only(p)
    except sqlite3.Error as exc:
        raise SAMFileError(f"cannot open {p} as {what} ({exc}): give the database file itself, readable, in a folder "
                           f"SQLite may read, or convert a copy (sqlite3 {_shell(p)} '.backup COPY.db')") from None


def holds(p: Path, test: Callable[[sqlite3.Connection], bool], what: str) -> bool:
    """Whether ``p`` is an SQLite file whose tables pass ``test`` (a folder's other databases, and files that are no
    SQLite, are no runs, not errors). One that may be a store but cannot be told is refused naming ``what`` it may
    be: a file a writer holds locked, one that cannot be opened (its permissions), or an SQLite file whose pages do
    not read (damaged, cut short): skipped as no store, their sessions were dropped without a word."""
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError as exc:
        raise SAMFileError(f"cannot read {p} ({exc.strerror or exc}), which may be {what}: make it readable, or move "
                           "it out of the folder") from None
    if not is_database(head):
        return False
    try:
        con = read_only(p)
        try:
            return test(con)
        finally:
            con.close()
    except sqlite3.OperationalError as exc:  # locked by a writer: maybe a store, so not skipped without a word
        raise SAMFileError(unread_database(p, exc, what)) from None
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        raise SAMFileError(f"cannot read {p} as an SQLite database ({exc}), which may be {what}: recover it "
                           f"(sqlite3 {_shell(p)} '.recover' | sqlite3 RECOVERED.db) and give that, or move it out "
                           "of the folder") from None


def _shell(p: Path) -> str:
    """``p`` as a refusal's command names it: quoted where a shell would split it (an app's folder on macOS is
    "Application Support")."""
    return shlex.quote(str(p))
