"""A whole history of words alone added at each message whose messages do not alternate, and a new conversation
after a delete in a scope that mixed whole-history and per-exchange adds: each reproduced here first."""

from __future__ import annotations

import pytest
from test_live_leftovers_61 import _claim, _words
from test_live_leftovers_62 import added_whole_and_alone

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
    whole, alone = added_whole_and_alone(msgs, how, tmp_path)
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


def _drop(memory: ScopedMemory, how: str) -> None:
    if how.startswith("delete_all"):
        memory.delete_all(user_id="t", run_id="r")
    else:
        for r in memory.get_all(user_id="t", run_id="r")["results"]:
            memory.delete(r["id"], user_id="t", run_id="r")


@pytest.mark.parametrize("calls", [False, True])
@pytest.mark.parametrize("how", ["delete_all", "each deleted", "delete_all, saved and loaded"])
def test_a_new_conversation_after_a_delete_keeps_its_opening(tmp_path, how, calls):
    """The scope's conversation added whole at each message (a hook), its memories deleted, then a new
    conversation opening with the same first words added an exchange at a time: the exchange opened with the
    deleted conversation's first add, kept as the scope's whole conversation, and went on in turn, so its opening
    was read as sent again and lost. After the delete only the last add stands for the history the agent still
    holds (each whole history opens with it): an older one marks the whole conversation no more."""
    msgs = _claim() if calls else [_words("user", "Hi, I need to file a claim."), _words("assistant", "Sure.")]
    memory = _memory()
    for end in range(1, len(msgs) + 1):
        memory.add(msgs[:end], user_id="t", run_id="r")
    _drop(memory, how)
    if how.endswith("loaded"):
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    opening = [msgs[0], _words("assistant", "Welcome back. What happened?")]
    out = memory.add(opening, user_id="t", run_id="r")
    assert "notes" not in out and _said(memory) == [msgs[0]["content"][0]["text"], "Welcome back. What happened?"]


@pytest.mark.parametrize("how", ["delete_all", "each deleted"])
def test_a_whole_history_of_words_sent_after_its_delete_stays_deleted(how):
    """Guard: the hook's whole history of words alone, sent again after its memories were deleted with the next
    message, opens with the scope's last add: the deleted words stay deleted, the new one is stored."""
    msgs = [_words("user", "Hi"), _words("assistant", "Hello"), _words("user", "Book a table")]
    memory = _memory()
    for end in (1, 2):
        memory.add(msgs[:end], user_id="t", run_id="r")
    _drop(memory, how)
    out = memory.add(msgs, user_id="t", run_id="r")
    assert out["notes"][0]["reason"].startswith("data[0:2]: the scope's last add") and _said(memory) == ["Book a table"]


def test_the_mark_a_delete_leaves_is_the_deleted_scopes_own():
    """Guard: another scope's history of the same words is its own, stored whole, before and after the delete."""
    msgs = [_words("user", "Hi"), _words("assistant", "Hello")]
    memory = _memory()
    memory.add(msgs[:1], user_id="t", run_id="r")
    memory.add(msgs, user_id="t", run_id="r")
    memory.delete_all(user_id="t", run_id="r")
    for end in (1, 2):
        memory.add(msgs[:end], user_id="t", run_id="other")
    assert _said(memory, "other") == ["Hi", "Hello"] and _said(memory) == []


