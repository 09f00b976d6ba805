"""A non-author review of the live-path leftovers of stop 63 (tests/test_live_leftovers_63.py): what it missed."""

from __future__ import annotations

import pytest
from test_live_adds import (
    as_jsonl,
    fed,
    imported,
    rich,
    rollout_name,
    stored,
    to_claude_code,
    to_codex_exec,
    to_gemini_cli,
    to_rollout,
)

from sam_model.memory import HashingEncoder, ScopedMemory


def _blank_before_calls() -> list[dict]:
    """The rich conversation with the model's words of whitespace alone before its calls (Claude writes a "\\n\\n"
    text block there, a line of its own in Claude Code's file)."""
    chat = rich()
    chat.insert(2, {"role": "assistant", "content": "\n\n"})
    return chat


SESSIONS = {"claude-code": lambda c: ("0b6c8d5e-live.jsonl", to_claude_code(c)),
            "gemini-cli": lambda c: ("chats/session-2026-03-30T10-00-live.jsonl", as_jsonl(to_gemini_cli(c))),
            "codex": lambda c: (rollout_name(), to_rollout(c)),
            "codex exec": lambda c: ("codex-exec.jsonl", to_codex_exec(c))}


@pytest.mark.parametrize("how", ["a line an add", "one add", "checked first"])
@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_a_session_line_of_the_models_blank_words_is_no_memory_and_stops_no_add(tmp_path, session, how):
    """A session's model words of whitespace alone were refused ('entry 0.content is only whitespace'), stopping a
    sidecar forwarding each line (and the whole session's add), though the importer reads the file. They are no
    memory, said in the add's skipped: the memories are the importer's words but the blank ones, in order."""
    name, lines = SESSIONS[session](_blank_before_calls())
    want = [e["text"] for e in imported(tmp_path, name, lines) if e["text"].strip()]
    plain, without = SESSIONS[session](rich())  # the importer reads the blank words as nothing else
    assert want == [e["text"] for e in imported(tmp_path / "plain", plain, without)]
    batches = [lines] if how == "one add" else [[x] for x in lines]
    if how == "checked first":
        memory, skipped = ScopedMemory(HashingEncoder(16)), []
        for batch in batches:
            read = memory.check_add(batch, "messages", user_id="me", run_id="s")
            skipped += memory.add(batch, user_id="me", run_id="s", read=read).get("skipped", [])
        assert any("only whitespace" in s["reason"] for s in skipped)
    else:
        memory = fed(lines, batches)
    assert [t for _, _, t in stored(memory)] == want
