"""OpenInference spans (Arize Phoenix and every OpenInference instrumentation) are read by the ``otel`` reader, told
by their attributes: the real OpenAI instrumentation's spans of a tool-calling agent (tests/fixtures/
openinference_scripted.py wrote them) give a decision point whose argument is traced to the first tool's result, a
TOOL span's error flags its call's result, and the same runs dual-written with the GenAI attributes read the same.
The conversation of tests/test_formats.py written as OpenInference spans gives the same agent-log lines as every
other format. A span the reader cannot read whole is refused in one line naming the file, span and attribute."""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
from pathlib import Path

import pytest
from test_formats import openai_messages

from sam_model.data.formats import base, otel
from sam_model.data.formats.base import TranscriptFormatError
from sam_model.data.transcripts import ImportReport, iter_transcript_events

FIXTURES = Path(__file__).parent / "fixtures"
SPANS, DUAL = FIXTURES / "openinference_spans.jsonl", FIXTURES / "openinference_genai_spans.jsonl"
HIDDEN = FIXTURES / "openinference_hidden_spans.jsonl"  # OPENINFERENCE_HIDE_INPUT_MESSAGES and _OUTPUT_MESSAGES
DUAL_HIDDEN = FIXTURES / "openinference_genai_hidden_spans.jsonl"  # the GenAI attributes too, input messages hidden
OUTPUTS_HIDDEN = FIXTURES / "openinference_outputs_hidden_spans.jsonl"  # OPENINFERENCE_HIDE_OUTPUTS
DUAL_OUTPUTS_HIDDEN = FIXTURES / "openinference_genai_outputs_hidden_spans.jsonl"  # and the GenAI attributes too
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "logs" / "openinference-traces.json"


def attr(key: str, v) -> dict:
    return {"key": key, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}


def flattened(prefix: str, messages: list[dict]) -> list[dict]:
    """OpenAI chat messages as OpenInference writes them (openinference-instrumentation's _attributes.py)."""
    out = []
    for i, m in enumerate(messages):
        at = f"{prefix}.{i}.message."
        out.append(attr(f"{at}role", m["role"]))
        if m.get("content") is not None:
            out.append(attr(f"{at}content", m["content"]))
        if "tool_call_id" in m:
            out.append(attr(f"{at}tool_call_id", m["tool_call_id"]))
        for j, c in enumerate(m.get("tool_calls") or ()):
            out += [attr(f"{at}tool_calls.{j}.tool_call.id", c["id"]),
                    attr(f"{at}tool_calls.{j}.tool_call.function.name", c["function"]["name"]),
                    attr(f"{at}tool_calls.{j}.tool_call.function.arguments", c["function"]["arguments"])]
    return out


def openinference_spans(messages: list[dict], session: str = "conv-1") -> dict:
    """The spans the OpenAI instrumentation and an agent's TOOL spans export of one conversation: an LLM span per
    model call (its input the history so far), a TOOL span per call stamped with its id; the file's spans last
    first, as a batch exporter writes them."""
    spans, t = [], 1000
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            spans.append({"traceId": "5b8aa5a2d2c872e8321cf37308d69df2", "spanId": f"{len(spans):016x}",
                          "parentSpanId": "", "name": "ChatCompletion", "kind": 1, "startTimeUnixNano": str(t),
                          "endTimeUnixNano": str(t + 5), "status": {"code": 1}, "attributes": [
                              attr("openinference.span.kind", "LLM"), attr("session.id", session),
                              attr("llm.model_name", "gpt-4o"), *flattened("llm.input_messages", messages[:i]),
                              *flattened("llm.output_messages", [m])]})
            for c in m.get("tool_calls") or ():
                spans.append({"traceId": "5b8aa5a2d2c872e8321cf37308d69df2", "spanId": f"{len(spans):016x}",
                              "name": c["function"]["name"], "kind": 1, "startTimeUnixNano": str(t + 6),
                              "endTimeUnixNano": str(t + 7), "status": {"code": 1}, "attributes": [
                                  attr("openinference.span.kind", "TOOL"), attr("session.id", session),
                                  attr("tool.name", c["function"]["name"]), attr("tool_call.id", c["id"])]})
            t += 10
    return {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "agent")]}, "scopeSpans": [
        {"scope": {"name": "openinference.instrumentation.openai"}, "spans": spans[::-1]}]}]}


def events(path: Path, **kw) -> list[dict]:
    return list(iter_transcript_events(path, **kw))


def read(doc: dict, path: str = "spans.json") -> list:
    return list(otel.conversations([(doc, path)], path, str))


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_real_openinference_spans_trace_the_second_calls_argument_to_the_first_tools_result():
    report = ImportReport()
    got = events(SPANS, report=report)
    assert report.formats == {"otel": 2}
    lookup = [e for e in got if e["episode_id"] == "lookup"]  # by session.id, each run a conversation
    assert [e["kind"] for e in lookup] == ["user", "action", "action", "result", "result", "action", "result",
                                           "system"]
    assert [e["text"] for e in lookup if e["kind"] == "action"] == [
        "CALL find_customer(name=Ann Lee)", "CALL carrier_status(city=Lyon)", "CALL list_orders(customer_id=C-48213)"]
    found = next(e for e in lookup if e["kind"] == "result" and e["text"].startswith("find_customer:"))
    decision = [e for e in lookup if "useful_memory_steps" in e]
    assert len(decision) == 1 and decision[0]["useful_memory_steps"] == [found["step"]]
    assert decision[0]["meta"] == {"needed": {"customer_id": ["c-48213"]}}
    assert lookup[-1]["text"] == "Your order NW-7731 has shipped."


def test_a_tool_spans_error_flags_its_calls_result():
    """The refund TOOL span ended in an error (status 2): its call's result is flagged, as an execute_tool span's
    is; the lookup's calls, whose spans ended well, are not."""
    docs = lines(SPANS)
    got = {c.episode_id: c for c in read(docs[0])}
    assert got["refund"].failed_calls == frozenset({"call_refund_1"})
    assert got["lookup"].failed_calls == frozenset()
    for span in _spans(docs[0]):
        span.pop("status", None)
    assert {c.episode_id: c.failed_calls for c in read(docs[0])} == {"lookup": frozenset(), "refund": frozenset()}


def _spans(doc: dict) -> list[dict]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_dual_written_spans_read_as_the_openinference_ones(tmp_path):
    """With enable_genai_semconv the instrumentation writes the GenAI attributes beside its own: read once, the
    same events as its OpenInference attributes alone give."""
    assert any(a["key"] == "gen_ai.input.messages" for s in _spans(lines(DUAL)[0]) for a in s["attributes"])
    assert events(DUAL) == events(SPANS)


def test_without_session_id_each_trace_is_a_conversation(tmp_path):
    doc = lines(SPANS)[0]
    for span in _spans(doc):
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "session.id"]
    (path := tmp_path / "spans.json").write_text(json.dumps(doc))
    traces = sorted({s["traceId"] for s in _spans(doc)})
    got = events(path)
    assert sorted({e["episode_id"] for e in got}) == traces
    assert [{**e, "episode_id": ""} for e in got if e["episode_id"] == got[0]["episode_id"]] == [
        {**e, "episode_id": ""} for e in events(SPANS) if e["episode_id"] == "lookup"]


def test_the_conversation_of_every_format_reads_as_openai(tmp_path):
    """tests/test_formats.py's conversation, as OpenInference spans (examples/logs/openinference-traces.json),
    gives the agent-log lines of its OpenAI file."""
    (openai := tmp_path / "openai.jsonl").write_text(json.dumps({"id": "conv-1", "messages": openai_messages()}))
    doc = openinference_spans(openai_messages())
    assert json.loads(EXAMPLE.read_text()) == doc, f"regenerate {EXAMPLE} from openinference_spans(openai_messages())"
    report = ImportReport()
    assert events(EXAMPLE, report=report) == events(openai)
    assert report.formats == {"otel": 1}


