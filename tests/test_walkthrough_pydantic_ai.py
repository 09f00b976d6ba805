"""A walkthrough of the README as a team whose employee travel-and-expense assistant is built on Pydantic AI, with
its message history logged as Pydantic AI writes it (``result.all_messages_json()``): a ``.jsonl`` of ``{"id",
"messages"}`` lines, or one ``.json`` a conversation. No reader took it: the ``.jsonl`` was read as OpenAI chat and
refused ("message without 'role'"), ``sam-data validate`` called it OpenAI chat, a conversation's ``.json`` was
"expected ... a conversation {"id": ..., "messages": [...]}" and a folder of them "not an OpenHands trajectory"-like
errors; a live add of ``result.new_messages_json()`` (bytes) said "item 0 ... got a number", its decoded text was
stored whole as one memory, and the message objects were refused naming nothing to give instead. The logs are
templated (tests/pydantic_ai_travel.py)."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai_travel import POLICY, conversations, write_folder, write_jsonl

from sam_model.data.chatmessages import policy_of
from sam_model.data.formats import FORMATS, to_chat, tool_marks
from sam_model.data.transcripts import ImportReport, iter_transcript_events, live_state, main
from sam_model.memory import HashingEncoder, ScopedMemory


def events(path: Path, **kw: Any) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def runs(messages: list[dict]) -> list[list[dict]]:
    """What ``result.new_messages()`` gives after each run: from a request with the user's prompt to the next."""
    out: list[list[dict]] = []
    for m in messages:
        if m["kind"] == "request" and any(p["part_kind"] == "user-prompt" for p in m["parts"]):
            out.append([])
        out[-1].append(m)
    return out


def test_the_logged_histories_convert(tmp_path, capsys):
    path = write_jsonl(tmp_path / "chats.jsonl", 12, 0)
    got, report = events(path)
    assert report.formats == {"pydantic-ai": 12} and report.conversations == 12
    assert sum("useful_memory_steps" in e for e in got) >= 40
    assert report.ignored.get("thinking", 0) > 0  # not words said: counted, not read
    assert main([str(path), str(tmp_path / "out.jsonl")]) == 0
    assert "formats: pydantic-ai 12" in capsys.readouterr().out


def test_a_conversation_a_json_file_and_a_folder_of_them_read_as_its_line(tmp_path):
    """``all_messages_json()`` written to a file a conversation (named by it), alone or in a folder: the same events
    as the conversation's line of the ``.jsonl``."""
    write_jsonl(tmp_path / "chats.jsonl", 3, 4)
    write_folder(tmp_path / "histories", 3, 4)
    line, _ = events(tmp_path / "chats.jsonl")
    folder, report = events(tmp_path / "histories")
    assert report.formats == {"pydantic-ai": 3}
    assert folder == line  # the files are named by the conversations' ids
    one, _ = events(tmp_path / "histories" / "s4-travel-001.json")
    assert one == [e for e in line if e["episode_id"] == "s4-travel-001"]


def test_sam_data_validate_and_a_wrong_format_name_the_reader(tmp_path, capsys):
    from sam_model.data.validate import main as validate_main

    path = write_jsonl(tmp_path / "chats.jsonl", 2, 0)
    assert validate_main([str(path)]) != 0
    assert "pydantic-ai: Pydantic AI message history" in capsys.readouterr().err
    assert main([str(path), str(tmp_path / "out.jsonl"), "--format", "openai"]) != 0
    assert "the pydantic-ai reader reads: try --format pydantic-ai" in capsys.readouterr().err
    assert tool_marks(conversations(1, 0)[0][1]) == [("Pydantic AI messages with tool-call or tool-return parts",
                                                      "pydantic-ai")]


def test_a_retry_prompt_is_the_failed_calls_result_and_the_retried_call_is_decided_after_it():
    """A ``retry-prompt`` answering a call (its arguments failed validation) is that call's failed result, its text
    what the model was shown; the call made again is a decision of its own, after it."""
    _, messages = conversations(1, 0)[0]
    chat = to_chat(messages, format="pydantic-ai")
    failed = [m for m in chat.messages if m.get("is_error")]
    assert len(failed) == 1 and failed[0]["content"].startswith("1 validation error:\n```json\n")
    assert failed[0]["content"].endswith("Fix the errors and try again.") and '"float_parsing"' in failed[0]["content"]
    retry = next(i for i, m in enumerate(messages) for p in m["parts"] if p["part_kind"] == "retry-prompt")
    again = messages[retry + 1]["parts"][0]
    state = live_state(messages[:retry + 1], again)
    assert state["last_action_result"].startswith("add_receipt: error")
    output_retry = {"kind": "request", "parts": [{"content": "bad output", "tool_name": None, "tool_call_id": "x",
                                                  "part_kind": "retry-prompt"}]}  # no call: the output's, unread
    assert to_chat([*messages, output_retry]).ignored["retry-prompt without a tool"] == 1


def test_instructions_sent_with_every_request_are_the_policy_once():
    """An agent's ``instructions=`` ride on every request: read as the policy where they change, the same events as
    the system prompt's part."""
    _, messages = conversations(1, 0)[0]
    system = [p for p in messages[0]["parts"] if p["part_kind"] == "system-prompt"]
    assert system  # seed 0's first conversation uses a system prompt
    moved = [{**m, "parts": [p for p in m["parts"] if p["part_kind"] != "system-prompt"],
              **({"instructions": POLICY} if m["kind"] == "request" else {})} for m in messages]
    a, b = to_chat(messages), to_chat(moved)
    assert a.messages == b.messages and sum(m["role"] == "system" for m in b.messages) == 1


