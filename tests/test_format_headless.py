"""Coding agents run headless on benchmarks, their stdout kept: Claude Code's ``claude -p --output-format
stream-json --verbose`` (a layout of the claude-code format: its messages, one run a session) and Codex's ``codex
exec --json`` (the codex-exec format: thread events, one conversation a thread). The shared conversation and 40
tau-bench trajectories written as each give the OpenAI chat events of what the stream holds; a harness's file of
appended runs is split by session or thread; subagents, exit codes, MCP errors, cut last lines, the sniffs and bad
lines (one line naming FILE:LINE and the field).

The lines follow their producers (the modules' docstrings cite them): Claude Code 2.1's stream as public Harbor
logs hold it (``agent/claude-code.txt``: the init, a line per content block of one message id, tool results with
``tool_use_result``, the result), the SDK's message types, and codex's ``exec_events.rs`` (``ThreadEvent``,
``ThreadItem``) as ``event_processor_with_jsonl_output.rs`` prints them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_format_claude_code import to_claude_code
from test_format_codex import example_rollout, rollout_name
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
    codex_exec,
    detect,
    is_log_message,
    to_chat,
    tool_marks,
)
from sam_model.data.formats import main as formats_main
from sam_model.data.formats.files import conversations as file_conversations
from sam_model.data.formats.files import is_transcript_file
from sam_model.data.sources import iter_source_events, source_kind
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

SESSION = "72bd4dcd-1fa1-4ea6-a0ad-94ac9c3c0811"
THREAD = "019a2d8b-3b56-75c0-8ac6-68c926f0806f"
MODEL = "claude-sonnet-4-5-20250929"
SERVER = "airline"  # the MCP server of the shared conversation's tools, as Codex runs them


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


# ---- codex exec --json ---------------------------------------------------------------------------------------
def started(item: dict) -> dict:
    return {"type": "item.started", "item": item}


def completed(item: dict) -> dict:
    return {"type": "item.completed", "item": item}


def to_codex_exec(msgs: list[dict], thread: str = THREAD, server: str = SERVER) -> list[dict]:
    """Chat messages as ``codex exec --json`` prints them, a run a user turn (``codex exec PROMPT``, then ``codex
    exec resume THREAD PROMPT``, their stdout appended by the harness): each run's thread.started (the same
    thread), turn.started and turn.completed, its item ids from item_0; no prompt and no system message (neither is
    printed); a reasoning item before the first call; words an agent_message; each call an mcp_tool_call of
    ``server``, the calls of one response started together, then each completed with its result (one in Error:
    words the MCP error). Each run's turn.completed counts more tokens than the one before (a resumed run reads the
    thread before it): alike, a run sent as one add was taken for the last one's start sent again (live.retried)."""
    lines: list[dict] = []
    n, running, reasoned = 0, False, False

    def item(kind: str, **fields) -> dict:
        nonlocal n
        n += 1
        return {"id": f"item_{n - 1}", "type": kind, **fields}

    def run() -> None:
        nonlocal n, running
        if running:
            k = sum(x["type"] == "turn.completed" for x in lines) + 1  # the runs so far, this one's read them all
            lines.append({"type": "turn.completed", "usage": {"input_tokens": 2940 * k, "cached_input_tokens": 2048 * k,
                                                              "output_tokens": 13}})
        lines.extend([{"type": "thread.started", "thread_id": thread}, {"type": "turn.started"}])
        n, running = 0, True

    for i, m in enumerate(msgs):
        if m["role"] == "user":
            run()
        elif m["role"] == "assistant":
            if not running:
                run()
            calls = m.get("tool_calls") or []
            if calls and not reasoned:
                lines.append(completed(item("reasoning", text="**Looking up the user**")))
                reasoned = True
            if m.get("content"):
                lines.append(completed(item("agent_message", text=m["content"])))
            results = msgs[i + 1:i + 1 + len(calls)]
            assert all(r["role"] == "tool" for r in results) and len(results) == len(calls)
            items = [item("mcp_tool_call", server=server, tool=c["function"]["name"],
                          arguments=json.loads(c["function"]["arguments"]), result=None, error=None,
                          status="in_progress") for c in calls]
            lines += [started(x) for x in items]
            for x, r in zip(items, results):
                failed = r["content"].startswith("Error: ")
                lines.append(completed({
                    **x, "result": None if failed else {"content": [{"type": "text", "text": r["content"]}],
                                                        "structured_content": None},
                    "error": {"message": r["content"].removeprefix("Error: ")} if failed else None,
                    "status": "failed" if failed else "completed"}))
    if running:
        lines.append({"type": "turn.completed", "usage": {"input_tokens": 6032, "cached_input_tokens": 4992,
                                                          "output_tokens": 114}})
    return lines


