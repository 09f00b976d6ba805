"""Langfuse traces (sam_model/data/formats/langfuse.py), read from what its public API returns.

tests/fixtures/langfuse_traces.json was written by tests/fixtures/langfuse_traces.py with the langfuse package's own
API models (its docstring says how to run it again); these tests read it without the package, and one, where the
package is installed, checks that its models parse the fixture and that what they dump reads the same."""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from sam_model.data.formats import history, langfuse
from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

TESTS = Path(__file__).resolve().parent
FIXTURE = TESTS / "fixtures" / "langfuse_traces.json"
OPENAI = TESTS.parent / "examples" / "logs" / "openai.jsonl"


def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def example_session() -> list[dict[str, Any]]:
    """examples/logs/langfuse.jsonl: the conversation of tests/test_formats.py, two traces of one session."""
    return fixture()["session"]


def write_lines(path: Path, docs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def events(path: Path, episode: str = "conv-1") -> list[dict[str, Any]]:
    report = ImportReport()
    read = list(iter_transcript_events(path, report=report))
    assert report.formats == {"langfuse": 1}
    assert {e["episode_id"] for e in read} == {episode}
    return [{**e, "episode_id": "conv-1"} for e in read]


def openai_events(tmp_path: Path, messages: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    if messages is None:
        return list(iter_transcript_events(OPENAI))
    return list(iter_transcript_events(write_lines(tmp_path / "o.jsonl", [{"id": "conv-1", "messages": messages}])))


def openai_messages() -> list[dict[str, Any]]:
    return json.loads(OPENAI.read_text().splitlines()[0])["messages"]


def test_a_session_of_two_traces_is_one_conversation_read_as_its_openai_twin(tmp_path):
    """The API's traces (GET /api/public/traces/{traceId}), one a line or as a list, traces given out of order: one
    conversation by sessionId, its generations in start order, each input's repeat of the history read once (the
    app's assistant message dumped whole, refusal and annotations beside it, is the output it repeats)."""
    expected = openai_events(tmp_path)
    assert events(write_lines(tmp_path / "s.jsonl", example_session())) == expected
    (tmp_path / "s.json").write_text(json.dumps(example_session()[::-1]))
    assert events(tmp_path / "s.json") == expected


def test_a_value_of_the_first_result_is_traced_into_the_second_call(tmp_path):
    read = list(iter_transcript_events(write_lines(tmp_path / "s.jsonl", example_session())))
    decision = next(e for e in read if "useful_memory_steps" in e)
    assert decision["meta"]["needed"]["reservation_id"] == ["qx7z9a"]
    used = [read[s] for s in decision["useful_memory_steps"]]
    assert any(e["kind"] == "result" and "QX7Z9A" in e["text"] and e["text"].startswith("get_user") for e in used)


def test_a_v2_observations_page_of_langchains_messages_reads_the_same(tmp_path):
    """GET /api/public/v2/observations: input and output the stored strings (JSON text), LangChain's message dicts
    and its {"name", "args", "id"} tool calls, an AGENT observation around the calls (not read)."""
    page = tmp_path / "page.json"
    page.write_text(json.dumps(fixture()["v2_page"]))
    assert events(page, "t-lc") == openai_events(tmp_path)
    # the v2 API does not deduplicate rows across pages: an observation given twice adds nothing
    pages = write_lines(tmp_path / "pages.jsonl", [fixture()["v2_page"], fixture()["v2_page"]])
    assert events(pages, "t-lc") == openai_events(tmp_path)


def test_an_error_level_tool_observation_flags_its_result_failed():
    observations = [o for t in example_session() for o in t["observations"]]
    chat = langfuse.to_chat(observations, "s.jsonl: session conv-1")
    results = {m["tool_call_id"]: m for m in chat.messages if m["role"] == "tool"}
    assert results["c2"].get("is_error") is True and "is_error" not in results["c1"]
    assert chat.sources[0] == "trace t-1, observation g-1"  # where each message was first sent
    # the flagged result too: the input that first sent it, not the observation that flagged it
    assert chat.sources[chat.messages.index(results["c2"])] == "trace t-2, observation g-4"


def test_a_call_no_later_input_answers_is_answered_by_its_tool_observation(tmp_path):
    """A trace that ends at a tool's error (no generation after it): the TOOL observation of the call's name is its
    result, its statusMessage where it has no output, flagged failed; as a tool message that says so is read."""
    session = example_session()
    session[1]["observations"] = session[1]["observations"][:2]  # g-3 calls cancel, o-2 raised; no g-4
    messages = openai_messages()[:8]
    messages[7] = {**messages[7], "is_error": True}
    assert events(write_lines(tmp_path / "s.jsonl", session)) == openai_events(tmp_path, messages)
    page = fixture()["v2_page"]  # LangChain's: get_user's output answers the call; its later generations dropped
    page["data"] = page["data"][:3]
    chat = langfuse.to_chat(page["data"], "page.json: trace t-lc")
    assert chat.messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": openai_messages()[3]["content"]}
    assert chat.sources[-1] == "trace t-lc, observation o-1"


def test_a_tool_observation_named_by_no_string_pairs_with_no_call():
    """Guard: calls are looked up by their tool's name; an observation whose name is none, or no string (a list),
    answers no call and raises nothing (the call's result is read as the page's input repeats it)."""
    page = fixture()["v2_page"]
    page["data"] = page["data"][:3]
    named = langfuse.to_chat(page["data"], "page.json: trace t-lc")
    for name in (None, ["get_user"]):
        data = [{**o, "name": name} if o.get("type") in langfuse.ANSWERS else o for o in page["data"]]
        chat = langfuse.to_chat(data, "page.json: trace t-lc")
        assert chat.messages == named.messages[:-1]  # the result only its observation gave is not there


def test_the_ui_download_of_one_trace_reads_its_turn(tmp_path):
    """The UI's Download JSON, {"trace", "observations"}: the first turn, up to the words before "yes please"."""
    trace = example_session()[0]
    path = tmp_path / "trace-t-1.json"
    path.write_text(json.dumps({"trace": {k: v for k, v in trace.items() if k != "observations"},
                                "observations": trace["observations"]}))
    assert events(path) == openai_events(tmp_path, openai_messages()[:5])


def test_a_folder_of_a_sessions_downloads_is_one_conversation(tmp_path):
    """The UI downloads a trace a file (trace-<traceId>.json): a folder of a session's, at any depth, beside a page of
    observations one a line, is read together (it was refused as "not an OpenHands trajectory")."""
    folder = tmp_path / "exports"
    (folder / "day2").mkdir(parents=True)
    for trace, where in zip(example_session(), (folder, folder / "day2")):
        (where / f"trace-{trace['id']}.json").write_text(json.dumps({
            "trace": {k: v for k, v in trace.items() if k != "observations"}, "observations": trace["observations"]}))
    write_lines(folder / "pages.jsonl", [fixture()["v2_page"]])
    read = list(iter_transcript_events(folder))
    expected = openai_events(tmp_path)
    assert [{**e, "episode_id": "conv-1"} for e in read if e["episode_id"] == "conv-1"] == expected
    assert [{**e, "episode_id": "conv-1"} for e in read if e["episode_id"] == "t-lc"] == expected


def test_a_traces_list_of_observation_ids_is_refused_saying_what_to_fetch(tmp_path, capsys):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(fixture()["traces_list"]))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "ids only" in x)
    assert f"{path}: data[0], trace t-1: its observations are ids only" in line
    assert "GET /api/public/traces/{traceId}" in line and "no GENERATION" not in err


