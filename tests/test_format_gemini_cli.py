"""Gemini CLI session files (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl``, ``.json`` before 2026): a
session read as the model saw it (a gemini message's words and toolCalls, each call's result the tool message,
status error and cancelled the failure flag), the CLI's notices and thoughts counted, chats folders read whole, a
running session's cut last line left out, and bad records in one line naming the file, the line and the field.

The records follow gemini-cli's own types (packages/core/src/services/chatRecordingTypes.ts: ConversationRecord,
MessageRecord, ToolCallRecord; chatRecordingService.ts writes them, the JSONL layout since PR #23749): results are
the ``functionResponse`` parts the scheduler sends the model (``{"output": ...}``, ``{"error": ...}``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_format_claude_code import others, to_claude_code
from test_formats import ARGS1, ERROR, HI, SEE, TAU, needs_tau, openai_messages, write_all

from sam_model.data.formats import FORMATS, detect, gemini_cli, to_chat, tool_marks
from sam_model.data.formats import main as formats_main
from sam_model.data.formats.files import conversations, is_transcript_file, trajectory_files
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.data.validate import main as validate

SESSION = "conv-1"
HASH = "5eb97eaffa8e54844d59a44d0c1a399d7e11eff9b0dbdc4f65d4ab7faecd90e1"
AT = "2025-09-30T14:11:04.096Z"


def response(call_id: str, name: str, output: str, failed: bool = False) -> list[dict]:
    """A call's result as the scheduler sends it to the model (convertToFunctionResponse, createErrorResponse)."""
    return [{"functionResponse": {"id": call_id, "name": name,
                                  "response": {"error": output.removeprefix("Error: ")} if failed else {"output": output}}}]


def call(call_id: str, name: str, args: dict, output: str | None, status: str = "success") -> dict:
    return {"id": call_id, "name": name, "args": args,
            "result": None if output is None else response(call_id, name, output, status != "success"),
            "status": status, "timestamp": AT, "displayName": name, "description": "",
            "resultDisplay": output, "renderOutputAsMarkdown": False}


def gemini(mid: str, content="", calls: list[dict] | None = None, thoughts: int = 0) -> dict:
    return {"id": mid, "timestamp": AT, "type": "gemini", "content": content,
            "thoughts": [{"subject": "Plan", "description": "look it up", "timestamp": AT}] * thoughts,
            "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12},
            "model": "gemini-2.5-pro", **({"toolCalls": calls} if calls is not None else {})}


def user(mid: str, content) -> dict:
    return {"id": mid, "timestamp": AT, "type": "user", "content": content}


def header(session: str = SESSION, **extra) -> dict:
    return {"sessionId": session, "projectHash": HASH, "startTime": AT, "lastUpdated": AT, **extra}


def to_gemini_cli(msgs: list[dict]) -> list[dict]:
    """Chat messages as Gemini CLI records them: no system prompt; a call and its result one ToolCallRecord of the
    gemini message that made it (status error for the failed one), a thought before the first call."""
    out: list[dict] = []
    for i, m in enumerate(msgs):
        if m["role"] == "user":
            out.append(user(f"m{i}", m["content"]))
        elif m["role"] == "assistant":
            after = msgs[i + 1:next((j for j in range(i + 1, len(msgs)) if msgs[j]["role"] != "tool"), len(msgs))]
            results = {r["tool_call_id"]: r["content"] for r in reversed(after)}  # (tau-bench repeats call ids)
            calls = [call(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]), results.get(c["id"]),
                          "error" if results.get(c["id"]) == ERROR else "success" if c["id"] in results else "executing")
                     for c in m.get("tool_calls") or []]
            out.append(gemini(f"m{i}", m["content"] or "", calls or None, thoughts=int(i == 2)))
    return out


def as_jsonl(messages: list[dict], session: str = SESSION, **extra) -> list[dict]:
    """The lines Gemini CLI appends: the metadata, then each message as created and again when it changes (a gemini
    message once with its calls still running, then finished), each followed by a $set of lastUpdated."""
    lines = [header(session, **extra)]
    for m in messages:
        if m.get("toolCalls"):
            lines.append({**m, "toolCalls": [{**c, "status": "executing", "result": None} for c in m["toolCalls"]]})
        lines += [m, {"$set": {"lastUpdated": AT}}]
    return lines


def as_json(messages: list[dict], session: str = SESSION, **extra) -> dict:
    return {**header(session, **extra), "messages": messages}


def write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in doc) if path.suffix == ".jsonl" else json.dumps(doc, indent=2))
    return path


