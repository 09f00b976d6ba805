"""Coding agents run headless on benchmarks, their stdout kept: Claude Code's ``claude -p --output-format
stream-json --verbose``, a layout of the claude-code format (its messages, one run a session). The shared
conversation and 40 tau-bench trajectories written as it give the OpenAI chat events of what the stream holds; a
harness's file of appended runs is split by session; subagents, cut last lines, the sniffs and bad lines (one line
naming FILE:LINE and the field).

The lines follow their producer (the module's docstring cites it): Claude Code 2.1's stream as public Harbor logs
hold it (``agent/claude-code.txt``: the init, a line per content block of one message id, tool results with
``tool_use_result``, the result) and the SDK's message types."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_format_claude_code import to_claude_code
from test_format_codex import example_rollout
from test_formats import (
    ERROR,
    EXAMPLES,
    TAU,
    anthropic_messages,
    bedrock_messages,
    gemini_contents,
    genai_messages,
    langchain_messages,
    needs_tau,
    openai_messages,
    openhands_events,
    openhands_v1_events,
    responses_items,
    swe_agent_history,
    tau2_messages,
    write_all,
)
from test_shell_words import CAT, FIND, FOUND, PATH, RAN, TESTS

from sam_model.data.formats import (
    FORMATS,
    claude_stream,
    detect,
    is_log_message,
    to_chat,
    tool_marks,
)
from sam_model.data.formats.files import conversations as file_conversations
from sam_model.data.formats.files import is_transcript_file
from sam_model.data.sources import iter_source_events, source_kind
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

SESSION = "72bd4dcd-1fa1-4ea6-a0ad-94ac9c3c0811"
MODEL = "claude-sonnet-4-5-20250929"


# ---- Claude Code's stream-json -------------------------------------------------------------------------------
def init(session: str = SESSION) -> dict:
    """The first line of a run, as Claude Code 2.1.19 prints it (Harbor's agent/claude-code.txt)."""
    return {"type": "system", "subtype": "init", "cwd": "/app", "session_id": session,
            "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite", "mcp__airline__get_user"],
            "mcp_servers": [{"name": "airline", "status": "connected"}], "model": MODEL,
            "permissionMode": "bypassPermissions", "slash_commands": ["compact", "context", "cost"],
            "apiKeySource": "none", "claude_code_version": "2.1.19", "output_style": "default",
            "agents": ["general-purpose", "Explore", "Plan"], "skills": [], "plugins": [], "uuid": f"{session}-init"}


def ended(session: str = SESSION, said: str = "", subtype: str = "success", is_error: bool = False) -> dict:
    """The last line of a run: its result."""
    return {"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 100509,
            "duration_api_ms": 97316, "num_turns": 3, "result": said, "session_id": session,
            "total_cost_usd": 0.39, "usage": {"input_tokens": 84, "output_tokens": 6510}, "modelUsage": {},
            "permission_denials": [], "uuid": f"{session}-result"}


def as_stream(entries: list[dict], session: str, parent: str | None = None) -> list[dict]:
    """A session file's user and assistant entries as the stream prints the same messages: ``session_id`` and
    ``parent_tool_use_id`` beside them, a user's typed words echoed (``isReplay``), a result's ``tool_use_result``."""
    out = []
    for e in entries:
        if e["type"] in ("user", "assistant"):
            line = {"type": e["type"], "message": e["message"], "parent_tool_use_id": parent, "session_id": session,
                    "uuid": e["uuid"]}
            if e["type"] == "user" and isinstance(e["message"]["content"], str):
                line["isReplay"] = True
            if "toolUseResult" in e:
                line["tool_use_result"] = e["toolUseResult"]
            out.append(line)
    return out


def to_claude_stream(msgs: list[dict], session: str = SESSION, thinking: bool = True) -> list[dict]:
    """Chat messages as ``claude -p --input-format stream-json --output-format stream-json --verbose
    --replay-user-messages`` prints them (without the last flag no user words are printed): the init, each
    response a line per content block of one message id (a thinking block before the first call), each tool
    result a user line, the run's result; no system prompt anywhere."""
    said = next((m["content"] for m in reversed(msgs) if m["role"] == "assistant" and m.get("content")), "")
    return [init(session), *as_stream(to_claude_code(msgs, session=session, thinking=thinking), session),
            ended(session, said)]


