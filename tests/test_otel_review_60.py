"""A hostile review of the OpenTelemetry GenAI reader's walkthrough fixes (12cd2ee..81c2417), with span shapes real
instrumentations write: a workflow span (semantic conventions' ``invoke_workflow``, which carries the run's input and
answer as an agent's span does), a guardrail's model call beside the agent's span under the server's span, an agent
called as a tool by another (its own history, no id of its own), a long history cut inside a message's text by the
attribute length limit, and a deep chain of spans. Each test but the guards failed before its fix."""

from __future__ import annotations

import json

from test_walkthrough_otel import TURN1, attr, otlp, text, turn

from sam_model.data.formats import otel


def test_a_history_cut_inside_a_message_text_is_named_so():
    """The limit cuts a long history inside a message's text, where json says 'Unterminated string starting at'
    the string's start: the hint (81c2417) asked for the error at the text's end and was not given."""
    history = json.dumps([text("user", "Please read this log: " + "x" * 5000)])[:4096]
    spans = [{"traceId": "t", "spanId": "s", "startTimeUnixNano": "1",
              "attributes": [attr("gen_ai.operation.name", "chat"), attr(otel.INPUT, history),
                             attr(otel.OUTPUT, json.dumps([text("assistant", "ok")]))]}]
    (err,) = otel.conversations([(otlp(spans), "t.json:1")], "t.json", str)
    assert isinstance(err, otel.TranscriptFormatError)
    assert "stops mid-JSON after 4096 characters" in str(err) and "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT" in str(err)
    for cut in ('[{"role": "user", "parts": [{"type": "text", "content": "a\\u00', '[{"role": "user", "x": tr'):
        assert otel._cut_hint(_error(cut), cut), cut
    assert not otel._cut_hint(_error('[{"role": x}]'), '[{"role": x}]')  # a fault inside: no such guess


def _error(raw: str) -> json.JSONDecodeError:
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(raw)


def test_a_folder_of_zstd_exports_is_named_so(tmp_path, capsys):
    """The exporter's folder written with ``compression: zstd`` to ``path: ./file`` (81c2417 refuses one such file
    as zstd-compressed) was "a folder without ... OTLP JSON files", naming no compression."""
    from sam_model.data import transcripts
    from sam_model.io import ZSTD_MAGIC

    folder = tmp_path / "otel"
    folder.mkdir()
    line = json.dumps(otlp(turn("t1", [], TURN1, 1000))).encode()
    (folder / "file").write_bytes(len(line).to_bytes(4, "big") + ZSTD_MAGIC + b"\x00" * 16)
    assert transcripts.main([str(folder), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "zstd-compressed" in err and "compression: zstd" in err and "a folder without" not in err