@pytest.mark.parametrize("change, says", [
    (lambda o: o.update(startTime="yesterday"), "startTime 'yesterday' is not an ISO 8601 time"),
    (lambda o: o["input"]["messages"][1].update(role=5), "'role' is a number"),
    (lambda o: o["output"]["tool_calls"][0].update(function="get_user"), "g-1"),
])
def test_a_bad_observation_is_named_by_file_trace_and_observation(change, says, tmp_path):
    session = example_session()
    change(session[0]["observations"][0])
    path = write_lines(tmp_path / "s.jsonl", session)
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    assert str(err.value).startswith(f"{path}: session conv-1, trace t-1, observation g-1")
    assert says in str(err.value) and "\n" not in str(err.value)


def test_an_observation_without_a_start_time_is_named_by_its_line_trace_and_id(tmp_path):
    session = example_session()
    session[1]["observations"][1]["startTime"] = None
    path = write_lines(tmp_path / "s.jsonl", session)
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(path))
    assert str(err.value) == (f"{path}:2, trace t-2, observation o-2: startTime is null, expected an ISO 8601 time as "
                              "the API returns it")


def test_observations_are_told_from_other_formats_messages():
    from sam_model.data.formats import detect

    observations = [o for t in example_session() for o in t["observations"]]
    assert detect(observations) == "langfuse" and detect(openai_messages()) == "openai"


def test_an_input_of_another_shape_is_counted_and_named_not_guessed(tmp_path, caplog):
    """The OpenAI integration's Responses API input ({"input": [...], "tools"}) is no chat this reader reads: said,
    with the generation, and the rest read (what the next input repeats of its turn)."""
    session = example_session()
    g1 = session[0]["observations"][0]
    g1["input"] = {"input": g1["input"]["messages"], "tools": []}
    with caplog.at_level(logging.WARNING):
        read = events(write_lines(tmp_path / "s.jsonl", session))
    assert read == openai_events(tmp_path)  # g-2's input repeats the whole first turn
    said = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    assert len(said) == 1 and "1 generation not read (the first: " in said[0]
    assert "trace t-1, observation g-1: its input is an object with keys input, tools" in said[0]


def test_a_generation_whose_output_is_not_read_still_gives_its_input(tmp_path, caplog):
    """The last call's output of several choices is not read, but its input is: the cancel's result it holds (no
    tool observation recorded it) is not lost with the words after it."""
    session = example_session()
    session[1]["observations"] = [o for o in session[1]["observations"] if o["type"] != "TOOL"]
    g4 = session[1]["observations"][-1]
    g4["output"] = [g4["output"], g4["output"]]
    with caplog.at_level(logging.WARNING):
        read = events(write_lines(tmp_path / "s.jsonl", session))
    assert read == openai_events(tmp_path, openai_messages()[:8])
    assert any("observation g-4: its output is a list" in r.getMessage() for r in caplog.records)