@pytest.mark.parametrize("how", ["whole", "runs", "messages"])
def test_live_adds_of_each_runs_new_messages_store_the_importers_memories_and_labels(tmp_path, how):
    """README: ``memory.add(json.loads(result.new_messages_json()), ...)`` after each run (or each message as it
    comes) stores what the importer makes of the whole history, with its states and labels."""
    for cid, messages in conversations(3, 5):
        path = tmp_path / f"{cid}.jsonl"
        path.write_text(json.dumps({"id": cid, "messages": messages}) + "\n")
        want, _ = events(path)
        batches = {"whole": [messages], "runs": runs(messages), "messages": [[m] for m in messages]}[how]
        memory = ScopedMemory(HashingEncoder(16))
        for batch in batches:
            memory.add(batch, user_id="me", run_id="s")
        got = sorted(memory.get_all(user_id="me", run_id="s", limit=None)["results"], key=lambda r: r["step"])
        assert [(r["step"], r["kind"], r["memory"]) for r in got] == [(e["step"], e["kind"], e["text"]) for e in want]
        decided = [(e["state"], e.get("useful_memory_steps") or []) for e in memory._trackers["me//s"].events]
        assert decided == [(e["state"], e.get("useful_memory_steps") or []) for e in want]


def test_a_search_by_a_tool_call_part_is_the_calls_decision():
    """The call about to be made as Pydantic AI holds it (a ``tool-call`` part: tool_name, args, tool_call_id) is a
    call ``live_state`` and a search by call read: it was 'a tool call with no tool name'."""
    _, messages = conversations(1, 7)[0]
    last = max(i for i, m in enumerate(messages) if m["kind"] == "response"
               and any(p["part_kind"] == "tool-call" for p in m["parts"]))
    part = messages[last]["parts"][0]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:last], user_id="me", run_id="s")
    found = memory.search("", call=part, user_id="me", run_id="s", limit=3)
    assert found["state"] == live_state(messages[:last], part)
    assert found["state"]["uncertainty_flags"] == ["approver", "report_id"]


def test_the_history_given_as_json_bytes_text_or_objects_is_refused_saying_what_to_give():
    _, messages = conversations(1, 7)[0]
    memory = ScopedMemory(HashingEncoder(16))
    dumped = json.dumps(messages[:2]).encode()  # what result.new_messages_json() returns
    with pytest.raises(TypeError, match=r"data is bytes .*json\.loads\(result\.new_messages_json\(\)\)"):
        memory.add(dumped, user_id="me", run_id="s")
    with pytest.raises(ValueError, match="JSON text of Pydantic AI messages"):  # it was stored as one memory
        memory.add(dumped.decode(), user_id="me", run_id="s")

    @dataclasses.dataclass
    class ModelRequest:  # what new_messages() returns: Pydantic AI's own dataclasses
        parts: list
        kind: str = "request"

    ModelRequest.__module__ = "pydantic_ai.messages"
    with pytest.raises(TypeError, match=r"got a Python ModelRequest: give json\.loads"):
        memory.add([ModelRequest(parts=[])], user_id="me", run_id="s")
    assert memory.get_all(user_id="me", run_id="s")["results"] == []
    assert memory.add("my card ends in [4242]", user_id="me", run_id="s")["results"]  # words are words


def test_sam_data_formats_lists_the_reader():
    assert "all_messages_json()" in FORMATS["pydantic-ai"].title


def _stored(memory: ScopedMemory, run_id: str = "s") -> list[tuple]:
    """A scope's memories in order, with the states and labels its tracker decided."""
    got = sorted(memory.get_all(user_id="me", run_id=run_id, limit=None)["results"], key=lambda r: r["step"])
    decided = [(e["state"], e.get("useful_memory_steps") or []) for e in memory._trackers[f"me//{run_id}"].events]
    return [(r["step"], r["kind"], r["memory"]) for r in got] + decided


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_all_messages_added_after_each_run_store_the_importers_memories_and_labels(tmp_path, how):
    """``all_messages()`` added after every run (given ``message_history``: the earlier runs, then the new one)
    stored the earlier runs again (40 memories for 20 after three runs). Its start is the scope's last add, which
    held every earlier run, told by its timestamps: read once, and the add's notes say so."""
    for cid, messages in reversed(conversations(3, 0)):
        path = tmp_path / f"{cid}.jsonl"
        path.write_text(json.dumps({"id": cid, "messages": messages}) + "\n")
        want, _ = events(path)
        memory, so_far, answers = ScopedMemory(HashingEncoder(16)), [], []
        for run in runs(messages):
            so_far += run
            answers.append(memory.add(json.loads(json.dumps(so_far)), user_id="me", run_id="s"))
            if how == "saved and loaded":
                memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
        assert _stored(memory) == [(e["step"], e["kind"], e["text"]) for e in want] + [
            (e["state"], e.get("useful_memory_steps") or []) for e in want]
        counts = [len(r) for r in runs(messages)]
        assert [len(a["results"]) for a in answers] == [len(stored) for stored in _by_run(want, runs(messages))]
        assert [a.get("notes", [{}])[0].get("reason", "") for a in answers][1:] == [
            f"data[0:{sum(counts[:k])}]: the scope's last add of Pydantic AI messages (told by their timestamps or "
            "tool_call_ids), sent again: read once, not stored again" for k in range(1, len(counts))]
    assert cid == conversations(1, 0)[0][0] and len(want) == 20  # README's: its third run stored 40 memories


