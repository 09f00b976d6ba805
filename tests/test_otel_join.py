"""The OpenTelemetry reader joins an agent's model calls into one conversation although each call's input repeats the
history: when the agent rewrites the start of that history between calls (a compaction summary, a sliding window
that keeps its system prompt), every message is still read once, none is dropped, tool results keep their calls,
and labels point at the events that first said a value, not at copies."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from sam_model.data.formats import history, otel
from sam_model.data.transcripts import ImportReport, iter_transcript_events

USER_ID, RES = "ann_lee_123", "QX7Z9A"
text = lambda role, t: {"role": role, "parts": [{"type": "text", "content": t}]}  # noqa: E731
call = lambda i, n, a: {"role": "assistant", "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a}]}  # noqa: E731
result = lambda i, r: {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": r}]}  # noqa: E731

SYS = text("system", "You are an airline agent.")
U0 = text("user", f"Hi, my user id is {USER_ID}.")
A0 = call("c1", "get_user", {"user_id": USER_ID})
T0 = result("c1", json.dumps({"name": "Ann", "reservations": [RES]}))
A1 = text("assistant", f"I see reservation {RES}. Cancel it?")
U1 = text("user", "yes please")
A2 = call("c2", "cancel", {"reservation_id": RES, "user_id": USER_ID})
T2 = result("c2", f"Error: reservation {RES} is already cancelled")
A3 = text("assistant", "Sorry, it was cancelled already. Anything else?")
U2 = text("user", "yes please")  # the same words as U1, said again: a message of its own
A4 = call("c3", "get_user", {"user_id": USER_ID})
HISTORY = [U0, A0, T0, A1, U1, A2, T2, A3, U2, A4]


def finished(m: dict) -> dict:
    """An output message as the conventions write it (its repeat in the next input lacks finish_reason)."""
    return {**m, "finish_reason": "tool_call" if m["parts"][0]["type"] == "tool_call" else "stop"}


def doc(calls: list[tuple[list[dict], list[dict]]], trace: str = "t1", conversation: str | None = None,
        start: int = 1000, step: int = 1) -> dict:
    """One chat span per model call ``(input, output)``, in the file last first, as exporters write them."""
    attr = lambda k, v: {"key": k, "value": {"stringValue": v}}  # noqa: E731
    spans = [{"traceId": trace, "spanId": f"{trace}-s{n}", "startTimeUnixNano": str(start + step * n),
              "attributes": [attr("gen_ai.operation.name", "chat"),
                             *([attr("gen_ai.conversation.id", conversation)] if conversation else []),
                             attr("gen_ai.input.messages", json.dumps(inp)),
                             attr("gen_ai.output.messages", json.dumps([finished(m) for m in out]))]}
             for n, (inp, out) in enumerate(calls)]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans[::-1]}]}]}


def full_history(history: list[dict], head: list[dict] = ()) -> list[tuple[list[dict], list[dict]]]:
    """The calls of an agent that repeats its whole history: one per assistant message."""
    return [([*head, *history[:i]], [m]) for i, m in enumerate(history) if m["role"] == "assistant"]


def read(*docs: dict) -> list[otel.Conversation]:
    out = list(otel.conversations([(d, f"t.json:{n + 1}") for n, d in enumerate(docs)], "t.json", str))
    assert all(isinstance(c, otel.Conversation) for c in out), out
    return out


def plain(messages: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if k != "finish_reason"} for m in messages]


def events(path: Path) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in ("episode_id", "meta")} for e in iter_transcript_events(path)]


def same_events(tmp_path: Path, otlp: dict, messages: list[dict]) -> list[dict]:
    """The events of the OTLP file, checked equal to those of ``messages`` given whole as one conversation."""
    (tmp_path / "t.json").write_text(json.dumps(otlp))
    (tmp_path / "whole.jsonl").write_text(json.dumps({"id": "t1", "messages": messages}) + "\n")
    got = events(tmp_path / "t.json")
    assert got == events(tmp_path / "whole.jsonl")
    return got


def test_a_history_repeated_unchanged_is_read_once():
    (conv,) = read(doc(full_history(HISTORY, [SYS])))
    assert plain(conv.messages) == [SYS, *HISTORY]


def test_a_compaction_summary_is_read_once_where_it_was_written_and_nothing_is_copied(tmp_path):
    """The agent replaced its first turns by a summary before the cancel: the join found no overlap (the input no
    longer starts with the history's end) and wrote the history again, copies of the calls and their labels."""
    summary = text("user", f"Summary so far: user {USER_ID} asked about reservation {RES}.")
    kept = HISTORY.index(A1)  # the turns before A1 are summarised
    calls = [(inp if len(inp) <= kept + 1 else [SYS, summary, *inp[kept + 1:]], out)
             for inp, out in full_history(HISTORY, [SYS])]
    (conv,) = read(doc(calls))
    want = [SYS, U0, A0, T0, A1, summary, U1, A2, T2, A3, U2, A4]  # the summary after the last call before it
    assert plain(conv.messages) == want
    got = same_events(tmp_path, doc(calls), want)
    cancel = got[next(i for i, e in enumerate(got) if e["kind"] == "action" and "cancel" in e["text"]) - 1]
    said = {e["step"]: e["text"] for e in got}
    # the user id and the reservation are traced to the turns that first said them, not to the summary
    assert all(USER_ID in said[s] or RES in said[s] for s in cancel["useful_memory_steps"])
    assert said[cancel["useful_memory_steps"][0]] == f"Hi, my user id is {USER_ID}."
    assert not any(said[s].startswith("Summary") for s in cancel["useful_memory_steps"])
    assert sum(e["kind"] == "action" for e in got) == 3  # three calls made, three written


def test_a_system_summary_and_a_sliding_window_that_keeps_the_system_prompt(tmp_path):
    """A window of the last turns after the system prompt (the commonest trim) cut between a tool call and its
    result, and a summary as a system message: each message once, the result still named by its call's id."""
    summary = text("system", "Earlier: the user asked to cancel a reservation.")
    calls = []
    for inp, out in full_history(HISTORY, [SYS]):
        window = inp[1:][-3:]  # the last three messages: A0's result T0 may start it without A0
        calls.append(([SYS, *([summary] if len(inp) > 5 else []), *window], out))
    assert calls[2][0][2] == T0  # the window starts with a result whose call it dropped
    (conv,) = read(doc(calls))
    want = [SYS, U0, A0, T0, A1, summary, U1, A2, T2, A3, U2, A4]
    assert plain(conv.messages) == want
    report = ImportReport()
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc(calls)))
    got = list(iter_transcript_events(path, report=report))
    assert report.unmatched_results == [] and report.calls == 3
    assert [e["text"].split(":")[0] for e in got if e["kind"] == "result"] == ["get_user", "cancel"]
    assert [e["text"] for e in got if e["kind"] == "user"] == [f"Hi, my user id is {USER_ID}.", "yes please",
                                                                "yes please"]


