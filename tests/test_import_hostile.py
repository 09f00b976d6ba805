"""The importers and ``sam-data`` on logs as agents really leave them: a file saved empty with a byte-order mark, the
other container than the name says (JSON Lines named .json, a pretty-printed document in a .jsonl), a last line cut
short by a killed logger, a number too long to read. Each is one line that says what to do, and nothing is
written."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from sam_model.data import transcripts, validate
from sam_model.data.formats import detect
from sam_model.data.reader import read_episodes
from sam_model.data.schema import LogFormatError
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import TranscriptFormatError, iter_transcript_events

BOM = b"\xef\xbb\xbf"
MESSAGES = [
    {"role": "user", "content": "My user id is mia_li_3668."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "mia_li_3668"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"reservation": "ABC123"}'},
]
CONVERSATION = json.dumps({"id": "e1", "messages": MESSAGES})
EVENTS = [{"episode_id": "t", "step": i, "kind": "user", "text": f"hello {i}"} for i in range(2)]


def _error(argv: list[str], capsys, out: Path) -> str:
    """The one error line of ``sam-data transcripts ARGV OUT``, after checking it wrote nothing."""
    assert transcripts.main([*argv, str(out)]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert not out.exists()
    return errors[0]


@pytest.mark.parametrize("content", [b"", b"  \n", BOM, BOM + b"\r\n"])
def test_an_empty_json_transcript_file_is_an_empty_file(tmp_path, capsys, content):
    """Found by review: an empty .json was "invalid JSON (Expecting value: line 1 column 1 (char 0))", where an empty
    .jsonl is "no conversation converted: an empty file?", and --allow-empty could not write its empty log."""
    src, out = tmp_path / "chats.json", tmp_path / "out.jsonl"
    src.write_bytes(content)
    assert "no conversation converted: an empty file? pass --allow-empty" in _error([str(src)], capsys, out)
    assert transcripts.main([str(src), str(out), "--allow-empty"]) == 0
    assert out.read_text() == ""


def test_json_lines_named_json_are_told_to_be_named_jsonl(tmp_path, capsys):
    """Found by review: JSON Lines saved as .json were "invalid JSON (Extra data: line 2 column 1 (char 778))"."""
    src = tmp_path / "chats.json"
    src.write_text(CONVERSATION + "\n" + CONVERSATION.replace('"e1"', '"e2"') + "\n")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert "Extra data" in err and "one per line (JSON Lines), name it .jsonl" in err


def test_a_pretty_printed_document_in_a_jsonl_file_is_named_so(tmp_path, capsys):
    """Found by review: json.dump(..., indent=2) into a .jsonl was "line 1: invalid JSON (Expecting value...)" in
    both readers, with no word of what was wrong with the file."""
    src = tmp_path / "chats.jsonl"
    src.write_text(json.dumps([json.loads(CONVERSATION)], indent=2))
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert "chats.jsonl:1: invalid JSON" in err and "written over several lines (pretty-printed)" in err
    assert "name the file .json" in err
    log = tmp_path / "log.jsonl"
    for doc in (EVENTS, EVENTS[0]):
        log.write_text(json.dumps(doc, indent=2))
        with pytest.raises(LogFormatError, match="log.jsonl:1: invalid JSON .*written over several lines"):
            read_episodes(log)
    log.write_text(json.dumps(EVENTS) + "\n")
    with pytest.raises(LogFormatError, match=r"got a list \(write each event as one object on its own "
                                             r"line, JSON Lines\)"):
        read_episodes(log)


def test_a_last_line_cut_short_is_named_so(tmp_path, capsys):
    """Found by review: a logger killed mid-write left a last line that was only "invalid JSON (Unterminated string
    starting at ...)", and sam-data transcripts said nothing of what to do (not even --skip-bad)."""
    src = tmp_path / "chats.jsonl"
    src.write_text(CONVERSATION + "\n" + CONVERSATION[:40])
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert err.startswith(f"error: {src}:2: invalid JSON") and "the file ends inside this line: it was cut short" in err
    assert "pass --skip-bad" in err
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(EVENTS[0]) + "\n" + json.dumps(EVENTS[1])[:30])
    with pytest.raises(LogFormatError, match="log.jsonl:2: invalid JSON .*it was cut short"):
        read_episodes(log)
    log.write_text(json.dumps(EVENTS[0]) + "\n{bad\n" + json.dumps(EVENTS[1]) + "\n")  # a bad line in the middle
    with pytest.raises(LogFormatError, match="log.jsonl:2: invalid JSON") as info:
        read_episodes(log)
    assert "cut short" not in str(info.value)