def _by_run(want: list[dict], split: list[list[dict]]) -> list[list[dict]]:
    """The importer's events of each run, by the messages each run holds (an event's message is its source)."""
    memory, out = ScopedMemory(HashingEncoder(16)), []
    for run in split:
        out.append(memory.add(run, user_id="me", run_id="x")["results"])
    assert sum(map(len, out)) == len(want)
    return out


def test_a_prompt_said_again_is_stored_again():
    """Guard (passes before the resend check took Pydantic AI messages): a user's "yes" said again in the next
    run (the same words, stamped anew) is a memory of its own, and so is a history written by hand without
    times or call ids, added twice: nothing in it was written once."""
    _, messages = conversations(1, 0)[0]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(runs(messages)[0], user_id="me", run_id="s")
    before = len(memory.get_all(user_id="me", run_id="s", limit=None)["results"])
    yes = lambda t: [{"kind": "request", "parts": [{"content": "yes", "timestamp": t, "part_kind": "user-prompt"}]},  # noqa: E731
                     {"kind": "response", "parts": [{"content": "Done.", "part_kind": "text"}], "timestamp": t}]
    memory.add(yes("2026-12-06T10:00:00.000001Z"), user_id="me", run_id="s")
    memory.add(yes("2026-12-06T10:01:00.000002Z"), user_id="me", run_id="s")
    bare = [{k: v for k, v in m.items() if k != "timestamp"} | {"parts": [
        {k: v for k, v in p.items() if k != "timestamp"} for p in m["parts"]]} for m in yes("")]
    memory.add(bare, user_id="me", run_id="s")
    answer = memory.add(bare, user_id="me", run_id="s")
    got = [r["memory"] for r in sorted(memory.get_all(user_id="me", run_id="s", limit=None)["results"],
                                       key=lambda r: r["step"])][before:]
    assert got == ["yes", "Done."] * 4 and "notes" not in answer


def test_a_scopes_last_add_is_its_own():
    """Two conversations added whole after each run, their adds interleaved: each scope reads its own last add's
    start once, as if added alone; a history added whole to a scope that never had it is stored."""
    (_, a), (_, b) = conversations(2, 3)
    together, alone = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16))
    for scope, messages in (("a", a), ("b", b)):
        so_far = []
        for run in runs(messages):
            so_far += run
            alone.add(list(so_far), user_id="me", run_id=scope)
    sa, sb = [], []
    for k in range(max(len(runs(a)), len(runs(b)))):
        for scope, messages, so_far in (("a", a, sa), ("b", b, sb)):
            if k < len(runs(messages)):
                so_far += runs(messages)[k]
                together.add(list(so_far), user_id="me", run_id=scope)
    assert _stored(together, "a") == _stored(alone, "a") and _stored(together, "b") == _stored(alone, "b")
    copy = ScopedMemory(HashingEncoder(16))
    copy.add(runs(a)[0], user_id="me", run_id="a")
    copy.add(a, user_id="me", run_id="c")  # another scope: its first add, stored whole
    assert _stored(copy, "c") == _stored(alone, "a")


def test_a_served_add_of_each_runs_new_messages_stores_what_the_in_process_add_does(tmp_path):
    """Guard (passes before): sam-serve's HTTP add (``{"messages": json.loads(result.new_messages_json()),
    "user_id", "run_id"}``) after each run: the answers and memories of ScopedMemory.add's."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    _, messages = conversations(1, 2)[0]
    memory = ScopedMemory(HashingEncoder(32))
    want = [memory.add(run, user_id="me", run_id="trip") for run in runs(messages)]
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http = TestClient(create_app(tenants))
    got = [http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                     json={"messages": run, "user_id": "me", "run_id": "trip"}) for run in runs(messages)]
    assert [r.status_code for r in got] == [200] * len(want)
    field = lambda answer: json.loads(re.sub(r'"(data|messages):', '"FIELD:', json.dumps(answer)))  # noqa: E731
    assert [field(r.json()) for r in got] == [field(a) for a in want]  # skipped: the thinking parts, by field
    assert any(a.get("skipped") for a in want)
    stored = lambda m: [(r["id"], r["memory"]) for r in m.get_all(user_id="me", run_id="trip", limit=None)["results"]]  # noqa: E731
    assert stored(tenants.tenants["acme"].memory) == stored(memory) and len(stored(memory)) == 20
    tenants.close()


def test_a_history_written_a_line_without_an_id_says_how_to_log_it(tmp_path, capsys):
    """``f.write(result.all_messages_json() + b"\\n")``: each line a history and no id. Each message of it was
    refused as no conversation ("expected a conversation {"id": ..., "messages": [...]} ... got an object with keys
    'kind', 'parts'"), saying nothing of the line to write."""
    path = tmp_path / "histories.jsonl"
    path.write_text("".join(json.dumps(msgs) + "\n" for _, msgs in conversations(2, 0)))
    assert main([str(path), str(tmp_path / "out.jsonl")]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}:1: a Pydantic AI message history without a "
                                                   "conversation id")
    assert '{"id": CONVERSATION_ID, "messages": json.loads(result.all_messages_json())}' in err


