"""LlamaIndex memories (sam_model.data.formats.llamaindex): what a failed call and the system prompt leave in them.

The messages are as llama-index-core 0.14.25 dumps them after a FunctionAgent's run with a scripted LLM calling a
tool that raised (``ValueError("reservation QX7Z9A is already cancelled")``) and one it does not have (``refund``):
each result is a ``tool`` message of the exception's words, or of LlamaIndex's own "Tool refund not found. ...",
with no flag (the ``ToolCallResult`` event's ``tool_output.is_error`` is true; the memory keeps only the words);
``system_prompt`` is in no message."""

from __future__ import annotations

import json

import pytest

from sam_model.data.formats import TranscriptFormatError, llamaindex_react, to_chat
from sam_model.data.formats.files import conversations
from sam_model.data.transcripts import iter_transcript_events

RAISED = "reservation QX7Z9A is already cancelled"
NOT_FOUND = "Tool refund not found. Please select a tool that is available."


def text(role: str, words: str, **kwargs) -> dict:
    return {"role": role, "additional_kwargs": kwargs, "blocks": [{"block_type": "text", "text": words}]}


def memory(**flag) -> list[dict]:
    """A FunctionAgent's memory after the run, ``flag`` set on the raising call's result's additional_kwargs."""
    calls = [("c1", "refund", {"user_id": "ann"}), ("c2", "cancel", {"reservation_id": "QX7Z9A"})]
    return [text("user", "cancel QX7Z9A for ann"),
            {"role": "assistant", "additional_kwargs": {}, "blocks": [
                {"block_type": "tool_call", "tool_call_id": i, "tool_name": n, "tool_kwargs": a} for i, n, a in calls]},
            text("tool", NOT_FOUND, tool_call_id="c1"), text("tool", RAISED, tool_call_id="c2", **flag),
            text("assistant", "Sorry, it was already cancelled.")]


def results(tmp_path, messages: list[dict]) -> list[str]:
    (tmp_path / "m.json").write_text(json.dumps(messages))
    return [e["state"]["last_action_result"] for e in iter_transcript_events(tmp_path / "m.json")
            if e["kind"] == "result"]


def test_a_call_of_a_tool_the_agent_lacks_reads_as_failed(tmp_path):
    """LlamaIndex answers a call of a tool it does not have with its own words, flagged is_error in the ToolOutput
    only: the failed call read 'refund: ok'. A raised tool's words carry no such sign: ok, as the memory says."""
    assert results(tmp_path, memory()) == [f"refund: error ({NOT_FOUND})", "cancel: ok"]


def test_the_words_of_a_missing_tool_flag_only_a_call_of_that_tool(tmp_path):
    messages = memory()
    messages[1]["blocks"][0]["tool_name"] = "lookup"  # a tool returning text that names another
    assert results(tmp_path, messages)[0] == "lookup: ok"


def test_a_failure_flag_the_program_copied_into_additional_kwargs_is_read(tmp_path):
    """A tool that raised leaves its exception's words alone in the memory; a program that copies the
    ToolCallResult event's tool_output.is_error into the dumped message's additional_kwargs.is_error had it ignored,
    the call read as ok."""
    assert results(tmp_path, memory(is_error=True))[1] == "cancel: error (reservation is already cancelled)"
    assert results(tmp_path, memory(is_error=False))[1] == "cancel: ok"
    with pytest.raises(TranscriptFormatError, match=r"message 3: 'additional_kwargs.is_error' is \"yes\", expected "
                                                    r"true \(the call failed\) or false"):
        results(tmp_path, memory(is_error="yes"))


def test_a_react_observation_of_a_missing_tool_reads_as_failed(tmp_path):
    reasoning = "\n".join(["Thought: I need to refund.", "Action: refund", "Action Input: {'user_id': 'ann'}",
                           f"Observation: {NOT_FOUND}", "Thought: I can answer.", "Answer: I cannot refund."])
    assert results(tmp_path, [text("user", "refund ann"), text("assistant", reasoning)]) == [
        f"refund: error ({NOT_FOUND})"]


