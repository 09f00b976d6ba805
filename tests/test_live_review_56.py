"""Reviews of ScopedMemory's line-by-line adds of an agent's session (sam_model.memory.live), found after 55.

History of an open turn: a response whose results sit between its calls (Claude Code's interleaved blocks, Codex
0.46's pairs, OpenHands' parallel calls) is read again at each add, and each new call moves every later result of the
turn to the next memory, whose text so changes at every call: an UPDATE each, holding both texts, so where the results
differ the history grew with the square of the turn (a Claude Code response of 100 reads of 90 KB, a line an add:
scoped.json 215 MB). An open turn's memory now holds one UPDATE for the turn, from its text before the turn to its
latest, revised in place at each later change."""

from __future__ import annotations

import pytest
from test_format_claude_code import Session, text, tool_use
from test_live_adds import conversation, stored

from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.memory.live import OpenTurn


def reads(n: int, size: int = 400) -> list[dict]:
    """A Claude Code response of ``n`` Reads of different files, each result written after its call and before the
    next call (one message.id), then its words."""
    s = Session()
    s.user("read the app's modules")
    for i in range(n):
        s.add("assistant", {"model": "claude-sonnet-4-5", "id": "msg_reads", "type": "message", "role": "assistant",
                            "content": [tool_use(f"c{i}", "Read", {"file_path": f"/work/app/m{i}.py"})]},
              requestId="req_reads")
        s.result(f"c{i}", (f"VALUE_{i} = {i}\n" * size)[:size])
    s.respond(text("Read them."))
    return s.entries


def fed(lines: list[dict], tmp_path=None) -> tuple[ScopedMemory, set[str]]:
    """The lines added one at a time (saved and loaded after each where ``tmp_path``), and every text an add's
    results gave."""
    memory, said = ScopedMemory(HashingEncoder(16)), set()
    for x in lines:
        said |= {r["memory"] for r in memory.add([x], user_id="me", run_id="s")["results"]}
        if tmp_path is not None:
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    return memory, said


@pytest.mark.parametrize("saved", [False, True])
def test_an_open_turns_history_grows_with_its_texts_not_their_square(tmp_path, saved):
    """24 differing results moved at each call: the history holds each text a few times, not once a move (a result
    is added twice: with its own line, and moved into the memory the next call's line adds; an open turn's memory
    holds its ADD and one UPDATE, from its text before the turn to its latest); each memory's entries chain (each
    UPDATE's old text the text before it), none of like old and new text, the last its text now; the memories are
    the whole file's."""
    lines = reads(24)
    memory, said = fed(lines, tmp_path if saved else None)
    now = {r["id"]: r["memory"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]}
    logged = sum(len(e["old_memory"] or "") + len(e["new_memory"]) for i in now for e in memory.history(i))
    assert logged <= 5 * sum(map(len, said))
    for i, words in now.items():
        h = memory.history(i)
        assert h[0]["event"] == "ADD" and all(e["event"] == "UPDATE" for e in h[1:]) and len(h) <= 2
        assert [e["old_memory"] for e in h] == [None, *(e["new_memory"] for e in h[:-1])]
        assert all(e["old_memory"] != e["new_memory"] for e in h) and h[-1]["new_memory"] == words
        assert [e["id"] for e in h] == [f"{i}@{n}" for n in range(len(h))]
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert stored(memory) == stored(whole) and conversation(memory) == conversation(whole)


def test_each_add_still_lists_every_memory_whose_text_it_changed():
    """The add's results are not coalesced: each lists the memories whose text that add changed, by their text now."""
    memory, before = ScopedMemory(HashingEncoder(16)), {}
    for x in reads(6):
        out = memory.add([x], user_id="me", run_id="s")["results"]
        now = {r["id"]: r["memory"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]}
        assert {(r["id"], r["memory"]) for r in out} == {(i, m) for i, m in now.items() if before.get(i) != m}
        before = now


def test_an_update_closes_the_turn_so_its_entry_is_never_revised():
    """A user's update of a memory of the open turn closes the turn: the UPDATE it logs, and the one the turn logged
    before it, stay as they were when the next lines change the memory again."""
    lines = reads(4)
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines[:6]:
        memory.add([x], user_id="me", run_id="s")
    moved = next(r["id"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]
                 if len(memory.history(r["id"])) == 2)
    memory.update(moved, "my own words", user_id="me", run_id="s")
    kept = memory.history(moved)
    for x in lines[6:]:
        memory.add([x], user_id="me", run_id="s")
    assert memory.history(moved)[:3] == kept and [e["event"] for e in kept] == ["ADD", "UPDATE", "UPDATE"]


def test_a_saved_open_turns_logged_ids_are_checked_and_a_save_before_them_loads():
    """``logged`` is new in a saved open turn: one saved before it loads with none; one of another type is named."""
    memory = ScopedMemory(HashingEncoder(16))
    for x in reads(2)[:4]:
        memory.add([x], user_id="me", run_id="s")
    saved = memory._open["me//s"].state_dict()
    assert saved["logged"] and OpenTurn.from_state_dict(saved) == memory._open["me//s"]
    assert OpenTurn.from_state_dict({k: v for k, v in saved.items() if k != "logged"}).logged == []
    for bad in ("me//s#2", [2], [None]):
        with pytest.raises(ValueError, match=r"^open turn field 'logged' "):
            OpenTurn.from_state_dict({**saved, "logged": bad})