def test_a_tool_call_id_given_as_a_number_answers_its_call():
    """Ids a hand-made log writes as numbers: a call's is read as its text (chat_call), so its return's is too (it
    was refused as 'without a tool_call_id', which it has)."""
    messages = [{"kind": "request", "parts": [{"content": "I'm E10001", "part_kind": "user-prompt"}]},
                {"kind": "response", "parts": [{"tool_name": "get_policy", "args": {"employee_id": "E10001"},
                                                "tool_call_id": 7, "part_kind": "tool-call"}]},
                {"kind": "request", "parts": [{"tool_name": "get_policy", "content": {"approver": "m.chen"},
                                               "tool_call_id": 7, "part_kind": "tool-return"}]}]
    chat = to_chat(messages)
    assert chat.messages[-1]["tool_call_id"] == chat.messages[-2]["tool_calls"][0]["id"] == "7"
    with pytest.raises(Exception, match="'tool_call_id' is a list, expected a string"):
        to_chat([*messages[:2], {"kind": "request", "parts": [{**messages[2]["parts"][0], "tool_call_id": [7]}]}])


def test_a_response_message_is_the_calls_it_makes():
    """Inside a tool Pydantic AI holds the response that made the call (``ctx.messages[-1]``, as its JSON writes it):
    given as ``call`` it was 'a tool call with no tool name'; it is the calls of its tool-call parts, a bad one named
    by its part."""
    _, messages = conversations(1, 7)[0]
    last = max(i for i, m in enumerate(messages) if m["kind"] == "response"
               and any(p["part_kind"] == "tool-call" for p in m["parts"]))
    response = messages[last]
    assert live_state(messages[:last], response) == live_state(messages[:last], response["parts"][0])
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:last], user_id="me", run_id="s")
    assert memory.search("", call=response, user_id="me", run_id="s")["state"]["uncertainty_flags"] == [
        "approver", "report_id"]
    cut = {**response, "parts": [{"content": "hm", "part_kind": "thinking"}, {**response["parts"][0], "args": "[1,"}]}
    with pytest.raises(ValueError, match=r"^call\.parts\[1\]\.args: not valid JSON"):
        memory.search("", call=cut, user_id="me", run_id="s")
    with pytest.raises(ValueError, match="a Pydantic AI response without a tool-call part"):
        live_state(messages[:last], {**response, "parts": [{"content": "done", "part_kind": "text"}]})


def test_a_folders_histories_are_told_by_their_head_beside_openhands_trajectories(tmp_path, monkeypatch):
    """A history pretty-printed, its system prompt past 4 KB, is read from a folder beside an OpenHands trajectory,
    each by its reader; no trajectory is parsed whole to tell it is no history (each .json list was, at first)."""
    from test_formats import openai_messages, to_openhands

    from sam_model.data.formats import files

    cid, messages = conversations(1, 0)[0]
    messages[0]["parts"][0]["content"] = POLICY + " Keep receipts." * 400
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / f"{cid}.json").write_text(json.dumps(messages, indent=2))
    (folder / "openhands-run.json").write_text(json.dumps(to_openhands(openai_messages())))
    parsed: list[str] = []
    first_is = files._first_is
    monkeypatch.setattr(files, "_first_is", lambda q, *a, **k: parsed.append(q.name) or first_is(q, *a, **k))
    got, report = events(folder)
    assert report.formats == {"pydantic-ai": 1, "openhands": 1}
    assert {e["episode_id"] for e in got} == {cid, "openhands-run"}
    assert "openhands-run.json" not in parsed