def test_a_transcripts_error_that_names_its_own_option_gets_no_second_hint(tmp_path, capsys):
    src = tmp_path / "chats.jsonl"
    src.write_text("")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert "--allow-empty" in err and "--skip-bad" not in err


@pytest.mark.parametrize("content", [BOM, BOM + b"\n", BOM + b"\r\n\n"])
def test_an_agent_log_saved_empty_with_a_byte_order_mark_is_empty(tmp_path, capsys, content):
    """Found by review: a log a Windows editor saved empty (just a byte-order mark) was "line 1: invalid JSON
    (Expecting value at column 1)", so --allow-empty could not accept it; a BOM before the first event was fine."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(content)
    assert read_episodes(log) == []
    assert validate.main([str(log)]) == 1
    err = capsys.readouterr().err
    assert "no events (the file is empty or holds only blank lines)" in err and "invalid JSON" not in err
    assert validate.main([str(log), "--allow-empty"]) == 0
    log.write_bytes(content + json.dumps(EVENTS[0]).encode() + b"\n")
    assert [e.text for ep in read_episodes(log) for e in ep.events] == ["hello 0"]


def test_a_log_that_is_not_utf8_says_to_resave_it(tmp_path):
    """Found by review: the transcript and SGD readers said "re-save the file as UTF-8", the agent-log reader only
    "not UTF-8 (invalid start byte at byte 0)", also for a whole UTF-16 file."""
    log = tmp_path / "log.jsonl"
    log.write_bytes("".join(json.dumps(e) + "\n" for e in EVENTS).encode("utf-16"))
    with pytest.raises(LogFormatError, match=r"log.jsonl:1: not UTF-8 \(the file is UTF-16\); re-save the file as "
                                             "UTF-8"):
        read_episodes(log)
    log.write_bytes(json.dumps(EVENTS[0]).encode() + b"\n" + json.dumps(EVENTS[1]).replace("hello", "h\xe9llo")
                    .encode("latin-1") + b"\n")
    with pytest.raises(LogFormatError, match=r"log.jsonl:2: not UTF-8 \(invalid continuation byte at byte \d+\); "
                                             "re-save the file as UTF-8"):
        read_episodes(log)


def test_a_number_too_long_to_read_says_what_to_do(tmp_path, capsys):
    """Found by review: a number of 5,000 digits was "invalid JSON (Exceeds the limit (4300 digits) ...; use
    sys.set_int_max_str_digits() to increase the limit)": advice for Python code, not for a log."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({**EVENTS[0], "meta": {"n": 1}}).replace("1}", "9" * 5000 + "}") + "\n")
    with pytest.raises(LogFormatError, match="log.jsonl:1: invalid JSON") as info:
        read_episodes(log)
    assert "set_int_max_str_digits" not in str(info.value) and "write it as a string" in str(info.value)
    src = tmp_path / "chats.jsonl"
    src.write_text(CONVERSATION.replace('"e1"', "9" * 5000) + "\n")
    with pytest.raises(TranscriptFormatError, match="chats.jsonl:1: invalid JSON") as info:
        list(iter_transcript_events(src))
    assert "set_int_max_str_digits" not in str(info.value) and "write it as a string" in str(info.value)


def test_an_openai_conversation_with_a_top_level_system_is_read_as_openai(tmp_path):
    """Found by review: a logger that keeps the system prompt apart ({"id", "system", "messages"}) with OpenAI tool
    calls was taken for Anthropic Messages by its top-level 'system', whose reader refused the conversation at its
    first tool message ("role 'tool' is not an Anthropic role"); it is OpenAI chat with its policy apart, and gives
    the events of the same conversation with the policy as a system message. A top-level 'system' beside messages
    without OpenAI tool use is still Anthropic's."""
    apart, inline = tmp_path / "apart.jsonl", tmp_path / "inline.jsonl"
    apart.write_text(json.dumps({"id": "e1", "system": "You are an agent.", "messages": MESSAGES}) + "\n")
    inline.write_text(json.dumps({"id": "e1", "messages": [{"role": "system", "content": "You are an agent."},
                                                           *MESSAGES]}) + "\n")
    report = transcripts.ImportReport()
    assert list(iter_transcript_events(apart, report=report)) == list(iter_transcript_events(inline))
    assert report.formats == {"openai": 1} and report.calls == 1
    words = tmp_path / "words.jsonl"
    words.write_text(json.dumps({"id": "a", "system": "be kind", "messages": [{"role": "user", "content": "hi"}]}))
    report = transcripts.ImportReport()
    list(iter_transcript_events(words, report=report, allow_empty=True))
    assert report.formats == {"anthropic": 1}


