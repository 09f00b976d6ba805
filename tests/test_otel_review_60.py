"""A hostile review of the OpenTelemetry GenAI reader's walkthrough fixes (12cd2ee..81c2417), with span shapes real
instrumentations write: a workflow span (semantic conventions' ``invoke_workflow``, which carries the run's input and
answer as an agent's span does), a guardrail's model call beside the agent's span under the server's span, an agent
called as a tool by another (its own history, no id of its own), a long history cut inside a message's text by the
attribute length limit, and a deep chain of spans. Each test but the guards failed before its fix."""

from __future__ import annotations

import json
import logging
import sys

from test_walkthrough_otel import CONV, TURN1, TURN2, attr, otlp, plain, read, text, turn

from sam_model.data.formats import base, otel

HELLO = [text("user", "Is this message safe to answer? Can I get a Visio licence?"), text("assistant", "SAFE")]
SUB = [text("user", "Which pool holds Visio licences for HR?"), text("assistant", "POOL-EU-VISIO-2")]


def span(trace: str, sid: str, parent: str, t: int, op: str, messages: list[dict] | None = None,
         conversation: str | None = None) -> dict:
    """A span of ``op``: with ``messages``, the first as its input and the rest as its output."""
    attrs = [attr("gen_ai.operation.name", op), *([attr(otel.CONVERSATION, conversation)] if conversation else [])]
    if messages:
        attrs += [attr(otel.INPUT, json.dumps(messages[:1])), attr(otel.OUTPUT, json.dumps(messages[1:]))]
    return {"traceId": trace, "spanId": sid, **({"parentSpanId": parent} if parent else {}),
            "startTimeUnixNano": str(t), "attributes": attrs}


def under(spans: list[dict], parent: str) -> list[dict]:
    """The turn's ``invoke_agent`` root moved below ``parent``."""
    for s in spans:
        if "parentSpanId" not in s:
            s["parentSpanId"] = parent
    return spans


def test_a_workflow_spans_turn_is_not_read_beside_its_model_calls(caplog):
    """An ``invoke_workflow`` span around the agent carries the turn's input and answer (the conventions' reference
    implementation sets both): read as a model call, it put the answer before the calls that made it, the user's
    message twice after it, with a 'repeats none' warning."""
    spans = [span("t1", "wf", "", 990, "invoke_workflow", [TURN1[0], TURN1[-1]]), *under(turn("t1", [], TURN1, 1000),
                                                                                        "wf")]
    with caplog.at_level(logging.WARNING):
        (conv,) = read(spans)
    assert conv.episode_id == CONV and plain(conv.messages) == TURN1
    assert "repeats none" not in caplog.text


def test_a_workflow_span_alone_is_still_read_in_its_conversation():
    """Guard: where no model call records content, the workflow's span is what the turn holds; it is read in the
    conversation its agent's span names."""
    spans = [span("t1", "wf", "", 990, "invoke_workflow", [TURN1[0], TURN1[-1]]),
             span("t1", "ag", "wf", 995, "invoke_agent", conversation=CONV)]
    (conv,) = read(spans)
    assert conv.episode_id == CONV and plain(conv.messages) == [TURN1[0], TURN1[-1]]


def test_a_guardrails_model_call_beside_the_agent_is_no_part_of_its_conversation(caplog):
    """The server's span holds a guardrail's chat call and the agent's ``invoke_agent`` span (with the id): the
    guardrail's ancestry is whole and names no id, but it took the trace's one id, and its words were read into
    the conversation (first, as it started first), the agent's first call a 'new segment' after them."""
    spans = [span("t1", "http", "", 900, "server"), span("t1", "guard", "http", 1001, "chat", HELLO),
             *under(turn("t1", [], TURN1, 1000), "http")]
    with caplog.at_level(logging.WARNING):
        convs = read(spans)
    by_id = {c.episode_id: plain(c.messages) for c in convs}
    assert by_id[CONV] == TURN1 and HELLO in by_id.values()
    assert "repeats none" not in caplog.text


