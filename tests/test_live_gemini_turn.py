"""Gemini contents an agent adds one at a time (the user's content, the model's words, then its functionCall
content, the functionResponse): the importer's Gemini reader joins consecutive model contents into one turn and
decides at the user's message before the words; a scope fed a content an add read the words as a turn of their own,
so the call's add decided at them (labels [0, 2] where the importer gives [0]) and a search by the call after them
flagged the unit the user's last message gave (['phone', 'unit'], the importer's ['phone']). The scope now keeps an
open turn of Gemini contents (sam_model.memory.live): the same memories, labels and search states as the importer's
and as the contents added together, saved and loaded between adds, two runs fed in turn, a delete as for
Responses items (a delete of the open turn's words closes it: its next contents are read as they come)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.transcripts import iter_transcript_events, live_state
from sam_model.memory import HashingEncoder, ScopedMemory

ARGS = {"phone": "(415) 555-0142", "unit": "4B"}


def text(role: str, words: str) -> dict:
    return {"role": role, "parts": [{"text": words}]}


def conversation(unit: str = "4B") -> list[dict]:
    """The user gives a phone, then (asked) the unit; the model's words, then its call in a content of its own."""
    args = {**ARGS, "unit": unit}
    return [
        text("user", "Hi, my phone is (415) 555-0142."),
        text("model", "Which unit?"),
        text("user", f"Unit {unit}, the kitchen sink leaks."),
        text("model", "Let me look."),
        {"role": "model", "parts": [{"functionCall": {"name": "lookup_tenant", "args": args}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "lookup_tenant", "response": {"id": "TN-1"}}}]},
        text("model", "Found you. Booking a plumber."),
        {"role": "model", "parts": [{"functionCall": {"name": "book_plumber", "args": {"tenant": "TN-1"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "book_plumber", "response": {"output": "Monday"}}}]},
        text("model", "A plumber comes Monday."),
    ]


def imported(tmp_path: Path, contents: list[dict], name: str = "log") -> list[tuple]:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(json.dumps({"id": "g1", "contents": contents}) + "\n")
    return events(list(iter_transcript_events(path)))


def events(got: list[dict]) -> list[tuple]:
    return [(e["step"], e["kind"], e["text"], e["state"], e.get("useful_memory_steps") or []) for e in got]


def stored(memory: ScopedMemory, run: str = "r") -> list[tuple]:
    return events(memory._trackers[f"t//{run}"].events)


def calls(contents: list[dict]) -> list[tuple[int, dict]]:
    return [(i, p["functionCall"]) for i, c in enumerate(contents) for p in c["parts"] if "functionCall" in p]


def feed(memory: ScopedMemory, contents: list[dict], run: str = "r", save: Path | None = None
         ) -> tuple[ScopedMemory, list[dict]]:
    """A content an add (``save``: saved and loaded after each), searched by each call before its content's add."""
    states, at = [], dict(calls(contents))
    for i, c in enumerate(contents):
        if i in at:
            states.append(memory.search("", call=at[i], user_id="t", run_id=run, limit=3)["state"])
        memory.add([c], user_id="t", run_id=run)
        if save is not None:
            memory = ScopedMemory.load(memory.save(save), HashingEncoder(16))
    return memory, states


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_contents_added_one_at_a_time_are_the_importers_labels_memories_and_search_states(tmp_path, how):
    contents = conversation()
    want = imported(tmp_path, contents)
    decided = next(e for e in want if e[4])
    assert (decided[2], decided[4]) == ("Unit 4B, the kitchen sink leaks.", [0])  # the importer's: can fail
    memory, states = feed(ScopedMemory(HashingEncoder(16)), contents,
                          save=tmp_path / "m" if how == "saved and loaded" else None)
    assert [e[4] for e in stored(memory)] == [e[4] for e in want]  # [0], not [0, 2]: decided before the words
    assert stored(memory) == want
    assert states == [live_state(contents[:i], call) for i, call in calls(contents)]
    assert states[0]["uncertainty_flags"] == ["phone"] == decided[3]["uncertainty_flags"]
    together = ScopedMemory(HashingEncoder(16))
    together.add(contents, user_id="t", run_id="r")
    assert stored(together) == want


