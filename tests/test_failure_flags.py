"""A tool result its format flags as failed reads ``name: error (reason)`` whatever its words say (toolstate's
extension of the spec), in the importer and the live state; its unflagged twin, and every OpenAI chat transcript,
read as the spec says (words alone). The memory's text is the tool's words either way; a flag of the wrong type is
refused in one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.formats import to_chat
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import iter_transcript_events

SAID = "I am ann_lee_123, cancel my trip."
WORDS = "Not allowed: the fare class is basic economy"  # a failure whose words do not start with "error"
FLAGGED, UNFLAGGED = "cancel: error (Not allowed: the fare class is basic economy)", "cancel: ok"
NEXT = {"name": "get_user", "arguments": {"user_id": "ann_lee_123"}}  # the call the live state is asked for


def openai(flag: dict) -> list[dict]:
    return [{"role": "user", "content": SAID},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "cancel", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": WORDS, **flag}]


def anthropic(flag: dict) -> list[dict]:
    return [{"role": "user", "content": SAID},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "cancel", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": WORDS, **flag}]}]


def bedrock(flag: dict) -> list[dict]:
    return [{"role": "user", "content": [{"text": SAID}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "cancel", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": [{"text": WORDS}], **flag}}]}]


def langchain(flag: dict) -> list[dict]:
    """As messages_to_dict writes them."""
    msg = lambda t, **data: {"type": t, "data": {"type": t, "additional_kwargs": {}, **data}}  # noqa: E731
    return [msg("human", content=SAID),
            msg("ai", content="", tool_calls=[{"name": "cancel", "args": {}, "id": "a", "type": "tool_call"}]),
            msg("tool", content=WORDS, tool_call_id="a", name="cancel", **flag)]


def tau2(flag: dict) -> list[dict]:
    return [{"role": "user", "content": SAID},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "a", "name": "cancel", "arguments": {}, "requestor": "assistant"}]},
            {"role": "tool", "id": "a", "content": WORDS, "requestor": "assistant", **flag}]


def openhands(flag: dict, observation: str = "mcp") -> list[dict]:
    """OpenHands events (event_to_dict): the user's message, a function call (its metadata; no model response kept,
    so the call is the function and the action's arguments, none here) and its observation."""
    meta = {"function_name": "cancel", "tool_call_id": "a", "model_response": None}
    return [{"id": 0, "source": "user", "message": SAID, "action": "message", "args": {"content": SAID}},
            {"id": 1, "source": "agent", "message": "", "action": "call_tool_mcp", "tool_call_metadata": meta,
             "args": {"thought": ""}},
            {"id": 2, "source": "agent", "message": WORDS, "cause": 1, "observation": observation,
             "tool_call_metadata": meta, "content": WORDS, **flag}]


def openhands_v1(result: dict) -> list[dict]:
    """OpenHands V1 events (software-agent-sdk, openhands/sdk/event/llm_convertible/): the user's MessageEvent, the
    model's call (ActionEvent) and ``result``, the event that answers it (an ObservationEvent's fields, or another
    kind's with its ``kind``)."""
    def base(n: int, kind: str, source: str) -> dict:
        return {"kind": kind, "id": f"e{n}", "timestamp": "2026-01-05T10:00:00", "source": source}
    answer = {"kind": "ObservationEvent", "action_id": "e1", **result} if "observation" in result else {**result}
    return [{**base(0, "MessageEvent", "user"), "llm_message": {"role": "user", "content": [{"type": "text",
                                                                                          "text": SAID}]}},
            {**base(1, "ActionEvent", "agent"), "thought": [], "action": {"kind": "CancelAction"},
             "tool_name": "cancel", "tool_call_id": "a", "llm_response_id": "r1",
             "tool_call": {"id": "a", "name": "cancel", "arguments": "{}", "origin": "completion"}},
            {**base(2, answer.pop("kind"), "environment"), "tool_name": "cancel", "tool_call_id": "a", **answer}]


def gemini(response: dict) -> list[dict]:
    return [{"role": "user", "parts": [{"text": SAID}]},
            {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "cancel", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "a", "name": "cancel", "response": response}}]}]


def genai() -> list[dict]:
    return [{"role": "user", "parts": [{"type": "text", "content": SAID}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "a", "name": "cancel", "arguments": {}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "response": WORDS}]},
            {"role": "assistant", "parts": [{"type": "text", "content": "Sorry."}], "finish_reason": "stop"}]


