"""Leftovers of the live (run-time add) path found at the end of stop 62, each reproduced here first."""

from __future__ import annotations

import pytest
from test_live_gemini_turn import imported, stored, text
from test_live_leftovers_61 import CALL, STREAM, _claim, _words
from test_live_leftovers_62 import added_whole_and_alone

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
    if how == "one add":  # the call is stored: nothing said unstored (the add's check said the chunk was)
        memory = _memory()
        assert memory.check_add(contents, "data", user_id="t", run_id="r")[1] == []
        assert "skipped" not in memory.add(contents, user_id="t", run_id="r")
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
    whole, alone = added_whole_and_alone(msgs, how, tmp_path)
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


@pytest.mark.parametrize("how", ["delete_all", "each deleted, saved and loaded"])
def test_the_keys_kept_of_deleted_scopes_are_bounded_the_last_deleted_keeping_theirs(tmp_path, monkeypatch, how):
    """Every deleted scope kept its last adds' keys for good (up to 8 keys and ~22 KB a scope, in every save): a
    server whose runs come and go grew without bound. The scopes deleted last keep theirs (DROPPED_SCOPES, here 2),
    so a history sent again soon after its delete stays deleted; an older one's are forgotten, its history sent
    again stored again. A scope added to again after its delete is live: no later delete forgets its keys."""
    from sam_model.memory import scoped

    monkeypatch.setattr(scoped, "DROPPED_SCOPES", 2)
    msgs, memory = _claim(), _memory()

    def drop(run: str) -> None:
        if how == "delete_all":
            memory.delete_all(user_id="t", run_id=run)
        for r in memory.get_all(user_id="t", run_id=run)["results"]:
            memory.delete(r["id"], user_id="t", run_id=run)

    memory.add(msgs[:4], user_id="t", run_id="live")
    drop("live")
    memory.add(_chat()[:2], user_id="t", run_id="live")  # added to again: live
    for run in ("r0", "r1", "r2"):
        memory.add(msgs[:4], user_id="t", run_id=run)
        drop(run)
        if how.endswith("loaded"):
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert sorted(memory._sent) == ["t//live", "t//r1", "t//r2"]  # the bound: 2 deleted scopes, and the live one
    assert [len(memory.add(msgs[:8], user_id="t", run_id=run)["results"]) for run in ("r0", "r1", "r2")] == [8, 4, 4]
    assert len(memory.add([*_chat()[:2], *msgs[:4]], user_id="t", run_id="live")["results"]) == 4


def test_a_deleted_scopes_kept_keys_are_its_own():
    """Guard (passes before): another scope given the deleted scope's history stores it whole (it never opened
    with an add of its own), and the deleted scope's history sent again is still read once."""
    msgs, memory = _claim(), _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    memory.delete_all(user_id="t", run_id="r")
    other = memory.add(msgs[:8], user_id="u", run_id="r")
    assert len(other["results"]) == 8 and "notes" not in other
    assert len(memory.add(msgs[:8], user_id="t", run_id="r")["results"]) == 4


def test_a_save_of_deleted_scopes_keys_loads_bounded_and_refuses_a_bad_order(tmp_path, monkeypatch):
    """A save before the bound holds every deleted scope's keys and no order: it loads with the bound kept (its
    deleted scopes in the order saved). A 'dropped' that is no list of scope names is refused naming it."""
    import json

    from sam_model.io import SAMFileError
    from sam_model.memory import scoped

    msgs, memory = _claim(), _memory()
    for run in ("r0", "r1", "r2"):
        memory.add(msgs[:4], user_id="t", run_id=run)
        memory.delete_all(user_id="t", run_id=run)
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert d["dropped"] == ["t//r0", "t//r1", "t//r2"]
    del d["dropped"]  # the shape saved until stop 63
    (saved / "scoped.json").write_text(json.dumps(d))
    monkeypatch.setattr(scoped, "DROPPED_SCOPES", 2)
    loaded = ScopedMemory.load(saved, HashingEncoder(16))
    assert [len(loaded.add(msgs[:8], user_id="t", run_id=run)["results"]) for run in ("r0", "r1", "r2")] == [8, 4, 4]
    (saved / "scoped.json").write_text(json.dumps({**d, "dropped": 3}))
    with pytest.raises(SAMFileError, match="dropped must be a list") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value)


def test_an_autogen_context_of_words_alone_added_whole_after_each_run_is_stored_once():
    """AutoGen's model context added whole after each run, the first run words alone (no call id): the second
    run's add, going on in turn from the first (the scope's whole conversation), stored the first run again. It
    is read once, and its note says what told it (it said 'told by their call ids', which it held none of)."""
    def user(t: str) -> dict:
        return {"type": "UserMessage", "content": t, "source": "user"}

    def agent(t: str) -> dict:
        return {"type": "AssistantMessage", "content": t, "source": "helpdesk"}

    run1 = [user("My laptop won't start."), agent("Have you tried holding the power button for 10 seconds?")]
    run2 = [*run1, user("Yes, still nothing."), agent("I'll open a ticket for you.")]
    memory, new = _memory(), _memory()
    memory.add(run1, user_id="t", run_id="r")
    out = memory.add(run2, user_id="t", run_id="r")
    new.add(run1, user_id="t", run_id="r")
    new.add(run2[2:], user_id="t", run_id="r")
    assert stored(memory) == stored(new) and len(stored(new)) == 4
    assert out["notes"][0]["reason"] == ("data[0:2]: the scope's last add of AutoGen messages (the scope's whole "
                                         "conversation, which the add goes on from), sent again: read once, not "
                                         "stored again")


def test_a_strands_history_whose_call_ids_are_the_tools_names_added_whole_after_each_invocation_is_stored_once():
    """Strands' Ollama and Gemini models write a call's toolUseId as the tool's name (no id written once): the
    history added whole after each invocation stored the earlier invocations again. From the scope's first add
    on, each add is its whole conversation going on in turn, read once; the question asked again in the third
    invocation, answered alike, is stored again, as the user said it."""
    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "lookup_policy", "name": "lookup_policy",
                                                          "input": {"policy_number": "HM-1"}}}]}
    res = {"role": "user", "content": [{"toolResult": {"toolUseId": "lookup_policy", "status": "success",
                                                       "content": [{"json": {"deductible": "$500"}}]}}]}
    asked = [_words("user", "Policy HM-1, what's my deductible?"), call, res, _words("assistant", "$500.")]
    history = [*asked, _words("user", "And my premium?"), _words("assistant", "$40 a month."), *asked]
    whole, new = _memory(), _memory()
    for start, end in ((0, 4), (4, 6), (6, 10)):
        whole.add(history[:end], user_id="t", run_id="r")
        new.add(history[start:end], user_id="t", run_id="r")
    assert stored(whole) == stored(new) and len(stored(new)) == 10


def test_a_blank_opening_chunk_stays_in_its_own_scopes_turn():
    """Guard: two runs streamed at once, one opening its model turn with a blank chunk: the other's words are its
    own ('Hello.', not joined to the first run's chunk), and the first run's words join its chunk."""
    memory = _memory()
    for run, c in (("r", STREAM[0]), ("s", STREAM[0]), ("r", text("model", " \n ")), ("s", text("model", "Hello.")),
                   ("r", text("model", "Let me look."))):
        memory.add([c], user_id="t", run_id=run)
    assert [e[2] for e in stored(memory, "s")] == [STREAM[0]["parts"][0]["text"], "Hello."]
    assert [e[2] for e in stored(memory, "r")] == [STREAM[0]["parts"][0]["text"], " \n Let me look."]
