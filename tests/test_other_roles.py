"""A misspelt role (``asistant``) silently became its own kind of event: the spec keeps a role outside OpenAI's as
events of that kind (Llama's ``ipython``), so it is still read, but the import report (sam-data transcripts, and
sam-train's data lines) now counts each such role, says where it was first met and asks of one close to an API
role whether that was meant."""

from __future__ import annotations

import json

from sam_model.data.formats import to_chat
from sam_model.data.sources import iter_source_events
from sam_model.data.transcripts import main


def conversation(*roles: str, id: str = "c") -> dict:
    """A support chat with one tool call, then a message of each of ``roles``."""
    return {"id": id, "messages": [
        {"role": "user", "content": "my order is A-17"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "find", "arguments": '{"order": "A-17"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
        *({"role": role, "content": f"words of {role}"} for role in roles)]}


def write(tmp_path, *conversations: dict):
    src = tmp_path / "chats.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in conversations))
    return src


def test_a_misspelt_role_is_counted_and_a_close_api_role_suggested(tmp_path, capsys):
    src = write(tmp_path, conversation("assistant", "asistant"), conversation("ipython", "asistant", id="d"))
    out = tmp_path / "out.jsonl"
    assert main([str(src), str(out)]) == 0
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["kind"] for e in events].count("asistant") == 2  # still the spec's event of that kind
    lines = [line for line in capsys.readouterr().out.splitlines() if "roles outside OpenAI's" in line]
    assert len(lines) == 1, lines
    line = lines[0]
    assert f"'asistant' in 2 messages, first at {src}:1, message 4 (did you mean 'assistant'?" in line
    assert f"'ipython' in 1 message, first at {src}:2, message 3" in line
    assert line.count("did you mean") == 1  # ipython is a role of its own, near none of the API's


def test_a_log_of_api_roles_has_no_such_line(tmp_path, capsys):
    src = write(tmp_path, conversation("Assistant", "developer", "user"))
    assert main([str(src), str(tmp_path / "out.jsonl")]) == 0
    assert "roles outside" not in capsys.readouterr().out


def test_training_sources_say_it_too(tmp_path, capsys):
    src = write(tmp_path, conversation("asistant"))
    assert any(e["kind"] == "asistant" for e in list(iter_source_events(src)))
    out = capsys.readouterr().out
    assert f"{src}: roles outside OpenAI's" in out and "did you mean 'assistant'?" in out


def test_a_langchain_chat_message_of_its_own_role_is_counted():
    messages = [{"type": "human", "data": {"content": "hi"}},
                {"type": "chat", "data": {"role": "asistant", "content": "hello"}}]
    chat = to_chat(messages, "lc.jsonl:1", "langchain")
    assert chat.other_roles == {"asistant": 1} and chat.other_role_at == {"asistant": "lc.jsonl:1, message 1"}