def test_spans_of_both_families_and_others_in_one_file(tmp_path):
    """A collector exports both families in one file: each conversation read by its own attributes; a span of
    neither (an HTTP client's) is passed over, as among GenAI spans."""
    from test_formats import genai_messages, otlp

    genai = otlp(genai_messages(), "genai-1")
    doc = openinference_spans(openai_messages(), "oi-1")
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] += [
        *_spans(genai), {"traceId": "ff", "spanId": "http", "name": "POST", "attributes": [
            attr("http.request.method", "POST"), attr("url.full", "https://api.openai.test/v1")]}]
    (path := tmp_path / "mixed.json").write_text(json.dumps(doc))
    got = events(path)
    one = lambda eid: [{**e, "episode_id": ""} for e in got if e["episode_id"] == eid]  # noqa: E731
    assert one("oi-1") == one("genai-1") != []


def _with(doc: dict, key: str, value=None, drop: bool = False) -> dict:
    """``doc`` with attribute ``key`` of its last model call set to ``value`` (or dropped)."""
    doc = copy.deepcopy(doc)
    for span in [_last_call(doc)]:
        span["attributes"] = [a if a["key"] != key else attr(key, value) for a in span["attributes"]
                              if not (drop and a["key"] == key)]
    return doc


def _last_call(doc: dict) -> dict:
    return max((s for s in _spans(doc) if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))


def _error(doc: dict) -> str:
    errs = [c for c in read(doc, "run.jsonl") if isinstance(c, TranscriptFormatError)]
    assert len(errs) == 1, errs
    assert "\n" not in str(errs[0])
    return str(errs[0])


@pytest.mark.parametrize("key,value,says", [
    ("llm.input_messages.2.message.tool_calls.0.tool_call.id", None,
     "llm.input_messages.2.message.tool_calls.0.tool_call.id is missing: a tool call without an id"),
    ("llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments", '{"user_id": "ann_l',
     "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments is not JSON (Unterminated string "
     "starting at: line 1 column 13 (char 12)); it stops mid-JSON after 18 characters: cut by an attribute length "
     "limit"),
    ("llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments", "user_id=ann_lee_123",
     "tool_call.function.arguments is not JSON (Expecting value: line 1 column 1 (char 0)): the conventions write"),
    ("llm.input_messages.1.message.role", None, "llm.input_messages.1.message.role is missing"),
    ("llm.input_messages.4.message.role", "chatbot",
     "llm.input_messages.4.message.role 'chatbot' is not a role the reader knows (one of agent, ai, assistant, "
     "developer, function, human, model, system, tool, user)"),
    ("llm.input_messages.3.message.tool_call_id", None,
     "llm.input_messages.3.message.tool_call_id is missing: a tool result that names no call"),
])
def test_a_span_not_read_whole_is_refused_naming_file_span_and_attribute(key, value, says):
    err = _error(_with(openinference_spans(openai_messages()), key, value, drop=value is None))
    assert err.startswith("run.jsonl: conversation conv-1: ") and says in err
    assert "in run.jsonl, span " in err and "the conversation is refused whole" in err


def test_cut_arguments_and_cut_messages_name_one_cause():
    """A call's arguments cut at the attribute length limit say what a cut GenAI messages attribute says (one
    cut_hint): the SDK's limit and a collector's truncating processor, and which attributes' limit to raise."""
    key = "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments"
    err = _error(_with(openinference_spans(openai_messages()), key, '{"user_id": "ann_l'))
    cut = '[{"role": "user", "parts": [{"type": "text", "content": "ab'
    try:
        json.loads(cut)
    except json.JSONDecodeError as exc:
        genai = base.cut_hint(exc, cut, "a call's arguments")
    assert genai.replace(f"after {len(cut)} ", "after 18 ") in err
    assert "a collector processor that truncates attributes" in err


def test_an_index_gap_is_refused_and_dropped_attributes_named():
    """A message index missing (the plain SDK keeps 128 attributes a span, dropping the oldest first: the
    history's first messages) is refused, the span's droppedAttributesCount named where it has one."""
    doc = openinference_spans(openai_messages())
    last = _last_call(doc)
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.1.")]
    err = _error(doc)
    assert f"span {last['spanId']}" in err
    assert "llm.input_messages.1.* is missing (the span has llm.input_messages.7.*)" in err
    assert "dropped" not in err
    last["droppedAttributesCount"] = 2
    assert "the span dropped 2 attributes" in _error(doc) and "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" in _error(doc)


def _scripted():
    spec = importlib.util.spec_from_file_location("openinference_scripted", FIXTURES / "openinference_scripted.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(importlib.util.find_spec("openinference") is None
                    or importlib.util.find_spec("openinference.instrumentation.openai") is None,
                    reason="openinference-instrumentation-openai is not installed (the fixture's side venv: see "
                           "tests/fixtures/openinference_scripted.py)")
@pytest.mark.parametrize("kw,fixture", [({}, SPANS), ({"dual": True}, DUAL),
                                        ({"max_attributes": 30}, FIXTURES / "openinference_limited_spans.jsonl"),
                                        ({"hide": ("hide_input_messages", "hide_output_messages")}, HIDDEN),
                                        ({"dual": True, "hide": ("hide_input_messages",)}, DUAL_HIDDEN),
                                        ({"hide": ("hide_outputs",)}, OUTPUTS_HIDDEN),
                                        ({"dual": True, "hide": ("hide_outputs",)}, DUAL_OUTPUTS_HIDDEN)])
def test_live_spans_read_as_the_fixture(kw, fixture, tmp_path):
    """The installed instrumentation's spans of the scripted runs, now, read as the checked-in fixture's (the same
    conversations, the same errors but for the file's name)."""
    (path := tmp_path / "live.jsonl").write_text(json.dumps(_scripted().export(**kw)) + "\n")
    said = lambda p: [str(c).replace(str(p), "F").split(", span ")[0] if isinstance(c, TranscriptFormatError)  # noqa: E731
                      else (c.episode_id, c.messages, c.failed_calls) for c in read(lines(p)[0], str(p))]
    assert said(path) == said(fixture)


def test_a_hidden_text_is_refused_not_read_as_the_words_said():
    """A TraceConfig's hide_input_text writes __REDACTED__ for each input message's text: read, the user's words
    and the tools' results would be that word; refused naming the setting."""
    err = _error(_with(openinference_spans(openai_messages()), "llm.input_messages.3.message.content",
                       "__REDACTED__"))
    assert "llm.input_messages.3.message.content is __REDACTED__" in err and "OPENINFERENCE_HIDE_INPUT_TEXT" in err


def test_spans_without_messages_say_what_to_record(tmp_path, capsys):
    """Spans whose messages the instrumentation hid (OPENINFERENCE_HIDE_INPUTS and _OUTPUTS): the file's error
    names OpenInference's attributes beside the GenAI ones."""
    from sam_model.data.transcripts import main

    doc = openinference_spans(openai_messages())
    for span in _spans(doc):
        span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("llm.")]
    (path := tmp_path / "hidden.json").write_text(json.dumps(doc))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "saw spans by operation and attributes: chat 4, execute_tool 2" in err
    assert "OpenInference's llm.input_messages.N.*" in err


def test_contents_parts_read_as_content_and_media_counted(tmp_path):
    """A message written as message.contents.K.message_content.* (text, an image) reads as its content does; the
    image is counted, as a GenAI uri part is."""
    doc = openinference_spans(openai_messages())
    for span in _spans(doc):
        out = []
        for a in span["attributes"]:
            if a["key"].startswith("llm.input_messages.1.message.content"):
                at = "llm.input_messages.1.message.contents."
                out += [attr(f"{at}0.message_content.type", "text"),
                        attr(f"{at}0.message_content.text", a["value"]["stringValue"]),
                        attr(f"{at}1.message_content.type", "image"),
                        attr(f"{at}1.message_content.image.image.url", "https://example.com/ticket.png")]
            else:
                out.append(a)
        span["attributes"] = out
    (path := tmp_path / "contents.json").write_text(json.dumps(doc))
    report = ImportReport()
    assert events(path, report=report) == events(EXAMPLE)
    assert report.ignored == {"uri": 1}