def test_two_runs_fed_in_turn_keep_their_open_turns_apart(tmp_path):
    ours, theirs = conversation(), conversation("7C")
    memory = ScopedMemory(HashingEncoder(16))
    for x, y in zip(ours, theirs):
        memory.add([x], user_id="t", run_id="r")
        memory.add([y], user_id="t", run_id="s")
    assert stored(memory, "r") == imported(tmp_path, ours)
    assert stored(memory, "s") == imported(tmp_path, theirs, "other")


def test_a_delete_closes_the_open_turn_as_it_does_responses_items():
    """Guard (passes before: no open turn then): the model's words deleted while their turn is open: the turn closes
    where the conversation ends, so the call's add is read as it comes (the deleted words are not read again, nor
    their memory stored again), as for a Responses agent's preamble."""
    contents = conversation()
    responses = [{"role": "user", "content": "Unit 4B, the kitchen sink leaks."},
                 {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
                 {"type": "function_call", "call_id": "c1", "name": "lookup_tenant", "arguments": json.dumps(ARGS)}]
    kept = []
    for given in (contents[2:5], responses):
        memory = ScopedMemory(HashingEncoder(16))
        for x in given[:2]:
            memory.add([x], user_id="t", run_id="r")
        words = next(r for r in memory.get_all(user_id="t", run_id="r")["results"] if r["memory"] == "Let me look.")
        memory.delete(words["id"])
        memory.add([given[2]], user_id="t", run_id="r")
        kept.append(sorted((r["step"], r["memory"]) for r in memory.get_all(user_id="t", run_id="r")["results"]))
    assert kept[0] == kept[1]
    assert "Let me look." not in [m for _, m in kept[0]]


def test_another_apis_message_after_the_models_words_is_read_by_its_reader():
    """An OpenTelemetry GenAI message (parts that carry a ``type``) or a chat message added while the model's words
    are open is read by its own reader, its text stored, not read as Gemini parts (which hold no ``type``)."""
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([text("user", "Hi, unit 4B.")], user_id="t", run_id="r")
    memory.add([text("model", "Let me look.")], user_id="t", run_id="r")
    assert memory._open["t//r"].format == "gemini"
    memory.add([{"role": "user", "parts": [{"type": "text", "content": "It is the sink."}]}], user_id="t", run_id="r")
    memory.add("My phone is (415) 555-0142.", user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["Hi, unit 4B.", "Let me look.", "It is the sink.",
                                               "My phone is (415) 555-0142."]


def test_a_streamed_calls_chunks_go_in_one_add_the_other_contents_an_add_each(tmp_path):
    """Documents behaviour (README, "The live state takes any format"): a call streamed in pieces
    (``willContinue``) added a chunk an add is refused at its first piece as a cut call, in one line saying to log the
    whole stream; its chunks in one add, every other content an add of its own, are the importer's memories."""
    from test_format_gemini_stream import streamed

    contents = streamed()
    want = imported(tmp_path, contents)
    first = next(i for i, c in enumerate(contents) if c["parts"][0].get("functionCall", {}).get("willContinue"))
    alone = ScopedMemory(HashingEncoder(16))
    for c in contents[:first]:
        alone.add([c], user_id="t", run_id="r")
    with pytest.raises(ValueError, match=r"the streamed functionCall 'cancel' begun here is cut: .* log the whole "
                                         r"stream") as refused:
        alone.add([contents[first]], user_id="t", run_id="r")
    assert "\n" not in str(refused.value)
    end = next(i for i in range(first, len(contents)) if not contents[i]["parts"][0]["functionCall"].get("willContinue"))
    memory = ScopedMemory(HashingEncoder(16))
    for add in [*([c] for c in contents[:first]), contents[first:end + 1], *([c] for c in contents[end + 1:])]:
        memory.add(add, user_id="t", run_id="r")
    assert stored(memory) == want
