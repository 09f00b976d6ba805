"""The leftovers of the log readers and the labelling rule named by stop 60's closing note: each test fails on the
code before its fix (a guard that passes before says so)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("said, value", [
    ("The report says total number of users 123,456 this month; record that figure.", 123456),
    ("Count of customers 204,305 as of today, record it.", 204305),
    ("The number of active users 123,456 is up; log it.", 123456),  # a tally word right before: as before
    ("Dashboard: total number of orders 123,456 this quarter; record that figure.", 123456),
    ("Count of tickets 204,305 as of today, record it.", 204305),
])
def test_a_count_of_any_noun_after_a_counts_noun_and_of_is_one_number(said, value):
    """People were counted only after a word that says a count (active users 123,456), so the number after 'total
    number of users' was read as a list of two ids, 123 and 456, and the count a later call passed said by no event
    (6f64f92 took a count's noun and 'of' before people, and a0e9552 before any noun: 'total number of orders
    123,456' was still two order ids). 'Of' alone lists (a list of users 123,456), and so does 'a number of' (some
    of them, whose ids a list may give)."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    d = decide("record_metric", {"value": value}, said)
    assert d.labels == [0] and d.needed
    assert not says(norm(said), str(value)[3:])
    for listed in ("Ban a list of users 123,456 from the channel.", "A number of users 123,456 reported the outage."):
        assert says(norm(listed), "456") and decide("ban_user", {"user_id": "456"}, listed).labels == [0]


def windows_run(windows: bool, drive: str = "C:") -> dict:
    """A SWE-agent 0.x run on Windows (paths with backslashes under C:\\repo, or ``drive``'s repo; ``windows``) or
    its POSIX twin (/repo): a search prints the file, the agent opens it whole, then by its relative path at a line
    an earlier view showed."""
    root, sep = (drive + "\\repo", "\\") if windows else ("/repo", "/")
    rel = sep.join(["src", "http", "headers.py"])
    full = root + sep + rel

    def obs(text: str, open_file: str = "n/a") -> dict:
        return {"role": "user", "content": f"{text}\n(Open file: {open_file})\n(Current directory: {root})",
                "agent": "main", "message_type": "observation"}

    def act(action: str) -> dict:
        return {"role": "assistant", "content": action, "agent": "main", "message_type": "action", "thought": "",
                "action": action}

    return {"history": [
        {"role": "system", "content": "You are an agent.", "agent": "main", "message_type": "system_prompt"},
        obs("Fix the crash in parse_header."),
        act("search_dir parse_header"), obs(f'Found 1 matches for "parse_header" in {root}:\n{full} (1 matches)'),
        act("ls"), obs("src"),  # a result between: the one right before a call is no memory
        act(f"open {full}"), obs(f"[File: {full} (300 lines total)]\n1:import re\n2:\n212:def parse_header(x):", full),
        act("search_file re"), obs(f'Found 1 matches for "re" in {full}:\nLine 1:import re', full),
        act(f"open {rel} 212"), obs(f"[File: {full} (300 lines total)]\n212:def parse_header(x):", full),
        act("submit")], "trajectory": [], "info": {}}


def test_a_swe_agent_run_on_windows_labels_as_its_posix_twin(tmp_path):
    """SWE-agent's text commands were shell-split as bash reads them, so a Windows path written bare lost its
    backslashes (open C:\\repo\\src\\http\\headers.py: path C:reposrchttpheaders.py, a file no output printed;
    open src\\http\\headers.py 212: srchttpheaders.py, whose line 212 no view showed), traced to nothing. Bare
    Windows paths keep their backslashes, so the run labels as its POSIX twin does."""
    from sam_model.data.formats import swe_agent
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    labels = {}
    for windows in (True, False):
        path = tmp_path / f"run{windows}.traj"
        path.write_text(json.dumps(windows_run(windows)))
        events = list(iter_transcript_events(path, report=ImportReport()))
        labels[windows] = [(e["step"], e.get("useful_memory_steps")) for e in events]
    assert labels[True] == labels[False] and [u for _, u in labels[False] if u] == [[2], [6]]  # the path, line 212
    args = lambda action: swe_agent.command_call(action, "a", "t.traj")["function"]["arguments"]  # noqa: E731
    assert args("open C:\\repo\\src\\x.py 212") == {"path": "C:\\repo\\src\\x.py", "line_number": "212"}
    assert args('search_dir "a\\"b" src\\http') == {"search_term": 'a"b', "dir": "src\\http"}
    assert args("open my\\ file.py") == {"path": "my file.py"}  # bash's escape of a space, as before
    assert args("find_file x.py C:\\") == {"file_name": "x.py", "dir": "C:\\"}  # a drive's root
    # a pattern's escapes in a word of one backslash before no name: bash's reading, as before
    assert args("search_dir foo\\.bar") == {"search_term": "foo.bar"}
    assert args("search_dir parse_header\\b src") == {"search_term": "parse_headerb", "dir": "src"}
    assert args("search_dir x\\d+ ..\\src") == {"search_term": "xd+", "dir": "..\\src"}


