"""The session readers changed or added lately (mini-swe-agent, Gemini CLI, Claude Code, Codex, OpenHands 0.x and V1)
and the live add path (ScopedMemory.add of an agent's session lines) on bad input: each refuses it in one line
naming where (a TranscriptFormatError or ValueError), or reads it; never another exception, and a refused add leaves
the scope's memories and its open turn as they were. Each crash the fuzzing found is a deterministic test here."""

from __future__ import annotations

import copy
import json
import random
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
    ("openhands.json", 3, ("id",)), ("claude-code.jsonl", 3, ("userType",)), ("codex.jsonl", 11, ("type",))])
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


# ---------------------------------------------------------------- the fuzzing itself: seeded, bounded

SEEDS = {"claude-code": "claude-code.jsonl", "gemini-cli": "gemini-cli.jsonl", "codex": "codex.jsonl",
         "mini-swe-agent": "mini-swe-agent.traj.json", "openhands": "openhands.json", "openhands-v1": "openhands-v1.jsonl"}
DEEP_TEXT = "__DEEP__"  # a value written as 50,000 nested lists in the file
BAD = [None, 0, -1, 1.5, 2**70, True, [], {}, "", [1, [2]], {"a": {}}, "a" * 200_000, "\x00", "\ud800", "a\x00b\udfffc",
       "/" + "/".join(["d"] * 10_000), "0.x", 77, "999999999999999999999.1", "9" * 5000 + ".1", "zz", "g" * 64,
       nested(60)]
KEYS = {"parentUuid", "logicalParentUuid", "uuid", "id", "type", "cwd", "sessionId", "timestamp", "isSidechain",
        "llm_response_id", "tool_call_id", "cause", "tool_call_metadata", "kind", "source", "action", "payload",
        "cli_version", "projectHash", "directories", "$rewindTo", "toolCalls", "args", "content", "message", "role",
        "call_id", "arguments", "name", "status", "result", "extra", "actions", "working_dir", "messages", "history"}


def _nodes(x: Any, path: tuple = ()):
    yield path, x
    for k, v in (x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()):
        yield from _nodes(v, (*path, k))


def _at(x: Any, path: tuple) -> Any:
    for k in path:
        x = x[k]
    return x


def mutate(rng, doc: Any, deep: Any = DEEP_TEXT) -> Any:
    """``doc`` with one random structural change: a key dropped, a value (a known key's, or any) of another type, a
    huge, NUL, half-character or 10,000-folder string, deep nesting, ids made equal, parentUuid cycles and
    self-parents, $rewindTo of any id or none, a bad cli_version or projectHash, lines swapped or repeated."""
    doc = copy.deepcopy(doc)
    found = [(p, v) for p, v in _nodes(doc) if p]
    lines = doc if isinstance(doc, list) else [doc]
    objs = [x for x in lines if isinstance(x, dict)]
    op = rng.choice(["drop", "value", "key", "key", "ids", "cycle", "self", "rewind", "version", "hash", "swap",
                     "repeat"])
    if op in ("drop", "value", "key") and found:
        keyed = [(p, v) for p, v in found if p[-1] in KEYS] if op == "key" else found
        path, _ = rng.choice(keyed or found)
        if op == "drop":
            del _at(doc, path[:-1])[path[-1]]
        else:
            value = rng.choice([*BAD, deep])
            _at(doc, path[:-1])[path[-1]] = value if value is deep else copy.deepcopy(value)  # deep: no copy recurses
    elif op == "ids" and objs:
        a, b = rng.choice(objs), rng.choice(objs)
        for k in ("uuid", "id", "llm_response_id"):
            if k in a and k in b:
                b[k] = a[k]
    elif op in ("cycle", "self") and len(with_id := [x for x in objs if "uuid" in x]) >= 2:
        a, b = rng.sample(with_id, 2)
        a["parentUuid"], b["parentUuid"] = (b["uuid"], a["uuid"]) if op == "cycle" else (a["uuid"], b["parentUuid"])
        a["logicalParentUuid"] = a["uuid"] if op == "self" else b["uuid"]
    elif op == "rewind" and isinstance(doc, list):
        ids = [x["id"] for x in objs if isinstance(x.get("id"), str)] + ["nope"]
        at = rng.randrange(len(doc) + 1)
        doc.insert(at, {"$rewindTo": rng.choice(ids)})
    elif op == "version":
        for x in objs:
            if isinstance(x.get("payload"), dict) and "cli_version" in x["payload"]:
                x["payload"]["cli_version"] = rng.choice(["0.x", "", 77, "999999999999999999999.1", "9" * 5000 + ".1"])
    elif op == "hash":
        for x in objs:
            if "projectHash" in x:
                x["projectHash"] = rng.choice(["", "abc", "g" * 64, "A" * 64, "5eb97e" * 20, 5])
    elif op in ("swap", "repeat") and isinstance(doc, list) and doc:
        i, j = rng.randrange(len(doc)), rng.randrange(len(doc))
        if op == "swap":
            doc[i], doc[j] = doc[j], doc[i]
        else:
            doc.insert(i, copy.deepcopy(doc[j]))
    return doc