def read(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def test_a_session_in_either_layout_gives_the_agent_log_lines_of_its_openai_twin(tmp_path):
    """The shared conversation as Gemini CLI records it, in the .jsonl it appends now and the .json it rewrote
    before: the agent log lines of the OpenAI chat (the failed cancel flagged by its status); thoughts, the
    metadata and $set records counted; a gemini message written again is read once, as last written."""
    files = write_all(tmp_path)
    expected = list(iter_transcript_events(files["openai"]))
    messages = to_gemini_cli(openai_messages())
    for path in (write(tmp_path / "chats" / "session-2025-09-30T14-11-conv1.jsonl", as_jsonl(messages)),
                 write(tmp_path / "old" / "session-2025-09-30T14-11-conv1.json", as_json(messages))):
        events, report = read(path)
        assert events == expected, path
        assert report.formats == {"gemini-cli": 1}
        assert report.ignored["thoughts"] == 1
    chat = to_chat(messages)
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant",
                                                  "tool", "assistant"]
    assert chat.messages[6] == {"role": "tool", "tool_call_id": "c2", "content": ERROR, "is_error": True}
    assert chat.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": openai_messages()[3]["content"]}


def test_before_this_reader_a_session_was_refused_and_a_forced_reader_names_this_one(tmp_path, capsys):
    """A .json session was 'conversation without 'id'' and a .jsonl's metadata line 'expected a conversation'; it is
    read now, and --format gemini on it says which reader reads it."""
    path = write(tmp_path / "session-a.jsonl", as_jsonl(to_gemini_cli(openai_messages())))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0
    capsys.readouterr()
    assert main([str(path), str(tmp_path / "p.jsonl"), "--format", "gemini"]) == 1
    err = capsys.readouterr().err
    assert "try --format gemini-cli" in err and err.count("\n") == 1
    assert main([str(path), str(tmp_path / "q.jsonl"), "--format", "gemini-cli"]) == 0


@pytest.mark.parametrize("status, flagged, result", [
    ("success", False, "3 rows"), ("error", True, "Error: no such table"),
    ("cancelled", True, "Error: [Operation Cancelled] Reason: User did not allow tool call")])
def test_a_calls_status_is_its_failure_flag_and_cancelled_reads_as_failed(status, flagged, result):
    """status error flags the call as failed; cancelled (declined at the prompt, or stopped) too: the model was told
    so as an error, as codex-exec flags a declined command; the result is the functionResponse the model got."""
    chat = to_chat([header(), user("u", "count the rows"),
                    gemini("g", "Counting.", [call("q1", "run_shell_command", {"command": "sqlite3 db 'select 1'"},
                                                   result, status)])])
    assert chat.messages[1]["tool_calls"][0]["function"] == {"name": "run_shell_command",
                                                            "arguments": {"command": "sqlite3 db 'select 1'"}}
    assert chat.messages[2] == {"role": "tool", "tool_call_id": "q1", "content": result,
                                **({"is_error": True} if flagged else {})}


