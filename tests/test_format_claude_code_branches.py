"""A Claude Code session file is a tree (``uuid``, ``parentUuid``): a rewind, an edited prompt or a retried response
writes its new entries under an earlier one and keeps the branch it left. The conversation is the chain ending at
the last-written turn, with the lines of its responses and the results of their calls put back (as Claude Code
resumes a session); the branches it left are reported, not read. Read in file order, they were spliced into the
conversation: their calls and results read as if they had happened, a later call's values traced to them."""

from __future__ import annotations

import json
from pathlib import Path

from test_format_claude_code import SESSION, Session, read, subagent, text, tool_use, write

from sam_model.data.formats import to_chat
from sam_model.data.sources import SourceOptions, iter_source_events

HI = "Hi, I'm Ann (ann_lee_123)."
LEFT = "entries of abandoned branches (a rewind, an edited prompt, a retried response: Claude Code keeps them)"
USER = '{"name": "Ann Lee", "reservations": ["QX7Z9A", "ZZ1234"]}'


def texts(events: list[dict]) -> list[str]:
    return [e["text"] for e in events]


def line(path: Path, entry: dict) -> str:
    """FILE:LINE of ``entry`` in the session file ``path``."""
    uuids = [json.loads(x).get("uuid") for x in path.read_text().splitlines()]
    return f"{path}:{uuids.index(entry['uuid']) + 1}"


def traced(events: list[dict], call: str) -> list[str]:
    """The texts of the events the decision before the call whose text is ``call`` is labelled with."""
    at = texts(events).index(call)
    return [events[i]["text"] for i in events[at - 1]["useful_memory_steps"]]


