"""Agent Framework's MessagePack stores (serialization_format="msgpack": a FileSessionStore's <session_id>.msgpack
snapshot, a FileHistoryProvider's <session_id>.msgpack of length-prefixed records), read as their JSON is: the
reader took none of them (docs/training.md said so). Files packed here by hand (so the tests run without the
package), and files the real package writes (agent-framework-core 1.26 with msgspec, where it is installed)."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import struct
from typing import Any

import pytest
from test_formats import agent_framework_messages, agent_framework_session

from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

needs_maf = pytest.mark.skipif(importlib.util.find_spec("agent_framework") is None,
                               reason="agent-framework-core is not installed (run with its environment)")


def _pack(v: Any) -> bytes:
    """MessagePack of a JSON value, as the spec writes it (the widest forms, which a reader must take too)."""
    if v is None or isinstance(v, bool):
        return {None: b"\xc0", False: b"\xc2", True: b"\xc3"}[v]
    if isinstance(v, int):
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        data = v.encode()
        return b"\xdb" + struct.pack(">I", len(data)) + data
    if isinstance(v, list):
        return b"\xdd" + struct.pack(">I", len(v)) + b"".join(map(_pack, v))
    return b"\xdf" + struct.pack(">I", len(v)) + b"".join(_pack(k) + _pack(x) for k, x in v.items())


def _records(messages: list[dict]) -> bytes:
    """A FileHistoryProvider's MessagePack file: each message's length (4 bytes, big-endian), then the message."""
    return b"".join(len(r).to_bytes(4, "big") + r for r in map(_pack, messages))


def _read(path) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report)), report


def _same(events: list[dict], want: list[dict]) -> None:
    assert events and [{k: v for k, v in e.items() if k != "source"} for e in events] == [
        {k: v for k, v in e.items() if k != "source"} for e in want]


def test_a_packed_snapshot_reads_as_its_json(tmp_path):
    session = {**agent_framework_session(), "version": "1.0"}
    (tmp_path / "conv-1.json").write_text(json.dumps(session))
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "conv-1.msgpack").write_bytes(_pack(session))
    want, _ = _read(tmp_path / "conv-1.json")
    for path in (tmp_path / "store" / "conv-1.msgpack", tmp_path / "store"):
        events, report = _read(path)
        _same(events, want)
        assert report.formats == {"agent-framework": 1}


def test_packed_history_records_read_as_the_jsonl(tmp_path):
    (tmp_path / "conv-1.jsonl").write_text("".join(json.dumps(m) + "\n" for m in agent_framework_messages()))
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "conv-1.msgpack").write_bytes(_records(agent_framework_messages()))
    want, _ = _read(tmp_path / "conv-1.jsonl")
    for path in (tmp_path / "history" / "conv-1.msgpack", tmp_path / "history"):
        events, report = _read(path)
        _same(events, want)
        assert report.formats == {"agent-framework": 1} and {e["episode_id"] for e in events} == {"conv-1"}


def test_a_snapshot_cut_short_is_refused_in_one_line_naming_the_file(tmp_path, capsys):
    raw = _pack(agent_framework_session())
    path = tmp_path / "conv-1.msgpack"
    path.write_bytes(raw[:-7])
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    said = str(err.value)
    assert said.startswith(f"{path}: not a MessagePack session snapshot: cut short") and "\n" not in said
    (tmp_path / "store").mkdir()  # in a folder too: refused naming it, not passed over
    (tmp_path / "store" / "conv-1.msgpack").write_bytes(raw[:-7])
    with pytest.raises(TranscriptFormatError, match="conv-1.msgpack: not a MessagePack session snapshot"):
        list(iter_transcript_events(tmp_path / "store"))
    assert main([str(path), str(tmp_path / "out.jsonl")]) == 1
    assert str(path) in capsys.readouterr().err


def test_a_history_cut_short_names_the_record(tmp_path):
    raw = _records(agent_framework_messages())
    path = tmp_path / "conv-1.msgpack"
    path.write_bytes(raw[:-3])
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    n = len(agent_framework_messages())
    said = str(err.value)
    assert said.startswith(f"{path}, record {n}: the record at byte ") and f"records 1-{n - 1} were read" in said
    assert "\n" not in said


def test_a_packed_extension_is_data_not_code(tmp_path):
    """An extension value (type 42 here) is its bytes, read as base64 text, as msgspec's JSON writes bytes."""
    session = copy.deepcopy(agent_framework_session())  # its arguments are test_formats' own objects
    session["state"]["in_memory"]["messages"][1]["contents"][1]["arguments"]["tag"] = "EXT"
    raw = _pack(session)
    marker = _pack("EXT")
    path = tmp_path / "conv-1.msgpack"
    path.write_bytes(raw.replace(marker, b"\xd4\x2a!"))
    events, _ = _read(path)
    assert events and "IQ==" in json.dumps(events)


