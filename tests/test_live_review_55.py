"""Reviews of ScopedMemory's line-by-line adds of an agent's session (sam_model.memory.live), found after 54.

History: a response whose results sit between its calls (Claude Code's interleaved blocks, Codex 0.46's pairs,
OpenHands' parallel calls) is read again at each add, and each new call moves the turn's later memories a step and
revises the state and labels of others: each was logged as an UPDATE holding its old and new text even where the text
stayed (a Claude Code response of 100 reads of 90 KB alike, a line an add: scoped.json 215 MB, nearly all of it
history). Mem0's history records changes of a memory's text; an update that changes none is its NONE: no entry, no
result.

A Gemini CLI message written again as its calls finish: the open turn kept every version, its bytes the square of
the message's results; it keeps the latest, where the reader reads it.

The directory after a closed turn: an update, a delete or another add closed the open turn keeping the directory from
before it, though the turn's lines may have moved it; the next lines are read in the conversation's."""

from __future__ import annotations

import json

import pytest
from test_format_claude_code import Session, text, tool_use
from test_format_gemini_cli import AT, call, gemini, header, user
from test_live_adds import PATH_SESSIONS, ROOT, SESSIONS, conversation, fed, imported, stored
from test_live_openhands import RUNS

from sam_model.memory import HashingEncoder, ScopedMemory


def alike_reads(n: int) -> list[dict]:
    """A Claude Code response of ``n`` Reads, each result written after its call and before the next call, the
    results alike (a file read again): every later call moves the results after it to a step whose text is alike."""
    s = Session()
    s.user("read the config again")
    for i in range(n):
        s.add("assistant", {"model": "claude-sonnet-4-5", "id": "msg_reads", "type": "message", "role": "assistant",
                            "content": [tool_use(f"c{i}", "Read", {"file_path": "/work/app/config.py"})]},
              requestId="req_reads")
        s.result(f"c{i}", "DEBUG = False\n" * 20)
    s.respond(text("Read it."))
    return s.entries


LINES = {**{k: (lambda f=f: f()[1]) for k, f in SESSIONS.items()}, **{k: f for k, (f, _) in RUNS.items()},
         "claude-code, 12 alike reads": lambda: alike_reads(12)}


@pytest.mark.parametrize("session", LINES)
def test_a_line_by_line_add_logs_each_change_of_a_memorys_text_and_nothing_else(session):
    """Each add's results and the history list exactly the memories whose text the add changed (ADD: a new one,
    UPDATE: other words), each UPDATE with other old and new words; memories whose state alone moved are stored
    revised (the memories equal the whole file's) but not listed."""
    lines = LINES[session]()
    memory, before, changes, updates = ScopedMemory(HashingEncoder(16)), {}, 0, 0
    for x in lines:
        out = memory.add([x], user_id="me", run_id="s")["results"]
        now = {r["id"]: (r["memory"], r["kind"]) for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]}
        changed = {i for i, m in now.items() if before.get(i) != m}
        assert {r["id"] for r in out} == changed and all(r["memory"] == now[r["id"]][0] for r in out)
        assert [r["event"] for r in out] == ["ADD" if r["id"] not in before else "UPDATE" for r in out]
        changes, updates, before = changes + len(changed), updates + sum(i in before for i in changed), now
    entries = [h for i in before for h in memory.history(i)]
    assert len(entries) == changes and sum(h["event"] == "UPDATE" for h in entries) == updates
    assert all(h["old_memory"] != h["new_memory"] for h in entries)
    assert all(memory.history(i)[-1]["new_memory"] == words for i, (words, _) in before.items())  # words, no [kind]
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert stored(memory) == stored(whole)
    assert memory._trackers["me//s"].events == whole._trackers["me//s"].events


def test_a_response_of_alike_results_logs_one_update_a_call():
    """The reported case: results alike, so each call's move of them changes one memory's text (the first result's
    step now holds the call); the history holds an ADD a memory and an UPDATE a later call, where it held a turn's
    square of UPDATEs."""
    memory = ScopedMemory(HashingEncoder(16))
    for x in alike_reads(12):
        memory.add([x], user_id="me", run_id="s")
    entries = [h["event"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]
               for h in memory.history(r["id"])]
    assert entries.count("ADD") == 26 and entries.count("UPDATE") == 11