def as_exec_holds_it(msgs: list[dict], server: str = SERVER) -> list[dict]:
    """The conversation ``codex exec --json`` holds of ``msgs``, as OpenAI chat: no system or user message, each
    call named ``<server>__<name>`` with an id of its own, answered by the result after it (tau-bench names its
    results by the tool too)."""
    out: list[dict] = []
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        calls = m.get("tool_calls") or []
        ids = [f"x{i}-{k}" for k in range(len(calls))]
        out.append({**m, "tool_calls": [{**c, "id": ids[k], "function": {
            **c["function"], "name": f"{server}__{c['function']['name']}"}} for k, c in enumerate(calls)]} if calls
                   else m)
        out += [{**r, "tool_call_id": ids[k], **({"name": f"{server}__{r['name']}"} if r.get("name") else {})}
                for k, r in enumerate(msgs[i + 1:i + 1 + len(calls)])]
    return out


def example_codex_exec() -> list[dict]:
    """The shared conversation as codex exec prints it (examples/logs/codex-exec.jsonl): two runs of one thread."""
    return to_codex_exec(openai_messages())


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


def test_codex_execs_stream_of_the_conversation_gives_the_openai_events_of_what_it_holds(tmp_path):
    """examples/logs/codex-exec.jsonl: two runs of one thread (codex exec, then codex exec resume), their events
    the OpenAI chat events of the same conversation as the stream holds it: no system prompt and no user words
    (codex exec prints neither), the calls as Codex names MCP tools; the thread its episode; the MCP error flags the
    cancel; the reasoning and the thread and turn events counted."""
    lines = example_codex_exec()
    path = write(tmp_path / "codex-exec.jsonl", lines)
    events, report = read(path)
    want = openai_events(tmp_path, {THREAD: as_exec_holds_it(openai_messages())})
    assert events == want and report.formats == {"codex-exec": 1}
    assert [e["text"].split("(")[0] for e in events if e["kind"] == "action"] == ["CALL airline__get_user",
                                                                                  "CALL airline__cancel"]
    assert report.ignored == {"thread.started events": 2, "turn.started events": 2, "turn.completed events": 2,
                              "reasoning items": 1}
    chat = to_chat(lines)
    assert [m.get("is_error") for m in chat.messages if m["role"] == "tool"] == [None, True]
    assert next(m for m in chat.messages if m["role"] == "tool" and m.get("is_error"))["content"] == ERROR
    assert (EXAMPLES / "codex-exec.jsonl").is_file()  # the same lines: tests/test_formats.py's write_all


