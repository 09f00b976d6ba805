"""A whole history of words alone added at each message whose messages do not alternate: reproduced here first."""

from __future__ import annotations

import pytest
from test_live_leftovers_61 import _words

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _said(memory: ScopedMemory, run: str = "r") -> list[str]:
    """The scope's memories' words, in step order."""
    hits = memory.get_all(user_id="t", run_id=run)["results"]
    return [h["memory"] for h in sorted(hits, key=lambda h: h["step"])]


def _autogen(source: str, said: str) -> dict:
    kind = "UserMessage" if source == "user" else "AssistantMessage"
    return {"type": kind, "content": said, "source": source}


# two of the user's in a row, two replies in a row, a "yes" said twice with replies between, and "yes" twice in a row
OUT_OF_TURN = [("user", "Hi"), ("user", "A table for two tonight?"), ("assistant", "Sure."),
               ("assistant", "At 7?"), ("user", "yes"), ("assistant", "Indoors?"), ("user", "yes"), ("user", "yes"),
               ("assistant", "Booked."), ("assistant", "See you at 7.")]


@pytest.mark.parametrize("fmt", ["converse", "autogen"])
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_whole_history_of_words_out_of_turn_added_at_each_message_stores_each_message_once(tmp_path, how, fmt):
    """A hook adding the whole history at each message, of words alone whose messages do not alternate (two of
    the user's in a row, two replies in a row): the add going on from the scope's whole conversation with a message
    of the same side as its last was read as new, and each message was stored again at every later add (55
    memories for 10). It is the whole conversation sent again, as for a history in turn; a "yes" said again, later
    or at once, is still stored again, as added alone."""
    msgs = [_words(r, s) if fmt == "converse" else _autogen(r, s) for r, s in OUT_OF_TURN]
    whole, alone = _memory(), _memory()
    for end in range(1, len(msgs) + 1):
        read = whole.check_add(msgs[:end], "data", user_id="t", run_id="r") if how == "checked first" else None
        whole.add(msgs[:end], user_id="t", run_id="r", read=read)
        alone.add(msgs[end - 1:end], user_id="t", run_id="r")
        if how == "saved and loaded":
            whole = ScopedMemory.load(whole.save(tmp_path / "m"), HashingEncoder(16))
    assert _said(whole) == _said(alone) == [s for _, s in OUT_OF_TURN]


def test_words_said_again_by_adds_that_are_no_whole_history_are_stored_again():
    """Guard: a "yes" added alone twice, an exchange added twice (a retry, or a second run that replied alike), and
    a scope whose first add was its words alone, then an exchange of others: each add is stored as new."""
    yes, hi, hello = _words("user", "yes"), _words("user", "Hi"), _words("assistant", "Hello")
    cases = [([[yes], [yes]], ["yes", "yes"]),
             ([[hi, hello], [hi, hello]], ["Hi", "Hello", "Hi", "Hello"]),
             ([[hi], [_words("user", "Other")], [hi, yes]], ["Hi", "Other", "Hi", "yes"])]
    for adds, want in cases:
        memory = _memory()
        for add in adds:
            memory.add(add, user_id="t", run_id="r")
        assert _said(memory) == want