DELEGATE = [{"role": "user", "content": "Find flights to Lyon."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "d1", "type": "function", "function": {"name": "search", "arguments": '{"city": "Lyon"}'}}]},
            {"role": "tool", "tool_call_id": "d1", "content": "AF1234"},
            {"role": "assistant", "content": "AF1234 it is."}]


def _delegated(session: bool, stamped: bool = False) -> tuple[dict, list[dict]]:
    """The example conversation's spans under an AGENT span ``agent-a``, and inside it a delegate agent ``agent-b``
    whose own model calls and tool (DELEGATE) start after the outer's; with session.id "conv-1" on the outer's spans
    and both agents' (``session``), and on the delegate's calls too where ``stamped``."""
    outer = openinference_spans(openai_messages())
    spans = outer["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for n, span in enumerate(_spans(openinference_spans(DELEGATE))):
        span.update(spanId=f"inner{n}", parentSpanId="agent-b",
                    startTimeUnixNano=str(int(span["startTimeUnixNano"]) + 5))
        span["attributes"] = [a for a in span["attributes"] if stamped or a["key"] != "session.id"]
        spans.append(span)
    for span in spans:
        span["attributes"] = [a for a in span["attributes"] if session or a["key"] != "session.id"]
        span["parentSpanId"] = span.get("parentSpanId") or "agent-a"
    agent = [attr("openinference.span.kind", "AGENT"), *([attr("session.id", "conv-1")] if session else [])]
    spans += [{"traceId": spans[0]["traceId"], "spanId": "agent-a", "startTimeUnixNano": "1", "attributes": agent},
              {"traceId": spans[0]["traceId"], "spanId": "agent-b", "parentSpanId": "agent-a",
               "startTimeUnixNano": "1001", "attributes": agent}]
    return outer, spans


def test_a_nested_agents_calls_are_a_conversation_of_their_own(tmp_path):
    """Without session.id, an AGENT span inside another agent's run (a delegate) holds its own history, as an
    invoke_agent span's does: its model calls are not read into the outer agent's conversation."""
    outer, spans = _delegated(session=False)
    (path := tmp_path / "nested.json").write_text(json.dumps(outer))
    got = events(path)
    trace = spans[0]["traceId"]
    assert sorted({e["episode_id"] for e in got}) == [trace, f"{trace}_agent-b"]
    assert [{**e, "episode_id": "conv-1"} for e in got if e["episode_id"] == trace] == events(EXAMPLE)
    assert [e["text"] for e in got if e["episode_id"] == f"{trace}_agent-b"][-1] == "AF1234 it is."


def test_genai_spans_pass_the_openinference_reading_untouched():
    """Every GenAI span of the shipped example and of the walkthrough-style files of tests/test_formats.py is given
    to the GenAI path as it was (the same attributes object, no messages added): their conversion is as before."""
    from test_formats import genai_messages, otlp

    from sam_model.data.formats import openinference

    docs = [json.loads((EXAMPLE.parent / "otel-traces.json").read_text()), otlp(genai_messages(), "c9")]
    for span in (s for d in docs for s in _spans(d)):
        attrs = otel.attributes(span["attributes"])
        assert openinference.as_genai(attrs) is attrs
        assert openinference.messages(attrs, 0, otel.ROLES) == {}


def test_messages_in_one_attribute_are_refused_not_passed_over():
    """llm.input_messages as one attribute (not the conventions' flattened llm.input_messages.N.message.*) holds
    turns the reader does not read: refused naming it, rather than the span read as one without messages."""
    doc = openinference_spans(openai_messages())
    last = _last_call(doc)
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.")]
    last["attributes"].append(attr("llm.input_messages", json.dumps(openai_messages()[:-1])))
    err = _error(doc)
    assert f"span {last['spanId']}" in err
    assert "llm.input_messages is one attribute (a string), not the conventions' flattened" in err


def test_the_exporters_folder_reads_as_its_file(tmp_path):
    """The collector's file exporter's folder (its path: ./traces.json, one export a line) reads as the file."""
    (tmp_path / "traces.json").write_text(SPANS.read_text())
    assert events(tmp_path) == events(SPANS)


def test_real_spans_cut_by_the_sdks_attribute_limit_are_refused_naming_it():
    """The plain SDK's attribute limit (lowered to 30 for the fixture; its default of 128 a longer history reaches)
    drops a span's oldest attributes, the first messages of the lookup's last call: its conversation is refused
    naming the span's dropped count and the setting, the refund's, whose spans kept their messages, is read."""
    errs, convs = [], []
    for c in read(lines(FIXTURES / "openinference_limited_spans.jsonl")[0], "limited.jsonl"):
        (errs if isinstance(c, TranscriptFormatError) else convs).append(c)
    assert [c.episode_id for c in convs] == ["refund"]
    assert len(errs) == 1 and str(errs[0]).startswith("limited.jsonl: conversation lookup: llm.input_messages.0.* is "
                                                      "missing")
    assert "the span dropped 14 attributes" in str(errs[0]) and "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" in str(errs[0])


@pytest.mark.parametrize("stamped", [True, False])
def test_a_nested_agents_calls_are_their_own_under_the_sessions_id_too(stamped, tmp_path, caplog):
    """session.id is the user's session, which OpenInference's using_session (and LangChain's thread_id) stamps on
    every span in its context, a delegate agent's too: its model calls were read into the outer agent's conversation,
    its turns in the middle of the outer's (a warning said "another agent's calls under one conversation id?"). An
    AGENT span inside another agent's run of the same session holds its own history: a conversation of its own,
    whether its model calls carry the session (``stamped``) or only the agents' spans do."""
    outer, spans = _delegated(session=True, stamped=stamped)
    (path := tmp_path / "nested.json").write_text(json.dumps(outer))
    got = events(path)
    trace = spans[0]["traceId"]
    assert {e["episode_id"] for e in got} == {"conv-1", f"{trace}_agent-b"}
    assert [e for e in got if e["episode_id"] == "conv-1"] == events(EXAMPLE)
    assert [e["text"] for e in got if e["episode_id"] == f"{trace}_agent-b"][-1] == "AF1234 it is."
    assert not any("repeats none" in r.getMessage() for r in caplog.records)


def test_a_hidden_text_is_refused_on_dual_written_spans_too(tmp_path):
    """enable_genai_semconv converts the span's attributes as written, __REDACTED__ included, so the GenAI messages
    beside a hidden text carry the word too: read from them, the user's words were "__REDACTED__"."""
    text = DUAL.read_text()
    said = "Where is my order? I'm Ann Lee, in Lyon."
    assert text.count(said) > 2  # the OpenInference attribute and the GenAI messages of each call
    (path := tmp_path / "hidden.jsonl").write_text(text.replace(said, "__REDACTED__"))
    with pytest.raises(TranscriptFormatError) as err:
        events(path)
    assert "llm.input_messages.1.message.content is __REDACTED__" in str(err.value)
    assert "OPENINFERENCE_HIDE_INPUT_TEXT" in str(err.value) and "\n" not in str(err.value)


def _completion_span(sid: str, t: int, session: str, trace: str = "5b8aa5a2d2c872e8321cf37308d69df2") -> dict:
    """A completions API call as openinference-instrumentation-openai writes it (_request_attributes_extractor's
    llm.prompts.N.prompt.text, _response_attributes_extractor's llm.choices.N.completion.text): no messages."""
    return {"traceId": trace, "spanId": sid, "name": "Completion", "kind": 1, "startTimeUnixNano": str(t),
            "endTimeUnixNano": str(t + 5), "status": {"code": 1}, "attributes": [
                attr("openinference.span.kind", "LLM"), attr("session.id", session),
                attr("llm.model_name", "gpt-3.5-turbo-instruct"), attr("llm.prompts.0.prompt.text", "Summarize:"),
                attr("llm.choices.0.completion.text", "The order shipped.")]}


def test_completion_spans_beside_chat_spans_are_counted_and_named_not_passed_over(caplog):
    """Spans of a completion model (llm.prompts, no llm.input_messages) beside a conversation's chat spans, and a
    session of them alone beside it, were passed over without a word: each conversation's are counted and the first
    named in a warning, as the GenAI path names spans of gen_ai.prompt.* attributes; the chat spans read as before."""
    import logging

    plain = read(openinference_spans(openai_messages()))
    doc = openinference_spans(openai_messages())
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] += [
        _completion_span("c1", 1500, "conv-1"), _completion_span("c2", 1600, "conv-1"),
        _completion_span("c3", 1700, "other", "77")]
    with caplog.at_level(logging.WARNING):
        got = read(doc)
    assert [(c.episode_id, c.messages) for c in got] == [(c.episode_id, c.messages) for c in plain]
    said = [r.getMessage() for r in caplog.records if "llm.prompts" in r.getMessage()]
    assert len(said) == 2
    assert "2 spans of conversation conv-1 (the first: spans.json, span c1) carry llm.prompts.* / llm.choices.* " \
        "attributes and no llm.input_messages: not read (OpenInference's record of a completions API call" in said[0]
    assert "only what a later call's llm.input_messages repeats of such a turn is read" in said[0]
    assert "1 span of conversation other (the first: spans.json, span c3) carries llm.prompts.*" in said[1] \
        and "not read at all" in said[1]


