"""Reviews of ScopedMemory's line-by-line adds of an agent's session (sam_model.memory.live), found after 55.

History of an open turn: a response whose results sit between its calls (Claude Code's interleaved blocks, Codex
0.46's pairs, OpenHands' parallel calls) is read again at each add, and each new call moves every later result of the
turn to the next memory, whose text so changes at every call: an UPDATE each, holding both texts, so where the results
differ the history grew with the square of the turn (a Claude Code response of 100 reads of 90 KB, a line an add:
scoped.json 215 MB). An open turn's memory now holds one UPDATE for the turn, from its text before the turn to its
latest, revised in place at each later change.

Text past a memory's limit: a session line holding a tool result (or a call's arguments) of more than MAX_TEXT_CHARS
made the whole add fail ("data, entry 0.content has 150000 characters ... split it"), which a sidecar forwarding the
agent's lines cannot do, where the importer keeps the result whole; a chat add's result of 99,999 characters, over
it with its tool's name, failed naming "memories[2].text". Such a memory is stored cut, in the importer's
--result-limit form, and the add's notes count what was cut."""

from __future__ import annotations

import json

import pytest
from test_format_claude_code import Session, text, to_claude_code, tool_use
from test_format_codex import rollout_name, to_rollout
from test_format_codex_parallel import rollout
from test_format_gemini_cli import as_jsonl, to_gemini_cli
from test_format_headless import to_codex_exec
from test_live_adds import USER, conversation, imported, rich, stored

from sam_model.limits import MAX_ADD_ITEMS, MAX_TEXT_CHARS
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.memory.live import OpenTurn
from sam_model.memory.scopedinput import FIT_CHARS, read_add


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


def huge() -> list[dict]:
    """rich()'s conversation with a tool result of 150,000 characters and a call whose arguments hold 120,000."""
    msgs = rich()
    msgs[3] = {**msgs[3], "content": USER + "\n" + "log line\n" * 16_667}
    c3 = msgs[5]["tool_calls"][0]
    msgs[5] = {**msgs[5], "tool_calls": [{**c3, "function": {**c3["function"], "arguments": json.dumps(
        {"reservation_id": "QX7Z9A", "note": "n" * 120_000})}}]}
    return msgs


HUGE = {"claude-code": lambda: ("0b6c8d5e-live.jsonl", to_claude_code(huge())),
        "gemini-cli": lambda: ("chats/session-2026-03-30T10-00-live.jsonl", as_jsonl(to_gemini_cli(huge()))),
        "codex": lambda: (rollout_name(), to_rollout(huge())),
        "codex exec": lambda: ("codex-exec.jsonl", to_codex_exec(huge()))}


@pytest.mark.parametrize("session", HUGE)
def test_a_session_line_past_a_memorys_text_limit_is_stored_cut_and_counted(tmp_path, session):
    """Fed a line at a time (and whole), every line is stored: the memories are the importer's events, a text past
    the limit cut to it as --result-limit cuts (its count of what was cut at its end), each such memory named once in
    the notes, with its length; the conversation's states and labels are the importer's (traced on whole texts)."""
    name, lines = HUGE[session]()
    events = imported(tmp_path, name, lines)
    long = {f"me//s#{e['step']}": len(e["text"]) for e in events if len(e["text"]) > FIT_CHARS}
    assert len(long) == 2
    for batches in ([[x] for x in lines], [lines]):
        memory, notes = ScopedMemory(HashingEncoder(16)), []
        for batch in batches:
            notes += memory.add(batch, user_id="me", run_id="s").get("notes", [])
        got = stored(memory)
        assert [(s, k) for s, k, _ in got] == [(e["step"], e["kind"]) for e in events]
        assert [t for _, _, t in got] == [e["text"] if len(e["text"]) <= FIT_CHARS else cut(e["text"], t)
                                          for e, (_, _, t) in zip(events, got)]
        assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]
        assert sorted(n["reason"].split("'")[1] for n in notes) == sorted(long)
        for i, n in long.items():
            assert f"its text has {n:,} characters" in next(x["reason"] for x in notes if f"'{i}'" in x["reason"])