def house(err: BaseException, place: str) -> bool:
    """A refusal as the house writes one: a ValueError (TranscriptFormatError is one) of one line naming ``place``
    first, no encoder's or reader's own words."""
    text = str(err)
    return (isinstance(err, ValueError) and not isinstance(err, UnicodeError) and "\n" not in text
            and text.startswith(place) and "malformed conversation (" not in text)


def test_mutated_sessions_are_read_or_refused_in_one_line(tmp_path):
    """Each reader's example, mutated 1-3 times (and its file cut mid-line or given a NUL now and then), is read or
    refused in one line naming the file (sam-data transcripts' reader) or the conversation (to_chat): never another
    exception, never a hang (a parentUuid cycle, a $rewindTo of itself or of a later message)."""
    rng = random.Random(20261207)
    for case in range(480):
        fmt = list(SEEDS)[case % len(SEEDS)]
        doc: Any = example(SEEDS[fmt])
        for _ in range(rng.randint(1, 3)):
            doc = mutate(rng, doc)
        text = ("".join(json.dumps(x) + "\n" for x in doc) if SEEDS[fmt].endswith(".jsonl") else json.dumps(doc))
        text = text.replace(json.dumps(DEEP_TEXT), "[" * 50_000 + "]" * 50_000)
        if rng.random() < 0.1:
            text = text[:rng.randrange(len(text))]
        elif rng.random() < 0.05:
            at = rng.randrange(len(text))
            text = text[:at] + "\x00" + text[at:]
        src = tmp_path / SEEDS[fmt]
        src.write_text(text)
        try:
            list(iter_transcript_events(src, allow_empty=True))
        except Exception as err:  # noqa: BLE001 (what it is, is the test)
            assert house(err, str(src)), f"case {case} ({fmt}): {type(err).__name__}: {str(err)[:300]}"
        docs = doc if isinstance(doc, list) else [doc]
        try:
            to_chat([d for d in docs if d != DEEP_TEXT], "conv", fmt)
        except Exception as err:  # noqa: BLE001
            assert house(err, "conv"), f"case {case} ({fmt}) to_chat: {type(err).__name__}: {str(err)[:300]}"


def test_mutated_session_lines_added_one_at_a_time_are_read_or_refused_leaving_the_scope():
    """A session's lines fed to ScopedMemory.add a line an add, a third of them mutated: each add is read or refused
    in one line naming the add's data (a ValueError, or the API's TypeError for a line no format reads: a chat
    message or event is asked for), and a refused add leaves the scope's memories and open turn as they were."""
    rng = random.Random(7)
    live = [f for f in SEEDS if f != "mini-swe-agent"]
    for case in range(60):
        fmt = live[case % len(live)]
        memory = ScopedMemory(HashingEncoder(16))
        for k, line in enumerate(example(SEEDS[fmt])):
            if rng.random() < 0.3:
                line = mutate(rng, line, deep=nested(600))
            before = snapshot(memory)
            try:
                memory.add([line], run_id="r")
            except TypeError as err:
                assert str(err).startswith("data[0]: give chat messages"), f"case {case} line {k}: {err}"
                assert snapshot(memory) == before
            except Exception as err:  # noqa: BLE001
                ok = house(err, "data") or (house(err, "memor") and "characters, more than the limit" in str(err))
                assert ok, f"case {case} ({fmt}) line {k}: {type(err).__name__}: {str(err)[:300]}"
                assert snapshot(memory) == before, f"case {case} ({fmt}) line {k}: refused, yet the scope changed"