# ---- real conversations: tau-bench's airline trajectories, all runs of a file ------------------------------------
@needs_tau
def test_tau_bench_as_one_file_of_appended_runs_gives_the_spec_events_of_what_each_stream_holds(tmp_path):
    """40 tau-bench trajectories, each run's stdout appended to one file as a harness keeps it: Claude Code's
    stream gives the spec's events of the same conversations without their system prompt (never printed), codex
    exec's those without the system prompt and the user's words (a run a user turn, none printed), its calls the
    MCP tools of the server "tau"."""
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    sessions = [f"{SESSION[:-12]}{n:012d}" for n in range(40)]
    claude = write(tmp_path / "claude-code.txt", [x for d, s in zip(data, sessions)
                                                  for x in to_claude_stream(d["traj"], s, thinking=False)])
    codex = write(tmp_path / "codex.txt", [x for d, s in zip(data, sessions)
                                           for x in to_codex_exec(d["traj"], s, server="tau")])
    events, report = read(claude)
    assert report.formats == {"claude-code": 40}
    assert events == openai_events(tmp_path, {s: [m for m in d["traj"] if m["role"] != "system"]
                                              for d, s in zip(data, sessions)})
    events, report = read(codex)
    assert report.formats == {"codex-exec": 40} and report.decision_points > 0
    assert events == openai_events(tmp_path, {s: as_exec_holds_it(d["traj"], "tau") for d, s in zip(data, sessions)})


# ---- runs, sessions, threads and subagents -------------------------------------------------------------------
def test_a_file_of_appended_runs_reads_one_conversation_a_session_or_thread(tmp_path):
    """A harness appends each run's stdout: sessions (threads) are conversations of their own, split groups of
    their own, and a run resuming a session (thread) under its id continues its conversation."""
    msgs = openai_messages()
    first, resumed = msgs[:6], msgs[6:]  # the resumed run answers "yes please"
    again = as_stream(to_claude_code(resumed, session="resumed"), SESSION)  # its own message ids, the session's id
    claude = write(tmp_path / "claude.jsonl", [*to_claude_stream(first), *to_claude_stream(msgs, "s-other"),
                                               init(), *again, ended()])
    codex = write(tmp_path / "codex.jsonl", [*to_codex_exec(first), *to_codex_exec(msgs, "t-other"),
                                             *to_codex_exec([{"role": "user", "content": "x"}, *resumed])])
    for path, one, other, whole in ((claude, SESSION, "s-other", to_claude_stream(msgs)),
                                    (codex, THREAD, "t-other", example_codex_exec())):
        convs = list(file_conversations(path))
        assert [(c.episode_id, c.group) for c in convs] == [(one, one), (other, other)]
        assert convs[0].where == f"{path}: {'session' if path == claude else 'thread'} {one}"
        events = read(path)[0]
        assert [e for e in events if e["episode_id"] == one] == read(write(tmp_path / "whole.jsonl", whole))[0]
    calls = [c["id"] for m in to_chat(to_codex_exec(first) + to_codex_exec(resumed)).messages
             for c in m.get("tool_calls", [])]
    assert calls == ["item_1", "item_1@3"]  # item ids restart with each run: told apart by the run


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


# ---- shell commands and failure flags ------------------------------------------------------------------------
def test_shell_commands_are_traced_by_their_words_in_both_streams(tmp_path):
    """Claude Code's Bash and codex exec's command_execution (the call shell {"command": line}) read by the shell
    command lines rule: cat's path traces to the find that printed it."""
    bash = lambda i, c: {"id": f"t{i}", "type": "function", "function": {  # noqa: E731
        "name": "Bash", "arguments": json.dumps({"command": c, "description": f"Step {i}"})}}
    msgs = [{"role": "user", "content": "The tokenizer drops the last token; fix it."}]
    for i, (command, out) in enumerate(((FIND, FOUND), (TESTS, RAN), (CAT, "def split(text):")), 1):
        msgs += [{"role": "assistant", "content": None, "tool_calls": [bash(i, command)]},
                 {"role": "tool", "tool_call_id": f"t{i}", "content": out}]
    lines = [{"type": "thread.started", "thread_id": THREAD}, {"type": "turn.started"}]
    for i, (command, out, code) in enumerate(((FIND, FOUND, 0), (TESTS, RAN, 1), (CAT, "def split(text):", 0))):
        item = {"id": f"item_{i}", "type": "command_execution", "command": f"bash -lc '{command}'",
                "aggregated_output": "", "exit_code": None, "status": "in_progress"}
        lines += [started(item), completed({**item, "aggregated_output": out, "exit_code": code,
                                            "status": "completed" if code == 0 else "failed"})]
    for name, doc in (("claude.jsonl", to_claude_stream(msgs)), ("codex.jsonl", lines)):
        events, _ = read(write(tmp_path / name, doc))
        found = next(e for e in events if e["kind"] == "result" and "tokenizer.py" in e["text"])
        decision = [e for e in events if e["kind"] == "result"][1]
        assert decision["useful_memory_steps"] == [found["step"]], name
        assert decision["meta"]["needed"] == {"command": [PATH]} and decision["state"]["uncertainty_flags"] == [
            "command"], name
        assert "error" in decision["state"]["last_action_result"] if name == "codex.jsonl" else True  # exit code 1