def v1_branched_events() -> list[dict]:
    """An OpenHands V1 run whose head was moved back (the SDK's history tree: navigate_to, or a fork from an earlier
    event): after get_user, the first branch looked up a reservation; the second, under the user's turn, lists the
    reservations, then looks the same one up."""
    def ev(i: int, kind: str, parent: str | None, source: str = "agent", **kw) -> dict:
        return {"kind": kind, "id": f"e{i}", "timestamp": f"2026-01-05T10:00:{i:02d}", "source": source,
                **({"parent_id": parent} if parent else {}), **kw}

    def act(i: int, parent: str, name: str, args: dict) -> dict:
        return ev(i, "ActionEvent", parent, thought=[], llm_response_id=f"r{i}",
                  tool_call={"id": f"c{i}", "name": name, "arguments": json.dumps(args)})

    def obs(i: int, text: str) -> dict:
        return ev(i, "ObservationEvent", f"e{i - 1}", "environment", tool_call_id=f"c{i - 1}",
                  observation={"kind": "X", "content": [{"type": "text", "text": text}], "is_error": False})

    return [ev(0, "SystemPromptEvent", None, system_prompt={"type": "text", "text": "You are a support agent."}),
            ev(1, "MessageEvent", "e0", "user", llm_message={"role": "user", "content": [
                {"type": "text", "text": "My user id is ann_lee_123."}]}),
            act(2, "e1", "get_user", {"user_id": "ann_lee_123"}), obs(3, "Reservations: QX7Z9A"),
            act(4, "e3", "get_reservation", {"reservation_id": "QX7Z9A"}), obs(5, "QX7Z9A: JFK-LAX"),
            act(6, "e1", "list_reservations", {"user_id": "ann_lee_123"}), obs(7, "Reservations: QX7Z9A, PL4N3R"),
            ev(8, "MessageEvent", "e7", llm_message={"role": "assistant", "content": [
                {"type": "text", "text": "Looking."}]}),
            act(9, "e8", "get_reservation", {"reservation_id": "QX7Z9A"}), obs(10, "QX7Z9A: JFK-LAX")]