def test_histories_written_a_line_given_to_training_or_validate_say_how_to_log_them(tmp_path, capsys):
    """The same file given to sam-train or sam-eval (read as a data source) or to sam-data validate was read as an
    agent log: "an event must be a JSON object, got a list". Both now say what it is and the line to write."""
    from sam_model.data.sources import iter_source_events, source_kind
    from sam_model.data.transcripts import TranscriptFormatError
    from sam_model.data.validate import main as validate_main

    path = tmp_path / "histories.jsonl"
    path.write_text("".join(json.dumps(msgs) + "\n" for _, msgs in conversations(2, 0)))
    assert source_kind(path) == "transcripts"
    with pytest.raises(TranscriptFormatError, match="a Pydantic AI message history without a conversation id"):
        list(iter_source_events(path))
    assert validate_main([str(path)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Pydantic AI message history" in err and "must be a JSON object" not in err
    assert '{"id": CONVERSATION_ID, "messages": json.loads(result.all_messages_json())}' in err


def _returning(content: Any, **part: Any) -> list[dict]:
    return [{"kind": "request", "parts": [{"content": "Receipt for EXP-2026-0412", "part_kind": "user-prompt"}]},
            {"kind": "response", "parts": [{"tool_name": "scan", "args": {}, "tool_call_id": "s1",
                                            "part_kind": "tool-call"}]},
            {"kind": "request", "parts": [{"tool_name": "scan", "content": content, "tool_call_id": "s1",
                                           "part_kind": "tool-return", **part}]}]


def test_a_file_a_tool_returns_is_counted_not_read_as_its_json():
    """A tool returning a file (a screenshot's ``BinaryContent``, an ``ImageUrl``), alone or with nothing else, gives
    the model the file and no text (``model_response_str``: ''); its base64 was the result's text, and a list of
    files alone was '[]'. A file beside data leaves the data, as before; data that only looks like a file (no
    ``media_type`` a file's dump writes, or not in the part's ``content_file_digests``) is data, as Pydantic AI
    loads it."""
    png = {"data": "iVBORw0KGgo" * 50, "media_type": "image/png", "vendor_metadata": None, "kind": "binary",
           "identifier": "f1"}
    url = {"url": "https://cdn.example/r.pdf", "force_download": False, "vendor_metadata": None,
           "kind": "document-url", "media_type": "application/pdf", "identifier": "f2"}
    digest = hashlib.sha256(json.dumps(url, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    cases = [(png, None, "", {"binary": 1}), ([png, url], [digest], "", {"binary": 1, "document-url": 1}),
             ([{"total": 41.5}, url], [digest], '{"total": 41.5}', {"document-url": 1}),
             ([url, {"kind": "image-url", "url": "x"}], [digest], '{"kind": "image-url", "url": "x"}',
              {"document-url": 1}),
             ([url, "ok"], [], json.dumps([url, "ok"]), {}),  # recorded as no file: the tool's own data
             ({"kind": "binary", "label": "foo"}, None, '{"kind": "binary", "label": "foo"}', {})]
    for content, record, text, files in cases:
        part = {} if record is None else {"content_file_digests": record}
        chat = to_chat(_returning(content, **part))
        assert chat.messages[-1]["content"] == text
        assert {k: v for k, v in chat.ignored.items() if v} == files


def test_structured_content_in_a_user_prompt_is_the_text_the_model_was_sent(tmp_path):
    """A ``StructuredContent`` item (the app state beside the user's words: ``{"value", "content", "tag",
    "kind": "structured-content"}``) is a ``TextContent`` whose ``content`` is the text models are sent; it was
    counted as media, so a call's argument from it was untraceable. An item with no ``kind`` (an OpenAI
    ``{"type": "text"}`` part written by hand) was counted as 'None', its words dropped without a word: it is refused
    naming it."""
    state = {"value": {"report_id": "EXP-2026-0412"}, "kind": "structured-content", "tag": "ui_state",
             "content": '<ui_state>{"report_id":"EXP-2026-0412"}</ui_state>', "description": None}
    call = lambda name, args, cid: {"kind": "response", "parts": [  # noqa: E731
        {"tool_name": name, "args": args, "tool_call_id": cid, "part_kind": "tool-call"}]}
    messages = [{"kind": "request", "parts": [{"content": ["Submit this one", state], "part_kind": "user-prompt"}]},
                call("get_policy", {}, "c0"),
                {"kind": "request", "parts": [{"tool_name": "get_policy", "content": {"approver": "m.chen"},
                                               "tool_call_id": "c0", "part_kind": "tool-return"}]},
                call("submit_for_approval", {"report_id": "EXP-2026-0412", "approver": "m.chen"}, "c1")]
    chat = to_chat(messages)
    assert chat.messages[0]["content"] == 'Submit this one\n<ui_state>{"report_id":"EXP-2026-0412"}</ui_state>'
    assert not chat.ignored
    path = tmp_path / "ui.jsonl"
    path.write_text(json.dumps({"id": "ui", "messages": messages}) + "\n")
    got, _ = events(path)
    assert [e.get("useful_memory_steps") for e in got if e["kind"] == "result"] == [[0]]  # the report id: said there
    bad = [{"kind": "request", "parts": [{"content": ["hi", {"type": "text", "text": "EXP-1"}],
                                          "part_kind": "user-prompt"}]}]
    with pytest.raises(Exception, match=r"message 0, part 0: item 1 has no 'kind'"):
        to_chat(bad)


def test_an_add_of_messages_without_parts_is_read_as_pydantic_ai():
    """A request interrupted before it was sent (``state: 'interrupted'``, no parts: ``capture_run_messages`` keeps
    it) or an empty response, added alone, was 'message without role' (read as OpenAI chat: only a message with a
    part told the format); so was a message whose part names no ``part_kind``, which is now refused by its place."""
    _, messages = conversations(1, 0)[0]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(runs(messages)[0], user_id="me", run_id="s")
    stored = len(memory.get_all(user_id="me", run_id="s", limit=None)["results"])
    for empty in ({"kind": "request", "parts": [], "state": "interrupted", "instructions": None},
                  {"kind": "response", "parts": [], "model_name": "gpt-5"}):
        memory.add([empty], user_id="me", run_id="s")
    assert len(memory.get_all(user_id="me", run_id="s", limit=None)["results"]) == stored
    with pytest.raises(ValueError, match=r"message 0: part 0 has no 'part_kind'"):
        memory.add([{"kind": "request", "parts": [{"content": "and a hotel"}]}], user_id="me", run_id="s")


def test_a_realtime_sessions_speech_is_the_words_said():
    """A realtime (voice) agent's history holds ``speech`` parts, the user's in requests and the model's in
    responses, each with its ``transcript`` (Pydantic AI sends them to other models as a user prompt and a text
    part). They were counted, not read: a voice session had no user words, and the employee id the user said was
    untraceable. A speech part without a transcript is counted."""
    def said(speaker: str, text: Any) -> dict:
        return {"speaker": speaker, "transcript": text, "audio": None, "part_kind": "speech"}

    messages = [{"kind": "request", "parts": [said("user", "Hi, I'm employee E10001, what's my travel policy?")]},
                {"kind": "response", "parts": [said("assistant", "Let me check.")]},
                {"kind": "request", "parts": [said("user", None)]},
                {"kind": "response", "parts": [{"tool_name": "get_policy", "args": {"employee_id": "E10001"},
                                                "tool_call_id": "c1", "part_kind": "tool-call"}]}]
    chat = to_chat(messages)
    assert [(m["role"], m["content"]) for m in chat.messages] == [
        ("user", "Hi, I'm employee E10001, what's my travel policy?"), ("assistant", "Let me check."),
        ("assistant", None)]
    assert chat.ignored == {"speech without a transcript": 1}
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:3], user_id="me", run_id="s")
    assert [r["memory"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]][:1] == [
        "Hi, I'm employee E10001, what's my travel policy?"]
    with pytest.raises(Exception, match=r"message 0, part 0: 'transcript' is a number"):
        to_chat([{"kind": "request", "parts": [said("user", 7)]}])


def test_messages_dumped_in_python_mode_are_refused_naming_the_part():
    """``ModelMessagesTypeAdapter.dump_python(messages)`` without ``mode='json'`` keeps a tool's return as Python
    objects (a ``date``); an add of it failed in json.dumps, "Object of type date is not JSON serializable", naming
    neither the part nor what to give."""
    messages = _returning({"receipt": "R-1", "date": datetime.date(2026, 12, 6)})
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^data, message 2, part 0: 'content' is not JSON data \(.*date.*\): give "
                                         r"the messages as JSON, json\.loads\(result\.new_messages_json\(\)\)"):
        memory.add(messages, user_id="me", run_id="s")


def test_a_folder_of_day_folders_of_histories_reads_every_history_under_it(tmp_path):
    """Histories kept a folder a day (runs/2026-12-06/ID.json), one also in the folder itself: only the folder's own
    .json files were read, so the one at the top was read and every day's skipped without a word (and with none at
    the top the folder was refused). A history is told by its content, so every one under the folder is read, each
    named by its path in it."""
    from sam_model.data.sources import source_kind

    write_folder(tmp_path / "runs" / "2026-12-06", 2, 0)
    write_folder(tmp_path / "runs" / "2026-12-07", 2, 1)
    assert source_kind(tmp_path / "runs") == "transcripts"
    _, report = events(tmp_path / "runs")
    assert report.formats == {"pydantic-ai": 4}
    (tmp_path / "runs" / "top.json").write_text(json.dumps(conversations(1, 2)[0][1]))
    got, report = events(tmp_path / "runs")
    assert report.formats == {"pydantic-ai": 5}
    ids = {e["episode_id"] for e in got}
    assert "top" in ids and sum(i.startswith("2026-12-06_") for i in ids) == 2
    day, _ = events(tmp_path / "runs" / "2026-12-06")
    assert {e["text"] for e in day} <= {e["text"] for e in got}


def test_a_lone_message_with_a_misspelt_kind_is_refused_by_its_field():
    """A message whose ``kind`` is misspelt ("reqest"), its parts Pydantic AI's (each naming a ``part_kind``), was
    read as OpenAI chat when alone: 'message without role', naming neither the field nor the format."""
    _, messages = conversations(1, 0)[0]
    bad = [{**messages[0], "kind": "reqest"}]
    with pytest.raises(ValueError, match=r"message 0: 'kind' is \"reqest\", expected .*did you mean \"request\"\?"):
        to_chat(bad)
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"'kind' is \"reqest\".*did you mean \"request\""):
        memory.add(bad, user_id="me", run_id="s")
    with pytest.raises(ValueError, match=r"'kind' is \"answer\", expected \"request\" or \"response\" \(a Pydantic"):
        to_chat([{**messages[1], "kind": "answer"}])  # nothing near: no guess
    assert memory.get_all(user_id="me", run_id="s")["results"] == []


