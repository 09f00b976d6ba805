"""An OpenHands agent's event stream fed to ScopedMemory.add an event at a time (its event stream's callback, as a
running agent makes them) stores what the importer makes of the whole run: the same memories, states and labels, so
a search by the next call ranks them alike. The 0.x reader reads a response's parallel calls all at its first action
and answers a text-mode call by its observation's ``cause`` alone; V1 joins the consecutive ActionEvents of one
response. Read an event an add, a later parallel call was stored again (0.x: 19 memories for the run's 16), a
text-mode result was the user's words, and V1's parallel calls each decided after the one before. The scope's open
turn (sam_model.memory.live) now holds OpenHands' events as it holds the other agents' session lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_live_adds import conversation, fed, ranked, stored
from test_openhands import PATH, Run, codeact_run
from test_openhands_v1 import coding_run

from sam_model.data.transcripts import ImportReport, iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "logs"


def text_mode() -> list[dict]:
    """OpenDevin's CodeAct without function calling: each result is its action's only by ``cause``."""
    run = Run()
    run.add(source="user", message="Fix the header crash.", action="message", args={"content": "Fix the header crash."})
    act = run.add(source="agent", message="Running command: grep -rl parse_header src", action="run",
                  args={"command": "grep -rl parse_header src", "thought": "Let me search."})
    run.add(source="agent", message="", cause=act["id"], observation="run", content="src/tinyparse/reader.py\r\n",
            extras={"command_id": -1, "exit_code": 0, "metadata": {"working_dir": "/workspace"}})
    run.add(source="user", message="Please continue.", action="message", args={"content": "Please continue."})
    read = run.add(source="agent", message="Reading file", action="read",
                   args={"path": "/workspace/src/tinyparse/reader.py", "thought": "Open it."})
    run.add(source="agent", message="", cause=read["id"], observation="read", content="def parse_header",
            extras={"path": "src/tinyparse/reader.py"})
    return run.events


def user_while_a_command_runs() -> list[dict]:
    """Text mode: the user writes while the agent's command runs, so its observation comes after the user's words."""
    events = text_mode()
    said = {**events[3], "message": "It may be in src/.", "args": {"content": "It may be in src/."}}
    return [{**e, "id": j} for j, e in enumerate([*events[:2], said, *events[2:]])]


def finished_then_asked_again() -> list[dict]:
    """A run the agent finished (its finish action gets no observation), then the user's next task in the same
    conversation and the agent's next calls."""
    run = Run()
    run.events = codeact_run()
    run.add(source="user", message="Now run the tests.", action="message", args={"content": "Now run the tests."})
    meta = {"function_name": "execute_bash", "tool_call_id": "toolu_09", "model_response": None}
    act = run.add(source="agent", message="", action="run", tool_call_metadata=meta,
                  args={"command": "python -m pytest tests -q", "thought": "Running them."})
    run.add(source="agent", message="", cause=act["id"], observation="run", tool_call_metadata=meta, content="ok",
            extras={"metadata": {"exit_code": 0, "working_dir": "/workspace/src"}})
    view = {"command": "view", "path": PATH}
    meta = {"function_name": "str_replace_editor", "tool_call_id": "toolu_10", "model_response": None}
    act = run.add(source="agent", message="", action="read", tool_call_metadata=meta, args={"path": PATH, **view})
    run.add(source="agent", message="", cause=act["id"], observation="read", tool_call_metadata=meta, content="x",
            extras={})
    return run.events


def user_between_parallel_calls() -> list[dict]:
    """The user writes while a response's calls run: OpenHands runs the response's next queued call after the
    user's message, and the reader reads it with the response's first (an assistant turn of both calls)."""
    events = codeact_run()
    at = next(i for i, e in enumerate(events) if e.get("cause") is not None
              and (e.get("tool_call_metadata") or {}).get("tool_call_id") == "toolu_03")
    said = {"id": 0, "timestamp": events[0]["timestamp"], "source": "user", "message": "Check the tests too.",
            "action": "message", "args": {"content": "Check the tests too."}}
    return [{**e, "id": j} | ({"cause": e["cause"] + (e["cause"] > at)} if e.get("cause") is not None else {})
            for j, e in enumerate([*events[:at + 1], said, *events[at + 1:]])]


