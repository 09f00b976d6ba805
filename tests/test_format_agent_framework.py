"""The agent-framework reader: Microsoft Agent Framework sessions as session.to_dict() (or a FileSessionStore)
writes them, a .json a session, a .jsonl of them or a folder; a call that raised read as failed; malformed input
named by file, line and field. Sessions made by the real package (agent-framework-core, a scripted chat client:
tests/maf_fake.py) where it is installed. The conversation of tests/test_formats.py in this format is
examples/logs/agent-framework.json."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from test_formats import agent_framework_messages, agent_framework_session, openai_messages

from sam_model.data.formats import detect, to_chat, tool_marks
from sam_model.data.formats.base import Conversation
from sam_model.data.formats.files import conversations
from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

needs_maf = pytest.mark.skipif(importlib.util.find_spec("agent_framework") is None,
                               reason="agent-framework-core is not installed (run with its environment)")


def _results(events: list[dict]) -> list[str]:
    return [e["state"]["last_action_result"] for e in events if e["kind"] == "result"]


def test_the_session_reads_as_the_openai_conversation():
    want = to_chat(openai_messages()[1:]).messages
    chat = to_chat(agent_framework_messages())
    assert detect(agent_framework_messages()) == "agent-framework"
    assert [(m["role"], m.get("content")) for m in chat.messages] == [(m["role"], m.get("content")) for m in want]
    assert chat.messages[-2].get("is_error") is True  # the exception the framework marked: the call failed
    assert tool_marks(agent_framework_messages())[-1][1] == "agent-framework"


def test_a_result_with_an_exception_is_failed_whatever_its_words(tmp_path):
    """A tool that raised: the framework marks the result's exception (FunctionInvocationError) and gives the model
    words of its own, which need not say so; without the mark the same words are a result like any."""
    session = agent_framework_session()
    result = session["state"]["in_memory"]["messages"][6]["contents"][0]
    result["result"] = result["items"][0]["text"] = "Cancelled."
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session))
    assert _results(list(iter_transcript_events(path)))[-1].startswith("cancel: error")
    del result["exception"]
    path.write_text(json.dumps(session))
    assert _results(list(iter_transcript_events(path)))[-1] == "cancel: ok"


def test_a_json_a_jsonl_and_a_folder_of_sessions(tmp_path):
    second = {**agent_framework_session(), "session_id": "conv-2"}
    (tmp_path / "one.json").write_text(json.dumps(agent_framework_session()))
    (tmp_path / "many.jsonl").write_text(json.dumps(agent_framework_session()) + "\n" + json.dumps(second) + "\n")
    folder = tmp_path / "store"  # a FileSessionStore's folder: <session_id>.json each, a "version" beside
    folder.mkdir()
    for s in (agent_framework_session(), second):
        (folder / f"{s['session_id']}.json").write_text(json.dumps({**s, "version": "1.0"}))
    for path, ids in (("one.json", {"conv-1"}), ("many.jsonl", {"conv-1", "conv-2"}), ("store", {"conv-1", "conv-2"})):
        report = ImportReport()
        events = list(iter_transcript_events(tmp_path / path, report=report))
        assert {e["episode_id"] for e in events} == ids and report.formats == {"agent-framework": len(ids)}, path


@pytest.mark.parametrize("change, where, says", [
    (lambda s: s["state"]["in_memory"]["messages"][2].update(contents="x"), "message 2", "'contents' is a string"),
    (lambda s: s["state"]["in_memory"]["messages"][2]["contents"][0].pop("call_id"), "message 2, content 0",
     "without a 'call_id'"),
    (lambda s: s["state"]["in_memory"]["messages"][1]["contents"][1].update(name=None), "message 1, content 1",
     "without a name"),
    (lambda s: s.update(state={"in_memory": {}}, service_session_id="conv_abc"), "state", "the service keeps"),
    (lambda s: s.update(instructions=["x"]), "instructions", "expected the agent's instructions"),
])
def test_malformed_sessions_are_named_by_file_line_and_field(tmp_path, capsys, change, where, says):
    session = copy.deepcopy(agent_framework_session())
    change(session)
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(session) + "\n")
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    assert f"{path}:1" in str(err.value) and where in str(err.value) and says in str(err.value)
    assert main([str(path), str(tmp_path / "out.jsonl")]) == 1
    assert len([x for x in capsys.readouterr().err.splitlines() if says in x]) >= 1


async def _real_session(tmp_path):
    """A session of a real Agent (two tools, the second raising), saved as the app keeps it: session.to_dict() to a
    .json, and through a FileSessionStore."""
    from agent_framework import Agent, FileHistoryProvider, FileSessionStore
    from maf_fake import ScriptedClient, shipment_desk

    for providers in ([], [FileHistoryProvider(tmp_path / "history")]):  # the second writes history/ship-1.jsonl
        tools, script = shipment_desk()
        agent = Agent(client=ScriptedClient(script), instructions="You run an exceptions desk.", tools=tools,
                      context_providers=providers)
        session = agent.create_session(session_id="ship-1")
        await agent.run("Where is TRK123? Rebook it.", session=session)
        if not providers:
            (tmp_path / "ship-1.json").write_text(json.dumps(session.to_dict()))
            await FileSessionStore(tmp_path / "store").set("ship-1", session)


@needs_maf
def test_sessions_written_by_the_real_package(tmp_path):
    asyncio.run(_real_session(tmp_path))
    # a FileHistoryProvider's file (one message a line, named by the session) too: it was "conversation without 'id'"
    # and their folder ("a folder without ..." before)
    for path in (tmp_path / "ship-1.json", tmp_path / "store", tmp_path / "history" / "ship-1.jsonl",
                 tmp_path / "history"):
        report = ImportReport()
        events = list(iter_transcript_events(path, report=report))
        assert report.formats == {"agent-framework": 1} and {e["episode_id"] for e in events} == {"ship-1"}
        assert [e["text"] for e in events if e["kind"] == "action"] == [
            "CALL track_shipment(tracking_number=TRK123)", "CALL rebook(container_id=MSCU1234567)"]
        results = _results(events)
        assert results[0] == "track_shipment: ok" and results[1].startswith("rebook: error")  # it raised


def test_the_adapter_imports_without_the_package_and_says_what_to_install(monkeypatch):
    """The module imports with the core install (Agent Framework duck-types its providers); making a provider
    without the package says in one line what to install."""
    import sys

    from sam_model.integrations import agent_framework as adapter
    from sam_model.memory import HashingEncoder, ScopedMemory

    monkeypatch.setitem(sys.modules, "agent_framework", None)
    with pytest.raises(ImportError) as err:
        adapter.SAMContextProvider(ScopedMemory(HashingEncoder(16)), user_id="mia")
    assert "pip install agent-framework-core" in str(err.value) and "\n" not in str(err.value)


@needs_maf
def test_the_readmes_save_line_runs_on_a_real_agent(tmp_path):
    """Found walking through the README as a freight desk: its line saving a session with the agent's instructions
    named agent.instructions, which an Agent of agent-framework-core 1.26 does not have (AttributeError): they are in
    agent.default_options. The README's line, run as written, saves a session the reader reads with its policy."""
    import re

    import docset
    from agent_framework import Agent
    from maf_fake import ScriptedClient, call, say

    readme = docset.text()  # README.md and docs/*.md: the passage may live in either
    line = re.search(r"`(json\.dump\(\{\*\*session\.to_dict\(\), \"instructions\": [^`]*\}, f\))`", readme)[1]
    agent = Agent(client=ScriptedClient([call("c1", "lookup", {"q": "x"}), say("done")]),
                  instructions="You run an exceptions desk.")
    session = agent.create_session(session_id="s")
    asyncio.run(agent.run("hi", session=session))
    with open(tmp_path / "s.json", "w") as f:
        eval(line, {"json": json, "session": session, "agent": agent, "f": f})
    chat_policy = json.loads((tmp_path / "s.json").read_text())["instructions"]
    assert chat_policy == "You run an exceptions desk."


