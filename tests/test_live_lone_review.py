"""Review of the lone-message rule (resent.went_on) against interleaved conversations in one scope: what is
lost and what is stored twice, as docs/formats.md says it."""

from __future__ import annotations

from test_live_gemini_turn import stored

from sam_model.memory import HashingEncoder, ScopedMemory


def _said(adds: list[list[dict]], runs: list[str] | None = None) -> list[str]:
    memory = ScopedMemory(HashingEncoder(16))
    for i, add in enumerate(adds):
        memory.add(add, user_id="t", run_id=runs[i] if runs else "r")
    return [e[2] for run in dict.fromkeys(runs or ["r"]) for e in stored(memory, run)]


def _m(role: str, text: str) -> dict:
    return {"role": role, "content": text}


def test_documents_behaviour_a_lone_message_then_another_conversations_add_of_its_words_loses_them():
    """Documents behaviour (docs/formats.md): a message added alone (another conversation's, added a message at a
    time), then at once an add opening with its words and going on (a Mem0-style turn of a second conversation)
    is read as a hook's history going on from it, so the second conversation's "no" is not stored; with a
    run_id each, both are. The other reading would store every hook's first message twice."""
    adds = [[_m("user", "Cancel it?")], [_m("user", "no")], [_m("user", "no"), _m("assistant", "Kept it.")]]
    assert _said(adds) == ["Cancel it?", "no", "Kept it."]
    assert sorted(_said(adds, ["a", "a", "b"])) == sorted(["Cancel it?", "no", "no", "Kept it."])


def test_a_lone_message_of_another_conversation_stores_a_loops_history_again_once_not_at_each_add():
    """A loop adding its whole history of words alone (its system message first) after each turn, and one message
    of another conversation added alone between two of its adds (which takes the loop's mark: resent.kept): the
    next history, read as new, was no mark either, and each later one was stored again whole (21 memories for 9).
    It is the loop's conversation gone on (its opening, past its kept add): stored again once, then read on."""
    history = [_m("system", "You help."), _m("user", "u1"), _m("assistant", "a1")]
    adds = [list(history), [_m("user", "x")]]
    for i in range(2, 5):
        history += [_m("user", f"u{i}"), _m("assistant", f"a{i}")]
        adds.append(list(history))
    assert _said(adds) == ["u1", "a1", "x", "u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"]


def test_a_second_hook_conversation_opening_with_the_firsts_words_is_stored_again_twice_not_at_each_message():
    """Two conversations of a hook adding its whole history at each message, words alone, in one scope, the second
    opening with the first's "Hi": each of its messages was stored again at every later message (21 memories for
    its 6). Its history going on past its own kept add (of its opening) is its whole conversation again, so its
    first messages are stored again at its next two adds, then each once (9 for 6)."""
    first = [_m("user", "Hi"), _m("assistant", "Hello"), _m("user", "Book a taxi."), _m("assistant", "Booked.")]
    second = [_m("user", "Hi"), _m("assistant", "Hello again"), _m("user", "Cancel it."),
              _m("assistant", "Cancelled."), _m("user", "Thanks"), _m("assistant", "Bye")]
    adds = [first[:n] for n in range(1, 5)] + [second[:n] for n in range(1, 7)]
    assert _said(adds)[4:] == ["Hi", "Hi", "Hello again", "Hi", "Hello again", "Cancel it.", "Cancelled.", "Thanks",
                               "Bye"]


def test_documents_behaviour_a_sessions_whole_list_of_words_after_its_items_alone_stores_them_all_again():
    """Documents behaviour (docs/formats.md): an Agents SDK session's items added one at a time (its "Hi", an answer
    of a model without item ids), then its own whole list of words alone: every earlier item is stored again, not
    its first words alone (5 memories for 3); nothing lost."""
    from test_live_add_leftovers import _said as answer

    hi = {"content": "Hi", "role": "user"}
    adds = [[hi], [answer("Hello! How can I help?")],
            [hi, answer("Hello! How can I help?"), {"content": "Book a taxi.", "role": "user"}]]
    assert _said(adds) == ["Hi", "Hello! How can I help?", "Hi", "Hello! How can I help?", "Book a taxi."]
