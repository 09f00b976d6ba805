"""One scope given agent histories of two formats (resent.FORMATS): a Strands hook's Converse history added whole
at each message, and between two of its adds another component's OpenAI, Anthropic or LangChain messages (an MCP
client's remember with messages), or the reverse. Since OpenAI's rule the other format's add was a kept add of its
own and took the hook's adds' mark of the scope's whole conversation (resent.kept), and chained into all the scope
was given (resent.given): every later history of the hook was stored again (21 memories for 7; 13 for 9). Each
format now keeps its own kept adds and its own 'given' (resent.lane); the other format's add is apart to them."""

from __future__ import annotations

import json

import pytest
from test_live_leftovers_61 import _claim, _words
from test_live_whole_history_review import BETWEEN, FACT, WORDS, _add, _memory, _said, said_alone
from test_openai_whole_history import CHATS, words

from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory

OTHERS = ("openai messages", "anthropic messages", "langchain messages")
HOWS = ["in process", "saved and loaded", "checked first"]


def _hook(msgs: list, at: int, other, how: str, tmp_path) -> ScopedMemory:
    """``msgs`` added whole at each message, ``other`` added after the history of ``at`` messages."""
    memory = _memory()
    for end in range(1, len(msgs) + 1):
        memory = _add(memory, msgs[:end], how, tmp_path)
        if end == at:
            memory = _add(memory, other, how, tmp_path)
    return memory


def _alone(msgs: list, at: int, other) -> list[str]:
    """What the same adds store where the hook adds each message alone: each message once."""
    memory = _memory()
    for end in range(1, len(msgs) + 1):
        memory.add(msgs[end - 1:end], user_id="t", run_id="r")
        if end == at:
            memory.add(other, user_id="t", run_id="r")
    return _said(memory)


@pytest.mark.parametrize("between", OTHERS)
@pytest.mark.parametrize("how", HOWS)
def test_a_converse_history_with_calls_after_another_format_stores_each_message_once(tmp_path, how, between):
    """A claims conversation (calls by their toolUseIds) added whole at each message, the other format's add after
    its first message (words alone, told by the mark alone): the user's first words were stored again."""
    msgs, other = _claim(), BETWEEN[between]
    memory = _hook(msgs, 1, other, how, tmp_path)
    assert _said(memory) == _alone(msgs, 1, other) and len(_said(memory)) == len(msgs) + len(said_alone(other))


@pytest.mark.parametrize("history", ["openai calls", "openai words", "anthropic calls", "langchain calls"])
@pytest.mark.parametrize("how", HOWS)
def test_another_formats_whole_history_with_a_converse_add_between_stores_each_message_once(tmp_path, how,
                                                                                             history):
    """The reverse: an OpenAI (Anthropic, LangChain) loop adding its whole history at each message, a Converse
    add between (a fact as a Converse message): its kept adds lost their mark to the Converse add."""
    api, kind = history.split()
    msgs = words(api) if kind == "words" else CHATS[api]()
    other, at = [_words("user", FACT)], 2 if kind == "words" else 1
    assert _said(_hook(msgs, at, other, how, tmp_path)) == _alone(msgs, at, other)


@pytest.mark.parametrize("how", HOWS)
def test_a_converse_agent_adding_each_message_then_its_whole_history_after_an_openai_add(tmp_path, how):
    """A Converse agent adding each message alone, then an OpenAI add, then its whole history (what the scope was
    given, resent.given): the OpenAI message had joined it, the history opened with none of it, and every message
    but the first add's was stored again (13 memories for 9)."""
    msgs, memory = _claim(), _memory()
    for m in msgs:
        memory = _add(memory, [m], how, tmp_path)
    memory = _add(memory, BETWEEN["openai messages"], how, tmp_path)
    memory = _add(memory, msgs, how, tmp_path)
    assert len(_said(memory)) == 9 and _said(memory)[:8] == _alone(msgs, 0, None)


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_after_a_delete_of_a_mixed_scope_each_formats_last_add_still_stands_for_its_conversation(tmp_path, how):
    """The scope's memories all deleted after a hook's two adds of words and an OpenAI add (resent.dropped): the
    last of each format keeps its mark, so the hook's next whole history stores its new messages alone (the
    deleted ones stay deleted), where the OpenAI add, the scope's last, alone kept it."""
    msgs = [_words(r, s) for r, s in WORDS]
    memory = _hook(msgs[:2], 2, BETWEEN["openai messages"], how, tmp_path)
    memory.delete_all(user_id="t", run_id="r")
    for end in range(3, len(msgs) + 1):
        memory = _add(memory, msgs[:end], how, tmp_path)
    assert _said(memory) == [s for _, s in WORDS[2:]]


