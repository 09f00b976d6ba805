"""A folder of Agent Framework sessions (a FileSessionStore's or FileHistoryProvider's .msgpack files) holding a
.msgpack of another program (a cache): it refused the whole folder, read as a session snapshot that does not decode,
or went without a word where it decoded. It is passed over now with one warning naming it, told by its first bytes:
a store's file opens with a map of a session's (type "session", session_id) or, after a record's length, a
message's keys. A store's file damaged after those bytes is still refused naming the file and the byte (its
sessions are never dropped without a word)."""

from __future__ import annotations

import logging
import struct

import pytest
from test_agent_framework_msgpack import _pack, _records
from test_formats import agent_framework_messages, agent_framework_session

from sam_model.data.formats.agent_framework import unpacked
from sam_model.data.transcripts import TranscriptFormatError, iter_transcript_events

OTHERS = {"a cache's map": _pack({"etag": "abc", "expires": 1796600000, "body": [1, 2, 3]}),
          "a stream of values": _pack([1, 2]) + _pack({"k": "v"}) + _pack("x"),
          "bytes MessagePack never uses": b"\xc1\xc1\xc1 not msgpack",
          "a record of no message": _records([{"user": "mia", "score": 3}]),
          "a map of a session-like type": _pack({"type": "cache", "session_id": "s-1"}),
          "an empty file": b""}


def _store(tmp_path):
    """An app folder of one packed session snapshot and one packed history, and the events they read as alone."""
    app = tmp_path / "app"
    (app / "sessions").mkdir(parents=True)
    (app / "sessions" / "conv-1.msgpack").write_bytes(_pack({**agent_framework_session(), "version": "1.0"}))
    (app / "history").mkdir()
    (app / "history" / "conv-2.msgpack").write_bytes(_records(agent_framework_messages()))
    return app, list(iter_transcript_events(app))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "passed over" in r.getMessage()]


@pytest.mark.parametrize("case", OTHERS)
def test_another_programs_msgpack_is_passed_over_with_one_warning_naming_it(tmp_path, caplog, case):
    app, alone = _store(tmp_path)
    assert alone
    cache = app / "sessions" / "cache.msgpack"
    cache.write_bytes(OTHERS[case])
    with caplog.at_level(logging.WARNING):
        events = list(iter_transcript_events(app))
    assert events == alone
    said = _warnings(caplog)
    assert len(said) == 1 and said[0].startswith(f"{cache} ") and "\n" not in said[0], said
    assert said[0].endswith(": passed over, as no Agent Framework session"), said


def _snapshot_damaged_at(raw: bytes, at: int) -> bytes:
    return raw[:at] + b"\xc1" + raw[at + 1:]


@pytest.mark.parametrize("damage", ["cut short", "a reserved byte in its state", "its first record cut short"])
def test_a_store_file_damaged_after_its_first_keys_still_refuses_the_folder_naming_file_and_byte(tmp_path, damage):
    app, _ = _store(tmp_path)
    raw = _pack({**agent_framework_session(), "version": "1.0"})
    path = app / "sessions" / "conv-1.msgpack"
    if damage == "cut short":
        path.write_bytes(raw[:len(raw) // 2])
    elif damage == "a reserved byte in its state":
        path.write_bytes(_snapshot_damaged_at(raw, raw.index(b"messages") + 20))
    else:
        path = app / "history" / "conv-2.msgpack"
        first = _pack(agent_framework_messages()[0])
        path.write_bytes(struct.pack(">I", len(first)) + first[:len(first) // 2])
    assert unpacked(path) is None  # its first bytes are a store's
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(app))
    said = str(err.value)
    assert said.startswith(str(path)) and "byte" in said and "\n" not in said, said


def test_a_session_whose_first_keys_are_damaged_cannot_be_told_and_is_said_passed_over(tmp_path, caplog):
    """Documents behaviour (docs/formats.md): a snapshot damaged in its first bytes (its type and id unreadable) is
    told from no other program's file: passed over, with the warning naming it, never silently."""
    app, alone = _store(tmp_path)
    raw = _pack({**agent_framework_session(), "version": "1.0"})
    bad = app / "sessions" / "conv-9.msgpack"
    bad.write_bytes(_snapshot_damaged_at(raw, 6))
    with caplog.at_level(logging.WARNING):
        assert list(iter_transcript_events(app)) == alone
    assert [w for w in _warnings(caplog) if str(bad) in w]


def test_the_summary_ends_naming_the_files_passed_over(tmp_path, capsys):
    """sam-data transcripts on a folder of many sessions: the warning is the output's first line, above the whole
    summary, where a session damaged in its first bytes went unnoticed. The summary ends saying how many files were
    passed over and which, once (not again for --split's grouping pass); none passed over, no such line."""
    from sam_model.data.transcripts import ImportReport, main

    app, _ = _store(tmp_path)
    assert main([str(app), str(tmp_path / "clean.jsonl")]) == 0
    assert "passed over" not in capsys.readouterr().out
    raw = _pack({**agent_framework_session(), "version": "1.0"})
    bad = app / "sessions" / "conv-9.msgpack"
    bad.write_bytes(_snapshot_damaged_at(raw, 6))
    (app / "history" / "cache.msgpack").write_bytes(OTHERS["a cache's map"])
    assert main([str(app), str(tmp_path / "out.jsonl"), "--split", "train"]) == 0
    last = capsys.readouterr().out.rstrip("\n").splitlines()[-1]
    assert last.startswith("2 files of the folder passed over as no session"), last
    assert last.endswith(f": {app / 'history' / 'cache.msgpack'}, {bad}"), last
    report = ImportReport()
    list(iter_transcript_events(app, report=report))
    assert report.passed == [str(app / "history" / "cache.msgpack"), str(bad)]
