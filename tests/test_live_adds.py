"""An agent's own session file fed to ScopedMemory.add as the agent writes it (a sidecar tailing it: README "Codex CLI
and Claude Code"), a line an add, stores what the importer makes of the file: the same memories, in the same order,
with the same states, so a search by the next call ranks them alike. Each reader needs lines an add of one line
lacks: a Claude Code response is a line per content block (one message.id), a Gemini CLI message is written again as
its calls finish, a Codex rollout's session_meta (its version: parallel calls before #6691) comes in the first add
only, a codex exec call's item.started and item.completed come apart. ScopedMemory keeps the scope's open turn (the
lines since the last one that closes the earlier turns: sam_model.memory.live) and reads it again with each add."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from test_format_claude_code import Session, text, to_claude_code, tool_use
from test_format_codex import ENV, POLICY, line, message, meta, rollout_name, to_rollout
from test_format_codex_parallel import rollout
from test_format_gemini_cli import as_jsonl, to_gemini_cli
from test_format_headless import to_codex_exec

from sam_model.data.transcripts import ImportReport, iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory

HI = "I'm ann_lee_123: cancel my reservation ZZ1234, and are there flights from JFK today?"
USER = json.dumps({"name": "Ann Lee", "reservations": ["QX7Z9A", "ZZ1234"]})


def call(i: str, name: str, args: dict) -> dict:
    return {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def rich() -> list[dict]:
    """A conversation with words before two parallel calls, whose next call traces to both the user and a result."""
    return [{"role": "system", "content": POLICY}, {"role": "user", "content": HI},
            {"role": "assistant", "content": "Looking both up.", "tool_calls": [
                call("c1", "get_user", {"user_id": "ann_lee_123"}), call("c2", "list_flights", {"origin": "JFK"})]},
            {"role": "tool", "tool_call_id": "c1", "content": USER},
            {"role": "tool", "tool_call_id": "c2", "content": "no flights today"},
            {"role": "assistant", "content": None, "tool_calls": [call("c3", "get_reservation",
                                                                        {"reservation_id": "QX7Z9A"})]},
            {"role": "tool", "tool_call_id": "c3", "content": "QX7Z9A: economy, flown"},
            {"role": "assistant", "content": None, "tool_calls": [call("c4", "cancel", {"reservation_id": "ZZ1234"})]},
            {"role": "tool", "tool_call_id": "c4", "content": "cancelled"},
            {"role": "assistant", "content": "ZZ1234 is cancelled; no flights from JFK today."}]


def claude_interleaved() -> list[dict]:
    """Claude Code runs a call while the response still streams: its result is written between the response's
    lines (the words, call A, A's result, call B, B's result), all of one message.id."""
    s = Session()
    s.user(HI)
    mid = "msg_live_001"

    def block(b: dict) -> None:
        s.add("assistant", {"model": "claude-sonnet-4-5", "id": mid, "type": "message", "role": "assistant",
                            "content": [b]}, requestId="req_live")
    block(text("Looking both up."))
    block(tool_use("c1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("c1", USER)
    block(tool_use("c2", "list_flights", {"origin": "JFK"}))
    s.result("c2", "no flights today")
    s.respond(tool_use("c4", "cancel", {"reservation_id": "ZZ1234"}))
    s.result("c4", "cancelled")
    s.respond(text("Done."))
    return s.entries


def claude_compacted() -> list[dict]:
    """A /compact mid-session: its boundary, then the summary the model continued from (counted by the importer,
    which reads the turns it restates; an add of the summary alone stored it as a user turn)."""
    s = Session()
    s.user(HI)
    s.respond(tool_use("c1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("c1", USER)
    s.respond(text("Found you."))
    s.add("system", None, subtype="compact_boundary", content="Conversation compacted",
          logicalParentUuid=s.entries[-1]["uuid"])
    s.user("Summary: ann_lee_123 holds QX7Z9A and ZZ1234", isCompactSummary=True)
    s.user("cancel ZZ1234")
    s.respond(tool_use("c4", "cancel", {"reservation_id": "ZZ1234"}))
    s.result("c4", "cancelled")
    return s.entries


SESSIONS = {
    "claude-code compaction": lambda: ("0b6c8d5e-live.jsonl", claude_compacted()),
    "claude-code": lambda: ("0b6c8d5e-live.jsonl", to_claude_code(rich())),
    "claude-code interleaved": lambda: ("0b6c8d5e-live.jsonl", claude_interleaved()),
    "gemini-cli": lambda: ("chats/session-2026-03-30T10-00-live.jsonl", as_jsonl(to_gemini_cli(rich()))),
    "codex": lambda: (rollout_name(), to_rollout(rich())),
    "codex 0.46 parallel calls": lambda: (rollout_name(), rollout("0.46.0", "pairs")),
    "codex exec": lambda: ("codex-exec.jsonl", to_codex_exec(rich())),
}


def imported(tmp_path: Path, name: str, lines: list[dict]) -> list[dict]:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return list(iter_transcript_events(path, report=ImportReport()))


def stored(memory: ScopedMemory) -> list[tuple]:
    got = sorted(memory.get_all(user_id="me", run_id="s", limit=None)["results"], key=lambda r: r["step"])
    return [(r["step"], r["kind"], r["memory"]) for r in got]


def ranked(memory: ScopedMemory, calls: list[dict]) -> list[list[str]]:
    return [[r["id"] for r in memory.search("", call=c, user_id="me", run_id="s", limit=50)["results"]]
            for c in calls]


def conversation(memory: ScopedMemory) -> list[tuple]:
    """Each memory's state and labels as the scope's conversation holds them (what a search by call traces)."""
    return [(e["state"], e.get("useful_memory_steps") or []) for e in memory._trackers["me//s"].events]


def fed(lines: list[dict], batches: list[list[dict]]) -> ScopedMemory:
    memory = ScopedMemory(HashingEncoder(16))
    for batch in batches:
        memory.add(batch, user_id="me", run_id="s")
    return memory


NEXT = [{"name": "cancel", "arguments": {"reservation_id": "QX7Z9A"}},
        {"name": "get_user", "arguments": {"user_id": "ann_lee_123"}}]


@pytest.mark.parametrize("session", SESSIONS)
def test_a_session_added_line_by_line_is_the_memories_and_the_ranking_of_the_whole_file(tmp_path, session):
    name, lines = SESSIONS[session]()
    whole, by_line = fed(lines, [lines]), fed(lines, [[x] for x in lines])
    events = imported(tmp_path, name, lines)
    want = [(e["step"], e["kind"], e["text"]) for e in events]
    assert stored(whole) == want
    assert stored(by_line) == want
    decided = [(e["state"], e.get("useful_memory_steps") or []) for e in events]  # the states the memories hold
    assert conversation(whole) == decided
    assert conversation(by_line) == decided
    calls = NEXT if "0.46" not in session else [{"name": "cancel", "arguments": {"reservation_id": "ZZ1234"}}]
    assert ranked(by_line, calls) == ranked(whole, calls)
    for c in calls:
        assert by_line.live_state(user_id="me", run_id="s", call=c) == whole.live_state(user_id="me", run_id="s",
                                                                                        call=c)


@pytest.mark.parametrize("session", ["claude-code interleaved", "gemini-cli", "codex 0.46 parallel calls"])
def test_the_open_turn_is_saved_with_the_scope_and_goes_with_its_memories(tmp_path, session):
    """A memory saved and loaded mid-turn (a server's checkpoint, then a restart) goes on with the turn's lines as
    if it had not stopped; delete_all takes the open turn with the conversation, so the scope starts afresh."""
    name, lines = SESSIONS[session]()
    whole = fed(lines, [lines])
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines:
        memory.add([x], user_id="me", run_id="s")
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert stored(memory) == stored(whole)
    assert conversation(memory) == conversation(whole)
    memory.delete_all(user_id="me", run_id="s")
    assert memory._open == {} and memory._trackers == {}
    for x in lines:
        memory.add([x], user_id="me", run_id="s")
    assert [t for _, _, t in stored(memory)] == [t for _, _, t in stored(whole)]


def test_a_gemini_message_written_again_after_a_later_one_is_refused_in_one_line():
    """Gemini CLI writes a message again while it is the newest; one written again after a later message began
    cannot replace what an earlier add stored of it (its turn closed): refused, naming the line and what to do."""
    lines = as_jsonl(to_gemini_cli(rich()))
    memory = fed(lines, [[x] for x in lines])
    first = next(x for x in lines if x.get("type") == "gemini" and x.get("toolCalls"))
    with pytest.raises(ValueError, match=r"^data\[0\]: Gemini CLI message 'm2' written again after a later message"):
        memory.add([first], user_id="me", run_id="s")


# The working directory a format tells on its first line only: Gemini CLI's project root, recovered from the
# metadata line's projectHash by the first call naming an absolute path under it, and Codex's session_meta cwd (a
# rollout without turn_context lines tells it nowhere else). Fed a line at a time, the later adds lack that line.
ROOT = "/home/me/invoicer"
TAX = f"{ROOT}/invoicer/tax.py"


def paths_chat(read: dict) -> list[dict]:
    """The user names invoicer/tax.py after a listing of the root, then says go ahead (the read's decision event,
    which says no path), and the agent reads it by its absolute path (``read``: the call's name and arguments),
    which the importer traces to the user's turn."""
    return [{"role": "user", "content": "Totals are off by a cent; look at the project"},
            {"role": "assistant", "content": None, "tool_calls": [call("l1", "list_directory", {"dir_path": ROOT})]},
            {"role": "tool", "tool_call_id": "l1", "content": "[DIR] invoicer"},
            {"role": "user", "content": "the rounding is in invoicer/tax.py"},
            {"role": "user", "content": "go ahead"},
            {"role": "assistant", "content": None, "tool_calls": [call("r1", read["name"], read["arguments"])]},
            {"role": "tool", "tool_call_id": "r1", "content": "return round(x)"},
            {"role": "assistant", "content": "Found it."}]


GEMINI_READ = {"name": "read_file", "arguments": {"absolute_path": TAX}}
CODEX_READ = {"name": "shell", "arguments": {"command": ["bash", "-lc", f"sed -n '1,80p' {TAX}"]}}


def codex_paths(contexts: str, policy: str | None = None, cwd: str = ROOT) -> list[dict]:
    """The session as a Codex rollout whose session_meta's cwd is ``cwd``, with no instructions (``policy``: the
    meta's, whose system message the importer tells the directory on), then the environment context Codex writes
    as a user message (read as policy); ``contexts``: "none" (no turn_context line), "after" (one, whose cwd is the
    root, after the user's first words, as a Codex after 0.77 writes one a turn) or "marked" (0.46: one before each
    model request)."""
    _, *items = to_rollout(paths_chat(CODEX_READ))
    items.insert(0, line("response_item", message("user", ENV.replace("/home/agent/airline", cwd))))
    head = meta(cwd=cwd, cli_version="0.46.0" if contexts == "marked" else "0.90.0", policy=policy)
    turn = line("turn_context", {"cwd": ROOT, "approval_policy": "on-request", "model": "gpt-5-codex"})
    if contexts == "after":
        items.insert(2, turn)
    elif contexts == "marked":
        items = [x for it in items for x in ([turn] if it["payload"].get("role") != "user" and it["payload"]["type"]
                                             in ("message", "function_call") else []) + [it]]
    return [head, *items]


PATH_SESSIONS = {
    "gemini-cli": lambda: ("chats/session-2026-03-30T10-00-root.jsonl", as_jsonl(
        to_gemini_cli(paths_chat(GEMINI_READ)), projectHash=hashlib.sha256(ROOT.encode()).hexdigest()), GEMINI_READ),
    "codex, session_meta's cwd alone": lambda: (rollout_name(), codex_paths("none"), CODEX_READ),
    "codex with instructions": lambda: (rollout_name(), codex_paths("none", POLICY), CODEX_READ),
    "codex with turn_context lines": lambda: (rollout_name(), codex_paths("after"), CODEX_READ),
    "codex, a turn_context moving the directory": lambda: (rollout_name(), codex_paths("after", cwd="/home/me"),
                                                           CODEX_READ),
    "codex 0.46, turn_context before each request": lambda: (rollout_name(), codex_paths("marked"), CODEX_READ),
}


@pytest.mark.parametrize("session", PATH_SESSIONS)
def test_a_working_directory_told_on_the_first_line_holds_for_the_lines_added_after_it(tmp_path, session):
    """The importer traces the read of /home/me/invoicer/invoicer/tax.py to the user's invoicer/tax.py (the root
    known from the first line); added a line at a time, the adds after the first lacked that line, so the read
    labelled nothing and a search by the next read ranked as no decision point. The scope's open turn now carries
    what the first line says (sam_model.memory.live: the facts), saved and loaded with it between lines."""
    name, lines, read = PATH_SESSIONS[session]()
    events = imported(tmp_path, name, lines)
    assert any(e.get("meta", {}).get("needed") == {next(iter(read["arguments"])): ["invoicer/tax.py"]}
               for e in events)  # the importer traces the relative part: the case this test is about
    whole, by_line = fed(lines, [lines]), fed(lines, [[x] for x in lines])
    saved = ScopedMemory(HashingEncoder(16))
    for x in lines:
        saved.add([x], user_id="me", run_id="s")
        saved = ScopedMemory.load(saved.save(tmp_path / "m"), HashingEncoder(16))
    decided = [(e["state"], e.get("useful_memory_steps") or []) for e in events]
    for memory in (whole, by_line, saved):
        assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
        assert conversation(memory) == decided
        assert ranked(memory, [read]) == ranked(whole, [read])
        state = memory.live_state(user_id="me", run_id="s", call=read)
        assert state == whole.live_state(user_id="me", run_id="s", call=read)
        assert state.to_json()["uncertainty_flags"] == [next(iter(read["arguments"]))]


def test_a_saved_open_turns_facts_of_another_type_are_named():
    """A saved open turn whose carried directory or first line is of another type (a hand-edited checkpoint) is
    refused naming the field, not read as the session's own line."""
    from sam_model.memory.live import OpenTurn

    good = {"format": "codex", "lines": [], "start": 0, "mark": {}, "recorder": None, "facts": {"cwd": ROOT}}
    assert OpenTurn.from_state_dict(good).facts == {"cwd": ROOT}
    for k, bad in (("cwd", 5), ("meta", "session_meta"), ("ids", "m1")):
        with pytest.raises(ValueError, match=rf"^open turn field 'facts\.{k}' has the wrong type$"):
            OpenTurn.from_state_dict({**good, "facts": {k: bad}})


def test_a_saved_open_turns_links_or_refused_uuids_of_another_shape_are_named():
    """Found by review: facts.links and facts.refused were checked to be lists only, so a hand-edited or damaged
    save with a link that is no entry (no uuid) loaded, and the next add of a branching line failed with a KeyError
    deep in live.left_behind. Refused at load, naming the field."""
    from sam_model.memory.live import OpenTurn

    good = {"format": "claude-code", "lines": [], "start": 0, "mark": {}, "recorder": None,
            "facts": {"links": [{"type": "user", "uuid": "u1"}], "refused": ["u2"]}}
    assert OpenTurn.from_state_dict(good).facts == good["facts"]
    for k, bad in (("links", [{"type": "user"}]), ("links", ["u1"]), ("refused", [3])):
        with pytest.raises(ValueError, match=rf"^open turn field 'facts\.{k}' must be a list of Claude Code"):
            OpenTurn.from_state_dict({**good, "facts": {k: bad}})


@pytest.mark.parametrize("session", ["claude-code interleaved", "gemini-cli", "codex 0.46 parallel calls"])
def test_a_line_the_caller_changes_after_adding_it_does_not_change_the_open_turn(tmp_path, session):
    """Found by review: the open turn held the caller's own line dicts, so a sidecar that reuses (clears and refills)
    its dict for the next line rewrote the lines the scope reads again at every add. The scope keeps its own copy."""
    import copy

    name, lines = SESSIONS[session]()
    memory = ScopedMemory(HashingEncoder(16))
    for x in map(copy.deepcopy, lines):  # one copy a line (a fixture may hold one dict at two lines)
        memory.add([x], user_id="me", run_id="s")
        x.clear()  # the caller reuses its dict
        x.update({"garbage": True})
    assert stored(memory) == stored(fed(lines, [lines]))


@pytest.mark.parametrize("session", ["claude-code interleaved", "gemini-cli", "codex 0.46 parallel calls", "codex exec"])
@pytest.mark.parametrize("cap", ["lines", "bytes"])
def test_an_open_turn_past_its_cap_closes_where_it_is_and_no_line_is_refused(tmp_path, monkeypatch, session, cap):
    """One turn may hold more lines than the open turn's cap (a Codex request of ~2,500 parallel calls) or more bytes
    (large results, a Gemini CLI message's versions); the add past it was refused, telling the sidecar to add a turn
    at a time, which it cannot, and a sidecar that drops a refused line loses it. The open turn now closes where it
    is: every line is stored (each call and result of the importer's is a memory), the open turn stays within the
    cap, the add that closed it says so in its notes, and a save and load go on from there."""
    from sam_model.memory import live

    name, lines = SESSIONS[session]()  # a cap of 1 line: a Gemini CLI turn, its latest version held, fits 2
    monkeypatch.setattr(live, "MAX_OPEN_LINES" if cap == "lines" else "MAX_OPEN_BYTES",
                        1 if cap == "lines" else max(len(json.dumps(x)) for x in lines) + 1)
    memory, notes = ScopedMemory(HashingEncoder(16)), []
    for x in lines:
        notes += memory.add([x], user_id="me", run_id="s").get("notes", [])
        turn = memory._open["me//s"]
        assert len(turn.lines) <= live.MAX_OPEN_LINES and len(json.dumps(turn.lines)) <= live.MAX_OPEN_BYTES + 2
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert notes and all(n["reason"].startswith("data: the scope's open turn would hold ") for n in notes)
    got = [(kind, text) for _, kind, text in stored(memory)]
    for e in imported(tmp_path, name, lines):
        if e["kind"] in ("action", "result"):
            assert (e["kind"], e["text"]) in got


def test_a_claude_code_line_added_again_stores_nothing_more(tmp_path):
    """A sidecar retries an add whose answer it lost: each Claude Code line came twice. A prompt line added again was
    taken for a new prompt (a user entry opens a turn), so it closed the turn holding itself and was stored again,
    its words a second memory, at the next line's add; the importer reads a file holding the entry twice once. An
    entry whose uuid the open turn holds now joins it: the memories, and the conversation's states and labels, are
    those of the session added once and of the file."""
    name, lines = "s.jsonl", to_claude_code(rich())
    twice = fed(lines, [[x] for x in lines for _ in range(2)])
    events = imported(tmp_path, name, lines)
    assert stored(twice) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(twice) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def test_a_claude_code_call_given_as_its_line_joins_the_words_of_its_response_as_the_importer_does(tmp_path):
    """Claude Code writes a response a line per block under one message.id, and the importer reads the lines of one id
    as one turn: the words, then the call, decided before the words. A sidecar tailing the session adds it a line at a
    time; searching by the call's line before adding it (or live_state given the lines up to it), the call was
    refused as no call, and given as its tool_use block it was decided at the words, flagging the unit the user's
    last message gave (['phone', 'unit'], the importer's ['phone']). The line carries its response's id: decided
    before the words where it is the words' response. A call with no id, or another response's line, is decided at
    the words, as before (the importer reads another response as a turn of its own)."""
    from sam_model.data.transcripts import live_state

    args = {"phone": "(415) 555-0142", "unit": "4B"}
    s = Session()
    s.user("Hi, my phone is (415) 555-0142.")
    s.respond(text("Which unit?"))
    s.user("Unit 4B, the kitchen sink leaks.")
    _, line = s.respond(text("Let me look."), tool_use("c1", "lookup_tenant", args))
    s.result("c1", '{"id": "TN-1"}')
    events = imported(tmp_path, "0b6c8d5e-live.jsonl", s.entries)
    decided = next(e for e in events if e.get("useful_memory_steps"))
    assert decided["text"] == "Unit 4B, the kitchen sink leaks."  # the importer's: can fail
    at = s.entries.index(line)
    assert live_state(s.entries[:at], line) == decided["state"]
    other = {**line, "message": {**line["message"], "id": "msg_another_response"}}
    for at_words in (line["message"]["content"][0], {"name": "lookup_tenant", "arguments": args}, other):
        assert live_state(s.entries[:at], at_words)["uncertainty_flags"] == ["phone", "unit"]
    memory = ScopedMemory(HashingEncoder(16))
    for x in s.entries:
        if x is line:
            got = memory.search("", call=line, user_id="me", run_id="s", limit=10)
            assert got["state"] == decided["state"]
            assert memory.live_state(user_id="me", run_id="s", call=line).to_json() == decided["state"]
            words = next(r["id"] for r in memory.get_all(user_id="me", run_id="s")["results"]
                         if r["memory"].endswith("Let me look."))
            assert words not in [r["id"] for r in got["results"]]  # made after the decision point: no candidate
            assert memory.search("", call=other, user_id="me", run_id="s")["state"]["uncertainty_flags"] == \
                ["phone", "unit"]
        memory.add([x], user_id="me", run_id="s")
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]
    with pytest.raises(ValueError, match=r"call\.message\.content: a Claude Code assistant entry that holds no tool_use"):
        memory.search("", call=s.entries[1], user_id="me", run_id="s")


def _response(s, *blocks: dict, mid: str = "msg_R") -> list[dict]:
    """A response's lines written one by one under ``mid`` (the caller interleaves results and other lines)."""
    return [s.add("assistant", {"model": "claude-sonnet-4-5", "id": mid, "type": "message", "role": "assistant",
                                "content": [b]}, requestId=f"req_{mid}") for b in blocks]


def _tenant_session(between) -> tuple[list[dict], dict, list[dict]]:
    """The user gives a phone, then a unit; one response (msg_R) says words, then ``between(s)`` writes its lines
    (an earlier call of the response and its result, a subagent's lines, a queued prompt), then the response's call
    line B. Returns the entries, B's line and the entries of the same session without what ``between`` wrote."""
    def build(extra: bool) -> tuple[list[dict], dict]:
        s = Session()
        s.user("Hi, my phone is (415) 555-0142.")
        s.respond(text("Which unit?"))
        s.user("Unit 4B, the kitchen sink leaks.")
        _response(s, text("Let me look."))
        if extra:
            between(s)
        (b,) = _response(s, tool_use("c2", "open_ticket", {"phone": "(415) 555-0142", "unit": "4B"}))
        s.result("c2", "ok")
        return s.entries, b
    entries, b = build(True)
    alone, _ = build(False)
    return entries, b, alone


def _earlier_call(s) -> None:
    _response(s, tool_use("c1", "lookup_tenant", {"phone": "(415) 555-0142"}))
    s.result("c1", '{"id": "TN-1"}')  # Claude Code ran it while the response streamed on


def _parallel_call(s) -> None:
    _response(s, tool_use("c1", "lookup_tenant", {"phone": "(415) 555-0142"}))


def _subagent(s) -> None:
    side = Session(sidechain=True)
    side.user("Find the tenant's lease.")
    side.respond(text("Reading the lease."))
    s.entries.extend(side.entries)


def _queued(s) -> None:
    s.add("attachment", None, attachment={"type": "queued_command", "prompt": "it is urgent"})


@pytest.mark.parametrize("between", [_earlier_call, _parallel_call, _subagent, _queued])
def test_a_claude_code_call_line_is_decided_where_the_importer_decides_its_response(tmp_path, between):
    """Found by review (2026-12-06): the importer reads every line of one message.id as one turn (claude_code.to_chat
    joins a later line into the response's message, before the results, subagent lines or queued prompts written
    between), decided before the response's words. A search by the call's line (and live_state given the lines up to
    it) joined the words only where they were the conversation's last message and the newest assistant line was of
    the response: a line after an earlier call's result, after a parallel call's line, after a queued prompt, or after
    a subagent's lines in the session file was decided after them, flagging the unit the user's last message gave
    (['phone', 'unit'], the importer's ['phone'])."""
    from sam_model.data.transcripts import live_state

    entries, b, alone = _tenant_session(between)
    want = next(e for e in imported(tmp_path, "0b6c8d5e-live.jsonl", alone) if e.get("useful_memory_steps"))
    assert want["text"] == "Unit 4B, the kitchen sink leaks." and want["state"]["uncertainty_flags"] == ["phone"]
    decided = [e for e in imported(tmp_path, "0b6c8d5e-live.jsonl", entries) if e.get("useful_memory_steps")]
    assert [e["text"] for e in decided] == [want["text"]]  # the importer decides the response there, B included
    at = entries.index(b)
    assert live_state(entries[:at], b) == want["state"]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(entries[:at], user_id="me", run_id="s")
    by_line = fed(entries, [[x] for x in entries[:at]])
    for m in (memory, by_line):
        got = m.search("", call=b, user_id="me", run_id="s", limit=20)
        assert got["state"] == want["state"]
        later = [r["id"] for r in m.get_all(user_id="me", run_id="s")["results"] if r["step"] > want["step"]]
        assert not set(later) & {r["id"] for r in got["results"]}  # made after the decision point: no candidates


def test_a_claude_code_call_line_like_its_responses_earlier_call_is_searched_not_refused(tmp_path):
    """Found by review (2026-12-06): a response may make the same call twice (two lines, two tool_use ids, one
    message.id). A search by the second's line after the first's line was refused as 'already the conversation's
    newest message' (its state would be the one after it), though the line is decided before its response (as the
    importer decides it) whatever of the response was added: it is searched, with the importer's state."""
    from sam_model.data.transcripts import live_state

    same = {"phone": "(415) 555-0142"}
    entries, b, alone = _tenant_session(lambda s: _response(s, tool_use("c1", "open_ticket", same)))
    b["message"]["content"][0]["input"] = same
    next(x for x in reversed(alone) if x["type"] == "assistant")["message"]["content"][0]["input"] = same
    want = next(e for e in imported(tmp_path, "0b6c8d5e-live.jsonl", alone) if e.get("useful_memory_steps"))
    at = entries.index(b)
    assert live_state(entries[:at], b) == want["state"]
    memory = fed(entries, [[x] for x in entries[:at]])
    assert memory.search("", call=b, user_id="me", run_id="s")["state"] == want["state"]
    with pytest.raises(ValueError, match="already the conversation's newest message"):  # given in another shape
        memory.search("", call={"name": "open_ticket", "arguments": same}, user_id="me", run_id="s")


def _random_session(rng) -> tuple[list[dict], list[dict]]:
    """A Claude Code session of random responses: thinking, words, one to three calls a line each (a result now
    or after the response's later lines, a subagent's lines between, a line written twice, words after a call),
    each call taking values the user said. Returns the entries and the call lines."""
    values = ["(415) 555-0142", "4B", "TN-77", "ann_lee_123", "ZZ1234"]
    s, calls = Session(), []
    for _ in range(rng.randint(2, 4)):
        s.user("my id is {} and also {}".format(*rng.sample(values, 2)))
        for _ in range(rng.randint(1, 3)):
            mid = f"msg_{len(s.entries)}"
            if rng.random() < 0.3:
                _response(s, {"type": "thinking", "thinking": "hm", "signature": "s"}, mid=mid)
            if rng.random() < 0.7:
                _response(s, text("Let me look."), mid=mid)
            pending = []
            for _ in range(rng.randint(1, 3)):
                cid = f"c{len(calls)}"
                args = {"q": rng.choice(values), "r": rng.choice(values)}
                (line,) = _response(s, tool_use(cid, rng.choice(["lookup", "find"]), args), mid=mid)
                calls.append(line)
                pending.append(cid)
                if rng.random() < 0.1:
                    s.entries.append(json.loads(json.dumps(line)))  # written again
                if rng.random() < 0.2:
                    _response(s, text("And also."), mid=mid)
                if rng.random() < 0.15:
                    _subagent(s)
                if rng.random() < 0.5:
                    s.result(pending.pop(0), f"found {rng.choice(values)}")
            for cid in pending:
                s.result(cid, f"ok {rng.choice(values)}")
        s.respond(text("Done."))
    return s.entries, calls


def _alone(entries: list[dict], b: dict) -> list[dict]:
    """The session up to ``b`` as the importer would read it had its response made ``b`` alone: the entries
    before the response, its lines of words and thinking before ``b``, ``b`` and its result, chained anew."""
    mid = b["message"]["id"]
    first = next(i for i, e in enumerate(entries) if e["type"] == "assistant" and e["message"].get("id") == mid)
    lines = [e for e in entries[first:entries.index(b)] if e["type"] == "assistant" and not e["isSidechain"]
             and e["message"].get("id") == mid and e["message"]["content"][0]["type"] != "tool_use"]
    cid = b["message"]["content"][0]["id"]
    result = next(e for e in entries if e["type"] == "user" and isinstance(e["message"]["content"], list)
                  and e["message"]["content"][0].get("tool_use_id") == cid)
    out, parent = [], None
    for e in [*entries[:first], *lines, b, result]:
        e = json.loads(json.dumps(e))
        if not e["isSidechain"]:
            e["parentUuid"], parent = parent, e["uuid"]
        out.append(e)
    return out


def test_random_claude_code_sessions_search_each_call_line_as_the_importer_decides_it(tmp_path):
    """Guard (passes before; review, 2026-12-06): on random sessions, a call's line searched after the lines
    before it, added a line an add (and live_state given them), is decided where the importer decides its
    response: the state the importer writes on that decision event for the response made of the call alone."""
    from sam_model.data.transcripts import live_state

    rng, compared = random.Random(3), 0
    for trial in range(8):
        entries, calls = _random_session(rng)
        later = [c for c in calls if any(x["message"]["id"] == c["message"]["id"] for x in calls[:calls.index(c)])]
        b = rng.choice(later or calls)  # a response's later call where there is one: lines of it came between
        at = entries.index(b)
        memory = fed(entries, [[x] for x in entries[:at]])
        got = memory.search("", call=b, user_id="me", run_id="s")["state"]
        assert got == live_state(entries[:at], b), trial
        alone = _alone(entries, b)
        events = [e for e in imported(tmp_path, "0b6c8d5e-live.jsonl", alone) if "sidechain" not in e["episode_id"]]
        words = any(e["type"] == "assistant" and e["message"]["content"][0]["type"] == "text" for e in alone)
        before = events[len(events) - 3 - words]  # the event before the response's (its words, its call, the result)
        if before.get("useful_memory_steps"):  # a decision event: the importer wrote its state for the call
            compared += 1
            assert got == before["state"], trial
    assert compared >= 3