def test_a_save_made_before_the_delete_rule_loads_with_it(tmp_path):
    """A save of a deleted scope made before the rule holds its older adds' marks of the whole conversation: they
    are dropped on load, so the new conversation keeps its opening there too."""
    import json

    msgs = [_words("user", "Hi, I need to file a claim."), _words("assistant", "Sure.")]
    memory = _memory()
    for end in (1, 2):
        memory.add(msgs[:end], user_id="t", run_id="r")
    memory.delete_all(user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    d["sent"]["t//r"] = [k[:2] + [True] for k in d["sent"]["t//r"]]  # as saved before: every mark kept
    (saved / "scoped.json").write_text(json.dumps(d))
    loaded = ScopedMemory.load(saved, HashingEncoder(16))
    loaded.add([msgs[0], _words("assistant", "Welcome back.")], user_id="t", run_id="r")
    assert _said(loaded) == [msgs[0]["content"][0]["text"], "Welcome back."]


def test_documents_behaviour_an_opening_that_is_a_deleted_or_whole_conversation_going_on_is_read_once():
    """Documents behaviour (README, the delete of a scope's last memory): an add opening with the add that stands
    for the scope's whole conversation, going on past it, is read from after it, whichever way the agent adds. A
    scope whose only add was [Hi], deleted, then [Hi, Hello]: a hook's whole history after the delete (Hi stays
    deleted) or a new conversation's first exchange (Hi lost): the same add. And a hook's [Hi], [Hi, Hello], then
    an exchange [Hi, Hi again!]: a second run made at once from [Hi] (its Hi read once) or the user greeting
    again: the same add. Words alone hold nothing written once to tell them apart; the first keeps what a user
    deleted deleted, the second stores each run's reply."""
    hi, hello = _words("user", "Hi"), _words("assistant", "Hello")
    memory = _memory()
    memory.add([hi], user_id="t", run_id="r")
    memory.delete_all(user_id="t", run_id="r")
    memory.add([hi, hello], user_id="t", run_id="r")
    assert _said(memory) == ["Hello"]
    memory = _memory()
    for add in ([hi], [hi, hello], [hi, _words("assistant", "Hi again!")]):
        memory.add(add, user_id="t", run_id="r")
    assert _said(memory) == ["Hi", "Hello", "Hi again!"]


@pytest.mark.parametrize("between", ["a fact as text", "openai messages", "an agent-log event"])
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_whole_history_sent_after_another_add_to_its_scope_is_read_once(tmp_path, how, between):
    """A Strands hook adding agent.messages whole after each invocation, and between two invocations another add
    to the same scope (a fact remembered as text: MCP remember's text, an integration's add; OpenAI messages; an
    agent-log event): that add forgot the scope's kept adds, so the next whole history, though it opened with the
    last, its calls by their toolUseIds, stored every earlier turn again (13 memories for 9). The keys stay; only
    their mark of the scope's whole conversation goes (the conversation went on without them)."""
    from sam_model.data.schema import Event

    msgs, fact = _claim(), "Note: the customer prefers email."
    other = {"a fact as text": fact, "openai messages": [{"role": "user", "content": fact}],
             "an agent-log event": [Event(episode_id="x", step=0, kind="observation", text=fact)]}[between]
    memory = _memory()
    for add in (msgs[:4], other, msgs[:8]):
        read = memory.check_add(add, "data", user_id="t", run_id="r") if how == "checked first" else None
        out = memory.add(add, user_id="t", run_id="r", read=read)
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    # OpenAI messages are kept adds of their own since OpenAI's whole histories are read once too, of their own
    # format (resent.lane): the Converse add is still the scope's last of Converse messages
    assert out.get("notes") and out["notes"][0]["reason"].startswith("data[0:4]: the scope's last add of Converse")
    fresh = _memory()
    for add in (msgs[:4], other, msgs[4:8]):
        fresh.add(add, user_id="t", run_id="r")
    assert _said(memory) == _said(fresh) and len(_said(fresh)) == 9


def test_two_runs_made_at_once_adding_their_words_out_of_turn_store_each_message_once():
    """Two runs of one conversation made at once from its history, each in a thread with a hook adding the
    whole history at each message, their words out of turn (two of the user's in a row, two replies in a row):
    each run's messages are stored once, and the history too, however the threads' adds interleave."""
    import threading

    history = [_words("user", "Hi"), _words("assistant", "Hello")]
    runs = {k: [_words(r, f"{k}{i}") for i, r in enumerate(("user", "user", "assistant", "assistant"))]
            for k in "AB"}
    memory = _memory()
    for end in (1, 2):
        memory.add(history[:end], user_id="t", run_id="r")

    def run(k: str) -> None:
        for end in range(1, 5):
            memory.add(history + runs[k][:end], user_id="t", run_id="r")

    threads = [threading.Thread(target=run, args=(k,)) for k in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    said = _said(memory)
    assert said[:2] == ["Hi", "Hello"] and sorted(said[2:]) == sorted(f"{k}{i}" for k in "AB" for i in range(4))
    assert [s for s in said if s.startswith("A")] == ["A0", "A1", "A2", "A3"]


def _pydantic_runs() -> list[list[dict]]:
    from pydantic_ai_travel import conversations
    from test_walkthrough_pydantic_ai import runs

    return runs(conversations(1, 0)[0][1])


@pytest.mark.parametrize("fmt", ["converse", "pydantic-ai"])
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_messages_added_alone_then_the_whole_history_are_read_once(tmp_path, how, fmt):
    """An agent adding each message as it comes (a Strands hook on MessageAddedEvent adding [event.message]; a
    Pydantic AI agent's new_messages() of each run), then its whole history (agent.messages, all_messages()): the
    history opened with no kept add (each held one message, or one run), so every earlier message but the first
    add's was stored again (the claims conversation: 12 memories for 8; the travel one, 28 for 20). The scope
    keeps what it was given, in order (one digest of them all, and how many): a history opening with all of it,
    holding something written once (a toolUseId, a timestamp), is it sent again."""
    if fmt == "converse":
        msgs = _claim()
        adds, whole = [[m] for m in msgs[:4]], msgs
    else:
        runs = _pydantic_runs()
        adds, whole = runs[:2], [m for r in runs for m in r]
    memory, fresh = _memory(), _memory()
    for add in [*adds, whole]:
        read = memory.check_add(add, "data", user_id="t", run_id="r") if how == "checked first" else None
        out = memory.add(add, user_id="t", run_id="r", read=read)
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    given = sum(len(a) for a in adds)
    for add in [*adds, whole[given:]]:
        fresh.add(add, user_id="t", run_id="r")
    assert out.get("notes") and out["notes"][0]["reason"].startswith(f"data[0:{given}]: all the scope was given")
    assert _said(memory) == _said(fresh)


def test_a_whole_history_of_words_alone_after_messages_added_alone_is_stored_again():
    """Guard: words alone hold nothing written once, so a history of words opening with what the scope was given
    a message at a time is read as new (the user could say it all again): as before, stored again."""
    msgs = [_words("user", "Hi"), _words("assistant", "Hello"), _words("user", "Bye")]
    memory = _memory()
    for add in ([msgs[0]], [msgs[1]], msgs):
        memory.add(add, user_id="t", run_id="r")
    assert _said(memory) == ["Hi", "Hello", "Hi", "Hello", "Bye"]


def test_a_save_of_what_a_scope_was_given_loads_and_a_bad_one_is_refused(tmp_path):
    """What a scope was given is saved with it ('given'); a save before stop 64 holds none and loads (its next
    history read as before); a 'given' of another shape is refused at load in one line naming it."""
    import json

    from sam_model.io import SAMFileError

    msgs = _claim()
    memory = _memory()
    for m in msgs[:4]:
        memory.add([m], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert d["given"]["t//r"] == [[d["given"]["t//r"][0][0], 4, "bedrock"]]
    (saved / "scoped.json").write_text(json.dumps({**d, "given": {"t//r": ["x", 0]}}))
    with pytest.raises(SAMFileError, match=r"given of 't//r' must be") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value)
    (saved / "scoped.json").write_text(json.dumps({k: v for k, v in d.items() if k != "given"}))
    assert len(ScopedMemory.load(saved, HashingEncoder(16)).add(msgs, user_id="t", run_id="r")["results"]) == 8