def test_a_summary_that_is_the_only_earlier_event_saying_a_value_is_its_label(tmp_path):
    """The trace starts after a compaction: the summary is the one event that said the user id, so it is the
    label (the reservation is in the turn the call answers: an observation, no label)."""
    summary = text("user", f"Summary so far: the user's id is {USER_ID}.")
    ask = text("user", f"Cancel {RES}.")
    calls = [([SYS, summary, ask], [A2]), ([SYS, summary, ask, A2, T2], [A3])]
    got = same_events(tmp_path, doc(calls), [SYS, summary, ask, A2, T2, A3])
    cancel = next(e for e in got if e.get("useful_memory_steps"))
    said = {e["step"]: e["text"] for e in got}
    assert [said[s] for s in cancel["useful_memory_steps"]] == [summary["parts"][0]["content"]]


def test_two_parallel_traces(caplog):
    """Two agents' traces interleaved in one file: one conversation each, read as if alone. Under one conversation
    id they are one conversation, every message once; the call that shares no message with it is warned about."""
    other = [text("user", "Book me a flight to Oslo."), call("d1", "search", {"to": "Oslo"}),
             result("d1", "[\"SK123\"]"), text("assistant", "SK123 it is.")]
    a, b = full_history(HISTORY, [SYS]), full_history(other)
    convs = read(doc(a, "ta", start=1000, step=10), doc(b, "tb", start=1005, step=10))
    assert [plain(c.messages) for c in convs] == [[SYS, *HISTORY], other]
    with caplog.at_level(logging.WARNING, logger=otel.__name__):
        (conv,) = read(doc(a, "ta", "same", start=1000, step=10), doc(b, "tb", "same", start=1005, step=10))
    got = plain(conv.messages)
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, [SYS, *HISTORY, *other]))
    assert [m for m in got if m in HISTORY + [SYS]] == [SYS, *HISTORY] and [m for m in got if m in other] == other
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "t.json:2, span tb-s0" in warning and "conversation same" in warning and "new segment" in warning


