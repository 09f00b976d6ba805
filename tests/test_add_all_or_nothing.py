"""ScopedMemory.add is all or nothing: an add that fails midway (the encoder raising on the 3rd of 5 messages, the
disk full when the memory is saved) keeps neither some of its memories nor its resend marks (the key of a history
sent again, sam_model.memory.resent), so the agent's next add of its whole history stores each message once: kept
memories without their marks stored them again, marks without their memories lost them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sam_model.memory.scopedfile as scopedfile
from sam_model.memory import HashingEncoder, ScopedMemory

CALL = {"id": "call_7Qx", "type": "function", "function": {"name": "book", "arguments": json.dumps({"city": "Oslo"})}}
HISTORY = [{"role": "system", "content": "You book trips."}, {"role": "user", "content": "Book me to Oslo"},
           {"role": "assistant", "content": None, "tool_calls": [CALL]},
           {"role": "tool", "tool_call_id": "call_7Qx", "content": "booked OSL-7"},
           {"role": "assistant", "content": "Booked: OSL-7."}, {"role": "user", "content": "thanks, and a hotel?"}]
MORE = [*HISTORY, {"role": "assistant", "content": "Which night?"}]


class Failing(HashingEncoder):
    """Encodes memories one by one, raising at the ``fail_at``-th (counted from 1) while it is set."""

    fail_at: int | None = None

    def encode_memories(self, memories, batch_size=64, progress=False):
        out = []
        for n, m in enumerate(memories, 1):
            if n == self.fail_at:
                raise RuntimeError("encoder failed")
            out.append(super().encode_memories([m], batch_size, progress))
        return np.concatenate(out) if out else super().encode_memories(memories, batch_size, progress)


def _texts(memory: ScopedMemory) -> list[str]:
    return [r["memory"] for r in memory.get_all(user_id="u", limit=None)["results"]]


def _reference() -> list[str]:
    memory = ScopedMemory(HashingEncoder(32))
    memory.add(HISTORY, user_id="u")
    memory.add(MORE, user_id="u")
    return _texts(memory)


def test_an_encoder_failing_midway_keeps_nothing_and_the_next_adds_store_each_message_once():
    encoder = Failing(32)
    memory = ScopedMemory(encoder)
    encoder.fail_at = 3
    with pytest.raises(RuntimeError, match="encoder failed"):
        memory.add(HISTORY, user_id="u")
    assert _texts(memory) == [] and memory._sent == {} and memory._given == {}
    encoder.fail_at = None
    memory.add(HISTORY, user_id="u")
    encoder.fail_at = 1  # the next turn's add fails too: the history's marks stay those of the add stored
    with pytest.raises(RuntimeError, match="encoder failed"):
        memory.add(MORE, user_id="u")
    encoder.fail_at = None
    memory.add(MORE, user_id="u")
    assert _texts(memory) == _reference() and len(_texts(memory)) == len(set(_texts(memory)))


def test_a_save_failing_on_a_full_disk_leaves_the_last_save_whole_and_the_memory_as_it_was(tmp_path, monkeypatch):
    memory = ScopedMemory(HashingEncoder(32))
    memory.add(HISTORY, user_id="u")
    memory.save(tmp_path / "m")
    memory.add(MORE, user_id="u")
    with monkeypatch.context() as full:
        def no_space(*args, **kwargs):
            raise OSError(28, "No space left on device")
        full.setattr(scopedfile, "write_json_lists", no_space)
        with pytest.raises(OSError, match="No space left"):
            memory.save(tmp_path / "m")
    memory.add(MORE, user_id="u")  # in process: memories and marks of the adds, both kept
    assert _texts(memory) == _reference()
    loaded = ScopedMemory.load(tmp_path / "m", HashingEncoder(32))  # the last save: the first add and its marks
    loaded.add(MORE, user_id="u")
    assert _texts(loaded) == _reference()