def before_the_rewind() -> tuple[Session, dict]:
    """Ann's session up to its branch point (the assistant's words before her second prompt)."""
    s = Session()
    s.user(HI)
    s.respond(tool_use("t1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("t1", USER)
    (point,) = s.respond(text("You hold two reservations."))
    return s, point


def test_a_rewind_after_a_tool_call_leaves_the_branch_out_and_traces_nothing_to_it(tmp_path):
    """Ann asked for QX7Z9A's details (a call and its result), rewound to before that prompt and asked to cancel it:
    the abandoned prompt, call and result were read as turns, so the cancel's reservation id traced (label latest)
    to the result of a call the conversation no longer had. They are left out and reported; the live call keeps its
    result."""
    s, point = before_the_rewind()
    gone = s.user("Show me the first one.")
    s.respond(tool_use("t2", "get_reservation", {"reservation_id": "QX7Z9A"}))
    s.result("t2", '{"reservation_id": "QX7Z9A", "cabin": "economy"}')
    s.respond(text("It is an economy seat."))
    s.user("Cancel the first one.", parent=point["uuid"])  # the rewind: the new prompt under the branch point
    s.respond(tool_use("t3", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t3", "cancelled QX7Z9A")
    s.respond(text("Cancelled."))
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events, report = read(path, label="latest")
    assert texts(events) == [HI, "CALL get_user(user_id=ann_lee_123)", f"get_user: {USER}",
                             "You hold two reservations.", "Cancel the first one.",
                             "CALL cancel(reservation_id=QX7Z9A)", "cancel: cancelled QX7Z9A", "Cancelled."]
    assert traced(events, "CALL cancel(reservation_id=QX7Z9A)") == [f"get_user: {USER}"]
    assert report.abandoned == {line(path, gone): 4} and report.ignored[LEFT] == 4
    assert report.calls == 2 and not report.unmatched_results
    chat = to_chat(s.entries)
    assert [(m["role"], m.get("tool_call_id")) for m in chat.messages[-3:]] == [
        ("assistant", None), ("tool", "t3"), ("assistant", None)]
    assert chat.messages[-3]["tool_calls"][0]["id"] == "t3"


def test_an_edited_prompt_replaces_the_one_it_edits():
    """Editing an earlier prompt writes the new one under that prompt's parent: the first wording and what answered
    it are left, the edit read in its place."""
    s, point = before_the_rewind()
    s.user("Cancel ZZ1234.")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "ZZ1234"}))
    s.result("t2", "cancelled ZZ1234")
    s.user("Cancel QX7Z9A.", parent=point["uuid"])  # the same parent as the prompt it edits
    s.respond(tool_use("t3", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t3", "cancelled QX7Z9A")
    chat = to_chat(s.entries)
    said = [m.get("content") or m["tool_calls"][0]["function"]["arguments"] for m in chat.messages]
    assert "Cancel ZZ1234." not in said and {"reservation_id": "ZZ1234"} not in said
    assert said[-3:] == ["Cancel QX7Z9A.", {"reservation_id": "QX7Z9A"}, "cancelled QX7Z9A"]
    assert chat.ignored[LEFT] == 3


def test_a_retried_response_replaces_the_try_it_retries(tmp_path):
    """A response cut off (an API error mid-stream) and generated again hangs off the same entry as the first try:
    the try's words and its call, never run, were read as a turn and a call without a result."""
    s = Session()
    prompt = s.user("Cancel my reservation QX7Z9A.")
    tried = s.respond(text("Cancelling ZZ1234."), tool_use("t1", "cancel", {"reservation_id": "ZZ1234"}))
    s.add("system", subtype="api_error", level="error", retryAttempt=1, maxRetries=10)
    s.responses += 1  # the retry: a new API message, under the prompt
    retry = s.respond(text("Cancelling QX7Z9A."), tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    retry[0]["parentUuid"] = prompt["uuid"]
    s.result("t2", "cancelled QX7Z9A")
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events, report = read(path)
    assert texts(events) == ["Cancel my reservation QX7Z9A.", "Cancelling QX7Z9A.", "CALL cancel(reservation_id=QX7Z9A)",
                             "cancel: cancelled QX7Z9A"]
    assert report.calls == 1 and report.abandoned == {line(path, tried[0]): 2}
    assert report.ignored["system api_error entries"] == 1


def parallel(s: Session, *calls: tuple[str, str, dict, str]) -> list[dict]:
    """One response of parallel calls as Claude Code writes it: a line a call, each chained to the line before, and
    each result a user entry under the line of its own call (not the entry written before it)."""
    lines = s.respond(*(tool_use(i, name, args) for i, name, args, _ in calls))
    for (i, _, _, out), call in zip(calls, lines):
        s.result(i, out, parent=call["uuid"])
    return lines


def test_parallel_calls_keep_their_results_beside_a_rewind(tmp_path):
    """Each result of parallel calls hangs off the line of its call, so the chain back from the last turn passes
    one of them: the others are put back (the lines of the response the chain is on, and their results), as Claude
    Code puts them back when it resumes a session. A rewind after them leaves its branch out as before."""
    s = Session()
    s.user(HI)
    parallel(s, ("t1", "get_user", {"user_id": "ann_lee_123"}, "Ann Lee"),
             ("t2", "get_reservation", {"reservation_id": "QX7Z9A"}, "QX7Z9A: economy"))
    (point,) = s.respond(text("Found both."))
    gone = s.user("Now ZZ1234.")
    parallel(s, ("t3", "get_reservation", {"reservation_id": "ZZ1234"}, "ZZ1234: basic"))
    s.user("Cancel QX7Z9A.", parent=point["uuid"])
    parallel(s, ("t4", "cancel", {"reservation_id": "QX7Z9A"}, "cancelled QX7Z9A"),
             ("t5", "notify", {"user_id": "ann_lee_123"}, "sent"))
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events, report = read(path)
    assert texts(events) == [HI, "CALL get_user(user_id=ann_lee_123)", "CALL get_reservation(reservation_id=QX7Z9A)",
                             "get_user: Ann Lee", "get_reservation: QX7Z9A: economy", "Found both.", "Cancel QX7Z9A.",
                             "CALL cancel(reservation_id=QX7Z9A)", "CALL notify(user_id=ann_lee_123)",
                             "cancel: cancelled QX7Z9A", "notify: sent"]
    assert report.abandoned == {line(path, gone): 3} and not report.unmatched_results
    assert LEFT not in to_chat(s.entries[:-5]).ignored  # before the rewind: one chain, its results all on it


def rewound_then_compacted() -> tuple[Session, dict, dict]:
    """A rewind, then a compaction (its boundary's parent null, its logicalParentUuid the turn it continues, on the
    branch the rewind took): the session, its first abandoned entry, and the rewound prompt."""
    s, point = before_the_rewind()
    gone = s.user("Show me ZZ1234.")
    s.respond(tool_use("t2", "get_reservation", {"reservation_id": "ZZ1234"}))
    s.result("t2", "ZZ1234: basic economy")
    again = s.user("Cancel QX7Z9A.", parent=point["uuid"])
    s.respond(tool_use("t3", "cancel", {"reservation_id": "QX7Z9A"}))
    kept = s.result("t3", "cancelled QX7Z9A")
    s.add("system", parent=None, subtype="compact_boundary", content="Conversation compacted",
          logicalParentUuid=kept["uuid"], compactMetadata={"trigger": "auto", "preTokens": 160000})
    s.user("Summary: Ann cancelled QX7Z9A.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.user("And ZZ1234?")
    s.respond(tool_use("t4", "cancel", {"reservation_id": "ZZ1234"}))
    s.result("t4", "cancelled ZZ1234")
    return s, gone, again


def test_a_compaction_after_a_rewind_reads_the_branch_it_continues(tmp_path):
    """The compaction's boundary has no parent; its logicalParentUuid names the turn it continues, on the branch
    the rewind took: the turns before the compaction are read through it, the abandoned branch still left."""
    s, gone, _ = rewound_then_compacted()
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events, report = read(path)
    assert texts(events)[4:] == ["Cancel QX7Z9A.", "CALL cancel(reservation_id=QX7Z9A)", "cancel: cancelled QX7Z9A",
                                 "And ZZ1234?", "CALL cancel(reservation_id=ZZ1234)", "cancel: cancelled ZZ1234"]
    assert "get_reservation: ZZ1234: basic economy" not in texts(events)
    assert report.abandoned == {line(path, gone): 3}
    assert report.ignored["compact summaries (restating the turns read before them)"] == 1


def test_a_subagents_entries_are_not_taken_for_a_branch(tmp_path):
    """A subagent's sidechain is its own conversation, whatever the main chain's branches: read whole, as before,
    in the session's file or its own; the main chain's rewind is left out of the session's alone."""
    s, point = before_the_rewind()
    gone = s.user("Find Ann's reservation.")
    s.respond(tool_use("task1", "Task", {"description": "Find", "prompt": "Find the reservation of Ann."}))
    side = subagent()
    retried = dict(side[1], uuid="retry", message={**side[1]["message"], "id": "msg_retry"})  # a sidechain fork
    side.insert(2, retried)
    s.entries += side
    s.result("task1", "Ann holds QX7Z9A.", agentId="a1b2c3d")
    s.user("Cancel QX7Z9A.", parent=point["uuid"])
    s.respond(text("Cancelled."))
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events, report = read(path)
    mine = [e["text"] for e in events if e["episode_id"] == SESSION]
    theirs = [e["text"] for e in events if e["episode_id"] == f"{SESSION}-agent-a1b2c3d"]
    assert mine[-2:] == ["Cancel QX7Z9A.", "Cancelled."] and "Find Ann's reservation." not in mine
    alone, _ = read(write(tmp_path / "agent" / "agent-a1b2c3d.jsonl", side))
    assert theirs == texts(alone) and theirs.count("Searching.") == 2
    assert report.abandoned == {line(path, gone): 3}
    assert LEFT not in to_chat(side).ignored


def test_an_entry_whose_parent_the_file_lacks_loses_nothing(tmp_path):
    """A parent the file does not hold (a resumed session continuing another file; an API error entry Claude Code
    never wrote) ends no chain: the entry is read after the one written before it, nothing is left out, and the
    split group still follows the session it continues."""
    s = Session("s2-resumed")
    s.user(HI, parent="s1-first-m0009")  # continues the earlier session's last entry, in its file
    s.respond(tool_use("t1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("t1", "Ann Lee: QX7Z9A")
    s.user("Cancel it.", parent="never-written")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t2", "cancelled")
    for e in s.entries:  # a day later
        e["timestamp"] = e["timestamp"].replace("-19T", "-20T")
    first = Session("s1-first")
    for n in range(10):
        first.user(f"turn {n}")
    folder = tmp_path / "project"
    write(folder / "s1-first.jsonl", first.entries)
    path = write(folder / "s2-resumed.jsonl", s.entries)
    assert LEFT not in to_chat(s.entries).ignored
    events, report = read(path)
    assert len(events) == 6 and not report.abandoned
    events, report = read(folder)
    assert {e["episode_id"]: e.get("meta", {}).get("group", e["episode_id"]) for e in events} == {
        "s1-first": "s1-first", "s2-resumed": "s1-first"}


def test_sam_train_s_conversion_names_the_branches_it_left(tmp_path, capsys):
    """sam-train converts a session through the same reader and says what it left out, as it says a cut line."""
    s, point = before_the_rewind()
    gone = s.user("Show me QX7Z9A.")
    s.user("Cancel QX7Z9A.", parent=point["uuid"])
    path = write(tmp_path / f"{SESSION}.jsonl", s.entries)
    events = list(iter_source_events(path, SourceOptions()))
    assert "Show me QX7Z9A." not in texts(events)
    assert f"{path}: 1 entry of branches the conversation left (a rewind, an edited prompt, a retried response: " \
           f"the agent keeps them in its session file) left out: {line(path, gone)}" in capsys.readouterr().out


def test_a_compactions_replay_written_last_is_no_branch_and_no_leaf(tmp_path):
    """A compaction can write copies of earlier entries (same time, parent and message, new uuids) after the rest:
    the last-written copy is not taken for the conversation's end (its chain would leave every later turn out);
    the copies are counted as replays and the conversation reads as without them."""
    s, _ = before_the_rewind()
    s.user("Cancel QX7Z9A.")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t2", "cancelled QX7Z9A")
    plain, _ = read(write(tmp_path / "plain" / f"{SESSION}.jsonl", s.entries))
    s.entries += [{**e, "uuid": f"copy-{n}"} for n, e in enumerate(s.entries[:3])]
    events, report = read(write(tmp_path / f"{SESSION}.jsonl", s.entries))
    assert events == plain and not report.abandoned
    assert report.ignored["repeated entries (a replay: same time, parent and message)"] == 3