@needs_maf
def test_a_history_file_of_an_encoded_session_id_is_named_by_the_id(tmp_path):
    """A FileHistoryProvider writes a session id with capitals or a colon (``Mia:Ticket-42``) as ``~session-`` and
    its base32: the file was read as a conversation named ``_session-jvuw...``, where the same session saved with
    to_dict() is named by its id. Both now name it alike."""
    from agent_framework import Agent, FileHistoryProvider
    from maf_fake import ScriptedClient, call, say

    async def run(providers: list) -> dict:
        agent = Agent(client=ScriptedClient([call("c1", "lookup", {"q": "TRK1"}), say("held")]), instructions="x",
                      context_providers=providers)
        session = agent.create_session(session_id="Mia:Ticket-42")
        await agent.run("Where is TRK1?", session=session)
        return session.to_dict()

    (tmp_path / "s.json").write_text(json.dumps(asyncio.run(run([]))))
    asyncio.run(run([FileHistoryProvider(tmp_path / "history")]))
    [written] = (tmp_path / "history").iterdir()
    assert written.name.startswith("~session-")  # the provider's own encoding of the id
    named = {path: {e["episode_id"] for e in iter_transcript_events(path)}
             for path in (tmp_path / "s.json", written, tmp_path / "history")}
    assert named[written] == named[tmp_path / "history"] == named[tmp_path / "s.json"], named