def test_the_same_call_recorded_twice_and_a_call_without_output():
    """Two instrumentations record one model call (two spans, same messages); a call that failed has no output
    and is retried: nothing is read twice."""
    calls = full_history(HISTORY, [SYS])
    twice = [c for c in calls for _ in (0, 1)]
    (conv,) = read(doc(twice))
    assert plain(conv.messages) == [SYS, *HISTORY]
    failed = [*calls[:2], (calls[2][0], []), *calls[2:]]
    (conv,) = read(doc(failed))
    assert plain(conv.messages) == [SYS, *HISTORY]


NUDGE = text("user", "Please answer with a tool call.")
SUMMARY = text("user", f"Summary so far: user {USER_ID} asked to cancel {RES}; it was cancelled already.")


def test_words_said_again_after_a_compaction_that_kept_no_turn_are_read(tmp_path):
    """The agent summarised its whole history and sent the summary with the new turn, "yes please", which U1 said
    before: the join anchored the call at U1 (the latest message it repeated) and read the new turn as that old
    one, so it was lost."""
    calls = [*full_history(HISTORY[:-2], [SYS]), ([SYS, SUMMARY, U2], [A4])]
    want = [SYS, *HISTORY[:-2], SUMMARY, U2, A4]
    (conv,) = read(doc(calls))
    assert plain(conv.messages) == want
    got = same_events(tmp_path, doc(calls), want)
    assert [e["text"] for e in got if e["kind"] == "user"][-2:] == [SUMMARY["parts"][0]["content"], "yes please"]


def test_a_retry_whose_rejected_output_repeated_an_earlier_message_copies_no_turn():
    """The model answered U1 with A1's words again; the agent dropped that output and asked again with a nudge.
    The join anchored at the dropped output (the latest message the input seemed to repeat, as A1) and read U1, the
    turn after A1 in the input, a second time."""
    before_cancel = [SYS, U0, A0, T0, A1, U1]
    calls = [*full_history(HISTORY[:4], [SYS]), (before_cancel, [A1]), ([*before_cancel, NUDGE], [A2]),
             ([*before_cancel, NUDGE, A2, T2], [A3])]
    (conv,) = read(doc(calls))
    assert plain(conv.messages) == [*before_cancel, A1, NUDGE, A2, T2, A3]  # the model did say A1's words again


def test_two_traces_under_one_conversation_id_that_say_the_same_words_keep_both():
    """Both traces' users said "yes please": the second trace's turn followed the first trace's "yes please" in the
    joined conversation, so it was taken for a call recorded twice and dropped."""
    other = [text("user", "Book me a flight to Oslo."), text("assistant", "SK123: book it?"), U1,
             call("d1", "book", {"flight": "SK123"}), result("d1", "booked"), text("assistant", "Booked.")]
    a, b = full_history(HISTORY, [SYS]), full_history(other, [SYS])
    (conv,) = read(doc(a, "ta", "same", start=1000, step=10), doc(b, "tb", "same", start=1005, step=10))
    got = plain(conv.messages)
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, [SYS, *HISTORY, *other]))


def test_a_window_of_the_latest_message_after_the_system_prompt_is_read_once():
    """Each call sends the system prompt, the previous output and the new message only: the previous output follows
    the system prompt, not the message it followed when it was read, and is still the call's anchor (not copied)."""
    calls = [(inp if len(inp) <= 2 else [SYS, *inp[-2:]], out) for inp, out in full_history(HISTORY, [SYS])]
    assert calls[1][0] == [SYS, A0, T0]
    (conv,) = read(doc(calls))
    assert plain(conv.messages) == [SYS, *HISTORY]


