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

