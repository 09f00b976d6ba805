"""Review of the headless readers (claude_stream, codex_exec) and of the search by call: each test fails on the code
before its fix."""

from __future__ import annotations

import json

import pytest
from test_format_headless import THREAD, completed, started, write
from test_formats import EXAMPLES

from sam_model.data.formats import to_chat
from sam_model.data.formats.files import conversations as file_conversations
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
    item.completed the same call again with its result), two actions where the importer writes one. An add of them
    that does not begin a run is now refused in one line, the memory as it was; a run a time, or the whole file,
    stores the importer's memories."""
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
    stored = [h.id for h in one.store.get_all()]
    with pytest.raises(ValueError, match=r"^data\[0\]: codex exec --json events are added a run at a time"):
        one.add(lines[4:6], user_id="u")
    assert [h.id for h in one.store.get_all()] == stored
