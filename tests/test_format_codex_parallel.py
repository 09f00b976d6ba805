"""Parallel calls in a Codex rollout: calls the model wrote in one response are one turn, whatever order Codex
recorded them in. Codex before openai/codex#6691 (response_processing.rs' process_items; #4663's parallel calls)
wrote each call with its output (call A, A's output, call B, B's output); since #6691 (Nov 2025) the calls come
first, then their outputs. Read in file order, the older layout made call B a turn taken after A's output, so a
value of B's that only A's output says traced to it, though the model wrote B before any output. Every Codex of
those versions writes a turn_context line before each model request (try_run_turn), which tells the responses
apart; a later Codex, a dev build or a file without those lines is read as it was."""

from __future__ import annotations

import json

import pytest
from test_format_codex import ENV, convert, line, message, meta, rollout_name, write

from sam_model.data.formats import to_chat
from sam_model.data.sources import SourceOptions, iter_source_events

HI = "Hi, I'm Ann (ann_lee_123). Cancel my other reservation."
USER = '{"name": "Ann Lee", "reservations": ["QX7Z9A", "ZZ1234"]}'
FLIGHTS = "no flights today"
SEEN = "QX7Z9A: economy, flown"
GET_USER = "CALL get_user(user_id=ann_lee_123)"
FLIGHTS_CALL = "CALL list_flights(origin=JFK)"
GET_RES = "CALL get_reservation(reservation_id=QX7Z9A)"  # its id is said only in get_user's output
CANCEL = "CALL cancel(reservation_id=ZZ1234)"  # a later response's: it read get_user's output