def v1_update_between_parallel_calls() -> list[dict]:
    """V1: an event read as no message (a state update) between a response's ActionEvents, which join across it."""
    events = coding_run()
    at = next(i for i, e in enumerate(events) if e.get("llm_response_id") == "chatcmpl-3")
    update = {**events[2], "id": "6f1e0c2a-0000-4000-8000-0000000000ff"}
    return [*events[:at + 1], update, *events[at + 1:]]


def v1_example() -> list[dict]:
    return json.loads((EXAMPLES / "openhands-v1.jsonl").read_text())["history"]


VIEW = {"name": "str_replace_editor", "arguments": {"command": "view", "path": PATH}}
RUNS = {
    "0.x function calling, parallel calls": (codeact_run, [VIEW, {"name": "execute_bash", "arguments": {
        "command": "python -m pytest tests -q"}}]),
    "0.x without ids": (lambda: [{k: v for k, v in e.items() if k not in ("id", "cause")} for e in codeact_run()],
                        [VIEW]),
    "0.x, the user between a response's calls": (user_between_parallel_calls, [VIEW]),
    "0.x text mode": (text_mode, [{"name": "read", "arguments": {"path": "/workspace/src/tinyparse/reader.py"}}]),
    "0.x text mode, the user writes while a command runs": (user_while_a_command_runs, [
        {"name": "read", "arguments": {"path": "/workspace/src/tinyparse/reader.py"}}]),
    "0.x finished, then asked again": (finished_then_asked_again, [VIEW]),
    "0.x example": (lambda: json.loads((EXAMPLES / "openhands.json").read_text()),
                    [{"name": "cancel_reservation", "arguments": {"reservation_id": "ZZ1234"}}]),
    "v1, parallel calls": (coding_run, [{"name": "file_editor", "arguments": {"command": "view", "path": PATH}}]),
    "v1, a state update between parallel calls": (v1_update_between_parallel_calls, [
        {"name": "file_editor", "arguments": {"command": "view", "path": PATH}}]),
    "v1 example": (v1_example, [{"name": "cancel_reservation", "arguments": {"reservation_id": "ZZ1234"}}]),
}


@pytest.mark.parametrize("run", RUNS)
def test_an_openhands_run_added_an_event_at_a_time_is_the_importers_run(tmp_path, run):
    make, calls = RUNS[run]
    events = make()
    (tmp_path / "run.json").write_text(json.dumps(events))  # as save_trajectory_path writes a run
    want = list(iter_transcript_events(tmp_path / "run.json", report=ImportReport()))
    whole, by_event = fed(events, [events]), fed(events, [[e] for e in events])
    saved = ScopedMemory(HashingEncoder(16))
    for e in events:  # a checkpoint and a restart between any two events
        saved.add([e], user_id="me", run_id="s")
        saved = ScopedMemory.load(saved.save(tmp_path / "m"), HashingEncoder(16))
    decided = [(e["state"], e.get("useful_memory_steps") or []) for e in want]
    assert any(labels for _, labels in decided)  # a later call traces to an earlier memory: the labels are compared
    for memory in (whole, by_event, saved):
        assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in want]
        assert conversation(memory) == decided
        assert ranked(memory, calls) == ranked(whole, calls)
        for c in calls:
            assert memory.live_state(user_id="me", run_id="s", call=c) == whole.live_state(user_id="me", run_id="s",
                                                                                           call=c)


@pytest.mark.parametrize("run, held", [
    (text_mode, [1, 1, 2, 1, 1, 2]),
    (user_while_a_command_runs, [1, 1, 2, 3, 1, 1, 2]),
    (finished_then_asked_again, [1, 1, 2, 1, 2, 1, 2, 1, 2, 3, 4, 5, 1, 2, 1, 2, 3, 1, 2, 1, 2])])
def test_the_open_turn_holds_a_call_until_its_observation_and_no_longer(run, held):
    """The turn a text-mode call opens stays open until its observation (the reader pairs them by cause), past a
    user's words written while the command ran, and closes at the next action; a finish, which gets no observation,
    holds the turn only until the agent's next action: the open turn holds a few events, not the run."""
    memory = ScopedMemory(HashingEncoder(16))
    got = []
    for e in run():
        memory.add([e], user_id="me", run_id="s")
        got.append(len(memory._open["me//s"].lines))
    assert got == held
