"""Claude Code session transcripts (``~/.claude/projects/<project>/<session id>.jsonl``): a session read as the model
saw it (an API message streamed one content block a line is one turn, results in user entries, is_error the
failure flag), subagents' sidechains their own conversations, compaction, bookkeeping entries counted, project
folders read whole, and bad lines in one line naming the file, the line and the field.

The entries follow what public readers of these files and samples of them show (the module's docstring names
them): ``{"parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type", "message",
"uuid", "timestamp"}``, an assistant's ``message`` the API's (``id``, ``model``, ``content``, ``usage``) with a
``requestId`` beside it, a tool result's entry with Claude Code's ``toolUseResult``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_format_codex import SESSION as ROLLOUT_SESSION
from test_format_codex import example_rollout, rollout_name, shell_session, to_rollout
from test_formats import (
    ARGS2,
    ERROR,
    HI,
    SEE,
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
    snake_case,
    swe_agent_history,
    tau2_messages,
    write_all,
)

from sam_model.data.formats import FORMATS, claude_code, codex, detect, to_chat, tool_marks
from sam_model.data.formats import main as formats_main
from sam_model.data.formats.files import is_transcript_file, trajectory_files
from sam_model.data.sources import iter_source_events, source_kind
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

SESSION = "conv-1"
MODEL = "claude-sonnet-4-5-20250929"


class Session:
    """The entries of one session as Claude Code appends them: each chained to the one before by ``parentUuid``, an
    assistant response one line per content block sharing its ``message.id`` and ``requestId``, each tool result a
    user entry of its own."""

    def __init__(self, session: str = SESSION, sidechain: bool = False, agent: str | None = None) -> None:
        self.session, self.sidechain, self.agent = session, sidechain, agent
        self.entries: list[dict] = []
        self.responses = 0

    def add(self, kind: str, message: dict | None = None, parent: str | None = "last", **extra) -> dict:
        n = len(self.entries)
        last = next((e["uuid"] for e in reversed(self.entries) if "uuid" in e), None)
        entry = {"parentUuid": last if parent == "last" else parent,
                 "isSidechain": self.sidechain, "userType": "external", "cwd": "/home/ann/airline",
                 "sessionId": self.session, "version": "2.0.46", "gitBranch": "main",
                 **({"agentId": self.agent} if self.agent else {}), "type": kind,
                 **({"message": message} if message is not None else {}),
                 "uuid": f"{self.session}-{'a' if self.sidechain else 'm'}{n:04d}",
                 "timestamp": f"2025-11-19T22:{n // 60:02d}:{n % 60:02d}.000Z", **extra}
        self.entries.append(entry)
        return entry

    def user(self, content, **extra) -> dict:
        return self.add("user", {"role": "user", "content": content}, **extra)

    def respond(self, *blocks: dict, model: str = MODEL) -> list[dict]:
        """One API response: a line per block, all of one message id."""
        self.responses += 1
        mid = f"msg_{self.session}_{self.responses:03d}"
        return [self.add("assistant", {"model": model, "id": mid, "type": "message", "role": "assistant",
                                       "content": [b], "stop_reason": None, "stop_sequence": None,
                                       "usage": {"input_tokens": 3, "output_tokens": 9}},
                         requestId=f"req_{mid}") for b in blocks]

    def result(self, call_id: str, content, is_error=None, **extra) -> dict:
        block = {"tool_use_id": call_id, "type": "tool_result", "content": content,
                 **({"is_error": is_error} if is_error is not None else {})}
        return self.user([block], toolUseResult=content if isinstance(content, str) else {"content": content},
                         **extra)


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(call_id: str, name: str, args: dict) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def to_claude_code(msgs: list[dict], session: str = SESSION, thinking: bool = True) -> list[dict]:
    """Chat messages as Claude Code writes their session: a file-history snapshot before the first prompt; each
    response streamed a line per block (a thinking block before the first calls), each result a user entry; no
    system prompt anywhere (Claude Code stores none)."""
    s = Session(session)
    thought = not thinking
    for m in msgs:
        if m["role"] == "user":
            if not s.entries:
                s.entries.append({"type": "file-history-snapshot", "messageId": f"{session}-m0001",
                                  "snapshot": {"messageId": f"{session}-m0001", "trackedFileBackups": {},
                                               "timestamp": "2025-11-19T22:00:00.000Z"}, "isSnapshotUpdate": False})
            s.user(m["content"])
        elif m["role"] == "assistant":
            blocks = [text(m["content"])] if m.get("content") else []
            calls = [tool_use(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in m.get("tool_calls") or []]
            if calls and not thought:
                blocks, thought = [{"type": "thinking", "thinking": "look up", "signature": "EqQB"}, *blocks], True
            s.respond(*blocks, *calls)
        elif m["role"] == "tool":
            s.result(m["tool_call_id"], m["content"], is_error=True if m["content"] == ERROR else None)
    return s.entries


def write(path: Path, entries: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def read(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def openai_events(tmp_path: Path, msgs: list[dict], conv: str = SESSION) -> list[dict]:
    path = tmp_path / f"openai-{conv}.jsonl"
    path.write_text(json.dumps({"id": conv, "messages": msgs}) + "\n")
    return list(iter_transcript_events(path))


def test_a_session_gives_the_agent_log_lines_of_its_openai_twin(tmp_path):
    """The shared conversation as Claude Code writes it: streamed responses are one turn each, the failed call
    flagged, the thinking, the snapshot counted; its episode is the session."""
    files = write_all(tmp_path)
    events, report = read(files["claude-code"])
    assert events == list(iter_transcript_events(files["openai"]))
    assert report.formats == {"claude-code": 1} and {e["episode_id"] for e in events} == {SESSION}
    assert report.ignored == {"thinking": 1, "file-history-snapshot entries": 1}
    chat = to_chat(to_claude_code(openai_messages()))
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant",
                                                  "tool", "assistant"]
    assert chat.messages[6] == {"role": "tool", "tool_call_id": "c2", "content": ERROR, "is_error": True}


def test_another_reader_forced_on_a_session_names_this_one(tmp_path, capsys):
    """Before this reader a session file was refused at its first line as no conversation object; it is read now,
    and a reader forced on it says which one reads it."""
    path = write_all(tmp_path)["claude-code"]
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0
    assert main([str(path), str(tmp_path / "p.jsonl"), "--format", "anthropic"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: expected a conversation" in err and "try --format claude-code" in err and err.count("\n") == 1


def test_a_streamed_response_is_one_turn_even_with_a_result_written_between_its_lines():
    """Claude Code runs a call while the response still streams: the call's result can be written before the
    response's next block; the blocks of one message id are still one turn, its calls parallel calls."""
    s = Session()
    s.user("Cancel both of my reservations QX7Z9A and ZZ1234.")
    words, first, second = s.respond(text("Cancelling both."), tool_use("t1", "cancel", {"reservation_id": "QX7Z9A"}),
                                     tool_use("t2", "cancel", {"reservation_id": "ZZ1234"}))
    result1 = s.result("t1", "cancelled QX7Z9A")
    s.entries[1:] = [words, first, result1, second]  # the order on disk: text, t1, t1's result, t2
    s.result("t2", "cancelled ZZ1234")
    s.respond(text("Both are cancelled."))
    assert len({e["message"]["id"] for e in (words, first, second)}) == 1
    chat = to_chat(s.entries)
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    turn = chat.messages[1]
    assert turn["content"] == "Cancelling both." and [c["id"] for c in turn["tool_calls"]] == ["t1", "t2"]
    assert [c["function"]["arguments"] for c in turn["tool_calls"]] == [{"reservation_id": "QX7Z9A"},
                                                                        {"reservation_id": "ZZ1234"}]