async def _real_stores(tmp_path, fmt: str) -> None:
    """A real Agent's session (two tools, the second raising) kept by a FileSessionStore, and by a
    FileHistoryProvider, of ``fmt`` (json or msgpack), under tmp_path/fmt."""
    from agent_framework import Agent, FileHistoryProvider, FileSessionStore
    from maf_fake import ScriptedClient, shipment_desk

    out = tmp_path / fmt
    for providers in ([], [FileHistoryProvider(out / "history", serialization_format=fmt)]):
        for sid in ("ship-1", "Mia:Ticket-42"):  # an id the stores write as it is, one they encode in the name
            tools, script = shipment_desk()
            agent = Agent(client=ScriptedClient(script), instructions="x", tools=tools, context_providers=providers)
            session = agent.create_session(session_id=sid)
            await agent.run("Where is TRK123? Rebook it.", session=session)
            store = "store" if not providers else "app/sessions"  # the app's snapshots beside their history
            await FileSessionStore(out / store, serialization_format=fmt).set(sid, session)
    (out / "history").rename(out / "app" / "history")


@needs_maf
def test_stores_the_real_package_packs_read_as_its_json_ones(tmp_path):
    asyncio.run(_real_stores(tmp_path, "json"))
    asyncio.run(_real_stores(tmp_path, "msgpack"))
    packed = sorted(q.name for q in (tmp_path / "msgpack").rglob("*") if q.is_file())
    assert packed and all(name.endswith(".msgpack") for name in packed)
    for where in ("store", "app", "app/history"):
        want, _ = _read(tmp_path / "json" / where)
        events, report = _read(tmp_path / "msgpack" / where)
        _same(events, want)
        assert report.formats == {"agent-framework": 2}, where
        assert sorted({e["episode_id"] for e in events}) == ["Mia_Ticket-42", "ship-1"]
        assert sum(e["kind"] == "action" for e in events) == 4  # each session's two calls, once
        results = [e["state"]["last_action_result"] for e in events if e["kind"] == "result"]
        assert sum(r.startswith("rebook: error") for r in results) == 2  # the tool that raised
    for q in (tmp_path / "msgpack" / "store").iterdir():  # each file alone too
        assert _read(q)[0]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")], ids=["nan", "inf", "-inf"])
def test_nan_or_infinity_is_refused_as_in_the_json_naming_the_file_and_record(tmp_path, bad):
    """A tool call's argument of NaN (a model's float): FileHistoryProvider writes its JSON line with Python's bare
    NaN, which the reader refuses (no JSON reader, ours included, reads a log written from it back), but its
    MessagePack was read, and the converted log held the bare NaN in its events. Refused alike now, in one line
    naming the file and the record; a snapshot's likewise (FileSessionStore refuses to write one, a hand-made file
    may hold it)."""
    messages = agent_framework_messages()
    messages[1]["contents"][1]["arguments"] = {"threshold": bad}
    path = tmp_path / "conv-1.msgpack"
    path.write_bytes(_records(messages))
    (tmp_path / "conv-1.jsonl").write_text("".join(json.dumps(m) + "\n" for m in messages))
    with pytest.raises(TranscriptFormatError, match="invalid JSON"):  # the JSON twin's refusal
        list(iter_transcript_events(tmp_path / "conv-1.jsonl"))
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    said = str(err.value)
    assert said.startswith(f"{path}, record 2: ") and "NaN or Infinity" in said and "\n" not in said
    session = agent_framework_session()
    session["state"]["in_memory"]["messages"] = messages
    path.write_bytes(_pack(session))
    with pytest.raises(TranscriptFormatError, match=f"^{path}: .*NaN or Infinity"):
        list(iter_transcript_events(path))


def test_a_record_s_length_cut_short_is_said_so(tmp_path):
    """A file cut inside a record's 4-byte length: the bytes there were read as a length ("says 5 bytes and 0 are
    left", a length no byte wrote), not named as the length cut short (the package's own "truncated length header")."""
    raw = _records(agent_framework_messages())
    path = tmp_path / "conv-1.msgpack"
    path.write_bytes(raw + b"\x00\x00\x05")
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    n = len(agent_framework_messages()) + 1
    assert str(err.value) == (f"{path}, record {n}: the file ends inside the record's length at byte {len(raw)} (3 of "
                              f"its 4 bytes): it was cut short there (a write cut short?); records 1-{n - 1} were read")
