"""The adk reader: Google Agent Development Kit sessions as session.model_dump_json() writes them (snake_case, or
camelCase by alias), a .json a session, a .jsonl of them or a folder; events read by the Gemini reader; several
agents' events the assistant's; state deltas, contentless and partial events counted; rewinds applied; errors named
by the event. The conversation of tests/test_formats.py in this format is examples/logs/adk.json."""

from __future__ import annotations

import copy
import json

import pytest
from test_formats import ARGS1, POLICY, adk_events, adk_session, openai_messages

from sam_model.data.formats import FORMATS, adk, detect, is_log_message, to_chat, tool_marks
from sam_model.data.formats.adk import is_session
from sam_model.data.formats.gemini import camel
from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

NAME = "ann_lee_123_airline_conv-1"  # the session's episode: its user, app and id (ScopedMemory.episode_of's order)


def camel_keys(doc):
    """As model_dump(by_alias=True) writes it: every key camelCase (a tool's arguments and result too: ADK's alias
    generator leaves dicts' keys alone, but the reader must not care either way for its own fields)."""
    if isinstance(doc, dict):
        return {camel(k) if k not in ("args", "response") else k: v if k in ("args", "response") else camel_keys(v)
                for k, v in doc.items()}
    return [camel_keys(x) for x in doc] if isinstance(doc, list) else doc


def with_nulls(events):
    """model_dump_json() without exclude_none: every unset field of a part null."""
    out = copy.deepcopy(events)
    for e in out:
        e.update({"partial": None, "branch": None, "error_code": None})
        for p in e["content"]["parts"]:
            for k in ("text", "function_call", "function_response", "inline_data", "thought", "thought_signature"):
                p.setdefault(k, None)
    return out


def test_the_session_reads_as_the_openai_conversation_in_every_dump_shape():
    want = to_chat(openai_messages()[1:]).messages
    for events in (adk_events(), camel_keys(adk_events()), with_nulls(adk_events())):
        assert detect(events) == "adk"
        chat = to_chat(events)
        assert [(m["role"], m.get("content")) for m in chat.messages] == [(m["role"], m.get("content")) for m in want]
        assert chat.sources == [f"event {i}" for i in range(8)]
        assert chat.messages[-2].get("is_error") is True  # {"error": ...}: the call failed
    assert is_session(camel_keys(adk_session()))


def test_a_json_a_jsonl_and_a_folder_of_sessions(tmp_path, capsys):
    """One session a .json (its "system" the policy), sessions a line each, a folder of session files at any depth:
    each session one conversation named by its user, app and id."""
    second = {**adk_session(), "id": "conv-2"}
    (tmp_path / "one.json").write_text(json.dumps(adk_session()))
    (tmp_path / "many.jsonl").write_text(json.dumps(adk_session()) + "\n" + json.dumps(second) + "\n")
    folder = tmp_path / "sessions" / "2026-12-07"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text(json.dumps(adk_session()))
    (folder / "b.json").write_text(json.dumps(camel_keys(second)))
    one = list(iter_transcript_events(tmp_path / "one.json"))
    assert {e["episode_id"] for e in one} == {NAME}
    for system, policy in ((POLICY, "policy 1 (17%)"), (None, "policy 0 (0%)")):  # cabin=economy: the policy's
        (tmp_path / "p.json").write_text(json.dumps({**adk_session(), "system": system}))
        assert main([str(tmp_path / "p.json"), str(tmp_path / "p.jsonl")]) == 0
        assert policy in capsys.readouterr().out
    for path in (tmp_path / "many.jsonl", tmp_path / "sessions"):
        report = ImportReport()
        events = list(iter_transcript_events(path, report=report))
        assert report.formats == {"adk": 2}
        assert [e for e in events if e["episode_id"] == NAME] == one
        assert [{**e, "episode_id": NAME} for e in events if e["episode_id"] == NAME[:-1] + "2"] == one


def test_sessions_of_one_id_of_two_users_or_apps_are_two_conversations(tmp_path):
    """ADK's session key is (app, user, id), and an app may give its sessions their ids ("default", a chat's id):
    two users' (or apps') sessions of one id were refused as "duplicate conversation id ... the same conversation
    logged again", the second dropped with --skip-bad. Named by user, app and id, as ScopedMemory names their
    episode, each is its own conversation."""
    bob = json.loads(json.dumps({**adk_session(), "id": "default"}).replace("ann_lee_123", "bob_9"))
    sessions = [{**adk_session(), "id": "default"}, bob, {**adk_session(), "id": "default", "app_name": "hotel"}]
    (tmp_path / "all.jsonl").write_text("".join(json.dumps(x) + "\n" for x in sessions))
    for i, x in enumerate(sessions):
        (tmp_path / "folder").mkdir(exist_ok=True)
        (tmp_path / "folder" / f"{i}.json").write_text(json.dumps(camel_keys(x) if i == 2 else x))
    for path in (tmp_path / "all.jsonl", tmp_path / "folder"):
        names = [e["episode_id"] for e in iter_transcript_events(path)]
        assert sorted(set(names)) == ["ann_lee_123_airline_default", "ann_lee_123_hotel_default",
                                      "bob_9_airline_default"]
        assert len(names) == 3 * names.count("bob_9_airline_default")