def test_an_openhands_v1_conversation_that_branched_is_read_on_its_last_branch(tmp_path):
    """The SDK's history tree keeps the events of a branch the conversation left in its log (each event names its
    parent_id): read in log order, the left branch read as if the model had seen it, and a value the new branch's
    own result said was labelled by the left branch's (QX7Z9A by its first get_user). The run is read on the branch
    of its last event, the left one's events counted and named in the import report; in a folder and in an
    evaluation line alike. A log without parent_id is one branch, read whole as before."""
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    events = v1_branched_events()
    folder = tmp_path / "conv" / "events"
    folder.mkdir(parents=True)
    for i, e in enumerate(events):
        (folder / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    line = tmp_path / "output.jsonl"
    line.write_text(json.dumps({"instance_id": "t-1", "history": events}) + "\n")
    for path, first in ((tmp_path / "conv", "event-00002-e2.json"), (line, "event 2")):
        report = ImportReport()
        read = list(iter_transcript_events(path, report=report))
        assert [e["text"].split("(")[0] for e in read if e["kind"] == "action"] == [
            "CALL list_reservations", "CALL get_reservation"]
        (labelled,) = [e for e in read if e.get("useful_memory_steps")]
        assert read[labelled["useful_memory_steps"][0]]["text"].startswith("list_reservations: Reservations")
        ((at, n),) = report.abandoned.items()
        assert at.endswith(first) and n == 4
    flat = tmp_path / "flat.jsonl"  # the same events with no tree: read whole, in log order
    flat.write_text(json.dumps({"instance_id": "t-2", "history": [
        {k: v for k, v in e.items() if k != "parent_id"} for e in events]}) + "\n")
    report = ImportReport()
    assert sum(e["kind"] == "action" for e in iter_transcript_events(flat, report=report)) == 4
    assert not report.abandoned


def test_a_sibling_agents_span_with_messages_is_read_beside_another_agents_model_calls(caplog):
    """Two agents under one conversation id: the first's model calls recorded (chat spans below its invoke_agent
    span), the second's not, its invoke_agent span holding its turn. An agent's span was read only where the
    conversation recorded no model call, so the second agent's turn was dropped without a word. An agent span no
    recorded call is below is read (its turn's only record), a new segment with the warning; one above the calls
    is still not, nor is any where a call's ancestry names no agent (whose it is unknown)."""
    import logging

    from test_otel_review_60 import SUB, span, under
    from test_walkthrough_otel import CONV, TURN1, plain, read, turn

    spans = [span("t1", "http", "", 900, "server"), *under(turn("t1", [], TURN1, 1000), "http"),
             span("t1", "b", "http", 1100, "invoke_agent", SUB, conversation=CONV)]
    with caplog.at_level(logging.WARNING):
        (conv,) = read(spans)
    assert plain(conv.messages) == [*TURN1, *SUB] and "repeats none" in caplog.text
    with_content = [*turn("t1", [], TURN1, 1000, agent_content=True), span("t1", "b", "", 1100, "invoke_agent", SUB,
                                                                           conversation=CONV)]
    assert plain(read(with_content)[0].messages) == [*TURN1, *SUB]  # the first agent's own span still not read
    for s in with_content:  # the calls' parent links lost: whose they are is unknown, agents' spans not read
        if s["spanId"].startswith("t1-c"):
            s.pop("parentSpanId")
    assert plain(read(with_content)[0].messages) == TURN1


def test_spans_of_old_prompt_attributes_beside_messages_are_said_not_read(caplog):
    """One conversation whose later model call an older instrumentation recorded with gen_ai.prompt.* /
    gen_ai.completion.* attributes (vendors' flattened messages, no schema's) beside spans of the conventions'
    gen_ai.input.messages: the old span was dropped without a word (only a file of nothing but such spans was
    refused, saying so). It is still not read, the conversation read from the spans of messages, but a warning
    names the span and says that only what a later call's input repeats of its turn is read."""
    import logging

    from test_otel_review_60 import span
    from test_walkthrough_otel import CONV, TURN1, attr, plain, read, turn

    old = span("t2", "legacy", "", 2000, "chat", conversation=CONV)
    old["attributes"] += [attr("gen_ai.prompt.0.role", "user"), attr("gen_ai.prompt.0.content", "ok, go ahead"),
                          attr("gen_ai.completion.0.content", "Done.")]
    with caplog.at_level(logging.WARNING):
        (conv,) = read([*turn("t1", [], TURN1, 1000), old])
    assert plain(conv.messages) == TURN1
    assert f"1 span of conversation {CONV} (the first: t.json:1, span legacy) carries gen_ai.prompt.*" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        read(turn("t1", [], TURN1, 1000))
    assert "gen_ai.prompt" not in caplog.text  # guard: no such span, no warning


def test_a_conversation_of_old_prompt_attributes_alone_beside_others_is_said(caplog):
    """A conversation an older instrumentation recorded whole (every span of gen_ai.prompt.* attributes, none of
    gen_ai.input.messages), in a file whose other conversation is read: the warning named such spans only inside a
    conversation that was read, so this one was dropped without a word (only a file of nothing but such spans is
    refused). Each such conversation is named, its first span and its count."""
    import logging

    from test_otel_review_60 import span
    from test_walkthrough_otel import CONV, TURN1, attr, plain, read, turn

    def old(trace: str, sid: str, parent: str, t: int, conversation: str | None = None) -> dict:
        s = span(trace, sid, parent, t, "chat", conversation=conversation)
        s["attributes"] += [attr("gen_ai.prompt.0.role", "user"), attr("gen_ai.prompt.0.content", "hi"),
                            attr("gen_ai.completion.0.content", "Done.")]
        return s

    with caplog.at_level(logging.WARNING):
        (conv,) = read([*turn("t1", [], TURN1, 1000), old("t2", "o1", "", 3000, "hd-old"),
                        old("t3", "p1", "", 4000), old("t3", "p2", "p1", 4100)])
    assert plain(conv.messages) == TURN1 and conv.group == CONV
    assert "1 span of conversation hd-old (the first: t.json:1, span o1) carries gen_ai.prompt.*" in caplog.text
    assert "2 spans of conversation t3 (the first: t.json:1, span p1) carry gen_ai.prompt.*" in caplog.text
    assert caplog.text.count("not read at all") == 2


def test_a_swe_agent_run_on_a_windows_share_labels_as_its_posix_twin(tmp_path):
    """A Windows path on a share (UNC: \\\\server\\share\\repo\\...) written bare in a SWE-agent text command
    was read as bash reads it (14e4870 kept a drive's and a relative path's backslashes, not a share's): path
    \\serversharereposrchttpheaders.py, a file no output printed, so the path was traced to nothing. Its leading
    pair and separators are kept, so the run labels as its POSIX twin does."""
    from sam_model.data.formats import swe_agent
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    labels = {}
    for windows in (True, False):
        path = tmp_path / f"run{windows}.traj"
        path.write_text(json.dumps(windows_run(windows, "\\\\server\\share")))
        events = list(iter_transcript_events(path, report=ImportReport()))
        labels[windows] = [(e["step"], e.get("useful_memory_steps")) for e in events]
    assert labels[True] == labels[False] and [u for _, u in labels[False] if u] == [[2], [6]]
    args = lambda action: swe_agent.command_call(action, "a", "t.traj")["function"]["arguments"]  # noqa: E731
    assert args("open \\\\srv\\share\\x.py 3") == {"path": "\\\\srv\\share\\x.py", "line_number": "3"}
    assert args("search_dir a \\\\srv") == {"search_term": "a", "dir": "\\srv"}  # no share: bash's reading


def test_a_swe_agent_run_on_windows_with_mixed_separators_labels_as_its_posix_twin(tmp_path):
    """A Windows path whose separators mix slashes and backslashes (C:/repo/src\\http\\headers.py, as Python's
    os.path.join on Windows writes one under a root given with slashes; ./src\\x.py) was read as bash reads it
    (14e4870 kept a path's backslashes only where none but names and backslashes come before them): path
    C:/repo/srchttpheaders.py, a file no output printed. It labels as its POSIX twin does."""
    from sam_model.data.formats import swe_agent
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    run = json.loads(json.dumps(windows_run(True)).replace("C:\\\\repo\\\\src", "C:/repo/src"))
    assert "C:/repo/src\\http\\headers.py" in json.dumps(run).replace("\\\\", "\\")
    labels = {}
    for name, r in (("mixed", run), ("posix", windows_run(False))):
        path = tmp_path / f"{name}.traj"
        path.write_text(json.dumps(r))
        events = list(iter_transcript_events(path, report=ImportReport()))
        labels[name] = [(e["step"], e.get("useful_memory_steps")) for e in events]
    assert labels["mixed"] == labels["posix"] and [u for _, u in labels["posix"] if u] == [[2], [6]]
    args = lambda action: swe_agent.command_call(action, "a", "t.traj")["function"]["arguments"]  # noqa: E731
    assert args("open ./src\\x.py 3") == {"path": "./src\\x.py", "line_number": "3"}
    assert args("search_dir foo/bar\\.baz") == {"search_term": "foo/bar.baz"}  # a pattern's escape: bash's reading


def test_an_openhands_v1_tree_whose_parent_is_written_after_it_is_refused_naming_the_event(tmp_path):
    """A parent_id chain that comes back to an event (no log the SDK writes: each event names one written before
    it) ended the chain there, so the events before the loop, the system prompt among them, were left out as a
    branch the conversation left, the import report naming a branch there was none; a parent written after its
    event was followed, the events read in log order, the parent after it. Either is refused, naming the event
    whose parent_id is not before it, in an evaluation line and a folder alike."""
    from sam_model.data.formats.base import TranscriptFormatError
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    looped = v1_branched_events()
    looped[1]["parent_id"] = "e10"  # the user's turn under the last event: 10, 9, 8, 7, 6, 1, 10
    later = v1_branched_events()
    later[6]["parent_id"] = "e8"  # list_reservations under the message after its own result
    for n, events in enumerate((looped, later)):
        folder = tmp_path / f"conv{n}" / "events"
        folder.mkdir(parents=True)
        for i, e in enumerate(events):
            (folder / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
        line = tmp_path / f"output{n}.jsonl"
        line.write_text(json.dumps({"instance_id": "t-1", "history": events}) + "\n")
        bad = (1, "e1") if n == 0 else (6, "e6")
        for path, at in ((folder.parent, f"event-{bad[0]:05d}-{bad[1]}.json"), (line, f"{line.name}:1, event {bad[0]}")):
            with pytest.raises(TranscriptFormatError, match="parent_id names event") as err:
                list(iter_transcript_events(path, report=ImportReport()))
            assert err.value.where.endswith(at)


@pytest.mark.parametrize("some, counted", [
    ("A small number of users 123,456 were banned for spam.", "A total number of users 123,456 were active."),
    ("An unusually large number of orders 123,456 failed to ship.", "The large number of orders 123,456 surprised us."),
])
def test_a_number_of_sized_between_lists_as_a_number_of_does(some, counted):
    """a0e9552 read 'a number of' as some of them (a list) only with 'a' right before 'number', so 'a small number of
    users 123,456 were banned' was one count, the ids 123 and 456 a later call took said by no event. Up to two words
    that size it between read as 'a number of'; a tally word or a determiner before 'number' still says a count."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    assert says(norm(some), "456") and decide("get_user", {"user_id": "456"}, some).labels == [0]
    assert not says(norm(counted), "456") and says(norm(counted), "123,456")


def test_an_openhands_v1_folder_is_read_on_the_branch_its_state_names_as_its_head(tmp_path):
    """base_state.json's leaf_event_id is the conversation's head (the SDK's history tree): a head moved back
    (navigate_to) with no event after it has the events after it on a branch it left, but the folder was read on the
    branch of its last event written, the left branch's calls and results read as the model's last turns. The
    folder is now read on the branch ending at the state's leaf; a leaf naming no event of the log (a state saved
    ahead of its event) or no state reads from the last event, as before."""
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    events = v1_branched_events()[:8]  # both branches, the second's list_reservations answered, no message after
    conv = tmp_path / "conv"
    (conv / "events").mkdir(parents=True)
    for i, e in enumerate(events):
        (conv / "events" / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))

    def calls(leaf: str | None) -> tuple[list[str], dict[str, int]]:
        state = {"id": "conv", "execution_status": "idle", **({"leaf_event_id": leaf} if leaf else {})}
        (conv / "base_state.json").write_text(json.dumps(state))
        report = ImportReport()
        read = list(iter_transcript_events(conv, report=report))
        return [e["text"].split("(")[0] for e in read if e["kind"] == "action"], report.abandoned

    assert calls(None) == (["CALL list_reservations"], {str(conv / "events" / "event-00002-e2.json"): 4})
    moved, left = calls("e5")  # the head moved back to the first branch's last result
    assert moved == ["CALL get_user", "CALL get_reservation"]
    ((at, n),) = left.items()
    assert at.endswith("event-00006-e6.json") and n == 2
    assert calls("e99")[0] == ["CALL list_reservations"]  # a head naming no event: the last event written


@pytest.mark.parametrize("one_at_a_time", [False, True], ids=["an add a branch", "an add an event"])
def test_a_live_openhands_v1_add_that_goes_on_from_an_earlier_stored_event_is_refused(one_at_a_time):
    """A sidecar forwarding a V1 conversation's events gave ScopedMemory the second branch (under the user's turn,
    after the head moved back) after the stored first one, read as going on from it: the first branch's memories
    stayed the task's, and the importer, which leaves that branch out, labels otherwise. The add is refused in one
    line naming the event and the stored branch it leaves, so are the events a sidecar adds after it; the whole
    conversation added again from its start in one add is read on its branch, as the importer reads it."""
    from sam_model.data.formats import to_chat
    from sam_model.data.toolstate import TranscriptState
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = v1_branched_events()
    memory = ScopedMemory(HashingEncoder(16))
    for batch in ([[e] for e in events[:6]] if one_at_a_time else [events[:6]]):
        memory.add(batch, user_id="dev", run_id="conv-1")
    stored = memory.get_all(user_id="dev", run_id="conv-1")["results"]
    with pytest.raises(ValueError, match=r"^data\[0\]: this OpenHands V1 event goes on from event 'e1', which an "
                                         r"earlier add stored, leaving 4 later stored events \(the first 'e2'\)"):
        memory.add(events[6:7] if one_at_a_time else events[6:], user_id="dev", run_id="conv-1")
    if one_at_a_time:
        with pytest.raises(ValueError, match=r"goes on from event 'e6', which an earlier add was refused for"):
            memory.add(events[7:8], user_id="dev", run_id="conv-1")
    assert memory.get_all(user_id="dev", run_id="conv-1")["results"] == stored
    memory.delete_all(user_id="dev", run_id="conv-1")
    memory.add(events, user_id="dev", run_id="conv-1")
    importer = TranscriptState("x")
    for m in to_chat(events, format="openhands-v1").messages:
        importer.feed(m)
    got = sorted(memory.get_all(user_id="dev", run_id="conv-1")["results"], key=lambda r: r["step"])
    assert [r["memory"] for r in got] == [e["text"] for e in importer.events]
    linear = ScopedMemory(HashingEncoder(16))  # a chain of parent_ids an event an add: nothing left, none refused
    for e in events[:6]:
        linear.add([e], user_id="dev", run_id="conv-2")
    assert len(linear.get_all(user_id="dev", run_id="conv-2")["results"]) == len(stored)


def test_the_events_folder_given_is_converted_again_when_its_state_moves_the_head(tmp_path):
    """The events folder of a V1 conversation given (conv/events) is read to the leaf of the state beside it
    (conv/base_state.json), but the cache key held the base_state.json files under the folder given alone: a head
    moved back with no new event kept the cached conversion of the branch it left."""
    from sam_model.data.sources import materialise

    conv = tmp_path / "conv"
    (conv / "events").mkdir(parents=True)
    for i, e in enumerate(v1_branched_events()[:8]):
        (conv / "events" / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    (conv / "base_state.json").write_text(json.dumps({"id": "conv", "leaf_event_id": "e7"}))
    first = materialise(conv / "events", cache_dir=tmp_path / "cache", progress=False)
    assert "list_reservations" in first.read_text()
    (conv / "base_state.json").write_text(json.dumps({"id": "conv", "leaf_event_id": "e5"}))
    moved = materialise(conv / "events", cache_dir=tmp_path / "cache", progress=False)
    assert moved != first and "list_reservations" not in moved.read_text()
    assert "get_reservation" in moved.read_text()


def test_a_live_openhands_v1_event_sent_again_is_no_branch_and_refuses_none_after_it():
    """A sidecar's retry sends an event an earlier add stored again (its add timed out after it was stored): its
    parent is a stored event with a stored event after it (the event itself), so it was refused as a branch the
    conversation left ("leaving 1 later stored event (the first 'e3')"), and, noted as refused, every event after it
    was refused as going on from it: the run took no memory again. A stored event sent again begins no branch (as
    before live adds were checked for one, it stores nothing new), and one sent beside a refused branch is not noted
    as refused, so the events going on from it are stored."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = v1_branched_events()
    memory = ScopedMemory(HashingEncoder(16))
    for e in events[:4]:
        memory.add([e], user_id="dev", run_id="conv-1")

    def count() -> int:
        return len(memory.get_all(user_id="dev", run_id="conv-1")["results"])

    stored = count()
    memory.add(events[3:4], user_id="dev", run_id="conv-1")  # e3 again
    assert count() == stored
    memory.add(events[4:5], user_id="dev", run_id="conv-1")  # e4, from e3
    memory.add(events[4:6], user_id="dev", run_id="conv-1")  # e4 again and e5
    assert count() == stored + 2
    with pytest.raises(ValueError, match=r"^data\[1\]: this OpenHands V1 event goes on from event 'e1'"):
        memory.add([events[5], events[6]], user_id="dev", run_id="conv-1")  # e5 again beside the branch e6
    memory.add([{**events[8], "id": "e11", "parent_id": "e5"}], user_id="dev", run_id="conv-1")  # on from e5
    assert count() == stored + 3


def test_a_live_openhands_v1_event_sent_twice_is_stored_once_where_it_was_first():
    """An event sent again is kept among the stored event ids again (the open turn's lines hold it twice), and the
    ids were placed by their first place alone: the next event, going on from it, was refused as leaving "1 later
    stored event (the first 'e4')", the event itself. Each id is placed once, where it was first stored, so a resent
    one leaves nothing after it, and a branch is refused counting the events it leaves once each."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = v1_branched_events()
    memory = ScopedMemory(HashingEncoder(16))
    for e in events[:5]:
        memory.add([e], user_id="dev", run_id="conv-1")
    memory.add(events[4:5], user_id="dev", run_id="conv-1")  # e4 again
    memory.add(events[4:6], user_id="dev", run_id="conv-1")  # e4 a third time, and e5 from it
    assert len(memory.get_all(user_id="dev", run_id="conv-1")["results"]) == 5
    with pytest.raises(ValueError, match=r"goes on from event 'e1', which an earlier add stored, leaving 4 later "
                                         r"stored events \(the first 'e2'\)"):
        memory.add(events[6:7], user_id="dev", run_id="conv-1")


def test_a_live_openhands_v1_state_change_between_events_is_no_branch():
    """The SDK logs a ConversationStateUpdateEvent (the agent-server sends every state change, execution_status
    running, finished, through the event callbacks) under the head without moving the head to it
    (ConversationState.append_event), so the next event names the same parent as the state change: a sidecar
    forwarding the events had every event after a state change refused as leaving "1 later stored event (the first
    's1')". A state change is no node of the tree: it is left out of the stored events a branch leaves, while a
    branch that leaves stored events is refused as before."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = v1_branched_events()
    running = {"kind": "ConversationStateUpdateEvent", "id": "s1", "timestamp": "2026-01-05T10:00:03.5",
               "source": "environment", "parent_id": "e3", "key": "execution_status", "value": "running"}
    memory = ScopedMemory(HashingEncoder(16))
    for batch in ([e] for e in [*events[:4], running, events[4], {**running, "id": "s2", "parent_id": "e4"}]):
        memory.add(batch, user_id="dev", run_id="conv-1")
    memory.add(events[5:6], user_id="dev", run_id="conv-1")  # e5, from e4, beside s2
    assert len(memory.get_all(user_id="dev", run_id="conv-1")["results"]) == 5
    with pytest.raises(ValueError, match=r"goes on from event 'e1', which an earlier add stored, leaving 4 later "
                                         r"stored events \(the first 'e2'\)"):
        memory.add(events[6:7], user_id="dev", run_id="conv-1")