def call(call_id: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": call_id}


def output(call_id: str, text: str) -> dict:
    return {"type": "function_call_output", "call_id": call_id,
            "output": json.dumps({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})}


def rollout(version: str, layout: str, contexts: bool = True) -> list[dict]:
    """Ann's session as Codex ``version`` records it: the user's message, then per model request a turn_context
    line, the response's events and its items. The first response is three parallel calls, get_user, list_flights
    and get_reservation; the second a cancel; the third the answer. ``layout``: "pairs" (each call with its output,
    process_items before #6691), "batch" (the response's items, then its outputs: #6691), "inline" (each item as it
    streams, then the outputs after the response's token count: openai/codex#7310)."""
    r = lambda item: line("response_item", item)  # noqa: E731
    turn = line("turn_context", {"cwd": "/home/agent/airline", "approval_policy": "on-request",
                                 "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex",
                                 "effort": "medium", "summary": "auto"})
    tokens = line("event_msg", {"type": "token_count", "info": None})
    reasoning = r({"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAAABp"})
    calls = [call("a", "get_user", {"user_id": "ann_lee_123"}), call("b", "list_flights", {"origin": "JFK"}),
             call("c", "get_reservation", {"reservation_id": "QX7Z9A"})]
    outputs = [output("a", USER), output("b", FLIGHTS), output("c", SEEN)]
    if layout == "pairs":
        first = [tokens, reasoning, *(r(x) for pair in zip(calls, outputs) for x in pair)]
    elif layout == "batch":
        first = [tokens, reasoning, *map(r, calls), *map(r, outputs)]
    else:
        first = [reasoning, *map(r, calls), tokens, *map(r, outputs)]
    second = [tokens, reasoning, r(call("d", "cancel", {"reservation_id": "ZZ1234"})), r(output("d", "cancelled"))]
    third = [tokens, r(message("assistant", "ZZ1234 is cancelled."))]
    if layout == "inline":
        second = [*second[1:3], tokens, second[3]]
    head = [meta(cli_version=version), r(message("user", ENV)), r(message("user", HI)),
            line("event_msg", {"type": "user_message", "message": HI, "images": []})]
    return [*head, *(x for response in (first, second, third) for x in ([turn] if contexts else []) + response)]


def traced(events: list[dict], call_text: str) -> list[str]:
    """The texts the decision before the call whose text is ``call_text`` is labelled with."""
    texts = [e["text"] for e in events]
    return [events[i]["text"] for i in events[texts.index(call_text) - 1].get("useful_memory_steps", [])]


def read(tmp_path, lines: list[dict], session: str) -> tuple[list[dict], object]:
    lines[0]["payload"]["id"] = session
    return convert(write(tmp_path / rollout_name(session), lines))


CALLS_FIRST = [HI, GET_USER, FLIGHTS_CALL, GET_RES, f"get_user: {USER}", f"list_flights: {FLIGHTS}",
               f"get_reservation: {SEEN}", CANCEL, "cancel: cancelled", "ZZ1234 is cancelled."]


@pytest.mark.parametrize("version, layout", [("0.46.0", "pairs"), ("0.58.0", "pairs"), ("0.60.1", "batch"),
                                             ("0.77.0", "inline")])
def test_parallel_calls_are_one_turn_and_trace_nothing_to_each_others_outputs(tmp_path, version, layout):
    """Whichever way Codex recorded them, the three calls are one turn, each decided before any output: get_reservation's
    id, said only in get_user's output, is traced to nothing (in the pairs layout it was traced to that output,
    which the model had not seen, and list_flights' state held get_user's result); each output stays with its call;
    the cancel of the next response still traces to get_user's output, which it read."""
    session = f"0199a213-81c0-7800-8aa1-{int(version.replace('.', '')):012d}"
    events, report = read(tmp_path, rollout(version, layout), session)
    assert [e["text"] for e in events] == CALLS_FIRST
    assert traced(events, GET_RES) == []
    assert traced(events, CANCEL) == [f"get_user: {USER}"]
    for text in (GET_USER, FLIGHTS_CALL, GET_RES):  # the state before the response: no output read
        assert events[[e["text"] for e in events].index(text) - 1]["state"]["last_action_result"] == "none"
    assert not report.unmatched_results and report.calls == 4 and not report.misplaced
    chat = to_chat(rollout(version, layout))
    turn = next(m for m in chat.messages if m.get("tool_calls"))
    assert [c["id"] for c in turn["tool_calls"]] == ["a", "b", "c"]
    results = {m["tool_call_id"]: (m["content"], source) for m, source in zip(chat.messages, chat.sources)
               if m["role"] == "tool"}
    lines = rollout(version, layout)
    said = {"a": USER, "b": FLIGHTS, "c": SEEN, "d": "cancelled"}
    assert {k: text for k, (text, _) in results.items()} == said
    for call_id, (_, source) in results.items():  # each output named by its own line
        n = int(source.split()[-1])
        assert lines[n - 1]["payload"] == output(call_id, said[call_id])


@pytest.mark.parametrize("version, contexts", [("0.90.0", True), ("0.0.0", True), ("0.46.0", False)])
def test_a_rollout_whose_requests_are_not_marked_is_read_in_file_order(tmp_path, version, contexts):
    """A Codex after 0.77 (whose turn_context lines are not known to mark each request), a dev build (0.0.0) and a
    file without turn_context lines give no response boundary to trust: read in file order, as before."""
    events, _ = read(tmp_path, rollout(version, "pairs", contexts), "0199a213-81c0-7800-8aa1-000000000001")
    assert [e["text"] for e in events] == [HI, GET_USER, f"get_user: {USER}", FLIGHTS_CALL, f"list_flights: {FLIGHTS}",
                                           GET_RES, f"get_reservation: {SEEN}", CANCEL, "cancel: cancelled",
                                           "ZZ1234 is cancelled."]
    assert traced(events, GET_RES) == [f"get_user: {USER}"]


def test_sequential_calls_of_a_marked_rollout_are_read_as_they_were(tmp_path):
    """One call per response (each request its turn_context): nothing moves, each call reads the outputs before it;
    a request whose output is followed by the model's words, not a call, keeps its order."""
    lines = rollout("0.46.0", "pairs")
    turn = lines[4]
    sequential = [y for x in lines for y in ([turn, x] if x["payload"].get("call_id") in ("b", "c")
                                             and x["payload"]["type"] == "function_call" else [x])]
    events, _ = read(tmp_path, sequential, "0199a213-81c0-7800-8aa1-000000000002")
    assert traced(events, GET_RES) == [f"get_user: {USER}"]
    later = [meta(cli_version="0.90.0"), *sequential[1:]]  # the same lines read in file order
    assert to_chat(sequential).messages == to_chat(later).messages
    at = lines.index(next(x for x in lines if x["payload"].get("call_id") == "b"))
    words = [*lines[:at], line("response_item", message("assistant", "Looking.")), turn]
    chat = to_chat(words)
    assert [(m["role"], m.get("tool_call_id")) for m in chat.messages[3:]] == [
        ("assistant", None), ("tool", "a"), ("assistant", None)]


def test_a_marked_version_whose_requests_lack_their_turn_context_lines_is_reported(tmp_path, capsys):
    """0.46 writes a turn_context line before each model request; a file of it with one line for the whole session
    (edited, merged) is read as one request, each output moved past the calls of later responses. The import
    report and sam-train's conversion say so, counted, at the first such output (what is read is as before: the
    four calls one turn); a file that marks every request gets no note."""
    lines = rollout("0.46.0", "pairs")
    turn = lines[4]
    once = [x for i, x in enumerate(lines) if x is not turn or i == 4]
    session = "0199a213-81c0-7800-8aa1-000000000003"
    events, report = read(tmp_path, once, session)
    path = tmp_path / rollout_name(session)
    first = next(n for n, x in enumerate(once, 1) if x["payload"] == output("a", USER))
    assert report.misplaced == {f"{path}:{first}": 3}  # get_user's, list_flights' and get_reservation's outputs
    note = (f"3 tool results read after calls of a later model response (those calls read as made before them): a "
            f"rollout of Codex 0.3x-0.77 without the turn_context line those versions write before each model request "
            f"(edited or merged?): {path}:{first} (and 2 more in the file)")
    assert note in report.lines()
    assert [e["text"] for e in iter_source_events(path, SourceOptions())] == [e["text"] for e in events]
    assert f"{path}: {note}" in capsys.readouterr().out
    chat = to_chat(once)
    assert [c["id"] for c in next(m for m in chat.messages if m.get("tool_calls"))["tool_calls"]] == ["a", "b", "c", "d"]
    _, marked = read(tmp_path, rollout("0.46.0", "pairs"), "0199a213-81c0-7800-8aa1-000000000004")
    assert not marked.misplaced and not any("later model response" in x for x in marked.lines())
