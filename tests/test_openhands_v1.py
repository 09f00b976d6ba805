"""OpenHands V1 (the software-agent-sdk behind OpenHands 1.x): a coding run read as the SDK builds what the model saw
(the model's own calls and words, the parallel calls of one response one turn, results by tool_call_id, kept whole,
failures flagged), an evaluation's output.jsonl (runs by instance_id), the folders the SDK saves conversations to,
and bad events in one line.

The events follow the SDK's models as they dump (openhands-sdk/openhands/sdk/event/base.py: kind, id, timestamp,
source; event/llm_convertible/system.py, message.py, action.py, observation.py: SystemPromptEvent, MessageEvent,
ActionEvent with ``tool_call`` (llm/message.py MessageToolCall) and ``llm_response_id``, ObservationEvent,
AgentErrorEvent, UserRejectObservation; event/condenser.py Condensation; the terminal's and file editor's
observations of openhands-tools), the conversation folder as conversation/persistence_const.py names it
(``events/event-{index:05d}-{event id}.json``), and an evaluation's line as OpenHands/benchmarks writes it
(benchmarks/utils/models.py EvalOutput)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_sessions import openhands_session
from test_swe_agent import convert, step_of

from sam_model.data.formats import detect, openhands, sessions, to_chat
from sam_model.data.formats.base import TranscriptFormatError
from sam_model.data.formats.files import v1_event_files
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.io import SAMFileError

PATH = "/workspace/src/tinyparse/reader.py"
SYSTEM = "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks."
CONTEXT = "<RUNTIME_INFORMATION>The working directory is /workspace.</RUNTIME_INFORMATION>"
ISSUE = "tinyparse crashes on an empty header block. Fix it."
LONG = "".join(f"tests/test_reader.py::test_case_{n} PASSED\n" for n in range(200))  # 8,000 characters
REJECTED = "Do not delete the build folder."


def text(words: str) -> list[dict]:
    return [{"cache_prompt": False, "type": "text", "text": words}]


class Run:
    """The events of one conversation as the SDK dumps them, ids as uuid4 strings, each event once."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def add(self, kind: str, source: str, **fields) -> dict:
        self.events.append({"kind": kind, "id": f"6f1e0c2a-0000-4000-8000-{len(self.events):012d}",
                            "timestamp": "2026-01-05T10:00:00.000000", "source": source, **fields})
        return self.events[-1]

    def act(self, response: str, words: str, *calls: tuple[str, str, dict], reasoning: str | None = None) -> list:
        """The ActionEvents of one model response (its words and reasoning on the first), as the agent emits them
        before it runs them."""
        return [self.add("ActionEvent", "agent", thought=text(words) if j == 0 and words else [],
                         reasoning_content=reasoning if j == 0 else None, thinking_blocks=[],
                         responses_reasoning_item=None, action={"kind": f"{tool.title().replace('_', '')}Action", **args},
                         tool_name=tool, tool_call_id=call_id, tool_call={"id": call_id, "name": tool,
                                                                          "arguments": json.dumps(args),
                                                                          "origin": "completion"},
                         llm_response_id=response, security_risk="UNKNOWN", critic_result=None, summary=None)
                for j, (call_id, tool, args) in enumerate(calls)]

    def observe(self, action: dict, words: str, is_error: bool = False, **fields) -> dict:
        kind = f"{action['tool_name'].title().replace('_', '')}Observation"
        return self.add("ObservationEvent", "environment", tool_name=action["tool_name"],
                        tool_call_id=action["tool_call_id"], action_id=action["id"], extended_content=[],
                        observation={"kind": kind, "content": text(words), "is_error": is_error, **fields})


def terminal(words: str, exit_code: int) -> dict:
    """A TerminalObservation's fields beside its content (openhands-tools terminal/definition.py)."""
    return {"command": "", "exit_code": exit_code, "timeout": False, "full_output_save_dir": None,
            "metadata": {"exit_code": exit_code, "pid": -1, "username": "openhands", "hostname": "runtime",
                         "working_dir": "/workspace", "py_interpreter_path": "/usr/bin/python", "prefix": "",
                         "suffix": f"\n[The command completed with exit code {exit_code}.]"}}


