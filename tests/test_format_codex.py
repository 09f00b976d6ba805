"""OpenAI Codex CLI rollouts (the codex format): the shared conversation and 40 tau-bench trajectories written as
rollouts, in the layout Codex writes today and the one before it, give the OpenAI chat events; a folder of them
(~/.codex/sessions) is read whole; exit codes flag failed commands; Codex's own user messages are policy; bad lines
are one line naming the file, the line and the field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_formats import (
    ARGS2,
    DONE,
    ERROR,
    HI,
    POLICY,
    SEE,
    TAU,
    YES,
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
)

from sam_model.data.formats import FORMATS, detect, to_chat
from sam_model.data.sources import source_kind
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

SESSION = "0199a213-81c0-7800-8aa1-bbab2a035a53"
T = "2025-10-29T00:59:38.317Z"
ENV = ("<environment_context>\n  <cwd>/home/agent/airline</cwd>\n  <approval_policy>on-request</approval_policy>\n"
       "  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
       "  <shell>bash</shell>\n</environment_context>")


def line(kind: str, payload: dict) -> dict:
    return {"timestamp": T, "type": kind, "payload": payload}


def meta(session: str = SESSION, policy: str | None = POLICY, **more) -> dict:
    """A session_meta line as codex 0.5x writes it (SessionMetaLine: the meta, flattened, and git)."""
    return line("session_meta", {"id": session, "timestamp": T, "cwd": "/home/agent/airline",
                                 "originator": "codex_cli_rs", "cli_version": "0.58.0", "source": "cli",
                                 "model_provider": "openai", **more,
                                 **({"base_instructions": {"text": policy}} if policy else {}),
                                 "git": {"commit_hash": "4b1c2e0", "branch": "main"}})


def message(role: str, text: str) -> dict:
    return {"type": "message", "role": role,
            "content": [{"type": "output_text" if role == "assistant" else "input_text", "text": text}]}


def to_items(msgs: list[dict]) -> list[dict]:
    """Chat messages as the ResponseItems Codex records for them: words as messages, each call a function_call
    (arguments the JSON string the model wrote), each result a function_call_output."""
    items: list[dict] = []
    for m in msgs:
        if m["role"] == "assistant":
            if m.get("content"):
                items.append(message("assistant", m["content"]))
            items += [{"type": "function_call", "name": c["function"]["name"], "arguments": c["function"]["arguments"],
                       "call_id": c["id"]} for c in m.get("tool_calls") or []]
        elif m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        elif m["role"] == "user":
            items.append(message("user", m["content"]))
    return items


def to_rollout(msgs: list[dict], session: str = SESSION, old: bool = False) -> list[dict]:
    """Chat messages as a rollout's lines: its system messages the session's instructions; ``old``: the layout
    before the RolloutLine wrapper (the meta {id, timestamp, instructions}, then bare items)."""
    policy = "\n".join(m["content"] for m in msgs if m["role"] == "system") or None
    items = to_items(msgs)
    if old:
        return [{"id": session, "timestamp": T, "instructions": policy}, *items, {"record_type": "state"}]
    return [meta(session, policy), *(line("response_item", item) for item in items)]


def example_rollout() -> list[dict]:
    """The shared conversation as codex writes it (examples/logs/codex.jsonl): the environment context, turn
    contexts and the event_msg echoes of every message, a reasoning item, and the cancel's output in Codex's exec
    form with exit code 1."""
    items = to_items(openai_messages())
    items[-2]["output"] = json.dumps({"output": ERROR, "metadata": {"exit_code": 1, "duration_seconds": 0.1}})
    turn = line("turn_context", {"cwd": "/home/agent/airline", "approval_policy": "on-request",
                                 "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex",
                                 "effort": "medium", "summary": "auto"})
    echo = lambda kind, text: line("event_msg", {"type": kind, "message": text, **(  # noqa: E731
        {"images": []} if kind == "user_message" else {})})
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Looking up the user**"}],
                 "content": None, "encrypted_content": "gAAAAABpAWb7"}
    tokens = line("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 2946,
                                                                                      "output_tokens": 57}}})
    r = lambda item: line("response_item", item)  # noqa: E731
    return [meta(), r(message("user", ENV)), turn, r(items[0]), echo("user_message", HI), r(reasoning),
            r(items[1]), r(items[2]), r(items[3]), echo("agent_message", SEE), tokens, turn, r(items[4]),
            echo("user_message", YES), r(items[5]), r(items[6]), r(items[7]), echo("agent_message", DONE), tokens]


def write(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def convert(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def rollout_name(session: str = SESSION) -> str:
    return f"rollout-2025-10-29T00-59-38-{session}.jsonl"


# ---- the shared conversation: both layouts, a file and ~/.codex/sessions, give the OpenAI chat events ----------
def test_the_conversation_as_a_rollout_gives_the_openai_events_in_both_layouts_and_as_a_folder(tmp_path):
    chat = tmp_path / "openai.jsonl"
    chat.write_text(json.dumps({"id": SESSION, "messages": openai_messages()}) + "\n")
    want = list(iter_transcript_events(chat))
    assert sum("useful_memory_steps" in e for e in want) == 1
    new = write(tmp_path / "new" / rollout_name(), example_rollout())
    old = write(tmp_path / "old" / rollout_name(), to_rollout(openai_messages(), old=True))
    home = tmp_path / ".codex" / "sessions"  # ~/.codex/sessions/YYYY/MM/DD, read whole
    write(home / "2025" / "10" / "29" / rollout_name(), example_rollout())
    for path in (new, old, home, tmp_path / ".codex"):
        events, report = convert(path)
        assert report.formats == {"codex": 1}, path
        assert events == want, path
    _, report = convert(new)
    assert report.ignored == {"event_msg lines": 6, "turn_context lines": 2, "reasoning": 1}
    _, report = convert(old)
    assert report.ignored == {"state lines": 1}
    assert source_kind(new) == source_kind(home) == "transcripts"  # sam-train and sam-eval take them as they are


def test_the_example_is_read_with_its_exit_code_and_environment_as_codex_wrote_them():
    """examples/logs/codex.jsonl: the environment context is policy (it is no event), and the failed cancel is
    flagged by its exit code, its words unwrapped from Codex's exec form. The session meta's working directory comes
    with the first message (toolstate traces a path under it by its relative part)."""
    chat = to_chat(example_rollout())
    assert chat.messages[0] == {"role": "system", "content": POLICY, "cwd": "/home/agent/airline"}
    assert chat.messages[1] == {"role": "system", "content": ENV}
    result = next(m for m in chat.messages if m.get("tool_call_id") == "c2")
    assert result == {"role": "tool", "tool_call_id": "c2", "content": ERROR, "is_error": True}
    assert next(m for m in chat.messages if m.get("tool_call_id") == "c1").get("is_error") is None
    assert detect(example_rollout()) == detect(to_rollout(openai_messages(), old=True)) == "codex"


# ---- real conversations: tau-bench's airline trajectories written as rollouts ---------------------------------
@needs_tau
def test_tau_bench_written_as_rollouts_gives_the_spec_events(tmp_path):
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    expected = list(iter_transcript_events(TAU, max_conversations=40))
    strip = lambda e: {k: v for k, v in e.items() if k not in ("episode_id", "meta")}  # noqa: E731
    want: dict[str, list] = {}
    for e in expected:
        want.setdefault(e["episode_id"], []).append(strip(e))
    home = tmp_path / "sessions"
    sessions = [f"0199a213-81c0-7800-8aa1-{n:012d}" for n in range(40)]
    for n, (d, sid) in enumerate(zip(data, sessions)):
        write(home / "2025" / "10" / f"{n % 28 + 1:02d}" / rollout_name(sid), to_rollout(d["traj"], sid))
        write(tmp_path / "old" / rollout_name(sid), to_rollout(d["traj"], sid, old=True))
    for folder in (home, tmp_path / "old"):
        got: dict[str, list] = {}
        events, report = convert(folder)
        for e in events:
            got.setdefault(e["episode_id"], []).append(strip(e))
        assert report.formats == {"codex": 40} and sorted(got) == sessions, folder
        assert [got[sid] for sid in sessions] == list(want.values()), folder


# ---- exit codes, shell calls -----------------------------------------------------------------------------------
def shell_session(outputs: list[str], local: bool = False) -> list[dict]:
    """A coding session: the user names a file, the model runs two commands (shell function calls, or the
    Responses API's local_shell_call), each answered by ``outputs``."""
    calls = []
    for i, cmd in enumerate((["bash", "-lc", "grep -rn parse_header src"], ["bash", "-lc", "pytest tests/test_x.py"])):
        if local:
            calls.append({"type": "local_shell_call", "call_id": f"s{i}", "status": "completed",
                          "action": {"type": "exec", "command": cmd, "timeout_ms": 10000,
                                     "working_directory": "/repo", "env": None, "user": None}})
        else:
            calls.append({"type": "function_call", "name": "shell", "call_id": f"s{i}",
                          "arguments": json.dumps({"command": cmd, "workdir": "/repo", "timeout_ms": 10000})})
    r = lambda item: line("response_item", item)  # noqa: E731
    return [meta(), r(message("user", "Fix parse_header in the tinyparse repo.")),
            r(calls[0]), r({"type": "function_call_output", "call_id": "s0", "output": outputs[0]}),
            r(calls[1]), r({"type": "function_call_output", "call_id": "s1", "output": outputs[1]})]


def exec_output(words: str, code: int) -> str:
    return json.dumps({"output": words, "metadata": {"exit_code": code, "duration_seconds": 0.4}})


FOUND = "src/tinyparse/header.py:212:def parse_header(line):\n"
FAILED_TESTS = "FAILED tests/test_x.py::test_header - AssertionError\n1 failed in 0.12s\n"


@pytest.mark.parametrize("local", [False, True])
def test_a_non_zero_exit_code_flags_the_result_and_codex_exec_form_reads_as_its_words(local):
    chat = to_chat(shell_session([exec_output(FOUND, 0), exec_output(FAILED_TESTS, 1)], local))
    results = [m for m in chat.messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == [FOUND, FAILED_TESTS]
    assert [m.get("is_error") for m in results] == [None, True]
    calls = [c["function"] for m in chat.messages for c in m.get("tool_calls", [])]
    args = [c["arguments"] if isinstance(c["arguments"], dict) else json.loads(c["arguments"]) for c in calls]
    assert [c["name"] for c in calls] == (["local_shell"] * 2 if local else ["shell"] * 2)
    assert [a["command"] for a in args] == [["bash", "-lc", "grep -rn parse_header src"],
                                            ["bash", "-lc", "pytest tests/test_x.py"]]
    assert all(a["workdir"] == "/repo" for a in args)
    state = live_state(shell_session([exec_output(FOUND, 0), exec_output(FAILED_TESTS, 1)], local),
                       tool="shell", arguments=["command"])
    assert state["last_action_result"].startswith(("shell: error", "local_shell: error")), state


def test_codex_text_form_is_flagged_by_its_exit_code_and_kept_whole(tmp_path):
    text = lambda code, out: f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{out}"  # noqa: E731
    chat = to_chat(shell_session([text(0, FOUND), text(2, FAILED_TESTS)]))
    results = [m for m in chat.messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == [text(0, FOUND), text(2, FAILED_TESTS)]
    assert [m.get("is_error") for m in results] == [None, True]
    events, _ = convert(write(tmp_path / rollout_name(), shell_session([text(0, FOUND), text(2, FAILED_TESTS)])))
    assert events[-1]["kind"] == "result" and events[-1]["text"].startswith("shell: Exit code: 2")
    plain = to_chat(shell_session([FOUND, '{"exit_code": 3, "note": "a tool\'s own JSON"}']))
    assert not any(m.get("is_error") for m in plain.messages)  # no other output is flagged


# ---- what is policy, what is counted --------------------------------------------------------------------------
def test_codex_own_messages_are_policy_and_echoes_are_counted():
    r = lambda item: line("response_item", item)  # noqa: E731
    agents = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun pytest before committing.\n</INSTRUCTIONS>"
    lines = [meta(policy="You are Codex.", instructions="Use uv."), r(message("developer", "<permissions>ask</permissions>")),
             r(message("user", agents)), r(message("user", "<user_instructions>Be brief.</user_instructions>")),
             r(message("user", "<skill>\n<name>pdf</name>\n</skill>")), r(message("user", "  " + ENV)),
             r(message("user", HI)), r(message("user", "<turn_aborted>\nThe user interrupted.\n</turn_aborted>")),
             line("compacted", {"message": "The user ann_lee_123 asked ...", "replacement_history": []}),
             r({"type": "compaction", "encrypted_content": "gAAA"}), r({"type": "ghost_snapshot", "ghost_commit": {}}),
             r({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "x"}}),
             meta("0199a213-0000-7000-8000-000000000000"), line("event_msg", {"type": "thread_rolled_back",
                                                                              "num_turns": 1}),
             line("world_state", {"x": 1})]
    chat = to_chat(lines)
    assert [m["role"] for m in chat.messages] == ["system"] * 6 + ["user"]
    assert chat.messages[0]["content"] == "You are Codex.\nUse uv." and chat.messages[-1]["content"] == HI
    assert chat.ignored == {"turn_aborted markers": 1, "compacted lines": 1, "compaction": 1, "ghost_snapshot": 1,
                            "web_search_call": 1, "session_meta lines": 1, "event_msg lines": 1,
                            "world_state lines": 1}


def test_a_fork_shares_its_parents_split_and_a_file_without_meta_is_named_by_its_uuid(tmp_path):
    parent, fork = SESSION, "0199a213-81c0-7800-8aa1-000000000002"
    write(tmp_path / "s" / rollout_name(parent), to_rollout(openai_messages(), parent))
    write(tmp_path / "s" / rollout_name(fork), [meta(fork, forked_from_id=parent),  # a fork copies its parent's lines
                                                *to_rollout(openai_messages(), parent)])
    events, report = convert(tmp_path / "s")
    assert report.formats == {"codex": 2} and report.ignored == {"session_meta lines": 1}
    assert {e["episode_id"] for e in events} == {parent, fork}
    assert {e.get("meta", {}).get("group", e["episode_id"]) for e in events} == {parent}
    bare = write(tmp_path / "b" / rollout_name(), to_rollout(openai_messages())[1:])  # the meta line lost
    assert {e["episode_id"] for e in convert(bare)[0]} == {SESSION}


def test_the_live_state_reads_a_running_rollout():
    lines = example_rollout()
    last = max(i for i, x in enumerate(lines) if x["payload"].get("call_id") == "c2" and x["payload"].get("type") ==
               "function_call")
    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    assert live_state(lines[:last], {"name": "cancel", "arguments": ARGS2}) == want
    assert want["uncertainty_flags"] == ["reservation_id", "user_id"]


@pytest.mark.parametrize("batches", ["one add", "an add per turn", "an add per line"])
def test_a_running_sessions_rollout_lines_are_added_to_scoped_memory_as_the_importer_reads_them(tmp_path, batches):
    """A sidecar that forwards a Codex session's new rollout lines to the memory (ScopedMemory.add, so sam-serve's add
    and MCP's remember) stores the memories the importer makes of the rollout: Codex's instructions and environment
    context are the run's policy, an exec output its words, and a call's state reads its exit code. (Rollout lines
    were refused: "give chat messages (dicts with 'role'), Events or event dicts (with 'kind' and 'text'), not a
    mix; got an object without 'kind'", though the importer reads them.)"""
    from sam_model.memory import HashingEncoder, ScopedMemory

    lines = example_rollout()
    events, _ = convert(write(tmp_path / rollout_name(), lines))
    memory = ScopedMemory(HashingEncoder(16))
    turns = [i for i, x in enumerate(lines) if x["type"] == "turn_context"] + [len(lines)]
    split = {"one add": [lines], "an add per line": [[x] for x in lines],
             "an add per turn": [lines[:turns[0]], *(lines[a:b] for a, b in zip(turns, turns[1:]))]}[batches]
    for batch in split:
        memory.add(batch, user_id="dev", run_id=SESSION)
    got = sorted(memory.get_all(user_id="dev", run_id=SESSION)["results"], key=lambda r: r["step"])
    assert [(r["kind"], r["memory"]) for r in got] == [(e["kind"], e["text"]) for e in events]
    assert f"cancel: {ERROR}" in [r["memory"] for r in got]  # the exec output's words, not its JSON envelope
    state = memory.live_state(user_id="dev", run_id=SESSION, call={"name": "get_user", "arguments": {"user_id": "x"}})
    assert state.last_action_result.startswith("cancel: error")  # exit code 1


# ---- sniffs: codex takes none of the other formats' messages, theirs none of its lines ---------------------------
def test_codex_sniff_and_the_others_take_none_of_each_others_messages():
    others = (openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(), openhands_events(),
              openhands_v1_events())
    assert not any(FORMATS["codex"].sniff(m) for m in others)
    for lines in (example_rollout(), shell_session(["a", "b"], local=True)):
        assert [f for f in FORMATS if f != "codex" and FORMATS[f].sniff(lines)] == []
    old = to_rollout(openai_messages(), old=True)  # bare items after the meta: Responses' sniff takes them too,
    assert detect(old) == detect(example_rollout()) == "codex"  # and codex, sniffed before it, reads them
    assert detect(to_items(openai_messages())) == "responses"  # bare items without the old meta stay Responses'


def test_another_reader_forced_on_a_rollout_names_codex_and_codex_forced_on_another_file_says_so(tmp_path, capsys):
    path = write(tmp_path / rollout_name(), example_rollout())
    for forced in ("responses", "openai", "gemini"):
        assert main([str(path), str(tmp_path / "o.jsonl"), "--format", forced]) == 1
        err = capsys.readouterr().err
        assert f"{rollout_name()}:1: " in err and "which the codex reader reads: try --format codex" in err, err
        assert err.count("\n") == 1, err
    chat = tmp_path / "c.jsonl"
    chat.write_text(json.dumps({"id": "a", "messages": openai_messages()}) + "\n")
    assert main([str(chat), str(tmp_path / "o.jsonl"), "--format", "codex"]) == 1
    err = capsys.readouterr().err
    assert "c.jsonl:1: not a Codex rollout" in err and "try --format openai" in err and err.count("\n") == 1, err


def test_a_rollout_without_a_tool_call_is_refused_unless_allowed(tmp_path, capsys):
    path = write(tmp_path / rollout_name(), [meta(), line("response_item", message("user", "hi")),
                                             line("response_item", message("assistant", "hello"))])
    out = tmp_path / "out.jsonl"
    assert main([str(path), str(out)]) == 1 and not out.exists()
    assert "no tool call was read" in capsys.readouterr().err
    assert main([str(path), str(out), "--allow-empty"]) == 0 and out.read_text().count("\n") == 2


# ---- bad lines: one line naming the file, the line and the field ----------------------------------------------
GOOD = [meta(), line("response_item", message("user", HI))]


@pytest.mark.parametrize("bad, says", [
    ([1, 2], "a rollout line must be an object, got a list"),
    (line("response_item", "hi"), "'payload' of a response_item line is a string, expected an object"),
    ({"timestamp": T, "type": None, "payload": {}}, "'type' is null, expected one of session_meta"),
    ({"timestamp": T, "note": "x"}, "neither a rollout line"),
    (line("response_item", {"type": "local_shell_call", "call_id": "s", "action": {"type": "run"}}),
     "'payload.action' is an object of type 'run', expected {\"type\": \"exec\""),
    (line("response_item", {"type": "local_shell_call", "call_id": "s", "action": {"type": "exec", "command": "ls"}}),
     "'payload.action.command' is a string, expected the command's words"),
    (line("response_item", {"type": "function_call_output", "call_id": "c",
                            "output": json.dumps({"output": "x", "metadata": {"exit_code": "1"}})}),
     "'payload.output' is Codex's exec output whose 'metadata.exit_code' is a string, expected an integer"),
    (line("response_item", {"type": "function_call_output", "output": "x"}),
     "function_call_output item without a 'call_id'"),
    (line("response_item", {"type": "function_call", "arguments": "{}", "call_id": "c"}), "tool call without a name"),
    (line("response_item", {"type": "message", "role": "tool", "content": []}), "message item with role 'tool'"),
    (line("response_item", {"type": "message", "role": "user", "content": 7}), "'content' is a number"),
])
def test_a_bad_line_is_one_line_naming_the_file_the_line_and_the_field(bad, says, tmp_path, capsys):
    path = write(tmp_path / rollout_name(), [*GOOD, bad, line("response_item", message("user", YES))])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{rollout_name()}:3: {says}" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("first, says", [
    (meta(policy=None, instructions=["x"]), ":1: 'payload.instructions' is a list, expected a string or null"),
    (meta(policy=None, base_instructions={"text": 3}), ":1: 'payload.base_instructions.text' is a number"),
    (meta(session=""), ":1: 'payload.id' is a string, expected a session's id"),
    (meta(forked_from_id=7), ":1: 'payload.forked_from_id' is a number, expected a session's id"),
])
def test_a_bad_session_meta_is_named_by_its_field(first, says, tmp_path, capsys):
    path = write(tmp_path / rollout_name(), [first, *GOOD[1:]])
    assert main([str(path), str(tmp_path / "o.jsonl"), "--allow-empty"]) == 1
    err = capsys.readouterr().err
    assert f"{rollout_name()}{says}" in err and err.count("\n") == 1, err