def test_an_openhands_v1_folder_with_state_changes_reports_no_branch_left(tmp_path):
    """An agent-server logs a ConversationStateUpdateEvent at every state change (execution_status running, then
    finished after the last event) under the head, without moving the head to it: the event after one names the
    same parent, and base_state.json's leaf_event_id names the last event before the final one. Each was read as an
    event of a branch the conversation left, the import report naming a branch on a conversation that has none (2 of
    them once the state's leaf was read). A state change is on no branch; the conversation reads as before."""
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    def change(i: int, parent: str) -> dict:
        return {"kind": "ConversationStateUpdateEvent", "id": f"s{i}", "timestamp": "2026-01-05T10:00:59",
                "source": "environment", "parent_id": parent, "key": "execution_status", "value": "finished"}

    events = v1_branched_events()
    log = [*events[:2], change(90, "e1"), *events[2:6], change(91, "e5")]
    conv = tmp_path / "conv"
    (conv / "events").mkdir(parents=True)
    for i, e in enumerate(log):
        (conv / "events" / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    plain = tmp_path / "plain" / "events"
    plain.mkdir(parents=True)
    for i, e in enumerate(events[:6]):
        (plain / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    want = [e["text"] for e in iter_transcript_events(plain.parent)]
    for state in (None, {"id": "conv", "leaf_event_id": "e5"}):
        if state is not None:
            (conv / "base_state.json").write_text(json.dumps(state))
        report = ImportReport()
        assert [e["text"] for e in iter_transcript_events(conv, report=report)] == want
        assert report.abandoned == {}, report.abandoned