def langchain_spans(messages: list[dict], failed: set[str], session: str = "conv-1") -> dict:
    """The spans openinference-instrumentation-langchain's tracer (_tracer.py, _update_span) exports of a
    conversation: an LLM span per model call (its messages' calls with their ids), and per tool run a span named by
    the tool, kind TOOL, tool.name and tool.description from the tool's serialized form, input.value as _convert_io
    writes the run's inputs (a one-key input its value alone, else JSON text with input.mime_type) and output.value,
    status ERROR with the run's error where the tool raised: no tool.id or tool_call.id."""
    doc = openinference_spans(messages, session)
    spans = [s for s in _spans(doc) if s["name"] == "ChatCompletion"]
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    calls = [(int(s["startTimeUnixNano"]), c) for s in spans for a in s["attributes"] if a["key"].startswith(
        "llm.output_messages.0.message.tool_calls.") and a["key"].endswith(".tool_call.id")
        for c in [next(c for m in messages for c in m.get("tool_calls") or () if c["id"] == a["value"]["stringValue"])]]
    for k, (t, c) in enumerate(calls):
        args = json.loads(c["function"]["arguments"])
        inp = [attr("input.value", next(iter(args.values())))] if len(args) == 1 else [
            attr("input.value", json.dumps(args)), attr("input.mime_type", "application/json")]
        error = c["id"] in failed
        spans.append({"traceId": "5b8aa5a2d2c872e8321cf37308d69df2", "spanId": f"tool{k:012x}",
                      "parentSpanId": "", "name": c["function"]["name"], "kind": 1,
                      "startTimeUnixNano": str(t + 6 + k), "endTimeUnixNano": str(t + 7 + k),
                      "status": {"code": 2, "message": results[c["id"]]} if error else {"code": 1},
                      "events": [{"name": "exception", "attributes": [attr("exception.type", "ToolException")]}]
                      if error else [], "attributes": [
                          attr("openinference.span.kind", "TOOL"), attr("session.id", session), *inp,
                          attr("output.value", results[c["id"]]), attr("tool.name", c["function"]["name"]),
                          attr("tool.description", "a tool"), attr("metadata", json.dumps({"session_id": session}))]})
    doc["resourceSpans"][0]["scopeSpans"][0] = {"scope": {"name": "openinference.instrumentation.langchain"},
                                                "spans": spans}
    return doc


def test_a_failed_tool_span_without_a_call_id_flags_the_one_call_it_ran():
    """LangChain's TOOL spans name no call: a failed one's result was not flagged as failed. Paired by its tool's
    name and time with the one call of that tool whose result a later model call read, it is; the get_user run that
    ended well flags nothing."""
    (conv,) = read(langchain_spans(openai_messages(), {"c2"}))
    assert conv.failed_calls == frozenset({"c2"})
    (conv,) = read(langchain_spans(openai_messages(), set()))
    assert conv.failed_calls == frozenset()


def _parallel(second_args: dict) -> list[dict]:
    """A conversation whose one model call makes two parallel calls of get_user, the second with ``second_args``."""
    return [{"role": "user", "content": "Look up Ann and Bob."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "ca", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "ann"}'}},
                {"id": "cb", "type": "function", "function": {"name": "get_user",
                                                              "arguments": json.dumps(second_args)}}]},
            {"role": "tool", "tool_call_id": "ca", "content": "{\"name\": \"Ann\"}"},
            {"role": "tool", "tool_call_id": "cb", "content": "Error: no such user"},
            {"role": "assistant", "content": "Ann is here; Bob is not."}]


def test_parallel_calls_of_one_tool_pair_by_input_or_are_said_not_flagged(caplog):
    """Two calls of get_user from one model call: the failed run's input.value (LangChain writes a one-key input as
    its value) tells which it ran, and only that call is flagged; where both calls' arguments are the same, it could
    be either, so neither is flagged and a warning names the span and says why (the helper the langfuse reader pairs
    its TOOL observations with, history.ran)."""
    import logging

    (conv,) = read(langchain_spans(_parallel({"user_id": "bob"}), {"cb"}))
    assert conv.failed_calls == frozenset({"cb"})
    with caplog.at_level(logging.WARNING):
        (conv,) = read(langchain_spans(_parallel({"user_id": "ann"}), {"cb"}))
    assert conv.failed_calls == frozenset()
    said = [r.getMessage() for r in caplog.records if "no tool call id" in r.getMessage()]
    assert len(said) == 1 and "spans.json: conversation conv-1: 1 tool span that ended in an error names no tool " \
        "call id (the first: spans.json, span tool000000000001: it could be any of 2 calls of get_user, its " \
        "input.value telling not which): the result of its call is not flagged as failed" in said[0]


def test_a_failed_tool_span_without_a_call_id_whose_result_no_call_read_is_said(caplog):
    """The trace ends at a failed tool (no model call after it read its result): there is no result to flag, and
    the warning says so rather than passing the failure over."""
    import logging

    with caplog.at_level(logging.WARNING):
        (conv,) = read(langchain_spans(openai_messages()[:8], {"c2"}))
    assert conv.failed_calls == frozenset()
    said = [r.getMessage() for r in caplog.records if "no tool call id" in r.getMessage()]
    assert len(said) == 1 and ": no call of cancel made before it has a result read after it): the result of its " \
        "call is not flagged as failed" in said[0]


def _without(doc: dict, prefix: str, **values: str) -> dict:
    """The spans with no attribute under ``prefix`` and the given ``input.*`` / ``output.*`` values (None: left
    out), as a TraceConfig's hide_* settings write them (openinference.instrumentation.config.TraceConfig.mask)."""
    doc = copy.deepcopy(doc)
    for span in _spans(doc):
        if any(a["key"].startswith(prefix) for a in span["attributes"]):
            span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith(prefix)
                                  and a["key"].replace(".", "_") not in values]
            span["attributes"] += [attr(k.replace("_", ".", 1), v) for k, v in values.items() if v is not None]
    return doc


def test_messages_hidden_from_their_attributes_are_read_from_the_request_and_response_json(tmp_path):
    """OPENINFERENCE_HIDE_INPUT_MESSAGES (and _OUTPUT_MESSAGES) leave out llm.input_messages.* (and
    llm.output_messages.*) but not input.value (output.value), the request's JSON (the response's): the spans were
    read with no user's words and no tool's results, each call unanswered, without a word (the outputs hidden too,
    refused as holding no messages). Read from the JSON, the same events as the messages' attributes give."""
    assert not any(a["key"].startswith("llm.input_messages.") for s in _spans(lines(HIDDEN)[0])
                   for a in s["attributes"])
    assert events(HIDDEN) == events(SPANS)
    # written with the GenAI attributes too: their conversion had no input messages to copy; the span is read whole
    # as its OpenInference twin (its GenAI output beside an input read from the JSON read every call twice)
    assert not any(a["key"] == "gen_ai.input.messages" for s in _spans(lines(DUAL_HIDDEN)[0]) for a in s["attributes"])
    assert events(DUAL_HIDDEN) == events(SPANS)
    (path := tmp_path / "inputs-hidden.json").write_text(json.dumps(_without(lines(SPANS)[0],
                                                                             "llm.input_messages.")))
    assert events(path) == events(SPANS)