def test_a_log_cached_before_the_join_changed_is_converted_again(tmp_path, monkeypatch):
    """train.py and evaluate.py convert a transcript once into the cache, keyed by CONVERSION_VERSION: the join's
    changes (finish_reason, compaction, words said twice) came without a new version, so a file converted before them
    kept its old conversion (this history, 10 events, was 30: the history again after every call)."""
    from sam_model.data import sources

    path = tmp_path / "traces.json"
    path.write_text(json.dumps(doc(full_history(HISTORY))))
    monkeypatch.setattr(sources, "CONVERSION_VERSION", 4)  # the version the earlier join wrote its logs under
    old = sources.materialise(path, cache_dir=tmp_path / "cache")
    old.write_text("{}\n" * 30)  # what it wrote there
    monkeypatch.undo()
    new = sources.materialise(path, cache_dir=tmp_path / "cache")
    assert new != old and len(new.read_text().splitlines()) == 10


def long_trace(n: int, window: int | None = None) -> tuple[dict, list[dict]]:
    """An agent's n model calls, each sending the history so far (the system prompt and, given ``window``, its
    latest messages alone): a call, its tool's result, and so on; the document and the history read whole."""
    history, calls = [SYS, U0], []
    for i in range(n):
        out = call(f"c{i}", "search", {"q": i})
        calls.append((history if window is None else [SYS, *history[1:][-window:]], [out]))
        history = [*history, out, result(f"c{i}", f"r{i}")]
    return doc(calls), history[:-1]


def test_a_long_traces_messages_are_keyed_once_not_at_every_repeat(monkeypatch):
    """Each call's input repeats the history: every message of every input was keyed again (a JSON text of its
    sorted keys), so a trace of n calls did n^2 messages' work (2,000 calls: 4,002,000 keys, 84 s). Counted, not
    timed: a key or so per message of the conversation, what an input repeats of the previous one taken from that
    one's reading (history.Inputs, the Langfuse reader's)."""
    made = []
    key = otel._key
    monkeypatch.setattr(otel, "_key", lambda m: made.append(1) or key(m))
    spans, history = long_trace(300)
    (conv,) = read(spans)
    assert plain(conv.messages) == history and len(history) == 601
    assert len(made) <= 2 * len(history)


@pytest.mark.parametrize("window", [None, 3, 4])
def test_an_input_read_from_the_previous_ones_reading_reads_as_read_whole(window, monkeypatch):
    """Guard: taking what an input repeats of the previous one from that one's reading changes nothing read, a
    window over the history (its start differs at each call) too."""
    spans, _ = long_trace(12, window)
    kept = read(spans)
    monkeypatch.setattr(history.Inputs, "messages", lambda self, raw: list(raw))
    whole = read(spans)
    assert [c.messages for c in kept] == [c.messages for c in whole] and len(kept[0].messages) == 1 + 2 * 12


@pytest.mark.parametrize("changed", [True, 1.0])
def test_an_input_that_changes_a_number_to_an_equal_one_of_another_type_is_read_as_given(changed, monkeypatch):
    """Guard: Python's == holds 1, 1.0 and true equal; an input whose message changed one for another at the same
    place is read as the file says, not taken from the previous input's reading (compared as JSON text)."""
    first = [SYS, {**U0, "score": 1}]
    second = [SYS, {**U0, "score": changed}, A1, U1]
    spans = doc([(first, [A1]), (second, [text("assistant", "Done.")])])
    kept = read(spans)
    monkeypatch.setattr(history.Inputs, "messages", lambda self, raw: list(raw))
    whole = read(spans)
    assert json.dumps([c.messages for c in kept]) == json.dumps([c.messages for c in whole])
    assert any(type(m.get("score")) is type(changed) for c in kept for m in c.messages)


def two_agents(n: int, shared: bool) -> tuple[dict, dict]:
    """Two agents' n model calls each, interleaved under one conversation id, each its own trace and history (each
    call sending it whole); ``shared``: both start with one system prompt."""
    docs = []
    for k, (who, ask) in enumerate((("a", U0), ("b", text("user", "Book me SK123.")))):
        head = SYS if shared or not k else text("system", "You book flights.")
        history, calls = [head, ask], []
        for i in range(n):
            out = call(f"{who}{i}", "search", {"q": i})
            calls.append((history, [out]))
            history = [*history, out, result(f"{who}{i}", f"{who}r{i}")]
        docs.append(doc(calls, trace=f"t{who}", conversation="conv", start=1000 + k, step=2))
    return docs[0], docs[1]