def test_observations_without_a_generation_are_refused(tmp_path, capsys):
    trace = copy.deepcopy(example_session()[0])
    trace["observations"] = [o for o in trace["observations"] if o["type"] != "GENERATION"]
    path = write_lines(tmp_path / "t.jsonl", [trace])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    assert "no GENERATION observation (saw TOOL)" in capsys.readouterr().err


def test_a_trace_without_a_generation_beside_a_session_is_said_not_read(tmp_path, caplog):
    """A trace of tool runs alone (its model calls not traced) was dropped without a word."""
    lone = copy.deepcopy(example_session()[0])
    lone.update(id="t-9", sessionId=None)
    lone["observations"] = [{**o, "traceId": "t-9"} for o in lone["observations"] if o["type"] == "TOOL"]
    with caplog.at_level(logging.WARNING):
        assert events(write_lines(tmp_path / "s.jsonl", [*example_session(), lone])) == openai_events(tmp_path)
    assert any("trace t-9 holds no GENERATION observation (saw TOOL)" in r.getMessage() for r in caplog.records)


@pytest.mark.skipif(importlib.util.find_spec("langfuse") is None,
                    reason="langfuse is not installed (tests/fixtures/langfuse_traces.py says how, in a venv of its own)")
def test_the_packages_models_parse_the_fixture_and_their_dump_reads_the_same(tmp_path):
    try:
        from langfuse.api import ObservationsV2Response, Traces, TraceWithFullDetails
        from langfuse.api.core.pydantic_utilities import parse_obj_as
    except ImportError as exc:  # langfuse 5.x reads observations alone: its SDK has no trace models
        pytest.skip(f"this langfuse has no trace models ({exc}); install 4.x as tests/fixtures/langfuse_traces.py says")

    spec = importlib.util.spec_from_file_location("langfuse_traces", TESTS / "fixtures" / "langfuse_traces.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    made = {"session": script.session(), "v2_page": script.v2_page(), "traces_list": script.traces_list()}
    assert made == fixture(), "regenerate tests/fixtures/langfuse_traces.json with its script"
    # parse_obj_as: as the API client parses a response's JSON (the models' aliases are not pydantic's own)
    again = [json.loads(parse_obj_as(TraceWithFullDetails, t).json()) for t in fixture()["session"]]
    assert again == fixture()["session"]
    assert json.loads(parse_obj_as(ObservationsV2Response, fixture()["v2_page"]).json()) == fixture()["v2_page"]
    assert parse_obj_as(Traces, fixture()["traces_list"]).data[0].observations == ["g-1", "o-1", "g-2"]
    assert events(write_lines(tmp_path / "s.jsonl", again)) == openai_events(tmp_path)


def parallel_trace(first: str, second: str) -> list[dict[str, Any]]:
    """One generation calling get_user twice at once (c-ann, c-bob), the tool observations started in the order
    given (``first`` / ``second``: the user each ran for), ann's at level ERROR; no generation after them."""
    call = {"role": "assistant", "tool_calls": [
        {"id": f"c-{u}", "type": "function", "function": {"name": "get_user", "arguments": json.dumps({"user_id": u})}}
        for u in ("ann", "bob")]}
    gen = {"id": "g-1", "traceId": "t-1", "type": "GENERATION", "name": "OpenAI-generation",
           "startTime": "2026-01-05T10:00:01Z", "input": [{"role": "user", "content": "Who are ann and bob?"}],
           "output": call, "level": "DEFAULT"}
    tools = [{"id": f"o-{u}", "traceId": "t-1", "type": "TOOL", "name": "get_user", "startTime": at,
              "input": {"args": [], "kwargs": {"user_id": u}}, "output": None if u == "ann" else f"{u}'s record",
              "statusMessage": "no such user" if u == "ann" else None, "level": "ERROR" if u == "ann" else "DEFAULT"}
             for u, at in ((first, "2026-01-05T10:00:02.100Z"), (second, "2026-01-05T10:00:02.200Z"))]
    return [gen, *tools]


@pytest.mark.parametrize("order", [("ann", "bob"), ("bob", "ann")])
def test_parallel_calls_of_one_tool_get_the_results_their_arguments_ran(order):
    """Two calls of one tool run at once start in any order: each result (and the error flag) goes to the call
    whose arguments its observation's input holds; in start order bob's record answered ann's call, flagged as
    bob's success, and ann's error answered bob's."""
    chat = langfuse.to_chat(parallel_trace(*order), "t.json: trace t-1")
    results = {m["tool_call_id"]: m for m in chat.messages if m["role"] == "tool"}
    assert results["c-ann"]["content"] == "no such user" and results["c-ann"].get("is_error") is True
    assert results["c-bob"]["content"] == "bob's record" and "is_error" not in results["c-bob"]


def test_a_tool_observation_pairs_not_with_an_earlier_call_a_later_input_answered():
    """An earlier call of the tool that no observation recorded, answered in the next input, is not pending: the
    later call's error observation is that call's (it flagged the earlier, answered result failed instead)."""
    gen = parallel_trace("ann", "bob")[0]
    earlier = {"role": "assistant", "tool_calls": [{"id": "c-0", "type": "function", "function": {
        "name": "get_user", "arguments": '{"user_id": "cy"}'}}]}
    first = {**gen, "id": "g-0", "startTime": "2026-01-05T10:00:00Z", "output": earlier}
    second = {**gen, "input": [*gen["input"], earlier, {"role": "tool", "tool_call_id": "c-0", "content": "cy's"}],
              "output": {"role": "assistant", "tool_calls": gen["output"]["tool_calls"][:1]}}
    ann = parallel_trace("ann", "bob")[1]
    chat = langfuse.to_chat([first, second, ann], "t.json: trace t-1")
    results = {m["tool_call_id"]: m for m in chat.messages if m["role"] == "tool"}
    assert results["c-0"] == {"role": "tool", "tool_call_id": "c-0", "content": "cy's"}
    assert results["c-ann"]["content"] == "no such user" and results["c-ann"].get("is_error") is True


def test_a_tool_observation_that_could_be_either_of_two_calls_is_said_not_paired(caplog):
    """Its input tells not which of two calls with other arguments it ran (a shape not matched): not paired in
    order (a result could answer the wrong call), said with the observation."""
    trace = parallel_trace("ann", "bob")
    for o in trace[1:]:
        o["input"] = "<masked>"
    with caplog.at_level(logging.WARNING):
        chat = langfuse.to_chat(trace, "t.json: trace t-1")
    assert not [m for m in chat.messages if m["role"] == "tool"]
    said = [r.getMessage() for r in caplog.records if "not paired" in r.getMessage()]
    assert len(said) == 1 and "2 tool observations not paired" in said[0] and "observation o-ann" in said[0]


def test_langchains_calls_given_only_in_additional_kwargs_are_read(tmp_path):
    """LangChain before its tool_calls field (and the handler's dumps of then) gave OpenAI's calls only in the
    message's additional_kwargs: they were dropped, each result then answering no call."""
    def old(m: dict[str, Any]) -> dict[str, Any]:
        if not m.get("tool_calls"):
            return m
        calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(
            c["args"])}} for c in m["tool_calls"]]
        return {**{k: v for k, v in m.items() if k != "tool_calls"}, "additional_kwargs": {"tool_calls": calls}}

    page = fixture()["v2_page"]
    for o in page["data"]:
        if o["type"] == "GENERATION":
            inp, out = json.loads(o["input"]), json.loads(o["output"])
            o["input"], o["output"] = json.dumps([old(m) for m in inp]), json.dumps(old(out))
    assert "additional_kwargs" in json.dumps(page) and '"args"' not in json.dumps(page)
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    assert events(path, "t-lc") == openai_events(tmp_path)


