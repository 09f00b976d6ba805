"""Review of the headless readers (claude_stream, codex_exec) and of the search by call: each test fails on the code
before its fix."""

from __future__ import annotations

import json

import pytest
from test_format_headless import THREAD, completed, example_codex_exec, started, to_claude_stream, write
from test_formats import EXAMPLES, openai_messages

from sam_model.data.formats import to_chat
from sam_model.data.formats.files import conversations as file_conversations
from sam_model.data.sources import source_kind
from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory


def test_a_streamed_file_change_is_the_call_its_completed_item_made(tmp_path):
    """codex's event_processor_with_jsonl_output.rs prints a file change whose patch streams as item.updated events
    (FileChangePatchUpdated: the changes so far), its ItemStarted an item.updated too, then item.completed: no
    item.started. The call was read at its first event, so apply_patch held the first partial change set (one file of
    the two the patch wrote, the diff cut); it is now the item as it completed."""
    first = {"path": "src/app.py", "kind": "update", "diff": "@@ -1 +1 @@\n-a\n"}
    whole = [{**first, "diff": "@@ -1 +1 @@\n-a\n+b\n"}, {"path": "src/util.py", "kind": "add", "diff": "+c\n"}]
    item = {"id": "item_1", "type": "file_change", "changes": [first], "status": "in_progress"}
    lines = [{"type": "thread.started", "thread_id": THREAD}, {"type": "turn.started"},
             completed({"id": "item_0", "type": "agent_message", "text": "Editing."}),
             {"type": "item.updated", "item": item}, {"type": "item.updated", "item": {**item, "changes": whole}},
             completed({**item, "changes": whole, "status": "completed"}),
             started({"id": "item_2", "type": "command_execution", "command": "pytest src/util.py",
                      "aggregated_output": "", "exit_code": None, "status": "in_progress"}),
             {"type": "turn.completed", "usage": {}}]
    conv = next(iter(file_conversations(write(tmp_path / "codex.jsonl", lines))))
    chat = to_chat(conv.messages, format="codex-exec").messages
    (call,) = chat[0]["tool_calls"]
    assert call["function"] == {"name": "apply_patch", "arguments": {"changes": whole}}
    assert chat[1] == {"role": "tool", "tool_call_id": "item_1", "content": "completed"}
    assert chat[2]["tool_calls"][0]["function"]["arguments"] == {"command": "pytest src/util.py"}  # never completed


def test_codex_exec_events_split_over_adds_are_refused_not_stored_twice():
    """ScopedMemory.add takes codex exec's events (is_log_message since the codex-exec format), but each add is read
    alone: a sidecar adding the lines as they came stored every call twice (its item.started a call, its
    item.completed the same call again with its result), two actions where the importer writes one. An add that
    continues the scope's open run is read with it; one that continues none is refused in one line, the memory as it
    was; a run a time, or the whole file, stores the importer's memories."""
    lines = [json.loads(line) for line in EXAMPLES.joinpath("codex-exec.jsonl").read_text().splitlines()]
    whole = ScopedMemory(HashingEncoder(64))
    whole.add(lines, user_id="u")
    runs = [i for i, line in enumerate(lines) if line["type"] == "thread.started"] + [len(lines)]
    by_run = ScopedMemory(HashingEncoder(64))
    for a, b in zip(runs, runs[1:]):
        by_run.add(lines[a:b], user_id="u")
    assert [(h.kind, h.text) for h in by_run.store.get_all()] == [(h.kind, h.text) for h in whole.store.get_all()]
    one = ScopedMemory(HashingEncoder(64))
    one.add(lines[:4], user_id="u")  # thread.started through the first call's item.started
    one.add(lines[4:], user_id="u")  # continues the scope's open run (sam_model.memory.live): each call once
    assert [(h.kind, h.text) for h in one.store.get_all()] == [(h.kind, h.text) for h in whole.store.get_all()]
    cold = ScopedMemory(HashingEncoder(64))  # a scope with no open run: its call would be stored twice
    with pytest.raises(ValueError, match=r"^data\[0\]: codex exec --json events are added from a run's thread.started"):
        cold.add(lines[4:6], user_id="u")
    assert cold.store.get_all() == []


def test_a_folder_of_harbor_stdout_files_is_refused_saying_to_give_each_file(tmp_path):
    """A folder of Harbor runs holding only the agents' stdout (<trial>/agent/claude-code.txt, agent/codex.txt) is not
    read whole: beside them Harbor keeps the runs' session files and rollouts (agent/sessions), which the folder is
    read by, and both would give each run twice. It was read as an OpenHands folder (the job's config.json and
    result.json each refused as 'not an OpenHands trajectory'), or, without them, refused naming every other layout
    and not these files; the refusal now names them and says to give each file (sam-data transcripts, and
    sam-train's source_kind)."""
    write(tmp_path / "job" / "t1__abc" / "agent" / "claude-code.txt", to_claude_stream(openai_messages()))
    write(tmp_path / "job" / "t2__def" / "agent" / "codex.txt", example_codex_exec())
    for record in ("config.json", "result.json"):  # a Harbor job's and trial's records: no OpenHands runs
        (tmp_path / "job" / record).write_text('{"job_name": "job"}')
        (tmp_path / "job" / "t2__def" / record).write_text('{"trial_name": "t2__def"}')
    for read in (lambda p: list(file_conversations(p)), source_kind):
        with pytest.raises(SAMFileError, match=r"holds no run a folder is read by, but 2 agent stdout files .*such as "
                           r"t1__abc/agent/claude-code.txt\), which are read a file at a time: give each file"):
            read(tmp_path / "job")
