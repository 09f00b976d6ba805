"""A walkthrough on an IT-helpdesk agent logged as OpenTelemetry GenAI spans, as a platform team's collector writes
them: a trace a user turn under an ``invoke_agent`` span that carries the conversation id (the model client's
``chat`` spans below it know none) and, where content capture is on for agents too, that turn's input and answer;
the file exporter's JSON Lines in a ``.json`` (its documentation's ``traces.json``) and its rotated files in one
folder, a conversation's spans spread over them as each span ends. Each case was read wrongly before:
a conversation split a turn a trace, a turn's answer read before the calls that made it, a folder refused as
OpenHands trajectories, the exporter's file refused as "more than one JSON document"."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from sam_model.data.formats import otel
from sam_model.data.formats.files import conversations
from sam_model.data.transcripts import iter_transcript_events

EMAIL, USER_ID, POOL = "priya.sharma@northwind.example", "u-48213", "POOL-EU-VISIO-2"
text = lambda role, t: {"role": role, "parts": [{"type": "text", "content": t}]}  # noqa: E731
call = lambda i, n, a: {"role": "assistant", "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a}]}  # noqa: E731
result = lambda i, r: {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": r}]}  # noqa: E731

TURN1 = [text("user", f"Can I get a Visio licence? {EMAIL}"),
         call("c1", "lookup_user", {"email": EMAIL}), result("c1", {"user_id": USER_ID, "department": "HR"}),
         call("c2", "list_licence_pools", {"product": "Visio"}), result("c2", {"pools": [{"pool_id": POOL}]}),
         text("assistant", f"I can assign Visio from {POOL}. Shall I go ahead?")]
TURN2 = [text("user", "ok, go ahead"),
         call("c3", "assign_licence", {"user_id": USER_ID, "product": "Visio", "pool_id": POOL}),
         result("c3", {"licence_key": "7F3A2-9C1B0", "assignment_id": "LA-55120"}),
         text("assistant", "Assigned. Your key is 7F3A2-9C1B0.")]
CONV = "hd-7c1e"


def attr(k: str, v: str) -> dict:
    return {"key": k, "value": {"stringValue": v}}


def turn(trace: str, before: list[dict], new: list[dict], t0: int, agent_content: bool = False,
         chat_ids: bool = False) -> list[dict]:
    """A user turn's trace: an ``invoke_agent`` root with the conversation id (and, with ``agent_content``, the
    turn's user message and final answer), a ``chat`` span a model call below it (the id only with ``chat_ids``)."""
    root = f"{trace}-root"
    history, spans = [*before, new[0]], []
    for n, m in enumerate(new[1:]):
        if m["role"] == "assistant":
            spans.append({"traceId": trace, "spanId": f"{trace}-c{n}", "parentSpanId": root,
                          "startTimeUnixNano": str(t0 + 10 * (n + 1)),
                          "attributes": [attr("gen_ai.operation.name", "chat"),
                                         *([attr(otel.CONVERSATION, CONV)] if chat_ids else []),
                                         attr(otel.INPUT, json.dumps(history)),
                                         attr(otel.OUTPUT, json.dumps([{**m, "finish_reason": "stop"}]))]})
        history.append(m)
    agent = [attr("gen_ai.operation.name", "invoke_agent"), attr(otel.CONVERSATION, CONV)]
    if agent_content:
        agent += [attr(otel.INPUT, json.dumps(new[:1])), attr(otel.OUTPUT, json.dumps(new[-1:]))]
    spans.append({"traceId": trace, "spanId": root, "startTimeUnixNano": str(t0), "attributes": agent})
    return spans


def otlp(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "helix")]},
                               "scopeSpans": [{"scope": {"name": "openai_v2"}, "spans": spans}]}]}


def read(spans: list[dict]) -> list[otel.Conversation]:
    out = list(otel.conversations([(otlp(spans), "t.json:1")], "t.json", str))
    assert all(isinstance(c, otel.Conversation) for c in out), out
    return out


def plain(messages: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if k != "finish_reason"} for m in messages]


