"""Final review of the live memory path (stop 60): what the review of today's changes to sam_model.memory found.

An agent-log event's step given as a NumPy integer (a pandas DataFrame's column, ``df.to_dict("records")`` or
Events built from its rows) is a step: the store's check takes one (storechecks.check_memory), but the add's step
check (03a8520) refused an Event's as "must be an integer ... got np.int64(0)", and a dict's failed in parse_event
with "Object of type int64 is not JSON serializable"; before that check an Event's was stored and the scope's save
then failed for the same reason. It is stored as the int it is, and the memory saves and loads."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.data.schema import Event, State
from sam_model.memory import HashingEncoder, ScopedMemory


def _numpy_events(as_dicts: bool) -> list:
    rows = [(0, "user mia_li_3668"), (1, "reservation ZFA04Y")]
    if as_dicts:
        return [{"kind": "result", "text": t, "step": np.int64(s)} for s, t in rows]
    return [Event("e", np.int64(s), "result", t, State()) for s, t in rows]


@pytest.mark.parametrize("as_dicts", [False, True], ids=["Event", "dict"])
def test_a_numpy_integer_step_is_stored_as_its_int_and_the_memory_saves_and_loads(tmp_path, as_dicts):
    memory = ScopedMemory(HashingEncoder(16))
    added = memory.add(_numpy_events(as_dicts), user_id="u")["results"]
    assert [r["step"] for r in added] == [0, 1]
    assert all(type(r["step"]) is int for r in added)
    loaded = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert sorted((r["step"], r["memory"]) for r in loaded.get_all(user_id="u", limit=None)["results"]) == [
        (0, "user mia_li_3668"), (1, "reservation ZFA04Y")]
    assert [r["step"] for r in loaded.add([Event("e", 2, "result", "booking K1NW8N", State())],
                                          user_id="u")["results"]] == [2]  # the numbering saved goes on


def test_a_numpy_step_out_of_range_is_still_refused_naming_the_item():
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"item 0: an Event's step must be an integer from 0"):
        memory.add([Event("e", np.int64(-1), "result", "x", State())], user_id="u")
    assert memory.get_all(user_id="u", limit=None)["results"] == []
