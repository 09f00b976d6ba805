"""An OpenAI Chat Completions or Anthropic Messages agent loop adding its whole history after each turn
(``memory.add(messages)``): each add stored every earlier message again (9 memories for 5), where Converse,
Pydantic AI, AutoGen and smolagents histories were read once (sam_model.memory.resent). A tool call's id
(``call_...``, ``toolu_...``) is written once, so the same rule holds; words alone follow resent's words rules."""

from __future__ import annotations

import json

import pytest
from test_live_gemini_turn import stored

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _call(i: str, name: str, args: dict) -> dict:
    return {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def openai_chat() -> list[dict]:
    """Two turns of an OpenAI chat agent cancelling a reservation, 4 messages each."""
    return [{"role": "user", "content": "Cancel reservation NO6JO3 please."},
            {"role": "assistant", "content": None,
             "tool_calls": [_call("call_abc", "get_reservation", {"reservation_id": "NO6JO3"})]},
            {"role": "tool", "tool_call_id": "call_abc", "content": '{"status": "booked", "origin": "BOS"}'},
            {"role": "assistant", "content": "It is booked from Boston. Cancel it?"},
            {"role": "user", "content": "yes"},
            {"role": "assistant", "content": None,
             "tool_calls": [_call("call_def", "cancel_reservation", {"reservation_id": "NO6JO3"})]},
            {"role": "tool", "tool_call_id": "call_def", "content": '{"status": "cancelled"}'},
            {"role": "assistant", "content": "NO6JO3 is cancelled."}]


def anthropic_chat() -> list[dict]:
    """The same two turns as Anthropic Messages: tool_use blocks and the user's tool_result."""
    return [{"role": "user", "content": "Cancel reservation NO6JO3 please."},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking it up."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_reservation", "input": {"reservation_id": "NO6JO3"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A",
                                          "content": '{"status": "booked", "origin": "BOS"}'}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It is booked from Boston. Cancel it?"}]},
            {"role": "user", "content": [{"type": "text", "text": "yes"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01B", "name": "cancel_reservation", "input": {"reservation_id": "NO6JO3"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01B",
                                          "content": '{"status": "cancelled"}'}]},
            {"role": "assistant", "content": [{"type": "text", "text": "NO6JO3 is cancelled."}]}]


def langchain_chat() -> list[dict]:
    """The same turns as messages_to_dict writes a LangGraph state's messages (each with its id)."""
    def m(kind: str, i: str, content: str, **more) -> dict:
        return {"type": kind, "data": {"type": kind, "id": i, "content": content, **more}}
    tc = lambda i, n: [{"name": n, "args": {"reservation_id": "NO6JO3"}, "id": i, "type": "tool_call"}]  # noqa: E731
    return [m("human", "h1", "Cancel reservation NO6JO3 please."),
            m("ai", "run-1", "", tool_calls=tc("call_abc", "get_reservation")),
            m("tool", "t1", '{"status": "booked"}', tool_call_id="call_abc"),
            m("ai", "run-2", "It is booked from Boston. Cancel it?", tool_calls=[]),
            m("human", "h2", "yes"),
            m("ai", "run-3", "", tool_calls=tc("call_def", "cancel_reservation")),
            m("tool", "t2", '{"status": "cancelled"}', tool_call_id="call_def"),
            m("ai", "run-4", "NO6JO3 is cancelled.", tool_calls=[])]


def words(api: str) -> list[dict]:
    """Three exchanges of words alone (an Anthropic message's words as a text block)."""
    said = [("user", "Hi"), ("assistant", "Hello, how can I help?"), ("user", "A table for two tonight?"),
            ("assistant", "Booked for 7."), ("user", "thanks"), ("assistant", "Enjoy your meal.")]
    return [{"role": r, "content": [{"type": "text", "text": s}] if api == "anthropic" else s} for r, s in said]


CHATS = {"openai": openai_chat, "anthropic": anthropic_chat, "langchain": langchain_chat}
NAMES = {"openai": "OpenAI chat", "anthropic": "Anthropic", "langchain": "LangChain"}


def _whole_and_new(msgs: list[dict], ends: list[int], how: str, tmp_path) -> tuple[ScopedMemory, ScopedMemory, list]:
    """The history added whole at each end, and each end's new messages alone."""
    whole, new, answers, n = _memory(), _memory(), [], 0
    for end in ends:
        read = whole.check_add(msgs[:end], "data", user_id="t", run_id="r") if how == "checked first" else None
        answers.append(whole.add(msgs[:end], user_id="t", run_id="r", read=read))
        if end > n:
            new.add(msgs[n:end], user_id="t", run_id="r")
        n = end
        if how == "saved and loaded":
            whole = ScopedMemory.load(whole.save(tmp_path / "m"), HashingEncoder(16))
    return whole, new, answers


@pytest.mark.parametrize("api", sorted(CHATS))
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_history_with_calls_added_whole_after_each_turn_stores_each_message_once(tmp_path, api, how):
    """messages[:4], then messages[:8] (then [:8] again, the add retried): stored as the adds of each turn's new
    messages, memories, states and labels, the start read once and the notes saying so (before: 9 memories for 5)."""
    msgs = CHATS[api]()
    whole, new, answers = _whole_and_new(msgs, [4, 8, 8], how, tmp_path)
    assert stored(whole) == stored(new) and stored(new)
    assert [len(a["results"]) for a in answers][2] == 0
    reasons = [a.get("notes", [{}])[0].get("reason", "") for a in answers]
    assert reasons[0] == "" and reasons[1].startswith(f"data[0:4]: the scope's last add of {NAMES[api]} messages")
    assert "ids" in reasons[1] and reasons[2].startswith("data[0:8]:")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_history_of_words_alone_added_whole_after_each_turn_stores_each_message_once(tmp_path, api, how):
    """Words alone hold no id: the scope's first add is its whole conversation, and each whole history going on
    from it is it sent again (resent's words rule, as for Converse), the note saying so."""
    msgs = words(api)
    whole, new, answers = _whole_and_new(msgs, [2, 4, 6], how, tmp_path)
    assert stored(whole) == stored(new) and len(stored(new)) == 6
    assert "the scope's whole conversation, which the add goes on from" in answers[2]["notes"][0]["reason"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_genuine_repeat_is_still_stored_twice(api):
    """Guard (passes before): a "yes" added alone twice, an exchange of words added twice (a retry and a second run that replied
    alike are the same adds), and a question asked again in a new turn with a new call id: each stored anew."""
    yes, (hi, hello) = words(api)[4], words(api)[:2]
    for adds, want in (([[yes], [yes]], 2), ([[hi, hello], [hi, hello]], 4)):
        memory = _memory()
        for add in adds:
            memory.add(add, user_id="t", run_id="r")
        assert len(stored(memory)) == want
    msgs = CHATS[api]()
    again = json.loads(json.dumps(msgs[:4]).replace("call_abc", "call_xyz").replace("toolu_01A", "toolu_01Z"))
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    out = memory.add(again, user_id="t", run_id="r")
    assert "notes" not in out and len(stored(memory)) == 2 * len(stored(_one(msgs[:4])))


def _one(msgs: list[dict]) -> ScopedMemory:
    memory = _memory()
    memory.add(msgs, user_id="t", run_id="r")
    return memory


@pytest.mark.parametrize("api", sorted(CHATS))
def test_another_scope_is_untouched(api):
    """Scope a's whole history after each turn is read once; scope b, given the same whole history as its first
    add, stores it all, and so does a's user in another run."""
    msgs = CHATS[api]()
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="a")
    memory.add(msgs, user_id="t", run_id="b")
    memory.add(msgs, user_id="t", run_id="a")
    assert stored(memory, "a") == stored(memory, "b") == stored(_one(msgs))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_served_add_of_the_whole_history_after_each_turn_stores_what_scoped_memory_add_does(tmp_path, api):
    """sam-serve's HTTP add (``{"messages": messages, "user_id", "run_id"}``) after each turn: the answers and
    memories of ScopedMemory.add's, the earlier turns read once (the notes naming them)."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    msgs = CHATS[api]()
    memory = ScopedMemory(HashingEncoder(32))
    want = [memory.add(msgs[:end], user_id="me", run_id="trip") for end in (4, 8)]
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http = TestClient(create_app(tenants))
    got = [http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                     json={"messages": msgs[:end], "user_id": "me", "run_id": "trip"}) for end in (4, 8)]
    assert [r.status_code for r in got] == [200, 200], [r.json() for r in got]
    field = lambda answer: json.loads(json.dumps(answer).replace('"data[', '"messages['))  # noqa: E731
    assert [r.json() for r in got] == [field(a) for a in want] and want[1]["notes"]
    listed = lambda m: [(r["id"], r["memory"]) for r in m.get_all(user_id="me", run_id="trip", limit=None)["results"]]  # noqa: E731
    assert listed(tenants.tenants["acme"].memory) == listed(memory) == listed(_served_alone(msgs))
    tenants.close()


def _served_alone(msgs: list[dict]) -> ScopedMemory:
    memory = ScopedMemory(HashingEncoder(32))
    memory.add(msgs[:4], user_id="me", run_id="trip")
    memory.add(msgs[4:], user_id="me", run_id="trip")
    return memory