@needs_maf
def test_an_apps_folder_of_a_session_store_and_a_history_providers_files(tmp_path):
    """An agent with a FileHistoryProvider whose sessions a FileSessionStore saves: the snapshots hold no messages
    (the provider's state is empty: its files hold them). The app's folder of both was refused whole at the first
    snapshot, telling to save the session after a run of an agent with a history provider, which it was; now each
    session is read once, from its history file, and the snapshots alone are refused naming those files."""
    from agent_framework import Agent, FileHistoryProvider, FileSessionStore
    from maf_fake import ScriptedClient, call, say

    async def run() -> None:
        history, store = FileHistoryProvider(tmp_path / "app" / "history"), FileSessionStore(tmp_path / "app" / "sessions")
        for sid in ("Mia:Ticket-42", "ship-2"):  # one id the provider encodes in its file's name, one it does not
            agent = Agent(client=ScriptedClient([call("c1", "lookup", {"q": "TRK1"}), say("held")]), instructions="x",
                          context_providers=[history])
            session = agent.create_session(session_id=sid)
            await agent.run("Where is TRK1?", session=session)
            await store.set(sid, session)

    asyncio.run(run())
    report = ImportReport()
    events = list(iter_transcript_events(tmp_path / "app", report=report))
    assert report.formats == {"agent-framework": 2}
    assert sorted({e["episode_id"] for e in events}) == ["Mia_Ticket-42", "ship-2"]
    assert sum(e["kind"] == "action" for e in events) == 2  # each session's call once
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(tmp_path / "app" / "sessions"))
    assert "FileHistoryProvider" in str(err.value) and "'file_history'" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_session_whose_every_contents_is_a_string_is_refused_naming_the_field(tmp_path, capsys):
    """A session's messages with 'contents' a string each (not Message.to_dict()'s list) look like no Agent Framework
    message: the refusal was told another reader ("try --format openai"), which reads no 'contents' at all."""
    session = copy.deepcopy(agent_framework_session())
    for m in session["state"]["in_memory"]["messages"]:
        m["contents"] = "hello"
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(session) + "\n")
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    said = str(err.value)
    assert said.startswith(f"{path}:1, message 0: 'contents' is a string, expected a list") and "\n" not in said
    assert "[{\"type\": \"text\", \"text\":" in said  # what the field should be
    assert "--format" not in said and "reader reads" not in said and not err.value.advice
    assert main([str(path), str(tmp_path / "out.jsonl")]) == 1
    assert "--format" not in capsys.readouterr().err