@pytest.mark.parametrize("side", ["input", "output"])
def test_a_value_cut_mid_json_is_named_not_read_as_words(side, caplog):
    """A stored messages list cut short (JSON text that stops mid-way) is no prompt: it was read as the user's (or
    the model's) words, the JSON text verbatim; now counted and named as cut."""
    trace = parallel_trace("ann", "bob")[:1]
    value = json.dumps(trace[0][side])
    trace[0][side] = value[:len(value) // 2]
    with caplog.at_level(logging.WARNING):
        chat = langfuse.to_chat(trace, "t.json: trace t-1")
    assert not any(value[:10] in str(m.get("content")) for m in chat.messages)
    said = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    assert len(said) == 1 and f"observation g-1: its {side} is a string that stops mid-JSON after" in said[0]


def test_a_traces_observations_without_its_session_id_stay_in_its_conversation(tmp_path):
    """v2 observations carry the sessionId each was created with: one started before the app set the session
    (propagate_attributes) has none. It was put in a conversation of its trace apart from the session's (its
    tool result lost, said as a trace without a generation)."""
    page = fixture()["v2_page"]
    page["data"] = page["data"][:3]  # the trace ends at get_user: its TOOL observation is the call's result
    page["data"][2]["sessionId"] = None
    for o in page["data"][:2]:
        o["sessionId"] = "s-1"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    read = events(path, "s-1")
    assert any(e["kind"] == "result" and "QX7Z9A" in e["text"] for e in read)


@pytest.mark.parametrize("change", [
    lambda s: s[0]["observations"][0]["output"]["tool_calls"][0].update(id={"a": 1}),
    lambda s: s[0]["observations"][0]["output"]["tool_calls"][0].pop("id"),
    lambda s: next(m for m in s[0]["observations"][2]["input"]["messages"] if m["role"] == "tool").update(
        tool_call_id=[1, [2]]),
])
def test_a_call_id_of_another_type_is_no_internal_error(change, tmp_path):
    """Found by fuzzing: a call id that is an object or missing, or a tool message's id that is a list, beside the
    tool observations was "malformed conversation (TypeError: unhashable type ...)" or a KeyError: now read as the
    other readers read such an id, or refused in one line naming the observation."""
    session = example_session()
    change(session)
    path = write_lines(tmp_path / "s.jsonl", session)
    try:
        list(iter_transcript_events(path))
    except TranscriptFormatError as err:
        assert str(err).startswith(f"{path}: session conv-1, trace t-1, observation g-")
        assert "malformed conversation" not in str(err) and "\n" not in str(err)


def test_anthropic_messages_read_as_the_anthropic_reader_reads_them(tmp_path):
    """An app that logs the Anthropic SDK's calls as generations (@observe(as_type="generation"), its input the
    request's {"system", "messages"}, its output the response's message): the tool_use / tool_result blocks were
    counted as parts not read, every call and result lost, and the system prompt beside the messages dropped."""
    from test_formats import POLICY, anthropic_messages

    msgs = anthropic_messages()
    system = [{"type": "text", "text": POLICY}]
    trace = {"id": "t-a", "timestamp": "2026-01-05T10:00:00Z", "sessionId": "conv-1", "observations": [
        {"id": f"g-{i}", "traceId": "t-a", "type": "GENERATION", "startTime": f"2026-01-05T10:00:{i:02d}Z",
         "input": {"system": system, "messages": msgs[:i]}, "output": m}
        for i, m in enumerate(msgs) if m["role"] == "assistant"]}
    expected = write_lines(tmp_path / "a.jsonl", [{"id": "conv-1", "system": system, "messages": msgs}])
    assert events(write_lines(tmp_path / "s.jsonl", [trace])) == list(iter_transcript_events(expected))


def test_langchains_invalid_tool_calls_are_counted_not_dropped_unsaid(tmp_path):
    """A call the model wrote that LangChain could not parse (invalid_tool_calls, beside tool_calls) is no call
    the labelling rule can read; it was dropped without a word, and is now counted with the parts not read."""
    page = fixture()["v2_page"]
    g = next(o for o in page["data"] if o["type"] == "GENERATION" and "tool_calls" in o["output"])
    out = json.loads(g["output"])
    out["invalid_tool_calls"] = [{"name": "get_user", "args": '{"user_id": ', "id": "bad-1", "error": "cut"}]
    g["output"] = json.dumps(out)
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    report = ImportReport()
    list(iter_transcript_events(path, report=report))
    assert report.ignored["LangChain invalid_tool_calls"] == 1


def test_a_trace_whose_observations_name_another_session_is_read_in_its_own(tmp_path, caplog):
    """A trace's own sessionId places it, whatever its observations say, and the other session is named in a
    warning: the observation's first seen won, the trace's turns moved to a session not its own without a word."""
    session = example_session()
    session[0]["observations"][0]["sessionId"] = "s-other"
    with caplog.at_level(logging.WARNING):
        assert events(write_lines(tmp_path / "s.jsonl", session)) == openai_events(tmp_path)
    said = [r.getMessage() for r in caplog.records if "sessions (" in r.getMessage()]
    assert len(said) == 1 and "trace t-1: its observations name 2 sessions (conv-1, s-other): it is read whole in " \
        "session conv-1 (the trace's own sessionId)" in said[0]


def test_v2_observations_of_one_trace_naming_two_sessions_are_said_read_in_the_first(tmp_path, caplog):
    """v2 observations carry no trace's sessionId: one trace's naming two is read whole in the first seen, and a
    warning names the trace and both (the first won without a word, the other session missing the trace's turns)."""
    page = fixture()["v2_page"]
    for n, o in enumerate(page["data"]):
        o["sessionId"] = "s-1" if n < 3 else "s-2"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with caplog.at_level(logging.WARNING):
        read = events(path, "s-1")
    assert any(e["kind"] == "result" and "QX7Z9A" in e["text"] for e in read)
    said = [r.getMessage() for r in caplog.records if "sessions (" in r.getMessage()]
    assert len(said) == 1 and "page.json: trace t-lc: its observations name 2 sessions (s-1, s-2): it is read " \
        "whole in session s-1 (the first named); the other session's conversation misses its turns" in said[0]


def test_a_tool_observation_whose_input_is_the_one_arguments_value_pairs_with_its_call():
    """A tool run recorded with its one argument's value as its input (as OpenInference's LangChain tracer writes
    a one-key input; the pairing both trace readers share, history.ran) answers the call of that value: it was not
    paired, the error flag of ann's lookup lost."""
    trace = parallel_trace("bob", "ann")
    for o in trace[1:]:
        o["input"] = o["id"].removeprefix("o-")
    chat = langfuse.to_chat(trace, "t.json: trace t-1")
    results = {m["tool_call_id"]: m for m in chat.messages if m["role"] == "tool"}
    assert results["c-ann"]["content"] == "no such user" and results["c-ann"].get("is_error") is True
    assert results["c-bob"]["content"] == "bob's record" and "is_error" not in results["c-bob"]


FALLBACK = "<fully masked due to failed mask function>"  # what langfuse 4.18's span._mask_attribute sends instead


@pytest.mark.parametrize("change, role, observation", [
    (lambda t: t[0].update(input=[{"role": "user", "content": FALLBACK}]), "user", "g-1"),  # a mask of each message
    (lambda t: t[0].update(input=json.dumps([{"role": "user", "content": [{"type": "text", "text": "__REDACTED__"}]}])),
     "user", "g-1"),  # OpenInference's hide_inputs, exported to Langfuse: a v2 page's JSON text
    (lambda t: t[2].update(output=[{"type": "text", "text": FALLBACK}]), "tool", "o-bob"),  # a tool's parts
])
def test_a_masked_text_is_refused_naming_its_observation_not_read_as_words(change, role, observation):
    """A mask's stand-in for the words (the SDK's own when the app's mask function raised, the docs' example
    mask's, OpenInference's) was read as the words: the user's prompt "<fully masked ...>", memories and labels of
    words never said. Refused in one line naming trace and observation and what to do."""
    trace = parallel_trace("ann", "bob")
    change(trace)
    with pytest.raises(TranscriptFormatError) as err:
        langfuse.to_chat(trace, "t.json: trace t-1")
    said = str(err.value)
    assert said.startswith(f"t.json: trace t-1, trace t-1, observation {observation}: a {role} message's text is ")
    assert "\n" not in said and ("mask function" in said or "OPENINFERENCE_HIDE_INPUTS" in said)


@pytest.mark.skipif(importlib.util.find_spec("langfuse") is None,
                    reason="langfuse is not installed (tests/fixtures/langfuse_traces.py says how, in a venv of its own)")
def test_the_sdks_own_stand_in_for_a_failed_mask_is_one_the_reader_refuses():
    """The string the installed SDK sends for an input when the app's mask function raises is one of langfuse.MASKS."""
    from types import SimpleNamespace

    from langfuse._client.span import LangfuseObservationWrapper

    def mask(**_: Any) -> Any:
        raise ValueError("a mask that fails")

    client = SimpleNamespace(_langfuse_client=SimpleNamespace(_mask=mask))
    sent = LangfuseObservationWrapper._mask_attribute(client, data=[{"role": "user", "content": "my card"}])
    assert sent == FALLBACK and sent in langfuse.MASKS


def test_words_that_hold_a_mask_among_them_are_read():
    """Guard: a mask that replaced only the sensitive words leaves the rest, words said: read as they are."""
    trace = parallel_trace("ann", "bob")
    trace[0]["input"] = [{"role": "user", "content": "Who are ann and bob? My card is REDACTED"}]
    chat = langfuse.to_chat(trace, "t.json: trace t-1")
    assert chat.messages[0]["content"] == "Who are ann and bob? My card is REDACTED"


@pytest.mark.parametrize("side", ["input", "output"])
@pytest.mark.parametrize("text, says", [
    ('[{"role": "user", "content": "Who are ann and bob?", "score": NaN}]', "bare NaN is not JSON"),
    ('{"role": "assistant", "content": "ok", "logprob": -Infinity}', "bare -Infinity is not JSON"),
    ('{"messages": [{"role": "user", "content": "a"}], "messages": [{"role": "user", "content": "b"}]}',
     "'messages' is given twice"),
])
def test_json_text_the_strict_loader_refuses_is_refused_not_read_as_words(side, text, says):
    """A stored value that is JSON text every other reader refuses (bare NaN, Infinity, a list given twice under one
    key: the strict loader, base.strict_loads) was read as the user's (or the model's) words, the JSON text
    verbatim; Python's json read it, so it was not taken for a value cut short either. Refused in one line naming the
    observation and what to write instead."""
    trace = parallel_trace("ann", "bob")[:1]
    trace[0][side] = text
    with pytest.raises(TranscriptFormatError) as err:
        langfuse.to_chat(trace, "t.json: trace t-1")
    said = str(err.value)
    assert said.startswith(f"t.json: trace t-1, trace t-1, observation g-1: its {side} is JSON text ")
    assert says in said and "\n" not in said


def test_a_value_cut_after_a_bare_nan_is_refused_by_the_one_loader():
    """The cut test read with Python's json (a bare NaN passed, then the cut was found): now the strict loader's
    reading decides, as decoded's does, so the value is refused for the NaN it holds."""
    trace = parallel_trace("ann", "bob")[:1]
    trace[0]["input"] = '[{"role": "user", "score": NaN, "content": "Who are ann an'
    with pytest.raises(TranscriptFormatError, match="its input is JSON text .*bare NaN"):
        langfuse.to_chat(trace, "t.json: trace t-1")


def long_trace(n: int, window: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A trace of ``n`` generations, each calling search and its input repeating the whole history (the last
    ``window`` messages after the system prompt where given: a window), a TOOL observation running each call; and the
    conversation it holds."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You help."}, {"role": "user", "content": "go"}]
    observations = []
    for i in range(n):
        call = {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
            "name": "search", "arguments": json.dumps({"q": i})}}]}
        at = f"2026-01-05T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        sent = history if window is None else history[:1] + history[1:][-window:]
        observations += [{"id": f"g{i}", "traceId": "t", "type": "GENERATION", "startTime": at + "Z",
                          "input": json.loads(json.dumps(sent)), "output": call},  # a copy, as a file gives each
                         {"id": f"o{i}", "traceId": "t", "type": "TOOL", "name": "search", "startTime": at + ".5Z",
                          "input": {"q": i}, "output": f"r{i}"}]
        history = [*history, call, {"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}"}]
    return observations, history


