"""The session readers changed or added lately (mini-swe-agent, Gemini CLI, Claude Code, Codex, OpenHands 0.x and V1)
and the live add path (ScopedMemory.add of an agent's session lines) on bad input: each refuses it in one line
naming where (a TranscriptFormatError or ValueError), or reads it; never another exception, and a refused add leaves
the scope's memories and its open turn as they were. Each crash the fuzzing found is a deterministic test here."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sam_model.data.formats import to_chat
from sam_model.data.transcripts import TranscriptFormatError, iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "logs"


def example(name: str) -> list[Any]:
    """An example session's lines (an OpenHands V1 evaluation output: its events)."""
    text = (EXAMPLES / name).read_text()
    if name.endswith(".json"):
        return json.loads(text)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return lines[0]["history"] if len(lines) == 1 and "history" in lines[0] else lines


def snapshot(memory: ScopedMemory, run: str = "r") -> tuple[str, str]:
    """The scope's memories and its open turn, as JSON."""
    turn = memory._open.get(memory.episode_of(None, None, run))
    return (json.dumps(memory.get_all(run_id=run), sort_keys=True, default=str),
            json.dumps(turn.state_dict() if turn is not None else None, sort_keys=True, default=str))


def refused(memory: ScopedMemory, line: Any, says: str, run: str = "r") -> str:
    """Add ``line`` to the scope: a one-line ValueError matching ``says``, the scope as it was."""
    before = snapshot(memory, run)
    with pytest.raises(ValueError, match=says) as info:
        memory.add([line], run_id=run)
    assert "\n" not in str(info.value) and snapshot(memory, run) == before
    return str(info.value)


def fed(name: str, upto: int) -> tuple[ScopedMemory, list[Any]]:
    """A scope fed the example's first ``upto`` lines a line an add, and the example's lines."""
    lines = example(name)
    memory = ScopedMemory(HashingEncoder(16))
    for line in lines[:upto]:
        memory.add([line], run_id="r")
    return memory, lines


def test_a_claude_code_link_of_another_type_is_named_not_a_type_error():
    """Found by fuzzing the live add: a Claude Code entry whose parentUuid is a list (or an object) given to the
    reader whole (ScopedMemory.add of a session's lines, to_chat) was "TypeError: unhashable type: 'list'", from the
    search for a compaction's replays; the file reader refused it in one line. Now every reader of the entries
    does, naming the entry."""
    memory, lines = fed("claude-code.jsonl", 4)
    bad = copy.deepcopy(lines[4])
    bad["parentUuid"] = []
    refused(memory, bad, r"^data, entry \d+ \(uuid [^)]+\): 'parentUuid' is a list, expected a string$")
    memory.add([lines[4]], run_id="r")  # the line as written is read after the refusal
    twice = [lines[1], {**lines[1], "uuid": "u2", "parentUuid": {"a": 1}}, {**lines[1], "uuid": "u3",
                                                                            "parentUuid": {"a": 1}}]
    with pytest.raises(TranscriptFormatError, match=r"^conv, entry 1 \(uuid u2\): 'parentUuid' is an object"):
        to_chat(twice, "conv", "claude-code")


def test_half_a_character_in_a_claude_code_line_is_read_not_an_encode_error():
    """Found by fuzzing the live add: a Claude Code line holding a lone surrogate (valid JSON "\\udfff", half an
    emoji) given to the reader whole was "'utf-8' codec can't encode character '\\udfff' in position 95" (a
    ValueError naming no line), from hashing the message to find a compaction's replays. It is read as a chat
    message holding one is (the file reader refuses it, as no UTF-8 file holds it)."""
    memory, lines = fed("claude-code.jsonl", 1)
    line = copy.deepcopy(lines[1])
    line["message"]["content"] = "Hi, my user id is ann_lee_123 \udfff"
    assert [r["memory"] for r in memory.add([line], run_id="r")["results"]] == [line["message"]["content"]]
    assert to_chat([line], "conv", "claude-code").messages[0]["content"] == line["message"]["content"]


@pytest.mark.parametrize("status", [{}, ["success"]])
def test_a_gemini_cli_call_status_of_another_type_is_named(tmp_path, status):
    """Found by fuzzing the readers: a Gemini CLI tool call whose status is an object or a list was "malformed
    conversation (TypeError: unhashable type: 'dict')" from the file reader, naming no field, and a TypeError from
    the live add. Each names the call's status and what it may be."""
    lines = example("gemini-cli.jsonl")
    at = max(i for i, r in enumerate(lines) if r.get("toolCalls"))  # a version the file keeps
    bad = copy.deepcopy(lines[at])
    bad["toolCalls"][0]["status"] = status
    src = tmp_path / "session.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in [*lines[:at], bad, *lines[at + 1:]]))
    says = r"toolCalls 0: 'status' is an? (object|list), expected success, error or cancelled"
    with pytest.raises(TranscriptFormatError, match=rf"^{src}, message \d+ \(id \w+\), {says}") as info:
        list(iter_transcript_events(src))
    assert "malformed" not in str(info.value)
    memory, _ = fed("gemini-cli.jsonl", at)
    refused(memory, bad, rf"^data, message \d+ \(id \w+\), {says}")


def altered(name: str, at: int, path: tuple, value: Any) -> tuple[ScopedMemory, dict]:
    """A scope fed the example's lines before ``at``, and line ``at`` with the field at ``path`` set to ``value``."""
    memory, lines = fed(name, at)
    line = copy.deepcopy(lines[at])
    *up, key = path
    target = line
    for k in up:
        target = target[k]
    target[key] = value
    return memory, line


@pytest.mark.parametrize("value", [[1], {"a": 1}])
def test_a_session_line_id_of_another_type_is_no_type_error_in_the_live_add(value):
    """Found by fuzzing the live add: where a session's line closes the scope's open turn (sam_model.memory.live),
    an id that is a list or an object (a Gemini CLI message's id, an OpenHands V1 ActionEvent's llm_response_id) was
    looked up in a set: "TypeError: unhashable type: 'list'", though the readers take it (Gemini CLI's message of
    such an id is one of none; V1 joins a response's events by ==). Each is now read as its reader reads it."""
    for at in (4, 10):  # a message of the open turn's; one after a turn closed (an earlier message written again?)
        memory, line = altered("gemini-cli.jsonl", at, ("id",), value)
        assert memory.add([line], run_id="r")["results"]
    memory, line = altered("openhands-v1.jsonl", 3, ("llm_response_id",), value)
    assert [r["event"] for r in memory.add([line], run_id="r")["results"]] == ["ADD"]


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("name", "at", "path"), [
    ("gemini-cli.jsonl", 4, ("toolCalls", 0, "args", "user_id")), ("codex.jsonl", 5, ("payload", "type")),
    ("openhands.json", 3, ("id",)), ("claude-code.jsonl", 3, ("userType",))])
def test_a_session_line_nested_hundreds_deep_is_refused_as_in_a_file(name, at, path):
    """Found by fuzzing the live add: a session line nesting lists 600 deep (a tool call's argument, an id) given
    to ScopedMemory.add was a RecursionError from the reader or the JSON encoder (a chat message's arguments as deep
    are read), where the file reader refuses a line past 100 levels. The add refuses it so, naming the line."""
    memory, line = altered(name, at, path, nested(600))
    refused(memory, line, r"^data\[0\]: nested too deeply \(more than 100 levels")
    memory, line = altered(name, at, path, nested(50))  # deep, not too deep: the reader's to say
    try:
        memory.add([line], run_id="r")
    except ValueError as err:
        assert "\n" not in str(err) and str(err).startswith("data")