def cut(whole: str, stored: str) -> str:
    """``stored`` where it is ``whole`` cut as the importer's --result-limit cuts, within the limit less the
    record's heading room (else ``whole``): its first N characters, then ' ...[+M chars]' counting the rest."""
    head, _, tail = stored.rpartition(" ...[+")
    ok = len(stored) <= FIT_CHARS and whole.startswith(head) and tail == f"{len(whole) - len(head)} chars]"
    return stored if ok and len(head) > FIT_CHARS - 40 else whole


@pytest.mark.parametrize("n", [3, 4])
def test_a_cut_memory_a_later_call_moves_is_updated_not_refused(n):
    """Claude Code's results sit between its calls, so each later call of the response moves the results after it to
    the next memory: a result cut to exactly the limit was taken by its add, but the update of the add that moved it
    was refused ('memory.text has 100008 characters'), the record's '[kind] ' heading putting it over, and the
    sidecar's line was lost (found by review). Every line is taken, and every stored record is within the limit."""
    memory = ScopedMemory(HashingEncoder(16))
    for x in reads(n, 150_000):
        memory.add([x], user_id="me", run_id="s")
    texts = [memory.store.get(i).text for i in memory.store.ids()]  # the records, heading and all
    assert sum(len(t) > FIT_CHARS - 40 for t in texts) == n and all(len(t) <= MAX_TEXT_CHARS for t in texts)


def test_a_served_adds_check_takes_a_long_session_line_and_refuses_a_long_chat_message():
    """sam-serve checks an add with read_add before it logs it: a session line past the limit is taken (the add
    cuts it), a chat message's own content past it is still refused (its caller can split it)."""
    assert read_add(to_claude_code(huge()), "messages", MAX_ADD_ITEMS)[0]
    with pytest.raises(ValueError, match=r"^messages\[0\]\.content has 150001 characters, more than the limit"):
        read_add([{"role": "user", "content": "x" * 150_001}], "messages", MAX_ADD_ITEMS)


def test_a_chat_adds_result_over_the_limit_with_its_tools_name_is_stored_cut_and_noted():
    """A tool result of 99,999 characters is within the limit, its memory (the tool's name, then the result) not:
    the store refused the add naming 'memories[2].text', which the add has no field of."""
    memory = ScopedMemory(HashingEncoder(16))
    out = memory.add([{"role": "user", "content": "read the log"},
                      {"role": "assistant", "content": None, "tool_calls": [
                          {"id": "c", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}]},
                      {"role": "tool", "tool_call_id": "c", "content": "y" * 99_999}], user_id="me")
    assert len(out["results"][2]["memory"]) <= MAX_TEXT_CHARS and out["results"][2]["memory"].endswith(" chars]")
    assert [n["reason"].split("'")[1] for n in out["notes"]] == [out["results"][2]["id"]]


def codex_no_contexts(version: str) -> list[dict]:
    """Ann's session as a Codex of ``version`` writes it without turn_context lines (before openai/codex#3444 added
    them): each call with its output, the version's meta marking its requests."""
    return rollout(version, "pairs", contexts=False)


@pytest.mark.parametrize("lines", [lambda: codex_no_contexts("0.39.0"), lambda: codex_no_contexts("0.46.0"),
                                   lambda: to_rollout(rich())], ids=["0.39", "0.46", "0.58 chat"])