def coding_run() -> list[dict]:
    run = Run()
    run.add("SystemPromptEvent", "agent", system_prompt=text(SYSTEM)[0], dynamic_context=text(CONTEXT)[0],
            tools=[{"kind": "TerminalTool", "description": "Execute a bash command in the terminal."}])
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": text(ISSUE), "tool_calls": None,
                                                 "reasoning_content": None, "thinking_blocks": []},
            llm_response_id=None, activated_skills=[], extended_content=[], sender=None, critic_result=None)
    run.add("ConversationStateUpdateEvent", "environment", key="execution_status", value="running")
    grep = "grep -rl parse_header /workspace/src"
    (search,) = run.act("chatcmpl-1", "Let me find where the header is parsed.", ("toolu_01", "terminal",
                        {"command": grep}), reasoning="The header parser is probably in src.")
    run.observe(search, f"{PATH}", **terminal(PATH, 0))
    note = "The parser lives in the reader module; an empty block is the likely crash."
    (think,) = run.act("chatcmpl-2", "", ("toolu_02", "think", {"thought": note}))
    run.observe(think, "Your thought has been logged.")
    view = {"command": "view", "path": PATH, "view_range": [205, 220]}
    both = run.act("chatcmpl-3", "Open the reader and run the tests.", ("toolu_03", "file_editor", view),
                   ("toolu_04", "terminal", {"command": "python -m pytest tests -q"}))
    run.observe(both[0], f"Here's the result of running `cat -n` on {PATH}:\n   212\tdef parse_header(block):",
                command="view", path=PATH, prev_exist=True, old_content=None, new_content=None)
    run.observe(both[1], LONG, **terminal(LONG, 1))  # a failing test run: no is_error, exit code 1
    (bad,) = run.act("chatcmpl-4", "", ("toolu_05", "file_editor", {"command": "str_replace", "path": PATH}))
    run.add("AgentErrorEvent", "agent", tool_name="file_editor", tool_call_id="toolu_05",
            error="Error validating args {\"command\": \"str_replace\"} for tool 'file_editor': old_str is required")
    (rm,) = run.act("chatcmpl-5", "", ("toolu_06", "terminal", {"command": "rm -rf build"}))
    run.add("UserRejectObservation", "user", tool_name="terminal", tool_call_id="toolu_06", action_id=rm["id"],
            rejection_reason=REJECTED, rejection_source="user")
    edit = {"command": "str_replace", "path": PATH, "old_str": "    key, value = block[0]",
            "new_str": "    if not block:\n        return None\n    key, value = block[0]"}
    (change,) = run.act("chatcmpl-6", "", ("toolu_07", "file_editor", edit))
    run.observe(change, f"The file {PATH} has been edited.", command="str_replace", path=PATH)
    run.add("Condensation", "environment", forgotten_event_ids=[search["id"]], summary="Searched for the parser.",
            summary_offset=1, llm_response_id="chatcmpl-7")
    (done,) = run.act("chatcmpl-8", "", ("toolu_08", "finish", {"message": "Fixed the crash."}))
    run.observe(done, "Fixed the crash.")
    run.add("ConversationStateUpdateEvent", "environment", key="execution_status", value="finished")
    return run.events


def output_line(instance: str, events: list[dict]) -> dict:
    return {"instance_id": instance, "attempt": 1, "test_result": {"git_patch": ""}, "instruction": ISSUE,
            "metadata": None, "history": events, "metrics": None, "error": None, "instance": None,
            "runtime_runs": None}


def write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def save(folder: Path, events: list[dict]) -> Path:
    """A conversation as the SDK persists it: base_state.json and one file an event, with its lock and marker."""
    write(folder / "base_state.json", {"id": folder.name, "agent": {"kind": "Agent"}, "max_iterations": 500})
    for i, e in enumerate(events):
        write(folder / "events" / f"event-{i:05d}-{e['id']}.json", e)
    (folder / "events" / ".eventlog.lock").write_text("")
    (folder / "events" / f".eventlog-count-{len(events)}.marker").write_text("")
    return folder




