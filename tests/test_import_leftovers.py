"""Leftovers of the log importers: the hint of a file without tool calls names every format's call fields, a
forced reader's refusal names the reader that would read the file, SWE-agent runs of one instance share a split
group, and long conversions show progress (also into a file)."""

from __future__ import annotations

import json

from sam_model.data import formats
from sam_model.data.transcripts import main


def test_a_file_without_tool_fields_names_every_formats_call_fields(tmp_path, capsys):
    """The hint was written by hand and missed OpenHands' actions, Gemini's functionCall and Bedrock's toolUse
    as formats were added: it is told from the formats' marks now."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": [{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": "hello"}]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "no tool call was read" in err and err.count("\n") == 1
    for what, fmt in formats._MARKS:
        assert what in err, (what, fmt)
    assert {fmt for _, fmt in formats._MARKS} >= set(formats.FORMATS) - {"tau1"}  # tau1's calls are openai's
