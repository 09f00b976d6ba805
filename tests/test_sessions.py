"""Session stores, a conversation kept as one file per message or event, read as the framework reads them back.

Strands Agents: the layout strands/session/file_session_manager.py writes (``session_<id>/session.json``,
``agents/agent_<id>/agent.json``, ``agents/agent_<id>/messages/message_<N>.json``, each written by ``_write_file``
as ``json.dump(indent=2)``) and its message files as strands/types/session.py ``SessionMessage.to_dict`` makes them
(``message``, ``message_id``, ``redact_message``, ``created_at``, ``updated_at``); ``list_messages`` orders them
by N and ``to_message`` sends ``redact_message`` where it is set. OpenHands 0.x: ``sessions/<sid>/events/<id>.json``
as openhands/events/stream.py ``add_event`` writes ``event_to_dict`` under openhands/storage/locations.py's
``get_conversation_event_filename``, with its ``event_cache/<start>-<end>.json`` pages
(openhands/events/event_store.py), ``metadata.json`` and ``agent_state.pkl`` beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_openhands import codeact_run

from sam_model.data.formats import main as formats_main
from sam_model.data.sources import materialise, source_kind
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.io import SAMFileError

CARD = "my card is 4111 1111 1111 1111, change QX7Z9A to HAT300"
REDACTED = "[User input redacted.]"  # what Strands' guardrail redaction writes in place of the user's input


def text(role: str, words: str) -> dict:
    return {"role": role, "content": [{"text": words}]}


def call(i: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": f"t{i}", "name": name, "input": args}}]}


def result(i: int, out) -> dict:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": f"t{i}", "content": [{"json": out}],
                                                        "status": "success"}}]}


def strands_messages(user: str = "ann_lee_123") -> list[dict]:
    """14 Converse messages (message_10 to message_13 sort before message_2 by name); message 4 is redacted."""
    return [text("user", f"Hi, I am {user}."), call(1, "get_user", {"user_id": user}),
            result(1, {"reservations": ["QX7Z9A"]}), text("assistant", "I see QX7Z9A. What can I do?"),
            text("user", CARD), call(2, "get_reservation", {"reservation_id": "QX7Z9A"}),
            result(2, {"flights": ["HAT170"], "cabin": "economy"}), text("assistant", "Change HAT170 to HAT300?"),
            text("user", "yes"), call(3, "search_flight", {"flight": "HAT300"}), result(3, {"seats": 5}),
            call(4, "update_reservation", {"reservation_id": "QX7Z9A", "flight": "HAT300", "cabin": "economy"}),
            result(4, {"ok": True}), text("assistant", "Done.")]


def write_message(agent: Path, n: int, message: dict, redacted: dict | None = None) -> Path:
    path = agent / "messages" / f"message_{n}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"message": message, "message_id": n, "redact_message": redacted,
                                "created_at": "2025-07-01T10:00:00+00:00", "updated_at": "2025-07-01T10:00:00+00:00"},
                               indent=2))
    return path


def write_agent(store: Path, session: str, agent: str, messages: list[dict]) -> Path:
    folder = store / f"session_{session}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "session.json").write_text(json.dumps({"session_id": session, "session_type": "AGENT"}))
    agent_dir = folder / "agents" / f"agent_{agent}"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "agent.json").write_text(json.dumps({
        "agent_id": agent, "state": {}, "conversation_manager_state": {
            "__name__": "SlidingWindowConversationManager", "removed_message_count": 4}, "_internal_state": {}}))
    for n, m in enumerate(messages):
        write_message(agent_dir, n, m, text("user", REDACTED) if CARD in json.dumps(m) else None)
    return agent_dir


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A FileSessionManager storage_dir: session s1 with two agents, session s2 with one."""
    root = tmp_path / "sessions"
    write_agent(root, "s1", "default", strands_messages())
    write_agent(root, "s1", "helper", strands_messages("bo_chen_9"))
    write_agent(root, "s2", "default", strands_messages("cy_diaz_4"))
    return root


def as_sent(messages: list[dict]) -> list[dict]:
    """The messages as the SDK restores and sends them: redacted ones replaced."""
    return [text("user", REDACTED) if CARD in json.dumps(m) else m for m in messages]


def test_a_strands_session_store_reads_as_the_sdk_restores_its_messages(store, tmp_path):
    """Each agent of each session is one conversation, its messages in message_id order (message_10 after
    message_9) with the redacted one as the SDK sends it, the same events as a Converse log of those messages."""
    assert source_kind(store) == "transcripts"
    events = list(iter_transcript_events(store))
    assert {e["episode_id"]: e["meta"]["group"] for e in events} == {
        "s1_default": "s1", "s1_helper": "s1", "s2_default": "s2"}
    log = tmp_path / "converse.jsonl"
    log.write_text(json.dumps({"id": "s1/default", "group": "s1", "messages": as_sent(strands_messages())}) + "\n")
    want = list(iter_transcript_events(log))
    assert [e for e in events if e["episode_id"] == "s1_default"] == want
    assert any(e.get("useful_memory_steps") for e in want)  # a value traced across files (message_2 -> message_11)
    assert "4111" not in json.dumps(events) and REDACTED in json.dumps(events)
    session = store / "session_s1"  # one session's folder, and one agent's, read alike
    assert [e for e in iter_transcript_events(session) if e["episode_id"] == "s1_default"] == want
    assert list(iter_transcript_events(session / "agents" / "agent_default")) == want
    calls = [e["text"].split("(")[0] for e in want if e["kind"] == "action"]
    assert calls == ["CALL get_user", "CALL get_reservation", "CALL search_flight", "CALL update_reservation"]