def test_codex_execs_failed_calls_are_flagged_by_exit_code_status_and_mcp_error():
    """A command's exit code other than 0 (without one: failed or declined), an MCP call's error or failed
    status, a failed file change: flagged; a call never completed (its run killed) has no result."""
    def call(i: int, kind: str, **fields) -> list[dict]:
        item = {"id": f"item_{i}", "type": kind, **fields}
        return [started({**item, "status": "in_progress"}), completed(item)]
    cmd = lambda i, code, status: call(i, "command_execution", command=f"ls d{i}", aggregated_output=f"out{i}",  # noqa: E731
                                       exit_code=code, status=status)
    lines = [{"type": "thread.started", "thread_id": THREAD}, *cmd(0, 0, "completed"), *cmd(1, 2, "failed"),
             *cmd(2, None, "declined"), *cmd(3, None, "completed"),
             *call(4, "mcp_tool_call", server="fs", tool="read", arguments={"path": "a"},
                   result={"content": [{"type": "text", "text": "A"}, {"type": "image", "data": "iVBO"}],
                           "structured_content": None}, error=None, status="completed"),
             *call(5, "mcp_tool_call", server="fs", tool="read", arguments={"path": "b"}, result=None,
                   error={"message": "no such file b"}, status="failed"),
             *call(6, "mcp_tool_call", server="fs", tool="stat", arguments=None,
                   result={"content": [], "structured_content": {"size": 3}}, error=None, status="completed"),
             *call(7, "file_change", changes=[{"path": "a.py", "kind": "update"}], status="completed"),
             *call(8, "file_change", changes=[{"path": "b.py", "kind": "add"}], status="failed"),
             started({"id": "item_9", "type": "command_execution", "command": "sleep 99", "aggregated_output": "",
                      "exit_code": None, "status": "in_progress"})]
    chat = to_chat(lines)
    results = {m["tool_call_id"]: (m["content"], m.get("is_error")) for m in chat.messages if m["role"] == "tool"}
    assert results == {"item_0": ("out0", None), "item_1": ("out1", True), "item_2": ("out2", True),
                       "item_3": ("out3", None), "item_4": ("A", None), "item_5": ("Error: no such file b", True),
                       "item_6": ('{"size": 3}', None), "item_7": ("completed", None), "item_8": ("failed", True)}
    calls = [c["function"] for m in chat.messages for c in m.get("tool_calls", [])]
    assert [c["name"] for c in calls] == ["shell"] * 4 + ["fs__read", "fs__read", "fs__stat", "apply_patch",
                                                         "apply_patch", "shell"]
    assert calls[-1]["arguments"] == {"command": "sleep 99"}  # called, never answered
    assert chat.ignored["image"] == 1