def test_chat_spans_take_the_conversation_id_of_their_agent_span():
    """Each turn a trace, the id on the invoke_agent span only: read by the chat spans' own attributes, the two
    turns were two conversations (named by their traces), the second repeating the first whole."""
    spans = [*turn("t2", TURN1, TURN2, 2000), *turn("t1", [], TURN1, 1000)]
    (conv,) = read(spans)
    assert conv.group == CONV and plain(conv.messages) == [*TURN1, *TURN2]


def test_a_trace_of_one_conversation_id_groups_its_spans_without_a_parent_link():
    """A chat span whose parent is not in the file (an exporter that drops it) still joins its trace's one id."""
    spans = [*turn("t1", [], TURN1, 1000), *turn("t2", TURN1, TURN2, 2000)]
    for s in spans:
        s.pop("parentSpanId", None)
    (conv,) = read(spans)
    assert plain(conv.messages) == [*TURN1, *TURN2]


def test_an_agent_spans_turn_is_not_read_beside_its_model_calls(caplog):
    """Content capture on invoke_agent too: its input (the turn's user message) and output (the final answer) were
    joined first, as the span starts first, so the answer came before the calls that made it, each turn was a new
    segment with a warning, and the user's words were read twice."""
    spans = [*turn("t1", [], TURN1, 1000, agent_content=True, chat_ids=True),
             *turn("t2", TURN1, TURN2, 2000, agent_content=True, chat_ids=True)]
    with caplog.at_level(logging.WARNING):
        (conv,) = read(spans)
    assert plain(conv.messages) == [*TURN1, *TURN2]
    assert "repeats none" not in caplog.text


def test_an_agent_span_alone_is_still_read():
    """Guard (passes before): an agent whose model calls are not recorded (a hosted agent): its invoke_agent spans
    are the conversation."""
    spans = [s for s in turn("t1", [], TURN1, 1000, agent_content=True) if "root" in s["spanId"]]
    (conv,) = read(spans)
    assert plain(conv.messages) == [TURN1[0], TURN1[-1]]


def test_the_go_ahead_call_is_labelled_by_the_turns_that_said_its_values(tmp_path):
    """Read whole, the call after "ok, go ahead" traces the user id and the pool to the previous turn's results;
    split a trace a conversation, the second trace's copy of the first turn was labelled instead."""
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(otlp(turn("t2", TURN1, TURN2, 2000))) + "\n"
                    + json.dumps(otlp(turn("t1", [], TURN1, 1000))) + "\n")
    got = list(iter_transcript_events(path))
    assert len({e["episode_id"] for e in got}) == 1
    said = {e["step"]: e["text"] for e in got}
    assign = next(e for i, e in enumerate(got) if got[i + 1:] and "assign_licence" in got[i + 1]["text"]
                  and got[i + 1]["kind"] == "action")
    assert any(USER_ID in said[s] for s in assign["useful_memory_steps"])
    assert any(POOL in said[s] and "pools" in said[s] for s in assign["useful_memory_steps"])


def _files(folder: Path) -> list[dict]:
    """One conversation's spans spread over the collector's rotated files: two JSON Lines files named .json (as the
    file exporter's path in its documentation), and the current one pretty-printed."""
    folder.mkdir()
    t1, t2 = turn("t1", [], TURN1, 1000), turn("t2", TURN1, TURN2, 2000)
    (folder / "traces-2025-12-02T10-00-00.000.json").write_text(
        "\n".join(json.dumps(otlp(t1[i:i + 2])) for i in range(0, len(t1), 2)) + "\n")
    (folder / "traces-2025-12-02T11-00-00.000.jsonl").write_text(json.dumps(otlp(t2[:2])) + "\n")
    (folder / "traces.json").write_text(json.dumps(otlp(t2[2:]), indent=1))
    return [*t1, *t2]


def test_a_folder_of_collector_files_is_read_as_one_export(tmp_path):
    """The folder was read as OpenHands trajectories: "not an OpenHands trajectory: ... got an object with the keys
    resourceSpans"; and file by file each turn was a conversation of its own."""
    spans = _files(tmp_path / "otelcol")
    (conv,) = [c for c in conversations(tmp_path / "otelcol")]
    assert isinstance(conv, otel.Conversation), conv
    assert plain(conv.messages) == plain(read(spans)[0].messages) == [*TURN1, *TURN2]


