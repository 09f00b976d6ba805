"""A review, by a non-author, of the live add path's reading of an add as an earlier one sent again (a hook adding
its whole history after each message): what broke, reproduced here first, and what held."""

from __future__ import annotations

import json

import pytest
from test_live_leftovers_61 import _claim, _words

from sam_model.data.schema import Event
from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory

WORDS = [("user", "Hi"), ("assistant", "Hello"), ("user", "Book a table"), ("assistant", "Done"),
         ("user", "Thanks"), ("assistant", "Bye")]
OTHER = [("user", "Hey"), ("assistant", "Hi there"), ("user", "Weather?"), ("assistant", "Sunny")]


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _said(memory: ScopedMemory, **scopes: str) -> list[str]:
    hits = memory.get_all(**(scopes or {"user_id": "t", "run_id": "r"}))["results"]
    return [h["memory"] for h in sorted(hits, key=lambda h: h["step"])]


def _add(memory: ScopedMemory, data, how: str, tmp_path) -> ScopedMemory:
    read = memory.check_add(data, "data", user_id="t", run_id="r") if how == "checked first" else None
    memory.add(data, user_id="t", run_id="r", read=read)
    return ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16)) if how == "saved and loaded" else memory


FACT = "Note: the customer prefers email."
# adds of another kind than a Converse hook's, each holding FACT (OpenAI's, Anthropic's and LangChain's messages are
# agent histories of their own, resent.FORMATS: an MCP client's remember with messages, a component's own loop)
BETWEEN = {"a fact as text": FACT,
           "responses items": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": FACT}]}],
           "an agent-log event": [Event(episode_id="x", step=0, kind="observation", text=FACT)],
           "openai messages": [{"role": "user", "content": FACT}],
           "anthropic messages": [{"role": "user", "content": FACT}, {"role": "assistant", "content": [
               {"type": "tool_use", "id": "toolu_01N", "name": "save_note", "input": {"note": FACT}}]}],
           "langchain messages": [{"type": "human", "data": {"type": "human", "id": "n1", "content": FACT}}]}


def said_alone(data) -> list[str]:
    """What an add of ``data`` alone stores (the memories the add between holds)."""
    memory = _memory()
    memory.add(data, user_id="t", run_id="r")
    return _said(memory)


@pytest.mark.parametrize("between", sorted(BETWEEN))
@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_whole_history_of_words_after_another_add_stores_each_message_once(tmp_path, how, between):
    """A hook adding a conversation of words alone whole at each message, and another add to its scope between two
    of them (a fact remembered as text, Responses items, an agent-log event): the kept adds lost their mark of the
    scope's whole conversation, so the next history, opening with the scope's last add, was read as new, and so
    was every later one: the whole conversation stored again at each message (21 memories for 7). OpenAI,
    Anthropic or LangChain messages between (histories of their own since OpenAI's rule) took the mark alike until
    the format of each kept add was kept (sam_model.memory.resent.lane)."""
    msgs, other = [_words(r, s) for r, s in WORDS], BETWEEN[between]
    memory = _memory()
    for end in (1, 2):
        memory = _add(memory, msgs[:end], how, tmp_path)
    memory = _add(memory, other, how, tmp_path)
    for end in range(3, len(msgs) + 1):
        memory = _add(memory, msgs[:end], how, tmp_path)
    assert _said(memory) == ["Hi", "Hello", *said_alone(other), *(s for _, s in WORDS[2:])]


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_second_conversation_of_words_in_one_scope_stores_each_message_once(tmp_path, how):
    """A scope by user alone (a new session of the agent, its hook adding agent.messages whole at each message,
    the history starting empty): only the scope's first add marked its whole conversation, so each message of the
    second conversation was stored again at every later message (14 memories for 8)."""
    memory = _memory()
    for conversation in (WORDS, OTHER):
        msgs = [_words(r, s) for r, s in conversation]
        for end in range(1, len(msgs) + 1):
            memory = _add(memory, msgs[:end], how, tmp_path)
    assert _said(memory) == [s for _, s in WORDS + OTHER]


def test_words_said_again_that_open_with_an_older_add_or_resend_the_last_are_still_stored():
    """Guard: an exchange opening with an add before the scope's last (the user's first words added alone, the
    run's messages, then the same words with the next run's) and the last add sent again exactly (a retry, or a
    second run that replied alike) are stored as new, as before."""
    yes, run, hello = _words("user", "yes"), _words("assistant", "Booked."), _words("assistant", "Hello")
    memory = _memory()
    for add in ([yes], [run], [yes, hello], [yes, hello]):
        memory.add(add, user_id="t", run_id="r")
    assert _said(memory) == ["yes", "Booked.", "yes", "Hello", "yes", "Hello"]


@pytest.mark.parametrize("field", ["given", "sent", "gone"])
@pytest.mark.parametrize(("bad", "said"), [([], "a list"), (None, "null"), ("x", "a string"), (3, "a number")])
def test_a_save_whose_resend_keys_are_no_object_is_refused_naming_the_field(tmp_path, field, bad, said):
    """A save whose 'given' (or 'sent', 'gone': what a scope keeps to read an add sent again) is not an object of
    scopes was refused as "'list' object has no attribute 'items'", naming no field. One line names it now, and what
    it is in JSON's words (io.json_type; it said "got NoneType" for null), and the save is left as it was."""
    memory = _memory()
    for m in _claim()[:4]:
        memory.add([m], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    text = json.dumps({**d, field: bad})
    (saved / "scoped.json").write_text(text)
    with pytest.raises(SAMFileError, match=rf"scoped\.json: .*{field} must be an object.*, got {said}\)") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value) and (saved / "scoped.json").read_text() == text