def test_a_coding_run_reads_as_the_model_saw_it_and_the_viewed_path_is_traced(tmp_path):
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(output_line("tinyparse__tinyparse-1", coding_run())) + "\n")
    events, report = convert(path)
    assert report.formats == {"openhands-v1": 1} and report.unmatched_results == []
    assert report.ignored == {"ConversationStateUpdateEvent events": 2, "Condensation events": 1, "reasoning": 1}
    assert {e["episode_id"] for e in events} == {"tinyparse__tinyparse-1"}
    # the model's own calls (tool_call: its name and the arguments it wrote), not the action the SDK built
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL terminal(command=grep -rl parse_header /workspace/src)",
        "CALL think(thought=The parser lives in the reader module; an empty block is the likely crash.)",
        f"CALL file_editor(command=view, path={PATH}, view_range=[205, 220])",
        "CALL terminal(command=python -m pytest tests -q)",
        f"CALL file_editor(command=str_replace, path={PATH})",
        "CALL terminal(command=rm -rf build)",
        f"CALL file_editor(command=str_replace, path={PATH}, old_str=    key, value = block[0], new_str=    if "
        "not block:\n        return None\n    key, value = block[0])",
        "CALL finish(message=Fixed the crash.)"]
    kinds = [e["kind"] for e in events]
    assert kinds[:3] == ["user", "system", "action"]  # the system prompt is the policy, no event
    # one response, two calls: its words, then both calls, then both results (one decision point, not two)
    i = step_of(events, "system", "Open the reader")
    assert kinds[i:i + 5] == ["system", "action", "action", "result", "result"]
    decision = events[i - 1]
    assert decision["text"] == "think: Your thought has been logged."
    assert decision["useful_memory_steps"] == [step_of(events, "result", "terminal: /workspace")]
    assert decision["state"]["phase"] == "file_editor" and decision["state"]["uncertainty_flags"] == ["path"]
    # the whole output (no hidden cut), and a failed test run a failure by its exit code (the SDK sets no is_error)
    test_run = events[step_of(events, "result", "terminal: tests/")]
    assert test_run["text"] == f"terminal: {LONG}"
    assert events[test_run["step"] + 1]["state"]["last_action_result"].startswith("terminal: error")
    # the call the agent could not run and the call the user rejected are failures
    failed = [e for e in events if e["kind"] == "result" and ("Error validating" in e["text"]
                                                               or "Action rejected" in e["text"])]
    assert [events[e["step"] + 1]["state"]["last_action_result"].split(" (")[0] for e in failed] == [
        "file_editor: error", "terminal: error"]
    assert failed[1]["text"] == f"terminal: Action rejected: {REJECTED}"  # the words the model was given
    chat = to_chat(coding_run())
    assert chat.messages[0] == {"role": "system", "content": f"{SYSTEM}\n{CONTEXT}"}
    assert [m.get("is_error", False) for m in chat.messages if m["role"] == "tool"] == [
        False, False, False, True, True, True, False, False]
    assert detect(coding_run()) == "openhands-v1" and not any(openhands.is_event(e) for e in coding_run())