def test_the_exporters_json_lines_in_a_json_file_are_read(tmp_path):
    """The file exporter writes one export request a line to the path it is given (traces.json): it was refused as
    "the file holds more than one JSON document: ... name it .jsonl"."""
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp(turn("t1", [], TURN1, 1000)[:2])) + "\n"
                    + json.dumps(otlp(turn("t1", [], TURN1, 1000)[2:])) + "\n")
    (conv,) = list(conversations(path))
    assert isinstance(conv, otel.Conversation), conv
    assert plain(conv.messages) == TURN1


def test_a_zstd_compressed_export_is_named_so(tmp_path, capsys):
    """The file exporter's ``compression: zstd`` writes each export as a 4-byte length and a zstd frame: it was
    "not UTF-8 (line 1, byte 2 of the line is 0xb5); re-save the file as UTF-8"."""
    from sam_model.data import transcripts
    from sam_model.io import ZSTD_MAGIC

    line = json.dumps(otlp(turn("t1", [], TURN1, 1000))).encode()
    path = tmp_path / "traces.json"
    path.write_bytes(len(line).to_bytes(4, "big") + ZSTD_MAGIC + b"\x00" * 16)  # a frame's start: what is checked
    assert transcripts.main([str(path), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "zstd-compressed" in err and "compression: zstd" in err and "UTF-8" not in err
    (tmp_path / "whole.json").write_bytes(ZSTD_MAGIC + b"\x00" * 16)  # zstd's own .zst, named .json
    assert transcripts.main([str(tmp_path / "whole.json"), str(tmp_path / "out.jsonl")]) == 1
    assert "zstd-compressed" in capsys.readouterr().err


def test_a_zstd_export_is_read_where_a_zstd_library_is_installed(tmp_path, monkeypatch, capsys):
    """The exporter's compression: zstd output (a 4-byte length and a zstd frame an export), a folder of it and a
    .zst of an export named .json were refused even where a zstd library is installed; they now read as the plain
    JSON does. Without one, each is refused in one line saying to export JSON."""
    import pytest

    zstandard = pytest.importorskip("zstandard")
    from sam_model.data import transcripts

    lines = [json.dumps(otlp(turn("t1", [], TURN1, 1000))).encode(),
             json.dumps(otlp(turn("t2", TURN1, TURN2, 2000))).encode()]
    plain_file = tmp_path / "plain.json"
    plain_file.write_bytes(b"\n".join(lines) + b"\n")
    frames = [zstandard.ZstdCompressor().compress(x) for x in lines]
    folder = tmp_path / "otel"
    folder.mkdir()
    (folder / "file").write_bytes(b"".join(len(f).to_bytes(4, "big") + f for f in frames))
    (tmp_path / "whole.json").write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(lines)))
    want = list(iter_transcript_events(plain_file))
    assert want and list(iter_transcript_events(folder)) == want
    assert list(iter_transcript_events(folder / "file")) == want
    assert list(iter_transcript_events(tmp_path / "whole.json")) == want
    cut = tmp_path / "cut"
    cut.write_bytes((folder / "file").read_bytes()[:-3])
    assert transcripts.main([str(cut), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "cut while written" in err and err.count("\n") == 1, err
    from sam_model.data.formats import zstdexport

    monkeypatch.setattr(zstdexport, "_decompressor", lambda: None)
    assert transcripts.main([str(folder), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "no zstd library is installed" in err and "format: json and no compression" in err and err.count("\n") == 1


def test_a_zst_of_a_json_document_is_read_whole_as_its_json_is(tmp_path):
    """A .json.zst (zstd run on a .json of one OTLP document written over several lines) was read as JSON Lines, its
    first line refused as "a JSON document written over several lines", where the .json itself reads whole: the
    name's .zst is dropped as .gz is, so the file is read as the one it holds."""
    import pytest

    zstandard = pytest.importorskip("zstandard")
    spans = otlp(turn("t1", [], TURN1, 1000))["resourceSpans"] + otlp(turn("t2", TURN1, TURN2, 2000))["resourceSpans"]
    plain = tmp_path / "traces.json"
    plain.write_text(json.dumps({"resourceSpans": spans}, indent=2))
    (tmp_path / "traces.json.zst").write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    want = list(iter_transcript_events(plain))
    assert want and list(iter_transcript_events(tmp_path / "traces.json.zst")) == want
    from sam_model.data.sources import source_kind

    compact = json.dumps({"resourceSpans": spans}).encode() + b"\n"
    (tmp_path / "traces.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(compact))
    # --data.train and sam-eval --data tell a file by its name without .zst too ("an agent log already" before)
    assert source_kind(tmp_path / "traces.json.zst") == source_kind(tmp_path / "traces.jsonl.zst") == "transcripts"


def test_a_zst_of_many_frames_is_decompressed_in_time_linear_in_its_size(tmp_path, monkeypatch, capsys):
    """A .zst of many frames (exports compressed one at a time and concatenated) gave each frame's decompressor the
    rest of the file, whose unused part was copied for the next: the bytes handled grew with the square of the
    frames (2,000 frames of 10 KB: 4.1 s to decompress). The frames are fed in chunks: twice the frames, about twice
    the bytes handled; the file reads as its plain copy, and a cut last frame is still refused in one line."""
    import pytest

    zstandard = pytest.importorskip("zstandard")
    from sam_model.data import transcripts
    from sam_model.data.formats import zstdexport

    lines = [json.dumps(otlp(turn(f"t{i}", [], TURN1, 1000 + i))).encode() + b"\n" for i in range(400)]
    frames = [zstandard.ZstdCompressor().compress(x) for x in lines]
    (tmp_path / "traces.jsonl.zst").write_bytes(b"".join(frames))
    (tmp_path / "plain.jsonl").write_bytes(b"".join(lines))
    got = list(iter_transcript_events(tmp_path / "traces.jsonl.zst"))
    assert got == list(iter_transcript_events(tmp_path / "plain.jsonl")) and got
    fed = 0
    real = zstandard.ZstdDecompressor

    class Counted:
        def __init__(self, obj):
            self.obj = obj

        def __getattr__(self, name):
            return getattr(self.obj, name)

        def decompress(self, chunk):
            nonlocal fed
            fed += len(chunk)
            return self.obj.decompress(chunk)

    monkeypatch.setattr(zstandard, "ZstdDecompressor", lambda: type("D", (), {
        "decompressobj": lambda self: Counted(real().decompressobj())})())
    handled = []
    for n in (200, 400):
        fed = 0
        assert zstdexport._decompressor()(b"".join(frames[:n])) == b"".join(lines[:n])
        handled.append(fed)
    assert handled[1] < 3 * handled[0], handled
    (tmp_path / "cut.zst").write_bytes(b"".join(frames)[:-5])
    assert transcripts.main([str(tmp_path / "cut.zst"), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "cannot be decompressed" in err and "ends inside a frame" in err and err.count("\n") == 1, err


def test_a_protobuf_export_is_refused_saying_to_export_json(tmp_path, capsys):
    """The exporter's format: proto output (a 4-byte length and an ExportTraceServiceRequest an export) was read as
    text: 'not UTF-8 ... re-save the file as UTF-8', which no re-save fixes. It is refused in one line naming
    protobuf and saying to export JSON, compressed with zstd or not."""
    import pytest

    from sam_model.data import transcripts

    request = b"\x0a\x2a\x0a\x00\x12\x26\x12\x24\x0a\x10" + bytes(range(0x80, 0x90)) + b"\x12\x08" + bytes(8) + b"\x2a\x06chat x"
    path = tmp_path / "traces.json"
    path.write_bytes(len(request).to_bytes(4, "big") + request)
    assert transcripts.main([str(path), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "OTLP protobuf" in err and "format: json" in err and "UTF-8" not in err and err.count("\n") == 1, err
    zstandard = pytest.importorskip("zstandard")
    frame = zstandard.ZstdCompressor().compress(request)
    path.write_bytes(len(frame).to_bytes(4, "big") + frame)
    assert transcripts.main([str(path), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "OTLP protobuf" in err and "format: json" in err and err.count("\n") == 1, err


def test_a_folder_of_exporter_files_without_an_extension(tmp_path):
    """The exporter's own example writes to ``path: ./file`` and rotates it to ``file-2022-09-14T05-02-14.173``: a
    folder of them was "a folder without ... OTLP JSON files"."""
    folder = tmp_path / "otel"
    folder.mkdir()
    (folder / "file-2025-12-02T05-02-14.173").write_text(json.dumps(otlp(turn("t1", [], TURN1, 1000))) + "\n")
    (folder / "file").write_text(json.dumps(otlp(turn("t2", TURN1, TURN2, 2000))) + "\n")
    (folder / "notes.txt").write_text('{"resourceSpans": "not read: a .txt is no exporter file"}\n')
    (conv,) = list(conversations(folder))
    assert isinstance(conv, otel.Conversation), conv
    assert plain(conv.messages) == [*TURN1, *TURN2]


def test_sam_data_formats_says_a_collector_folder_is_read():
    """`sam-data formats` said only ".json ... or a .jsonl of them": a user with the exporter's folder of traces.json
    files and rotated copies had no word that either is read."""
    from sam_model.data.formats import FORMATS

    assert "folder" in FORMATS["otel"].file and ".json or no extension" in FORMATS["otel"].file


def test_a_history_cut_at_an_attribute_length_limit_is_named_so():
    """The SDK cuts attribute values at OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, which a long turn's history reaches
    first: the error said "gen_ai.input.messages is not JSON (Expecting ...: char 400)", naming no cause."""
    def error(spans: list[dict]) -> str:
        (err,) = otel.conversations([(otlp(spans), "t.json:1")], "t.json", str)
        assert isinstance(err, otel.TranscriptFormatError), err
        return str(err)

    spans = [*turn("t1", [], TURN1, 1000, chat_ids=True), *turn("t2", TURN1, TURN2, 2000, chat_ids=True)]
    for s in spans:
        for a in s["attributes"]:
            if a["key"] == otel.INPUT and len(a["value"]["stringValue"]) > 400:
                a["value"]["stringValue"] = a["value"]["stringValue"][:400]
    said = error(spans)
    assert "stops mid-JSON after 400 characters" in said and "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT" in said
    bad = turn("t3", [], TURN1, 1000, chat_ids=True)  # a fault inside the text: no such guess
    bad[0]["attributes"][2]["value"]["stringValue"] = '[{"role": x}]'
    said = error(bad)
    assert "not JSON" in said and "length limit" not in said


def test_traces_of_one_conversation_without_its_id_are_told_how_to_join(tmp_path):
    """No span names the conversation (no agent span, chat spans without the id): nothing joins its turns' traces,
    and the import report's advice was to "give the copies one 'group'", which OTLP spans cannot hold."""
    from sam_model.data.transcripts import ImportReport

    spans = [s for s in (*turn("t1", [], TURN1, 1000), *turn("t2", TURN1, TURN2, 2000)) if "root" not in s["spanId"]]
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(otlp(spans)) + "\n")
    report = ImportReport()
    list(iter_transcript_events(path, report=report))
    assert report.conversations == 2 and report.repeats()  # the second trace repeats the first turn
    note = report.repeats_note()
    assert "record the id on its invoke_agent or chat spans" in note and "gen_ai.conversation.id" in note


def test_an_exporter_file_without_an_extension_given_alone_is_a_transcript(tmp_path):
    """The exporter's ``path: ./file`` given alone (not its folder) to sam-train or sam-eval was taken for an agent
    log, its name saying neither .json nor .jsonl, and refused: "missing required field 'episode_id'". It is read by
    its content, as in a folder; an extension-less file of anything else is still an agent log, refused in a line."""
    import pytest

    from sam_model.data.reader import LogFormatError, iter_episodes
    from sam_model.data.sources import iter_source_events, source_kind

    lines = json.dumps(otlp(turn("t1", [], TURN1, 1000))) + "\n" + json.dumps(otlp(turn("t2", TURN1, TURN2, 2000)))
    named = tmp_path / "traces.jsonl"
    named.write_text(lines + "\n")
    for name in ("file", "file-2025-12-02T05-02-14.173"):
        path = tmp_path / name
        path.write_text(lines + "\n")
        assert source_kind(path) == "transcripts", name
        events = list(iter_source_events(path))
        assert events and events == list(iter_source_events(named)), name
    other = tmp_path / "notes"
    other.write_text('{"note": "resourceSpans are read from the exporter"}\nnot json\n')
    assert source_kind(other) == "agent-log"
    with pytest.raises(LogFormatError) as err:
        list(iter_episodes(other, "raise"))
    assert str(err.value).count("\n") == 0 and "notes:1" in str(err.value)