def test_the_first_version_of_codex_execs_events_reads_alike():
    """session.created and item_type, assistant_message and patch_apply: the events before thread.started."""
    lines = [{"type": "session.created", "session_id": THREAD},
             completed({"id": "itm_0", "item_type": "reasoning", "text": "**Checking**"}),
             completed({"id": "itm_1", "item_type": "command_execution", "command": "ls", "aggregated_output": "a.py",
                        "exit_code": 1, "status": "failed"}),
             completed({"id": "itm_2", "item_type": "patch_apply", "changes": [{"path": "a.py", "kind": "add"}]}),
             completed({"id": "itm_3", "item_type": "mcp_tool_call", "server": "fs", "tool": "ls",
                        "status": "completed"}),
             completed({"id": "itm_4", "item_type": "assistant_message", "text": "Done."})]
    assert detect(lines) == "codex-exec"
    assert [(m["role"], m.get("content"), m.get("is_error")) for m in to_chat(lines).messages] == [
        ("assistant", None, None), ("tool", "a.py", True), ("assistant", None, None), ("tool", "", None),
        ("assistant", None, None), ("tool", "", None), ("assistant", "Done.", None)]


# ---- cut last lines, files of no message, the older codex output ---------------------------------------------------
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_run_still_writing_is_read_without_its_cut_last_line_and_says_so(name, tmp_path, capsys):
    lines = to_claude_stream(openai_messages()) if name == "claude" else example_codex_exec()
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
    codex = write(tmp_path / "x.jsonl", [{"type": "thread.started", "thread_id": THREAD}, {"type": "turn.started"},
                                         {"type": "turn.failed", "error": {"message": "stream disconnected"}}])
    err = errors(codex, capsys)
    assert (f"{codex}: codex exec --json output without an item (thread.started, turn.started, turn.failed; the run "
            "failed: stream disconnected)") in err and err.count("\n") == 1


def test_the_older_codex_exec_output_is_refused_pointing_to_the_rollout(tmp_path, capsys):
    """Before its thread events codex exec --json printed its config, the prompt and protocol events: no reader
    reads them, so it is refused in one line naming the rollout the same run wrote."""
    path = write(tmp_path / "old.jsonl", [
        {"workdir": "/app", "model": "gpt-5-codex", "provider": "openai", "approval": "never",
         "sandbox": "workspace-write", "reasoning effort": "medium", "reasoning summaries": "auto"},
        {"prompt": "Fix the tokenizer."}, {"id": "0", "msg": {"type": "task_started"}}])
    err = errors(path, capsys)
    assert f"{path}:1: the output of an older codex exec --json" in err and "rollout" in err
    assert err.count("\n") == 1 and is_transcript_file(path)


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


ITEM = {"id": "item_0", "type": "command_execution", "command": "ls", "aggregated_output": "a", "exit_code": 0,
        "status": "completed"}


@pytest.mark.parametrize("bad, says", [
    ([1], "a codex exec --json event must be an object, got a list"),
    ({"type": 5}, "'type' is a number, expected a codex exec --json event type"),
    ({"type": "thread.started", "thread_id": 5}, "'thread_id' is a number, expected the thread's id"),
    ({"type": "item.completed", "item": "x"}, "'item' of a item.completed event is a string"),
    (completed({**ITEM, "id": None}), "'item.id' is null, expected a string"),
    (completed({"id": "i", "text": "x"}), "'item.type' is null, expected agent_message"),
    (completed({**ITEM, "command": ["ls"]}), "'item.command' is a list, expected the command line"),
    (completed({**ITEM, "exit_code": "1"}), "'item.exit_code' is a string, expected an integer or null"),
    (completed({**ITEM, "aggregated_output": 3}), "'item.aggregated_output' is a number"),
    (completed({**ITEM, "status": 3}), "'item.status' is a number"),
    (started({"id": "m", "type": "mcp_tool_call", "tool": "read"}), "'item.server' is null, expected the MCP server"),
    (completed({"id": "m", "type": "mcp_tool_call", "server": "fs", "tool": "read", "error": 5}),
     "'item.error' is a number"),
    (completed({"id": "m", "type": "mcp_tool_call", "server": "fs", "tool": "read", "result": "x"}),
     "'item.result' is a string"),
    (completed({"id": "f", "type": "file_change", "changes": "a.py"}), "'item.changes' is a string"),
    (completed({"id": "a", "type": "agent_message", "text": None}), "'item.text' is null"),
    ('{"type": "item.comp', "invalid JSON"),
])
def test_a_bad_codex_exec_line_is_one_line_naming_it(bad, says, tmp_path, capsys):
    lines = example_codex_exec()
    path = tmp_path / "x.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in [*lines[:2], bad, *lines[2:]]))
    err = errors(path, capsys)
    assert f"{path}:3: {says}" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_bad_line_refuses_its_session_or_thread_alone(name, tmp_path, capsys):
    """--skip-bad reads the other runs of the file; the bad one is listed, named by its line."""
    if name == "claude":
        good, bad = to_claude_stream(openai_messages(), "s-good"), to_claude_stream(openai_messages(), "s-bad")
        bad[3] = {**bad[3], "message": None}
    else:
        good, bad = to_codex_exec(openai_messages(), "t-good"), to_codex_exec(openai_messages(), "t-bad")
        bad[3] = completed({**bad[3]["item"], "id": 7})
    path = write(tmp_path / f"{name}.jsonl", [*bad, *good])
    assert f"{path}:4: " in errors(path, capsys)
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in out.read_text().splitlines()} == {
        "s-good" if name == "claude" else "t-good"}
    assert f"{path}:4: " in capsys.readouterr().out


