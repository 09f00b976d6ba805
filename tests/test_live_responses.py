"""An OpenAI Responses agent adds its items as it gets them, one add each (in process, or through sam-serve's HTTP
add, which checks the add with the scope's open turn first): the user's message, then the response's items, a
preamble message ("Let me look you up.") and then its function_call. The importer reads a message and the calls
right after it as one turn and decides before the words (responses.read); fed an item an add, the scope read the
preamble as a turn of its own and its search by the call decided at it, flagging as needed a value the user's last
message gave (an observation to training). The scope now keeps a Responses open turn (sam_model.memory.live), as
it does for the agents' session formats: the same memories, states and labels as the importer's, and the same
search state at each call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.transcripts import ImportReport, iter_transcript_events, live_state
from sam_model.memory import HashingEncoder, ScopedMemory

INSTRUCTIONS = "You are the property manager's maintenance agent."


def said(text: str, i: str) -> dict:
    return {"type": "message", "id": i, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def called(i: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": name, "arguments": json.dumps(args),
            "status": "completed"}


def answered(i: str, output: str) -> dict:
    return {"type": "function_call_output", "call_id": i, "output": output}


def conversation() -> list[dict]:
    """Two requests' items: a preamble before each response's calls (parallel ones in the second), a reasoning
    item, the user's last message giving the phone the first call passes on."""
    return [
        {"role": "user", "content": "Hi, unit 4B here."},
        said("Sorry to hear that. What's going on?", "msg_1"),
        {"role": "user", "content": "The sink leaks. My phone is (415) 555-0142."},
        said("Let me look you up.", "msg_2"),
        called("c1", "lookup_tenant", {"phone": "(415) 555-0142"}),
        answered("c1", '{"tenant_id": "TN-88", "unit": "4B"}'),
        {"type": "reasoning", "id": "rs_1", "summary": []},
        said("Found you. Booking a plumber and noting the ticket.", "msg_3"),
        called("c2", "book_plumber", {"tenant_id": "TN-88", "unit": "4B"}),
        called("c3", "open_ticket", {"tenant_id": "TN-88", "issue": "sink leaks"}),
        answered("c2", "booked for Monday 9am"),
        answered("c3", "ticket T-17"),
        said("A plumber comes Monday 9am (ticket T-17).", "msg_4"),
    ]


def imported(tmp_path: Path, items: list[dict]) -> list[dict]:
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"id": "resp_1", "instructions": INSTRUCTIONS, "input": items}) + "\n")
    return list(iter_transcript_events(path, report=ImportReport()))


def stored(memory: ScopedMemory, run: str = "r") -> list[tuple]:
    got = sorted(memory.get_all(user_id="t", run_id=run, limit=None)["results"], key=lambda r: r["step"])
    return [(r["step"], r["kind"], r["memory"]) for r in got]


def labelled(memory: ScopedMemory, run: str = "r") -> list[tuple]:
    return [(e["state"], e.get("useful_memory_steps") or []) for e in memory._trackers[f"t//{run}"].events]


def want(events: list[dict]) -> tuple[list[tuple], list[tuple]]:
    return ([(e["step"], e["kind"], e["text"]) for e in events],
            [(e["state"], e.get("useful_memory_steps") or []) for e in events])


def feed(memory: ScopedMemory, items: list[dict], run: str = "r", served: bool = False, again: bool = False,
         save: Path | None = None) -> tuple[ScopedMemory, list[dict]]:
    """The items an add each (``served``: checked first as sam-serve's HTTP add does; ``again``: each add sent twice,
    a retry whose answer was lost; ``save``: saved and loaded after each add), and the search state at each call,
    searched once its preamble (or the output before it) was added."""
    states = []
    memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id=run)
    for x in items:
        if x.get("type") == "function_call":
            states.append(memory.search("", call=x, user_id="t", run_id=run, limit=3)["state"])
        for _ in range(2 if again and ("id" in x or "call_id" in x) else 1):  # a bare message: said twice
            read = memory.check_add([x], "messages", 100, user_id="t", run_id=run) if served else None
            memory.add([x], user_id="t", run_id=run, read=read)
        if save is not None:
            memory = ScopedMemory.load(memory.save(save), HashingEncoder(16))
    return memory, states