def test_a_call_still_running_has_no_result_and_parallel_calls_keep_their_order():
    """Calls of one gemini message are parallel calls, in order; one recorded as executing (the file copied while it
    ran) is a call without a result, counted; a result of text and media parts gives its text."""
    media = [*response("r1", "read_file", "see image"), {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]
    chat = to_chat([user("u", [{"text": "look at "}, {"text": "logo.png"}]),
                    gemini("g", [{"text": "Reading"}, {"text": " both."}], [
                        {**call("r1", "read_file", {"absolute_path": "/p/logo.png"}, None), "result": media},
                        call("r2", "read_file", {"absolute_path": "/p/a.txt"}, None, "executing")])])
    assert chat.messages[0] == {"role": "user", "content": "look at \nlogo.png"}
    assert chat.messages[1]["content"] == "Reading both."
    assert [c["id"] for c in chat.messages[1]["tool_calls"]] == ["r1", "r2"]
    assert chat.messages[2:] == [{"role": "tool", "tool_call_id": "r1", "content": "see image"}]
    assert chat.ignored["tool calls without a result (still running when the file was written)"] == 1


def test_notices_and_thoughts_are_counted_not_turns():
    """info, error and warning messages are the terminal's notices, never sent to the model; thoughts are no words
    said to the user (the claude-code reader counts thinking so)."""
    chat = to_chat([header(), user("u", HI), {"id": "i", "timestamp": AT, "type": "info", "content": "Request cancelled."},
                    {"id": "e", "timestamp": AT, "type": "error", "content": "[API Error: quota]"},
                    {"id": "w", "timestamp": AT, "type": "warning", "content": "Loop detected"},
                    gemini("g", SEE, thoughts=2)])
    assert chat.messages == [{"role": "user", "content": HI}, {"role": "assistant", "content": SEE}]
    assert chat.ignored == {"session metadata": 1, "thoughts": 2,
                            "info messages (Gemini CLI's notices, not sent to the model)": 1,
                            "error messages (Gemini CLI's notices, not sent to the model)": 1,
                            "warning messages (Gemini CLI's notices, not sent to the model)": 1}


def test_a_shell_command_line_is_read_by_its_words_so_cat_traces_the_path_a_find_printed(tmp_path):
    """run_shell_command ({"command", "description"}) is a command line, labelled by its words (the shell command
    lines rule): the path in ``cat src/tinyparse/tokenizer.py`` traces to the earlier find's output."""
    path_said = "src/tinyparse/tokenizer.py"
    messages = [user("u", "The tokenizer drops the last token; fix it.")]
    for i, (command, output) in enumerate(((r'find . -name "*.py" | grep token',
                                            f"./{path_said}\n./tests/test_tokenizer.py"),
                                           ("python -m pytest -q", "1 failed, 3 passed in 0.12s"),
                                           (f"cat {path_said}", "def split(text):")), 1):
        messages.append(gemini(f"g{i}", "Let me look." if i == 1 else "",
                               [call(f"run_shell_command-{i}", "run_shell_command",
                                     {"command": command, "description": f"Step {i}"}, output)]))
    events, _ = read(write(tmp_path / "session-x.jsonl", as_jsonl(messages)))
    found = next(e for e in events if e["kind"] == "result" and "tokenizer.py" in e["text"])
    before_cat = [e for e in events if e["kind"] == "result"][1]
    assert before_cat["useful_memory_steps"] == [found["step"]]
    assert before_cat["meta"]["needed"] == {"command": [path_said]}


def test_a_chats_folder_is_read_whole_a_migrated_json_once_a_subagent_grouped_with_its_parent(tmp_path):
    """~/.gemini/tmp/<hash>: chats/ holds old .json sessions, new .jsonl ones, a .json resumed by a JSONL version
    beside its .jsonl copy (read once, not a duplicate id), and a subagent's session in chats/<parent id>/ (its split
    group the parent's), and a session just started, no run; logs.json (the prompts typed) and a checkpoint beside it are no runs."""
    messages = to_gemini_cli(openai_messages())
    root = tmp_path / "tmp" / HASH
    chats = root / "chats"
    write(chats / "session-2025-09-30T14-11-aaaaaaaa.json", as_json(messages, "aaaaaaaa-1"))
    write(chats / "session-2025-10-01T09-00-bbbbbbbb.json", as_json(messages, "bbbbbbbb-2"))
    write(chats / "session-2025-10-01T09-00-bbbbbbbb.jsonl", as_jsonl(messages, "bbbbbbbb-2"))
    write(chats / "session-2026-05-22T14-59-cccccccc.jsonl", as_jsonl(messages, "cccccccc-3", kind="main"))
    write(chats / "cccccccc-3" / "0la501.jsonl", as_jsonl(messages, "sub-4", kind="subagent"))
    started = write(chats / "session-2026-05-23T10-00-dddddddd.jsonl", [header("dddddddd-5", kind="main")])
    write(root / "logs.json", [{"sessionId": "cccccccc-3", "messageId": 0, "type": "user", "message": HI,
                                "timestamp": AT}])  # Logger's prompts
    write(root / "checkpoint-mytag.json", [{"role": "user", "parts": [{"text": HI}]}])
    names = [q.name for q in trajectory_files(root)]
    assert names == ["0la501.jsonl", "session-2025-09-30T14-11-aaaaaaaa.json",
                     "session-2025-10-01T09-00-bbbbbbbb.jsonl", "session-2026-05-22T14-59-cccccccc.jsonl",
                     "session-2026-05-23T10-00-dddddddd.jsonl"]
    convs = list(conversations(root))
    assert [(c.episode_id, c.group) for c in convs] == [("sub-4", "cccccccc-3"), ("aaaaaaaa-1", "aaaaaaaa-1"),
                                                          ("bbbbbbbb-2", "bbbbbbbb-2"), ("cccccccc-3", "cccccccc-3")]
    events, report = read(root)
    assert report.formats == {"gemini-cli": 4}
    assert source_kind(root) == "transcripts" and source_kind(chats / "cccccccc-3" / "0la501.jsonl") == "transcripts"
    alone = list(conversations(started))  # given alone, a session with no message yet is refused saying so
    assert len(alone) == 1 and "a Gemini CLI session without user or gemini messages (no message)" in str(alone[0])


def test_a_running_sessions_cut_last_line_is_left_out_and_reported(tmp_path, capsys):
    """Gemini CLI appends a .jsonl's lines as it runs (fs.appendFileSync): a copy taken meanwhile ends inside its
    last line; the complete lines are read and the cut one reported, in a file given and in a folder."""
    lines = as_jsonl(to_gemini_cli(openai_messages()))
    done = "".join(json.dumps(x) + "\n" for x in lines[:-1])
    session = tmp_path / "chats" / "session-a.jsonl"
    session.parent.mkdir()
    session.write_text(done + json.dumps(lines[-1])[:9])
    whole = write(tmp_path / "whole" / "session-a.jsonl", lines[:-1])
    for given in (session, session.parent):
        events, report = read(given)
        assert events == read(whole)[0]
        assert report.cut_lines == [f"{session}:{len(lines)}"]


def test_a_json_session_cut_mid_rewrite_is_refused_in_one_line_saying_why(tmp_path, capsys):
    """Before JSONL the CLI rewrote the whole .json at each message (fs.writeFileSync, not atomic): a copy taken
    meanwhile is cut; it is refused in one line naming the file and saying to copy it again (alone or in a folder)."""
    text = json.dumps(as_json(to_gemini_cli(openai_messages())), indent=2)
    path = tmp_path / "chats" / "session-2025-09-30T14-11-aaaaaaaa.json"
    path.parent.mkdir()
    path.write_text(text[: len(text) // 2])
    for given in (path, path.parent):
        assert main([str(given), str(tmp_path / "o.jsonl")]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {path}: invalid JSON") and "copy it again once the session is idle" in err
        assert err.count("\n") == 1


@pytest.mark.parametrize("line, says", [
    ({"id": "x", "timestamp": AT, "type": "model", "content": "hi"}, "not a Gemini CLI session record"),
    ({"id": "x", "timestamp": AT, "type": "gemini", "content": 7}, "content: is a number, expected a string"),
    (gemini("x", "", [call("c", "run_shell_command", {"command": "ls"}, "a", "done")]),
     "toolCalls 0: 'status' is 'done', expected success, error or cancelled"),
    (gemini("x", "", [{**call("c", "ls", {}, "a"), "args": "ls -la"}]), "toolCalls 0: 'args' is a string"),
    (gemini("x", "", [{**call("c", "ls", {}, "a"), "name": None}]), "toolCalls 0: tool call without a name"),
    (gemini("x", "", {"id": "c"}), "'toolCalls' is an object, expected a list"),
    (gemini("x", "", [{**call("c", "ls", {}, "a"), "result": [{"text": 5}]}]), "result, part 0: 'text' is a number"),
    ({"$set": {"summary": "t"}, "id": "x"}, "not a Gemini CLI session record"),
    ([1, 2], "not a Gemini CLI session record"),
])
def test_a_bad_record_refuses_its_session_in_one_line_naming_file_and_field(line, says, tmp_path, capsys):
    lines = as_jsonl(to_gemini_cli(openai_messages()))
    path = write(tmp_path / "session-a.jsonl", [*lines[:4], line, *lines[4:]])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert says in err and str(path) in err and err.count("\n") == 1, err


def test_a_file_that_is_no_session_is_refused_in_one_line(tmp_path, capsys):
    """--format gemini-cli on another format's file names the reader that reads it; a .json without 'messages',
    a .jsonl opened by a message rather than the metadata, and an empty session each a line."""
    claude = write(tmp_path / "c.jsonl", to_claude_code(openai_messages()))
    assert main([str(claude), str(tmp_path / "o.jsonl"), "--format", "gemini-cli"]) == 1
    err = capsys.readouterr().err
    assert f"{claude}:1: not a Gemini CLI session" in err and "try --format claude-code" in err
    bad = write(tmp_path / "session-b.json", header())
    assert main([str(bad), str(tmp_path / "o.jsonl")]) == 1
    assert "'messages' is null, expected the session's list of message records" in capsys.readouterr().err
    headless = write(tmp_path / "session-c.jsonl", to_gemini_cli(openai_messages()))
    assert main([str(headless), str(tmp_path / "o.jsonl"), "--format", "gemini-cli"]) == 1
    assert f"{headless}:1: not a Gemini CLI session: expected its metadata" in capsys.readouterr().err


def test_headless_stream_json_and_a_chat_save_checkpoint_are_refused_naming_the_session_file(tmp_path, capsys):
    """gemini -p --output-format stream-json records the terminal's rendering of each result (resultDisplay), not
    what the model got, and /chat save checkpoints repeat the session's turns without their calls' status: each is
    refused in one line naming the session file to give (both were 'expected a conversation ...')."""
    stream = write(tmp_path / "run.jsonl", [
        {"type": "init", "timestamp": AT, "session_id": "s1", "model": "gemini-2.5-pro"},
        {"type": "message", "timestamp": AT, "role": "user", "content": HI},
        {"type": "tool_use", "timestamp": AT, "tool_name": "get_user", "tool_id": "c1", "parameters": ARGS1},
        {"type": "tool_result", "timestamp": AT, "tool_id": "c1", "status": "success", "output": "ok"}])
    contents = [{"role": "user", "parts": [{"text": HI}]}, {"role": "model", "parts": [{"text": SEE}]}]
    for path in (stream, write(tmp_path / "checkpoint-mytag.json", contents),
                 write(tmp_path / "checkpoint-other.json", {"history": contents, "authType": "oauth-personal"})):
        assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "chats/session-*.jsonl" in err and str(path) in err, err


def test_sniffed_apart_it_takes_no_other_formats_messages_and_theirs_none_of_its():
    records = as_jsonl(to_gemini_cli(openai_messages()))
    assert detect(records) == detect(to_gemini_cli(openai_messages())) == "gemini-cli"
    assert not [f for f in FORMATS if f not in ("gemini-cli", "tau1") and FORMATS[f].sniff(records)]
    assert not [f for f in FORMATS if f not in ("gemini-cli", "tau1") and any(FORMATS[f].sniff([r]) for r in records)]
    assert not any(FORMATS["gemini-cli"].sniff(m) for m in (*others(), to_claude_code(openai_messages())))
    assert [detect(m) for m in others()][-4:] == ["gemini", "gemini", "openhands", "openhands-v1"]
    assert tool_marks(records) == [("Gemini CLI messages with toolCalls (type gemini)", "gemini-cli")]
    assert not any(f == "gemini-cli" for o in others() for _, f in tool_marks(o))
    assert not any(gemini_cli.is_record(m) for o in (*others(), to_claude_code(openai_messages())) for m in o)


def test_the_cli_and_validate_pick_the_format(tmp_path, capsys):
    """--format lists it, sam-data formats names it, sam-train takes a session file for a transcript, and validate
    on one says to convert it (it said only "missing required field 'episode_id'")."""
    path = write(tmp_path / "session-a.jsonl", as_jsonl(to_gemini_cli(openai_messages())))
    old = write(tmp_path / "session-b.json", as_json(to_gemini_cli(openai_messages()), "b"))
    assert is_transcript_file(path) and is_transcript_file(old)
    assert source_kind(path) == "transcripts"
    assert formats_main([]) == 0
    assert "gemini-cli Gemini CLI session files" in " ".join(capsys.readouterr().out.split())
    assert validate([str(path)]) == 1
    captured = capsys.readouterr()
    assert "looks like a tool-call transcript" in captured.out + captured.err
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "gemini-cli" in capsys.readouterr().out


def test_the_live_state_takes_a_running_sessions_records():
    """The state before the second call, from the session's records so far, is the importer's."""
    from sam_model.data.toolstate import live_state

    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    records = to_gemini_cli(openai_messages())
    last = next(i for i, r in enumerate(records) if r.get("toolCalls") and r["toolCalls"][0]["id"] == "c2")
    pending = {**records[last]["toolCalls"][0], "status": "executing", "result": None}
    assert live_state(records[:last], {"name": pending["name"], "arguments": pending["args"]}) == want


@needs_tau
def test_tau_bench_rewritten_as_gemini_cli_sessions_gives_the_spec_events(tmp_path):
    """40 tau-bench trajectories written as the .jsonl sessions of a chats folder give the spec's events of the same
    conversations, without their system prompt (never stored in a session)."""
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    chats = tmp_path / "chats"
    for n, d in enumerate(data):
        write(chats / f"session-2025-09-30T14-11-c{n:02d}.jsonl", as_jsonl(to_gemini_cli(d["traj"]), f"c{n:02d}"))
    plain = tmp_path / "openai.jsonl"
    plain.write_text("".join(json.dumps({"id": f"c{n:02d}", "messages": [m for m in d["traj"] if m["role"] != "system"]})
                             + "\n" for n, d in enumerate(data)))
    events, report = read(chats)
    assert report.formats == {"gemini-cli": 40} and events == list(iter_transcript_events(plain))
    assert report.decision_points > 0