def test_a_nested_agent_without_an_id_is_a_conversation_of_its_own(caplog):
    """An agent called as a tool by another (its own ``invoke_agent`` span below the outer one's, without the id)
    holds its own history: read under the outer agent's id, its call was a segment of the outer conversation."""
    spans = [*turn("t1", [], TURN1, 1000, chat_ids=True), span("t1", "sub", "t1-root", 1015, "invoke_agent"),
             span("t1", "sub-chat", "sub", 1016, "chat", SUB)]
    with caplog.at_level(logging.WARNING):
        convs = read(spans)
    by_id = {c.episode_id: plain(c.messages) for c in convs}
    assert by_id == {CONV: TURN1, "t1/sub": SUB}
    assert "repeats none" not in caplog.text


def test_a_nested_agent_with_the_id_stays_in_the_conversation():
    """Guard: a sub-agent whose span names the conversation (as Google ADK's sub-agents do, one session) is read
    in it, and an outer agent's id still reaches its chat spans through a nested span that is no agent's."""
    spans = [*turn("t1", [], TURN1, 1000), span("t1", "tool", "t1-root", 1012, "execute_tool"),
             span("t1", "sub", "tool", 1013, "invoke_agent", conversation=CONV),
             span("t1", "sub-chat", "sub", 1014, "chat", [*TURN1[:3], TURN1[3]])]
    (conv,) = read(spans)
    assert conv.episode_id == CONV and plain(conv.messages) == TURN1


def test_two_conversations_in_a_trace_are_never_mixed():
    """Guard: a trace holding two ids; a chat span whose parent was not read names neither, so it is read alone
    (its trace), not in either conversation."""
    spans = [*turn("t1", [], TURN1, 1000), span("t1", "b", "", 1500, "invoke_agent", conversation="other"),
             span("t1", "b-chat", "b", 1510, "chat", TURN2[:1] + TURN2[-1:]),
             span("t1", "lost", "not-exported", 1600, "chat", SUB)]
    by_id = {c.episode_id: plain(c.messages) for c in read(spans)}
    assert by_id == {CONV: TURN1, "other": TURN2[:1] + TURN2[-1:], "t1": SUB}


def test_a_parent_cycle_ends():
    """Guard: spans whose parents loop (made-up ids) are an ancestry not read whole: the trace's one id."""
    spans = [*turn("t1", [], TURN1, 1000), span("t1", "a", "b", 1500, "chat", TURN2[:1] + TURN2[-1:]),
             span("t1", "b", "a", 1501, "chain")]
    by_id = {c.episode_id: plain(c.messages) for c in read(spans)}
    assert list(by_id) == [CONV] and by_id[CONV][-2:] == TURN2[:1] + TURN2[-1:]


def test_a_history_cut_inside_a_message_text_is_named_so():
    """The limit cuts a long history inside a message's text, where json says 'Unterminated string starting at'
    the string's start: the hint (81c2417) asked for the error at the text's end and was not given."""
    history = json.dumps([text("user", "Please read this log: " + "x" * 5000)])[:4096]
    spans = [{"traceId": "t", "spanId": "s", "startTimeUnixNano": "1",
              "attributes": [attr("gen_ai.operation.name", "chat"), attr(otel.INPUT, history),
                             attr(otel.OUTPUT, json.dumps([text("assistant", "ok")]))]}]
    (err,) = otel.conversations([(otlp(spans), "t.json:1")], "t.json", str)
    assert isinstance(err, otel.TranscriptFormatError)
    assert "stops mid-JSON after 4096 characters" in str(err) and "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT" in str(err)
    for cut in ('[{"role": "user", "parts": [{"type": "text", "content": "a\\u00', '[{"role": "user", "x": tr'):
        assert base.cut_hint(_error(cut), cut, "messages"), cut
    assert not base.cut_hint(_error('[{"role": x}]'), '[{"role": x}]', "messages")  # a fault inside: no such guess


def _error(raw: str) -> json.JSONDecodeError:
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(raw)