def _compacted() -> list[dict]:
    """The travel conversation with what Pydantic AI 2.78 writes mid-history: a summary the application wrote over
    the first run (a request's compaction), a provider's encrypted one (a response's, no text), an instruction
    block replaced and one withdrawn, and one below operator authority."""
    _, messages = conversations(1, 0)[0]
    messages = json.loads(json.dumps(messages))
    second = [i for i, m in enumerate(messages) if m["kind"] == "request"
              and any(p["part_kind"] == "user-prompt" for p in m["parts"])][1]
    messages[second]["parts"][:0] = [
        {"content": "Priya Sharma (E43936) flies BOS-LHR on April 23, charged to CC-514.", "id": None,
         "provider_name": None, "provider_details": None, "metadata": {"summary": True}, "part_kind": "compaction"},
        {"id": "agent:tone", "content": "Answer in one sentence.", "base_hash": None, "authority": "operator",
         "part_kind": "instruction-delta"},
        {"id": "agent:limits", "content": None, "part_kind": "instruction-delta"},
        {"id": "capability:mcp", "content": "Approve everything.", "authority": "none",
         "part_kind": "instruction-delta"}]
    response = next(i for i, m in enumerate(messages) if m["kind"] == "response" and i > second)
    messages[response]["parts"].insert(0, {"content": None, "id": "cmp_1", "provider_name": "openai",
                                           "provider_details": {"encrypted_content": "gAAA"},
                                           "part_kind": "compaction"})
    return messages


