"""OpenHands trajectories (the event stream): a CodeAct run with function calling read as the model saw it (the
model's own calls and words, the calls of one response one turn, results by ``cause``), the path a search printed
traced to it, text-mode actions of OpenDevin, an evaluation's output.jsonl (runs by ``instance_id``, older
``[action, observation]`` pairs), a folder of saved trajectories, results kept whole, bad events in one line.

The events follow OpenHands' serialisation (openhands/events/serialization/event.py ``event_to_dict``: top-level
id, timestamp, source, message, cause, action / observation, tool_call_metadata; an action's fields under
``args``, an observation's ``content`` and ``extras``), the calls as openhands/agenthub/codeact_agent/
function_calling.py makes them (``tool_call_metadata`` = openhands/events/tool.py ToolCallMetadata, the whole
model response in it; the thought on the first action of a response), and tests/runtime/trajs/basic.json of the
OpenHands repository, a trajectory it saved."""

from __future__ import annotations

import json

import pytest
from test_swe_agent import convert, step_of, write

from sam_model.data.formats import FORMATS, detect, openhands, to_chat
from sam_model.data.formats import main as formats_main
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import iter_transcript_events, main

PATH = "/workspace/src/tinyparse/reader.py"
SYSTEM = "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks."
ISSUE = "tinyparse crashes on an empty header block. Fix it."
LONG = "".join(f"tests/test_reader.py::test_case_{n} PASSED\n" for n in range(200))  # 8,000 characters


def response(n: int, words: str | None, *calls: tuple[str, str, dict]) -> dict:
    """A litellm ModelResponse as model_dump() writes it."""
    return {"id": f"chatcmpl-{n}", "created": 1738046713, "model": "claude-3-5-sonnet-20241022",
            "object": "chat.completion", "system_fingerprint": None, "choices": [{
                "finish_reason": "tool_calls", "index": 0, "message": {
                    "content": words, "role": "assistant", "function_call": None,
                    "tool_calls": [{"index": j, "id": i, "type": "function",
                                    "function": {"name": name, "arguments": json.dumps(args)}}
                                   for j, (i, name, args) in enumerate(calls)]}}],
            "usage": {"completion_tokens": 50, "prompt_tokens": 3000, "total_tokens": 3050}}