BOTH = Path(__file__).parent / "fixtures" / "agent_framework_both"  # tests/fixtures/agent_framework_both.py wrote it


@pytest.mark.parametrize("layout, longer", [
    ("same", ["ship-1.jsonl", "~session-jvuwcosunfrwwzlufu2de.jsonl"]),  # equal records; the snapshot a prefix
    ("longer", ["sessions/ship-2.msgpack"]),  # the history a prefix of the snapshot (MessagePack, two subfolders)
])
def test_a_session_kept_by_a_store_and_an_audit_trail_is_read_once(tmp_path, layout, longer):
    """An app whose FileSessionStore saves the agent's in-memory history beside a FileHistoryProvider's audit trail
    (load_messages=False) keeps each session twice, as the real package wrote the fixture: the folder was refused,
    "duplicate conversation id". Each session is read once, as its longer record reads alone."""
    folder = tmp_path / layout
    shutil.copytree(BOTH / layout, folder)
    report = ImportReport()
    events = list(iter_transcript_events(folder, report=report))
    alone = [e for name in longer for e in iter_transcript_events(folder / name)]
    assert report.formats == {"agent-framework": len(longer)}
    assert sorted(events, key=json.dumps) == sorted(alone, key=json.dumps)


def test_a_session_kept_twice_differently_is_refused_naming_both_files(tmp_path, capsys):
    """The app restarted without its store: a new session took the id whose audit file holds the old one's run too.
    Neither record is the session: refused naming both files and the first message where they differ."""
    folder = tmp_path / "differ"
    shutil.copytree(BOTH / "differ", folder)
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(folder))
    said = str(err.value)
    assert said.startswith(f"{folder / 'ship-3.json'}: session 'ship-3' is kept twice, differently: its message 0")
    assert str(folder / "ship-3.jsonl") in said and "\n" not in said
    assert main([str(folder), str(tmp_path / "out.jsonl")]) == 1
    assert "kept twice" in capsys.readouterr().err


def test_the_snapshots_instructions_stay_with_the_session_read_from_its_history(tmp_path):
    """A session.to_dict() dump with the agent's instructions beside its history file: the session is read once and
    keeps the policy only the dump holds, whichever record is read."""
    snapshot = json.loads((BOTH / "same" / "ship-1.json").read_text())
    for cut in (None, 2):  # as long as the history, then shorter (the history's messages read)
        messages = snapshot["state"]["in_memory"]["messages"]
        session = {**snapshot, "state": {"in_memory": {"messages": messages[:cut]}}, "instructions": "Desk rules."}
        (tmp_path / "ship-1.json").write_text(json.dumps(session))
        shutil.copy(BOTH / "same" / "ship-1.jsonl", tmp_path)
        [conv] = conversations(tmp_path)
        assert conv.policy == "Desk rules." and len(conv.messages) == len(messages)


@pytest.mark.parametrize("longer", ["ctx-audit.jsonl", "ctx-memory.json", "no-inputs.json"])
def test_records_apart_by_the_messages_one_writer_leaves_out_are_read_once(tmp_path, longer):
    """Records the real package wrote of one session differ where one writer keeps messages the other leaves out:
    a provider's context messages (attributed to it; store_context_messages=True on one store alone) or the user's
    words (an audit trail of store_inputs=False). Such folders were refused, "kept twice, differently"; each
    session is now read once, as its longer record reads alone."""
    folder = tmp_path / "apart"
    shutil.copytree(BOTH / "apart", folder)
    report = ImportReport()
    events = [e for e in iter_transcript_events(folder, report=report) if longer.split(".")[0] in e["episode_id"]]
    alone = list(iter_transcript_events(folder / longer))
    assert report.formats == {"agent-framework": 3}
    assert events and sorted(events, key=json.dumps) == sorted(alone, key=json.dumps)


