"""Responses items and Gemini contents added whole after each turn (an agent adding its ``input`` list, or its
``contents``, after each response): they were read with the scope's open turn alone, which tells an item by its id
but a user's bare message (and every Gemini content) by nothing, so each add stored the earlier turns' messages
again (Responses 17 memories for 12, Gemini 19 for 10). They follow the whole-history rule now (sam_model.memory.
resent): an add opening with the scope's last add, whole and in order, holding an id written once (an item's id or
call_id, a Gemini call's id), or going on from the scope's whole conversation, reads that start once."""

from __future__ import annotations

import json

import pytest
import test_live_gemini_turn as gemini
import test_live_responses as responses

from sam_model.memory import HashingEncoder, ScopedMemory

HOWS = ["in process", "saved and loaded", "checked first"]
APIS = {"responses": (responses.conversation, [2, 8, 13]), "gemini": (gemini.conversation, [2, 7, 10])}


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def _add(memory: ScopedMemory, data: list, how: str, tmp_path) -> tuple[ScopedMemory, dict]:
    read = memory.check_add(data, "data", user_id="t", run_id="r") if how == "checked first" else None
    out = memory.add(data, user_id="t", run_id="r", read=read)
    if how == "saved and loaded":
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    return memory, out


def whole_and_new(msgs: list, ends: list[int], how: str, tmp_path) -> tuple[ScopedMemory, ScopedMemory, list[dict]]:
    whole, new, at, answers = _memory(), _memory(), 0, []
    for end in ends:
        whole, out = _add(whole, msgs[:end], how, tmp_path)
        answers.append(out)
        new.add(msgs[at:end], user_id="t", run_id="r")
        at = end
    return whole, new, answers


@pytest.mark.parametrize("api", sorted(APIS))
@pytest.mark.parametrize("how", HOWS)
def test_a_whole_list_added_after_each_turn_stores_each_message_once(tmp_path, api, how):
    """Stored as each turn's new items (contents) added alone: memories, states and labels; the notes say what was
    read once."""
    make, ends = APIS[api]
    module = responses if api == "responses" else gemini
    whole, new, answers = whole_and_new(make(), ends, how, tmp_path)
    assert module.stored(whole) == module.stored(new) and len(module.stored(new)) == (12 if api == "responses" else 10)
    said = {"responses": "Responses items", "gemini": "Gemini contents"}[api]
    assert answers[1]["notes"][0]["reason"].startswith(f"data[0:{ends[0]}]: the scope's last add of {said}")


def test_a_gemini_history_with_call_ids_is_read_once_by_them():
    """Gemini contents whose calls carry ids (the API's newer versions): a whole list opening with the last add
    holding one is read once, told by the ids (not by the scope's whole conversation)."""
    msgs = gemini.conversation()
    for i, c in enumerate(msgs):
        for p in c["parts"]:
            for k in ("functionCall", "functionResponse"):
                if k in p:
                    p[k]["id"] = f"fc-{i // 2}"
    memory = _memory()
    memory.add(msgs[:6], user_id="t", run_id="r")
    memory.add([{"role": "user", "parts": [{"text": "Note: the tenant prefers mornings."}]}], user_id="t", run_id="r")
    out = memory.add(msgs, user_id="t", run_id="r")
    assert out["notes"][0]["reason"].startswith("data[0:6]: the scope's last add of Gemini contents (told by their "
                                                "function call ids)")
    assert len(gemini.stored(memory)) == 11


def test_bare_messages_said_again_are_stored_and_a_retry_of_the_whole_list_is_not():
    """A user's bare message "yes" added alone twice, then the whole list with both: all the scope was given, told
    by msg_1's id, is read once (since the review of 2026-12-07 each add of Responses items chains into it, the
    bare messages too; before, the two yeses were read as new, stored again); the user's first words, a bare
    message of the start, were stored again. The list sent again exactly (a retry) stores nothing."""
    msgs, yes = responses.conversation(), {"role": "user", "content": "yes"}
    memory = _memory()
    memory.add(msgs[:2], user_id="t", run_id="r")
    for _ in range(2):
        memory.add([yes], user_id="t", run_id="r")
    memory.add([*msgs[:2], yes, yes], user_id="t", run_id="r")
    said = [e[2] for e in responses.stored(memory)]
    assert said.count("yes") == 2 and said.count(msgs[0]["content"]) == 1
    memory.add(msgs[:8], user_id="t", run_id="r")
    before = responses.stored(memory)
    assert memory.add(msgs[:8], user_id="t", run_id="r")["results"] == [] and responses.stored(memory) == before


def test_words_alone_of_a_gemini_list_said_again_exactly_are_stored_again():
    """Guard: Gemini contents of words alone sent again exactly as the last add (a retry, or a second run that replied
    alike) hold nothing written once: read as new, as words are (resent)."""
    hi, hello = gemini.text("user", "Hi"), gemini.text("model", "Hello")
    memory = _memory()
    for add in ([hi, hello], [hi, hello]):
        memory.add(add, user_id="t", run_id="r")
    assert [e[2] for e in gemini.stored(memory)] == ["Hi", "Hello", "Hi", "Hello"]


def test_a_save_keeps_the_lists_kept_adds(tmp_path):
    msgs = responses.conversation()
    memory = _memory()
    memory.add(msgs[:2], user_id="t", run_id="r")
    d = json.loads((memory.save(tmp_path / "m") / "scoped.json").read_text())
    assert [k[-1] for k in d["sent"]["t//r"]] == ["responses"]
    loaded = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    assert loaded.add(msgs[:8], user_id="t", run_id="r")["notes"][0]["reason"].startswith("data[0:2]:")


def test_a_whole_list_sent_again_is_told_its_format_once_less_by_each_check(monkeypatch):
    """A Responses list sent again whole had its format told 7 times (a 2,000-item list's detect takes ~7 ms: ~50
    of the add's ~72 ms): the open turn's reading and the whole-list check each told it, and the note's kept add
    told it again. Told once for both, and the note's kept add by the format told: 5. Counted over each module that
    tells it, of the whole list (what a long history pays for; the rest after the last add is read as an add)."""
    import importlib

    told, real = [0], importlib.import_module("sam_model.data.formats").detect

    def counted(items, *args, **kwargs):
        told[0] += len(items) == len(msgs)
        return real(items, *args, **kwargs)

    for name in ("resent", "live", "live_responses", "scopedinput", "scopedwrite"):
        module = importlib.import_module(f"sam_model.memory.{name}")
        if hasattr(module, "detect"):
            monkeypatch.setattr(module, "detect", counted)
    msgs, memory = responses.conversation(), _memory()
    memory.add(msgs[:8], user_id="t", run_id="r")
    told[0] = 0
    assert memory.add(msgs, user_id="t", run_id="r")["notes"][0]["reason"].startswith("data[0:8]: the scope's last")
    assert told[0] <= 5
