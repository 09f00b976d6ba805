"""A sidecar that forwards an agent's session lines to ScopedMemory.add retries an add whose answer it lost: the same
lines come twice. Claude Code's carry a uuid (tests/test_live_adds.py); Codex's and codex exec's carry none, and were
stored twice. A line that says it was written once (a rollout line's time to the millisecond, a call's or an
output's call_id, codex exec's item id in its run) is now read once where the open turn holds it, as the importer
reads the file; a genuine repeat (the same command run again: a new call_id, a new time; a resumed run's events from
item_0 again; a bare message of the layout before the wrapper, which says nothing) is read as the agent wrote it."""

from __future__ import annotations

import json

import pytest
from test_format_codex import line, message, meta, rollout_name, to_rollout
from test_format_headless import to_codex_exec
from test_live_adds import call, conversation, fed, imported, rich, stored

from sam_model.memory import HashingEncoder, ScopedMemory


def timed(lines: list[dict]) -> list[dict]:
    """Rollout lines with the times Codex writes, a millisecond apart (the tests' lines share one)."""
    return [{**x, "timestamp": f"2025-10-29T00:59:{38 + k // 1000:02d}.{k % 1000:03d}Z"} if "timestamp" in x else x
            for k, x in enumerate(lines)]


def twice(lines: list[dict], size: int) -> list[list[dict]]:
    """The adds of ``lines`` ``size`` at a time, each sent twice; a codex exec run's thread.started alone (an add
    holding it is read again: a resumed run prints the same, test_a_genuine_repeat_is_stored_as_the_importer_reads_it)."""
    batches: list[list[dict]] = []
    for x in lines:
        if x.get("type") == "thread.started" or not batches or batches[-1][0].get("type") == "thread.started" \
                or len(batches[-1]) == size:
            batches.append([x])
        else:
            batches[-1].append(x)
    return [b for b in batches for _ in range(2)]


SESSIONS = {
    "codex": lambda: (rollout_name(), timed(to_rollout(rich()))),
    "codex exec": lambda: ("codex-exec.jsonl", to_codex_exec(rich())),
}


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("session", SESSIONS)
def test_an_add_sent_again_stores_nothing_more(tmp_path, session, size):
    """Each add (a line, or up to five) sent twice: before, every memory of the session was stored twice."""
    name, lines = SESSIONS[session]()
    events = imported(tmp_path, name, lines)
    memory = fed(lines, twice(lines, size))
    assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def lost_every_other(lines: list[dict], size: int) -> list[list[dict]]:
    """The adds of a sidecar that sends every line not yet answered: ``size`` at a time (as :func:`twice` cuts them),
    every other answer lost, so the next add is the last one's lines and those written since."""
    batches = twice(lines, size)[::2]
    return [b if k % 2 == 0 else batches[k - 1] + b for k, b in enumerate(batches)]


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("session", SESSIONS)
def test_an_add_sent_again_with_the_lines_written_since_stores_them_once(tmp_path, session, size):
    """An add whose answer was lost, sent again opening the next add: only its calls and outputs were told by their
    ids, so its messages (the user's words, the agent's) were stored twice."""
    name, lines = SESSIONS[session]()
    events = imported(tmp_path, name, lines)
    memory = fed(lines, lost_every_other(lines, size))
    assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def test_a_call_and_its_output_sent_again_later_are_read_once():
    """A call's line and its output's, sent again after the next line (a retry that came late): told by the call_id
    the open turn holds."""
    name, lines = SESSIONS["codex"]()
    calls = [k for k, x in enumerate(lines) if x["payload"].get("type") == "function_call"]
    k = calls[0]
    once = fed(lines, [[x] for x in lines])
    late = fed(lines, [[x] for x in lines[:k + 3]] + [[lines[k], lines[k + 1]]] + [[x] for x in lines[k + 3:]])
    assert stored(late) == stored(once) and conversation(late) == conversation(once)


def repeated_rollout() -> list[dict]:
    """The agent runs the same command twice (a new call_id each time, the same output) and the user says "yes"
    twice: genuine repeats, each its own line."""
    r = lambda item: line("response_item", item)  # noqa: E731
    out = json.dumps({"output": "booked", "metadata": {"exit_code": 0}})
    lines = [meta(), r(message("user", "Is ZZ1234 still booked? Check it twice."))]
    for n, said in enumerate(["yes", "yes"]):
        lines += [r({"type": "function_call", "name": "shell", "call_id": f"call_{n}",
                     "arguments": json.dumps({"command": ["bash", "-lc", "cat bookings/ZZ1234"]})}),
                  r({"type": "function_call_output", "call_id": f"call_{n}", "output": out}),
                  r(message("assistant", "It is booked. Check again?")), r(message("user", said))]
    return timed(lines)