@pytest.mark.parametrize("shared", [False, True])
def test_two_agents_interleaved_under_one_id_key_each_message_once(shared, monkeypatch):
    """Two agents' calls interleaved under one conversation id: what an input repeats was taken from the previous
    input's reading alone, another agent's, so every input was read and keyed whole (1,000 calls: some 40 of 147 s).
    Counted, not timed: the readings of both histories are kept, a key or so per message of the conversation; what
    is read is what reading each input whole gives, byte for byte."""
    made = []
    key = otel._key
    monkeypatch.setattr(otel, "_key", lambda m: made.append(1) or key(m))
    (conv,) = read(*two_agents(150, shared))
    assert len(conv.messages) == 2 * (1 + 2 * 150) - shared
    assert len(made) <= 2 * len(conv.messages), len(made)
    monkeypatch.setattr(otel, "_key", key)
    monkeypatch.setattr(history.Inputs, "messages", lambda self, raw: list(raw))
    (whole,) = read(*two_agents(150, shared))
    assert json.dumps(conv.messages) == json.dumps(whole.messages)


def _agents(rng, n: int) -> list[dict]:
    """``n`` agents' calls under one conversation id, each its own trace, interleaved at random: most share one
    system prompt (some open with it alone, a greeting), some windows (the prompt, a summary, the last two messages),
    some retries (a call sent again, another answer)."""
    docs = []
    for a in range(n):
        head = [SYS] if rng.random() < 0.7 else [text("system", f"You are agent {a}.")]
        hist, calls = list(head) if rng.random() < 0.4 else [*head, text("user", f"q{a}")], []
        for i in range(rng.randint(1, 4)):
            if rng.random() < 0.5 and hist[-1]["role"] != "system":
                out = call(f"{a}-{i}", "f", {"x": i})
                if rng.random() < 0.15:  # a retry of that call, its answer another
                    calls.append((list(hist), [call(f"{a}-{i}x", "f", {"x": -i})]))
                calls.append((list(hist), [out]))
                hist += [out, result(f"{a}-{i}", f"r{a}{i}")]
            else:
                out = text("assistant", f"answer {a}.{i}")
                calls.append((list(hist), [out]))
                hist += [out, text("user", f"u{a}.{i}")]
            if rng.random() < 0.15 and len(hist) > 4:
                hist = [hist[0], text("user", f"Summary {a}."), *hist[-2:]]
        d = doc(calls, trace=f"t{a}", conversation="conv")
        for s, t in zip(d["resourceSpans"][0]["scopeSpans"][0]["spans"][::-1], sorted(rng.sample(range(60), len(calls)))):
            s["startTimeUnixNano"] = str(1000 + t)
        docs.append(d)
    return docs


def _hidden(d: dict) -> dict:
    """The spans as OPENINFERENCE_HIDE_OUTPUTS writes them: LLM spans, output.value __REDACTED__, no output."""
    d = json.loads(json.dumps(d))
    for s in d["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        s["attributes"] = [a for a in s["attributes"] if a["key"] != "gen_ai.output.messages"] + [
            {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
            {"key": "output.value", "value": {"stringValue": "__REDACTED__"}}]
    return d


def test_the_answers_counted_missing_are_those_the_hidden_reading_lacks(caplog):
    """Agents interleaved under one conversation id, outputs hidden: the warning's count of answers no later input
    repeats is the number of messages the recorded reading holds and the hidden one lacks, and the hidden reading
    holds nothing the recorded one does not. Over 300 random interleavings (shared prompts, greetings, windows,
    retries) 37 counts differed until the review of 2026-12-07 (another agent's call of the same input counted a
    retry; a window at the prompt where another agent's answer waited not read as one)."""
    import random
    from collections import Counter

    wrong = []
    for seed in range(300):
        docs = _agents(random.Random(seed), random.Random(seed + 1000).randint(2, 4))
        whole = Counter(otel._key(m) for c in read(*docs) for m in c.messages)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            hidden = Counter(otel._key(m) for c in read(*map(_hidden, docs)) for m in c.messages)
        said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
        found = re.search(r"; (\d+) such answers?, repeated by no later input", said[0]) if said else None
        if not found or int(found[1]) != (whole - hidden).total() or hidden - whole:
            wrong.append(seed)
    assert not wrong, wrong