def test_an_input_hidden_whole_is_refused_naming_the_setting():
    """OPENINFERENCE_HIDE_INPUTS: no llm.input_messages.*, input.value __REDACTED__, no mime type; the span was read
    as the model's outputs alone, silently. Refused naming the setting."""
    doc = _without(lines(SPANS)[0], "llm.input_messages.", input_value="__REDACTED__", input_mime_type=None)
    errs = [str(c) for c in read(doc) if isinstance(c, TranscriptFormatError) and ", span " in str(c)]
    assert len(errs) == 2 and all("input.value is __REDACTED__ and the span has no llm.input_messages.*" in e
                                  and "OPENINFERENCE_HIDE_INPUTS" in e and "\n" not in e for e in errs)


def test_an_input_value_that_is_no_chat_request_is_not_read_as_messages(caplog):
    """Guard: only a JSON chat request is read so: a text input.value (text/plain) gives no messages, as before."""
    doc = _without(lines(SPANS)[0], "llm.input_messages.", input_mime_type="text/plain")
    got = {c.episode_id: c for c in read(doc)}
    assert all(m["role"] == "assistant" for c in got.values() for m in c.messages)


def test_another_providers_request_is_not_read_as_an_openai_chat_request():
    """The Anthropic instrumentation writes its request's JSON as input.value too (llm.system anthropic): its
    messages' blocks were read as OpenAI's parts, the system prompt lost, the call a part of no known type and its
    result a user message without words. Its messages hidden, it gives none from the value, as before."""
    request = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "You are the order desk.", "messages": [
        {"role": "user", "content": "Where is my order?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, {
            "type": "tool_use", "id": "toolu_1", "name": "find_customer", "input": {"name": "Ann"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "C-48213"}]}]}
    doc = _without(lines(SPANS)[0], "llm.input_messages.", input_value=json.dumps(request), llm_system="anthropic")
    got = [c for c in read(doc) if not isinstance(c, TranscriptFormatError)]
    assert got and all(m["role"] == "assistant" and all(p["type"] in ("text", "tool_call") for p in m["parts"])
                       for c in got for m in c.messages)
    doc = _without(lines(SPANS)[0], "llm.input_messages.", llm_system="openai")  # guard: OpenAI's request is read
    assert any(m["role"] == "user" for c in read(doc) for m in c.messages)


def test_an_output_hidden_whole_is_read_as_not_recorded_and_said_once_a_file(caplog):
    """OPENINFERENCE_HIDE_OUTPUTS (the real package's spans: output.value __REDACTED__, no llm.output_messages.*)
    refused the conversation, though the next call's input repeats the answer and a trace cannot be taken again.
    Read as the Langfuse reader reads a value masked whole: each answer from the input that repeats it, the last
    answer (repeated by none) missing, said in one warning for the file naming the first span and how many."""
    for path, full in ((OUTPUTS_HIDDEN, SPANS), (DUAL_OUTPUTS_HIDDEN, DUAL)):
        whole = {c.episode_id: c for c in otel.conversations([(d, "x") for d in lines(full)], "x", str)}
        assert not any(a["key"].startswith(("llm.output_messages.", "gen_ai.output.messages")) for s in
                       _spans(lines(path)[0]) for a in s["attributes"])
        caplog.clear()
        got = list(otel.conversations([(d, "h.jsonl") for d in lines(path)], "h.jsonl", str))
        assert not [c for c in got if isinstance(c, TranscriptFormatError)]
        assert {c.episode_id for c in got} == set(whole) and len(whole) == 2
        for c in got:  # all but the last answer (a repeat lacks an output's finish_reason), its calls' flags too
            assert [*map(otel._key, c.messages)] == [*map(otel._key, whole[c.episode_id].messages[:-1])]
            assert c.failed_calls == whole[c.episode_id].failed_calls
            assert whole[c.episode_id].messages[-1]["role"] == "assistant"
        said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
        assert len(said) == 1 and said[0].startswith("h.jsonl: 5 LLM spans' output hidden whole (the first: h.jsonl, "
                                                     "span ") and "; 2 such answers, repeated by no later input" in said[0]
        assert "OPENINFERENCE_HIDE_OUTPUTS" in said[0] and "\n" not in said[0]


def test_an_output_hidden_whole_that_a_later_input_repeats_loses_nothing(caplog):
    """Guard: a hidden output the next call's input repeats is read there whole; the warning says no answer is
    missing. The last span's output given, the conversation reads as the one of no output hidden."""
    doc = lines(SPANS)[0]
    whole = {c.episode_id: c.messages for c in read(doc)}
    last: dict[str, dict] = {}  # the latest LLM span of each session keeps its output
    for s in _spans(doc):
        a = {x["key"]: x["value"].get("stringValue") for x in s["attributes"]}
        if a.get("openinference.span.kind") == "LLM" and (a["session.id"] not in last or int(
                s["startTimeUnixNano"]) > int(last[a["session.id"]]["startTimeUnixNano"])):
            last[a["session.id"]] = s
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__", output_mime_type=None)
    for s, kept in zip(_spans(hid), _spans(doc)):
        if any(kept is x for x in last.values()):
            s["attributes"] = kept["attributes"]
    assert {c.episode_id: c.messages for c in read(hid)} == whole
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "spans.json: 3 LLM spans'" in said[0] and "; 0 such answers, repeated" in said[0]


def test_an_output_hidden_whole_keeps_the_failed_tool_run_after_it_flagged(caplog):
    """The calls a span whose output was hidden made are read from the next call's input, and were dated by that
    call: a failed TOOL span naming no call (LangChain's) that ran between the two paired with no call made before it,
    so its result was read as a success and the warning said no call of cancel was made before it. Dated by the span
    that made them, the failed run flags its call as with the output recorded, and no such warning is given."""
    doc = langchain_spans(openai_messages(), {"c2"})
    (whole,) = read(doc)
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__", output_mime_type=None)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(hid)
    assert whole.failed_calls == conv.failed_calls == frozenset({"c2"})
    assert conv.messages == whole.messages[:-1]  # the last answer, repeated by no input, missing
    assert not [r for r in caplog.records if "no tool call id" in r.getMessage()]


def test_an_output_hidden_whole_that_the_next_input_dropped_is_counted_missing(caplog):
    """A hidden answer the next call's input does not repeat (a new history under the same session, a window that
    dropped it) is missing as a conversation's last is; the warning counted last answers alone and said none was
    missing. Nothing is made up in its place: the user's words and the next answer are read as given; the hidden
    span exported twice (its span id the same) counts once, a retry (another span sent the same input, after a
    timeout) twice: each call's answer is its own, and neither is repeated."""
    u0, a0 = {"role": "user", "content": "Where is TRK1?"}, {"role": "assistant", "content": "Held at customs."}
    u1, a1 = {"role": "user", "content": "And TRK2?"}, {"role": "assistant", "content": "Delivered."}
    doc = openinference_spans([u0, a0, u1, a1])
    first, second = sorted(_spans(doc), key=lambda s: int(s["startTimeUnixNano"]))
    second["attributes"] = [a for a in second["attributes"] if not a["key"].startswith("llm.input_messages.")]
    second["attributes"] += flattened("llm.input_messages", [u1])  # the new history: a0 dropped
    first["attributes"] = [a for a in first["attributes"] if not a["key"].startswith("llm.output_messages.")]
    first["attributes"] += [attr("output.value", "__REDACTED__")]
    twice, retry = copy.deepcopy(first), copy.deepcopy(first)
    retry["spanId"], retry["startTimeUnixNano"] = "0000000000000009", str(int(first["startTimeUnixNano"]) + 1)
    for spans, n, missing in (([], 1, 1), ([twice], 1, 1), ([retry], 2, 2)):
        caplog.clear()
        d = copy.deepcopy(doc)
        d["resourceSpans"][0]["scopeSpans"][0]["spans"] += spans
        with caplog.at_level(logging.WARNING):
            (conv,) = read(d)
        assert [(m["role"], m["parts"][0]["content"]) for m in conv.messages] == [
            ("user", "Where is TRK1?"), ("user", "And TRK2?"), ("assistant", "Delivered.")]
        said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
        assert len(said) == 1 and f"spans.json: {n} LLM span" in said[0], said
        assert f"; {missing} such answer{'s' if missing > 1 else ''}, repeated by no later input (a conversation's " \
            f"last, or one the next call's input dropped), {'are' if missing > 1 else 'is'} missing;" in said[0]