def test_an_evaluations_output_jsonl_groups_runs_by_instance(tmp_path):
    """Each line is the run of its instance_id, which groups the split; a run that stopped before its first event
    is one bad run, named with its error, as 0.x's are."""
    path = tmp_path / "output.jsonl"
    lines = [output_line("tinyparse__tinyparse-1", coding_run()), output_line("tinyparse__tinyparse-2", coding_run()),
             {**output_line("tinyparse__tinyparse-3", []), "error": "Runtime failed to start"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert source_kind(path) == "transcripts"
    events, report = convert(path, skip_bad=True)
    assert report.formats == {"openhands-v1": 2}
    assert [str(e) for e in report.skipped] == [f"{path}:3: run tinyparse__tinyparse-3 has no events (its history is "
                                                "empty: it stopped before its first step; its error: Runtime failed "
                                                "to start)"]
    test = {e["episode_id"] for e in iter_transcript_events(path, split="test", test_fraction=0.5, skip_bad=True,
                                                           report=ImportReport())}
    train = {e["episode_id"] for e in iter_transcript_events(path, split="train", test_fraction=0.5, skip_bad=True,
                                                            report=ImportReport())}
    assert len(test) == len(train) == 1 and test != train  # by instance


def test_the_sdks_conversation_folders_are_read_in_index_order(tmp_path, capsys):
    """The SDK saves a conversation as base_state.json and events/event-{index:05d}-{id}.json: the folder of one
    conversation, its events folder and a folder of conversations are read, each conversation one run named by its
    folder; they were refused event by event as OpenHands V1 events that no reader read."""
    root = tmp_path / "conversations"
    one, two = save(root / "a1b2c3", coding_run()), save(root / "d4e5f6", coding_run()[:5])
    assert source_kind(root) == "transcripts"
    events, report = convert(root)
    assert report.formats == {"openhands-v1": 2} and {e["episode_id"] for e in events} == {"a1b2c3", "d4e5f6"}
    assert events[:len(convert(one)[0])] == convert(one)[0]
    for folder in (one, one / "events"):
        mine, report = convert(folder)
        assert report.formats == {"openhands-v1": 1} and {e["episode_id"] for e in mine} == {"a1b2c3"}
    (two / "events" / sorted(p.name for p in (two / "events").glob("event-*"))[3]).unlink()  # a gap after event 2
    assert main([str(root), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{two / 'events'}: no event file numbered 3 (event-00003-ID.json) before event-00004-" in err, err
    assert err.count("\n") == 1
    _, report = convert(root, skip_bad=True)
    assert report.formats == {"openhands-v1": 1} and len(report.skipped) == 1
    bad = one / "events" / sorted(p.name for p in (one / "events").glob("event-*"))[1]
    bad.write_text('{"kind": "MessageEvent", ')
    assert main([str(one), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: invalid JSON" in err and err.count("\n") == 1, err


def test_a_v1_conversation_and_a_0x_session_store_are_each_read_by_their_own_reader(tmp_path):
    """Both keep one event a file in an ``events`` folder: OpenHands 0.x's session store names them by id
    (``events/<N>.json``), V1's conversation by index and id (``events/event-NNNNN-ID.json``), and both have a
    ``.json`` beside them that is no run (``metadata.json``, ``base_state.json``). Given at any of its levels, each is
    read by its own reader, as one run named by its folder: neither is taken for the other, nor for a folder of 0.x
    trajectories (each .json in it a run)."""
    session = openhands_session(tmp_path / "store", "a1b2c3")
    conversation = save(tmp_path / "v1" / "d4e5f6", coding_run())
    for given, reader, episode in ((tmp_path / "store", "openhands", "a1b2c3"), (session, "openhands", "a1b2c3"),
                                   (session / "events", "openhands", "a1b2c3"),
                                   (tmp_path / "v1", "openhands-v1", "d4e5f6"),
                                   (conversation, "openhands-v1", "d4e5f6"),
                                   (conversation / "events", "openhands-v1", "d4e5f6")):
        assert source_kind(given) == "transcripts", given
        events, report = convert(given)
        assert report.formats == {reader: 1} and {e["episode_id"] for e in events} == {episode}, given
    assert v1_event_files(session) == [] and v1_event_files(tmp_path / "store") == []
    assert sessions.files(conversation) == [] and sessions.files(tmp_path / "v1") == []


def test_an_event_index_past_five_digits_is_read_after_the_others(tmp_path):
    """The SDK pads the index to five digits at least, not at most: sorted by name, event 100000 came first."""
    for i in (99999, 100000, 7):
        write(tmp_path / "events" / f"event-{i:05d}-6f1e0c2a-0000-4000-8000-000000000000.json", {})
    assert [p.name.split("-")[1] for p in v1_event_files(tmp_path)] == ["00007", "99999", "100000"]


def test_a_parallel_response_is_one_turn_only_while_its_calls_are_consecutive():
    """As events_to_messages joins them: the ActionEvents of one llm_response_id one after the other, not an action
    of the same response after another event."""
    run = Run()
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": text(ISSUE)})
    a, b = run.act("r1", "Look at both.", ("t1", "terminal", {"command": "ls"}), ("t2", "terminal", {"command": "pwd"}))
    run.add("TokenEvent", "agent", prompt_token_ids=[1, 2], response_token_ids=[3])  # no message: no break
    (c,) = run.act("r1", "", ("t3", "terminal", {"command": "id"}))
    run.observe(a, "src"), run.observe(b, "/workspace")
    (d,) = run.act("r1", "", ("t4", "terminal", {"command": "whoami"}))  # after the results: a turn of its own
    chat = to_chat(run.events)
    assert [[c["id"] for c in m.get("tool_calls", [])] for m in chat.messages if m["role"] == "assistant"] == [
        ["t1", "t2", "t3"], ["t4"]]
    assert chat.messages[1]["content"] == "Look at both." and chat.ignored == {"TokenEvent events": 1}


def test_an_agents_message_and_what_the_agent_context_added_are_words():
    run = Run()
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": text(ISSUE)},
            extended_content=text("<EXTRA_INFO>The repository uses pytest.</EXTRA_INFO>"),
            activated_skills=["testing"])
    run.add("MessageEvent", "agent", llm_message={"role": "assistant", "content": text("Which version?"),
                                                  "thinking_blocks": [{"type": "thinking", "thinking": "hm"}]},
            llm_response_id="r1")
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": [
        *text("This one:"), {"type": "image", "image_urls": ["data:image/png;base64,AA=="]}]})
    chat = to_chat(run.events)
    assert chat.messages == [
        {"role": "user", "content": f"{ISSUE}\n<EXTRA_INFO>The repository uses pytest.</EXTRA_INFO>"},
        {"role": "assistant", "content": "Which version?"}, {"role": "user", "content": "This one:"}]
    assert chat.ignored == {"reasoning": 1, "image": 1}


EVENT = {"id": "e1", "timestamp": "2026-01-05T10:00:00", "source": "agent"}
CALL = {**EVENT, "kind": "ActionEvent", "thought": [], "tool_name": "terminal", "tool_call_id": "t1",
        "llm_response_id": "r1", "tool_call": {"id": "t1", "name": "terminal", "arguments": "{}", "origin": "completion"}}
RESULT = {**EVENT, "kind": "ObservationEvent", "id": "e2", "tool_name": "terminal", "tool_call_id": "t1",
          "action_id": "e1", "observation": {"kind": "TerminalObservation", "content": text("ok"), "is_error": False}}


@pytest.mark.parametrize("events, says", [
    ([{**CALL, "tool_call": None}], "event 0 (id e1): 'tool_call' is null, expected the model's call"),
    ([{**CALL, "tool_call": {**CALL["tool_call"], "id": 7}}], "event 0 (id e1): 'tool_call.id' is a number"),
    ([{**CALL, "tool_call": {"id": "t1", "arguments": "{}"}}], "event 0 (id e1), tool_call: tool call without a name"),
    ([{**CALL, "thought": {"text": "x"}}], "event 0 (id e1): 'thought' is an object, expected a list of content parts"),
    ([CALL, {**RESULT, "tool_call_id": None}], "event 1 (id e2): 'tool_call_id' is null, expected the id of the call"),
    ([CALL, {**RESULT, "observation": "ok"}], "event 1 (id e2): 'observation' is a string, expected an object"),
    ([CALL, {**RESULT, "observation": {"content": 3}}], "event 1 (id e2): 'observation.content' is a number"),
    ([CALL, {**RESULT, "observation": {"output": "x", "error": 1}}],
     "event 1 (id e2): 'observation.error' is a number, expected true, false or the error's words"),
    ([CALL, {**RESULT, "kind": "AgentErrorEvent", "error": ["x"]}], "event 1 (id e2): 'error' is a list"),
    ([{**EVENT, "kind": "MessageEvent", "source": "user"}], "event 0 (id e1): 'llm_message' is null, expected a message"),
    ([{**EVENT, "kind": "MessageEvent", "llm_message": {"role": "tool", "content": []}}],
     "event 0 (id e1): 'llm_message.role' is 'tool', expected user, assistant or system"),
    ([{**EVENT, "kind": "SystemPromptEvent", "system_prompt": "x", "tools": []}],
     "event 0 (id e1): 'system_prompt' is a string, expected {\"type\": \"text\", \"text\": ...}"),
    ([CALL, "oops"], "event 1: an OpenHands V1 event must be an object with a string 'kind'"),
    ([CALL, {"id": 2, "source": "agent", "observation": "run", "content": "x", "cause": 1}],
     "event 1: an OpenHands 0.x event ({\"action\": ...} or {\"observation\": ...}), not a V1 one, which the openhands "
     "reader reads: try --format openhands"),
])
def test_a_bad_event_is_one_line_naming_the_file_event_and_field(events, says, tmp_path, capsys):
    path = write(tmp_path / "run.json", events)
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and str(path) in err and says in err, err


def test_events_one_a_line_are_refused_with_what_to_give(tmp_path, capsys):
    """A .jsonl of single V1 events, or one event's file, is no run: say what is (a list, a line, the folder)."""
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in coding_run()))
    single = write(tmp_path / "event.json", coding_run()[3])
    for args in ([str(path)], [str(path), "--format", "openhands-v1"], [str(single)]):
        assert main([*args[:1], str(tmp_path / "o.jsonl"), *args[1:]]) == 1
        err = capsys.readouterr().err
        assert "an OpenHands V1 event alone, not a run" in err and "give the folder" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("one_at_a_time", [False, True], ids=["one add", "an add per event"])
