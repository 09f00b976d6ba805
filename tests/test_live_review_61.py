"""A non-author review of the live-path leftovers of stop 61 (tests/test_live_leftovers_61.py): what it broke."""

from __future__ import annotations

import pytest
from test_live_leftovers_61 import _claim, _words

from sam_model.memory import HashingEncoder, ScopedMemory


def test_an_error_in_converse_messages_after_a_resent_start_names_the_message_sent():
    """agent.messages added whole again, its start the scope's last add: the rest is read alone, and a bad message in
    it was named by its place in the rest (data, message 1), not in what the agent sent (its message 5): it names the
    rest it is read in, data[4:]. The scope is as it was."""
    memory = ScopedMemory(HashingEncoder(16))
    msgs = _claim()
    memory.add(msgs[:4], user_id="t", run_id="r")
    before = memory.get_all(user_id="t", run_id="r")["results"]
    blank = {"role": "user", "content": [{"text": "   "}]}
    with pytest.raises(ValueError, match=r"^data\[4:\], message 1\.content is only whitespace") as err:
        memory.add([*msgs[:4], _words("user", "ok"), blank], user_id="t", run_id="r")
    assert "\n" not in str(err.value) and memory.get_all(user_id="t", run_id="r")["results"] == before
    with pytest.raises(ValueError, match=r"^data, message 1\.content is only whitespace"):  # no start sent again
        memory.add([_words("user", "ok"), blank], user_id="t", run_id="r")


def test_closed_ids_keep_their_set_with_the_list_however_it_changes():
    """live.ClosedIds keeps a set of the list as it grows at its end; a copy.copy shared the set, so the copy held
    the ids the original took after it, and a change elsewhere (an id removed, replaced, put first) left the set
    behind: a removed id still held, an inserted one not. Whatever the change, holds() answers what the list holds;
    saved, it is the plain JSON list."""
    import copy
    import json

    from sam_model.memory.live import ClosedIds

    def agrees(ids: ClosedIds) -> bool:
        return all(ids.holds(x) == (x in list(ids)) for x in "abcdefgz")

    ids = ClosedIds("ab")
    assert ids.holds("a")
    shallow, deep = copy.copy(ids), copy.deepcopy(ids)
    ids.extend("c")
    assert ids.holds("c") and not shallow.holds("c") and not deep.holds("c")
    assert type(shallow) is type(deep) is ClosedIds and shallow == deep == ["a", "b"]
    changes = [lambda x: x.__delitem__(0), lambda x: x.insert(0, "d"), lambda x: x.__setitem__(0, "e"),
               lambda x: x.remove("b"), lambda x: x.pop(), lambda x: x.__setitem__(slice(0, 1), ["f", "g"]),
               lambda x: x.__delitem__(slice(None)), lambda x: x.clear(), lambda x: x.__imul__(0),
               lambda x: x.append("z"), lambda x: x.__iadd__(["d"])]
    for change in changes:
        ids = ClosedIds("abc")
        assert agrees(ids)
        change(ids)
        assert agrees(ids), (change, list(ids))
    assert json.dumps({"ids": ClosedIds("ab")}) == '{"ids": ["a", "b"]}'


def test_a_saved_open_turn_whose_closed_ids_are_not_strings_is_refused_at_load(tmp_path):
    """A save whose Gemini CLI closed message ids held an object loaded, and the next add of a message failed with a
    bare TypeError (unhashable type: 'dict', the ids' set made at the look-up): the load refuses it in one line naming
    the field, as it refuses the other facts' lists."""
    import json

    from test_live_leftovers_61 import _cli_session

    from sam_model.io import SAMFileError

    lines = _cli_session(3)
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines[:-1]:
        memory.add([x], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert d["open"]["t//r"]["facts"]["ids"]  # the closed turns' ids, a plain list
    ScopedMemory.load(saved, HashingEncoder(16)).add([{**lines[-2], "id": "new"}], user_id="t", run_id="r")
    d["open"]["t//r"]["facts"]["ids"].append({"x": 1})
    (saved / "scoped.json").write_text(json.dumps(d))
    with pytest.raises(SAMFileError, match=r"scoped\.json: unreadable memory \(open turn field 'facts\.ids'") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value)


def test_converse_messages_json_cannot_sort_are_stored_as_before_not_failed_after_storing():
    """Converse messages a Python agent built with a dict JSON cannot sort (keys 1 and 'text') were stored, then the
    add failed with a bare TypeError (the scope's key of its last add, a sorted JSON digest, taken after the store):
    an agent retrying it stored them again. Such an add is read as new, as before sam_model.memory.resent."""
    memory = ScopedMemory(HashingEncoder(16))
    msgs = [{"role": "user", "content": [{"text": "My policy number is HM-514002.", 1: "x"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "lookup_policy",
                                                           "input": {"policy_number": "HM-514002"}}}]}]
    for n in (1, 2):
        got = memory.add(msgs, user_id="t", run_id="r")["results"]
        assert [r["step"] for r in got] == [2 * n - 2, 2 * n - 1]
    assert len(memory.get_all(user_id="t", run_id="r")["results"]) == 4