def _beside(doc: dict, messages: list[dict], start: int, hide: bool = False) -> dict:
    """``doc`` with another agent's one model call (its own trace and history, the same session.id) at ``start``,
    its last message the answer; ``hide``: that output hidden whole too."""
    span = max((s for s in _spans(openinference_spans(messages)) if s["name"] == "ChatCompletion"),
               key=lambda s: int(s["startTimeUnixNano"]))  # the call whose input holds every earlier message
    span.update(traceId="b" * 32, spanId="b" * 16, startTimeUnixNano=str(start), endTimeUnixNano=str(start + 2))
    doc = copy.deepcopy(doc)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(
        _without({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, "llm.output_messages.",
                 output_value="__REDACTED__")["resourceSpans"][0]["scopeSpans"][0]["spans"][0] if hide else span)
    return doc


OTHER = [{"role": "system", "content": "You book flights."}, {"role": "user", "content": "Book me SK123."},
         {"role": "assistant", "content": "Booked SK123."}]


@pytest.mark.parametrize("hide_other, missing", [(False, 1), (True, 2)])
@pytest.mark.parametrize("shared", [False, True])
def test_hidden_answers_are_looked_for_in_their_own_historys_later_inputs(hide_other, missing, shared, caplog):
    """Another agent's call under the same session.id ran between a call whose output was hidden and the next call
    of its history: it was taken for the call that repeats the hidden answer, so the answer was counted missing that
    the agent's own next call repeats, and the cancel call read there was dated by that next call, after the failed
    cancel run (a TOOL span naming no call), whose result was then not flagged. Each answer is looked for in the
    later inputs of its own history (the join's): one missing, the agent's last (and the other agent's, hidden too);
    the failure flagged as with the outputs recorded. ``shared``: both agents' histories start with one system
    prompt, where the join anchors the other agent's call."""
    doc = _without(langchain_spans(openai_messages(), {"c2"}), "llm.output_messages.", output_value="__REDACTED__")
    times = sorted(int(s["startTimeUnixNano"]) for s in _spans(doc) if s["name"] == "ChatCompletion")
    at = times[2] + 3  # after the call that made cancel, before its failed run
    assert any(s["name"] == "cancel" and int(s["startTimeUnixNano"]) > at for s in _spans(doc))
    other = [openai_messages()[0], *OTHER[1:]] if shared else OTHER
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_beside(doc, other, at, hide_other))
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and f"spans.json: {4 + hide_other} LLM spans'" in said[0], said
    assert f"; {missing} such answer{'s' if missing > 1 else ''}, repeated by no later input" in said[0], said
    assert conv.failed_calls == frozenset({"c2"})
    assert not [r for r in caplog.records if "no tool call id" in r.getMessage()]


def test_hidden_answers_a_window_keeps_without_what_they_answered_are_read(caplog):
    """Guard: each call sends the system prompt and the latest two messages alone, so the next input repeats the
    hidden answer but not the words it answered, and is anchored at the system prompt: the answer is read there,
    in that history, and only the last is missing, as with the outputs recorded bar the last."""
    doc, messages = openinference_spans(openai_messages()), openai_messages()
    for s in _spans(doc):
        if s["name"] == "ChatCompletion":
            n = sum(a["key"].endswith(".message.role") and a["key"].startswith("llm.input_messages.")
                    for a in s["attributes"])
            s["attributes"] = [a for a in s["attributes"] if not a["key"].startswith("llm.input_messages.")]
            s["attributes"] += flattened("llm.input_messages", [messages[0], *messages[1:n][-2:]])
    (whole,) = read(doc)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_without(doc, "llm.output_messages.", output_value="__REDACTED__"))
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


def _compacted(doc: dict) -> dict:
    """``doc`` (openai_messages' spans) with the last call's input compacted: a summary in place of the turns
    before the user's "yes", which it keeps, with what came after."""
    doc, messages = copy.deepcopy(doc), openai_messages()
    last = max((s for s in _spans(doc) if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))
    summary = {"role": "user", "content": "Summary: the user asked to cancel a reservation; it was looked up."}
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.")]
    last["attributes"] += flattened("llm.input_messages", [messages[0], summary, *messages[5:8]])
    return doc


@pytest.mark.parametrize("case", ["summary", "interleaved"])
def test_a_hidden_answer_is_placed_after_the_input_it_answers(case):
    """The answer of a span whose output was hidden is read from the next input of its history, and was put where
    that input's new messages go, after every message read since: after the summary that input put before it (a
    message written after the answer, which its calls' values could be traced to), after another agent's turn
    under the same session.id that came between. It is put right after the input it answers, as the recorded
    output was: the conversation reads as with the outputs recorded, bar the last answer."""
    doc = langchain_spans(openai_messages(), {"c2"})
    if case == "summary":
        doc = _compacted(doc)
    times = sorted(int(s["startTimeUnixNano"]) for s in _spans(doc) if s["name"] == "ChatCompletion")
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__")
    if case == "interleaved":
        doc, hid = (_beside(d, OTHER, times[2] + 3) for d in (doc, hid))
    (whole,) = read(doc)
    (conv,) = read(hid)
    cancel = next(m for m in whole.messages if m["role"] == "assistant" and "cancel" in json.dumps(m))
    assert whole.messages[whole.messages.index(cancel) - 1]["parts"][0]["content"] == openai_messages()[5]["content"]
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    assert conv.failed_calls == whole.failed_calls == frozenset({"c2"})


BOOKING = [{"role": "system", "content": "You book flights."}, {"role": "user", "content": "Book me SK123."},
           {"role": "assistant", "content": "Which date?"}, {"role": "user", "content": "Friday."},
           {"role": "assistant", "content": "Booked SK123 on Friday."}, {"role": "user", "content": "Thanks."},
           {"role": "assistant", "content": "Bye."}]


def _two_agents(hide: tuple[bool, bool], shift: int, shared: bool) -> dict:
    """openai_messages' calls (LangChain's spans, cancel's run failed) and a booking agent's three calls, its own
    trace under the same session.id, each ``shift`` ns after one of the first's; ``hide``: whose outputs are hidden
    whole; ``shared``: both histories start with one system prompt."""
    a = langchain_spans(openai_messages(), {"c2"})
    b = openinference_spans([openai_messages()[0], *BOOKING[1:]] if shared else BOOKING)
    for s in _spans(b):
        s.update(traceId="b" * 32, spanId=f"b{s['spanId'][1:]}", startTimeUnixNano=str(int(s["startTimeUnixNano"])
                                                                                        + shift))
    a, b = (_without(d, "llm.output_messages.", output_value="__REDACTED__") if h else d for d, h in zip((a, b), hide))
    a["resourceSpans"][0]["scopeSpans"][0]["spans"] += _spans(b)
    return a


@pytest.mark.parametrize("shift", [-2, 3, 8, 13])
@pytest.mark.parametrize("hide", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shared", [False, True])
def test_two_agents_interleaved_with_outputs_hidden_read_as_recorded_bar_each_last_answer(hide, shift, shared, caplog):
    """Guard: two agents' calls interleaved under one session.id, either's outputs or both hidden: each answer is
    read from its own agent's next input and put where its recorded output was (the places of the other agent's
    messages after it moved up, its next call anchored there still), the failed run flags its call, and the warning
    counts each hidden agent's last answer alone."""
    (whole,) = read(_two_agents((False, False), shift, shared))
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_two_agents(hide, shift, shared))
    last = [max(i for i, m in enumerate(whole.messages) if m["parts"][0].get("content") == said)
            for said in (openai_messages()[-1]["content"], BOOKING[-1]["content"])]
    assert [*map(otel._key, conv.messages)] == [otel._key(m) for i, m in enumerate(whole.messages)
                                                if i not in {n for n, h in zip(last, hide) if h}]
    assert conv.failed_calls == frozenset({"c2"})
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and f"; {sum(hide)} such answer" in said[0], said


