"""The tool-transcript converter against shared/spec/tool-transcripts.md on inputs its golden file does not hold:
other agents' tools whose names look like a coding agent's, which the spec's extensions (toolstate's doc) must
leave to the spec's rule."""

from __future__ import annotations

import json

from sam_model.data.transcripts import Conversation, convert_conversation


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def decision(user: str, name: str, **arguments) -> dict:
    """The decision event of one call to ``name`` made after ``user``'s turn and the agent's words."""
    events = convert_conversation(Conversation("ep", [
        {"role": "user", "content": user},
        {"role": "assistant", "content": "Let me check."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": None, "tool_calls": [call(name, "c1", **arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"}], "test.jsonl:1", "ep"))
    return events[2]


def test_a_payment_terminals_tool_keeps_the_values_a_shells_settings_would_drop():
    """A retail or telecom tool whose name says terminal (a card or SIM terminal) runs no command: its arguments
    named like a shell's settings (a login, a maximum, a description) are values the customer gave, traced as the
    spec says. Read as a shell's settings they were trivial, and the turn that gave them labelled nothing."""
    event = decision("Terminal T-4471 at the front desk asks for login 839201; cap refunds at 450.",
                     "update_terminal", terminal_id="T-4471", login_code="839201", max_refund=450,
                     description="front desk")
    assert event["useful_memory_steps"] == [0]
    assert event["state"]["uncertainty_flags"] == ["description", "login_code", "max_refund", "terminal_id"]


def test_a_shell_calls_settings_stay_trivial():
    """A shell tool's call that runs a command line keeps the extension: its timeout and description say how it
    runs, not what it acts on, so the user's 120000 and words are no label."""
    event = decision("Run the tests with a timeout of 120000.", "run_in_terminal", command="pytest",
                     timeout=120000, description="run the tests")
    assert "useful_memory_steps" not in event


def test_a_long_result_is_searched_only_for_the_values_it_holds(monkeypatch):
    """Results are kept whole by default, and every argument value is searched in every earlier event: a regex
    scan of a megabyte per value (34 ms) made a coding session with a few large outputs take minutes. A text that
    does not hold a value as a substring cannot say it, so it is scanned for none but those it holds."""
    import re

    big = " ".join(f"w{i}" for i in range(150_000))  # about 1 MB
    scanned: list[str] = []
    search = re.search
    monkeypatch.setattr(re, "search", lambda pattern, string, *a, **k: (
        scanned.append(pattern) if len(string) >= len(big) else None) or search(pattern, string, *a, **k))
    events = convert_conversation(Conversation("ep", [
        {"role": "user", "content": "Find order w7 for me."},
        {"role": "assistant", "content": None, "tool_calls": [call("list_orders", "c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "assistant", "content": "Found it."},
        {"role": "assistant", "content": None, "tool_calls": [call(
            "get_order", "c2", order_id="w7", note="absent_one", ref="absent_two", code="absent_three")]},
        {"role": "tool", "tool_call_id": "c2", "content": "{}"}], "test.jsonl:1", "ep"))
    assert events[3]["useful_memory_steps"] == [0]  # w7: the user's, first
    assert scanned and not any("absent" in p for p in scanned)