def test_an_agent_log_given_to_the_transcript_importer_is_named_so(tmp_path, capsys):
    """Found by review: converting a log that is the importer's own output was "expected a conversation ... (got a
    dict ...)" and then advised --skip-bad, which skipped every line; the reverse mistake (a transcript given as an
    agent log) already said what the file is."""
    src = tmp_path / "chats.jsonl"
    src.write_text(CONVERSATION + "\n")
    log = tmp_path / "log.jsonl"
    assert transcripts.main([str(src), str(log)]) == 0
    err = _error([str(log)], capsys, tmp_path / "again.jsonl")
    assert f"{log}:1: an agent-log event (episode_id, step, kind), not a conversation: the file is an agent log " \
           "already and needs no conversion" in err and "--skip-bad" not in err


def test_a_conversation_under_another_key_names_the_keys_it_has(tmp_path, capsys):
    """Found by a new user's walk: a line whose messages sat under "msgs" was "expected a conversation ... (got an
    object; ...)", which did not say which field the reader missed. It now names the object's keys."""
    src = tmp_path / "chats.jsonl"
    src.write_text(CONVERSATION + "\n" + json.dumps({"id": "e2", "msgs": MESSAGES}) + "\n")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert f"{src}:2: expected a conversation" in err and "(got an object with keys 'id', 'msgs';" in err, err
    many = {f"k{i}": i for i in range(12)}
    src.write_text(json.dumps(many) + "\n")
    assert "with keys 'k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', ...;" in _error([str(src)], capsys,
                                                                                       tmp_path / "out.jsonl")


def test_a_transcript_document_given_as_an_agent_log_says_how_to_convert_it(tmp_path):
    """Found by review: a tau-bench style .json (pretty-printed) given to the agent-log reader was only "line 1:
    invalid JSON (Expecting value at column 1)", and a .jsonl line listing conversations "got list"; both are
    transcripts the importer reads. The trainer, which told a conversation line from an event line, read a line
    listing conversations as an agent log."""
    doc = tmp_path / "gpt-shop.json"
    doc.write_text(json.dumps([{"task_id": 1, "trial": 0, "traj": MESSAGES}], indent=2))
    with pytest.raises(LogFormatError, match="gpt-shop.json:1: invalid JSON .*convert it with `sam-data transcripts"):
        read_episodes(doc)
    listed = tmp_path / "chats.jsonl"
    listed.write_text(json.dumps([json.loads(CONVERSATION)]) + "\n")
    with pytest.raises(LogFormatError, match="chats.jsonl:1: an event must be a JSON object, got a list; this looks "
                                             "like a tool-call transcript"):
        read_episodes(listed)
    assert source_kind(listed) == "transcripts"
    assert [e["kind"] for e in iter_transcript_events(listed)] == ["user", "action", "result"]


def test_openai_chat_messages_dumped_with_a_type_are_read_as_openai(tmp_path):
    """Found by review: chat messages an SDK dumped with "type": "message" were taken for OpenAI Responses items, whose
    reader refused the conversation at its first tool message ("message item with role 'tool'"), or without one
    read none of its tool calls; messages with a tool role or tool_calls are never Responses items."""
    typed = [{**m, "type": "message"} for m in MESSAGES]
    src, plain = tmp_path / "typed.jsonl", tmp_path / "plain.jsonl"
    src.write_text(json.dumps({"id": "e1", "messages": typed}) + "\n")
    plain.write_text(CONVERSATION + "\n")
    report = transcripts.ImportReport()
    assert list(iter_transcript_events(src, report=report)) == list(iter_transcript_events(plain))
    assert report.formats == {"openai": 1}
    assert detect(typed[:2]) == "openai" and detect([{"type": "message", "role": "user", "content": "hi"}]) == \
        "responses"


