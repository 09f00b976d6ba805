"""A non-author review of the live-path leftovers of stop 62 (tests/test_live_leftovers_62.py): what it missed."""

from __future__ import annotations

import pytest
from test_live_responses import said

from sam_model.memory import HashingEncoder, ScopedMemory


def _texts(memory: ScopedMemory) -> list[str]:
    got = sorted(memory.get_all(user_id="t", run_id="r", limit=None)["results"], key=lambda r: r["step"])
    return [r["memory"] for r in got]


def _streamed(memory: ScopedMemory, run: str = "r") -> dict:
    """A streaming agent's preamble added at response.output_item.added (its first words): the item of its .done."""
    done = said("Let me look you up.", "msg_1")
    memory.add([{**done, "status": "in_progress", "content": [{"type": "output_text", "text": "Let me"}]}],
               user_id="t", run_id=run)
    return done


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "then delete_all"])
def test_a_deleted_streaming_preamble_stays_deleted_when_it_was_its_scopes_last_memory(tmp_path, how):
    """A streaming Responses agent adding its output items: the preamble's memory deleted between its
    response.output_item.added and .done, where it was the scope's last, dropped the conversation and its open turn
    with the id of the deleted item, and the .done, read by a fresh turn, brought the deleted words back. They stay
    out (a delete_all after it keeps them out too); the turn's next items are stored."""
    memory = ScopedMemory(HashingEncoder(16))
    done = _streamed(memory)
    assert _texts(memory) == ["Let me"]
    memory.delete(memory.get_all(user_id="t", run_id="r")["results"][0]["id"])
    if how == "then delete_all":
        memory.delete_all(user_id="t", run_id="r")
    if how == "saved and loaded":
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    memory.add([done], user_id="t", run_id="r")
    assert _texts(memory) == []
    memory.add([said("Found you.", "msg_2")], user_id="t", run_id="r")
    assert _texts(memory) == ["Found you."]


def test_a_session_added_again_after_delete_all_is_stored_whole():
    """Guard: delete_all marks no item deleted: its refusals of a rewound session say to delete_all and add the
    session's lines again from its start, which stores them all, the open turn's items too."""
    memory = ScopedMemory(HashingEncoder(16))
    done = _streamed(memory)
    memory.delete_all(user_id="t", run_id="r")
    memory.add([done], user_id="t", run_id="r")
    assert _texts(memory) == ["Let me look you up."]


def test_a_delete_of_another_scopes_memory_keeps_this_scopes_streaming_item():
    """Guard: the ids kept are the emptied scope's own: another scope's item of the same id and words, its
    .done after the delete, is revised in its place."""
    memory = ScopedMemory(HashingEncoder(16))
    done = [_streamed(memory, run) for run in ("r", "other")][0]
    memory.delete(memory.get_all(user_id="t", run_id="r")["results"][0]["id"])
    memory.add([done], user_id="t", run_id="other")
    got = memory.get_all(user_id="t", run_id="other")["results"]
    assert [r["memory"] for r in got] == ["Let me look you up."]


def test_a_hand_edited_save_of_deleted_item_ids_is_refused_naming_them(tmp_path):
    """The ids a scope keeps of its deleted items are saved: a save whose list holds another thing is refused in one
    line naming the scope's field, not at the next add."""
    import json

    from sam_model.io import SAMFileError

    memory = ScopedMemory(HashingEncoder(16))
    _streamed(memory)
    memory.delete(memory.get_all(user_id="t", run_id="r")["results"][0]["id"])
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert len(d["gone"]["t//r"]) == 1
    d["gone"]["t//r"] = [1]
    (saved / "scoped.json").write_text(json.dumps(d))
    with pytest.raises((SAMFileError, ValueError), match=r"gone of 't//r' must be a list") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value)


def test_a_deleted_streaming_message_of_several_text_parts_stays_deleted_at_its_done():
    """A message item of two output_text parts is one memory, its parts joined by a newline (the reader's
    text_of): the delete compared it with the parts joined by nothing, matched no item, and the .done of the deleted
    message came back with its words. It is told by the reader's own text."""
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "user", "content": "Hi, unit 4B here."}], user_id="t", run_id="r")
    parts = [{"type": "output_text", "text": t, "annotations": []} for t in ("Let me check.", "One moment.")]
    item = {"type": "message", "id": "msg_9", "role": "assistant", "status": "in_progress", "content": parts}
    memory.add([item], user_id="t", run_id="r")
    assert _texts(memory) == ["Hi, unit 4B here.", "Let me check.\nOne moment."]
    memory.delete(next(r["id"] for r in memory.get_all(user_id="t", run_id="r")["results"] if r["step"] == 1))
    done = {**item, "status": "completed",
            "content": [*parts, {"type": "output_text", "text": "Found you.", "annotations": []}]}
    memory.add([done], user_id="t", run_id="r")
    assert _texts(memory) == ["Hi, unit 4B here."]