# ---- helpers -------------------------------------------------------------------------------------------------
def write(path: Path, lines: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def read(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def openai_events(tmp_path: Path, convs: dict[str, list[dict]]) -> list[dict]:
    path = tmp_path / "openai-twin.jsonl"
    path.write_text("".join(json.dumps({"id": k, "messages": v}) + "\n" for k, v in convs.items()))
    return list(iter_transcript_events(path))


def errors(path: Path, capsys, *args: str) -> str:
    assert main([str(path), str(path.parent / "o.jsonl"), *args]) == 1
    return capsys.readouterr().err


# ---- the shared conversation ---------------------------------------------------------------------------------
def test_claude_codes_stream_of_the_conversation_gives_its_openai_events(tmp_path):
    """examples/logs/claude-code-stream.jsonl: read by the claude-code reader, the same events as the OpenAI chat
    log (the user's words echoed by --replay-user-messages), the session its episode; the init, the result and the
    thinking counted, not read; the failed cancel flagged by is_error."""
    path = write(tmp_path / "claude-code-stream.jsonl", to_claude_stream(openai_messages()))
    events, report = read(path)
    assert events == [{**e, "episode_id": SESSION} for e in iter_transcript_events(write_all(tmp_path)["openai"])]
    assert report.formats == {"claude-code": 1} and {e["episode_id"] for e in events} == {SESSION}
    assert report.ignored == {"system init entries": 1, "result entries": 1, "thinking": 1}
    chat = to_chat(to_claude_stream(openai_messages()))
    assert next(m for m in chat.messages if m.get("tool_call_id") == "c2") == {
        "role": "tool", "tool_call_id": "c2", "content": ERROR, "is_error": True}
    shipped = EXAMPLES / "claude-code-stream.jsonl"
    assert [json.loads(x) for x in shipped.read_text().splitlines()] == to_claude_stream(openai_messages())


# ---- real conversations: tau-bench's airline trajectories, all runs of a file ------------------------------------
@needs_tau
def test_tau_bench_as_one_file_of_appended_runs_gives_the_spec_events_of_what_the_stream_holds(tmp_path):
    """40 tau-bench trajectories, each run's stdout appended to one file as a harness keeps it, give the spec's
    events of the same conversations without their system prompt (never printed)."""
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    sessions = [f"{SESSION[:-12]}{n:012d}" for n in range(40)]
    claude = write(tmp_path / "claude-code.txt", [x for d, s in zip(data, sessions)
                                                  for x in to_claude_stream(d["traj"], s, thinking=False)])
    events, report = read(claude)
    assert report.formats == {"claude-code": 40} and report.decision_points > 0
    assert events == openai_events(tmp_path, {s: [m for m in d["traj"] if m["role"] != "system"]
                                              for d, s in zip(data, sessions)})


# ---- runs, sessions and subagents -------------------------------------------------------------------
def test_a_file_of_appended_runs_reads_one_conversation_a_session(tmp_path):
    """A harness appends each run's stdout: sessions are conversations of their own, split groups of their own, and
    a run resuming a session under its id continues its conversation."""
    msgs = openai_messages()
    first, resumed = msgs[:6], msgs[6:]  # the resumed run answers "yes please"
    again = as_stream(to_claude_code(resumed, session="resumed"), SESSION)  # its own message ids, the session's id
    path = write(tmp_path / "claude.jsonl", [*to_claude_stream(first), *to_claude_stream(msgs, "s-other"), init(),
                                             *again, ended()])
    convs = list(file_conversations(path))
    assert [(c.episode_id, c.group) for c in convs] == [(SESSION, SESSION), ("s-other", "s-other")]
    assert convs[0].where == f"{path}: session {SESSION}"
    events = read(path)[0]
    assert [e for e in events if e["episode_id"] == SESSION] == read(write(tmp_path / "whole.jsonl",
                                                                           to_claude_stream(msgs)))[0]


def test_a_subagents_messages_are_a_conversation_of_their_own_in_the_sessions_split(tmp_path):
    """A Task call's subagent writes its lines with parent_tool_use_id, the call's id: its own conversation,
    episode <session>-subagent-<id>, split group the session; the parent keeps the call and its result."""
    task = {"type": "tool_use", "id": "toolu_task", "name": "Task",
            "input": {"subagent_type": "Explore", "description": "find it", "prompt": "Find the tokenizer."}}
    sub = as_stream(to_claude_code([{"role": "user", "content": "Find the tokenizer."},
                                    {"role": "assistant", "content": None, "tool_calls": [
                                        {"id": "toolu_find", "type": "function", "function": {
                                            "name": "Bash", "arguments": json.dumps({"command": FIND})}}]},
                                    {"role": "tool", "tool_call_id": "toolu_find", "content": FOUND},
                                    {"role": "assistant", "content": f"It is {PATH}."}], thinking=False),
                    SESSION, parent="toolu_task")
    main_lines = [init(), {"type": "assistant", "message": {"id": "msg_1", "model": MODEL, "role": "assistant",
                                                            "type": "message", "content": [task]},
                           "parent_tool_use_id": None, "session_id": SESSION, "uuid": "u1"},
                  {"type": "system", "subtype": "task_started", "task_id": "a42ed3", "tool_use_id": "toolu_task",
                   "description": "find it", "task_type": "local_agent", "session_id": SESSION, "uuid": "u2"},
                  *sub,
                  {"type": "user", "message": {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": "toolu_task", "content": [{"type": "text",
                                                                                        "text": f"It is {PATH}."}]}]},
                   "parent_tool_use_id": None, "session_id": SESSION, "uuid": "u3"},
                  ended(said="Done.")]
    path = write(tmp_path / "task.jsonl", main_lines)
    convs = list(file_conversations(path))
    assert [(c.episode_id, c.group) for c in convs] == [(SESSION, SESSION),
                                                         (f"{SESSION}-subagent-toolu_task", SESSION)]
    parent, child = (to_chat(c.messages).messages for c in convs)
    assert [m["role"] for m in parent] == ["assistant", "tool"] and parent[0]["tool_calls"][0]["id"] == "toolu_task"
    assert [m["role"] for m in child] == ["user", "assistant", "tool", "assistant"]
    events, report = read(path)
    assert report.formats == {"claude-code": 2} and report.ignored["system task_started entries"] == 1