def test_each_kept_add_keeps_its_format_and_a_save_round_trips(tmp_path):
    """The save holds each kept add's format and each format's 'given'; loaded, it reads as before the save."""
    memory = _hook([_words(r, s) for r, s in WORDS], 2, BETWEEN["openai messages"], "in process", tmp_path)
    d = json.loads((memory.save(tmp_path / "m") / "scoped.json").read_text())
    sent = d["sent"]["t//r"]  # oldest first: the hook's 2 adds, the OpenAI add, the hook's 4 after it
    assert [k[-1] for k in sent] == ["bedrock", "bedrock", "openai", *["bedrock"] * 4]
    assert [k[2] is True for k in sent] == [False, True, True, True, True, True, True]  # the OpenAI add took none
    assert sorted(g[-1] for g in d["given"]["t//r"]) == ["bedrock", "openai"]
    loaded = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    assert (loaded._sent, loaded._given) == (memory._sent, memory._given)


def test_a_save_from_before_formats_loads_its_keys_as_of_any_format(tmp_path):
    """A save from before each kept add's format ([digest, count(, true)], 'given' one [digest, count]) loads,
    its keys read with an add of any format: a hook's next whole history is read once, as before."""
    msgs = [_words(r, s) for r, s in WORDS]
    memory = _memory()
    for end in (1, 2, 3):
        memory.add(msgs[:end], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    old = {**d, "sent": {ep: [[x for x in k[:-1] if not str(x).startswith("opening:")] for k in ks]
                         for ep, ks in d["sent"].items()},  # no format, nor an opening (saved before either)
           "given": {ep: g[0][:2] for ep, g in d["given"].items()}}
    (saved / "scoped.json").write_text(json.dumps(old))
    memory = ScopedMemory.load(saved, HashingEncoder(16))
    for end in range(4, len(msgs) + 1):
        memory.add(msgs[:end], user_id="t", run_id="r")
    assert _said(memory) == [s for _, s in WORDS]


@pytest.mark.parametrize(("field", "bad", "said"), [
    ("sent", [["d", 2, "cobol"]], r"sent of 't//r' item 0: format 'cobol' is none of bedrock, "),
    ("sent", [["d", 2, True, 3]], r"sent of 't//r' must be a list of \[digest, count\] .*, up to 8 of each format"),
    ("given", [["d", 2, "cobol"]], r"given of 't//r' item 0: format 'cobol' is none of bedrock, "),
    ("given", [["d", 2, "openai"], ["e", 3, "openai"]], r"given of 't//r' holds openai or anthropic twice"),
    ("given", [["d", 0, "openai"]], r"given of 't//r' must be "),
    ("sent", [["d", 2, "bedrock"]] * 9, r"sent of 't//r' holds bedrock more than 8 times, where a scope keeps at most 8 of each format"),
    # one of each: named as one format, 'openai twice' pointed at a format the save holds once
    ("given", [["d", 2, "openai"], ["e", 3, "anthropic"]], r"given of 't//r' holds openai or anthropic twice, .*"
                                                            r"\(anthropic's and openai's are one\)"),
    ("sent", [["d", 2, "anthropic"]] * 5 + [["e", 2, "openai"]] * 4, r"sent of 't//r' holds openai or anthropic more "
                                                                     r"than 8 times"),
])
def test_a_save_with_a_bad_format_is_refused_in_one_line_naming_it(tmp_path, field, bad, said):
    memory = _memory()
    memory.add([_words("user", "Hi")], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    text = json.dumps({**d, field: {"t//r": bad}})
    (saved / "scoped.json").write_text(text)
    with pytest.raises(SAMFileError, match=said) as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value) and (saved / "scoped.json").read_text() == text


def test_a_trimmed_llamaindex_history_after_an_openai_add_is_read_against_its_own_last_add():
    """A LlamaIndex history trimmed at its start (resent.compacted) after an MCP client's OpenAI add: the add was
    read against the scope's last add (the OpenAI one), not its format's, and its note said 'one of the scope's last
    8 adds' where the end of its last add was sent again; the new key took the OpenAI add's mark."""
    from test_walkthrough_llamaindex import conversations, listed

    messages = next(m for _, m in conversations(10, 0) if sum(x["role"] == "user" for x in m) >= 3)
    starts = [i for i, m in enumerate(messages) if m["role"] == "user"]
    fact = [{"role": "user", "content": FACT}]
    memory, alone = _memory(), _memory()
    for add in (messages[:starts[2]], fact, fact, messages[starts[1]:]):  # the fact twice: its key loses its mark
        result = memory.add(add, user_id="me", run_id="s")
    for add in (messages[:starts[2]], fact, fact, messages[starts[2]:]):
        alone.add(add, user_id="me", run_id="s")
    again = starts[2] - starts[1]
    assert result["notes"][0]["reason"].startswith(f"data[0:{again}]: the end of the scope's last add (the history "
                                                   "trimmed before it) of LlamaIndex messages")
    assert listed(memory) == listed(alone)
    assert [k[2] is True for k in memory._sent["me//s"] if k[-1] == "llamaindex"][-1]  # its own last add's mark


def test_an_add_tells_a_whole_historys_format_no_more_often_than_before_the_formats(monkeypatch):
    """Reading each add against its own format's kept adds told the format again in each rule (resent.mine): a
    2,000-message history's detect takes ~11 ms, and a whole history sent again took ~25 ms (~20 %) longer to add
    (3 detects of a first add, 9 of one sent again; before the formats 1 and 7)."""
    from sam_model.memory import resent

    told, real = [0], resent.detect
    monkeypatch.setattr(resent, "detect", lambda items: (told.__setitem__(0, told[0] + (len(items) > 2)), real(items))[1])
    msgs, memory = CHATS["openai"](), _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    first, told[0] = told[0], 0
    assert memory.add(msgs, user_id="t", run_id="r")["notes"]
    assert first <= 1 and told[0] <= 8


def test_a_whole_history_sent_again_is_not_chained_against_all_it_was_given(monkeypatch):
    """resent.opens_with_given chained the messages an add opens with against all the scope was given at every add,
    where the add is read from after its last add anyway (all it was given is no more than that): ~30 ms of ~115 for
    a 2,000-message history sent again. Not chained where it could read no more; the add reads as before."""
    from sam_model.memory import resent

    heads, real = [], resent._chained
    monkeypatch.setattr(resent, "_chained", lambda before, items: (heads.append(before is None), real(before, items))[1])
    msgs, memory = CHATS["openai"](), _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    heads.clear()
    assert "data[0:4]: the scope's last add" in memory.add(msgs, user_id="t", run_id="r")["notes"][0]["reason"]
    assert heads == [False]  # what it was given chained on with the rest alone


def _old_save(memory: ScopedMemory, tmp_path) -> ScopedMemory:
    """``memory`` saved as before the formats (keys [digest, count(, true)], 'given' one [digest, count]), loaded."""
    saved = memory.save(tmp_path / "old")
    d = json.loads((saved / "scoped.json").read_text())
    old = {**d, "sent": {ep: [k[:-1] for k in ks] for ep, ks in d["sent"].items()},
           "given": {ep: g[0][:2] for ep, g in d.get("given", {}).items()}}
    (saved / "scoped.json").write_text(json.dumps(old))
    return ScopedMemory.load(saved, HashingEncoder(16))


@pytest.mark.parametrize(("history", "between", "want"), [
    ("words", "openai messages", 10), ("words", None, 6), ("words", "a fact as text", 7),
    ("calls", "openai messages", 10), ("calls", None, 8), ("one by one", "openai messages", 13),
    ("one by one", None, 8)])
def test_documents_behaviour_a_save_from_before_the_formats_given_another_format_first(tmp_path, history, between,
                                                                                        want):
    """Documents behaviour (README): a scope saved before the formats, its hook's first message added (or the claims
    conversation's first 4 messages one by one), loaded: its keys are of any format, so another format's add before
    the hook's next one takes their mark (and chains into all the scope was given), as before: a history of words
    alone stores its first messages again at its next two adds (10 memories for 7; at every later message, 22,
    until the review of 2026-12-07's lone marks, resent.new_mark), one with calls stores its first words again
    (10 for 9), and the whole history after messages added one by one stores them again but the first (13 for 9).
    A text between, or the hook's own add first, reads each message once."""
    msgs = [_words(r, s) for r, s in WORDS] if history == "words" else _claim()
    memory = _memory()
    for m in msgs[:4 if history == "one by one" else 1]:
        memory.add([m], user_id="t", run_id="r")
    memory = _old_save(memory, tmp_path)
    if between:
        memory.add(BETWEEN[between], user_id="t", run_id="r")
    for end in [len(msgs)] if history == "one by one" else range(2, len(msgs) + 1):
        memory.add(msgs[:end], user_id="t", run_id="r")
    assert len(_said(memory)) == want


@pytest.mark.parametrize("history", ["words", "calls", "one by one"])
def test_a_save_from_before_the_formats_read_on_by_its_own_agent_first_keeps_each_message_once(tmp_path, history):
    """The same save, the hook's own next add before the OpenAI add: its kept add (and all it was given) holds its
    format from there, and the OpenAI add leaves them: each message once."""
    msgs = [_words(r, s) for r, s in WORDS] if history == "words" else _claim()
    memory = _memory()
    for m in msgs[:4 if history == "one by one" else 1]:
        memory.add([m], user_id="t", run_id="r")
    memory = _old_save(memory, tmp_path)
    memory.add([msgs[4]] if history == "one by one" else msgs[:2], user_id="t", run_id="r")
    memory.add(BETWEEN["openai messages"], user_id="t", run_id="r")
    for end in [len(msgs)] if history == "one by one" else range(3, len(msgs) + 1):
        memory.add(msgs[:end], user_id="t", run_id="r")
    assert len(_said(memory)) == len(msgs) + 1