def at_calls(items: list[dict]) -> list[dict]:
    """live_state at each call, given the items before it (the importer's decision, tests/test_responses_preamble.py)."""
    return [live_state(items[:i], x, policy=INSTRUCTIONS) for i, x in enumerate(items)
            if x.get("type") == "function_call"]


@pytest.mark.parametrize("how", ["in process", "served", "sent twice", "saved and loaded"])
def test_responses_items_added_one_at_a_time_are_the_importers_memories_labels_and_search_states(tmp_path, how):
    items = conversation()
    memory, states = feed(ScopedMemory(HashingEncoder(16)), items, served=how == "served", again=how == "sent twice",
                          save=tmp_path / "m" if how == "saved and loaded" else None)
    events = imported(tmp_path, items)
    assert any(e.get("useful_memory_steps") for e in events)
    assert (stored(memory), labelled(memory)) == want(events)
    assert states == at_calls(items)
    assert states[0]["uncertainty_flags"] == []  # the phone the user's last message gave: an observation


def test_the_search_at_a_preamble_decides_before_it_as_the_importer_does():
    """The walkthrough's reproduction: the user's message, the preamble, then a search by the call."""
    user = {"role": "user", "content": "The sink in 4B leaks. My phone is (415) 555-0142."}
    preamble = {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                      "text": "Let me look you up."}]}
    call = {"type": "function_call", "call_id": "c1", "name": "lookup_tenant",
            "arguments": json.dumps({"phone": "(415) 555-0142"})}
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([user], user_id="t", run_id="r")
    memory.add([preamble], user_id="t", run_id="r")
    found = memory.search("", call=call, user_id="t", run_id="r")
    assert found["state"]["uncertainty_flags"] == [] == live_state([user, preamble], call)["uncertainty_flags"]
    assert memory.decision_point(user_id="t", run_id="r") == (0, user["content"])


def test_an_item_written_again_as_it_streams_is_one_memory_of_its_last_version(tmp_path):
    """A streaming agent adds an item at response.output_item.added and again at .done (the same id, its words or
    arguments complete); a response's output list sent again after its items stores nothing more."""
    items = conversation()
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id="r")
    for x in items:
        if x.get("type") == "message" and x.get("id"):
            memory.add([{**x, "status": "in_progress", "content": [{"type": "output_text", "text": "Let"}]}],
                       user_id="t", run_id="r")
        memory.add([x], user_id="t", run_id="r")
        if x.get("id") == "msg_4":
            memory.add(items[7:], user_id="t", run_id="r")  # the last response's output again, whole
    assert (stored(memory), labelled(memory)) == want(imported(tmp_path, items))


def test_an_item_of_a_closed_turn_sent_again_is_read_once_and_a_new_one_of_its_id_is_read():
    """Once a later item closed its turn, an item equal to it (a retried add) stores nothing; one of its id with other
    words (a call id an agent reused in a later response) is a new memory, never refused (nothing lost)."""
    items = conversation()
    memory = ScopedMemory(HashingEncoder(16))
    for x in items[:8]:  # msg_3 opened a turn after msg_2's
        memory.add([x], user_id="t", run_id="r")
    before = stored(memory)
    memory.add([items[3]], user_id="t", run_id="r")
    memory.add(items[3:6], user_id="t", run_id="r")
    assert stored(memory) == before
    memory.add([said("Let me check.", "msg_2")], user_id="t", run_id="r")
    assert stored(memory) == [*before, (len(before), "system", "Let me check.")]


