"""Final review of the live memory path (stop 60): what the review of today's changes to sam_model.memory found.

An agent-log event's step given as a NumPy integer (a pandas DataFrame's column, ``df.to_dict("records")`` or
Events built from its rows) is a step: the store's check takes one (storechecks.check_memory), but the add's step
check (03a8520) refused an Event's as "must be an integer ... got np.int64(0)", and a dict's failed in parse_event
with "Object of type int64 is not JSON serializable"; before that check an Event's was stored and the scope's save
then failed for the same reason. It is stored as the int it is, and the memory saves and loads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sam_model.data.schema import Event, State
from sam_model.data.transcripts import iter_transcript_events, live_state
from sam_model.memory import HashingEncoder, ScopedMemory, live


def _numpy_events(as_dicts: bool) -> list:
    rows = [(0, "user mia_li_3668"), (1, "reservation ZFA04Y")]
    if as_dicts:
        return [{"kind": "result", "text": t, "step": np.int64(s)} for s, t in rows]
    return [Event("e", np.int64(s), "result", t, State()) for s, t in rows]


@pytest.mark.parametrize("as_dicts", [False, True], ids=["Event", "dict"])
def test_a_numpy_integer_step_is_stored_as_its_int_and_the_memory_saves_and_loads(tmp_path, as_dicts):
    memory = ScopedMemory(HashingEncoder(16))
    added = memory.add(_numpy_events(as_dicts), user_id="u")["results"]
    assert [r["step"] for r in added] == [0, 1]
    assert all(type(r["step"]) is int for r in added)
    loaded = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert sorted((r["step"], r["memory"]) for r in loaded.get_all(user_id="u", limit=None)["results"]) == [
        (0, "user mia_li_3668"), (1, "reservation ZFA04Y")]
    assert [r["step"] for r in loaded.add([Event("e", 2, "result", "booking K1NW8N", State())],
                                          user_id="u")["results"]] == [2]  # the numbering saved goes on


def test_a_numpy_step_out_of_range_is_still_refused_naming_the_item():
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^data\[0\]: an Event's step must be an integer from 0"):
        memory.add([Event("e", np.int64(-1), "result", "x", State())], user_id="u")
    assert memory.get_all(user_id="u", limit=None)["results"] == []


def _exec_line(kind: str, i: int, item: dict) -> dict:
    return {"type": kind, "item": {"id": f"item_{i}", **item}}


def _exec_run() -> tuple[list[dict], dict]:
    """A codex exec --json run: a command shows the account, another the customer, the agent's words follow, then an
    MCP call takes both (codex_exec: "an agent_message is the assistant's words; calls right after it join its
    turn")."""
    account = {"type": "command_execution", "command": "cat account.txt", "aggregated_output": "account: ACC-991\n",
               "exit_code": 0, "status": "completed"}
    ticket = {"type": "command_execution", "command": "cat ticket.txt",
              "aggregated_output": "customer: alice_w_42\n", "exit_code": 0, "status": "completed"}
    words = {"type": "agent_message", "text": "Let me look her up."}
    args = {"account": "ACC-991", "customer": "alice_w_42"}
    mcp = {"type": "mcp_tool_call", "server": "crm", "tool": "lookup", "arguments": args,
           "result": {"content": [{"type": "text", "text": "TN-1"}]}, "status": "completed"}
    return [{"type": "thread.started", "thread_id": "th1"}, {"type": "turn.started"},
            _exec_line("item.started", 0, {**account, "status": "in_progress", "aggregated_output": ""}),
            _exec_line("item.completed", 0, account),
            _exec_line("item.started", 1, {**ticket, "status": "in_progress", "aggregated_output": ""}),
            _exec_line("item.completed", 1, ticket), _exec_line("item.completed", 2, words),
            _exec_line("item.started", 3, {**mcp, "status": "in_progress", "result": None}),
            _exec_line("item.completed", 3, mcp), {"type": "turn.completed", "usage": {}}], \
        {"name": "crm__lookup", "args": args}


def test_codex_exec_words_before_a_call_are_decided_before_as_the_importer_does(tmp_path):
    """codex exec's reader joins an agent_message and the calls right after it into one turn, so the importer
    decides the MCP call at the ticket's result, before the words; the preamble rule (formats.base.JOINS_CALLS,
    "one rule for every format") left codex exec out, so live_state given the events up to the words, and a scope
    fed them an add each searched by the call, decided at the words and flagged the customer the result had just
    shown (['account', 'customer'] where the importer flags ['account'])."""
    lines, call = _exec_run()
    log = tmp_path / "codex.txt"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    imported = list(iter_transcript_events(log))
    decided = next(e for e in imported if e.get("useful_memory_steps"))
    assert (decided["text"], decided["useful_memory_steps"]) == ("shell: customer: alice_w_42\n", [1])  # the importer's
    decided = decided["state"]
    assert live.chat("codex-exec", lines, {}).messages[4]["tool_calls"]  # the words' message holds the call
    assert decided["uncertainty_flags"] == ["account"]  # the importer's: can fail
    assert live_state(lines[:7], call) == decided
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines[:7]:
        memory.add([x], user_id="t", run_id="r")
    assert memory.search("", call=call, user_id="t", run_id="r", limit=3)["state"] == decided