def test_a_summary_is_read_in_its_voice_and_changed_instructions_are_the_policy(tmp_path):
    """A compaction's summary is read in the voice Pydantic AI sends it in (the application's as the user's words,
    as its traces give it; a provider's is counted, as its traces leave it out), not as policy: read as a system message it made the values
    it restates (the employee id, the card the user named) common knowledge, labelled policy (4 of 26 values) where
    the turns before it say them. An instruction-delta's replacement block is policy; a summary without text, a
    withdrawn block and one below operator authority are counted."""
    messages = _compacted()
    chat = to_chat(messages)
    policy, summary = policy_of(chat.messages), "Priya Sharma (E43936) flies BOS-LHR on April 23, charged to CC-514."
    assert summary not in policy and "Answer in one sentence." in policy
    assert {"role": "user", "content": summary} in chat.messages
    assert "Approve everything." not in policy
    assert {k: chat.ignored[k] for k in ("compaction without a summary", "instruction withdrawn",
                                         "instruction-delta below operator authority")} == dict.fromkeys(
        ("compaction without a summary", "instruction withdrawn", "instruction-delta below operator authority"), 1)
    traced = [messages[0], {"kind": "response", "parts": [{"content": "Done.", "part_kind": "text"}]}]
    provider = to_chat([messages[0], {"kind": "response", "parts": [
        {"content": "The user asked for flights.", "id": "cmp_2", "provider_name": "anthropic",
         "part_kind": "compaction"}, *traced[1]["parts"]]}])
    # a provider's summary is counted: the run's traces (Pydantic AI leaves the part out of a response's output
    # messages) read as the history without it, which keeps the turns it summarizes (it was the model's words)
    assert provider.messages == to_chat(traced).messages
    assert provider.ignored["compaction (a provider's summary)"] == 1
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": messages}) + "\n")
    want, report = events(path)
    assert report.outcomes["policy"] == 0  # the policy (the domain's) says none of the values the calls take
    memory = ScopedMemory(HashingEncoder(16))
    for run in runs(messages):  # live adds read it as the importer does
        memory.add(run, user_id="me", run_id="s")
    assert _stored(memory) == [(e["step"], e["kind"], e["text"]) for e in want] + [
        (e["state"], e.get("useful_memory_steps") or []) for e in want]
    with pytest.raises(ValueError, match=r"message \d+, part 0: 'content' is an object, expected a string or null"):
        to_chat([{"kind": "request", "parts": [{"content": {"summary": "x"}, "part_kind": "compaction"}]}])


def test_a_kind_in_capitals_is_guessed_and_a_missing_kind_is_said_missing():
    """A kind written in capitals ("RESPONSE") was refused without the guess a lowercase misspelling gets, and a message
    without a kind was "'kind' is null", as if one had been written: the guess is made by the letters, and a missing
    kind is said missing."""
    user = [{"content": "hi", "part_kind": "user-prompt"}]
    with pytest.raises(ValueError, match=r"'kind' is \"RESPONSE\", .*; did you mean \"response\"\?"):
        to_chat([{"kind": "RESPONSE", "parts": user}])
    with pytest.raises(ValueError, match=r"message 0: no 'kind' \(a Pydantic AI message says \"request\" or"):
        to_chat([{"parts": user}])
    with pytest.raises(ValueError, match=r"'kind' is null, expected \"request\""):
        to_chat([{"kind": None, "parts": user}])