def test_two_scopes_fed_in_turn_keep_their_open_turns_apart(tmp_path):
    items = conversation()
    other = [dict(x, **({"content": x["content"].replace("4B", "7C")} if isinstance(x.get("content"), str) else {}))
             for x in items]
    memory = ScopedMemory(HashingEncoder(16))
    for run in ("r", "s"):
        memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id=run)
    for x, y in zip(items, other):
        memory.add([x], user_id="t", run_id="r")
        memory.add([y], user_id="t", run_id="s")
    assert (stored(memory, "r"), labelled(memory, "r")) == want(imported(tmp_path, items))
    assert (stored(memory, "s"), labelled(memory, "s")) == want(imported(tmp_path, other))


def test_items_added_one_at_a_time_over_http_are_the_importers_and_a_restart_replays_them(tmp_path):
    """sam-serve's HTTP add and search by call, as a Responses agent loop makes them, and the write-ahead log's
    replay after a restart (the open turn rebuilt from the adds it logged)."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    def open_tenants() -> Tenants:
        return Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(16), StoreConfig())

    items, tenants = conversation(), open_tenants()
    http, key, scope = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}, {"user_id": "t", "run_id": "r"}
    states = []
    for x in [{"role": "system", "content": INSTRUCTIONS}, *items]:
        if x.get("type") == "function_call":
            r = http.post("/v1/memories/search", headers=key, json={"query": "", "call": x, **scope})
            assert r.status_code == 200, r.text
            states.append(r.json()["state"])
        r = http.post("/v1/memories", headers=key, json={"messages": [x], **scope})
        assert r.status_code == 200, r.text
    assert states == at_calls(items)
    events = want(imported(tmp_path, items))
    assert (stored(tenants.tenants["acme"].memory), labelled(tenants.tenants["acme"].memory)) == events
    for tenant in tenants.tenants.values():  # no checkpoint: every add is replayed from the log
        tenant.release()
    again = open_tenants()
    assert (stored(again.tenants["acme"].memory), labelled(again.tenants["acme"].memory)) == events
    again.close()


def reused_ids() -> list[dict]:
    """An agent numbering its calls call_1 in each response (some do): the next response's call, made right after
    the output (no words between), and a later one asking what the first did, with fc ids of their own, the same
    output as the first's."""
    def get_time(fc: str, city: str) -> dict:
        return {**called("call_1", "get_time", {"city": city}), "id": fc}
    return [
        {"role": "user", "content": "What time is it in Paris and in Rome?"},
        get_time("fc_a", "Paris"),
        answered("call_1", "12:00"),
        get_time("fc_b", "Rome"),
        answered("call_1", "13:00"),
        said("12:00 in Paris, 13:00 in Rome.", "msg_1"),
        {"role": "user", "content": "And in Paris now?"},
        get_time("fc_c", "Paris"),
        answered("call_1", "12:00"),
        said("Still 12:00.", "msg_2"),
    ]


@pytest.mark.parametrize("split", [*range(0, 2 ** 9, 17), 2 ** 9 - 1])  # 0: one add; 511: an item an add
def test_calls_of_a_reused_call_id_are_each_read_in_every_split_of_the_adds(tmp_path, split):
    """A call of a call_id the open turn's output answered was taken as a version of that call (read in its place:
    the Paris call and its output lost to Rome's), a call_id a turn before held was put in that turn's place within
    one add (the whole conversation added at once lost the Rome call), and an output equal to an earlier call's
    was dropped as sent again though its call was new: every split of the adds stores what the importer reads."""
    items = reused_ids()
    cuts = [i for i in range(1, len(items)) if split >> (i - 1) & 1]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id="r")
    for a, b in zip([0, *cuts], [*cuts, len(items)]):
        memory.add(items[a:b], user_id="t", run_id="r")
    assert (stored(memory), labelled(memory)) == want(imported(tmp_path, items))


