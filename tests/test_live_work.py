"""What a line-by-line add of an agent's session works through, counted (no timings: sam_model.bench.live_adds
times it).

Each add reads the scope's open turn again and feeds it to the conversation's tracker from where the turn began, so
each of the turn's tool calls was decided again at every add, its argument values searched through every event
before it (sayings.says): a Claude Code response of reads after earlier results, a line an add, searched each
earlier result once a call an add (100 reads of 90 KB: 9 minutes, most of it these searches). The tracker now keeps
which events say each value (sayings.Sayings): an event's text is searched once a value, and again only where its
text changed; the labels are the ones a fresh search gives."""

from __future__ import annotations

import pytest
from test_format_claude_code import Session, text, tool_use
from test_live_adds import conversation, stored

from sam_model.data import chatmessages, sayings
from sam_model.data.toolstate import TranscriptState
from sam_model.memory import HashingEncoder, ScopedMemory


def session(n: int) -> list[dict]:
    """A prompt answered by two reads (a closed turn), then a prompt answered by one response of ``n`` reads of
    the same files, each result written between its calls (one message.id), then its words."""
    s = Session()
    s.user("read the app's config")
    s.respond(tool_use("a0", "Read", {"file_path": "/work/app/m0.py"}))
    s.result("a0", "".join(f"VALUE_{i} = {i}\n" for i in range(50)))
    s.respond(tool_use("a1", "Read", {"file_path": "/work/app/m1.py"}))
    s.result("a1", "".join(f"NAME_{i} = '/work/app/m{i}.py'\n" for i in range(50)))
    s.respond(text("Read them."))
    s.user("now read every module again")
    for i in range(n):
        s.add("assistant", {"model": "claude-sonnet-4-5", "id": "msg_again", "type": "message", "role": "assistant",
                            "content": [tool_use(f"c{i}", "Read", {"file_path": f"/work/app/m{i}.py"})]},
              requestId="req_again")
        s.result(f"c{i}", f"VALUE_{i} = {i}\n" * 20)
    s.respond(text("Read them again."))
    return s.entries


def counting(monkeypatch) -> list[int]:
    """The number of sayings.says calls, counted."""
    calls, says = [0], sayings.says

    def counted(text_norm: str, s: str) -> bool:
        calls[0] += 1
        return says(text_norm, s)
    monkeypatch.setattr(sayings, "says", counted)
    return calls


def test_a_line_by_line_add_searches_no_more_than_the_whole_files(monkeypatch):
    """Fed a line an add, the session's calls search the events' texts no more than its whole file read in one
    add (before: each add decided every call of the open turn again, each searching every event before it: 13
    times the whole file's searches for 12 reads, growing with the turn); the memories, states and labels are the whole
    file's."""
    lines = session(12)
    calls = counting(monkeypatch)
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    once, calls[0] = calls[0], 0
    by_line = ScopedMemory(HashingEncoder(16))
    for x in lines:
        by_line.add([x], user_id="me", run_id="s")
    assert once > 0 and calls[0] <= once
    assert stored(by_line) == stored(whole) and conversation(by_line) == conversation(whole)
    assert any(labels for _, labels in conversation(whole))  # the calls are traced to the earlier results


def feed(t: TranscriptState, messages: list[dict]) -> list:
    return [t.feed(m)[0] for m in messages]


CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "cancel", "arguments": '{"order_id": "A-17"}'}}]}


@pytest.mark.parametrize("change", ["rollback", "rewrite", "forget"])
def test_a_value_is_traced_to_the_texts_the_events_hold_now(change):
    """The kept searches follow the events' texts: after a rollback fed other words, a rewrite or a forget, a call
    is traced as a tracker searching afresh traces it (a kept hit of the old text would label the wrong memory)."""
    said = [{"role": "user", "content": "cancel order A-17"}, {"role": "assistant", "content": "Which order?"},
            {"role": "user", "content": "the one I said"}]
    call = chatmessages.parse_tool_calls(CALL, "m")
    t = TranscriptState()
    mark = t.mark()
    feed(t, said)
    assert t.decide(call).labels == [0]  # searched and kept
    if change == "rollback":
        t.rollback(mark)
        feed(t, [{"role": "user", "content": "cancel my order"}, *said[1:]])
    else:
        t.rewrite(0, "cancel my order") if change == "rewrite" else t.forget(0)
    fresh = TranscriptState.from_state_dict(t.state_dict())  # the same events, nothing searched
    assert t.decide(call) == fresh.decide(call) and t.decide(call).labels == []