def test_a_running_agents_v1_events_are_added_to_scoped_memory_as_the_importer_reads_them(one_at_a_time):
    """A coding agent on the SDK feeds ScopedMemory (so sam-serve) its events as they come: they are read by the V1
    reader into the memories the importer makes of the run, and a search with the next call's state finds the
    result that printed the path. (Events with a 'kind' were taken for agent-log events: 'missing required field
    text', so no OpenHands V1 agent could add its conversation.)"""
    from sam_model.data.toolstate import TranscriptState
    from sam_model.memory import HashingEncoder, ScopedMemory

    events = coding_run()
    importer = TranscriptState("x")
    for m in to_chat(events).messages:
        importer.feed(m)
    memory = ScopedMemory(HashingEncoder(16))
    for batch in ([[e] for e in events] if one_at_a_time else [events]):
        memory.add(batch, user_id="dev", run_id="conv-1")
    got = sorted(memory.get_all(user_id="dev", run_id="conv-1")["results"], key=lambda r: r["step"])
    assert [(r["kind"], r["memory"]) for r in got] == [(e["kind"], e["text"]) for e in importer.events]
    assert f"terminal: {PATH}" in [r["memory"] for r in got]


@pytest.mark.parametrize("kind", ["v1", "v1 no events folder", "0.x"])
def test_a_conversation_or_session_folder_without_events_says_so(tmp_path, capsys, kind):
    """A V1 conversation saved before its agent ran (base_state.json, no event files) or a 0.x session whose events
    are gone (metadata.json, its cache pages and state) was read as an OpenHands .json trajectory and refused as "not
    an OpenHands trajectory", naming its record; it says what the folder is and that it holds no events."""
    if kind == "0.x":
        folder = openhands_session(tmp_path / "store", "a1b2c3")
        for q in (folder / "events").iterdir():
            q.unlink()
        says = f"{folder} is an OpenHands 0.x session folder (metadata.json) without events/<N>.json files: nothing"
    else:
        folder = save(tmp_path / "a1b2c3", coding_run()[:1])
        for q in (folder / "events").glob("event-*.json"):
            q.unlink()  # its lock and marker stay
        if kind == "v1 no events folder":
            for q in (folder / "events").iterdir():
                q.unlink()
            (folder / "events").rmdir()
        says = (f"{folder} is an OpenHands V1 conversation folder (base_state.json) without "
                "events/event-NNNNN-ID.json files: nothing to read")
    with pytest.raises(SAMFileError) as err:
        source_kind(folder)
    assert says in str(err.value) and "\n" not in str(err.value), err.value
    assert main([str(folder), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "not an OpenHands trajectory" not in err, err


@pytest.mark.parametrize("code", [0, 1, 127, -1], ids=["ok", "failed", "not-found", "still-running"])
def test_a_commands_exit_code_flags_it_in_v1_as_in_0x(code):
    """One agent's command that ran and exited non-zero was a failed call in OpenHands 0.x (event_to_dict's
    ``success``, CmdOutputObservation: exit code != 0; before that field its exit code) and an ok one in V1, whose
    SDK sets ``is_error`` only for a command it could not run: its TerminalObservation's ``exit_code`` now flags it
    as 0.x's does (-1: the soft timeout, still running, as 0.x)."""
    from test_openhands import Run as Run0x
    from test_openhands import response

    command = {"command": "python -m pytest tests -q"}
    old, saved_before_success = Run0x(), Run0x()
    for run, extras in ((old, {"success": code == 0}), (saved_before_success, {})):
        run.calls(response(1, None, ("toolu_01", "execute_bash", command)),
                  ("run", command, "run", LONG, {"command": command["command"], "metadata": {"exit_code": code}}))
        run.events[-1].update(extras)
    new = Run()
    (act,) = new.act("chatcmpl-1", "", ("toolu_01", "terminal", command))
    new.observe(act, LONG, **terminal(LONG, code))
    flags = [[m.get("is_error", False) for m in to_chat(run.events).messages if m["role"] == "tool"]
             for run in (old, saved_before_success, new)]
    assert flags == [[code != 0]] * 3
    new.events[-1]["observation"]["exit_code"] = str(code)  # a bad one is named, as a bad is_error is
    with pytest.raises(TranscriptFormatError, match="'observation.exit_code' is a string, expected the command's"):
        to_chat(new.events, "run")
