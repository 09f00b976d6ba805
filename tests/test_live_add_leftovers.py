"""The live add path's leftovers after the two-conversations stop: conversations of one format group in one scope
whose histories open with the user's words (resent.opening), a new session opening with an earlier one's first
add (resent.opens_with_given), and ``given`` shared by two conversations added a message at a time."""

from __future__ import annotations

import pytest
from test_live_gemini_turn import stored
from test_live_two_conversations import HOWS, interleaved
from test_openai_whole_history import words

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def other(api: str) -> list[dict]:
    """A second conversation of words alone, its first words the user's."""
    said = [("user", "Hey"), ("assistant", "Hi there"), ("user", "Weather?"), ("assistant", "Sunny"),
            ("user", "And tomorrow?"), ("assistant", "Rain")]
    return [{"role": r, "content": [{"type": "text", "text": s}] if api == "anthropic" else s} for r, s in said]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("how", HOWS)
def test_two_loops_opening_with_the_users_words_each_store_each_message_once(tmp_path, api, how):
    """Two loops in one scope whose histories open with the user's words (Anthropic's, an OpenAI or Mem0-style add
    without a system message), each adding its whole history after each turn, turns taking turns: each one's add
    took the other's mark, and each history was stored again whole at each turn (24 memories for 12)."""
    whole, new = interleaved(words(api), other(api), [(2, 2), (4, 4), (6, 6)], how, tmp_path)
    assert len(new) == 12 and whole == new


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_one_loop_opening_with_the_users_words_added_again_whole_stores_nothing_new(api):
    """Guard: the same conversation re-added whole after each turn, and once more unchanged at its end."""
    memory, msgs = _memory(), words(api)
    for end in (2, 4, 6):
        memory.add(msgs[:end], user_id="t", run_id="r")
    assert len(stored(memory)) == 6


def test_words_added_alone_then_again_with_the_next_run_are_stored_again():
    """Guard (documented, stop 63): the user's first words added alone, the run's reply, then the same words said
    again with the next run's messages: the words are new, stored again (a message added alone keeps no opening)."""
    memory = _memory()
    hi, hello = {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}
    memory.add([hi], user_id="t", run_id="r")
    memory.add([hello], user_id="t", run_id="r")
    memory.add([hi, {"role": "assistant", "content": "Hello again!"}], user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)].count("Hi") == 2


SYSTEM = {"role": "system", "content": "You are the concierge of Hotel Aurora."}


@pytest.mark.parametrize("how", HOWS)
def test_a_new_session_opening_as_an_earlier_sessions_first_add_keeps_its_own_words(tmp_path, how):
    """[S, U1] added whole, the conversation going on a message at a time, then a new session whose history is
    [S, U1, B1]: the new session's U1 was read as the first add sent again, and stored once only. A message added
    alone tells no conversation: it goes on from every one, so the first add no longer stands for a whole one."""
    u1 = {"role": "user", "content": "Hi, I'd like a table tonight."}
    later = [{"role": "assistant", "content": "For how many?"}, {"role": "user", "content": "Two."},
             {"role": "assistant", "content": "Booked."}]
    b1 = {"role": "assistant", "content": "Welcome back! A table again?"}
    whole, new = _memory(), _memory()
    for memory in (whole, new):
        memory.add([SYSTEM, u1], user_id="t", run_id="r")
    for m in later:
        whole = _add_one(whole, [m], how, tmp_path)
        new.add([m], user_id="t", run_id="r")
    whole = _add_one(whole, [SYSTEM, u1, b1], how, tmp_path)
    new.add([SYSTEM, u1, b1], user_id="t", run_id="r")
    said = [e[2] for e in stored(whole)]
    assert said.count(u1["content"]) == 2 and stored(whole) == stored(new) and len(said) == 1 + 3 + 2  # the system message is no memory


def _add_one(memory: ScopedMemory, data: list, how: str, tmp_path) -> ScopedMemory:
    read = memory.check_add(data, "data", user_id="t", run_id="r") if how == "checked first" else None
    memory.add(data, user_id="t", run_id="r", read=read)
    return ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16)) if how == "saved and loaded" else memory


NO_ID = "__fake_id__"  # the OpenAI Agents SDK's id of every item a Chat Completions or LiteLLM model gave