def test_the_kept_searches_are_not_saved():
    """A tracker's save holds no searches; a loaded one searches afresh and traces alike."""
    t = TranscriptState()
    feed(t, [{"role": "user", "content": "cancel order A-17"}, CALL])
    d = t.state_dict()
    assert "_sayings" not in d
    u = TranscriptState.from_state_dict(d)
    assert u._sayings is not t._sayings and u._sayings.found == {}
    call = chatmessages.parse_tool_calls(CALL, "m")
    assert u.decide(call) == t.decide(call)


def records(memory: ScopedMemory) -> list[tuple]:
    """Each stored memory's record as the store holds it: heading, kind, phase, the slots it sets, its links."""
    return sorted((i, e.text, e.kind, e.phase, e.step, e.sets, e.links) for i, e in memory.store._entries.items())


def history(memory: ScopedMemory) -> list[tuple]:
    return [(e["id"], e["event"], e["old_memory"], e["new_memory"]) for i in sorted(memory._history)
            for e in memory._history[i]]


def test_an_add_appending_a_message_feeds_that_message_alone(monkeypatch, tmp_path):
    """A line whose message follows the open turn's (a call's result after the calls) feeds the conversation's
    tracker that message alone, and records its event alone (before: every message of the turn again, each result
    recorded again); the records, memories, states, labels, history and each add's results are what adds reading
    the whole turn again give (a memory saved and loaded at each line, whose open turn is then read whole)."""
    lines = session(8)
    n, feed = [0], TranscriptState.feed

    def counted(self, message, where="message"):
        n[0] += 1
        return feed(self, message, where)
    monkeypatch.setattr(TranscriptState, "feed", counted)
    memory, again, fed = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16)), []
    for x in lines:
        before = n[0]
        out = memory.add([x], user_id="me", run_id="s")
        fed.append(n[0] - before)
        assert again.add([x], user_id="me", run_id="s") == out
        assert conversation(memory) == conversation(again) and records(memory) == records(again)
        again = ScopedMemory.load(again.save(tmp_path / "m"), HashingEncoder(16))
    results = [k for k, x in zip(fed, lines) if x["type"] == "user" and isinstance(x["message"]["content"], list)]
    # the 8-read response's results after its first (whose read also tells its calls' message the directory the
    # lines told, so that message is fed again): one message each; before, the turn's every message again
    assert len(results) == 10 and results[3:] == [1] * 7
    assert records(memory) == records(again) and history(memory) == history(again)
    assert conversation(memory) == conversation(again)
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert stored(memory) == stored(whole) and conversation(memory) == conversation(whole)


def test_an_update_of_an_earlier_memory_has_the_turns_calls_traced_again(tmp_path):
    """An update of a memory before the open turn (the earlier result that names the files) leaves the turn open,
    and its next add traces the turn's calls over the new words, as a read of the whole turn does: its messages
    are all fed again, not only the one the line appends."""
    lines = session(6)
    memory, again = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16))
    for x in lines[:12]:
        memory.add([x], user_id="me", run_id="s")
        again.add([x], user_id="me", run_id="s")
    named = next(r["id"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]
                 if "NAME_3" in r["memory"])
    traced = [labels for _, labels in conversation(memory)]
    for m in (memory, again):
        m.update(named, "nothing here", user_id="me", run_id="s")
    again = ScopedMemory.load(again.save(tmp_path / "m"), HashingEncoder(16))  # its open turn read whole
    for x in lines[12:]:  # the first a result, which appends a message
        assert memory.add([x], user_id="me", run_id="s") == again.add([x], user_id="me", run_id="s")
        assert conversation(memory) == conversation(again) and records(memory) == records(again)
    assert [labels for _, labels in conversation(memory)][:len(traced)] != traced  # the update moved a label


