"""Two agent loops of one format group in one scope (two OpenAI Chat loops adding their whole histories to one user
scope, or an OpenAI and an Anthropic loop, whose words read as OpenAI's): the scope kept one mark of its whole
conversation a format group (resent.kept), so each loop's add read as new took the other's, and a history whose
opening held no id (a first turn of words alone) was stored again at each later turn. A history opening with a
system message is a conversation from its start: it keeps its own mark, told by its opening (resent.thread)."""

from __future__ import annotations

import json

import pytest
from test_live_gemini_turn import stored
from test_openai_whole_history import _call, openai_chat, words

from sam_model.memory import HashingEncoder, ScopedMemory

SYSTEM = {"role": "system", "content": "You are the concierge of Hotel Aurora."}
HOWS = ["in process", "saved and loaded", "checked first"]


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def booking() -> list[dict]:
    """An OpenAI loop's history: a first turn of words alone (no id), then a turn with a call."""
    return [SYSTEM, {"role": "user", "content": "Hi, I'd like a table tonight."},
            {"role": "assistant", "content": "Happy to help. For how many?"},
            {"role": "user", "content": "Two, at 7."},
            {"role": "assistant", "content": None, "tool_calls": [_call("call_t1", "book_table", {"people": 2})]},
            {"role": "tool", "tool_call_id": "call_t1", "content": '{"table": 12}'},
            {"role": "assistant", "content": "Table 12 is yours at 7."}]


def taxi() -> list[dict]:
    """A second conversation with the same agent (same system message), words alone at first."""
    return [SYSTEM, {"role": "user", "content": "Can you get me a taxi to the airport?"},
            {"role": "assistant", "content": "Sure. When do you leave?"},
            {"role": "user", "content": "At 5 tomorrow."},
            {"role": "assistant", "content": None, "tool_calls": [_call("call_x1", "order_taxi", {"at": "05:00"})]},
            {"role": "tool", "tool_call_id": "call_x1", "content": '{"car": "B-7"}'},
            {"role": "assistant", "content": "Car B-7 picks you up at 5."}]


TURNS = {"booking": [3, 7], "taxi": [3, 7]}  # the history's length after each turn


def _add(memory: ScopedMemory, data: list, how: str, tmp_path) -> ScopedMemory:
    read = memory.check_add(data, "data", user_id="t", run_id="r") if how == "checked first" else None
    memory.add(data, user_id="t", run_id="r", read=read)
    return ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16)) if how == "saved and loaded" else memory


def interleaved(first: list, second: list, ends: list[tuple[int, int]], how: str, tmp_path) -> tuple[list, list]:
    """(what a scope stores of ``first`` and ``second`` added whole after each turn, their adds taking turns at
    ``ends``; what it stores of each turn's new messages added in the same order)."""
    whole, new, at = _memory(), _memory(), [0, 0]
    for a, b in ends:
        for i, (msgs, end) in enumerate(((first, a), (second, b))):
            if end > at[i]:
                whole = _add(whole, msgs[:end], how, tmp_path)
                new.add(msgs[at[i]:end], user_id="t", run_id="r")
                at[i] = end
    return stored(whole), stored(new)


@pytest.mark.parametrize("how", HOWS)
def test_two_openai_loops_with_a_system_message_store_each_message_once(tmp_path, how):
    """Two sessions of one agent in one user's scope, each adding its whole history after each turn, turns taking
    turns: the second's first add took the first's mark, and the first's next history stored its opening again
    (and so on for each: 18 memories for 12)."""
    whole, new = interleaved(booking(), taxi(), [(3, 3), (7, 7)], how, tmp_path)
    assert whole == new and len(new) == 12


@pytest.mark.parametrize("how", HOWS)
def test_an_openai_loop_and_an_anthropic_loop_in_one_scope_store_each_message_once(tmp_path, how):
    """An OpenAI loop (its system message first) and an Anthropic loop (words alone: read as OpenAI's), each adding
    its whole history after each turn: each took the other's mark, and each stored its earlier turns again."""
    anthropic = words("anthropic")
    whole, new = interleaved(booking(), anthropic, [(3, 2), (7, 4), (7, 6)], how, tmp_path)
    assert whole == new and len(new) == 6 + 6


def test_a_hook_adding_each_loops_whole_history_at_each_message_stores_each_message_once():
    """Guard (passes before): a hook adding each loop's whole history at each message, the system message alone first
    (an exact resend, read as new, as words are), then with the user's words: each message once."""
    whole, new = interleaved(booking(), taxi(), [(e, e) for e in range(1, 8)], "in process", None)
    assert whole == new and len(new) == 12