def otlp(tool_span: dict, trace: str = "t1", conversation: str | None = "conv-1") -> dict:
    """The model calls' spans (the history as input, the model's message as output) and the tool's own span."""
    attr = lambda k, v: {"key": k, "value": {"stringValue": v}}  # noqa: E731
    conv = [attr("gen_ai.conversation.id", conversation)] if conversation else []
    messages = genai()
    spans = [{"traceId": trace, "spanId": f"s{i}", "startTimeUnixNano": str(1000 + i),
              "attributes": [attr("gen_ai.operation.name", "chat"), *conv,
                             attr("gen_ai.input.messages", json.dumps(messages[:i])),
                             attr("gen_ai.output.messages", json.dumps(messages[i:i + 1]))]} for i in (1, 3)]
    spans.append({"traceId": trace, "spanId": "tool", "startTimeUnixNano": "1500", **tool_span,
                  "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "cancel"),
                                 attr("gen_ai.tool.call.id", "a"), *tool_span.get("attributes", [])]})
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


# (format, its flagged conversation, its unflagged twin)
CASES = [
    ("openai", openai({"is_error": True}), openai({})),
    ("anthropic", anthropic({"is_error": True}), anthropic({"is_error": False})),
    ("bedrock", bedrock({"status": "error"}), bedrock({"status": "success"})),  # Strands' ToolResult.status too
    ("langchain", langchain({"status": "error"}), langchain({"status": "success"})),
    ("tau2", tau2({"error": True}), tau2({"error": False})),
    ("tau2", [*tau2({})[:2], {"role": "tool", "tool_messages": tau2({"error": True})[2:]}],  # a MultiToolMessage
     [*tau2({})[:2], {"role": "tool", "tool_messages": tau2({"error": False})[2:]}]),
    ("openhands", openhands({}, "error"), openhands({})),  # an ErrorObservation caused by the call
    ("openhands", openhands({"success": False}, "run"), openhands({"success": True}, "run")),  # event_to_dict's
    ("openhands", openhands({"extras": {"metadata": {"exit_code": 2}}}, "run"),  # saved before 'success' existed
     openhands({"extras": {"metadata": {"exit_code": 0}}}, "run")),
    ("openhands-v1", openhands_v1({"observation": {"kind": "CancelObservation", "is_error": True,
                                                   "content": [{"type": "text", "text": WORDS}]}}),
     openhands_v1({"observation": {"kind": "CancelObservation", "content": WORDS, "is_error": False}})),
    ("openhands-v1", openhands_v1({"kind": "AgentErrorEvent", "error": WORDS}),  # a call the agent could not run
     openhands_v1({"observation": {"kind": "CancelObservation", "content": WORDS}})),
    ("openhands-v1", openhands_v1({"observation": {"kind": "CancelObservation", "output": WORDS, "error": True}}),
     openhands_v1({"observation": {"kind": "CancelObservation", "output": WORDS, "error": False}})),  # SDK 1.0's
]


def events(path: Path) -> list[tuple]:
    return [(e["step"], e["kind"], e["text"], e["state"]) for e in iter_transcript_events(path)]


def result_state(path: Path) -> tuple[str, str]:
    """(text, last_action_result) of the file's tool result event."""
    event = next(e for e in iter_transcript_events(path) if e["kind"] == "result")
    return event["text"], event["state"]["last_action_result"]


def write(tmp_path: Path, fmt: str, messages: list[dict]) -> Path:
    tmp_path.mkdir(exist_ok=True)
    if fmt == "tau2":
        path = tmp_path / "results.json"
        path.write_text(json.dumps({"info": {"environment_info": {"domain_name": "airline"}},
                                    "simulations": [{"task_id": "1", "trial": 0, "messages": messages}]}))
    elif fmt in ("openhands", "openhands-v1"):
        path = tmp_path / "session.json"
        path.write_text(json.dumps(messages))
    else:
        path = tmp_path / "log.jsonl"
        path.write_text(json.dumps({"id": "c", ("contents" if fmt == "gemini" else "messages"): messages}) + "\n")
    return path