def dumps(lines: list) -> str:
    return "".join(json.dumps(x) + "\n" for x in lines)


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_stderr_mixed_into_the_output_is_left_out_and_reported(name, tmp_path, capsys):
    """A harness that kept 2>&1 | tee (Harbor): a line that is no JSON and opens no object, before the first run or
    inside one, is the agent's stderr (Codex's notes): the run reads as without it, and sam-data transcripts and
    sam-train's conversion say how many and where. Such a line inside a run refused the whole run (a one-run file
    gave nothing, even with --skip-bad); this test asserted that before."""
    lines = to_claude_stream(openai_messages()) if name == "claude" else example_codex_exec()
    whole = read(write(tmp_path / "whole" / f"{name}.jsonl", lines))[0]
    path = tmp_path / ("claude-code.txt" if name == "claude" else "codex.txt")
    path.write_text("Reading prompt from stdin...\n" + dumps(lines[:3])
                    + "  2026-01-05T10:00:00.123Z ERROR codex_core::codex: stream error: retrying 1/5\n"
                    + "[2026-01-05 10:00:01] WARN not JSON either\n" + dumps(lines[3:]))
    note = (f"3 lines that are no JSON read as stderr mixed into the output and left out (2>FILE keeps it apart): "
            f"{path}:1 (and 2 more in the file)")
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out)]) == 0, capsys.readouterr().err
    assert out.read_text() == dumps(whole) and note in capsys.readouterr().out
    events, report = read(path)
    assert events == whole and report.stderr_lines == {f"{path}:1": 3}
    assert source_kind(path) == "transcripts" and list(iter_source_events(path)) == whole  # sam-train's conversion
    assert f"{path}: {note}" in capsys.readouterr().out
    session = tmp_path / "session.jsonl"  # a session file is no harness's stdout: such a line there is still bad
    entries = to_claude_code(openai_messages())
    session.write_text(dumps(entries[:3]) + "Reading prompt from stdin...\n" + dumps(entries[3:]))
    assert f"{session}:4: invalid JSON" in errors(session, capsys)


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_broken_record_among_stderr_lines_still_refuses_its_run(name, tmp_path, capsys):
    """A line opening { that is no JSON is a record broken, not stderr: it refuses its run (named, not said to be
    stderr) and --skip-bad reads the other, whose file's stderr line is reported."""
    make = to_claude_stream if name == "claude" else to_codex_exec
    one, two = make(openai_messages(), f"{name}-a"), make(openai_messages(), f"{name}-b")
    path = tmp_path / f"{name}.txt"
    path.write_text(dumps(one[:3]) + '{"type": "item.comp\n' + dumps(one[3:]) + "Reading prompt from stdin...\n"
                    + dumps(two))
    err = errors(path, capsys)
    assert f"{path}:4: invalid JSON" in err and f"{name}-a is refused rather than read without this line" in err
    assert "stderr" not in err and err.count("\n") == 1, err
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in out.read_text().splitlines()} == {f"{name}-b"}
    assert f"1 line that is no JSON read as stderr mixed into the output and left out (2>FILE keeps it apart): " \
           f"{path}:{len(one) + 2}" in capsys.readouterr().out


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
    """codex-exec's sniff takes no other format's messages (a dot in the type); no other sniff takes its events;
    Claude Code's stream messages are the claude-code reader's alone (its entries' API messages)."""
    others = [openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(), openhands_events(),
              openhands_v1_events(), example_rollout(), to_claude_code(openai_messages())]
    stream, events = to_claude_stream(openai_messages()), example_codex_exec()
    assert not any(FORMATS["codex-exec"].sniff(m) for m in [*others, stream])
    assert [f for f in FORMATS if FORMATS[f].sniff(events)] == ["codex-exec"]
    assert [f for f in FORMATS if FORMATS[f].sniff(stream)] == ["claude-code"]
    assert (detect(stream), detect(events)) == ("claude-code", "codex-exec")
    assert all(is_log_message(m) for m in [*stream, *events])
    firsts = {p.name: json.loads(p.read_text().splitlines()[0] if p.suffix == ".jsonl" else p.read_text())
              for p in EXAMPLES.iterdir()}  # what tells each file's container: its first line, or its document
    firsts = {n: doc[0] if isinstance(doc, list) else doc for n, doc in firsts.items()}
    assert len(firsts) >= 16
    assert [n for n, doc in firsts.items() if claude_stream.is_message(doc)] == ["claude-code-stream.jsonl"]
    assert [n for n, doc in firsts.items() if codex_exec.is_event(doc) or codex_exec.is_legacy(doc)] == [
        "codex-exec.jsonl"]
    assert tool_marks(events) == [("codex exec --json events of tool calls (item command_execution, mcp_tool_call, "
                                   "file_change)", "codex-exec")]