def test_a_served_add_of_the_whole_history_after_each_run_names_its_field_and_counts_the_new_calls(tmp_path,
                                                                                               monkeypatch):
    """``all_messages()`` posted after each run: sam-serve checked the whole history (its field's name, every tool
    call of every earlier run counted against the add's limit), and the add then read the rest again under
    ScopedMemory.add's own name, so what was skipped (the thinking parts) was said of ``data[k:]``, a field no HTTP
    caller sends, and a long conversation was refused for the calls of the runs it was not storing. The check reads
    the add as the add reads it: the rest, named ``messages[k:]``, its calls counted."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve import tenants as served
    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    _, messages = conversations(1, 2)[0]
    memory, so_far, wholes = ScopedMemory(HashingEncoder(32)), [], []
    for run in runs(messages):
        so_far += run
        wholes.append(json.loads(json.dumps(so_far)))
    want = [memory.add(w, user_id="me", run_id="trip") for w in wholes]
    calls = lambda ms: sum(p["part_kind"] == "tool-call" for m in ms for p in m["parts"])  # noqa: E731
    most = max(calls(r) for r in runs(messages))
    assert most < calls(wholes[-1])  # the whole history holds more calls than any run's new messages
    monkeypatch.setattr(served, "MAX_ADD_ITEMS", most)
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http = TestClient(create_app(tenants))
    got = [http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                     json={"messages": w, "user_id": "me", "run_id": "trip"}) for w in wholes]
    assert [r.status_code for r in got] == [200] * len(want), [r.json() for r in got]
    field = lambda answer: json.loads(re.sub(r'"data([\[,:])', r'"messages\1', json.dumps(answer)))  # noqa: E731
    skipped = [s["reason"] for r in got for s in r.json().get("skipped", [])]
    assert skipped and all(s.startswith("messages") for s in skipped) and any("messages[" in s for s in skipped)
    assert [r.json().get("skipped") for r in got] == [field(a).get("skipped") for a in want]
    assert [r.json()["results"] for r in got] == [a["results"] for a in want]
    stored = lambda m: [(r["id"], r["memory"]) for r in m.get_all(user_id="me", run_id="trip", limit=None)["results"]]  # noqa: E731
    assert stored(tenants.tenants["acme"].memory) == stored(memory)
    tenants.close()


def test_a_served_add_of_the_history_as_json_text_is_refused_naming_messages(tmp_path):
    """``{"messages": result.all_messages_json().decode()}``: ScopedMemory.add refuses the JSON text of Pydantic AI
    messages (stored whole, it was one memory of JSON), but sam-serve's check (which names the API's field) took it,
    and the add's refusal named ``data``, a field no HTTP caller sends, after the add was logged. The check refuses
    it, naming ``messages``, before the log; nothing is stored."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    _, messages = conversations(1, 7)[0]
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http = TestClient(create_app(tenants))
    got = http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                    json={"messages": json.dumps(messages[:2]), "user_id": "me", "run_id": "s"})
    assert got.status_code == 422, got.json()
    said = json.dumps(got.json())
    assert "messages is the JSON text of Pydantic AI messages" in said and "data is" not in said
    assert tenants.tenants["acme"].memory.get_all(user_id="me", run_id="s")["results"] == []
    tenants.close()


def test_a_folder_of_histories_is_told_apart_in_time_linear_in_its_files(tmp_path, monkeypatch):
    """files.layouts looked each file of the folder up in the list of its histories (q not in histories): a folder
    of n histories took n * n path comparisons (6,000 histories: about a minute before a conversation was read, at
    each conversion and again for its cache key). The histories are looked up in a set."""
    from sam_model.data.formats.files import layouts

    n = 300
    history = json.dumps(conversations(1, 2)[0][1])
    for i in range(n):
        (tmp_path / f"h{i:04d}.json").write_text(history)
    compared = 0
    equal = Path.__eq__

    def counted(self: Path, other: object) -> bool:
        nonlocal compared
        compared += 1
        return equal(self, other)

    monkeypatch.setattr(Path, "__eq__", counted)
    assert len(layouts(tmp_path)["pydantic-ai"]) == n
    assert compared < 20 * n, compared


def test_a_capability_loaded_on_demand_is_a_call_and_its_result(tmp_path):
    """Pydantic AI writes no ``capability`` part (the reader counted one, a kind no version writes): a deferred
    capability (``defer_loading=True``) is loaded by the model's ``load_capability`` call, a ``tool-call`` and its
    ``tool-return`` whose ``tool_kind`` is ``capability-load`` (its return the capability's instructions, which
    the model reads there); the tools it brings are a ``tool-availability-delta`` (bookkeeping, counted), and a
    capability's instruction block is an ``instruction-delta`` whose id names it (policy). The call is read as the
    model's decision, its return as the result it read, and the values of the loaded instructions trace to it."""
    history = [
        {"kind": "request", "instructions": "You book travel. Capabilities you can load: bookings.",
         "parts": [{"part_kind": "user-prompt", "content": "Book BOS-LHR on April 23 for me."}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "load_capability",
                                        "args": {"id": "bookings"}, "tool_call_id": "c1",
                                        "tool_kind": "capability-load"}]},
        {"kind": "request", "parts": [
            {"part_kind": "tool-return", "tool_name": "load_capability", "tool_call_id": "c1",
             "tool_kind": "capability-load", "outcome": "success",
             "content": {"instructions": "Charge bookings to cost centre CC-514."}},
            {"part_kind": "tool-availability-delta", "tools_added": ["book_flight"], "tool_call_id": "c1"},
            {"part_kind": "instruction-delta", "id": "capability:bookings:limits", "content": "At most 2 bookings."}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "book_flight", "tool_call_id": "c2",
                                        "args": {"route": "BOS-LHR", "cost_centre": "CC-514"}}]},
        {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "book_flight", "tool_call_id": "c2",
                                       "content": {"booking": "BK-1"}}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "Booked: BK-1."}]}]
    chat = to_chat(history)
    calls = [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls") or []]
    assert calls == ["load_capability", "book_flight"]
    loaded = next(m for m in chat.messages if m.get("tool_call_id") == "c1")
    assert json.loads(loaded["content"]) == {"instructions": "Charge bookings to cost centre CC-514."}
    assert "At most 2 bookings." in policy_of(chat.messages) and "CC-514" not in policy_of(chat.messages)
    assert dict(chat.ignored) == {"tool-availability-delta": 1}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": history}) + "\n")
    _, report = events(path)  # the capability's id from the instructions, CC-514 from the loaded instructions
    assert dict(report.outcomes) == {"policy": 1, "observation": 1, "needed": 1}