@pytest.mark.parametrize("shape", ["chat", "untyped"])
def test_a_chat_agents_words_after_responses_items_decide_its_call_as_its_add_stores_it(shape):
    """A bare assistant message joins a scope's open turn of Responses items (it is a Responses item's shape too),
    and a search by a call then decided before it, as if the call would join it; an OpenAI chat agent's call is
    added as a tool_calls message, read apart after the words, whose stored state is decided at them. A search by
    the call in chat's shape, or untyped after bare words, is decided where its add decides it (until 2026-12-06
    before the words: a value the user gave was taken as seen, which the stored state flags)."""
    memory = ScopedMemory(HashingEncoder(16))
    for x in conversation()[:6]:  # a Responses agent's items first
        memory.add([x], user_id="t", run_id="r")
    memory.add([{"role": "user", "content": "Also cancel reservation ABC123 please."}], user_id="t", run_id="r")
    memory.add([{"role": "assistant", "content": "Let me look it up."}], user_id="t", run_id="r")
    function = {"name": "get_reservation_details", "arguments": json.dumps({"reservation_id": "ABC123"})}
    call = {"id": "t2", "type": "function", "function": function} if shape == "chat" else function
    state = memory.search("", call=call, user_id="t", run_id="r")["state"]
    point = memory.decision_point(user_id="t", run_id="r")
    memory.add([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "t2", "type": "function", "function": function}]}], user_id="t", run_id="r")
    events = memory._trackers["t//r"].events
    assert events[-1]["text"].startswith("CALL get_reservation_details")
    assert (state, point[1]) == (events[-2]["state"], events[-2]["text"]) == (state, "Let me look it up.")


@pytest.mark.parametrize("served", [False, True])
def test_a_bare_message_joining_responses_items_is_said_unstored_only_where_it_is_not(served):
    """A bare message of output_text parts joins the open turn of Responses items and is stored as their reader
    reads it, but the add's check read it as OpenAI chat's and answered that it was not stored ('holds only
    output_text parts'), beside its ADD; an empty one is still refused, as in any scope."""
    from sam_model.memory.scopedinput import NoTextError

    memory = ScopedMemory(HashingEncoder(16))
    for x in conversation()[:6]:
        memory.add([x], user_id="t", run_id="r")

    def add(x: dict) -> dict:
        read = memory.check_add([x], "messages", 100, user_id="t", run_id="r") if served else None
        return memory.add([x], user_id="t", run_id="r", read=read)

    out = add({"role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]})
    assert [(r["event"], r["memory"]) for r in out["results"]] == [("ADD", "Noted.")]
    assert "skipped" not in out
    with pytest.raises(NoTextError):
        add({"role": "user", "content": ""})


@pytest.mark.parametrize("one_each", [False, True])
def test_another_apis_messages_after_responses_items_are_read_by_their_reader(one_each):
    """A bare {"role", "content"} joins a scope's open turn of Responses items, and so did an Anthropic message of
    tool_use and tool_result blocks (its call and result lost) or a Bedrock Converse one (refused: 'content is
    missing'), which an add read with their own readers before: they store what they store in a scope without
    the Responses items."""
    anthropic = [
        {"role": "user", "content": "Look up unit 4B."},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                          {"type": "tool_use", "id": "tu1", "name": "lookup", "input": {"unit": "4B"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "Ann"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "b1", "name": "lookup", "input": {"unit": "5C"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "b1", "content": [{"text": "Bob"}]}}]},
    ]
    fresh, memory = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16))
    for x in conversation()[:4]:
        memory.add([x], user_id="t", run_id="r")
    before = len(stored(memory))
    for m in (fresh, memory):
        for a, b in ([(0, 3), (3, 5)] if not one_each else [(i, i + 1) for i in range(5)]):
            m.add(anthropic[a:b], user_id="t", run_id="r")
    assert [x[1:] for x in stored(memory)[before:]] == [x[1:] for x in stored(fresh)]
    assert any(x[2].startswith("CALL lookup") for x in stored(fresh))