@pytest.mark.parametrize("kind", [{}, ["tool_use"]])
def test_a_block_type_that_is_no_string_is_no_traceback(tmp_path, capsys, kind):
    """Found by fuzzing the importer: a content block whose "type" is an object or a list (a serialiser's enum
    written whole) was "TypeError: unhashable type" with a traceback, from the scan for other formats' tool
    calls; the block is a part of no known type, counted, and the conversation is read."""
    messages = [{"role": "user", "content": "My user id is mia_li_3668."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_user",
                                                   "input": {"user_id": "mia_li_3668"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
                {"role": "assistant", "content": [{"type": kind, "text": "done"}]}]
    src, out = tmp_path / "chats.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": "a", "messages": messages}) + "\n")
    assert transcripts.main([str(src), str(out)]) == 0, capsys.readouterr().err
    assert f"parts not read (no event is made of them): {kind} 1" in capsys.readouterr().out
    assert [json.loads(line)["kind"] for line in out.read_text().splitlines()] == ["user", "action", "result"]


def test_a_file_in_openais_fine_tuning_format_is_told_how_to_get_ids(tmp_path, capsys):
    """Found by a walkthrough: a telecom agent's logs kept in OpenAI's fine-tuning format ({"messages", "tools"} a
    line, no id) were refused as "conversation without 'id' ...; fix it", which did not say how."""
    src = tmp_path / "ft.jsonl"
    src.write_text(json.dumps({"messages": MESSAGES, "tools": [], "parallel_tool_calls": False}) + "\n")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert f"{src}:1: conversation without 'id'" in err and "(OpenAI's fine-tuning format) gets them by jq -c" in err
    fixed = tmp_path / "with_ids.jsonl"
    fixed.write_text(json.dumps({"id": "1", "messages": MESSAGES, "tools": []}) + "\n")  # what that jq line writes
    assert transcripts.main([str(fixed), str(tmp_path / "out.jsonl")]) == 0


def test_the_jq_line_given_for_missing_ids_gives_each_conversation_its_own(tmp_path, capsys):
    """The jq line the error gives, run as written: jq's input_line_number counts the newlines read, so a file whose
    last line has no newline (as many writers leave it) gave its last two conversations one id, which the import
    then refused as a duplicate; a CRLF or a blank line shifted the rest. Counting the values jq reads gives each
    conversation the number of its place in the file."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    src = tmp_path / "ft.jsonl"
    lines = [json.dumps({"messages": MESSAGES[:n], "tools": []}) for n in (2, 3, len(MESSAGES))]
    src.write_text(lines[0] + "\r\n\n" + "\n".join(lines[1:]))  # a CRLF, a blank line, no newline at the end
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    command = re.search(r"gets them by (jq .*?) FILE > WITH_IDS\.jsonl", err)
    assert command, err
    fixed = subprocess.run([*shlex.split(command.group(1)), str(src)], capture_output=True, text=True, check=True)
    assert [json.loads(line)["id"] for line in fixed.stdout.splitlines()] == ["1", "2", "3"]
    (tmp_path / "with_ids.jsonl").write_text(fixed.stdout)
    assert transcripts.main([str(tmp_path / "with_ids.jsonl"), str(tmp_path / "out.jsonl")]) == 0


def test_a_conversation_logged_at_every_turn_is_named_as_such(tmp_path, capsys):
    """Found by a walkthrough: a LangGraph agent that logs {"id": thread_id, "messages": ...} after every turn writes
    one thread's conversation so far on each line, and the second was refused as a duplicate id whose ids "must be
    unique", with --skip-bad offered, which keeps the first line, the shortest. It now says what the lines are and
    to keep each id's last; two conversations that merely share an id are refused as before."""
    src = tmp_path / "turns.jsonl"
    src.write_text(json.dumps({"id": "thread-1", "messages": MESSAGES[:1]}) + "\n"
                   + json.dumps({"id": "thread-1", "messages": MESSAGES}) + "\n")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert (f"{src}:2: duplicate conversation id 'thread-1', first at {src}:1 (the same conversation logged again, 2 "
            "messages longer: a log written at every turn") in err and "keep each id's last line" in err, err
    src.write_text(json.dumps({"id": "thread-1", "messages": MESSAGES}) + "\n"
                   + json.dumps({"id": "thread-1", "messages": MESSAGES}) + "\n")
    assert "(the same conversation logged again: a log written" in _error([str(src)], capsys, tmp_path / "out.jsonl")
    other = [{"role": "user", "content": "My user id is bo_chan_7."}, *MESSAGES[1:]]
    src.write_text(json.dumps({"id": "thread-1", "messages": MESSAGES}) + "\n"
                   + json.dumps({"id": "thread-1", "messages": other}) + "\n")
    err = _error([str(src)], capsys, tmp_path / "out.jsonl")
    assert "(episode ids must be unique" in err and "logged again" not in err