def test_parallel_calls_read_as_their_openai_twin(tmp_path):
    """Two calls of one response (each its own line) and their two result entries are the OpenAI turn with two
    tool_calls and its two tool messages, event for event."""
    call = lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}  # noqa: E731
    msgs = [{"role": "user", "content": HI},
            {"role": "assistant", "content": "Looking both up.",
             "tool_calls": [call("c1", "get_user", {"user_id": "ann_lee_123"}),
                            call("c2", "get_reservation", {"reservation_id": "QX7Z9A"})]},
            {"role": "tool", "tool_call_id": "c1", "content": "Ann"},
            {"role": "tool", "tool_call_id": "c2", "content": "QX7Z9A, economy"},
            {"role": "assistant", "content": None, "tool_calls": [call("c3", "cancel", ARGS2)]},
            {"role": "tool", "tool_call_id": "c3", "content": "ok"}, {"role": "assistant", "content": SEE}]
    path = write(tmp_path / "s.jsonl", to_claude_code(msgs, thinking=False))
    assert [json.loads(x)["type"] for x in path.read_text().splitlines()].count("assistant") == 5  # a line a block
    events, report = read(path)
    assert events == openai_events(tmp_path, msgs) and report.calls == 3


@pytest.mark.parametrize("flag, flagged", [(True, True), (False, False), (None, False)])
def test_is_error_is_the_failure_flag_as_the_anthropic_reader_hands_it(flag, flagged):
    """``is_error: true`` flags the call (README, failed tool calls); false, and the null Claude Code writes, do not."""
    s = Session()
    s.user("Cancel QX7Z9A.")
    s.respond(tool_use("t1", "cancel", {"reservation_id": "QX7Z9A"}))
    entry = s.result("t1", [text("Not allowed: fare class")])
    entry["message"]["content"][0]["is_error"] = flag
    tool = to_chat(s.entries).messages[2]
    assert tool["content"] == "Not allowed: fare class" and tool.get("is_error", False) is flagged
    state = live_state(s.entries, {"name": "cancel", "arguments": {"reservation_id": "QX7Z9A"}})
    assert state["last_action_result"].startswith("cancel: error" if flagged else "cancel: ok")


def subagent(session: str = SESSION, agent: str | None = "a1b2c3d", prompt: str = "Find the reservation of Ann.",
             call: str = "s1") -> list[dict]:
    """A Task subagent's sidechain: its prompt, a call and its result, its answer."""
    s = Session(session, sidechain=True, agent=agent)
    s.user(prompt, parent=None)
    s.respond(text("Searching."), tool_use(call, "Grep", {"pattern": "ann_lee_123", "path": "db/"}))
    s.result(call, "db/reservations.json: QX7Z9A ann_lee_123")
    s.respond(text("Ann holds QX7Z9A."))
    return s.entries


def parent_with_task(session: str = SESSION) -> Session:
    s = Session(session)
    s.user(HI)
    s.respond(tool_use("task1", "Task", {"description": "Find reservation", "subagent_type": "general-purpose",
                                         "prompt": "Find the reservation of Ann."}))
    return s