def test_a_long_traces_messages_are_read_and_checked_once_not_at_every_repeat(monkeypatch):
    """Each generation's input repeats the history: each was read (LangChain's calls converted, its key made) and
    checked whole, so a trace of n calls did n^2/2 messages' work (2,000 calls: 4 million). Counted, not timed: the
    messages read and checked are a few per message of the conversation."""
    read, checked = [], []
    message, to_chat = langfuse._message, langfuse.chat.to_chat
    monkeypatch.setattr(langfuse, "_message", lambda m: read.append(1) or message(m))
    monkeypatch.setattr(langfuse.chat, "to_chat", lambda ms, *a, **k: checked.append(len(ms)) or to_chat(ms, *a, **k))
    observations, history = long_trace(300)
    chat = langfuse.to_chat(observations, "t.json: trace t")
    assert chat.messages == history
    assert len(read) <= 2 * len(history) and sum(checked) <= 3 * len(history)


@pytest.mark.parametrize("window", [None, 3, 4])
def test_an_input_read_from_the_previous_ones_reading_reads_as_read_whole(window, monkeypatch):
    """Guard: taking what an input repeats of the previous one from that one's reading changes nothing read, a
    window over the history (its start differs at each call) too."""
    observations, _ = long_trace(12, window)
    kept = langfuse.to_chat(copy.deepcopy(observations), "t.json: trace t")
    monkeypatch.setattr(history.Inputs, "messages", lambda self, raw: [
        x for m in raw for x in langfuse._blocks(langfuse._message(m))])
    whole = langfuse.to_chat(observations, "t.json: trace t")
    assert kept.messages == whole.messages and kept.sources == whole.sources and len(kept.messages) == 2 + 2 * 12