def test_documents_behaviour_a_strands_hook_under_a_sliding_window_adds_each_message_as_it_comes():
    """Documents behaviour (README, "a Strands hook"): Strands trims agent.messages (its default conversation
    manager, a sliding window) before AfterInvocationEvent. A hook adding agent.messages[n:] after each invocation,
    n the length at its last add, then misses as many new messages as were trimmed, where the README said it stored
    each once with a conversation manager that drops the oldest; agent.messages whole stores the kept ones again.
    A MessageAddedEvent hook adding each message as it is appended stores what the whole conversation's add does."""
    from test_live_gemini_turn import stored

    msgs, window = _claim(), 6
    invocations = [msgs[:4], msgs[4:8]]
    at_once = ScopedMemory(HashingEncoder(16))
    at_once.add(msgs, user_id="t", run_id="r")
    each, tail, whole = (ScopedMemory(HashingEncoder(16)) for _ in range(3))
    agent: list[dict] = []
    n = 0
    for invocation in invocations:
        for m in invocation:
            agent.append(m)
            each.add([m], user_id="t", run_id="r")  # MessageAddedEvent
        del agent[:-window]  # the conversation manager, before AfterInvocationEvent
        if agent[n:]:
            tail.add(agent[n:], user_id="t", run_id="r")
        whole.add(list(agent), user_id="t", run_id="r")
        n = len(agent)
    assert stored(each) == stored(at_once) and len(stored(each)) == 8
    said = [e[2] for e in stored(tail)]
    assert len(said) == 6 and "ok, go ahead" not in said  # msgs[4:6], trimmed past n, lost
    assert len(stored(whole)) == 4 + 6  # the kept msgs[2:4] stored again


def test_an_invocation_said_again_with_ollamas_tool_named_ids_is_stored_again():
    """Strands' Ollama and Gemini models write a tool's name as its toolUseId, so the id is not written once: an invocation
    asked and answered again word for word (a status checked twice), added as agent.messages[n:], was read as the
    last add sent again and not stored (the importer, reading a log of both, stores both). Ids that are the tools'
    names no longer tell a resend; Bedrock's own ids still do."""
    def invocation(call_id: str) -> list[dict]:
        return [_words("user", "Is build 1942 green?"),
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": call_id, "name": "get_status",
                                                               "input": {"build": "1942"}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": call_id, "status": "success",
                                                             "content": [{"json": {"status": "green"}}]}}]},
                _words("assistant", "Build 1942 is green.")]

    for call_id, stored_again in (("get_status", 4), ("tooluse_kR2xVb9qTq", 0)):
        memory = ScopedMemory(HashingEncoder(16))
        assert len(memory.add(invocation(call_id), user_id="t", run_id="r")["results"]) == 4
        assert len(memory.add(invocation(call_id), user_id="t", run_id="r")["results"]) == stored_again


def test_documents_behaviour_only_the_last_add_of_converse_messages_is_told_again(tmp_path):
    """Documents behaviour (README, "The scope keeps its last 8 such adds"): an earlier add retried after a later
    one (a timed-out add sent again once the next went through) is read once (until stop 62, when the scope kept
    its last add alone, it was stored again), but not after 8 later adds; and sam-serve's add takes at most 1,000
    messages, so a longer agent.messages is refused there whole (a 422)."""
    from sam_model.memory.resent import KEPT

    msgs = _claim()
    memory = ScopedMemory(HashingEncoder(16))
    for end in (4, 8):
        memory.add(msgs[:end], user_id="t", run_id="r")
    assert len(memory.add(msgs[:4], user_id="t", run_id="r")["results"]) == 0  # one of the last adds: read once
    for i in range(KEPT):
        memory.add([_words("user", f"note {i}")], user_id="t", run_id="r")
    assert len(memory.add(msgs[:4], user_id="t", run_id="r")["results"]) == 4  # past the kept adds: stored again

    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS
    from test_served_session_lines import SCOPE, open_tenants

    from sam_model.limits import MAX_ADD_ITEMS
    from sam_model.serve.http import create_app

    http = TestClient(create_app(open_tenants(tmp_path)))
    long = [_words("user" if i % 2 == 0 else "assistant", f"message {i}") for i in range(MAX_ADD_ITEMS + 1)]
    r = http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]}, json={"messages": long, **SCOPE})
    assert r.status_code == 422 and "1000" in r.text
    r = http.post("/v1/memories", headers={"X-API-Key": KEYS["acme"]}, json={"messages": long[:-1], **SCOPE})
    assert r.status_code == 200 and len(r.json()["results"]) == MAX_ADD_ITEMS


def test_a_save_without_sent_loads_and_a_bad_one_is_refused(tmp_path):
    """Guard (passes before): a save from before sam_model.memory.resent (no 'sent' in scoped.json) loads, its
    scope's next agent.messages read as new (nothing tells it sent again), the one after it read once; a 'sent' of
    another shape is refused at load in one line naming it."""
    import json

    from sam_model.io import SAMFileError

    msgs = _claim()
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(msgs[:4], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert set(d["sent"]) == {"t//r"}
    for sent, refused in ((None, False), ({"t//r": ["x", 0]}, True), ([1], True)):
        # a save from before resent holds neither its kept adds nor what the scope was given (since stop 64)
        (saved / "scoped.json").write_text(json.dumps({**{k: v for k, v in d.items() if k not in ("sent", "given")},
                                                       **({"sent": sent} if sent is not None else {})}))
        if refused:
            with pytest.raises(SAMFileError, match=r"scoped\.json: unreadable memory") as err:
                ScopedMemory.load(saved, HashingEncoder(16))
            assert "\n" not in str(err.value)
            continue
        loaded = ScopedMemory.load(saved, HashingEncoder(16))
        assert len(loaded.add(msgs[:8], user_id="t", run_id="r")["results"]) == 8  # no last add known
        assert len(loaded.add(msgs[:8], user_id="t", run_id="r")["results"]) == 0