# ---- shell commands ------------------------------------------------------------------------
def test_shell_commands_are_traced_by_their_words(tmp_path):
    """Claude Code's Bash in the stream read by the shell command lines rule: cat's path traces to the find that
    printed it."""
    bash = lambda i, c: {"id": f"t{i}", "type": "function", "function": {  # noqa: E731
        "name": "Bash", "arguments": json.dumps({"command": c, "description": f"Step {i}"})}}
    msgs = [{"role": "user", "content": "The tokenizer drops the last token; fix it."}]
    for i, (command, out) in enumerate(((FIND, FOUND), (TESTS, RAN), (CAT, "def split(text):")), 1):
        msgs += [{"role": "assistant", "content": None, "tool_calls": [bash(i, command)]},
                 {"role": "tool", "tool_call_id": f"t{i}", "content": out}]
    events, _ = read(write(tmp_path / "claude.jsonl", to_claude_stream(msgs)))
    found = next(e for e in events if e["kind"] == "result" and "tokenizer.py" in e["text"])
    decision = [e for e in events if e["kind"] == "result"][1]
    assert decision["useful_memory_steps"] == [found["step"]]
    assert decision["meta"]["needed"] == {"command": [PATH]} and decision["state"]["uncertainty_flags"] == ["command"]


# ---- cut last lines, files of no message ---------------------------------------------------------------------
def test_a_run_still_writing_is_read_without_its_cut_last_line_and_says_so(tmp_path, capsys):
    lines, name = to_claude_stream(openai_messages()), "claude"
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines[:-1]) + json.dumps(lines[-1])[:30])
    whole = write(tmp_path / "whole" / f"{name}.jsonl", lines[:-1])
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out)]) == 0, capsys.readouterr().err
    assert out.read_text() == "".join(json.dumps(e) + "\n" for e in read(whole)[0])
    assert f"read without its last line, cut mid-write (still being written?): {path}:{len(lines)}" in \
        capsys.readouterr().out


def test_a_file_whose_runs_wrote_no_message_is_refused_with_how_they_ended(tmp_path, capsys):
    claude = write(tmp_path / "c.jsonl", [init(), ended(said="Invalid API key · Please run /login",
                                                        subtype="error_during_execution", is_error=True)])
    err = errors(claude, capsys)
    assert (f"{claude}: Claude Code stream-json output without a user or assistant message (result, system; the run "
            "ended error_during_execution: Invalid API key · Please run /login)") in err and err.count("\n") == 1


# ---- bad lines: one line naming the file, the line and the field -----------------------------------------------
S = {"session_id": SESSION}