@pytest.mark.parametrize("greets", [False, True])
def test_another_agents_call_at_a_shared_prompt_with_an_earlier_turn_takes_no_hidden_answer(greets, caplog):
    """Another agent's call under the same session.id, its history starting with the same system prompt, sends an
    earlier turn of its own (an answer of its model's, after its user's words, or a greeting first): the join
    anchors it at the shared prompt, and its answer was taken for a window that kept a hidden answer but not the
    words it answered, the hidden answer's wait ended. That answer was then read as the next input of its own
    history puts it, after the other agent's turn, and the cancel call it made was dated by that input, after the
    failed cancel run (a TOOL span naming no call), whose result was not flagged. Such a window's reading leaves the
    answer waiting for an input that goes on from it: the conversation reads as with the outputs recorded, bar the
    last answer."""
    doc = langchain_spans(openai_messages(), {"c2"})
    times = sorted(int(s["startTimeUnixNano"]) for s in _spans(doc) if s["name"] == "ChatCompletion")
    turn = [{"role": "assistant", "content": "Hello, I book flights."}, BOOKING[1]] if greets else BOOKING[1:4]
    other = [openai_messages()[0], *turn, BOOKING[4]]  # the shared prompt, a turn of its own, then its next answer
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__")
    (whole,) = read(_beside(doc, other, times[2] + 3))
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_beside(hid, other, times[2] + 3))
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    assert conv.failed_calls == whole.failed_calls == frozenset({"c2"})
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


def test_a_window_that_puts_a_summary_before_a_hidden_answer_it_kept_dates_its_calls_by_their_span(caplog):
    """Guard: the last call's input is the system prompt, a summary, and the cancel call with its result: a window
    that kept the hidden answer but not the user's "yes" it answered, anchored at the prompt. The answer is read
    there, in its history: its cancel call dated by the span that made it, the failed run (a TOOL span naming no
    call) flags it, and only the last answer is counted missing."""
    doc, messages = langchain_spans(openai_messages(), {"c2"}), openai_messages()
    last = max((s for s in _spans(doc) if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))
    summary = {"role": "user", "content": "Summary: the user asked to cancel a reservation."}
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.")]
    last["attributes"] += flattened("llm.input_messages", [messages[0], summary, *messages[6:8]])
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_without(doc, "llm.output_messages.", output_value="__REDACTED__"))
    assert conv.failed_calls == frozenset({"c2"})
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


def test_a_hidden_answer_in_the_words_another_agent_just_said_is_read_in_its_place(caplog):
    """Another agent's call under the same session.id, read just before the next call of a hidden answer's history,
    answered in the very words of that hidden answer: the next input's repeat of the answer was taken for that agent's
    message (the latest read, after words a window would have dropped), the input anchored there. The hidden answer
    was lost though its next input repeats it, and counted missing. The input goes on from where the answer waits:
    read there, the conversation reads as with the outputs recorded, bar the last answer."""
    doc = langchain_spans(openai_messages(), {"c2"})
    times = sorted(int(s["startTimeUnixNano"]) for s in _spans(doc) if s["name"] == "ChatCompletion")
    same = [*OTHER[:2], openai_messages()[4]]  # its answer in the words of the second call's
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__")
    (whole,) = read(_beside(doc, same, times[1] + 3))
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_beside(hid, same, times[1] + 3))
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


PARCELS = [{"role": "system", "content": "You help."}, {"role": "assistant", "content": "Hi, I track parcels."},
           {"role": "user", "content": "Where is TRK1?"}, {"role": "assistant", "content": "Held at customs."}]


@pytest.mark.parametrize("other", [True, False])
def test_a_hidden_answer_to_a_shared_system_prompt_alone_is_read_from_its_own_history(other, caplog):
    """An agent's first call sends the system prompt alone (its model greets), its output hidden whole; another
    agent under the same session.id, its own trace, whose history starts with the same prompt, sends the prompt and
    a greeting of its own: that input goes on from the hidden call's input, and its greeting was read as the hidden
    answer, the hidden agent's own greeting then put after the other agent's turn. The answer is read from an input
    of its own trace: the conversation reads as with the outputs recorded, bar the last answer. ``other`` False (a
    guard): the hidden agent's next call in a trace of its own (a chat whose turns are each a trace) still reads
    the answer where the next input repeats it, and only the last answer is missing."""
    booking = [PARCELS[0], {"role": "assistant", "content": "Hello, I book flights."}, *BOOKING[1:3]]
    doc = openinference_spans(PARCELS)
    if not other:
        first = min(_spans(doc), key=lambda s: int(s["startTimeUnixNano"]))
        first["traceId"] = "c" * 32
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__")
    if other:
        doc, hid = (_beside(d, booking, 1005) for d in (doc, hid))
    (whole,) = read(doc)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(hid)
    said = [m["parts"][0]["content"] for m in whole.messages]
    assert said.index("Hi, I track parcels.") == 1 and said[-1] == "Held at customs."
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


SUMMARY = {"role": "user", "content": "Summary: the user asked to cancel a reservation."}