def test_an_audit_trail_alone_reads_its_context_messages_as_no_ones_turns():
    """A FileHistoryProvider of store_context_messages=True with no snapshot beside it (the real package wrote it,
    tests/fixtures/agent_framework_both.py's alone): another provider's note before each question was read as the
    user's words, and the agent's in-memory history, which the trail stores again from the third run on, as the
    conversation a second time (each call labelled twice). Each context message is passed over and counted, the
    SAM frames as before; the trail reads as its own messages do."""
    records = [json.loads(line) for line in (BOTH / "alone" / "ctx-trail.jsonl").read_text().splitlines()]
    sources = [(r.get("additional_properties") or {}).get("_attribution", {}).get("source_id") for r in records]
    assert {"facts", "sam_memory", "in_memory"} <= set(sources)
    read = to_chat(records)
    own = to_chat([r for r, source in zip(records, sources) if source is None])
    assert read.messages == own.messages
    said = [m["content"] for m in read.messages if m["role"] == "user"]
    assert said == [r["contents"][0]["text"] for r, source in zip(records, sources)
                    if source is None and r["role"] == "user"]
    assert not any("Fact:" in s or "<sam_memories>" in s for s in said), said
    assert read.ignored["SAM recalls"] == sources.count("sam_memory")
    assert read.ignored["context messages"] == sources.count("facts") + sources.count("in_memory")
    events = list(iter_transcript_events(BOTH / "alone" / "ctx-trail.jsonl"))
    calls = [c["function"]["name"] for m in own.messages for c in m.get("tool_calls") or ()]
    assert [e["kind"] for e in events].count("action") == len(calls) == 2


def test_an_audit_trail_added_after_the_in_memory_history_reads_the_turns_it_alone_holds():
    """An audit trail (store_context_messages=True) added after the agent's in-memory history held two runs (the
    real package wrote it, tests/fixtures/agent_framework_both.py's late): its one run's record opens with those runs,
    the in-memory history's context messages, and the file is their only copy. They were passed over and counted
    as context messages, the two runs lost with no word said; a history's replay before any turn of the record is
    read as the conversation, the note after it still passed over, and the later replays of a trail begun with the
    history (ctx-trail) are still passed over."""
    records = [json.loads(line) for line in (BOTH / "alone" / "late-trail.jsonl").read_text().splitlines()]
    sources = [(r.get("additional_properties") or {}).get("_attribution", {}).get("source_id") for r in records]
    assert sources.count("in_memory") > 0 and sources.index("in_memory") == 0 and "facts" in sources
    read = to_chat(records)
    kept = to_chat([r for r, source in zip(records, sources) if source != "facts"])
    assert read.messages == kept.messages
    said = [m["content"] for m in read.messages if m["role"] == "user"]
    assert said == ["Where is TRK123? Rebook it.", "Thanks. Anything else?", "Which container was it?"]
    assert read.ignored["context messages"] == sources.count("facts")
    events = list(iter_transcript_events(BOTH / "alone" / "late-trail.jsonl"))
    assert [e["kind"] for e in events].count("action") == 2  # the first run's two calls, once each


def test_records_of_different_user_words_or_context_still_differ():
    """The messages a store may leave out are passed over only where the other record lacks one of their kind: two
    records holding different user words, or different context, are of different sessions (the differ fixture)."""
    from sam_model.data.formats.agent_framework import diverges
    records = [json.loads(line) for line in (BOTH / "apart" / "ctx-audit.jsonl").read_text().splitlines()]
    context, user, rest = records[0], records[1], records[2:]
    assert context["additional_properties"]["_attribution"]["source_id"] == "facts"
    assert diverges([context, user, *rest], [user, *rest]) is None
    other_fact = copy.deepcopy(context)
    other_fact["contents"][0]["text"] = "Fact: the customer is new."
    assert diverges([context, user, *rest], [other_fact, user, *rest]) == (0, 0)
    other_words = copy.deepcopy(user)
    other_words["contents"][0]["text"] = "Where is TRK456?"
    assert diverges([user, *rest], [other_words, *rest]) == (0, 0)


