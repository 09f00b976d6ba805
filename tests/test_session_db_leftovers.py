"""Leftovers of the two session-database readers (Google ADK's adk_db, the OpenAI Agents SDK's agents_db) and of the
store's scope checks: a folder's SQLite file that cannot be read was skipped as "no store" without a word, its
sessions lost; the two readers' sessions() yield one shape; storechecks' warning of scopes no add takes had a name
(unprintable_scopes) that said less than it covers."""

from __future__ import annotations

import logging
import sqlite3
import unicodedata
from types import SimpleNamespace

import pytest
from test_format_openai_agents_db import ITEMS, _database

from sam_model.data.formats import adk_db, agents_db
from sam_model.data.formats.sqlitestores import MAGIC
from sam_model.data.transcripts import iter_transcript_events
from sam_model.io import SAMFileError


@pytest.mark.parametrize("reader", [adk_db, agents_db])
def test_a_damaged_sqlite_file_is_refused_naming_it_not_skipped(tmp_path, reader):
    """An SQLite header over pages that do not read (a copy cut short, a damaged disk): taken for no store."""
    damaged = tmp_path / "sessions.db"
    damaged.write_bytes(MAGIC + b"\x00" * 84 + b"not the pages of a database" * 40)
    with pytest.raises(SAMFileError, match=r"sessions\.db as an SQLite database \(.*\), which may be .*session "
                                           r"database.*recover it"):
        reader.is_store(damaged)


def test_a_folder_holding_a_damaged_sqlite_file_beside_its_runs_is_refused_naming_it(tmp_path):
    (tmp_path / "app").mkdir()
    _database(tmp_path / "app" / "conversations.db", {"conv-1": ITEMS})
    (tmp_path / "app" / "old.db").write_bytes(MAGIC + b"\x01" * 2000)
    with pytest.raises(SAMFileError, match=r"old\.db as an SQLite database"):
        list(iter_transcript_events(tmp_path))


def test_files_that_are_no_sqlite_or_another_apps_database_are_still_no_store(tmp_path):
    (tmp_path / "notes.db").write_text("a text file named .db")
    (tmp_path / "empty.db").write_bytes(b"")
    with sqlite3.connect(tmp_path / "cache.db") as con:
        con.execute("CREATE TABLE kv (k TEXT, v TEXT)")
    con.close()
    for name in ("notes.db", "empty.db", "cache.db"):
        assert not adk_db.is_store(tmp_path / name) and not agents_db.is_store(tmp_path / name)


@pytest.mark.parametrize("value", ["ann\nlee", "ann\u200blee", unicodedata.normalize("NFD", "rené")])
def test_the_warning_of_scopes_no_add_takes_is_named_for_every_flaw_it_covers(caplog, value):
    """storechecks.unprintable_scopes warned of invisible characters and forms other than NFC too, which print: one
    name for it, flawed_scopes (scope_flaw's); the old name still imports, the same function."""
    from sam_model import storechecks
    from sam_model.storechecks import unprintable_scopes

    assert unprintable_scopes is storechecks.flawed_scopes
    with caplog.at_level(logging.WARNING, logger="sam_model.storechecks"):
        storechecks.flawed_scopes([SimpleNamespace(id="m1", user_id=value, agent_id=None, run_id=None)], "store.json")
    assert len(caplog.records) == 1 and "store.json: user_id" in caplog.records[0].getMessage()


def test_both_readers_refuse_a_database_they_cannot_open_in_one_shape_saying_what_to_do(tmp_path):
    """ADK's said "cannot read X as an SQLite database: E", the Agents SDK's "cannot read X as an OpenAI Agents SDK
    session database: E", neither what to do."""
    folder = tmp_path / "sessions.db"  # a folder of a database's name: SQLite cannot open it
    folder.mkdir()
    said = []
    for reader, what in [(adk_db, "a Google ADK session database"), (agents_db, "an OpenAI Agents SDK session database")]:
        with pytest.raises(SAMFileError) as err:
            list(reader.sessions(folder))
        said.append(str(err.value).replace(what, "WHAT"))
        assert str(err.value).startswith(f"cannot open {folder} as {what} (") and "'.backup COPY.db'" in str(err.value)
    assert said[0] == said[1] and "\n" not in said[0]


def test_the_commands_a_refusal_gives_run_on_a_path_with_spaces(tmp_path):
    """An app's database lives in "~/Library/Application Support/APP" on macOS: the refusals' commands named the
    path bare, so "sqlite3 .../Application Support/APP/sessions.db '.recover'" recovered no file of that name."""
    import shlex

    folder = tmp_path / "Application Support" / "app"
    folder.mkdir(parents=True)
    damaged = folder / "sessions.db"
    damaged.write_bytes(MAGIC + b"\x00" * 84 + b"not the pages of a database" * 40)
    with pytest.raises(SAMFileError) as err:
        agents_db.is_store(damaged)
    assert f"sqlite3 {shlex.quote(str(damaged))} '.recover'" in str(err.value)
    unopened = folder / "other.db"
    unopened.mkdir()
    with pytest.raises(SAMFileError) as err:
        list(adk_db.sessions(unopened))
    assert f"sqlite3 {shlex.quote(str(unopened))} '.backup COPY.db'" in str(err.value)