def _windowed_last_call() -> tuple[dict, list[int]]:
    """The spans of the cancel conversation (the cancel call c2 hidden where a reading hides outputs) whose last
    call's input is a window: the system prompt, a summary, then the cancel call and its result; and the LLM
    spans' start times, in order."""
    doc, messages = langchain_spans(openai_messages(), {"c2"}), openai_messages()
    last = max((s for s in _spans(doc) if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.")]
    last["attributes"] += flattened("llm.input_messages", [messages[0], SUMMARY, *messages[6:8]])
    return doc, sorted(int(s["startTimeUnixNano"]) for s in _spans(doc) if s["name"] == "ChatCompletion")


@pytest.mark.parametrize("interleaved", [False, True])
def test_a_hidden_answer_a_window_kept_after_its_summary_is_put_after_the_input_it_answers(interleaved, caplog):
    """The last call's input is the system prompt, a summary, and the cancel call with its result: a window that
    kept the hidden answer (the cancel call) but not the user's "yes" it answered. The answer was put where the join
    puts the window's new messages, after the summary (written after it, so the call's values could be traced to
    the summary's words) and after another agent's turn read since (``interleaved``). It is put right after the
    "yes" it answers, where the recorded output was: the conversation reads as with the outputs recorded, bar the
    last answer, and the cancel call is still dated by its span (the failed run flags it)."""
    doc, times = _windowed_last_call()
    hid = _without(doc, "llm.output_messages.", output_value="__REDACTED__")
    if interleaved:
        doc, hid = (_beside(d, OTHER, times[2] + 3) for d in (doc, hid))
    (whole,) = read(doc)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(hid)
    said = [m["parts"][0].get("content") or m["parts"][0].get("name") for m in whole.messages]
    assert said.index("cancel") == said.index(openai_messages()[5]["content"]) + 1 < said.index(SUMMARY["content"])
    assert [*map(otel._key, conv.messages)] == [*map(otel._key, whole.messages[:-1])]
    assert conv.failed_calls == whole.failed_calls == frozenset({"c2"})
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 1 such answer, repeated by no later input" in said[0], said


def _retried(doc: dict) -> dict:
    """``doc`` (openai_messages' spans) with the call that made cancel sent twice (a retry after a timeout): the
    first attempt a span of its own, 1 ns earlier, the same input, its answer another cancel call (c9) that no later
    input repeats."""
    doc = copy.deepcopy(doc)
    calls = sorted((s for s in _spans(doc) if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))
    first = copy.deepcopy(calls[2])
    first["spanId"], first["startTimeUnixNano"] = "f" * 16, str(int(calls[2]["startTimeUnixNano"]) - 1)
    out = "llm.output_messages.0.message."
    first["attributes"] = [attr(a["key"], "c9") if a["key"] == f"{out}tool_calls.0.tool_call.id" else a
                           for a in first["attributes"]]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(first)
    return doc


def test_a_retried_call_whose_outputs_were_hidden_counts_each_answer(caplog):
    """A call sent twice with the same input (a retry after a timeout) is two model calls, each answer its own: the
    recorded outputs read both (each an assistant message with tool calls, a decision point). Hidden, the next input
    repeats the one the agent went on from, and the other was counted with it, once: the warning said one answer (the
    last) was missing where two are. Each hidden call's answer is counted: the answers the warning says are missing
    are the ones the hidden reading lacks of the recorded one."""
    doc = _retried(openinference_spans(openai_messages()))
    (whole,) = read(doc)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_without(doc, "llm.output_messages.", output_value="__REDACTED__"))
    calls = [p["id"] for m in whole.messages for p in m["parts"] if p["type"] == "tool_call"]
    assert calls == ["c1", "c9", "c2"]
    kept = [*map(otel._key, conv.messages)]
    lacks = [m for m in whole.messages if otel._key(m) not in kept]
    assert [*map(otel._key, conv.messages)] == [otel._key(m) for m in whole.messages if m not in lacks]
    assert all(m["role"] == "assistant" for m in lacks) and len(lacks) == 2
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "spans.json: 5 LLM spans'" in said[0], said
    assert f"; {len(lacks)} such answers, repeated by no later input" in said[0], said


def test_a_window_that_keeps_the_latest_answer_of_its_history_adds_it_once_under_interleaving():
    """The last call's input is a window (the system prompt, a summary, then the cancel call with its result), and
    another agent's turn under the same session.id was read since that call was made. The join takes the window's
    repeat of the cancel call for it only where it is the conversation's latest message, which the other agent's
    turn no longer made it: the recorded reading held the cancel call twice (two decision points, the second's
    result read once). The latest message of its own history (a tip: none of its calls went on from it) is repeated
    alike: the call is read once, the summary after the other agent's turn, as with none between (a guard)."""
    doc, times = _windowed_last_call()
    (alone,) = read(doc)
    (conv,) = read(_beside(doc, OTHER, times[2] + 3))
    calls = [p["id"] for m in conv.messages for p in m["parts"] if p["type"] == "tool_call"]
    assert calls == ["c1", "c2"] == [p["id"] for m in alone.messages for p in m["parts"] if p["type"] == "tool_call"]
    other = {otel._key(m) for m in conv.messages} - {otel._key(m) for m in alone.messages}
    assert [otel._key(m) for m in conv.messages if otel._key(m) not in other] == [*map(otel._key, alone.messages)]


def test_a_hidden_answer_its_own_next_input_drops_is_missing_though_another_trace_went_on_from_it(caplog):
    """Guard: the other agent's call went on from the hidden call's input (its own greeting after the shared
    prompt) and left the answer waiting for the hidden agent's own next input; that input drops the answer (the
    prompt and the user's words alone): the answer is missing, not taken as the other trace's reading."""
    booking = [PARCELS[0], {"role": "assistant", "content": "Hello, I book flights."}, *BOOKING[1:3]]
    doc = openinference_spans(PARCELS)
    second = max(_spans(doc), key=lambda s: int(s["startTimeUnixNano"]))
    second["attributes"] = [a for a in second["attributes"] if not a["key"].startswith("llm.input_messages.")]
    second["attributes"] += flattened("llm.input_messages", [PARCELS[0], PARCELS[2]])
    hid = _beside(_without(doc, "llm.output_messages.", output_value="__REDACTED__"), booking, 1005)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(hid)
    assert [m["parts"][0]["content"] for m in conv.messages] == [
        "You help.", "Hello, I book flights.", "Book me SK123.", "Which date?", "Where is TRK1?"]
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 2 such answers, repeated by no later input" in said[0], said


@pytest.mark.parametrize("twice", [False, True])
def test_another_agents_hidden_call_of_the_same_input_is_no_retry(twice, caplog):
    """Two agents under one session.id, each its own trace, both open with the system prompt they share alone (each
    greets), outputs hidden: the second agent's first call, the same input as the first's, was counted a retry of
    it, its answer missing, though its own next input repeats it (read there, as the recorded reading holds it).
    Each greeting is read from its own agent's next input; the one answer missing is the first agent's last.
    ``twice``: the second agent's first span exported twice (a guard: one call, counted once)."""
    booking = [PARCELS[0], {"role": "assistant", "content": "Hello, I book flights."}, *BOOKING[1:3]]
    doc = _without(openinference_spans(booking), "llm.output_messages.", output_value="__REDACTED__")
    last = max(_spans(doc), key=lambda s: int(s["startTimeUnixNano"]))
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("output.")]  # its own recorded
    last["attributes"] += flattened("llm.output_messages", booking[3:])
    for s in _spans(doc):
        s.update(traceId="b" * 32, spanId=f"b{s['spanId'][1:]}", startTimeUnixNano=str(int(s["startTimeUnixNano"]) - 5))
    parcels = _without(openinference_spans(PARCELS), "llm.output_messages.", output_value="__REDACTED__")
    first = min(_spans(doc), key=lambda s: int(s["startTimeUnixNano"]))
    parcels["resourceSpans"][0]["scopeSpans"][0]["spans"] += [*_spans(doc), *[copy.deepcopy(first)] * twice]
    with caplog.at_level(logging.WARNING):
        (conv,) = read(parcels)
    said = [m["parts"][0]["content"] for m in conv.messages]
    assert said == ["You help.", "Hello, I book flights.", "Book me SK123.", "Which date?", "Hi, I track parcels.",
                    "Where is TRK1?"], said
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "spans.json: 3 LLM spans'" in said[0], said  # a span exported twice: one
    assert "; 1 such answer, repeated by no later input" in said[0], said


def test_a_window_at_a_prompt_where_another_agents_answer_waits_reads_its_own_kept_answer(caplog):
    """Two agents under one session.id, each its own trace, sharing the system prompt; the first one's greeting (its
    input the prompt alone) waits, hidden, while the second agent runs: its last call's input is a window (the
    prompt, a summary, its hidden answer "Which date?" kept, the user's next words). The window is anchored at the
    prompt, where the other agent's answer waits, and was not read as a window: "Which date?", read there, was
    counted missing. The answers missing are those the hidden reading lacks of the recorded one: each agent's last."""
    summary = {"role": "user", "content": "Summary: the user books SK123."}
    booking = [PARCELS[0], *BOOKING[1:5]]  # the prompt, "Book me SK123.", "Which date?", "Friday.", the answer
    b = openinference_spans(booking)
    last = max(_spans(b), key=lambda s: int(s["startTimeUnixNano"]))
    last["attributes"] = [a for a in last["attributes"] if not a["key"].startswith("llm.input_messages.")]
    last["attributes"] += flattened("llm.input_messages", [PARCELS[0], summary, *BOOKING[2:4]])
    for s in _spans(b):
        s.update(traceId="b" * 32, spanId=f"b{s['spanId'][1:]}", startTimeUnixNano=str(int(s["startTimeUnixNano"]) + 2))
    a = openinference_spans(PARCELS)
    for s in _spans(a):  # the first agent's second call after the other's turns
        s["startTimeUnixNano"] = str(int(s["startTimeUnixNano"]) + 20 * (int(s["startTimeUnixNano"]) > 1000))
    a["resourceSpans"][0]["scopeSpans"][0]["spans"] += _spans(b)
    (whole,) = read(a)
    with caplog.at_level(logging.WARNING):
        (conv,) = read(_without(a, "llm.output_messages.", output_value="__REDACTED__"))
    kept = [*map(otel._key, conv.messages)]
    lacks = [m["parts"][0]["content"] for m in whole.messages if otel._key(m) not in kept]
    assert sorted(lacks) == ["Booked SK123 on Friday.", "Held at customs."], lacks
    said = [r.getMessage() for r in caplog.records if "output hidden whole" in r.getMessage()]
    assert len(said) == 1 and "; 2 such answers, repeated by no later input" in said[0], said
