"""The OpenAI Agents SDK's own words for a failed function call (sam_model.data.formats.responses.agents_sdk_failed):
its items carry no failure flag, so a call failed only as its output says. A raised tool's default text was read as
failed; an approval rejected, a tool the agent lacks, a tool past its timeout, and a hosted program's {"error": ...}
read as ok. A failure_error_function of the app's own gives words no rule can tell from a result: read as ok."""

from __future__ import annotations

import json

import pytest

from sam_model.data.formats import responses
from sam_model.data.transcripts import iter_transcript_events


def said(tmp_path, output: str, called: str = "lookup_order") -> str:
    """The result one call of ``called`` answered by ``output`` reads as, from a logged run's items."""
    items = [{"role": "user", "content": "Where is order 42?"},
             {"type": "function_call", "call_id": "call_1", "name": called, "arguments": '{"order_id": "42"}'},
             {"type": "function_call_output", "call_id": "call_1", "output": output},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sorry."}]}]
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"id": "run-1", "messages": items}) + "\n")
    return next(e["state"]["last_action_result"] for e in iter_transcript_events(path) if e["kind"] == "result")


@pytest.mark.parametrize("output", [
    "Tool execution was not approved.",
    "Tool 'lookup_order' not found.",
    "Tool 'lookup_order' timed out after 2.5 seconds.",
    "Tool 'lookup_order' timed out after 1e-05 seconds.",
    '{"error":"Tool execution was not approved."}',
    '{"error":"An error occurred while running the tool. Please try again."}',
])
def test_the_sdks_own_words_for_a_failed_call_read_as_failed(tmp_path, output):
    assert said(tmp_path, output).startswith("lookup_order: error")


@pytest.mark.parametrize("output", [
    "An error occurred while running the tool. Please try again.",  # 0.24
    "An error occurred while running the tool. Please try again. Error: order 42 does not exist",  # before
])
def test_a_raised_tools_default_words_of_each_version_read_as_failed(tmp_path, output):
    assert said(tmp_path, output).startswith("lookup_order: error")


@pytest.mark.parametrize("output", [
    "Tool 'hammer' not found.",  # a tool's own result about another tool
    "Tool 'lookup_order' not found. Try the catalogue.",
    '{"error": null, "order": 42}',
    "Sorry, we could not look that order up.",  # a failure_error_function's own words: not told
])
def test_words_that_are_not_the_sdks_for_this_call_read_as_a_result(tmp_path, output):
    assert said(tmp_path, output).startswith("lookup_order: ok")


def test_the_words_the_installed_sdk_writes_are_those_read():
    """The real package's words (skipped without openai-agents), not a copy of them that may drift."""
    agents = pytest.importorskip("agents", reason="openai-agents is not installed (pip install openai-agents)")
    from agents import tool

    texts = [tool.default_tool_error_function(None, ValueError("order 42 does not exist"))]
    if hasattr(tool, "DEFAULT_APPROVAL_REJECTION_MESSAGE"):
        texts.append(tool.DEFAULT_APPROVAL_REJECTION_MESSAGE)
    if hasattr(tool, "default_tool_timeout_error_message"):
        texts.append(tool.default_tool_timeout_error_message(tool_name="lookup_order", timeout_seconds=2.5))
    try:
        from agents.run_internal.turn_resolution import _default_tool_not_found_message
    except ImportError:  # versions before 0.24
        pass
    else:
        texts.append(_default_tool_not_found_message("lookup_order"))
    assert agents.__version__ and all(responses.agents_sdk_failed(t, "lookup_order") for t in texts), texts
    try:
        from agents.run_internal.items import function_tool_error_output
    except ImportError:
        return
    wrapped = function_tool_error_output({"caller": {"type": "program"}}, texts[0], output_json_schema={})
    assert wrapped != texts[0] and responses.agents_sdk_failed(wrapped, "lookup_order")