def test_a_line_that_cannot_be_read_refuses_its_session_alone(tmp_path, capsys):
    """A bad line (a complete one: it has its newline) spoils its session: named FILE:LINE; --skip-bad reads the
    others."""
    home = tmp_path / "sessions" / "2025" / "10" / "29"
    write(home / rollout_name(), example_rollout())
    other = "0199a213-81c0-7800-8aa1-000000000009"
    cut = home / rollout_name(other)
    cut.write_text("".join(json.dumps(x) + "\n" for x in to_rollout(openai_messages(), other)) + '{"timestamp": "20\n')
    assert main([str(tmp_path / "sessions"), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{rollout_name(other)}:10: invalid JSON" in err, err
    assert main([str(tmp_path / "sessions"), str(tmp_path / "o.jsonl"), "--skip-bad"]) == 0
    assert {json.loads(x)["episode_id"] for x in (tmp_path / "o.jsonl").read_text().splitlines()} == {SESSION}
    assert f"{rollout_name(other)}:10: invalid JSON" in capsys.readouterr().out  # listed as skipped
    (home / rollout_name("0199a213-81c0-7800-8aa1-00000000000a")).write_text("")  # a session cut before its first
    assert main([str(tmp_path / "sessions"), str(tmp_path / "o2.jsonl"), "--skip-bad"]) == 0  # line: skipped too
    assert "00000000000a.jsonl: a Codex rollout without a line" in capsys.readouterr().out


def test_a_running_sessions_cut_last_line_is_left_out_and_reported_its_complete_lines_read(tmp_path, capsys):
    """Codex appends a rollout as its session runs, so a copy of ~/.codex/sessions taken meanwhile ends inside its
    last line (no newline after it): the complete lines are read, as the file without that line, and the cut line
    is reported by FILE:LINE, as the claude-code reader does (it spoiled the session)."""
    lines = example_rollout()
    home = tmp_path / "sessions" / "2025" / "10" / "29"
    rollout = home / rollout_name()
    home.mkdir(parents=True)
    rollout.write_text("".join(json.dumps(x) + "\n" for x in lines[:-1]) + json.dumps(lines[-1])[:25])
    whole = write(tmp_path / "whole" / rollout_name(), lines[:-1])
    out = tmp_path / "o.jsonl"
    for given in (rollout, tmp_path / "sessions"):
        assert main([str(given), str(out)]) == 0, capsys.readouterr().err
        assert out.read_text() == "".join(json.dumps(e) + "\n" for e in convert(whole)[0])
        printed = capsys.readouterr().out
        assert f"1 session file read without its last line, cut mid-write (still being written?): {rollout}:" \
               f"{len(lines)}" in printed, printed
    only = write(tmp_path / "only" / rollout_name(), [])  # cut inside its first line: nothing to read, said so
    only.write_text(json.dumps(lines[0])[:25])
    assert main([str(only.parent), str(out)]) == 1
    assert f"{only}:1: invalid JSON" in capsys.readouterr().err


# ---- review (fix-rev1) ----------------------------------------------------------------------------------------
def unified_exec(code: int | None, out: str, chunk: str = "4f2a91") -> str:
    """An exec_command / write_stdin result as Codex's unified exec formats it (core/src/tools/handlers/
    unified_exec.rs, format_response): 'Process exited with code N' once the process exited, 'Process running with
    session ID N' while it runs."""
    status = f"Process exited with code {code}" if code is not None else "Process running with session ID 7"
    return f"Chunk ID: {chunk}\nWall time: 0.0512 seconds\n{status}\nOriginal token count: 12\nOutput:\n{out}"


def test_an_exec_command_that_exited_non_zero_is_flagged_like_a_shell_call():
    """Codex's exec_command (unified exec, the shell tool of newer Codex) answers 'Process exited with code 1':
    it read as an ok call, where the same failing command run by the shell tool was flagged; now flagged alike,
    kept whole, and a process still running (no exit code yet) or exited 0 is not."""
    r = lambda item: line("response_item", item)  # noqa: E731
    outputs = [unified_exec(0, FOUND), unified_exec(1, FAILED_TESTS), unified_exec(None, "collecting ..."),
               unified_exec(2, "", chunk="")[len("Chunk ID: \n"):]]  # no chunk id: no Chunk ID line
    lines = [meta(), r(message("user", "Fix parse_header in the tinyparse repo."))]
    for i, out in enumerate(outputs):
        lines += [r({"type": "function_call", "name": "exec_command", "call_id": f"e{i}",
                     "arguments": json.dumps({"cmd": "pytest -q", "yield_time_ms": 1000})}),
                  r({"type": "function_call_output", "call_id": f"e{i}", "output": out})]
    results = [m for m in to_chat(lines).messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == outputs
    assert [m.get("is_error") for m in results] == [None, True, None, True]
    state = live_state(lines[:6], tool="exec_command", arguments=["cmd"])  # the state after the failed run
    assert state["last_action_result"].startswith("exec_command: error"), state


def spawned(session: str, parent: str, depth: int = 1) -> dict:
    """The session_meta of a subagent's rollout: Codex's multi-agent tools run a spawned agent as a thread of its
    own (SessionSource::SubAgent(SubAgentSource::ThreadSpawn {parent_thread_id, depth, ...}))."""
    return meta(session, source={"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": depth,
                                                               "agent_nickname": None, "agent_role": "explorer"}}})


def test_a_subagents_rollout_and_a_fork_of_a_fork_share_their_first_sessions_split(tmp_path):
    """A subagent Codex spawned writes a rollout of its own (source: subagent, thread_spawn, its parent's id), part
    of its parent's task (it may copy its parent's history): it was its own split group, so one task's sessions fell
    on both sides of --split; and a fork of a fork (or a subagent's subagent) was grouped with its own parent, not
    with the session its line started from. In a folder each now shares the first session's group; a file given
    alone, the session it came from."""
    ids = [f"0199a213-81c0-7800-8aa1-00000000001{i}" for i in range(5)]
    root, child, grandchild, fork, fork2 = ids
    home = tmp_path / "sessions" / "2025" / "10" / "29"
    body = to_rollout(openai_messages(), root)[1:]
    write(home / rollout_name(root), to_rollout(openai_messages(), root))
    write(home / rollout_name(child), [spawned(child, root), *body])
    write(home / rollout_name(grandchild), [spawned(grandchild, child, depth=2), *body])
    write(home / rollout_name(fork), [meta(fork, forked_from_id=root), *body])
    write(home / rollout_name(fork2), [meta(fork2, forked_from_id=fork), *body])
    events, report = convert(tmp_path / "sessions")
    assert report.formats == {"codex": 5} and {e["episode_id"] for e in events} == set(ids)
    assert {e.get("meta", {}).get("group", e["episode_id"]) for e in events} == {root}
    alone, _ = convert(home / rollout_name(grandchild))
    assert {e["meta"]["group"] for e in alone} == {child}
    bad = write(tmp_path / "bad" / rollout_name(child), [spawned(child, 7), *body])
    assert str(convert_error(bad)).endswith(":1: 'payload.source.subagent.thread_spawn.parent_thread_id' is a "
                                            "number, expected a session's id (a string)")


def convert_error(path: Path) -> Exception:
    with pytest.raises(Exception) as err:
        convert(path)
    return err.value