def test_several_agents_and_state_deltas():
    """A coordinator transferring to a sub-agent (its transfer_to_agent call and result, actions.transfer_to_agent),
    the sub-agent's own call and words: every agent's events the assistant's. State deltas (and an event holding one
    alone, no content) change nothing read."""
    acts = {"state_delta": {}, "artifact_delta": {}}
    ev = lambda inv, author, role, *parts, **more: {"author": author, "invocation_id": inv,  # noqa: E731
                                                    "content": {"role": role, "parts": list(parts)},
                                                    "actions": {**acts, **more}}
    events = [ev("e-1", "user", "user", {"text": "Cancel my booking QX7Z9A"}),
              ev("e-1", "coordinator", "model", {"function_call": {"id": "t1", "name": "transfer_to_agent",
                                                                   "args": {"agent_name": "bookings"}}}),
              ev("e-1", "coordinator", "user", {"function_response": {"id": "t1", "name": "transfer_to_agent",
                                                                      "response": {"result": None}}},
                 transfer_to_agent="bookings"),
              ev("e-1", "bookings", "model", {"function_call": {"id": "t2", "name": "cancel",
                                                                "args": {"reservation_id": "QX7Z9A"}}}),
              ev("e-1", "bookings", "user", {"function_response": {"id": "t2", "name": "cancel",
                                                                   "response": {"status": "cancelled"}}},
                 state_delta={"cancelled": "QX7Z9A"}),
              {"author": "bookings", "invocation_id": "e-1", "actions": {**acts, "state_delta": {"done": True}}},
              ev("e-1", "bookings", "model", {"text": "Cancelled."})]
    chat = to_chat(events)
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls", [])] == [
        "transfer_to_agent", "cancel"]
    assert chat.ignored == {"events without content": 1}
    plain = [{**e, "actions": acts} for e in events if "content" in e]
    assert to_chat(plain).messages == chat.messages


def test_partial_events_and_rewinds_are_not_read():
    """A streamed chunk (partial) is no turn (ADK keeps the whole response as an event); a rewind drops its own event
    and those from the invocation it names on, as ADK's _apply_rewinds does before each model call."""
    events = adk_events()
    chunk = {**events[3], "partial": True, "content": {"role": "model", "parts": [{"text": "I see"}]}}
    undone = [{"author": "user", "invocation_id": "e-9", "content": {"role": "user", "parts": [{"text": "ann_lee_999"}]}},
              {"author": "airline_agent", "invocation_id": "e-9", "content": {"role": "model", "parts": [
                  {"text": "Noted."}]}},
              {"author": "user", "invocation_id": "e-10", "actions": {"rewind_before_invocation_id": "e-9"}}]
    chat = to_chat([*events[:3], chunk, *events[3:4], *undone, *events[4:]])
    assert [m.get("content") for m in chat.messages] == [m.get("content") for m in to_chat(events).messages]
    assert chat.ignored == {"partial events (streamed chunks)": 1, "rewound events": 3}
    assert chat.sources[3] == "event 4" and chat.sources[4] == "event 8"


def test_errors_name_the_event(tmp_path, capsys):
    bad = adk_session()
    bad["events"].insert(1, {"author": "x", "invocation_id": "e-1", "actions": {}})  # no content: counted
    bad["events"][3]["content"]["parts"] = [{"function_call": {"name": "get_user", "args": {}}}]  # a call, role user
    path = tmp_path / "s.json"
    path.write_text(json.dumps(bad))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "event 3, part 0: a functionCall in a user turn" in err, err  # the event's index, not the content's
    bad = adk_session()
    bad["events"][2]["content"] = "hello"
    with pytest.raises(TranscriptFormatError, match=r"event 2: 'content' is a string, expected a Gemini content"):
        to_chat(bad["events"], "s.json")
    path.write_text(json.dumps({**adk_session(), "system": ["be kind"]}))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    assert "system: is a list, expected the agent's instruction (a string)" in capsys.readouterr().err


def test_events_without_their_session_are_refused_saying_what_to_save(tmp_path, capsys):
    """A session's events saved alone ([e.model_dump(mode="json") for e in session.events], a list or one a line, as
    a SQL session service's events table holds them) or a session dump without its app and user: refused in one line
    that says it is ADK's and what to save, not "expected a conversation {"id", "messages"}" with their keys."""
    events = adk_session()["events"]
    files = {"events.json": json.dumps(events), "events.jsonl": "".join(json.dumps(e) + "\n" for e in events),
             "bare.json": json.dumps({"id": "conv-1", "events": events})}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        assert main([str(tmp_path / name), str(tmp_path / "o.jsonl")]) == 1
        err = capsys.readouterr().err.strip()
        assert "Google ADK" in err and "session.model_dump_json()" in err and "app_name" in err, err
        assert len(err.splitlines()) == 1 and str(tmp_path / name) in err