@pytest.mark.parametrize("fmt, flagged, unflagged", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_flagged_failure_is_an_error_whatever_its_words_and_its_unflagged_twin_reads_as_the_spec(
        fmt, flagged, unflagged, tmp_path):
    for messages, twin, want in ((flagged, openai({"is_error": True}), FLAGGED), (unflagged, openai({}), UNFLAGGED)):
        path = write(tmp_path, fmt, messages)
        assert result_state(path) == (f"cancel: {WORDS}", want), fmt  # the memory holds the tool's words, unchanged
        assert events(path) == events(write(tmp_path / "twin", "openai", twin)), fmt  # the OpenAI chat twin's
        assert live_state(messages, NEXT)["last_action_result"] == want, fmt  # a running conversation too


def test_gemini_error_responses_are_flagged_whatever_the_text_they_read_as(tmp_path):
    """A response with an ``error`` (the API's key for error details) is a failed call, also where it reads as its
    JSON (beside other keys); the same object without it is a result."""
    flagged, twin = gemini({"error": WORDS, "code": 403}), gemini({"detail": WORDS, "code": 403})
    text, state = result_state(write(tmp_path, "gemini", flagged))
    assert text == "cancel: " + json.dumps({"error": WORDS, "code": 403})
    assert state.startswith("cancel: error (") and state == live_state(flagged, NEXT)["last_action_result"]
    assert result_state(write(tmp_path, "gemini", twin))[1] == "cancel: ok (detail, code)"
    assert to_chat(gemini({"error": WORDS})).messages[-1]["is_error"] is True
    assert "is_error" not in to_chat(twin).messages[-1]


@pytest.mark.parametrize("status", [{"attributes": [{"key": "error.type", "value": {"stringValue": "PermissionError"}}]},
                                    {"status": {"code": 2, "message": WORDS}},
                                    {"status": {"code": "STATUS_CODE_ERROR"}}])
def test_an_otel_tool_span_that_ended_in_an_error_flags_its_call_result(status, tmp_path):
    """The conventions record a failed tool call on its execute_tool span (error.type, status ERROR), named by
    gen_ai.tool.call.id: that call's result, in a later model call's input, is an error; a span that ended well, or a
    failed call of the same id in another trace and conversation, flags nothing."""
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp(status)))
    assert result_state(path) == (f"cancel: {WORDS}", FLAGGED)
    path.write_text(json.dumps(otlp({"status": {"code": 1}})))
    assert result_state(path) == (f"cancel: {WORDS}", UNFLAGGED)
    other = otlp(status, trace="t2", conversation="conv-2")["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    doc = otlp({"status": {"code": 1}})
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(other)
    path.write_text(json.dumps(doc))
    assert result_state(path) == (f"cancel: {WORDS}", UNFLAGGED)
    path.write_text(json.dumps(otlp(status, conversation=None)))  # one trace, no conversation id: the trace's
    assert result_state(path) == (f"cancel: {WORDS}", FLAGGED)


def test_a_responses_mcp_call_that_failed_is_flagged():
    items = [{"role": "user", "content": SAID},
             {"type": "mcp_call", "id": "m1", "name": "cancel", "arguments": "{}", "server_label": "s",
              "output": None, "error": WORDS}]
    assert to_chat(items).messages[-1] == {"role": "tool", "tool_call_id": "m1", "content": f"Error: {WORDS}",
                                           "is_error": True}
    assert "is_error" not in to_chat([*items[:1], {**items[1], "output": WORDS, "error": None}]).messages[-1]


def test_langchain_message_objects_keep_their_status_in_the_adapter():
    """convert_to_openai_messages drops a ToolMessage's status: the adapter keeps it, as the file reader does."""
    lc = pytest.importorskip("langchain_core.messages", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import state_from_messages

    def msgs(**flag):
        return [lc.HumanMessage(SAID), lc.AIMessage("", tool_calls=[{"name": "cancel", "args": {}, "id": "a"}]),
                lc.ToolMessage(WORDS, tool_call_id="a", **flag),
                lc.AIMessage("", tool_calls=[{"name": "get_user", "args": {"user_id": "ann_lee_123"}, "id": "b"}])]
    assert state_from_messages(msgs(status="error"))[0]["last_action_result"] == FLAGGED
    assert state_from_messages(msgs())[0]["last_action_result"] == UNFLAGGED
    assert state_from_messages(lc.messages_to_dict(msgs(status="error")))[0]["last_action_result"] == FLAGGED


@pytest.mark.parametrize("fmt, messages, says", [
    ("openai", openai({"is_error": "yes"}), "message 2: tool message's 'is_error' is a string: give true"),
    ("anthropic", anthropic({"is_error": "true"}), "content block 0: 'is_error' is \"true\", expected true (the call "
                                                   "failed) or false, or leave it out"),
    ("bedrock", bedrock({"status": "failed"}), "content block 0: 'status' is \"failed\", expected \"error\""),
    ("langchain", langchain({"status": "ERROR"}), "message 2: 'status' is \"ERROR\", expected \"error\""),
    ("tau2", tau2({"error": 1}), "message 2: 'error' is 1, expected true"),
    ("openhands", openhands({"success": "false"}, "run"), "event 2 (id 2): 'success' is \"false\", expected false"),
    ("openhands-v1", openhands_v1({"observation": {"kind": "CancelObservation", "content": WORDS, "is_error": "true"}}),
     "event 2 (id e2): 'observation.is_error' is \"true\", expected true"),
])
def test_a_flag_of_the_wrong_type_is_refused_in_one_line(fmt, messages, says, tmp_path, capsys):
    from sam_model.data.transcripts import main

    path = write(tmp_path, fmt, messages)
    assert main([str(path), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