def _said(text: str) -> dict:
    return {"id": NO_ID, "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def agents_sdk_adds() -> list[list[dict]]:
    """What a SAMSession hands ScopedMemory.add over two runs of a model without item ids: the user's input, then
    each model response's items with the call's output, then the answer (as the SDK's add_items gives them)."""
    def call(i: int, order: str) -> list[dict]:
        return [{"arguments": f'{{"order_id": "{order}"}}', "call_id": f"call_{i}", "name": "lookup_order",
                 "type": "function_call", "id": NO_ID},
                {"call_id": f"call_{i}", "output": f"order {order}: shipped", "type": "function_call_output"}]
    return [[{"content": "Where is my order A-77?", "role": "user"}], [_said("Checking A-77."), *call(1, "A-77")],
            [_said("It shipped to Lisbon.")], [{"content": "And B-12?", "role": "user"}],
            [_said("Checking B-12."), *call(2, "B-12")], [_said("B-12 shipped too.")]]


@pytest.mark.parametrize("how", HOWS)
def test_an_agents_sdk_list_without_item_ids_added_again_whole_stores_nothing_new(tmp_path, how):
    """The Agents SDK's items of a model without ids (all "__fake_id__"), added as a SAMSession adds them, then
    the session's whole list (get_items) added again: the answers told by no id were stored again (the user's first
    message, told as OpenAI chat, and the adds of one item were no part of what the scope was given of them)."""
    memory, adds = _memory(), agents_sdk_adds()
    for add in adds:
        memory = _add_one(memory, add, how, tmp_path)
    before = stored(memory)
    out = memory.add([m for add in adds for m in add], user_id="t", run_id="r")
    assert out["results"] == [] and stored(memory) == before and len(before) == 10
    assert out["notes"][0]["reason"].startswith("data[0:10]: all the scope was given of Responses items")


def test_documents_behaviour_two_conversations_added_a_message_at_a_time_share_what_the_scope_was_given():
    """Documents behaviour (README): two conversations of one format added a message at a time to one scope,
    interleaved, are one record of what the scope was given (resent.given: a message alone tells no conversation),
    so neither's whole history opens with it: each, added whole afterwards, is stored again (24 memories for 12),
    none lost. Give each conversation a run_id (then each scope keeps its own)."""
    from test_live_two_conversations import booking, taxi

    first, second = booking()[1:], taxi()[1:]
    shared, apart = _memory(), _memory()
    for a, b in zip(first, second):
        shared.add([a], user_id="t", run_id="r")
        shared.add([b], user_id="t", run_id="r")
        apart.add([a], user_id="t", run_id="a")
        apart.add([b], user_id="t", run_id="b")
    for memory, runs in ((shared, ("r", "r")), (apart, ("a", "b"))):
        memory.add(first, user_id="t", run_id=runs[0])
        memory.add(second, user_id="t", run_id=runs[1])
    assert len(stored(shared)) == 24 and len(stored(apart, "a")) == len(stored(apart, "b")) == 6


def test_a_new_sessions_list_reading_like_anothers_first_items_without_ids_keeps_them():
    """Guard for the chain above (passes before it, fails with it alone): the SDK's placeholder id is no id written
    once (every item of such a model holds it). One session's first message and answer added as a SAMSession adds
    them, then another session's whole list opening with the same words ("Hi", the same greeting) and going on:
    with the placeholder read as an id it was taken for all the scope was given sent again, its greeting lost. Its
    "Hi" is its own too: the first add, a message alone, stood for the scope's whole conversation after the answer
    went on from it, and the list opening with it was read as it sent again, the "Hi" lost, until the live leftovers
    of 2026-12-07 (resent.went_on; tests/test_live_lone_marks.py)."""
    memory = _memory()
    hi, hello = {"content": "Hi", "role": "user"}, _said("Hello! How can I help?")
    memory.add([hi], user_id="t", run_id="r")
    memory.add([hello], user_id="t", run_id="r")
    memory.add([hi, hello, {"content": "Book a taxi.", "role": "user"}], user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["Hi", "Hello! How can I help?", "Hi", "Hello! How can I help?",
                                              "Book a taxi."]


@pytest.mark.parametrize("how", HOWS)
def test_an_answer_without_an_item_id_said_again_before_a_call_is_stored_again(tmp_path, how):
    """A model without item ids (every item "__fake_id__"): a run answered in words alone ("Let me check."), the
    user's next message, then a response opening with the same words before its call. The placeholder is no id
    written once, so the first answer added alone was kept as the scope's whole conversation of Responses items
    (resent.alone_kept), and the next response, opening with it and going on, was read as it sent again: its words
    were lost. Before the placeholder was read as no id, such an add was not kept (as one holding an id is not)."""
    memory = _memory()
    check = _said("Let me check.")
    call = [{"arguments": '{"order_id": "A-77"}', "call_id": "call_1", "name": "lookup_order",
             "type": "function_call", "id": NO_ID},
            {"call_id": "call_1", "output": "order A-77: shipped", "type": "function_call_output"}]
    for add in ([{"content": "Is my order late?", "role": "user"}], [check],
                [{"content": "It is A-77.", "role": "user"}], [check, *call]):
        memory = _add_one(memory, add, how, tmp_path)
    assert [e[2] for e in stored(memory)].count("Let me check.") == 2