def test_the_open_turns_size_is_measured_a_line_once(monkeypatch):
    """live.over measures the open turn against its cap at each add: it wrote every line of the turn as JSON again
    (each add the whole turn's bytes); each line is now measured once as the add's and once as the turn's."""
    import json
    import types

    from sam_model.memory import live

    lines, written = session(12), [0]

    def dumps(x, **kw):
        out = json.dumps(x, **kw)
        written[0] += len(out)
        return out
    monkeypatch.setattr(live, "json", types.SimpleNamespace(dumps=dumps))
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines:
        memory.add([x], user_id="me", run_id="s")
    assert 0 < written[0] <= 2 * sum(len(json.dumps(x)) for x in lines)
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    assert records(memory) == records(whole)


def test_a_refused_add_leaves_the_lines_its_results_showed_out_of_the_conversation(tmp_path):
    """An add is fed into a copy of the scope's conversation (live.fork), kept apart when the add is refused; the lines
    each result showed (SHOWN_LINES, the tracker's ``shown``) were the scope's own list, so a refused add left its
    result's lines there, of an event the conversation does not hold: its save did not load, and the next event at
    that step would have been read as showing them."""
    def view(i: str) -> dict:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "view", "arguments": '{"path": "src/a.py"}'}}]}

    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "user", "content": "look at src/a.py"}, view("c1"),
                {"role": "tool", "tool_call_id": "c1", "content": "212: def f():", "shown_lines": {"src/a.py": [212]}}],
               user_id="me", run_id="s")
    before = [list(x) for x in memory._trackers["me//s"].shown]
    with pytest.raises(ValueError, match="carries tool_calls"):
        memory.add([view("c2"), {"role": "tool", "tool_call_id": "c2", "content": "300: x", "shown_lines": {"src/a.py": [300]}},
                    {"role": "user", "content": "y", "tool_calls": view("c3")["tool_calls"]}], user_id="me", run_id="s")
    assert memory._trackers["me//s"].shown == before
    memory.save(tmp_path / "m")
    assert ScopedMemory.load(tmp_path / "m", HashingEncoder(16))._trackers["me//s"].shown == before


@pytest.mark.parametrize("was, now", [(1, True), (1, 1.0), (0, False), ({"n": 1}, {"n": 1.0}), ([1], [True])])
def test_a_message_written_again_with_a_value_of_another_type_is_fed_again(was, now):
    """Gemini CLI writes a message again as its calls finish; written again with a call's argument changed from 1 to
    true (or 1.0), the line-by-line add stores it as the whole file's read does. The open turn's last read took the
    new message as the one it had fed (live.Read compared with ==, and 1 == 1.0 == True), so its memory kept
    ``limit=1`` where the whole file stores ``limit=true``."""
    from test_format_gemini_cli import call, gemini, header, user

    asked = call("c1", "read_file", {"absolute_path": "/work/app/m0.py", "limit": was}, None, "executing")
    done = call("c1", "read_file", {"absolute_path": "/work/app/m0.py", "limit": now}, "VALUE = 1")
    lines = [header(), user("m0", "read the first line of /work/app/m0.py"), gemini("m1", "", [asked]),
             gemini("m1", "", [done]), gemini("m2", "It says VALUE = 1.")]
    whole = ScopedMemory(HashingEncoder(16))
    whole.add(lines, user_id="me", run_id="s")
    by_line = ScopedMemory(HashingEncoder(16))
    for x in lines:
        by_line.add([x], user_id="me", run_id="s")
    assert stored(by_line) == stored(whole) and conversation(by_line) == conversation(whole)
    from sam_model.memory.live import alike

    assert not alike(asked["args"], done["args"]) and asked["args"] == done["args"]  # == alone took them as one
    assert alike(done, {**done}) and alike([{"a": [1.5, None]}], [{"a": [1.5, None]}])
    assert not alike({"a": 0.0}, {"a": -0.0}) and alike({"a": float("nan")}, {"a": float("nan")})