def test_a_subagents_sidechain_is_its_own_conversation_in_the_sessions_file_or_its_own(tmp_path):
    """Older versions wrote a subagent's entries (isSidechain) into the session's file, newer ones into
    <session>/subagents/agent-<id>.jsonl: either way the subagent is a conversation of its own, named by the session
    and its agentId, split with its session, and the session's own turns hold none of its entries."""
    s = parent_with_task()
    side = subagent()
    s.entries += side[:2]  # interleaved, as a file holding both is written
    s.result("task1", "Ann holds QX7Z9A.", agentId="a1b2c3d")
    s.entries += side[2:]
    s.respond(text(SEE))
    inline = write(tmp_path / "inline" / f"{SESSION}.jsonl", s.entries)
    split = tmp_path / "project"
    write(split / f"{SESSION}.jsonl", [e for e in s.entries if not e["isSidechain"]])
    write(split / SESSION / "subagents" / "agent-a1b2c3d.jsonl", side)
    for path in (inline, split):
        events, report = read(path)
        by_episode: dict[str, list[str]] = {}
        for e in events:
            by_episode.setdefault(e["episode_id"], []).append(e["text"])
        assert set(by_episode) == {SESSION, f"{SESSION}-agent-a1b2c3d"} and report.conversations == 2, path
        assert by_episode[SESSION] == [HI, 'CALL Task(description=Find reservation, subagent_type=general-purpose, '
                                           'prompt=Find the reservation of Ann.)', "Task: Ann holds QX7Z9A.", SEE]
        assert by_episode[f"{SESSION}-agent-a1b2c3d"][0] == "Find the reservation of Ann."
        assert "CALL Grep(pattern=ann_lee_123, path=db/)" in by_episode[f"{SESSION}-agent-a1b2c3d"]
        assert {e.get("meta", {}).get("group", e["episode_id"]) for e in events} == {SESSION}
    assert to_chat(s.entries).ignored["entries of another chain (a subagent's: its own conversation)"] == len(side)


def test_subagents_without_an_agent_id_are_told_apart_by_their_chain(tmp_path):
    """An older version wrote no agentId: two subagents' interleaved entries are two conversations, each the chain
    of parentUuid from its root."""
    s = parent_with_task()
    one, two = subagent(agent=None), subagent(agent=None, prompt="Find Bo's reservation.", call="s9")
    for e in two:  # its own uuids, chained among themselves
        e["uuid"] = e["uuid"].replace("-a", "-b")
        e["parentUuid"] = e["parentUuid"] and e["parentUuid"].replace("-a", "-b")
    s.entries += [x for pair in zip(one, two) for x in pair]
    s.result("task1", "Ann holds QX7Z9A.")
    events, report = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    firsts = {}
    for e in events:
        firsts.setdefault(e["episode_id"], e["text"])
    assert firsts == {SESSION: HI, f"{SESSION}-sidechain-1": "Find the reservation of Ann.",
                      f"{SESSION}-sidechain-2": "Find Bo's reservation."}
    folder = tmp_path / "project"  # agentless subagents in files of their own: named by their files, no duplicate
    write(folder / "agent-3a7f.jsonl", one)
    write(folder / "agent-9c1d.jsonl", two)
    events, report = read(folder)
    assert {e["episode_id"] for e in events} == {f"{SESSION}-agent-3a7f", f"{SESSION}-agent-9c1d"}


def test_a_compaction_summary_and_its_boundary_are_counted_the_turns_before_read(tmp_path):
    """After /compact the model continues from the summary (a user message), but the turns it restates stay in the
    file and are read, so the summary is counted (a second memory of their values), as is the boundary; the review
    below (fix-rev1) says why it was a user turn before."""
    summary = ("This session is being continued from a previous conversation that ran out of context. Summary: the "
               "user is Ann (ann_lee_123) and wants reservation QX7Z9A cancelled.")
    s = Session()
    s.user(HI)
    s.respond(text("Noted."))
    s.add("system", parent=None, subtype="compact_boundary", content="Conversation compacted", level="info",
          logicalParentUuid=s.entries[-1]["uuid"], compactMetadata={"trigger": "manual", "preTokens": 181725})
    s.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.user("yes please")
    s.respond(tool_use("t1", "cancel", {"reservation_id": "QX7Z9A", "user_id": "ann_lee_123"}))
    s.result("t1", "cancelled")
    events, report = read(write(tmp_path / "s.jsonl", s.entries))
    assert [e["text"] for e in events[:3]] == [HI, "Noted.", "yes please"]
    assert report.ignored == {"system compact_boundary entries": 1,
                              "compact summaries (restating the turns read before them)": 1}
    assert report.decision_points == 1


def test_meta_and_command_lines_are_the_users_turns_as_the_model_was_sent_them():
    """isMeta entries (the local-command caveat, a skill's instructions), a slash command and a local command's
    output are user messages Claude Code sends the model: user turns, with their words as written."""
    caveat = ("Caveat: The messages below were generated by the user while running local commands. DO NOT respond to "
              "these messages or otherwise consider them in your response unless the user explicitly asks you to.")
    command = "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"
    stdout = "<local-command-stdout>Set model to opus</local-command-stdout>"
    s = Session()
    s.user(caveat, isMeta=True)
    s.user(command)
    s.user(stdout)
    s.user([text("Base directory for this skill: /home/ann/.claude/skills/pdf")], isMeta=True, sourceToolUseID="t0")
    chat = to_chat(s.entries)
    assert [(m["role"], m["content"]) for m in chat.messages] == [
        ("user", caveat), ("user", command), ("user", stdout),
        ("user", "Base directory for this skill: /home/ann/.claude/skills/pdf")]