def test_a_store_of_thousands_of_snapshots_is_told_in_time_linear(tmp_path, monkeypatch):
    """A FileSessionStore's folder: each object file was looked for in the list of its snapshots when telling
    Langfuse traces apart, quadratic in the sessions (6,000 snapshots: ~20 million path comparisons, 38 s of 62 s
    read). The files are compared a bounded number of times each, twice the snapshots, twice the comparisons."""
    from pathlib import PurePath

    from sam_model.data.formats.files import layouts
    record = (BOTH / "same" / "ship-1.json").read_text()

    def compared(n: int) -> int:
        folder = tmp_path / str(n)
        folder.mkdir()
        for i in range(n):
            (folder / f"s{i}.json").write_text(record.replace('"ship-1"', f'"s{i}"'))
        calls = [0]
        equal = PurePath.__eq__

        def counted(self, other):
            calls[0] += 1
            return equal(self, other)

        with monkeypatch.context() as patched:
            patched.setattr(PurePath, "__eq__", counted)
            found = layouts(folder)
        assert len(found["agent-framework"]) == n
        return calls[0]

    small, large = compared(200), compared(400)
    assert large <= 2.5 * max(small, 1)  # linear; quadratic was 4 times


def test_a_folder_of_many_sessions_kept_twice_holds_one_at_a_time(tmp_path):
    """Each snapshot kept beside its session's history file was held, read, until that file was read: a folder of
    thousands of sessions kept twice held every snapshot at once (150 sessions of 1 MB: 280 MB, 56 MB for the
    snapshots alone). The memory a read needs no more grows with the sessions: six times the sessions, not twice
    the peak."""
    import tracemalloc

    snapshot = json.loads((BOTH / "same" / "ship-1.json").read_text())
    lines = (BOTH / "same" / "ship-1.jsonl").read_text().splitlines()
    key = next(k for k, v in snapshot["state"].items() if isinstance(v, dict) and "messages" in v)
    history = [json.loads(line) for line in lines] * 40
    for n, message in enumerate(history):
        for content in message["contents"]:
            if content.get("type") == "text":
                content["text"] = f"{content['text']} {n} " + "words " * 100
    snapshot["state"][key]["messages"] = history

    def peak(n: int) -> int:
        folder = tmp_path / str(n)
        folder.mkdir()
        for i in range(n):
            (folder / f"s{i}.json").write_text(json.dumps({**snapshot, "session_id": f"s{i}"}))
            (folder / f"s{i}.jsonl").write_text("".join(json.dumps(m) + "\n" for m in history))
        tracemalloc.start()
        try:
            read = sum(isinstance(item, Conversation) for item in conversations(folder))
            held = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert read == n  # each session read once
        return held

    few, many = peak(2), peak(12)
    assert many < 2 * few, (few, many)


def test_a_session_whose_in_memory_history_is_compacted_beside_its_audit_trail_is_read_once(tmp_path):
    """A CompactionProvider compacting the in-memory history after each run (the real package wrote the fixture)
    annotates each message it keeps (additional_properties "_group", "_excluded"), marks the compacted ones excluded
    and adds its summaries: every message differed from the audit trail's, and the folder was refused, "kept twice,
    differently". The annotations are set aside, and the summaries as messages one store alone keeps."""
    folder = tmp_path / "compacted"
    shutil.copytree(BOTH / "compacted", folder)
    report = ImportReport()
    events = list(iter_transcript_events(folder, report=report))
    alone = [e for name in ("summarized.json", "window.jsonl") for e in iter_transcript_events(folder / name)]
    assert report.formats == {"agent-framework": 2}
    assert sorted(events, key=json.dumps) == sorted(alone, key=json.dumps)