@pytest.mark.parametrize("content, says", [
    ("{\"message\": {\"role\": \"user\", ", "message_3.json: invalid JSON"),
    (json.dumps(text("user", "hi")), "message_3.json: not a Strands session message: expected {\"message\""),
    (json.dumps({"message": text("user", "hi"), "message_id": 3, "redact_message": "x"}),
     "message_3.json: 'redact_message' is a string, expected a message"),
    ("", "message_3.json: empty file"),
])
def test_a_bad_message_file_is_one_line_naming_it_and_skip_bad_skips_its_conversation(store, tmp_path, capsys,
                                                                                         content, says):
    bad = store / "session_s1" / "agents" / "agent_helper" / "messages" / "message_3.json"
    bad.write_text(content)
    out = tmp_path / "o.jsonl"
    assert main([str(store), str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and says in err and str(bad) in err, err
    assert main([str(store), str(out), "--skip-bad"]) == 0
    assert "skipped 1 bad conversations" in capsys.readouterr().out
    kept = {json.loads(line)["episode_id"] for line in out.read_text().splitlines()}
    assert kept == {"s1_default", "s2_default"}


def test_the_cache_reconverts_when_a_message_is_added_to_a_session(store, tmp_path):
    cache = tmp_path / "cache"
    first = materialise(store, cache_dir=cache)
    assert materialise(store, cache_dir=cache) == first
    store_time = store.stat().st_mtime_ns
    write_message(store / "session_s2" / "agents" / "agent_default", 14, text("user", "And a seat by the window?"))
    assert store.stat().st_mtime_ns == store_time  # the folder's own time misses it
    second = materialise(store, cache_dir=cache)
    assert second != first and "And a seat by the window?" in second.read_text()
    assert "And a seat by the window?" not in first.read_text()


def openhands_session(root: Path, sid: str) -> Path:
    """An OpenHands 0.x file store's session: one event a file, its cache page, metadata and pickled state."""
    folder = root / "sessions" / sid
    (folder / "events").mkdir(parents=True)
    events = codeact_run()
    for e in events:
        (folder / "events" / f"{e['id']}.json").write_text(json.dumps(e))
    (folder / "event_cache").mkdir()
    (folder / "event_cache" / "0-25.json").write_text(json.dumps(events))  # the same events again
    (folder / "metadata.json").write_text(json.dumps({"conversation_id": sid, "title": "fix tinyparse"}))
    (folder / "agent_state.pkl").write_bytes(b"\x80\x04not to be loaded")
    return folder


def test_an_openhands_session_store_reads_its_event_files_in_id_order(tmp_path, capsys):
    session = openhands_session(tmp_path / "store", "a1b2c3")
    assert len(list((session / "events").iterdir())) > 10  # 10.json sorts before 2.json by name
    trajectory = tmp_path / "a1b2c3.json"  # the same events saved as one trajectory
    trajectory.write_text(json.dumps(codeact_run()))
    want = list(iter_transcript_events(trajectory))
    for given in (tmp_path / "store" / "sessions", session, session / "events"):
        assert source_kind(given) == "transcripts"
        report = ImportReport()
        assert list(iter_transcript_events(given, report=report)) == want, given
        assert report.formats == {"openhands": 1}
    (session / "events" / "7.json").write_bytes(b"{\"id\": 7, \xff}")
    assert main([str(session), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{session / 'events' / '7.json'}: not UTF-8" in err, err


def test_the_session_folders_are_listed_where_the_inputs_are(capsys):
    assert formats_main([]) == 0
    listed = capsys.readouterr().out
    assert "session_<id>/agents/agent_<id>/messages/message_<N>.json" in listed
    assert "sessions/<sid>/events/<id>.json" in listed
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "Strands Agents session folder" in " ".join(capsys.readouterr().out.split())


def test_a_folder_of_neither_names_the_session_stores_it_looked_for(tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / "agents" / "agent_x" / "messages").mkdir(parents=True)  # a session that stored no message yet
    assert main([str(empty), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "session stores (Strands Agents, OpenHands)" in err


def test_a_strands_session_of_only_multi_agent_state_says_so(tmp_path, capsys):
    """A Graph's or Swarm's session keeps its own progress (multi_agents/multi_agent_<id>/multi_agent.json) and no
    agent's messages: its folder was refused as 'session.json: not an OpenHands trajectory', the store as a folder
    of nothing known. Each now says what it holds, to train.py too; beside an agent's session, the agent is read."""
    session = tmp_path / "store" / "session_s1"
    state = session / "multi_agents" / "multi_agent_graph1"
    state.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps({"session_id": "s1", "session_type": "AGENT"}))
    (state / "multi_agent.json").write_text(json.dumps({"id": "graph1", "type": "graph", "status": "completed",
                                                        "completed_nodes": ["research"]}))
    for given in (session, tmp_path / "store", state):
        assert main([str(given), str(tmp_path / "o.jsonl")]) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"{given} holds only Strands Agents multi-agent state" in err, err
        assert "no agent messages" in err and "agents/agent_<id>/messages/message_<N>.json" in err, err
        assert "OpenHands trajectory" not in err, err
        with pytest.raises(SAMFileError, match="holds only Strands Agents multi-agent state"):
            source_kind(given)
    write_agent(tmp_path / "store", "s2", "default", strands_messages())
    assert {e["episode_id"] for e in iter_transcript_events(tmp_path / "store")} == {"s2_default"}
