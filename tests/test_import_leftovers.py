"""Leftovers of the log importers: the hint of a file without tool calls names every format's call fields, a
forced reader's refusal names the reader that would read the file, SWE-agent runs of one instance share a split
group, and long conversions show progress (also into a file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "logs"


@pytest.mark.parametrize("log, forced, reader", [
    ("gemini.jsonl", "bedrock", "gemini"),  # "role 'model' is not a Converse role"
    ("gemini.jsonl", "anthropic", "gemini"),
    ("gemini.jsonl", "responses", "gemini"),
    ("gemini.jsonl", "tau2", "gemini"),
    ("gemini.jsonl", "langchain", "gemini"),  # "not a LangChain message"
    ("bedrock.jsonl", "gemini", "bedrock"),  # "role 'assistant' is not a Gemini role"
    ("gemini.jsonl", "otel", "gemini"),  # "expected OTLP JSON"
    ("openai.jsonl", "swe-agent", "openai"),  # "not a SWE-agent trajectory"
    ("anthropic.jsonl", "openhands", "anthropic"),  # "not an OpenHands trajectory"
    ("swe-agent.traj", "openhands", "swe-agent"),  # its history holds OpenAI tool_calls too: SWE-agent's reader
    ("swe-agent.traj", "openai", "swe-agent"),  # "expected a conversation"
])
def test_a_forced_readers_refusal_names_the_reader_that_reads_the_file(log, forced, reader, tmp_path, capsys):
    """A reader's refusal of another format's role or shape said only what it expected: the user who forced the
    wrong --format was not told which one reads the file."""
    assert main([str(EXAMPLES / log), str(tmp_path / "o.jsonl"), "--format", forced]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith(f"which the {reader} reader reads: try --format {reader}"), err
    assert "--skip-bad" not in err  # skipping would skip every conversation


def test_a_bad_role_in_a_log_of_the_readers_own_format_names_no_other_reader(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a", "contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "assistant", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "not a Gemini role" in err and "--format" not in err and "--skip-bad" in err
