"""A GenAI ``execute_tool`` span that ended in an error flags its call's result as failed; ``gen_ai.tool.call.id``
is Recommended, not Required, by the conventions, and a span without it was passed over, its failure unflagged. It
is paired with its call as an OpenInference TOOL span naming none is (history.ran): by ``gen_ai.tool.name``, its
start and, where several calls of the tool wait, its ``gen_ai.tool.call.arguments``; where it could be either of
calls alike, none is flagged and a warning names the span and says why."""

from __future__ import annotations

import json
import logging

from sam_model.data.formats import otel

text = lambda role, t: {"role": role, "parts": [{"type": "text", "content": t}]}  # noqa: E731


def attr(key: str, v) -> dict:
    return {"key": key, "value": {"stringValue": v}}


def calls(args: list[dict]) -> list[dict]:
    """A conversation whose one model call makes a get_user call per ``args`` (the last one's result an error)."""
    made = [{"type": "tool_call", "id": f"c{i}", "name": "get_user", "arguments": a} for i, a in enumerate(args)]
    results = [{"type": "tool_call_response", "id": f"c{i}", "response": "Error: no such user" if i == len(args) - 1
                else "{\"name\": \"Ann\"}"} for i in range(len(args))]
    return [text("user", "Look them up."), {"role": "assistant", "parts": made}, {"role": "tool", "parts": results},
            text("assistant", "Done.")]


def spans(messages: list[dict], tools: list[tuple[dict | None, bool]]) -> dict:
    """The model calls' spans (no call ids on the tool spans), and per ``tools`` item an execute_tool span between
    them (its arguments as gen_ai.tool.call.arguments where given; failed or not), named as the conventions name it."""
    out = [{"traceId": "t1", "spanId": f"s{i}", "startTimeUnixNano": str(1000 + i * 100), "attributes": [
        attr("gen_ai.operation.name", "chat"), attr("gen_ai.conversation.id", "conv-1"),
        attr("gen_ai.input.messages", json.dumps(messages[:i])),
        attr("gen_ai.output.messages", json.dumps(messages[i:i + 1]))]} for i in (1, 3)]
    for k, (args, failed) in enumerate(tools):
        out.append({"traceId": "t1", "spanId": f"tool{k}", "name": "execute_tool get_user",
                    "startTimeUnixNano": str(1150 + k), "status": {"code": 2 if failed else 1}, "attributes": [
                        attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "get_user"),
                        *([attr("gen_ai.tool.call.arguments", json.dumps(args))] if args is not None else [])]})
    return {"resourceSpans": [{"scopeSpans": [{"spans": out}]}]}


def read(doc: dict) -> frozenset[str]:
    (conv,) = otel.conversations([(doc, "spans.json")], "spans.json", str)
    return conv.failed_calls


def test_a_failed_execute_tool_span_without_a_call_id_flags_the_one_call_it_ran():
    assert read(spans(calls([{"user_id": "bob"}]), [(None, True)])) == {"c0"}
    assert read(spans(calls([{"user_id": "bob"}]), [(None, False)])) == frozenset()


def test_the_span_without_gen_ai_tool_name_is_paired_by_its_span_name():
    doc = spans(calls([{"user_id": "bob"}]), [(None, True)])
    tool = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
    tool["attributes"] = [a for a in tool["attributes"] if a["key"] != "gen_ai.tool.name"]
    assert read(doc) == {"c0"}


def test_parallel_calls_pair_by_gen_ai_tool_call_arguments():
    """Two get_user calls wait: the failed span's arguments tell which it ran, and only that one is flagged."""
    assert read(spans(calls([{"user_id": "ann"}, {"user_id": "bob"}]),
                      [({"user_id": "ann"}, False), ({"user_id": "bob"}, True)])) == {"c1"}


def test_two_alike_calls_are_said_in_a_warning_not_flagged(caplog):
    with caplog.at_level(logging.WARNING):
        assert read(spans(calls([{"user_id": "ann"}, {"user_id": "ann"}]),
                          [({"user_id": "ann"}, False), ({"user_id": "ann"}, True)])) == frozenset()
        assert read(spans(calls([{"user_id": "ann"}, {"user_id": "bob"}]), [(None, True)])) == frozenset()
    said = [r.getMessage() for r in caplog.records if "no tool call id" in r.getMessage()]
    assert len(said) == 2
    assert "spans.json: conversation conv-1: 1 tool span that ended in an error names no tool call id (the first: " \
        "spans.json, span tool1: it could be any of 2 calls of get_user, its gen_ai.tool.call.arguments telling " \
        "not which): the result of its call is not flagged as failed; record the call's id on the span " \
        "(gen_ai.tool.call.id" in said[0]
    assert "span tool0: it could be any of 2 calls of get_user, and it records no gen_ai.tool.call.arguments to " \
        "tell which" in said[1]
