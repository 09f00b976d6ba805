"""Many loggers write a tool's result as the JSON data it returned (``"content": {"status": "ok", "id": "A-17"}``),
not as a string: such a log was refused in one line ("'content' is an object"), and a list of records was read as
content parts of no type, an empty result. A tool message's JSON data is now its JSON text, keys as written, so its
values are traced as a string result's are; OpenAI content parts keep their reading."""

from __future__ import annotations

import json

import pytest

from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events

RESULT = {"status": "ok", "order_id": "A-17", "email": "ann@example.com"}  # not in sorted order: kept as written


def chat(content) -> dict:
    return {"id": "c", "messages": [
        {"role": "system", "content": "You are support."},
        {"role": "user", "content": "where is my order? I'm ann@example.com"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "find_order",
                                                          "arguments": json.dumps({"email": "ann@example.com"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": content},
        {"role": "user", "content": "ok, cancel it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "cancel_order",
                                                          "arguments": json.dumps({"order_id": "A-17"})}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "cancelled"}]}


def convert(tmp_path, conv: dict) -> tuple[list[dict], ImportReport]:
    src = tmp_path / "chats.jsonl"
    src.write_text(json.dumps(conv) + "\n")
    report = ImportReport()
    return list(iter_transcript_events(src, report=report)), report


@pytest.mark.parametrize("data", [RESULT, [RESULT, {"status": "late", "order_id": "B-2"}], [{"type": "order", **RESULT}]],
                         ids=["object", "records", "records with a type field"])
def test_a_tool_result_written_as_json_data_reads_as_its_json_text(tmp_path, data):
    events, report = convert(tmp_path, chat(data))
    as_text, _ = convert(tmp_path, chat(json.dumps(data)))
    assert events == as_text  # the same events, states and labels as the result logged as a string
    result = events[2]
    assert result["kind"] == "result" and result["text"] == "find_order: " + json.dumps(data)
    decision = events[3]  # "ok, cancel it": the order id it needs was said by the result alone
    assert decision["useful_memory_steps"] == [2]
    assert not report.ignored  # no part of it left unread


def test_openai_content_parts_of_a_tool_message_keep_their_reading(tmp_path):
    parts = [{"type": "text", "text": "order A-17"}, {"type": "image_url", "image_url": {"url": "x"}}]
    events, report = convert(tmp_path, chat(parts))
    assert events[2]["text"] == "find_order: order A-17"
    assert report.ignored == {"image_url parts": 1}


def test_a_user_message_of_json_data_is_still_refused(tmp_path):
    conv = chat("ok")
    conv["messages"][1]["content"] = {"text": "hi"}
    with pytest.raises(TranscriptFormatError, match=r"chats.jsonl:1, message 1: 'content' is an object; expected"):
        convert(tmp_path, conv)


def langchain(content) -> dict:
    """The same conversation as LangChain's messages_to_dict writes a LangGraph state's messages."""
    msg = lambda t, **data: {"type": t, "data": {"type": t, **data}}  # noqa: E731
    call = lambda i, n, a: {"name": n, "args": a, "id": i, "type": "tool_call"}  # noqa: E731
    return {"id": "c", "messages": [
        msg("system", content="You are support."), msg("human", content="where is my order? I'm ann@example.com"),
        msg("ai", content="", tool_calls=[call("c1", "find_order", {"email": "ann@example.com"})]),
        msg("tool", content=content, tool_call_id="c1", name="find_order"), msg("human", content="ok, cancel it"),
        msg("ai", content="", tool_calls=[call("c2", "cancel_order", {"order_id": "A-17"})]),
        msg("tool", content="cancelled", tool_call_id="c2", name="cancel_order")]}


@pytest.mark.parametrize("data", [[RESULT, {"status": "late", "order_id": "B-2"}], [{"type": "order", **RESULT}]],
                         ids=["records", "records with a type field"])
def test_a_langchain_tool_result_of_records_reads_as_its_json_text(tmp_path, data):
    """LangChain's reader read an object result as its JSON text but a list of records as blocks of no type: an empty
    result, its values lost (counted as 'None' blocks), and the order id it held labelled nothing."""
    events, report = convert(tmp_path, langchain(data))
    as_text, _ = convert(tmp_path, langchain(json.dumps(data)))
    assert events == as_text
    assert events[2]["text"] == "find_order: " + json.dumps(data)
    assert events[3]["useful_memory_steps"] == [2]
    assert not report.ignored


def test_langchain_blocks_of_a_tool_message_keep_their_reading(tmp_path):
    """Text blocks, and plain strings among them (LangChain's content is str | list[str | dict]), are words."""
    blocks = ["order A-17", {"type": "text", "text": "shipped"}, {"type": "image_url", "image_url": {"url": "x"}}]
    events, report = convert(tmp_path, langchain(blocks))
    assert events[2]["text"] == "find_order: order A-17\nshipped"
    assert report.ignored == {"image_url": 1}


def test_a_media_block_is_a_part_not_data():
    """A LangChain 1.x image block ({"type": "image", "base64": ...}) or Anthropic's ({"type": "image", "source":
    ...}) keeps its payload under a key its type does not name: read as data, a screenshot tool's result became its
    base64 as text. A record whose type is a media word but holds no payload stays data."""
    from sam_model.data.formats.base import is_part, json_result

    assert is_part({"type": "image", "base64": "iVBOR", "mime_type": "image/png"})
    assert is_part({"type": "image", "source": {"type": "base64", "data": "iVBOR"}})
    assert json_result([{"type": "image", "base64": "iVBOR"}]) is None
    assert not is_part({"type": "file", "name": "report.pdf", "size": 3})
    assert json_result([{"type": "file", "name": "report.pdf"}]) == '[{"type": "file", "name": "report.pdf"}]'