def test_another_reader_forced_on_a_stream_names_the_one_that_reads_it(tmp_path, capsys):
    claude = write(tmp_path / "c.jsonl", to_claude_stream(openai_messages()))
    codex = write(tmp_path / "x.jsonl", example_codex_exec())
    rollout = write(tmp_path / rollout_name(), example_rollout())
    for path, forced, reader in ((claude, "anthropic", "claude-code"), (claude, "codex-exec", "claude-code"),
                                 (codex, "codex", "codex-exec"), (codex, "openai", "codex-exec"),
                                 (rollout, "codex-exec", "codex")):
        err = errors(path, capsys, "--format", forced)
        assert f"which the {reader} reader reads: try --format {reader}" in err and err.count("\n") == 1, err
    assert main([str(claude), str(tmp_path / "o.jsonl"), "--format", "claude-code"]) == 0
    assert main([str(codex), str(tmp_path / "o.jsonl"), "--format", "codex-exec"]) == 0


def test_sam_train_takes_the_stdout_files_and_the_live_state_reads_a_running_stream(tmp_path, capsys):
    """Harbor keeps the stdout as agent/claude-code.txt and agent/codex.txt: transcripts to sam-train as to
    sam-data transcripts; sam-data formats names codex-exec."""
    for name, lines in (("claude-code.txt", to_claude_stream(openai_messages())),
                        ("codex.txt", example_codex_exec()), ("codex-exec.jsonl", example_codex_exec())):
        path = write(tmp_path / name, lines)
        assert source_kind(path) == "transcripts" and is_transcript_file(path)
        assert list(iter_source_events(path)) == read(path)[0]
    stream = to_claude_stream(openai_messages())
    last = max(i for i, m in enumerate(stream) if "c2" in json.dumps(m) and m["type"] == "assistant")
    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    assert live_state(stream[:last], stream[last]["message"]["content"][0]) == want
    assert formats_main([]) == 0 and "codex-exec" in capsys.readouterr().out