def resumed_exec() -> list[dict]:
    """codex exec killed while its first command ran, then codex exec resume of the same thread: the second run's
    item ids start from item_0 again, its first command the same as the first's."""
    cmd = {"id": "item_0", "type": "command_execution", "command": "bash -lc 'cat bookings/ZZ1234'",
           "aggregated_output": "", "exit_code": None, "status": "in_progress"}
    start = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
             {"type": "turn.started"}, {"type": "item.started", "item": cmd}]
    return [*start, *start,
            {"type": "item.completed", "item": {**cmd, "aggregated_output": "booked\n", "exit_code": 0,
                                                "status": "completed"}},
            {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Still booked."}},
            {"type": "turn.completed", "usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 9}}]


@pytest.mark.parametrize(("name", "lines", "cut"), [(rollout_name(), repeated_rollout(), 6),
                                                   ("exec.jsonl", resumed_exec(), 3)])
def test_a_genuine_repeat_is_stored_as_the_importer_reads_it(tmp_path, name, lines, cut):
    """Added a line at a time, or in two adds (the resumed run's first three events an add equal to the one before),
    the repeats are stored as the file holds them."""
    events = imported(tmp_path, name, lines)
    calls = [e["text"] for e in events if e["kind"] == "action"]
    assert len(calls) == 2 and calls[0] == calls[1]  # the same command, run twice
    for batches in ([[x] for x in lines], [b for b in (lines[:cut], lines[cut:2 * cut], lines[2 * cut:]) if b]):
        memory = fed(lines, batches)
        assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]


def test_a_bare_message_of_the_old_layout_says_nothing_and_is_read_again():
    """The layout before the wrapper writes items without a time: a message sent again may be the user's words
    said again, so it is read again, as the importer reads a file holding it twice; a call sent again is read once."""
    lines = to_rollout(rich(), old=True)[:-1]
    call = next(k for k, x in enumerate(lines) if x.get("type") == "function_call")
    user = next(k for k, x in enumerate(lines) if x.get("role") == "user")
    memory = ScopedMemory(HashingEncoder(16))
    for k, x in enumerate(lines):
        for _ in range(2 if k in (call, user) else 1):
            memory.add([x], user_id="me", run_id="s")
    once = fed(lines, [[x] for x in lines])
    texts, once_texts = [t for _, _, t in stored(memory)], [t for _, _, t in stored(once)]
    assert texts.count(once_texts[0]) == 1 + once_texts.count(once_texts[0])  # the user's words: twice
    assert [t for t in texts if t.startswith("CALL")] == [t for t in once_texts if t.startswith("CALL")]


def test_the_last_adds_lines_are_told_again_after_a_save_and_load(tmp_path):
    """A server checkpointed between an add and its retry (ScopedMemory.save, load): the open turn's facts keep the
    last add's digest, so the retry stores nothing more."""
    name, lines = SESSIONS["codex"]()
    once = fed(lines, [lines[:4], lines[4:]])
    memory = fed(lines, [lines[:4]])
    memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    for batch in (lines[:4], lines[4:]):
        memory.add(batch, user_id="me", run_id="s")
    assert stored(memory) == stored(once)


def late_and_partial(lines: list[dict], k: int) -> list[list[dict]]:
    """A line at a time, but for: lines k-2 and k-1 one add, line k the next, then the add before sent again (a retry
    that came late, after a later add); then lines k+1 to k+3 one add and its first line sent again alone (a sidecar
    that resent part of an add)."""
    one = lambda xs: [[x] for x in xs]  # noqa: E731
    return [*one(lines[:k - 2]), lines[k - 2:k], [lines[k]], lines[k - 2:k], lines[k + 1:k + 4], [lines[k + 1]],
            *one(lines[k + 4:])]


@pytest.mark.parametrize("session", SESSIONS)
def test_a_late_or_partial_resend_stores_nothing_more(tmp_path, session):
    """A resend of an add that is not the scope's last one, or of part of the last one: only an add equal to the last
    (or opening with all of it) was told, so the messages it held (and, past the open turn, its calls and outputs)
    were stored twice."""
    name, lines = SESSIONS[session]()
    events = imported(tmp_path, name, lines)
    for k in range(2, len(lines) - 4):
        memory = fed(lines, late_and_partial(lines, k))
        assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events], k
        assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events], k


def test_the_lines_read_are_told_again_after_a_save_and_load(tmp_path):
    """The lines a scope read are kept with its open turn's facts, so a late resend after a checkpoint is told too."""
    name, lines = SESSIONS["codex"]()
    once = fed(lines, [lines[:4], lines[4:8], lines[8:]])
    memory = fed(lines, [lines[:4], lines[4:8]])
    memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    for batch in (lines[:4], lines[8:]):
        memory.add(batch, user_id="me", run_id="s")
    assert stored(memory) == stored(once)


def test_a_resumed_runs_lines_are_read_and_its_resends_are_not():
    """codex exec resume prints a second thread.started and numbers its items from item_0 again: the second run's
    events are read as the file holds them (test_a_genuine_repeat_is_stored_as_the_importer_reads_it), and an add of
    its own lines sent again late is told within that run."""
    lines = resumed_exec()
    once = fed(lines, [[x] for x in lines])
    second = [k for k, x in enumerate(lines) if x["type"] == "thread.started"][1]
    late = fed(lines, [[x] for x in lines[:second + 3]] + [[lines[second + 3]], lines[second + 1:second + 3]]
               + [[x] for x in lines[second + 4:]])
    assert stored(late) == stored(once)