def test_the_system_prompt_is_given_beside_the_messages_or_as_their_first(tmp_path):
    """The agent's system_prompt is in no saved message: a .jsonl line's "system" beside its messages, or a system
    ChatMessage dumped first, gives the policy."""
    (tmp_path / "c.jsonl").write_text(json.dumps({"id": "c1", "system": "Never cancel unasked.",
                                                  "messages": memory()}) + "\n")
    assert [(c.format, c.policy) for c in conversations(tmp_path / "c.jsonl")] == [("llamaindex",
                                                                                      "Never cancel unasked.")]
    chat = to_chat([text("system", "Never cancel unasked."), *memory()], format="llamaindex")
    assert chat.messages[0] == {"role": "system", "content": "Never cancel unasked."}


def test_llamaindexs_call_tool_words_for_a_tool_that_raised_read_as_failed(tmp_path):
    """LlamaIndex's call_tool / acall_tool (predict_and_call, the agents before the workflow ones) answer a tool that
    raised with "Encountered error: " and its words, flagged is_error in the ToolOutput alone: read as ok."""
    messages = memory()
    messages[3]["blocks"][0]["text"] = f"Encountered error: {RAISED}"
    assert results(tmp_path, messages)[1].startswith("cancel: error (Encountered error: ")
    reasoning = "\n".join(["Thought: I need to cancel.", "Action: cancel", "Action Input: {'reservation_id': 'QX7Z9A'}",
                           f"Observation: Encountered error: {RAISED}", "Thought: I can answer.",
                           "Answer: It was cancelled already."])
    assert results(tmp_path, [text("user", "cancel QX7Z9A"), text("assistant", reasoning)])[0].startswith(
        "cancel: error (")
    messages[3]["blocks"][0]["text"] = f"Lookup: {RAISED}. Encountered error: none"  # the words elsewhere: a result
    assert results(tmp_path, messages)[1] == "cancel: ok"


def test_the_words_llamaindexs_call_tool_gives_a_tool_that_raised_are_those_read():
    """The real package's words (skipped without llama-index-core), not a copy of them that may drift."""
    pytest.importorskip("llama_index.core", reason="llama-index-core is not installed (pip install llama-index-core)")
    from llama_index.core.tools import FunctionTool
    from llama_index.core.tools.calling import call_tool

    def cancel(reservation_id: str) -> str:
        """Cancel a reservation."""
        raise ValueError(RAISED)

    output = call_tool(FunctionTool.from_defaults(cancel), {"reservation_id": "QX7Z9A"})
    assert output.is_error and llamaindex_react.raised(str(output)) and RAISED in str(output)
    assert not llamaindex_react.raised(RAISED)


@pytest.mark.parametrize("flag, said", [("false", "cancel: ok"), ("False", "cancel: ok"), (" TRUE ", "cancel: error"),
                                        ("true", "cancel: error")])
def test_a_flag_the_program_wrote_as_the_words_true_or_false_is_read(tmp_path, flag, said):
    """A program that copied tool_output.is_error as text (str(True), a JSON text) had its whole file refused."""
    assert results(tmp_path, memory(is_error=flag))[1].startswith(said)


@pytest.mark.parametrize("flag", ["maybe", "", 1, 0, ["true"]])
def test_a_flag_neither_true_nor_false_is_refused_naming_the_field_and_line(tmp_path, flag):
    lines = [json.dumps({"id": "a", "messages": memory()}), json.dumps({"id": "b", "messages": memory(is_error=flag)})]
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptFormatError, match=r"m\.jsonl:2, message 3: 'additional_kwargs\.is_error' is .*"
                                                    r"expected true \(the call failed\) or false"):
        list(iter_transcript_events(tmp_path / "m.jsonl"))