def test_bookkeeping_synthetic_and_replayed_entries_are_counted_not_read(tmp_path):
    """Summary titles, snapshots, queue operations, hook summaries, Claude Code's own <synthetic> words and a
    replay of an entry (same time, parent and message under a new uuid) are no turn of the conversation."""
    s = Session()
    s.entries.append({"type": "summary", "summary": "Cancel a reservation", "leafUuid": "x-0003"})
    s.add("queue-operation", operation="enqueue", content="hi")
    s.user(HI)
    s.respond(tool_use("t1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("t1", "Ann")
    s.entries.append({**s.entries[-1], "uuid": "replayed"})
    s.add("assistant", {"model": "<synthetic>", "id": "x", "role": "assistant", "type": "message",
                        "content": [text("API Error: 529 Overloaded")]}, isApiErrorMessage=True)
    s.add("system", subtype="stop_hook_summary", hookCount=1)
    s.add("progress", data={"type": "hook_progress"})
    s.entries.append({"type": "worktree-state", "state": {}})  # a type of a later version, without the usual keys
    events, report = read(write(tmp_path / "s.jsonl", s.entries))
    assert [e["kind"] for e in events] == ["user", "action", "result"]
    assert report.ignored == {"summary entries": 1, "queue-operation entries": 1, "progress entries": 1,
                              "worktree-state entries": 1,
                              "system stop_hook_summary entries": 1,
                              "repeated entries (a replay: same time, parent and message)": 1,
                              "synthetic assistant entries (Claude Code's own words: API errors, interruptions)": 1}


def test_the_episode_is_the_session_a_forked_file_its_own(tmp_path):
    """A branched session's file holds the entries it copied (their sessionId the original's) before its own: it is
    named by its file, which Claude Code names by the session; a file named otherwise by its last session id."""
    orig = to_claude_code(openai_messages()[:4], session="orig")
    branch = to_claude_code(openai_messages(), session="fork")
    folder = tmp_path / "project"
    write(folder / "orig.jsonl", orig)
    write(folder / "fork.jsonl", orig + branch[len(orig):])
    events, report = read(folder)
    assert [*dict.fromkeys(e["episode_id"] for e in events)] == ["fork", "orig"] and report.conversations == 2
    renamed = write(tmp_path / "copied.jsonl", orig + branch[len(orig):])
    assert {e["episode_id"] for e in read(renamed)[0]} == {"fork"}


def test_a_project_folder_is_read_whole_and_a_title_only_file_is_no_run(tmp_path, capsys):
    """~/.claude/projects/<project>: every session file and subagent file under it; a file of summary titles alone
    is no run there, and given alone is refused in one line saying what it holds."""
    project = tmp_path / "-home-ann-airline"
    write(project / "s1.jsonl", to_claude_code(openai_messages(), session="s1"))
    write(project / "s2.jsonl", to_claude_code(openai_messages(), session="s2"))
    titles = write(project / "s3.jsonl", [{"type": "summary", "summary": "Cancel a trip", "leafUuid": "s1-m0003"}])
    write(project / "s1" / "subagents" / "agent-a1b2c3d.jsonl", subagent(session="s1"))
    (project / "notes.jsonl").write_text(json.dumps({"id": "x", "messages": []}) + "\n")  # no Claude Code entry
    assert source_kind(project) == "transcripts" and is_transcript_file(project / "s1.jsonl")
    assert [q.name for q in trajectory_files(project)] == ["agent-a1b2c3d.jsonl", "s1.jsonl", "s2.jsonl", "s3.jsonl"]
    events, report = read(tmp_path)  # the folder of projects
    assert {e["episode_id"] for e in events} == {"s1", "s2", "s1-agent-a1b2c3d"} and report.formats == {"claude-code": 3}
    assert main([str(project), str(tmp_path / "o.jsonl"), "--format", "claude-code"]) == 0
    assert main([str(titles), str(tmp_path / "t.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{titles}: a Claude Code session file without user or assistant entries (summary)" in err
    assert err.count("\n") == 1


def test_a_folder_holding_claude_code_and_another_layout_refuses_one_forced_reader(tmp_path, capsys):
    folder = tmp_path / "runs"
    write(folder / "s1.jsonl", to_claude_code(openai_messages(), session="s1"))
    (folder / "run.traj").write_text(json.dumps({"history": swe_agent_history()}))
    events, report = read(folder)
    assert report.formats == {"claude-code": 1, "swe-agent": 1}
    assert main([str(folder), str(tmp_path / "o.jsonl"), "--format", "claude-code"]) == 1
    err = capsys.readouterr().err
    assert "1 Claude Code session file (.jsonl) (read by the claude-code reader)" in err and err.count("\n") == 1


BAD = [
    ('{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}', "invalid JSON"),
    ('{"type": "user", "sessionId": "s", "message": "hi"}', "'message' is a string, expected the API message"),
    ('{"type": "user", "sessionId": "s", "message": {"role": "assistant", "content": "hi"}}',
     "'message.role' is \"assistant\", expected \"user\""),
    ('{"type": "assistant", "sessionId": "s", "message": {"role": "assistant", "content": 7}}',
     "'message.content' is a number, expected a string or a list"),
    ('{"type": "assistant", "sessionId": "s", "message": {"role": "assistant", "id": 5, "content": []}}',
     "'message.id' is a number"),
    ('{"type": "assistant", "sessionId": "s", "message": {"role": "assistant", "content": [{"type": "tool_use", '
     '"id": "t", "input": {}}]}}', "content block 0: tool call without a name"),
    ('{"type": "user", "sessionId": "s", "message": {"role": "user", "content": [{"type": "tool_result", '
     '"content": "x"}]}}', "tool_result content block 0 without a 'tool_use_id'"),
    ('{"type": "user", "sessionId": "s", "message": {"role": "user", "content": [{"type": "tool_result", '
     '"tool_use_id": "t1", "content": "x", "is_error": "yes"}]}}', "'is_error' is \"yes\", expected true"),
    ('{"type": "user", "sessionId": "s", "isSidechain": "no", "message": {"role": "user", "content": "hi"}}',
     "'isSidechain' is \"no\", expected true or false"),
    ('{"type": "user", "sessionId": 12, "message": {"role": "user", "content": "hi"}}', "'sessionId' is a number"),
    ('["user", "hi"]', "not a Claude Code transcript entry: expected an object with a string 'type' (user, "
                       "assistant, system, summary, ...), got a list"),
    ('{"sessionId": "s", "message": {"role": "user", "content": "hi"}}', "got an object without 'type'"),
    ('{"type": 3, "sessionId": "s"}', "got 'type' 3"),
]


@pytest.mark.parametrize("line, says", BAD)
def test_a_bad_line_refuses_its_session_in_one_line_naming_file_line_and_field(line, says, tmp_path, capsys):
    """A session read without one of its lines could lose a result unsaid: the file is refused whole, naming the
    line and the field; --skip-bad skips the file and lists why."""
    entries = to_claude_code(openai_messages())
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries[:3]) + line + "\n"
                    + "".join(json.dumps(e) + "\n" for e in entries[3:]))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{path}:4" in err and says in err and "refused whole" in err and err.count("\n") == 1, err
    folder = tmp_path / "project"
    write(folder / "good.jsonl", to_claude_code(openai_messages(), session="good"))
    (folder / "s.jsonl").write_text(path.read_text())
    events, report = read(folder, skip_bad=True)
    assert {e["episode_id"] for e in events} == {"good"} and len(report.skipped) == 1
    assert "s.jsonl:4" in str(report.skipped[0])


@pytest.mark.parametrize("cut", ["mid-JSON", "mid-character"])
def test_a_running_sessions_cut_last_line_is_left_out_and_reported_its_complete_lines_read(cut, tmp_path, capsys):
    """Claude Code appends a session's lines as it runs, so a copy of ~/.claude/projects taken meanwhile ends inside
    its last line (no newline after it); the complete lines are read, as a file without that line, and the cut line
    is reported by FILE:LINE, in a file given and in a project folder (it refused the session whole)."""
    entries = to_claude_code(openai_messages())
    entries[-1]["message"]["content"][0]["text"] = "Done: cancelled, refund to the card ending 4242 — café voucher."
    done = "".join(json.dumps(e) + "\n" for e in entries[:-1]).encode()
    last = json.dumps(entries[-1], ensure_ascii=False).encode()
    at = last.index("é".encode()) + 1 if cut == "mid-character" else len(last) // 2  # inside é's two bytes
    session = tmp_path / "project" / f"{SESSION}.jsonl"
    session.parent.mkdir()
    session.write_bytes(done + last[:at])
    whole = write(tmp_path / "whole" / f"{SESSION}.jsonl", entries[:-1])
    out = tmp_path / "o.jsonl"
    for given in (session, session.parent):
        assert main([str(given), str(out)]) == 0, capsys.readouterr().err
        assert out.read_text() == "".join(json.dumps(e) + "\n" for e in read(whole)[0])
        printed = capsys.readouterr().out
        assert f"1 session file read without its last line, cut mid-write (still being written?): {session}:" \
               f"{len(entries)}" in printed, printed
        assert read(given)[1].cut_lines == [f"{session}:{len(entries)}"]
    assert list(iter_source_events(session.parent)) == read(whole)[0]  # sam-train's conversion says it too
    assert f"{session.parent}: 1 session file read without its last line, cut mid-write (still being written?): " \
           f"{session}:{len(entries)}" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["last, with its newline", "before the last"])
def test_a_bad_line_that_is_not_a_cut_last_line_still_refuses_the_session(where, tmp_path, capsys):
    """Only the last line without its newline is a write in progress: a complete bad line, last or not, is refused."""
    entries = to_claude_code(openai_messages())
    bad = json.dumps(entries[-1])[:40]
    lines = [json.dumps(e) for e in entries] + [bad] if where.startswith("last") else \
        [json.dumps(e) for e in entries[:-1]] + [bad, json.dumps(entries[-1])]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + ("\n" if where.startswith("last") else ""))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    n = len(entries) + 1 if where.startswith("last") else len(entries)
    assert f"{path}:{n}: invalid JSON" in err and "refused whole" in err, err


def test_another_formats_file_forced_through_this_reader_names_its_own(tmp_path, capsys):
    path = write_all(tmp_path)["anthropic"]
    assert main([str(path), str(tmp_path / "o.jsonl"), "--format", "claude-code"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: not a Claude Code transcript entry" in err and "try --format anthropic" in err


def others() -> list[list[dict]]:
    return [openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
            langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(),
            snake_case(gemini_contents()), openhands_events(), openhands_v1_events()]


def test_sniffed_first_it_takes_no_other_formats_messages_and_theirs_none_of_its():
    """claude-code is sniffed first: its sniff takes none of the other formats' messages, no other sniff takes its
    entries (a system entry's typed content was LangChain's SystemMessage dump to the langchain sniff), and no other
    format's line is taken for a Claude Code entry."""
    s = parent_with_task()
    s.entries.insert(0, {"type": "summary", "summary": "Cancel a trip", "leafUuid": "x"})
    s.add("system", subtype="compact_boundary", content="Conversation compacted", level="info")
    s.add("system", subtype="local_command", content="<command-name>/model</command-name>", level="info")
    s.user("This session is being continued from a previous conversation.", isCompactSummary=True)
    for entries in (to_claude_code(openai_messages()), s.entries + subagent()):
        assert detect(entries) == "claude-code"
        assert not [f for f in FORMATS if f not in ("claude-code", "tau1") and FORMATS[f].sniff(entries)]
        assert not [f for f in FORMATS if f not in ("claude-code", "tau1") and any(FORMATS[f].sniff([e]) for e in entries)]
    assert not any(FORMATS["claude-code"].sniff(m) for m in others())
    assert tool_marks(s.entries) == [("Claude Code entries holding tool_use or tool_result blocks", "claude-code")]
    assert not any(f == "claude-code" for o in others() for _, f in tool_marks(o))
    assert [detect(m) for m in others()] == ["openai", "tau2", "anthropic", "responses", "otel", "langchain",
                                             "swe-agent", "bedrock", "gemini", "gemini", "openhands", "openhands-v1"]
    for m in (*(x for o in others() for x in o), {"id": "conv-1", "messages": []}, {"resourceSpans": []},
              {"instance_id": "x", "history": []}):
        assert not claude_code.is_entry(m), m


def test_claude_code_and_codex_take_none_of_each_others_lines_and_a_folder_of_both_reads_each_by_its_reader(tmp_path):
    """Both read coding agents' JSON Lines sessions, sniffed apart by shape: a Claude Code entry holds no payload, a
    rollout line's type is neither user nor assistant; neither's file, tool marks or folder files are the other's."""
    s = parent_with_task()
    sessions = (to_claude_code(openai_messages()), s.entries + subagent())
    rollouts = (example_rollout(), to_rollout(openai_messages(), old=True), shell_session(["a", "b"], local=True),
                shell_session(["a", "b"]))
    for entries in sessions:
        assert detect(entries) == "claude-code" and not FORMATS["codex"].sniff(entries)
        assert not any(codex.is_rollout(e) or FORMATS["codex"].sniff([e]) for e in entries)
        assert "codex" not in {f for _, f in tool_marks(entries)}
    for lines in rollouts:
        assert detect(lines) == "codex" and not FORMATS["claude-code"].sniff(lines)
        assert not any(claude_code.is_entry(x) or FORMATS["claude-code"].sniff([x]) for x in lines)
        assert {f for _, f in tool_marks(lines)} == {"codex"}
    home = tmp_path / "home"  # a copy of both agents' folders, read whole
    write(home / ".claude" / "projects" / "-home-ann-airline" / f"{SESSION}.jsonl", sessions[0])
    write(home / ".codex" / "sessions" / "2025" / "10" / "29" / rollout_name(), example_rollout())
    assert [q.name for q in trajectory_files(home)] == [rollout_name(), f"{SESSION}.jsonl"]
    events, report = read(home)
    assert report.formats == {"codex": 1, "claude-code": 1}
    assert {e["episode_id"] for e in events} == {SESSION, ROLLOUT_SESSION}
    for episode in (SESSION, ROLLOUT_SESSION):  # each the conversation's decision point, as its own file gives it
        alone = [e for e in events if e["episode_id"] == episode]
        assert sum("useful_memory_steps" in e for e in alone) == 1


def test_a_bash_command_line_is_read_by_its_words_so_cat_traces_the_path_a_find_printed(tmp_path):
    """Claude Code's shell tool is ``Bash`` ({"command", "description"}): its command line is labelled by its words
    (the shell command lines rule), so the path in ``cat src/tinyparse/tokenizer.py``, said whole by no event, is
    traced to the result of the earlier ``find`` that printed it, not left untraceable."""
    path_said = "src/tinyparse/tokenizer.py"
    s = Session()
    s.user("The tokenizer drops the last token; fix it.")
    for i, (command, output) in enumerate(((r'find . -name "*.py" | grep token',
                                            f"./{path_said}\n./tests/test_tokenizer.py"),
                                           ("python -m pytest -q", "1 failed, 3 passed in 0.12s"),
                                           (f"cat {path_said}", "def split(text):")), 1):
        s.respond(*([text("Let me look.")] if i == 1 else []),
                  tool_use(f"toolu_{i}", "Bash", {"command": command, "description": f"Step {i}"}))
        s.result(f"toolu_{i}", output)
    events, _ = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    found = next(e for e in events if e["kind"] == "result" and "tokenizer.py" in e["text"])
    before_cat = [e for e in events if e["kind"] == "result"][1]  # the event the third call is decided at
    assert before_cat["useful_memory_steps"] == [found["step"]]  # the find's output, not the issue or a call
    assert before_cat["meta"]["needed"] == {"command": [path_said]}
    assert before_cat["state"]["uncertainty_flags"] == ["command"]


def test_a_session_without_a_tool_call_is_refused_unless_allowed(tmp_path, capsys):
    s = Session()
    s.user("hi")
    s.respond(text("hello"))
    path = write(tmp_path / "s.jsonl", s.entries)
    out = tmp_path / "out.jsonl"
    assert main([str(path), str(out)]) == 1 and not out.exists()
    assert "no tool call was read" in capsys.readouterr().err
    assert main([str(path), str(out), "--allow-empty"]) == 0 and out.read_text().count("\n") == 2


def test_the_live_state_and_scoped_memory_take_a_running_sessions_entries():
    """The state before the second call, from the session's entries so far, is the importer's; a memory adds them
    (a streamed response's lines in one add) as the importer reads them."""
    from sam_model.data.toolstate import TranscriptState
    from sam_model.memory import HashingEncoder, ScopedMemory

    entries = to_claude_code(openai_messages())
    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    last = next(i for i, e in enumerate(entries) if e.get("type") == "assistant"
                and e["message"]["content"][0].get("id") == "c2")
    assert live_state(entries[:last], entries[last]["message"]["content"][0]) == want
    importer = TranscriptState("x")
    for m in to_chat(entries).messages:
        importer.feed(m)
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(entries, user_id="ann", run_id=SESSION)
    got = sorted(memory.get_all(user_id="ann", run_id=SESSION)["results"], key=lambda r: r["step"])
    assert [(r["kind"], r["memory"]) for r in got] == [(e["kind"], e["text"]) for e in importer.events]


def test_sam_data_formats_lists_it(capsys):
    assert formats_main([]) == 0
    assert "claude-code Claude Code session transcripts" in " ".join(capsys.readouterr().out.split())


@needs_tau
def test_tau_bench_rewritten_as_claude_code_sessions_gives_the_spec_events(tmp_path):
    """40 tau-bench trajectories written as the session files of a project folder give the spec's events of the
    same conversations as Claude Code holds them, without their system prompt (never stored in a session)."""
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    project = tmp_path / "-home-ann-airline"
    for n, d in enumerate(data):
        write(project / f"c{n:02d}.jsonl", to_claude_code(d["traj"], session=f"c{n:02d}", thinking=False))
    plain = tmp_path / "openai.jsonl"
    plain.write_text("".join(json.dumps({"id": f"c{n:02d}", "messages": [m for m in d["traj"] if m["role"] != "system"]})
                             + "\n" for n, d in enumerate(data)))
    events, report = read(project)
    assert report.formats == {"claude-code": 40} and events == list(iter_transcript_events(plain))
    assert report.decision_points > 0


# ---- review (fix-rev1) ----------------------------------------------------------------------------------------
def groups(events: list[dict]) -> dict[str, str]:
    return {e["episode_id"]: e.get("meta", {}).get("group", e["episode_id"]) for e in events}


def test_a_resumed_or_forked_session_shares_the_split_of_the_session_it_continues(tmp_path):
    """Claude Code writes a resumed session to a file of its own, replaying the earlier entries into it (their
    uuids, the new sessionId, the old times) or continuing from the last one (its first entry's parentUuid names
    an entry of the earlier file), and a forked session's file holds the entries it copied: each was its own split
    group, so one task's turns, the copied ones word for word, fell on both sides of --split. They now share the
    group of the session their line started from; a subagent's file its session's; an unrelated session its own."""
    msgs = openai_messages()
    turns = lambda i, j, session, day: [  # noqa: E731
        {**e, "timestamp": e["timestamp"].replace("-19T", f"-{day}T")}
        for e in to_claude_code(msgs[i:j], session=session) if e["type"] != "file-history-snapshot"]
    first = to_claude_code(msgs[:4], session="s9-first")
    resumed = [{**e, "sessionId": "s1-resumed"} for e in first] + turns(4, 6, "s1-resumed", 20)  # the replay: the
    resumed[len(first)]["parentUuid"] = first[-1]["uuid"]  # same uuids and times, then its own turns
    continued = turns(6, 9, "s5-continued", 21)
    continued[0]["parentUuid"] = resumed[-1]["uuid"]  # no replay: it continues from the resumed session's last entry
    forked = first[:3] + turns(2, 9, "s0-fork", 22)
    project = tmp_path / "-home-ann-airline"
    write(project / "s9-first.jsonl", first)
    write(project / "s1-resumed.jsonl", resumed)
    write(project / "s5-continued.jsonl", continued)
    write(project / "s5-continued" / "subagents" / "agent-a1b2c3d.jsonl",
          [{**e, "timestamp": e["timestamp"].replace("-19T", "-21T")} for e in subagent(session="s5-continued")])
    write(project / "s0-fork.jsonl", forked)
    write(project / "s3-other.jsonl", to_claude_code(openai_messages(), session="s3-other"))
    events, report = read(project)
    assert report.conversations == 6
    assert groups(events) == {"s9-first": "s9-first", "s1-resumed": "s9-first", "s5-continued": "s9-first",
                              "s5-continued-agent-a1b2c3d": "s9-first", "s0-fork": "s9-first",
                              "s3-other": "s3-other"}
    alone, _ = read(project / "s0-fork.jsonl")  # given alone: the copies' sessionId names the session it forked
    assert set(groups(alone).values()) == {"s9-first"}


def queued(s: Session, prompt, **more) -> dict:
    """What the user typed while Claude Code worked: no user entry, an attachment Claude Code folds into the running
    turn, sending the model the prompt as the user's message."""
    return s.add("attachment", attachment={"type": "queued_command", "prompt": prompt, "commandMode": "prompt",
                                           "origin": {"kind": "human"}, **more})


def test_words_the_user_typed_while_claude_code_worked_are_a_user_turn(tmp_path, capsys):
    """A prompt typed while the agent runs is written as an attachment of type queued_command (never as a user
    entry) and sent to the model mid-turn: it was counted as an attachment, the user's words lost, so the call that
    used them traced to nothing the user said. It is now the user's turn where it was written; other attachments
    stay counted, and a prompt that is neither words nor blocks is refused naming it."""
    switch = "actually, cancel ZZ1234 instead"
    s = Session()
    s.user("Cancel my reservation QX7Z9A.")
    s.respond(tool_use("t1", "get_reservation", {"reservation_id": "QX7Z9A"}))
    queued(s, switch)
    s.result("t1", "QX7Z9A: economy")
    s.add("attachment", attachment={"type": "todo_reminder", "content": [], "itemCount": 0})
    s.respond(tool_use("t2", "cancel", {"reservation_id": "ZZ1234"}))
    s.result("t2", "cancelled ZZ1234")
    queued(s, [text("thanks"), {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                            "data": "iVBORw0KGgo="}}])
    chat = to_chat(s.entries)
    assert [(m["role"], m.get("content")) for m in chat.messages if m["role"] == "user"] == [
        ("user", "Cancel my reservation QX7Z9A."), ("user", switch), ("user", "thanks")]
    assert chat.ignored == {"attachment entries": 1, "image": 1}
    events, report = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    assert switch in [e["text"] for e in events if e["kind"] == "user"]
    bad = dict(s.entries[2], attachment={"type": "queued_command", "prompt": 7})
    path = write(tmp_path / "bad" / f"{SESSION}.jsonl", [*s.entries[:2], bad])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    assert f"{path}:3: 'attachment.prompt' is a number, expected" in capsys.readouterr().err


def test_a_compaction_summary_restating_turns_the_file_holds_is_no_second_memory_of_their_values(tmp_path):
    """The isCompactSummary entry restates turns its session file still holds and the reader reads: read as the
    user's turn it was a second, later source of their values, so under --label latest a call after the compaction
    traced to the summary's paraphrase, not the result that said the value (the OpenHands and Codex readers count
    their summaries for this reason). It is counted now; a file that opens with a summary (the turns it restates
    are elsewhere) still reads it, its only statement of them."""
    summary = "Summary: the user is Ann (ann_lee_123); her reservation is QX7Z9A."
    s = Session()
    s.user(HI)
    s.respond(tool_use("t1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("t1", '{"name": "Ann", "reservations": ["QX7Z9A"]}')
    s.add("system", parent=None, subtype="compact_boundary", content="Conversation compacted",
          logicalParentUuid=s.entries[-1]["uuid"], compactMetadata={"trigger": "auto", "preTokens": 160000})
    s.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.user("yes please")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t2", "cancelled")
    events, _ = read(write(tmp_path / "s.jsonl", s.entries), label="latest")
    assert summary not in [e["text"] for e in events]
    decision = events[[e["kind"] for e in events].index("action", 2) - 1]  # the state the cancel was decided in
    assert [events[i]["text"] for i in decision["useful_memory_steps"]] == [  # the result, not the summary
        'get_user: {"name": "Ann", "reservations": ["QX7Z9A"]}']
    opened = [e for e in s.entries if e["timestamp"] >= s.entries[3]["timestamp"]]  # the file starts at the boundary
    assert summary in [e["text"] for e in read(write(tmp_path / "opened.jsonl", opened))[0]]


def test_a_qwen_code_chat_record_is_refused_as_what_it_is_not_as_a_broken_claude_code_entry(tmp_path, capsys):
    """Qwen Code records its chats as Claude Code does (uuid, parentUuid, sessionId, type user / assistant /
    tool_result, cwd, version), but its message is Gemini content {"role", "parts"}: a session of it was taken for a
    Claude Code session and refused as "'message.content' is null" (an assistant's as "'message.role' is
    \"model\""), as if the file were a broken Claude Code one. It is now refused naming what it holds."""
    record = lambda n, kind, role, parts: {  # noqa: E731
        "uuid": f"q{n}", "parentUuid": f"q{n - 1}" if n else None, "sessionId": "qs", "timestamp": f"2025-11-19T22:00:0{n}Z",
        "type": kind, "cwd": "/home/ann", "version": "0.2.1", "message": {"role": role, "parts": parts}}
    path = write(tmp_path / "chats" / "qs.jsonl", [
        record(0, "user", "user", [{"text": HI}]),
        record(1, "assistant", "model", [{"functionCall": {"id": "c1", "name": "get_user", "args": {"user_id": "a"}}}])])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: 'message' holds Gemini 'parts'" in err and "Qwen Code" in err and err.count("\n") == 1


def test_a_greps_output_mode_and_a_reads_limit_label_nothing(tmp_path):
    """Claude Code's Grep writes ``"output_mode": "content"`` on most searches and its Read a ``limit``: traced as
    values, a second search was a decision point labelled with the first search's call (a walkthrough's hand-written
    sessions had two such decision points with no other label, and a third with one wrong label beside its right
    one). They say how much output to show, as a shell's timeout says how a command runs, so they label nothing;
    the search's pattern, from the user's words, and the file a Read reads again still do."""
    s = Session()
    s.user("due_date is off by one; the issue is in invoicer/dates.py")
    s.respond(tool_use("g1", "Grep", {"pattern": "def due", "path": "/repo/invoicer", "output_mode": "content",
                                      "-n": True, "head_limit": 200}))
    s.result("g1", "/repo/invoicer/dates.py:58:def due_date(issued, terms):")
    s.respond(tool_use("r1", "Read", {"file_path": "/repo/invoicer/dates.py", "offset": 50, "limit": 200}))
    s.result("r1", "    50\u2192import calendar\n   200\u2192# end")
    s.respond(text("Let me see the tests."))
    s.respond(tool_use("g2", "Grep", {"pattern": "due_date", "path": "/repo/tests", "output_mode": "content",
                                      "head_limit": 200}))
    s.result("g2", "/repo/tests/test_dates.py:3:from invoicer.dates import due_date")
    s.respond(tool_use("r2", "Read", {"file_path": "/repo/invoicer/dates.py", "offset": 150, "limit": 200}))
    s.result("r2", "   150\u2192    return issued")
    events, report = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    labelled = {e["step"]: e["meta"]["needed"] for e in events if e.get("useful_memory_steps")}
    assert labelled == {5: {"pattern": ["due_date"]}, 7: {"file_path": ["/repo/invoicer/dates.py"]}}, labelled


def test_a_sessions_lines_added_one_at_a_time_are_the_memories_of_the_file(tmp_path):
    """A sidecar (or a hook) that forwards each new line of a Claude Code session file to ScopedMemory.add (MCP's
    remember) gives a line of bookkeeping alone: a file-history snapshot, and the queued_command attachment of what
    the user typed while Claude Code worked. Holding no user or assistant entry, such a line was taken for an OpenAI
    message and refused ("message without 'role'"), and the user's words were lost. Each is now read as Claude Code's:
    the snapshot counted, the prompt the user's turn, and the memories are the importer's events of the file."""
    from sam_model.memory import ScopedMemory
    from sam_model.memory.encoders import HashingEncoder

    s = Session()
    s.add("file-history-snapshot", parent=None, messageId="m0", snapshot={"trackedFileBackups": {}})
    s.user("bump the version to 0.4.2 in pyproject.toml")
    s.respond(tool_use("r1", "Read", {"file_path": "/repo/pyproject.toml"}))
    queued(s, "also add a CHANGELOG.md entry for 0.4.2")
    s.result("r1", '     3\u2192version = "0.4.1"')
    s.respond(text("Now the changelog."), tool_use("r2", "Read", {"file_path": "/repo/CHANGELOG.md"}))
    s.result("r2", "     1\u2192# Changelog")
    events, _ = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    memory = ScopedMemory(HashingEncoder())
    for entry in s.entries:
        memory.add([entry], user_id="me", run_id=SESSION)
    stored = memory.get_all(user_id="me", run_id=SESSION, limit=100)["results"]
    assert [m["memory"] for m in sorted(stored, key=lambda m: int(m["id"].rsplit("#", 1)[1]))] == [
        e["text"] for e in events]
    assert "also add a CHANGELOG.md entry for 0.4.2" in [e["text"] for e in events]