class Run:
    """An event stream as OpenHands writes it: ids in order, each event once."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def add(self, **event) -> dict:
        self.events.append({"id": len(self.events), "timestamp": "2025-05-01T10:00:00.000000", **event})
        return self.events[-1]

    def calls(self, resp: dict, *actions: tuple[str, dict, str, str, dict]) -> None:
        """The actions of one response, each followed by its observation, as the agent runs them one by one."""
        for j, (kind, args, observation, content, extras) in enumerate(actions):
            call = resp["choices"][0]["message"]["tool_calls"][j]
            meta = {"function_name": call["function"]["name"], "tool_call_id": call["id"], "model_response": resp,
                    "total_calls_in_response": len(actions)}
            thought = resp["choices"][0]["message"]["content"] or "" if j == 0 else ""
            action = self.add(source="agent", message="", action=kind, tool_call_metadata=meta,
                              args={**args, "thought": thought}, timeout=120)
            if observation:
                self.add(source="agent", message="", cause=action["id"], observation=observation,
                         tool_call_metadata=meta, content=content, extras=extras)


def codeact_run() -> list[dict]:
    run = Run()
    run.add(source="agent", message=SYSTEM, action="system",
            args={"content": SYSTEM, "tools": [], "openhands_version": "0.39.0", "agent_class": "CodeActAgent"})
    run.add(source="user", message=ISSUE, action="message",
            args={"content": ISSUE, "file_urls": None, "image_urls": [], "wait_for_response": False})
    run.add(source="environment", message="Added workspace context", cause=1, observation="recall",
            content="Added workspace context", extras={"recall_type": "workspace_context", "repo_instructions": "",
                                                       "microagent_knowledge": []})
    bash = {"is_input": False, "blocking": False, "is_static": False, "cwd": None, "hidden": False,
            "confirmation_state": "confirmed", "security_risk": -1}
    grep = "grep -rl parse_header /workspace/src"
    run.calls(response(1, "Let me find where the header is parsed.", ("toolu_01", "execute_bash", {"command": grep})),
              ("run", {"command": grep, **bash}, "run", f"{PATH}\n", {"command": grep, "metadata": {"exit_code": 0}}))
    note = "The parser lives in the reader module; an empty block is the likely crash."
    run.calls(response(2, None, ("toolu_02", "think", {"thought": note})),
              ("think", {"thought": note}, "think", "Your thought has been logged.", {}))
    view = {"command": "view", "path": PATH, "view_range": [205, 220]}
    run.calls(response(3, "Open the reader and run the tests.", ("toolu_03", "str_replace_editor", view),
                       ("toolu_04", "execute_bash", {"command": "python -m pytest tests -q"})),
              ("read", {"path": PATH, "start": 0, "end": -1, "impl_source": "oh_aci", "view_range": [205, 220]},
               "read", f"Here's the result of running `cat -n` on {PATH}:\n   212\tdef parse_header(block):", {}),
              ("run", {"command": "python -m pytest tests -q", **bash}, "run", LONG, {"metadata": {"exit_code": 1}}))
    run.add(source="agent", message="", observation="error", content="Parameter 'old_str' is missing for "
            "command 'str_replace'.", extras={"error_id": ""})  # the controller's: no cause, no metadata
    edit = {"command": "str_replace", "path": PATH, "old_str": "    key, value = block[0]",
            "new_str": "    if not block:\n        return None\n    key, value = block[0]"}
    run.calls(response(4, None, ("toolu_05", "str_replace_editor", edit)),
              ("edit", {**edit, "file_text": None, "insert_line": None, "content": "", "start": 1, "end": -1,
                        "impl_source": "oh_aci"}, "edit", f"The file {PATH} has been edited.", {"path": PATH}))
    run.calls(response(5, "Done.", ("toolu_06", "finish", {"message": "Fixed the crash.", "task_completed": "true"})),
              ("finish", {"final_thought": "Fixed the crash.", "task_completed": "true", "outputs": {}}, "", "", {}))
    run.add(source="environment", message="", observation="agent_state_changed", content="",
            extras={"agent_state": "finished", "reason": ""})
    return run.events





def test_a_codeact_run_reads_as_the_model_saw_it_and_the_viewed_path_is_traced(tmp_path):
    events, report = convert(write(tmp_path, "session-1.json", codeact_run()))
    assert report.formats == {"openhands": 1} and report.unmatched_results == []
    assert report.ignored == {"recall observations": 1, "agent_state_changed observations": 1}
    assert {e["episode_id"] for e in events} == {"session-1"}
    # the model's own calls: its arguments, not the action's fields (thought, impl_source, security_risk, ...)
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        f"CALL execute_bash(command={'grep -rl parse_header /workspace/src'})",
        "CALL think(thought=The parser lives in the reader module; an empty block is the likely crash.)",
        f"CALL str_replace_editor(command=view, path={PATH}, view_range=[205, 220])",
        "CALL execute_bash(command=python -m pytest tests -q)",
        f"CALL str_replace_editor(command=str_replace, path={PATH}, old_str=    key, value = block[0], new_str=    if "
        "not block:\n        return None\n    key, value = block[0])",
        "CALL finish(message=Fixed the crash., task_completed=true)"]
    kinds = [e["kind"] for e in events]
    assert kinds[:3] == ["user", "system", "action"]  # the system prompt is the policy, no event
    # one response, two calls: its words, then both calls, then both results (one decision point, not two)
    i = step_of(events, "system", "Open the reader")
    assert kinds[i:i + 5] == ["system", "action", "action", "result", "result"]
    decision = events[i - 1]
    assert decision["text"].startswith("think: Your thought has been logged.")
    assert decision["useful_memory_steps"] == [step_of(events, "result", "execute_bash: /workspace")]
    assert decision["state"]["phase"] == "str_replace_editor" and decision["state"]["uncertainty_flags"] == ["path"]
    # the whole output (no hidden cut); the controller's error is a user turn, as OpenHands shows it to the model
    assert events[step_of(events, "result", "execute_bash: tests/")]["text"] == f"execute_bash: {LONG}"
    assert ("user", "Parameter 'old_str' is missing for command 'str_replace'.") in [(e["kind"], e["text"])
                                                                                     for e in events]
    assert to_chat(codeact_run()).messages[0] == {"role": "system", "content": SYSTEM}
    assert detect(codeact_run()) == "openhands"


def test_text_mode_actions_and_an_evaluations_output_jsonl(tmp_path):
    """OpenDevin's CodeAct without function calling: the action is the call (its args less the thought, which is
    the words, and OpenHands' bookkeeping); an older evaluation writes the history as [action, observation] pairs,
    a newer one as events; each line is the run of its instance_id, which groups the split."""
    run = Run()
    run.add(source="user", message=ISSUE, action="message", args={"content": ISSUE, "wait_for_response": False})
    act = run.add(source="agent", message="Running command: grep -rl parse_header src", action="run",
                  args={"command": "grep -rl parse_header src", "thought": "Let me search.", "blocking": False,
                        "keep_prompt": True, "hidden": False, "is_confirmed": "confirmed"})
    out = run.add(source="agent", message="", cause=act["id"], observation="run",
                  content="src/tinyparse/reader.py\r\n", extras={"command_id": -1, "exit_code": 0})
    go = run.add(source="user", message="Please continue.", action="message", args={"content": "Please continue."})
    read = run.add(source="agent", message="Reading file", action="read",
                   args={"path": "src/tinyparse/reader.py", "start": 0, "end": -1, "thought": "Open it.",
                         "impl_source": "default", "translated_ipython_code": "print(file_editor(**{}))"})
    got = run.add(source="agent", message="", cause=read["id"], observation="read", content="def parse_header",
                  extras={"path": "src/tinyparse/reader.py"})
    pairs = [[act, out], [go, {"observation": "null", "source": "user", "content": "", "extras": {}}], [read, got]]
    lines = [{"instance_id": "tinyparse__tinyparse-1", "instruction": ISSUE, "metadata": {"agent_class": "CodeActAgent"},
              "history": run.events, "test_result": {"git_patch": ""}, "error": None},
             {"instance_id": "tinyparse__tinyparse-2", "instruction": ISSUE, "history": pairs}]
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    events, report = convert(path)
    assert report.formats == {"openhands": 2} and report.ignored == {"null observations": 1}
    assert sorted({e["episode_id"] for e in events}) == ["tinyparse__tinyparse-1", "tinyparse__tinyparse-2"]
    first = [e for e in events if e["episode_id"] == "tinyparse__tinyparse-1"]
    assert [e["text"] for e in first if e["kind"] == "action"] == [
        "CALL run(command=grep -rl parse_header src)", "CALL read(path=src/tinyparse/reader.py, start=0, end=-1)"]
    assert [e["text"] for e in first if e["kind"] == "system"] == ["Let me search.", "Open it."]
    decision = first[step_of(first, "user", "Please continue")]
    assert decision["useful_memory_steps"] == [step_of(first, "result", "run: src/tinyparse")]
    test = {e["episode_id"] for e in iter_transcript_events(path, split="test", test_fraction=0.5)}
    train = {e["episode_id"] for e in iter_transcript_events(path, split="train", test_fraction=0.5)}
    assert len(test) == len(train) == 1 and test != train  # by instance


def test_a_folder_of_saved_trajectories_and_a_command_the_user_ran(tmp_path):
    """save_trajectory_path given a folder writes {session}.json into it; a command the user ran in the UI and
    what it printed are the user's turns (OpenHands shows them so), not the agent's calls."""
    user_run = Run()
    user_run.add(source="user", message="Running command: cat NOTES", action="run", args={"command": "cat NOTES"})
    user_run.add(source="agent", message="", cause=0, observation="run", content="ticket QX-7781", extras={})
    user_run.events += [{**e, "id": e["id"] + 2, **({"cause": e["cause"] + 2} if "cause" in e else {})}
                        for e in codeact_run()]
    folder = tmp_path / "trajectories"
    write(folder, "a1b2.json", codeact_run())
    write(folder, "c3d4.json", user_run.events)
    (folder / "llm_completions").mkdir()  # an evaluation's other files below it are not read
    write(folder / "llm_completions", "x.json", {"messages": []})
    assert source_kind(folder) == "transcripts"  # sam-train takes the folder as it is
    events, report = convert(folder)
    assert report.formats == {"openhands": 2} and report.calls == 12
    assert {e["episode_id"] for e in events} == {"a1b2", "c3d4"}
    mine = [(e["kind"], e["text"]) for e in events if e["episode_id"] == "c3d4"][:2]
    assert mine == [("user", "Running command: cat NOTES"), ("user", "ticket QX-7781")]


@pytest.mark.parametrize("doc, says", [
    ([{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}, "oops"],
     "event 1: an event must be an object with 'action' or 'observation' (one of them), got a string"),
    ([{"id": 0, "source": "agent", "action": ["run"], "args": {}}], "event 0 (id 0): 'action' is a list, expected a string"),
    ([{"id": 0, "source": "agent", "action": "run", "args": ["ls"]}], "event 0 (id 0): 'args' is a list, expected an object"),
    ([{"id": 3, "source": "agent", "action": "run", "args": {"command": "ls"}, "tool_call_metadata": {"tool_call_id": "t"}}],
     "event 0 (id 3): 'tool_call_metadata' needs a string 'function_name' and a 'tool_call_id'"),
    ([{"id": 3, "source": "agent", "action": "run", "args": {}, "tool_call_metadata": {
        "function_name": "execute_bash", "tool_call_id": "t", "model_response": {"choices": []}}}],
     "event 0 (id 3), tool_call_metadata.model_response: expected a model response"),
    ([{"id": 0, "source": "user", "action": "message", "args": {"content": ["hi"]}}],
     "event 0 (id 0): 'args.content' is a list, expected a string"),
    ([{"id": 0, "source": "agent", "observation": "run", "content": "x", "cause": [1]}],
     "event 0 (id 0): 'cause' is a list, expected an event id"),
    ({"instance_id": {"repo": "x"}, "history": []}, "'instance_id' is an object, expected a string"),
    ([{"id": 0, "source": "agent", "observation": {"kind": "run"}, "content": "x"}],  # was "unhashable type: 'dict'"
     "event 0 (id 0): 'observation' is an object, expected a string"),
])
def test_a_bad_trajectory_is_one_line_naming_the_file_event_and_field(doc, says, tmp_path, capsys):
    path = write(tmp_path, "bad.json", doc)
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and str(path) in err and says in err, err


def test_forced_on_another_document_it_says_what_it_reads(tmp_path, capsys):
    path = write(tmp_path, "x.json", {"info": {}})
    assert main([str(path), str(tmp_path / "o.jsonl"), "--format", "openhands"]) == 1
    assert "not an OpenHands trajectory: expected a list of events" in capsys.readouterr().err
    run = write(tmp_path, "run.json", codeact_run())  # and another format forced on an OpenHands file
    assert main([str(run), str(tmp_path / "o.jsonl"), "--format", "openai"]) == 1
    assert "OpenHands trajectory, which the openhands reader reads: try --format openhands" in capsys.readouterr().err


def test_the_format_is_listed_and_takes_no_other_formats_messages(capsys):
    assert "openhands" in FORMATS
    assert formats_main([]) == 0 and "openhands" in capsys.readouterr().out
    swe_step = {"action": "ls", "observation": "a.py", "thought": "look"}  # SWE-agent's steps have both
    assert not openhands.is_event(swe_step) and not openhands.is_event({"role": "assistant", "action": "ls"})
    assert openhands.is_trajectory({"instance_id": "x", "history": []})  # a run that failed before its first step
    other = [{"role": "system", "content": "x"}, {"role": "user", "content": "fix it"}]  # another agent's history
    assert not openhands.is_trajectory({"history": other}) and not openhands.is_trajectory({"instance_id": "x",
                                                                                           "history": other})
    computer_call = {"type": "computer_call", "call_id": "c", "action": {"type": "click"}, "status": "completed"}
    assert not openhands.is_event(computer_call) and detect([computer_call]) != "openhands"


def test_events_without_ids_match_by_tool_call_id_and_an_uncaused_error_answers_nothing():
    """Events written without ids (a stripped export): a result is matched by its tool_call_metadata, and an
    observation with neither cause nor metadata (the controller's error) is no call's result but a user turn."""
    events = [{k: v for k, v in e.items() if k not in ("id", "cause")} for e in codeact_run()]
    chat = to_chat(events)
    error = next(m for m in chat.messages if "Parameter 'old_str'" in (m.get("content") or ""))
    assert error["role"] == "user"
    results = [m["tool_call_id"] for m in chat.messages if m["role"] == "tool"]
    assert results == ["toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05"]


def test_an_output_jsonl_whose_first_line_is_bad_keeps_its_good_runs(tmp_path):
    """The first line that parses tells the container, as for SWE-agent runs and OTLP exports: told from a cut first
    line, an evaluation's output.jsonl read every run as a refused conversation object, so --skip-bad kept nothing
    and sam-train took the file for an agent log."""
    line = {"instance_id": "tinyparse__tinyparse-1", "instruction": ISSUE, "history": codeact_run()}
    path = tmp_path / "output.jsonl"
    path.write_text('{"instance_id": "tinyparse__tinyparse-0", "hist\n' + json.dumps(line) + "\n"
                    + json.dumps({**line, "instance_id": "tinyparse__tinyparse-2"}) + "\n")
    events, report = convert(path, skip_bad=True)
    assert report.formats == {"openhands": 2} and len(report.skipped) == 1, report.skipped
    assert "output.jsonl:1" in str(report.skipped[0])
    assert {e["episode_id"] for e in events} == {"tinyparse__tinyparse-1", "tinyparse__tinyparse-2"}
    assert source_kind(path) == "transcripts"


@pytest.mark.parametrize("ids", [True, False])
def test_an_opendevin_history_of_pairs_whose_observations_name_no_cause(tmp_path, ids):
    """OpenDevin's controller paired each action with its observation (add_history) before observations named their
    cause, so its evaluation outputs hold pairs whose observation has no 'cause' (and, before the event stream, no
    ids): the pair says whose result it is. They were read as the user's words, no call answered, no value traced."""
    def pair(action: dict, observation: dict, n: int) -> list[dict]:
        return [{**({"id": 2 * n} if ids else {}), "source": "agent", **action},
                {**({"id": 2 * n + 1} if ids else {}), "source": "agent", **observation}]
    null = {"observation": "null", "content": "", "extras": {}, "message": "No observation"}
    history = [
        pair({"source": "user", "action": "message", "args": {"content": ISSUE}}, null, 0),
        pair({"action": "run", "args": {"command": "grep -rl parse_header src", "thought": "Let me search."}},
             {"observation": "run", "content": "src/tinyparse/reader.py\r\n", "extras": {"exit_code": 0}}, 1),
        pair({"source": "user", "action": "message", "args": {"content": "Please continue."}}, null, 2),
        pair({"action": "read", "args": {"path": "src/tinyparse/reader.py", "thought": "Open it."}},
             {"observation": "read", "content": "def parse_header", "extras": {"path": "src/tinyparse/reader.py"}}, 3),
        pair({"action": "finish", "args": {"thought": "Done."}}, null, 4)]
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps({"instance_id": "tinyparse__tinyparse-1", "history": history}) + "\n")
    events, report = convert(path)
    assert [e["kind"] for e in events] == ["user", "system", "action", "result", "user", "system", "action", "result",
                                           "system", "action"]
    assert report.unmatched_results == [] and report.ignored == {"null observations": 3}
    decision = events[step_of(events, "user", "Please continue")]
    assert decision["useful_memory_steps"] == [step_of(events, "result", "run: src/tinyparse")]