def two_turn_run() -> list[dict]:
    """A codex exec run of two turns (each ending in its turn.completed, its token counts growing)."""
    lines = to_codex_exec(rich())
    return [*lines, {"type": "turn.started"},
            {"type": "item.completed", "item": {"id": "item_7", "type": "agent_message", "text": "Anything else?"}},
            {"type": "turn.completed", "usage": {"input_tokens": 6310, "cached_input_tokens": 6016, "output_tokens": 7}}]


def exec_resends(lines: list[dict]) -> dict[str, list[list[dict]]]:
    """A sidecar's adds of a codex exec run a turn at a time (the first add its thread.started with its first turn),
    each answer lost once: sent again alone, sent again with the next turn, or sent again late (after the next)."""
    end = [k for k, x in enumerate(lines) if x["type"] == "turn.completed"][0] + 1
    first, second = lines[:end], lines[end:]
    return {"again": [first, first, second, second], "with the next": [first, first + second],
            "late": [first, second, first], "first five, then late": [first[:5], first[5:], second, first]}


@pytest.mark.parametrize("how", ["again", "with the next", "late", "first five, then late"])
def test_a_resend_opening_with_thread_started_is_read_once(tmp_path, how):
    """An add that opens with the run's thread.started, sent again (its answer lost), was read again whole: a
    thread.started began a run (the item ids told nothing more), because codex exec resume prints the same thread and
    item ids from item_0. A resend that reaches a turn.completed the scope read in its run is told (a resumed run's
    turn reads the thread before it: its token counts differ), so it stores nothing more; the resumed run is still read
    as the file holds it (test_a_genuine_repeat_is_stored_as_the_importer_reads_it)."""
    lines = two_turn_run()
    events = imported(tmp_path, "exec.jsonl", lines)
    memory = fed(lines, exec_resends(lines)[how])
    assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def test_a_resumed_run_printing_the_first_runs_opening_is_read():
    """codex exec resume after a run that finished: its thread.started and first items the same as the first run's
    (an add of them equal to the one before), its turn.completed of other counts. It is read as the file holds it, in
    adds a line or a turn at a time, where the first run's own start sent again is not (the test above)."""
    first = to_codex_exec(rich())
    again = [*first[:4], {"type": "turn.completed", "usage": {"input_tokens": 6400, "cached_input_tokens": 6016,
                                                               "output_tokens": 20}}]
    lines = [*first, *again]
    once = fed(lines, [[x] for x in lines])
    assert [t for _, _, t in stored(once)].count("Looking both up.") == 2
    for batches in ([first[:4], first[4:], again[:4], again[4:]], [first, again]):
        assert stored(fed(lines, batches)) == stored(once)


def test_a_new_run_whose_token_counts_match_the_last_runs_is_read():
    """A new codex exec run (a thread of its own, other words) whose turn.completed holds the same token counts as the
    scope's last run's (the line holds no id, only the counts): it was taken for the last run's start sent again and
    dropped whole. Only a thread.started that began the scope's last run can be sent again."""
    first = to_codex_exec(rich(), thread="019a0000-0000-7000-8000-00000000000a")
    new = to_codex_exec([{"role": "user", "content": "Cancel QX7Z9A please."},
                         {"role": "assistant", "content": "Cancelling QX7Z9A now.",
                          "tool_calls": [call("d1", "cancel", {"reservation_id": "QX7Z9A"})]},
                         {"role": "tool", "tool_call_id": "d1", "content": "cancelled"},
                         {"role": "assistant", "content": "QX7Z9A is cancelled."}],
                        thread="019b0000-0000-7000-8000-00000000000b")
    assert first[-1] == new[-1]  # the same counts, as two short runs may print
    lines = [*first, *new]
    once = fed(lines, [[x] for x in lines])
    assert "QX7Z9A is cancelled." in [t for _, _, t in stored(once)]
    assert stored(fed(lines, [first, new])) == stored(once)
    assert stored(fed(lines, [first, new, new])) == stored(once)  # the new run's own resend is still told


def test_resumed_runs_sent_a_run_at_a_time_are_read_as_the_file_holds_them():
    """codex exec, then resumed twice, each run an add: its thread.started the same as the last run's, its
    turn.completed of other counts (tests/test_format_headless.to_codex_exec printed the same counts for every
    resumed run, and the second run was taken for the first's start sent again)."""
    lines = to_codex_exec([*rich(), {"role": "user", "content": "And QX7Z9A?"},
                           {"role": "assistant", "content": "QX7Z9A was flown."}, {"role": "user", "content": "Thanks."},
                           {"role": "assistant", "content": "You're welcome."}])
    starts = [k for k, x in enumerate(lines) if x["type"] == "thread.started"]
    runs = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)])]
    assert len(runs) == 3
    assert stored(fed(lines, runs)) == stored(fed(lines, [[x] for x in lines]))
