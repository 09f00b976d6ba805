"""OpenAI's deprecated functions API (an assistant ``function_call``, answered by a ``function`` message) has no call
ids: the result answers the call right before it. Logs of bots written against it (many support bots still are)
converted with the right events, but the import report listed every result as answering no earlier tool call, "a
truncated or merged transcript?", about a log that was whole."""

from __future__ import annotations

import json

from sam_model.data.transcripts import ImportReport, iter_transcript_events

ARGS = {"account_id": "NM-123456", "invoice_id": "INV-99887"}


def legacy(call_name: str = "issue_refund", result_name: str = "issue_refund") -> dict:
    return {"id": "l1", "messages": [
        {"role": "system", "content": "You are support."},
        {"role": "user", "content": "my account is NM-123456, refund invoice INV-99887 please"},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup_customer",
                                                                 "arguments": json.dumps({"account_id": "NM-123456"})}},
        {"role": "function", "name": "lookup_customer", "content": json.dumps({"plan": "LITE-10"})},
        {"role": "assistant", "content": "Refund INV-99887?"},
        {"role": "user", "content": "ok go ahead"},
        {"role": "assistant", "content": None, "function_call": {"name": call_name, "arguments": json.dumps(ARGS)}},
        {"role": "function", "name": result_name, "content": json.dumps({"ok": True})}]}


def modern() -> dict:
    conv = legacy()
    for i, m in enumerate(conv["messages"]):
        if "function_call" in m:
            fc = m.pop("function_call")
            m["tool_calls"] = [{"id": f"c{i}", "type": "function", "function": fc}]
        elif m["role"] == "function":
            m.update(role="tool", tool_call_id=f"c{i - 1}")
    return conv


def convert(tmp_path, conv: dict) -> tuple[list[dict], ImportReport]:
    src = tmp_path / "chats.jsonl"
    src.write_text(json.dumps(conv) + "\n")
    report = ImportReport()
    return list(iter_transcript_events(src, report=report)), report


def test_a_function_message_answers_the_function_call_before_it(tmp_path):
    events, report = convert(tmp_path, legacy())
    assert report.unmatched_results == [], report.unmatched_results
    want, _ = convert(tmp_path, modern())
    assert events == want  # the same events, labels and states as the tool_calls API's
    assert [e["text"] for e in events if e["kind"] == "result"] == ['lookup_customer: {"plan": "LITE-10"}',
                                                                      'issue_refund: {"ok": true}']


def test_a_function_message_of_another_name_is_still_reported(tmp_path):
    _, report = convert(tmp_path, legacy(result_name="refund"))
    assert len(report.unmatched_results) == 1 and "message 7: no tool_call_id" in report.unmatched_results[0]