def test_documents_behaviour_a_second_conversation_opening_as_a_kept_add_is_stored_again():
    """Documents behaviour (README, Converse messages without ids): a second conversation of words alone in one
    scope whose first message is one of the scope's last adds (a "Hi" again) reads as a "yes" said again: no
    mark, so each of its messages is stored again at every later add; a run_id each keeps them apart."""
    first = [_words("user", "Hi"), _words("assistant", "Hello")]
    second = [_words("user", "Hi"), _words("assistant", "Welcome back"), _words("user", "Bye")]
    memory = _memory()
    for conversation in (first, second):
        for end in range(1, len(conversation) + 1):
            memory.add(conversation[:end], user_id="t", run_id="r")
    assert _said(memory) == ["Hi", "Hello", "Hi", "Hi", "Welcome back", "Hi", "Welcome back", "Bye"]


def test_a_served_hook_adding_its_history_with_a_remembered_fact_between_stores_each_message_once(tmp_path):
    """Checked over sam-serve (HTTP add, MCP remember's text between, a checkpoint at every write and a
    restart without shutdown, the log replayed): a claims conversation added a message at a time then whole (what
    the scope was given, saved as 'given'), and a conversation of words alone added whole at each message, store
    what the same adds store in process, each message once (the words stored 21 memories for 7 before the
    review's fix; the claims held)."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from fastapi.testclient import TestClient
    from mcp import Client
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.mcp import create_mcp
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    def served() -> Tenants:
        return Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig(),
                       checkpoint_every=1, checkpoint_share=0.0)

    async def remember(tenants: Tenants, text: str, scope: dict) -> None:
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            assert not (await client.call_tool("remember", {"text": text, **scope})).is_error

    claims, words = _claim(), [_words(r, s) for r, s in WORDS]
    fact = "Note: the customer prefers email."
    plan = [("claims", [m]) for m in claims[:4]] + [("claims", fact), ("claims", claims)]
    plan += [("words", words[:end]) for end in (1, 2)] + [("words", fact)]
    plan += [("words", words[:end]) for end in range(3, len(words) + 1)]
    tenants, memory = served(), _memory()
    for i, (run, data) in enumerate(plan):
        scope = {"user_id": "mia", "run_id": run}
        memory.add(data, **scope)
        if isinstance(data, str):
            asyncio.run(remember(tenants, data, scope))
        else:
            r = TestClient(create_app(tenants)).post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                                                     json={"messages": data, **scope})
            assert r.status_code == 200, r.text
        if i in (3, 6, 9):  # a kill after the acknowledged writes: the checkpoint, then the log after it
            old = tenants.tenants["acme"]
            with old._checkpointing:  # MCP's background checkpoint ends first: a kill would have stopped it too,
                pass                  # and one left running beside the next server raced it for the folder
            old.release()
            tenants = served()
    held = tenants.tenants["acme"].memory
    for run, n in (("claims", 9), ("words", 7)):
        scope = {"user_id": "mia", "run_id": run}
        assert _said(held, **scope) == _said(memory, **scope) and len(_said(memory, **scope)) == n


def test_a_scope_given_nothing_new_after_a_save_from_before_given_saves_a_memory_that_loads(tmp_path):
    """A scope loaded from a save made before 'given' (none kept), then its last add retried whole (read once,
    nothing new): 'given' was saved as ["", 0], which load refuses, and the memory (a sam-serve tenant's
    checkpoint) no longer loaded. Nothing given is kept as nothing now."""
    msgs = _claim()
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    (saved / "scoped.json").write_text(json.dumps({k: v for k, v in d.items() if k != "given"}))
    memory = ScopedMemory.load(saved, HashingEncoder(16))
    before = _said(memory)
    out = memory.add(msgs[:4], user_id="t", run_id="r")  # retried: read once
    assert out["results"] == [] and out["notes"]
    loaded = ScopedMemory.load(memory.save(tmp_path / "again"), HashingEncoder(16))
    assert _said(loaded) == before
    out = loaded.add(msgs, user_id="t", run_id="r")
    assert len(out["results"]) == 4 and out["notes"][0]["reason"].startswith("data[0:4]: the scope's last add")


def test_a_save_of_a_scope_given_nothing_as_stop_64_wrote_it_loads(tmp_path):
    """A save whose 'given' holds ["", 0] (stop 64 wrote it for a scope given nothing new) loads, that scope
    given nothing, its memories all there; another shape is still refused."""
    msgs = _claim()
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    (saved / "scoped.json").write_text(json.dumps({**d, "given": {"t//r": ["", 0]}}))
    loaded = ScopedMemory.load(saved, HashingEncoder(16))
    assert _said(loaded) == _said(memory) and "t//r" not in loaded._given
    (saved / "scoped.json").write_text(json.dumps({**d, "given": {"t//r": ["x", 0]}}))
    with pytest.raises(SAMFileError, match=r"given of 't//r' must be"):
        ScopedMemory.load(saved, HashingEncoder(16))