@pytest.mark.parametrize("changed", [True, 1.0])
def test_an_input_that_changes_a_number_to_an_equal_one_of_another_type_is_read_as_given(changed, monkeypatch):
    """Python's == holds 1, 1.0 and true equal: an input whose message changed one for another at the same place
    (a history re-serialized between calls) was taken from the previous input's reading, the 1 read where the file
    says true, and the conversation joined differently than reading each input whole gives."""
    first = [{"role": "system", "content": "You help."}, {"role": "user", "content": "hi", "score": 1}]
    answer = {"role": "assistant", "content": "Hello."}
    second = [first[0], {**first[1], "score": changed}, answer, {"role": "user", "content": "bye"}]
    observations = [{"id": f"g{i}", "traceId": "t", "type": "GENERATION", "startTime": f"2026-01-05T10:00:0{i}Z",
                     "input": sent, "output": out}
                    for i, (sent, out) in enumerate(((first, answer), (second, {"role": "assistant", "content": "Bye."})))]
    kept = langfuse.to_chat(copy.deepcopy(observations), "t.json: trace t")
    monkeypatch.setattr(history.Inputs, "messages", lambda self, raw: [
        x for m in raw for x in langfuse._blocks(langfuse._message(m))])
    whole = langfuse.to_chat(observations, "t.json: trace t")
    assert json.dumps(kept.messages) == json.dumps(whole.messages) and kept.sources == whole.sources
    assert any(m.get("score") is changed for m in kept.messages)