def test_a_codex_rollout_of_marked_requests_without_turn_contexts_closes_its_turns_where_the_importer_does(
        tmp_path, lines):
    """A rollout of 0.3x-0.77 is read by requests from its first turn_context line, in file order before it: one
    without any is read as a later Codex's, a turn ending at each message or output. Its open turn closed only at a
    turn_context, so it never closed: each add read every line again (up to the cap). It is now the lines since the
    last message or call after an output (an output stays with its call, which its shown lines are read by), as in
    a later Codex's rollout, and the memories, states and labels are the importer's."""
    lines = lines()
    memory = ScopedMemory(HashingEncoder(16))
    kinds = [x["payload"]["type"] if x["type"] == "response_item" else "" for x in lines]
    items = [j for j, k in enumerate(kinds) if k == "message" or k.endswith(("_call", "_output"))]
    ends = [j for j in items if j and (kinds[j] == "message" or kinds[j].endswith("_call")
                                       and kinds[max([0, *(i for i in items if i < j)])].endswith("_output"))]
    for i, x in enumerate(lines):
        memory.add([x], user_id="me", run_id="s")
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
        assert memory._open["me//s"].lines == lines[max([0, *(j for j in ends if j <= i)]):i + 1]
    events = imported(tmp_path, rollout_name(), lines)
    assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def test_a_codex_rollouts_turn_context_after_items_in_file_order_begins_reading_by_requests():
    """Items before the first turn_context close turns as a later Codex's do; from it on only a turn_context does
    (a request's parallel calls one turn, its outputs read after its last call), which the open turn's saved facts
    keep (``begun``, checked on load): the memories are the whole rollout's."""
    lines = rollout("0.46.0", "pairs")
    first = next(j for j, x in enumerate(lines) if x["type"] == "turn_context")
    memory = ScopedMemory(HashingEncoder(16))
    for i, x in enumerate(lines):
        memory.add([x], user_id="me", run_id="s")
        if i < first:
            assert len(memory._open["me//s"].lines) <= 2  # cut at each message
    saved = memory._open["me//s"].state_dict()
    assert saved["facts"]["begun"] is True
    with pytest.raises(ValueError, match=r"^open turn field 'facts\.begun' has the wrong type$"):
        OpenTurn.from_state_dict({**saved, "facts": {**saved["facts"], "begun": "yes"}})
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert stored(memory) == stored(whole) and conversation(memory) == conversation(whole)


@pytest.mark.parametrize("capped", [False, True])
def test_an_add_learns_and_cuts_the_open_turns_lines_once(monkeypatch, capped):
    """live.over worked out the facts and the cut of the open turn and the add's lines to measure the turn, then the
    read worked them out again: each add now does so once (twice where the cap closes the turn: then over the add's
    lines alone), the memories as before."""
    from sam_model.memory import live

    lines = rollout("0.46.0", "pairs")
    if capped:
        monkeypatch.setattr(live, "MAX_OPEN_LINES", 3)
    calls = {"learn": 0, "split": 0}

    def counted(name: str, f):
        def run(*args):
            calls[name] += 1
            return f(*args)
        return run
    for name in calls:
        monkeypatch.setattr(live, name, counted(name, getattr(live, name)))
    memory, closed = ScopedMemory(HashingEncoder(16)), 0
    for x in lines:
        before = dict(calls)
        out = memory.add([x], user_id="me", run_id="s")
        capped_here = any("open turn would hold" in n["reason"] for n in out.get("notes", []))
        closed += capped_here
        assert {k: calls[k] - before[k] for k in calls} == dict.fromkeys(calls, 1 + capped_here)
    assert (closed > 0) == capped
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert capped or stored(memory) == stored(whole)


def test_an_open_turns_entry_dropped_where_the_text_came_back_leaves_the_entries_before_it_alone():
    """A memory's text back where the turn found it drops the turn's UPDATE; a later change of the turn logs a new
    one rather than revising the memory's entry from before the turn (an update by its user)."""
    memory = ScopedMemory(HashingEncoder(16))
    i = "me//s#0"
    memory._log(i, "ADD", None, "a")
    memory._log(i, "UPDATE", "a", "b")  # the user's update, before the turn
    logged = {memory._log(i, "UPDATE", "b", "c", again=set())}
    assert memory._log(i, "UPDATE", "c", "b", again=logged) is None  # back to b: the turn's entry dropped
    assert [h["id"] for h in memory._history[i]] == [f"{i}@0", f"{i}@1"]
    memory._log(i, "UPDATE", "b", "d", again=logged)  # the dropped entry's id still among them
    assert [(h["old_memory"], h["new_memory"]) for h in memory._history[i]] == [(None, "a"), ("a", "b"), ("b", "d")]


def test_a_history_entry_without_an_id_does_not_break_the_next_change():
    """Since the open turn revises the entries it logged, each change read the memory's last entry's "id": an entry
    a hand-edited save holds without one was a bare KeyError on the next update of that memory."""
    memory = ScopedMemory(HashingEncoder(16))
    i = memory.add("my order is A-17", user_id="me")["results"][0]["id"]
    memory._history[i][-1].pop("id")
    memory.update(i, "my order is A-18")
    assert [h["event"] for h in memory.history(i)] == ["ADD", "UPDATE"]
