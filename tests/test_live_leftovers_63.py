"""Leftovers of the live (run-time add) path found at the end of stop 62, each reproduced here first."""

from __future__ import annotations

import pytest
from test_live_gemini_turn import imported, stored, text
from test_live_leftovers_61 import CALL, STREAM

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _feed(memory: ScopedMemory, contents: list[dict], how: str, tmp_path) -> tuple[ScopedMemory, list[dict]]:
    """Each content an add (checked first by check_add, as sam-serve checks it, or saved and loaded between adds)."""
    answers = []
    for c in contents:
        read = memory.check_add([c], "data", user_id="t", run_id="r") if how == "checked first" else None
        answers.append(memory.add([c], user_id="t", run_id="r", read=read))
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    return memory, answers


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_gemini_chunk_of_whitespace_that_opens_the_models_turn_is_no_memory_and_loses_nothing(tmp_path, how):
    """A streamed answer whose first chunk is whitespace alone, a content an add: the chunk's add was refused
    ('content 0.content is only whitespace'), stopping an agent that feeds each chunk. It is said unstored, and
    the chunks after it join it as the importer's reader joins it (' \\n Let me look.', the importer's words)."""
    contents = [STREAM[0], text("model", " \n "), text("model", "Let me"), text("model", " look."), *STREAM[4:]]
    memory, answers = _feed(_memory(), contents, how, tmp_path)
    assert answers[1]["results"] == [] and "only whitespace" in answers[1]["skipped"][0]["reason"]
    assert stored(memory) == imported(tmp_path, contents)


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first", "one add"])
def test_a_gemini_chunk_of_whitespace_before_the_models_call_is_no_memory(tmp_path, how):
    """The blank chunk, then the model's functionCall content: the reader joins them into one turn whose words are
    blank, and the store refused the add whole ('memories[1].text must not be empty', a field no caller sent).
    The blank words are no memory: the call and its result are stored as the importer stores the stream without
    the chunk."""
    contents = [STREAM[0], text("model", " \n "), CALL, STREAM[-1]]
    if how == "one add":
        memory = _memory()
        memory.add(contents, user_id="t", run_id="r")
    else:
        memory, _ = _feed(_memory(), contents, how, tmp_path)
    assert stored(memory) == imported(tmp_path, [STREAM[0], CALL, STREAM[-1]])


def test_an_openai_message_of_blank_words_beside_its_calls_stores_the_calls():
    """The same in OpenAI chat: an assistant message whose content is whitespace beside its tool_calls was refused
    by the store ('memories[1].text must not be empty'); its calls are stored as a message without content."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"phone": "555"}'}}
    msgs = [{"role": "user", "content": "my phone is 555"}, {"role": "assistant", "content": " \n ",
                                                             "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    blank, none = _memory(), _memory()
    blank.add(msgs, user_id="t", run_id="r")
    none.add([msgs[0], {**msgs[1], "content": None}, msgs[2]], user_id="t", run_id="r")
    assert stored(blank) == stored(none) and len(stored(none)) == 3