def _lines_run(spans: list[dict]) -> tuple[list[otel.Conversation], int]:
    """The conversations of ``spans`` and how many lines of the reader's module ran to read them: its cost, counted,
    not timed (a count does not vary with the machine or its load)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        count += event == "line"
        return local

    before = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == otel.__file__ else None)
    try:
        return read(spans), count
    finally:
        sys.settrace(before)


def test_a_deep_chain_of_spans_is_walked_once():
    """Each span's ancestry was walked from the span up: a chain of spans each a child of the one before (a context
    never detached) was quadratic, 20,000 spans 228 s. Each span's answer is kept: twice the spans, twice the lines
    run (before: 3.8 times at 500 and 1,000 spans)."""
    said = [text("user", "hi"), text("assistant", "a")]

    def chain(n: int) -> list[dict]:
        return [span("d", f"s{i}", f"s{i - 1}" if i else "", i + 1, "chat", said) for i in range(n)]

    (short,), few = _lines_run(chain(500))
    (conv,), many = _lines_run(chain(1000))
    assert short.episode_id == conv.episode_id == "d" and len(conv.messages) == 2
    assert many < 2.5 * few, (few, many)  # linear: 2.0


def test_a_folder_of_zstd_exports_is_named_so(tmp_path, capsys):
    """The exporter's folder written with ``compression: zstd`` to ``path: ./file`` (81c2417 refuses one such file
    as zstd-compressed) was "a folder without ... OTLP JSON files", naming no compression."""
    from sam_model.data import transcripts
    from sam_model.io import ZSTD_MAGIC

    folder = tmp_path / "otel"
    folder.mkdir()
    line = json.dumps(otlp(turn("t1", [], TURN1, 1000))).encode()
    (folder / "file").write_bytes(len(line).to_bytes(4, "big") + ZSTD_MAGIC + b"\x00" * 16)
    assert transcripts.main([str(folder), str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "zstd-compressed" in err and "compression: zstd" in err and "a folder without" not in err


def test_a_malformed_agent_span_refuses_its_whole_conversation():
    """A malformed span's conversation is refused whole, 'rather than read without that span'; but where the
    malformed span was the ``invoke_agent`` span carrying the id, the chat spans below it (which take their id from
    it) were written as a conversation of their own, named by their trace."""
    spans = [*turn("t1", [], TURN1, 1000), *turn("t2", TURN1, TURN2, 2000)]
    for s in spans:
        if s["spanId"] == "t2-root":
            s["startTimeUnixNano"] = "soon"
    (err,) = otel.conversations([(otlp(spans), "t.json:1")], "t.json", str)
    assert isinstance(err, otel.TranscriptFormatError), err
    assert f"conversation {CONV}" in str(err) and "refused whole" in str(err) and "span t2-root" in str(err)


def test_a_nested_agent_run_named_without_an_operation_is_a_conversation_of_its_own(caplog):
    """Pydantic AI before its invoke_agent operation name wrote an agent's run span with gen_ai.agent.name alone
    (and agent_name): an agent called as a tool by another, so written, was no agent to the reader, which knew
    agents by invoke_agent only, and its calls were read into the outer conversation as a new segment (with the
    'repeats none' warning). A span naming an agent without an operation name or messages is a run; one whose
    parent names the same agent (its baggage stamped on a span below it, as a baggage span processor copies
    Pydantic AI's gen_ai.agent.name) is not, so a tool's own model call stays the outer conversation's."""
    def run_of(sid: str, parent: str, t: int, agent: str) -> dict:
        return {"traceId": "t1", "spanId": sid, "parentSpanId": parent, "startTimeUnixNano": str(t),
                "attributes": [attr("agent_name", agent), attr("gen_ai.agent.name", agent)]}

    outer = turn("t1", [], TURN1, 1000, chat_ids=True)
    next(s for s in outer if s["spanId"] == "t1-root")["attributes"].append(attr("gen_ai.agent.name", "helpdesk"))
    spans = [*outer, run_of("tools", "t1-root", 1014, "helpdesk"), run_of("sub", "tools", 1015, "researcher"),
             span("t1", "sub-chat", "sub", 1016, "chat", SUB)]
    with caplog.at_level(logging.WARNING):
        convs = read(spans)
    assert {c.episode_id: plain(c.messages) for c in convs} == {CONV: TURN1, "t1/sub": SUB}
    assert "repeats none" not in caplog.text
    direct = [*outer, run_of("tools", "t1-root", 1014, "helpdesk"), span("t1", "tool-chat", "tools", 1016, "chat", SUB)]
    assert {c.episode_id for c in read(direct)} == {CONV}  # a tool's own call under the baggage-stamped span