def masked_twice() -> list[dict[str, Any]]:
    """Two generations, the second's input repeating the first's input and output and bob's result; the tool
    observations between them."""
    trace = parallel_trace("ann", "bob")
    call = trace[0]["output"]
    trace.append({"id": "g-2", "traceId": "t-1", "type": "GENERATION", "startTime": "2026-01-05T10:00:03Z",
                  "input": [*trace[0]["input"], call, {"role": "tool", "tool_call_id": "c-bob", "content": "bob's record"}],
                  "output": {"role": "assistant", "content": "Bob is a user; ann is not."}})
    return trace


@pytest.mark.parametrize("where", [(0, "output"), (0, "input"), (1, "output"), (3, "output")])
def test_a_value_masked_whole_is_read_as_not_recorded_not_refusing_the_conversation(where, caplog):
    """The SDK masks an observation's input and output whole: where the app's mask raised on one (a mask written
    for the input's list that fails on the output's object), the value is its stand-in, the words not recorded, as
    a call that returned nothing. The conversation was refused whole, though a later input repeats every word (a
    trace cannot be taken again: the past sessions were lost). Read from the later inputs, the masked value named in
    a warning; what none repeats (the last answer, ann's result where its run's output or the call's input is
    masked) is missing, not replaced by the stand-in."""
    assert [m["role"] for m in langfuse.to_chat(masked_twice(), "t").messages] == [
        "user", "assistant", "tool", "tool", "assistant"]
    whole = langfuse.to_chat(masked_twice(), "t.json: trace t-1").messages
    trace = masked_twice()
    n, what = where
    trace[n][what] = FALLBACK
    with caplog.at_level(logging.WARNING):
        chat = langfuse.to_chat(trace, "t.json: trace t-1")
    assert not any(FALLBACK in json.dumps(m) for m in chat.messages)
    # g-2's answer; else ann's result, held by its tool observation alone (paired with a call g-1's output made, or
    # with the call g-2's input repeats of g-1's output masked whole: not lost)
    lost = [len(whole) - 1] if n == 3 else [] if where == (0, "output") else [2]
    assert chat.messages == [m for i, m in enumerate(whole) if i not in lost]
    said = [r.getMessage() for r in caplog.records if "mask's stand-in" in r.getMessage()]
    assert len(said) == 1 and f"observation {trace[n]['id']}: its {what} is {FALLBACK!r}" in said[0]