def gemini_versions(n: int) -> list[dict]:
    """A Gemini CLI message of ``n`` calls written again as each finishes (each version holding every result so
    far), then its words, as Gemini CLI appends them: the metadata, each record followed by a $set."""
    calls = [call(f"c{i}", "read_file", {"absolute_path": f"/home/me/app/f{i}.py"}, f"contents of f{i}: " + "x" * 300)
             for i in range(n)]
    lines = [header(), user("u1", "Read my app's files."), {"$set": {"lastUpdated": AT}}]
    for done in range(n + 1):
        lines += [gemini("g1", "", [c if i < done else {**c, "status": "executing", "result": None}
                                    for i, c in enumerate(calls)]), {"$set": {"lastUpdated": AT}}]
    return [*lines, gemini("g2", "They all read."), {"$set": {"lastUpdated": AT}}]


def test_a_gemini_message_written_again_is_held_once_in_the_open_turn(tmp_path):
    """Gemini CLI writes a message again as each of its calls finishes; the open turn kept every version, so its
    bytes (read again at each add, saved at each checkpoint) grew with the square of the message's results. It holds
    the latest version of each message now, at the place of the first (as the reader reads them): one line an id,
    within the size of the message's last version, and the memories are the importer's."""
    lines = gemini_versions(8)
    last = len(json.dumps(lines[-4]))  # the message's last version, all its results
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines:
        memory.add([x], user_id="me", run_id="s")
        turn = memory._open["me//s"].lines
        ids = [r["id"] for r in turn if "id" in r]
        assert len(ids) == len(set(ids))
        assert len(json.dumps(turn)) < 2 * last
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    want = imported(tmp_path, "chats/session-2026-03-30T10-00-live.jsonl", lines)
    assert stored(memory) == stored(whole) == [(e["step"], e["kind"], e["text"]) for e in want]
    assert conversation(memory) == conversation(whole)


def test_a_gemini_message_written_again_after_its_rewind_keeps_its_place_in_the_open_turn():
    """A rewind removes the message and places its next version anew (gemini_cli.replay): a version after a
    ``$rewindTo`` replaces the versions after the record only, not the removed one before it (which would then be
    read as rewound: the message gone, the add refused as taking memories back)."""
    read = call("c0", "read_file", {"absolute_path": "/home/me/app/f0.py"}, "zero")
    lines = [header(), user("u1", "Read f0."), gemini("g1", "first try"), {"$rewindTo": "g1"},
             gemini("g1", "", [{**read, "status": "executing", "result": None}]), gemini("g1", "", [read]),
             gemini("g2", "Done.")]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(lines[:5], user_id="me", run_id="s")
    memory.add([lines[5]], user_id="me", run_id="s")
    assert memory._open["me//s"].lines == lines[2:4] + [lines[5]]
    memory.add([lines[6]], user_id="me", run_id="s")
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert stored(memory) == stored(whole) and "CALL read_file(absolute_path=/home/me/app/f0.py)" in str(stored(whole))


@pytest.mark.parametrize("closer", ["update", "event add"])
def test_a_turn_closed_after_it_moved_the_directory_leaves_its_next_lines_in_the_new_one(closer):
    """A Codex rollout's turn_context moves the directory from the session_meta's /home/me to the project inside
    the open turn, then an update of the turn's memory (its own words again) or an add of an event closes it. The
    closed turn kept the directory from before it, so the next lines were read back in /home/me: the read of
    /home/me/invoicer/invoicer/tax.py was no longer traced to the user's invoicer/tax.py (its decision unlabelled).
    The next lines now read in the directory the closed turn left, the conversation's."""
    _, lines, _ = PATH_SESSIONS["codex, a turn_context moving the directory"]()
    moved = next(i for i, x in enumerate(lines) if x["type"] == "turn_context")
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines[:moved + 2]:  # the turn_context and the call after it: the open turn
        memory.add([x], user_id="me", run_id="s")
    first = memory.get_all(user_id="me", run_id="s", limit=None)["results"][0]
    if closer == "update":
        memory.update(first["id"], first["memory"])
    else:
        memory.add([{"kind": "system", "text": "a checkpoint of the sidecar's own"}], user_id="me", run_id="s")
    assert memory._open["me//s"].lines == [] and memory._open["me//s"].facts["cwd"] == ROOT
    for x in lines[moved + 2:]:
        memory.add([x], user_id="me", run_id="s")
    decision = next(e for e in memory._trackers["me//s"].events if e["text"] == "go ahead")
    assert decision.get("meta", {}).get("needed") == {"command": ["invoicer/tax.py"]} and decision["useful_memory_steps"]
    if closer == "update":
        assert conversation(memory) == conversation(fed(lines, [lines]))
