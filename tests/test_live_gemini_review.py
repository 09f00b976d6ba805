"""A hostile review of the open turn a ScopedMemory keeps of Gemini contents (a77dcc9), against the importer's
reading of the same contents as a file.

A user's content with no text (an image alone, an empty one) between the model's words and its functionCall
content closes the model's turn in the reader (gemini.to_chat) without a message of its own: the importer reads the
call as a turn of its own and decides at the words, and so does a scope fed the contents one add each (the user's
content opens a new open turn). ``live_state`` saw only the chat, which still ends in the model's words, and
decided before them (formats.base.preamble), flagging what the words' decision does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.transcripts import iter_transcript_events, live_state
from sam_model.memory import HashingEncoder, ScopedMemory

CALL = {"name": "lookup_tenant", "args": {"phone": "(415) 555-0142", "unit": "4B"}}


def text(role: str, words: str, **extra: object) -> dict:
    return {"role": role, "parts": [{"text": words, **extra}]}


def contents(between: list[dict]) -> list[dict]:
    """The user gives a phone, then the unit; the model's words, ``between``, then the model's call."""
    return [text("user", "Hi, my phone is (415) 555-0142."), text("model", "Which unit?"),
            text("user", "Unit 4B, the sink leaks."), text("model", "Let me look."), *between,
            {"role": "model", "parts": [{"functionCall": CALL}]}]


def decided(tmp_path: Path, given: list[dict]) -> dict:
    """The state of the importer's decision point of the call (the contents' last)."""
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"id": "g1", "contents": given}) + "\n")
    got = list(iter_transcript_events(path))
    return [e for e in got if e.get("useful_memory_steps") is not None][-1]["state"]  # labelled: the decision


IMAGE = {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}
CLOSING = {"an image alone": [IMAGE], "an empty content": [{"role": "user", "parts": []}],
           "an image, then a thought alone": [IMAGE, text("model", "The sink.", thought=True)]}


@pytest.mark.parametrize("between", list(CLOSING), ids=list(CLOSING))
def test_a_users_content_without_text_after_the_words_closes_their_turn_for_live_state(tmp_path, between):
    given = contents(CLOSING[between])
    want = decided(tmp_path, given)
    assert want["uncertainty_flags"] == ["phone", "unit"]  # at the words: the unit the user gave is an observation
    memory = ScopedMemory(HashingEncoder(16))
    for x in given[:-1]:
        memory.add([x], user_id="t", run_id="r")
    assert memory.search("", call=CALL, user_id="t", run_id="r", limit=3)["state"] == want
    assert live_state(given[:-1], CALL) == want


def test_words_joined_by_a_thought_alone_are_still_decided_before(tmp_path):
    """A model content of a thought alone keeps the turn open (the reader joins it): the call is decided before the
    words, by live_state, the importer and a scope alike."""
    given = contents([text("model", "The sink.", thought=True)])
    want = decided(tmp_path, given)
    assert want["uncertainty_flags"] == ["phone"]
    memory = ScopedMemory(HashingEncoder(16))
    for x in given[:-1]:
        memory.add([x], user_id="t", run_id="r")
    assert memory.search("", call=CALL, user_id="t", run_id="r", limit=3)["state"] == want
    assert live_state(given[:-1], CALL) == want
