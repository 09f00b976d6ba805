"""Leftovers of the live (run-time add) path found at the end of stop 62, each reproduced here first."""

from __future__ import annotations

import pytest
from test_live_gemini_turn import imported, stored, text
from test_live_leftovers_61 import CALL, STREAM, _claim, _words

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


def _chat() -> list[dict]:
    """A Converse conversation whose first reply is words alone (no call yet), then the claims conversation."""
    return [_words("user", "Hi, I need to file a claim."), _words("assistant", "Sure. What is your policy number?"),
            *_claim()]


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_whole_history_added_at_each_message_with_a_first_reply_of_words_stores_each_message_once(tmp_path, how):
    """A hook adding agent.messages whole at each message (Strands' MessageAddedEvent), the model's first reply
    words alone: the add of the user's words and that reply held nothing written once, so it was read as new, and
    so was each add after it until a call came (15 memories for 10). The scope's first add is its whole
    conversation; an add opening with it that goes on in turn (the reply answering its last message) is it sent
    again, and so on from each such add."""
    msgs = _chat()
    whole, alone = _memory(), _memory()
    for end in range(1, len(msgs) + 1):
        read = whole.check_add(msgs[:end], "data", user_id="t", run_id="r") if how == "checked first" else None
        whole.add(msgs[:end], user_id="t", run_id="r", read=read)
        alone.add(msgs[end - 1:end], user_id="t", run_id="r")
        if how == "saved and loaded":
            whole = ScopedMemory.load(whole.save(tmp_path / "m"), HashingEncoder(16))
    assert stored(whole) == stored(alone) and len(stored(alone)) == 10


def test_a_yes_said_twice_is_stored_twice_however_the_messages_are_added():
    """Guard: a user saying "yes" twice in a conversation of words alone (a reply between) is two memories, added
    each message alone, each exchange's messages, or the whole history at each message. The one add a hook and a
    user could both send, the scope's whole conversation (a "yes" alone) then it again with the model's words
    after it, is read as the hook's: read as new it would put the user's "yes" twice in a row, unanswered."""
    said = [_words("user", "A table for two?"), _words("assistant", "Tonight at 7?"), _words("user", "yes"),
            _words("assistant", "Indoors?"), _words("user", "yes"), _words("assistant", "Booked.")]
    want = [m["content"][0]["text"] for m in said]
    for adds in ([said[:e] for e in range(1, 7)], [[m] for m in said], [said[i:i + 2] for i in (0, 2, 4)]):
        memory = _memory()
        for add in adds:
            memory.add(add, user_id="t", run_id="r")
        assert [e[2] for e in stored(memory)] == want
    memory = _memory()
    for add in ([said[2]], [said[2]], [said[5]]):  # "yes" added alone twice: the second is new
        memory.add(add, user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["yes", "yes", "Booked."]
    memory = _memory()
    for add in ([said[2]], [said[2], said[5]]):
        memory.add(add, user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["yes", "Booked."]


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_a_first_add_alone_then_the_runs_messages_keeps_a_genuine_repeat_of_its_opening(tmp_path, how):
    """The scope's first add the user's words alone (added before the run), then the run's new messages, then the
    user says the same words again and they are added with the next run's messages: the scope kept its first add
    as its whole conversation, so the add, opening with it and going on with a call, was read as it sent again,
    and the words said again were dropped. An add that is no kept add sent again ends that mark: the words are
    stored again; the same add retried is still read once."""
    claim = _claim()
    said = _words("user", claim[0]["content"][0]["text"])
    memory = _memory()
    for add in ([said], claim[1:4], [said, *claim[5:8]], [said, *claim[5:8]]):
        out = memory.add(add, user_id="t", run_id="r")
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert out["results"] == [] and out["notes"][0]["reason"].startswith("data[0:4]: the scope's last add")
    assert [e[2] for e in stored(memory)] == [said["content"][0]["text"], *[e[2] for e in stored(_whole(claim[1:4]))],
                                              said["content"][0]["text"], *[e[2] for e in stored(_whole(claim[5:8]))]]


def _whole(msgs: list[dict]) -> ScopedMemory:
    memory = _memory()
    memory.add(msgs, user_id="t", run_id="r")
    return memory