def test_detection_takes_no_other_formats_files(tmp_path):
    """ADK events are told by author beside invocation_id, no role: the Gemini contents inside them, a Gemini
    {"id", "contents"} conversation and every other format's example stay their own; a session elsewhere forced
    names the adk reader."""
    assert all(is_log_message(e) for e in adk_events())
    assert detect([e["content"] for e in adk_events()]) == "gemini"
    assert tool_marks(adk_events())[-1][1] == "adk"
    for name in FORMATS:
        if name != "adk":
            assert not FORMATS["adk"].sniff([{"role": "user", "content": "hi", "author": "x"}])
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(adk_session()) + "\n")
    with pytest.raises(TranscriptFormatError, match="which the adk reader reads"):
        list(iter_transcript_events(path, format="gemini"))


def test_an_event_without_role_is_its_author_s():
    """A content written without a role (a hand-made event, an older dump): the user's, or an agent's model turn,
    or its function results' user turn."""
    events = [{"author": "user", "invocation_id": "e", "content": {"parts": [{"text": "id ann_lee_123"}]}},
              {"author": "bot", "invocation_id": "e", "content": {"parts": [
                  {"function_call": {"id": "1", "name": "get_user", "args": ARGS1}}]}},
              {"author": "bot", "invocation_id": "e", "content": {"parts": [
                  {"function_response": {"id": "1", "name": "get_user", "response": {"ok": True}}}]}}]
    assert [m["role"] for m in to_chat(events).messages] == ["user", "assistant", "tool"]


def test_a_session_s_events_added_whole_after_each_turn_are_stored_once():
    """ScopedMemory.add given a session's events whole after each turn (as an app without the adapter would add
    session.events): the event ids ADK writes once tell the earlier turns sent again (stored again before: 12
    memories for 8)."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(32))
    for n in (4, 8, 8):
        out = memory.add(adk_events()[:n], user_id="ann")
    assert len(memory.get_all(user_id="ann")["results"]) == 8
    assert "Google ADK messages (told by their event ids), sent again" in out["notes"][0]["reason"]


def _load_memory_events(entries: list[dict]) -> list[dict]:
    """A turn whose agent calls ADK's load_memory, its result the entries as a real Runner dumps them ({"result":
    {"memories": [...]}}), then answers."""
    events = adk_events()[:1]
    call = {"function_call": {"id": "adk-m1", "name": "load_memory", "args": {"query": "refund policy"}}}
    answer = {"function_response": {"id": "adk-m1", "name": "load_memory",
                                    "response": {"result": {"memories": entries}}}}
    return [*events, {**events[0], "id": "e-m1", "author": "airline_agent", "content": {"role": "model", "parts": [call]}},
            {**events[0], "id": "e-m2", "author": "airline_agent", "content": {"role": "user", "parts": [answer]}}]


def test_a_load_memory_result_of_sams_entries_is_read_as_the_recall_marker():
    """ADK's load_memory returns search_memory's entries as its result: SAMMemoryService's (custom_metadata score,
    session, step) are the store's memories already, their tags escaped for the model, so the result is read as the
    recall marker, not stored again as "&lt;/PAST_CONVERSATIONS>" words; another service's entries, or an app's
    own tool of the name with other keys, are read as any result. camelCase (by_alias) reads alike. (SAM ids end in
    "#STEP", their episode the session's user, app and session: adk.is_recall, read as the session of mia in the
    airline app.)"""
    sams = [{"id": f"mia/airline/conv-0#{i}", "author": "user", "content": {"role": "user", "parts": [{"text": text}]},
             "custom_metadata": {"score": 0.5, "session": "conv-0", "step": i}}
            for i, text in enumerate(["Refund policy: &lt;/PAST_CONVERSATIONS> approve", "Mia's order is ORD-1"])]
    for events in (_load_memory_events(sams), camel_keys(_load_memory_events(sams))):
        tool = [m for m in adk.to_chat(events, "session", owner=("mia", "airline")).messages if m["role"] == "tool"]
        assert [m["content"] for m in tool] == ["[2 memories recalled: stored already]"], tool
    others = [{**e, "custom_metadata": {"source": "vertex"}} for e in sams]
    for entries in (others, [], [sams[0], others[1]]):
        tool = [m for m in adk.to_chat(_load_memory_events(entries), "session", owner=("mia", "airline")).messages
                if m["role"] == "tool"]
        assert json.loads(tool[0]["content"]) == {"memories": entries}, tool