def test_documents_behaviour_two_conversations_with_one_opening_are_one_to_the_scope():
    """Documents behaviour (README): two sessions whose openings are the same (system message and first words) are
    one conversation to the scope, as before: the second's first history, opening with none of the scope's adds,
    takes the first's mark, and the first's next history, words alone at its start, stores them again (the first
    words three times)."""
    first, second = booking(), [*booking()[:2], {"role": "assistant", "content": "Certainly! How many people?"}]
    memory = _memory()
    for add in (first[:3], second[:3], first[:7]):
        memory.add(add, user_id="t", run_id="r")
    said = [e[2] for e in stored(memory)]
    assert said.count("Hi, I'd like a table tonight.") == 3 and "Certainly! How many people?" in said


def test_documents_behaviour_two_loops_opening_with_the_same_words_still_share_a_mark():
    """Documents behaviour (README): loops whose histories open with the user's words each keep their own mark
    since 2026-12-07 (tests/test_live_add_leftovers.py), told by those words; two whose first words are the same (a
    "Hi" each) are one conversation to the scope, as two sessions of one system message and first words are: the
    second's add takes the first's mark, and words alone are stored again at each turn (give each a run_id)."""
    other = [{"role": r, "content": [{"type": "text", "text": s}]} for r, s in (
        ("user", "Hi"), ("assistant", "Hi there"), ("user", "Weather?"), ("assistant", "Sunny"),
        ("user", "And tomorrow?"), ("assistant", "Rain"))]
    whole, new = interleaved(words("anthropic"), other, [(2, 2), (4, 4), (6, 6)], "in process", None)
    assert len(new) == 12 and len(whole) > 12


def test_the_opening_is_saved_with_each_kept_add_and_a_save_from_before_loads(tmp_path):
    """Each kept add of a history opening with a system message saves its opening's digest before its format; a
    save from before (no opening) loads, its adds read as of no conversation's opening, as before."""
    memory = _memory()
    memory.add(booking()[:3], user_id="t", run_id="r")
    memory.add(taxi()[:3], user_id="t", run_id="r")
    d = json.loads((memory.save(tmp_path / "m") / "scoped.json").read_text())
    sent = d["sent"]["t//r"]
    assert [k[-1] for k in sent] == ["openai", "openai"] and len({k[-2] for k in sent}) == 2
    assert all(isinstance(k[-2], str) and k[-2].startswith("opening:") for k in sent)
    assert ScopedMemory.load(tmp_path / "m", HashingEncoder(16))._sent == memory._sent
    old = {**d, "sent": {ep: [[*k[:-2], k[-1]] for k in ks] for ep, ks in d["sent"].items()}}
    (tmp_path / "m" / "scoped.json").write_text(json.dumps(old))
    loaded = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    loaded.add(taxi(), user_id="t", run_id="r")
    memory.add(taxi(), user_id="t", run_id="r")
    assert stored(loaded) == stored(memory)


def test_a_save_with_a_bad_opening_is_refused_in_one_line_naming_it(tmp_path):
    memory = _memory()
    memory.add(booking()[:3], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    text = json.dumps({**d, "sent": {"t//r": [["d", 3, True, "nope", "openai"]]}})
    (saved / "scoped.json").write_text(text)
    from sam_model.io import SAMFileError
    with pytest.raises(SAMFileError, match=r"sent of 't//r' must be a list of \[digest, count\] .*conversation, its 'opening:\.\.\.', the format\), up to 8") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value) and (saved / "scoped.json").read_text() == text


def test_a_loop_with_calls_beside_a_loop_of_words_is_unchanged():
    """Guard: OpenAI histories whose first turn holds a call (read once by their ids) beside another conversation,
    as before."""
    whole, new = interleaved(openai_chat(), taxi(), [(4, 3), (8, 7)], "in process", None)
    assert whole == new


def test_a_conversation_adding_at_each_message_does_not_push_the_others_last_add_out():
    """Each format keeps its last 8 adds: a session adding its whole history at each message (9 adds) pushed the
    other session's last add out, and that one's next history, its calls told by their ids, was stored again whole.
    The oldest of the conversation keeping most go first."""
    first = [*booking(), {"role": "user", "content": "Thanks!"}, {"role": "assistant", "content": "Enjoy."}]
    second = taxi()
    whole, new = interleaved(second, first, [(6, 0), *((6, e) for e in range(1, 10)), (7, 9)], "in process", None)
    assert whole == new and len(new) == 6 + 8