@pytest.mark.parametrize("bad, says", [
    ([1, 2], "not a Claude Code transcript entry: expected an object with a string 'type'"),
    ({"type": "assistant", "message": "hi", **S}, "'message' is a string, expected the API message of a assistant"),
    ({"type": "assistant", "message": {"role": "assistant", "content": 7}, **S}, "'message.content' is a number"),
    ({"type": "user", "message": {"role": "user", "content": "x"}, "session_id": 7},
     "'session_id' is a number, expected a string"),
    ({"type": "user", "message": {"role": "user", "content": "x"}, "parent_tool_use_id": 5, **S},
     "'parent_tool_use_id' is a number, expected a string (the id of the Task call"),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}, **S},
     "tool_result content block 0 without a 'tool_use_id'"),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                                                "content": "x", "is_error": "yes"}]}, **S},
     ", content block 0: 'is_error' is \"yes\", expected true"),
    ('{"type": "user", "mess', "invalid JSON"),
])
def test_a_bad_stream_json_line_is_one_line_naming_it(bad, says, tmp_path, capsys):
    lines = to_claude_stream(openai_messages())
    path = tmp_path / "c.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in [*lines[:2], bad, *lines[2:]]))
    err = errors(path, capsys)
    assert f"{path}:3{'' if says.startswith(',') else ': '}{says}" in err and err.count("\n") == 1, err


def test_a_bad_line_refuses_its_session_alone(tmp_path, capsys):
    """--skip-bad reads the other runs of the file; the bad one is listed, named by its line."""
    good, bad = to_claude_stream(openai_messages(), "s-good"), to_claude_stream(openai_messages(), "s-bad")
    bad[3] = {**bad[3], "message": None}
    path = write(tmp_path / "claude.jsonl", [*bad, *good])
    assert f"{path}:4: " in errors(path, capsys)
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in out.read_text().splitlines()} == {"s-good"}
    assert f"{path}:4: " in capsys.readouterr().out


def test_a_line_naming_no_session_refuses_the_sessions_on_both_sides(tmp_path, capsys):
    a, b = to_claude_stream(openai_messages(), "s-a"), to_claude_stream(openai_messages(), "s-b")
    c = to_claude_stream(openai_messages(), "s-c")
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in a) + "{not json\n"
                    + "".join(json.dumps(x) + "\n" for x in [*b, *c]))
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in out.read_text().splitlines()} == {"s-c"}
    printed = capsys.readouterr().out
    assert "session s-a is refused" in printed and "session s-b is refused" in printed


# ---- what tells the formats, and the readers forced on another's file ----------------------------------------------
def test_the_sniffs_take_only_their_own_lines():
    """Claude Code's stream messages are the claude-code reader's alone (its entries' API messages), and no other
    format's first line or document is taken for one."""
    others = [openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(), openhands_events(),
              openhands_v1_events(), example_rollout(), to_claude_code(openai_messages())]
    stream = to_claude_stream(openai_messages())
    assert [f for f in FORMATS if FORMATS[f].sniff(stream)] == ["claude-code"] and detect(stream) == "claude-code"
    assert not any(claude_stream.is_message(m) for msgs in others for m in msgs)
    assert all(is_log_message(m) for m in stream)
    firsts = {p.name: json.loads(p.read_text().splitlines()[0] if p.suffix == ".jsonl" else p.read_text())
              for p in EXAMPLES.iterdir()}  # what tells each file's container: its first line, or its document
    firsts = {n: doc[0] if isinstance(doc, list) else doc for n, doc in firsts.items()}
    assert len(firsts) >= 15
    assert [n for n, doc in firsts.items() if claude_stream.is_message(doc)] == ["claude-code-stream.jsonl"]
    assert tool_marks(stream) == [("Claude Code entries holding tool_use or tool_result blocks", "claude-code")]


def test_another_reader_forced_on_a_stream_names_the_one_that_reads_it(tmp_path, capsys):
    claude = write(tmp_path / "c.jsonl", to_claude_stream(openai_messages()))
    for forced in ("anthropic", "openai", "codex"):
        err = errors(claude, capsys, "--format", forced)
        assert "which the claude-code reader reads: try --format claude-code" in err and err.count("\n") == 1, err
    assert main([str(claude), str(tmp_path / "o.jsonl"), "--format", "claude-code"]) == 0


def test_sam_train_takes_the_stdout_file_and_the_live_state_reads_a_running_stream(tmp_path):
    """Harbor keeps the stdout as agent/claude-code.txt: a transcript to sam-train as to sam-data transcripts."""
    for name in ("claude-code.txt", "claude-code-stream.jsonl"):
        path = write(tmp_path / name, to_claude_stream(openai_messages()))
        assert source_kind(path) == "transcripts" and is_transcript_file(path)
        assert list(iter_source_events(path)) == read(path)[0]
    stream = to_claude_stream(openai_messages())
    last = max(i for i, m in enumerate(stream) if "c2" in json.dumps(m) and m["type"] == "assistant")
    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    assert live_state(stream[:last], stream[last]["message"]["content"][0]) == want
