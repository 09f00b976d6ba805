"""A non-author review of the live-path leftovers of stop 61 (tests/test_live_leftovers_61.py): what it broke."""

from __future__ import annotations

import pytest
from test_live_leftovers_61 import _claim, _words

from sam_model.memory import HashingEncoder, ScopedMemory


def test_an_error_in_converse_messages_after_a_resent_start_names_the_message_sent():
    """agent.messages added whole again, its start the scope's last add: the rest is read alone, and a bad message in
    it was named by its place in the rest (data, message 1), not in what the agent sent (its message 5): it names the
    rest it is read in, data[4:]. The scope is as it was."""
    memory = ScopedMemory(HashingEncoder(16))
    msgs = _claim()
    memory.add(msgs[:4], user_id="t", run_id="r")
    before = memory.get_all(user_id="t", run_id="r")["results"]
    blank = {"role": "user", "content": [{"text": "   "}]}
    with pytest.raises(ValueError, match=r"^data\[4:\], message 1\.content is only whitespace") as err:
        memory.add([*msgs[:4], _words("user", "ok"), blank], user_id="t", run_id="r")
    assert "\n" not in str(err.value) and memory.get_all(user_id="t", run_id="r")["results"] == before
    with pytest.raises(ValueError, match=r"^data, message 1\.content is only whitespace"):  # no start sent again
        memory.add([_words("user", "ok"), blank], user_id="t", run_id="r")