def test_a_user_who_said_redacted_is_read_and_a_whole_value_of_it_is_masked(caplog):
    """"REDACTED" is the stand-in of the mask in Langfuse's docs, which replaces a whole string (the SDK masks each
    input and output whole), and a word a user may say: a message that said it alone refused the session. Read as
    said in a message; a whole input or output of it is masked, read from what later inputs repeat."""
    trace = masked_twice()
    trace[3]["input"][0]["content"] = "REDACTED"  # the user's words, as g-2's input repeats them
    trace[0]["input"] = "REDACTED"  # g-1's whole input, as the docs' mask leaves it
    with caplog.at_level(logging.WARNING):
        chat = langfuse.to_chat(trace, "t.json: trace t-1")
    assert chat.messages[0] == {"role": "user", "content": "REDACTED"} and chat.messages[-1]["role"] == "assistant"
    assert any("observation g-1: its input is 'REDACTED'" in r.getMessage() for r in caplog.records)


def test_a_conversation_masked_whole_is_refused_naming_the_mask():
    """Guard: a mask that raises on every list of messages leaves no input recorded: refused naming the mask, not
    read as an empty conversation."""
    trace = masked_twice()
    for o in trace:
        o["input"] = o["output"] = FALLBACK
    with pytest.raises(TranscriptFormatError, match="observation g-1: its input is '<fully masked due to failed mask "
                                                    "function>', the Langfuse SDK's stand-in .*nothing to read"):
        langfuse.to_chat(trace, "t.json: trace t-1")


def _generation(n: int, trace: str, second: int, inp: list[dict[str, Any]], out: dict[str, Any]) -> dict[str, Any]:
    """A GENERATION observation of the OpenAI integration: ``inp`` sent at second ``second``, ``out`` answered."""
    return {"id": f"g-{n}", "traceId": trace, "type": "GENERATION", "name": "OpenAI-generation",
            "startTime": f"2026-01-05T10:00:{second:02d}Z", "input": inp, "output": out, "level": "DEFAULT"}


def _agents(case: str) -> list[dict[str, Any]]:
    """A user's turns with one agent (trace t-1): its second input puts a summary before the turn it keeps
    (``summary``), or another agent's calls (trace t-2, the same session) come between (``interleaved``)."""
    system, other = {"role": "system", "content": "You help with orders."}, {"role": "system", "content": "You book."}
    u1, a1 = {"role": "user", "content": "Where is my order?"}, {"role": "assistant", "content": "It ships today."}
    u2, a2 = {"role": "user", "content": "Thanks."}, {"role": "assistant", "content": "Anything else?"}
    b1, c1 = {"role": "user", "content": "Book SK123."}, {"role": "assistant", "content": "Booked."}
    b2, c2 = {"role": "user", "content": "And a hotel?"}, {"role": "assistant", "content": "Booked one."}
    summary = {"role": "user", "content": "Summary: the user asked about an order."}
    if case == "summary":
        return [_generation(1, "t-1", 1, [system, u1], a1), _generation(3, "t-1", 3, [system, summary, u1, a1, u2], a2)]
    return [_generation(1, "t-1", 1, [system, u1], a1), _generation(2, "t-2", 2, [other, b1], c1),
            _generation(3, "t-1", 3, [system, u1, a1, u2], a2), _generation(4, "t-2", 4, [other, b1, c1, b2], c2)]


@pytest.mark.parametrize("case", ["summary", "interleaved"])
def test_an_answer_masked_whole_is_put_after_the_input_it_answers(case):
    """An output masked whole is read where a later input of its history repeats it, and was put where that input's
    new messages go, after every message read since: after the summary that input puts before it (written after
    the answer), after another agent's turn under the same session that came between, as if said after them. It is
    put right after the input it answers, as the recorded output was (the OpenInference reader's rule for a hidden
    output): the conversation reads as with the output recorded, bar the last answer."""
    whole = langfuse.to_chat(_agents(case), "s.json: session s").messages
    masked = _agents(case)
    for o in masked:
        if o["traceId"] == "t-1":
            o["output"] = FALLBACK
    chat = langfuse.to_chat(masked, "s.json: session s")
    last = max(i for i, m in enumerate(whole) if m["content"] == "Anything else?")
    assert chat.messages == [m for i, m in enumerate(whole) if i != last]


@pytest.mark.parametrize("repeated", [True, False])
def test_the_calls_of_an_answer_masked_whole_are_paired_with_the_tool_runs_after_it(repeated):
    """The calls an answer masked whole made are read from a later input, after the tool observations that ran
    them: no call was held when each was read, so none was paired, and the failed run (level ERROR) flagged nothing:
    its result, where the later input repeats it, read as a success, else missing. Paired with the runs that started
    after the masked generation, by name and input as a recorded call is, it reads as with the output recorded."""
    trace = masked_twice()  # g-1 calls get_user for ann and bob; ann's run failed; g-2's input holds bob's result
    if repeated:  # and ann's, as the app sent it
        trace[3]["input"].insert(2, {"role": "tool", "tool_call_id": "c-ann", "content": "no such user"})
    whole = langfuse.to_chat(copy.deepcopy(trace), "t.json: trace t-1").messages
    trace[0]["output"] = FALLBACK
    chat = langfuse.to_chat(trace, "t.json: trace t-1").messages
    assert [m for m in whole if m.get("is_error")] == [m for m in chat if m.get("is_error")] != []
    assert chat == whole
