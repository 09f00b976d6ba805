"""A folder of logs holding a file named as a database that is no SQLite file: a Windows Thumbs.db (which Explorer
holds locked), an empty sessions.db. A Thumbs.db that could not be opened refused the whole folder; one empty or of
another program went without a word. Each is passed over now with one warning naming it and why; an SQLite file
whose pages do not read, and any other file that cannot be opened, are still refused (their sessions would be
lost)."""

from __future__ import annotations

import builtins
import logging
import os

import pytest
from test_format_openai_agents_db import ITEMS, _database

from sam_model.data.formats.sqlitestores import MAGIC
from sam_model.data.transcripts import iter_transcript_events
from sam_model.io import SAMFileError

OLE_HEAD = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # a Thumbs.db is an OLE compound file


def _app(tmp_path):
    (tmp_path / "app").mkdir()
    _database(tmp_path / "app" / "conversations.db", {"conv-1": ITEMS})
    return list(iter_transcript_events(tmp_path / "app" / "conversations.db"))


def _deny(monkeypatch, path) -> None:
    """Opening ``path`` raises PermissionError, as a locked or another user's file does (chmod binds no root)."""
    real_open = builtins.open

    def denying(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) == os.fspath(path):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denying)


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "passed over" in r.getMessage()]


@pytest.mark.parametrize(("name", "content", "why"), [("Thumbs.db", OLE_HEAD + b"\x00" * 600, "is not an SQLite file"),
                                                      ("sessions.db", b"", "is empty"),
                                                      ("notes.sqlite", b"a text file", "is not an SQLite file")])
def test_a_file_that_is_no_sqlite_is_passed_over_with_one_warning_naming_it(tmp_path, caplog, name, content, why):
    alone = _app(tmp_path)
    odd = tmp_path / "app" / name
    odd.write_bytes(content)
    with caplog.at_level(logging.WARNING):
        events = list(iter_transcript_events(tmp_path))
    assert events == alone and events
    said = _warnings(caplog)
    assert said == [f"{odd} {why}: passed over, as no session database"]


def test_a_file_that_cannot_be_opened_is_passed_over_saying_what_to_do(tmp_path, caplog, monkeypatch):
    """A locked Thumbs.db or a file of another user's: it refused the whole folder."""
    alone = _app(tmp_path)
    thumbs = tmp_path / "app" / "Thumbs.db"
    thumbs.write_bytes(OLE_HEAD)
    _deny(monkeypatch, thumbs)
    with caplog.at_level(logging.WARNING):
        events = list(iter_transcript_events(tmp_path))
    assert events == alone and events
    said = _warnings(caplog)
    assert len(said) == 1 and "\n" not in said[0]
    assert said[0].startswith(f"{thumbs} cannot be opened (Permission denied; ") and "thumbnail cache" in said[0]


def test_an_sqlite_file_that_does_not_read_still_refuses_the_folder(tmp_path, caplog):
    _app(tmp_path)
    (tmp_path / "app" / "empty.db").write_bytes(b"")
    (tmp_path / "app" / "old.db").write_bytes(MAGIC + b"\x01" * 2000)
    with pytest.raises(SAMFileError, match=r"old\.db as an SQLite database .*recover it") as err:
        list(iter_transcript_events(tmp_path))
    assert "\n" not in str(err.value)


def test_a_folder_is_told_a_folder_of_runs_with_such_a_file_beside_them(tmp_path, monkeypatch):
    """source_kind asks the layouts before the read: an unreadable file there refused the folder too."""
    from sam_model.data.sources import source_kind

    _app(tmp_path)
    thumbs = tmp_path / "app" / "Thumbs.db"
    thumbs.write_bytes(OLE_HEAD)
    _deny(monkeypatch, thumbs)
    assert source_kind(tmp_path) == "transcripts"


@pytest.mark.parametrize("name", ["support.db", "sessions.sqlite3", "session.db"])
def test_a_database_of_the_user_s_that_cannot_be_opened_still_refuses_the_folder(tmp_path, caplog, monkeypatch, name):
    """A file that cannot be opened cannot be told from the user's session database (an app's sessions.db of
    another user's permissions): passed over with a warning, the folder converted without its sessions and exited
    0. Only Windows' thumbnail caches (Thumbs.db, which Explorer holds locked) are passed over unread; any other such
    file refuses the folder in one line naming it and what to do, as before the pass-over came."""
    _app(tmp_path)
    (tmp_path / "app" / "Thumbs.db").write_bytes(OLE_HEAD)
    (tmp_path / "app" / "ehthumbs.db").write_bytes(OLE_HEAD)
    locked = tmp_path / "app" / name
    _database(locked, {"conv-2": ITEMS})
    real_open = builtins.open

    def denying(file, *args, **kwargs):  # the user's database and both caches cannot be opened
        if isinstance(file, (str, os.PathLike)) and os.path.basename(file) in (name, "Thumbs.db", "ehthumbs.db"):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denying)
    with caplog.at_level(logging.WARNING), pytest.raises(SAMFileError) as err:
        list(iter_transcript_events(tmp_path))
    said = str(err.value)
    assert said.startswith(f"cannot read {locked} (Permission denied)") and "make it readable" in said
    assert "\n" not in said
