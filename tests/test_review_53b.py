"""Review of the headless readers (claude_stream, codex_exec) and of the search by call: each test fails on the code
before its fix."""

from __future__ import annotations

from test_format_headless import THREAD, completed, started, write

from sam_model.data.formats import to_chat
from sam_model.data.formats.files import conversations as file_conversations


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