def test_events_one_a_line_are_refused_with_what_to_write_not_a_format_that_refuses_them_too(tmp_path, capsys):
    """A .jsonl of single events (or one event file of an OpenHands session, given alone) is no run: it was told to
    'try --format openhands', which then said it was not an OpenHands trajectory. (The session's folder is read:
    tests/test_sessions.py.)"""
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in codeact_run()))
    write(tmp_path / "events", "0.json", codeact_run()[0])
    for args in ([str(path)], [str(path), "--format", "openhands"], [str(tmp_path / "events" / "0.json")]):
        assert main([*args[:1], str(tmp_path / "o.jsonl"), *args[1:]]) == 1
        err = capsys.readouterr().err
        assert "an OpenHands event alone, not a run" in err and "write the run's events as one list" in err, err
        assert "--format openhands" not in err and err.count("\n") == 1, err
        assert "or give the session's folder" in err, err


def test_an_output_jsonl_whose_first_run_timed_out_is_still_read_as_runs(tmp_path, capsys):
    """An evaluation writes a run that timed out (or failed to start) as EvalOutput(instance_id, test_result={},
    error=...), its history null: first in the file, that line made the reader take every run for a conversation
    object and refuse it, and sam-train took the file for an agent log; later, it was 'not an OpenHands trajectory'.
    Such a run is one bad run, named with its error; the others are read."""
    timed_out = {"instance_id": "tinyparse__tinyparse-0", "test_result": {}, "instruction": None, "metadata": None,
                 "history": None, "metrics": None, "error": "Timeout after 120 seconds", "instance": None}
    good = {"instance_id": "tinyparse__tinyparse-1", "instruction": ISSUE, "history": codeact_run()}
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (timed_out, good, {**timed_out, "history": []})))
    assert source_kind(path) == "transcripts"
    events, report = convert(path, skip_bad=True)
    assert report.formats == {"openhands": 1} and {e["episode_id"] for e in events} == {"tinyparse__tinyparse-1"}
    assert [str(e) for e in report.skipped] == [
        f"{path}:1: run tinyparse__tinyparse-0 has no events (its history is null: it stopped before its first step; "
        "its error: Timeout after 120 seconds)",
        f"{path}:3: run tinyparse__tinyparse-0 has no events (its history is empty: it stopped before its first step; "
        "its error: Timeout after 120 seconds)"]
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    assert "output.jsonl:1: run tinyparse__tinyparse-0 has no events" in capsys.readouterr().err
