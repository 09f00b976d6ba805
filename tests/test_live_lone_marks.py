"""A message added alone (a kept add of one message, which tells no conversation) stood for the scope's whole
conversation after the scope was given more of it, so an add opening with its words and going on, another
conversation's opening, was read as it sent again and its first words were lost (resent.went_on). Now such a
message stands for the conversation only until the scope is given more of its format: no words are lost, and a
hook whose first message alone is followed by another conversation's add stores that message twice (documented)."""

from __future__ import annotations

import pytest
from test_live_add_leftovers import NO_ID, _add_one, _said
from test_live_gemini_turn import stored
from test_live_two_conversations import HOWS

from sam_model.memory import HashingEncoder, ScopedMemory

HI = {"content": "Hi", "role": "user"}
TAXI = {"content": "Book a taxi.", "role": "user"}


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _said_as(text: str, item_id: str) -> dict:
    return {**_said(text), "id": item_id}


def said(memory: ScopedMemory) -> list[str]:
    return [e[2] for e in stored(memory)]


@pytest.mark.parametrize("ids", [(NO_ID, NO_ID), ("msg_1", "msg_9")], ids=["no item ids", "ids of their own"])
@pytest.mark.parametrize("how", HOWS)
def test_a_new_sessions_list_opening_with_a_lone_messages_words_keeps_them(tmp_path, how, ids):
    """``[Hi]`` added alone, an Agents SDK answer added after it (as a SAMSession adds it), then another session's
    list opening with its own ``Hi``: the "Hi" was read as the lone message sent again and lost."""
    memory = _memory()
    for add in ([HI], [_said_as("Hello! How can I help?", ids[0])],
                [HI, _said_as("Hello! How can I help?", ids[1]), TAXI]):
        memory = _add_one(memory, add, how, tmp_path)
    assert said(memory) == ["Hi", "Hello! How can I help?", "Hi", "Hello! How can I help?", "Book a taxi."]


@pytest.mark.parametrize("how", HOWS)
def test_the_same_sessions_list_with_ids_is_still_read_once(tmp_path, how):
    """Guard: the session's own whole list after the same adds, its answer told by its id, stores only what is new
    (all the scope was given: resent.opens_with_given)."""
    memory = _memory()
    for add in ([HI], [_said_as("Hello! How can I help?", "msg_1")],
                [HI, _said_as("Hello! How can I help?", "msg_1"), TAXI]):
        memory = _add_one(memory, add, how, tmp_path)
    assert said(memory) == ["Hi", "Hello! How can I help?", "Book a taxi."]


@pytest.mark.parametrize("how", HOWS)
def test_a_hook_adding_its_whole_history_at_each_message_still_stores_each_once(tmp_path, how):
    """Guard: ``[Hi]``, ``[Hi, Hello]``, ``[Hi, Hello, Book a taxi.]`` (words alone): the lone message's mark goes
    to the add going on from it, which the next add opens with."""
    hello = {"role": "assistant", "content": "Hello! How can I help?"}
    memory = _memory()
    for add in ([HI], [HI, hello], [HI, hello, TAXI]):
        memory = _add_one(memory, add, how, tmp_path)
    assert said(memory) == ["Hi", "Hello! How can I help?", "Book a taxi."]


@pytest.mark.parametrize("how", HOWS)
def test_a_lone_message_then_another_conversations_add_then_its_words_going_on_are_stored_again(tmp_path, how):
    """``[Where is my order?]`` added alone, another conversation's ``[ok, Done.]``, then that conversation's turn
    opening with the same words: they were read as the lone message going on and stored once, the second
    conversation's words lost. Stored as in scopes kept apart by run_id."""
    where = {"role": "user", "content": "Where is my order?"}
    memory = _memory()
    for add in ([where], [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "Done."}],
                [where, {"role": "assistant", "content": "Which one?"}]):
        memory = _add_one(memory, add, how, tmp_path)
    assert said(memory) == ["Where is my order?", "ok", "Done.", "Where is my order?", "Which one?"]


def test_documents_behaviour_a_hooks_first_message_is_stored_twice_after_another_conversations_add():
    """Documents behaviour (docs/formats.md): the other reading of the add above, a hook adding its whole history at
    each message whose first message alone is followed by another conversation's add, stores that first message
    twice (a duplicate, where keeping the mark lost words). Give each conversation a run_id."""
    hi, hello = {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}
    other = [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "Done."}]
    shared, apart = _memory(), _memory()
    for add, run in (([hi], "a"), (other, "b"), ([hi, hello], "a")):
        shared.add(add, user_id="t", run_id="r")
        apart.add(add, user_id="t", run_id=run)
    assert said(shared) == ["Hi", "ok", "Done.", "Hi", "Hello!"]
    assert [e[2] for e in stored(apart, "a")] == ["Hi", "Hello!"]
