"""Hugging Face smolagents memories (sam_model.data.formats.smolagents): a CodeAgent's tool calls read from its code,
the messages write_memory_to_messages() gives read as its steps are, a folder of dumped memories, bad steps refused
in one line, and tau-bench rewritten as ToolCallingAgent memories gives the spec's events. The dumps are shaped as
smolagents 1.26 writes them (a ToolCallingAgent's and a CodeAgent's, run with a scripted model, compared by hand)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_formats import ERROR, TAU, needs_tau, smolagents_steps

from sam_model.data.formats import TranscriptFormatError, detect, smolagents_code, to_chat
from sam_model.data.formats.smolagents import step_kind
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main

TESTS = Path(__file__).resolve().parent
TIMING = {"start_time": 0.0, "end_time": 1.0, "duration": 1.0}
PROMPT = ("You are an expert assistant who can solve any task using code blobs. ...\n<code>\n"
          "def get_user(user_id: string) -> object:\n    \"\"\"Look up a user.\"\"\"\n\n"
          "def cancel(reservation_id: string, user_id: string, reason: string) -> string:\n    \"\"\"Cancel.\"\"\"\n"
          "</code>\nYou are an agent. Cabins: economy, business.")


def code_step(n: int, code: str, observed: str | None, output=None, final: bool = False, error: str | None = None,
              call: int = 1):
    """A CodeAgent's ActionStep as step.dict() writes it: one python_interpreter call holding the code, its id
    call_N, N the memory's steps before it."""
    text = f"Thought: step {n}\n<code>\n{code}\n</code>"
    return {"step_number": n, "timing": TIMING, "tool_calls": [{"id": f"call_{call}", "type": "function", "function": {
        "name": "python_interpreter", "arguments": code}}], "error": {"type": "AgentExecutionError", "message": error}
        if error else None, "model_output_message": {"role": "assistant", "content": text, "tool_calls": None,
                                                     "raw": None, "token_usage": None},
        "model_output": text, "code_action": code, "observations": observed, "observations_images": None,
        "action_output": output, "token_usage": None, "is_final_answer": final}


def code_memory() -> list[dict]:
    return [{"system_prompt": PROMPT}, {"task": "Hi, my user id is ann_lee_123.", "task_images": None},
            code_step(1, 'user = get_user("ann_lee_123")\nprint(user)',
                      "Execution logs:\n{'name': 'Ann', 'reservations': ['QX7Z9A']}\nLast output from code snippet:\n"
                      "None"),
            code_step(2, 'final_answer("I see reservation QX7Z9A. Cancel it?")',
                      "Execution logs:\nLast output from code snippet:\nI see reservation QX7Z9A. Cancel it?",
                      "I see reservation QX7Z9A. Cancel it?", final=True, call=2),
            {"task": "yes please", "task_images": None},
            code_step(1, 'rid = "QX7Z9A"\ncancel(reservation_id=rid, user_id=user["id"], reason="change of plans")',
                      None, error="Code execution failed: ValueError: already cancelled", call=4),
            code_step(2, 'final_answer("Sorry.")', "Execution logs:\nLast output from code snippet:\nSorry.", "Sorry.",
                      final=True, call=5)]


def test_a_code_agents_calls_are_read_from_its_code():
    chat = to_chat(code_memory())
    calls = [c["function"] for m in chat.messages for c in m.get("tool_calls") or []]
    # a positional argument named by the prompt's def line; a name bound to a literal read as it; user["id"], a
    # value computed at run time, left out and counted
    assert calls == [{"name": "get_user", "arguments": {"user_id": "ann_lee_123"}},
                     {"name": "cancel", "arguments": {"reservation_id": "QX7Z9A", "reason": "change of plans"}}]
    assert chat.ignored == {"code argument computed at run time": 1}
    said = [m["content"] for m in chat.messages if m["role"] == "assistant" and not m.get("tool_calls")]
    # the model output beside the code is its words, the code none; then the answers
    assert said == ["Thought: step 2", "I see reservation QX7Z9A. Cancel it?", "Thought: step 2", "Sorry."]
    failed = [m for m in chat.messages if m["role"] == "tool" and m.get("is_error")]
    assert [m["content"] for m in failed] == ["Code execution failed: ValueError: already cancelled"]
    assert chat.messages[0] == {"role": "system", "content": PROMPT}


def test_without_a_prompt_any_call_of_a_name_the_code_does_not_define_is_a_tool():
    steps = [{"task": "total of 3 and 4, then file it", "task_images": None},
             code_step(1, "from datetime import date as day\ndef add(a, b):\n    return a + b\nx = add(3, 4)\n"
                          "print(len(str(x)), day(2026, 1, 5))\nfile_total(x, note='ok')",
                       "Execution logs:\n1\nLast output from code snippet:\nNone")]
    calls = [c["function"] for m in to_chat(steps).messages for c in m.get("tool_calls") or []]
    # add, len, str, print and what the code imported (day: a date was read as a tool call) are no tools
    assert calls == [{"name": "file_total", "arguments": {"note": "ok"}}]


def test_code_that_calls_no_tool_is_the_python_interpreter_call_smolagents_records():
    steps = [{"task": "what is 17 * 3?", "task_images": None},
             {**code_step(1, "print(17 * 3)", "Execution logs:\n51\nLast output from code snippet:\nNone"),
              "observations_images": ["<the image's bytes>"]}]
    chat = to_chat(steps)
    assert chat.ignored == {"image": 1}  # counted, not read
    assert chat.messages[1]["tool_calls"][0]["function"] == {"name": "python_interpreter",
                                                             "arguments": {"code": "print(17 * 3)"}}
    assert chat.messages[2]["content"].startswith("Execution logs:\n51")


def as_messages(steps: list[dict]) -> list[dict]:
    """What agent.write_memory_to_messages() gives of these steps, [m.dict() for m in ...] (smolagents 1.26's
    ActionStep.to_messages: the model output, 'Calling tools:' and the calls as str() of their dicts, 'Observation:'
    or 'Call id: ...\\nError:' and its retry advice; a task as 'New task:')."""
    text = lambda role, t: {"role": role, "content": [{"type": "text", "text": t}], "tool_calls": None,  # noqa: E731
                            "raw": None, "token_usage": None}
    out = []
    for s in steps:
        if "system_prompt" in s:
            out.append(text("system", s["system_prompt"]))
        elif "task" in s:
            out.append(text("user", "New task:\n" + s["task"]))
        elif "plan" in s:  # PlanningStep.to_messages: the plan, then smolagents' own user turn
            out += [text("assistant", s["plan"].strip()), text("user", "Now proceed and carry out this plan.")]
        else:
            if s["model_output"] is not None:
                out.append(text("assistant", s["model_output"].strip()))
            if s["tool_calls"]:
                out.append(text("tool-call", "Calling tools:\n" + str(s["tool_calls"])))
            if s.get("observations_images"):  # what a tool returned as images: a user message of them alone
                out.append({**text("user", ""), "content": [{"type": "image", "image": "<PIL.Image.Image>"}
                                                            for _ in s["observations_images"]]})
            if s["observations"] is not None:
                out.append(text("tool-response", "Observation:\n" + s["observations"]))
            if s["error"] is not None:
                head = f"Call id: {s['tool_calls'][0]['id']}\n" if s["tool_calls"] else ""
                out.append(text("tool-response", head + "Error:\n" + s["error"]["message"] + "\nNow let's retry: take "
                                "care not to repeat previous errors! If you have retried several times, try a "
                                "completely different approach.\n"))
    return out


def test_write_memory_to_messages_reads_as_the_steps_do(tmp_path):
    """A CodeAgent's messages hold all its steps say, so both give the same events; a ToolCallingAgent's lose the
    call that raised (its step has no tool_calls, and to_messages writes none), so its decision is missing there."""
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    memory = code_memory()
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    assert detect(as_messages(memory)) == "smolagents"
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))
    tool_calling = as_messages(smolagents_steps())
    chat = to_chat(tool_calling)
    assert [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls") or []] == ["get_user"]
    assert chat.ignored == {"result without a call": 1}
    assert ERROR not in json.dumps(chat.messages)


def test_a_folder_of_dumped_memories_is_read_a_conversation_a_file(tmp_path, capsys):
    """json.dump(agent.memory.get_full_steps(), f) a conversation: a walkthrough's folder of them was read as OpenHands
    trajectories ("an event must be an object with 'action' or 'observation'"), and --format smolagents refused it."""
    folder = tmp_path / "memories"
    assert subprocess.run([sys.executable, str(TESTS / "smolagents_leave.py"), str(folder), "6", "0"]).returncode == 0
    report = ImportReport()
    events = list(iter_transcript_events(folder, report=report))
    assert report.formats == {"smolagents": 6}
    assert {e["episode_id"] for e in events} == {q.stem for q in folder.glob("*.json")}
    assert events == list(iter_transcript_events(folder, format="smolagents"))
    jsonl = tmp_path / "memories.jsonl"  # the same conversations as {"id", "system_prompt", "steps"} lines
    assert subprocess.run([sys.executable, str(TESTS / "smolagents_leave.py"), str(jsonl), "6", "0", "--jsonl"]
                          ).returncode == 0
    assert sorted(map(json.dumps, iter_transcript_events(jsonl))) == sorted(map(json.dumps, events))


@pytest.mark.parametrize("step, said", [
    ({"step_number": 1, "model_output": None, "observations": None, "tool_calls": "get_user"},
     "step 1: 'tool_calls' is a string, expected a list"),
    ({"step_number": 1, "model_output": None, "observations": 7, "tool_calls": []},
     "step 1: 'observations' is a number, expected a string or null"),
    ({"step_number": 1, "model_output": None, "observations": None, "tool_calls": [{"id": "c1", "function": {}}]},
     "step 1, call 0: a tool call without 'function.name'"),
    ({"tasks": "hi"}, "step 1: a step with keys 'tasks', expected a smolagents memory step"),
])
def test_a_bad_step_is_refused_in_one_line_naming_the_file_line_and_field(tmp_path, capsys, step, said):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "c", "steps": [{"task": "hi", "task_images": None}, step]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1: conversation c, {said}") or f"{path}:1" in err and said in err, err
    assert err.count("\n") == 1


def test_format_smolagents_forces_the_reader_and_another_is_told_to_use_it(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": smolagents_steps()}) + "\n")
    assert main([str(path), str(tmp_path / "a.jsonl"), "--format", "smolagents"]) == 0
    assert main([str(path), str(tmp_path / "b.jsonl"), "--format", "openai"]) == 1
    assert "try --format smolagents" in capsys.readouterr().err


def to_smolagents(traj: list[dict]) -> list[dict]:
    """A tau-bench trajectory as a ToolCallingAgent's memory dumps it: the system prompt's step, a task a user turn,
    an action a step (its words the model output, its one call's output the observations), the agent's words to
    the user a final_answer call."""
    steps, n = [], 0
    for i, m in enumerate(traj):
        if m["role"] == "system":
            steps.append({"system_prompt": m["content"]})
        elif m["role"] == "user":
            steps.append({"task": m["content"], "task_images": None})
        elif m["role"] == "assistant":
            n += 1
            calls = [{"id": c["id"], "type": "function", "function": {"name": c["function"]["name"], "arguments":
                                                                       json.loads(c["function"]["arguments"])}}
                     for c in m.get("tool_calls") or []] or [{"id": f"a{i}", "type": "function", "function": {
                         "name": "final_answer", "arguments": {"answer": m["content"]}}}]
            steps.append({"step_number": n, "tool_calls": calls, "model_output": m["content"] if m.get(
                "tool_calls") else None, "observations": None, "error": None, "code_action": None,
                "is_final_answer": not m.get("tool_calls")})
        else:
            steps[-1]["observations"] = m["content"]
    return steps


@needs_tau
def test_tau_bench_rewritten_as_memories_gives_the_spec_events(tmp_path):
    """Its trajectories without parallel calls (smolagents joins parallel outputs into one observation)."""
    data = [d for d in json.loads(gzip.open(TAU, "rt").read())[:40]
            if all(len(m.get("tool_calls") or []) <= 1 for m in d["traj"])]
    assert len(data) >= 20
    openai, memories = tmp_path / "openai.jsonl", tmp_path / "memories.jsonl"
    openai.write_text("".join(json.dumps({"id": f"c{n}", "messages": d["traj"]}) + "\n" for n, d in enumerate(data)))
    memories.write_text("".join(json.dumps({"id": f"c{n}", "steps": to_smolagents(d["traj"])}) + "\n"
                                for n, d in enumerate(data)))
    report = ImportReport()
    assert list(iter_transcript_events(memories, report=report)) == list(iter_transcript_events(openai))
    assert report.formats == {"smolagents": len(data)} and report.decision_points > 0


def test_parallel_calls_share_the_one_observation_smolagents_keeps(tmp_path):
    """A ToolCallingAgent runs a step's calls in parallel and keeps their outputs as one text (joined in the calls'
    id order): that text answers every call of the step. A walkthrough's 34 parallel steps were each reported as a
    call 'with no result answering it ... a conversation cut off after its last call', advice about Responses logs."""
    call = lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}}  # noqa: E731
    steps = [{"task": "Book leave for EMP-40213 in DE", "task_images": None},
             {"step_number": 1, "tool_calls": [call("call_1", "get_leave_balance", {"employee_id": "EMP-40213"}),
                                               call("call_2", "list_holidays", {"country": "DE", "year": 2026})],
              "model_output": None, "observations": '{"annual_days": 14.5}\n["2026-05-01"]', "error": None},
             {"step_number": 2, "tool_calls": [call("call_3", "final_answer", {"answer": "You have 14.5 days."})],
              "model_output": None, "observations": "You have 14.5 days.", "error": None, "is_final_answer": True}]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(steps))
    report = ImportReport()
    events = list(iter_transcript_events(path, report=report))
    assert report.unanswered == 0, report.unanswered_note()
    results = [e["text"] for e in events if e["kind"] == "result"]
    assert results == ['get_leave_balance, list_holidays: {"annual_days": 14.5}\n["2026-05-01"]']


def test_a_json_file_of_the_messages_is_one_conversation_as_a_file_of_the_steps_is(tmp_path):
    """json.dump([m.dict() for m in agent.write_memory_to_messages()], f): a walkthrough's such file was refused as
    'conversation 0: expected ... a conversation {"id": ..., "messages": [...]}', each message taken for a
    conversation, where the steps' file of the same memory was read. Both are one conversation named by the file,
    alone or in a folder."""
    memory = code_memory()
    (tmp_path / "steps").mkdir()
    (tmp_path / "messages").mkdir()
    (tmp_path / "steps" / "c1.json").write_text(json.dumps(memory))
    (tmp_path / "messages" / "c1.json").write_text(json.dumps(as_messages(memory)))
    want = list(iter_transcript_events(tmp_path / "steps" / "c1.json"))
    assert list(iter_transcript_events(tmp_path / "messages" / "c1.json")) == want
    report = ImportReport()
    assert list(iter_transcript_events(tmp_path / "messages", report=report)) == want
    assert report.formats == {"smolagents": 1}


def test_a_failed_steps_model_message_with_bad_tool_calls_is_refused_naming_the_field(tmp_path, capsys):
    """Found by fuzzing the reader: a step that failed, its model_output_message's tool_calls a number, was
    "TypeError: 'float' object is not iterable"."""
    steps = smolagents_steps()
    steps[5]["model_output_message"]["tool_calls"] = 2.5
    path = tmp_path / "m.json"
    path.write_text(json.dumps(steps))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "m.json, step 5: 'model_output_message.tool_calls' is a number, expected the list" in err, err
    assert err.count("\n") == 1



def test_a_folder_of_no_runs_is_refused_naming_smolagents_memories(tmp_path):
    """A folder given to training with no run in it (the memories written elsewhere) listed every layout it looks
    for but smolagents memories, which it reads."""
    from sam_model.data.sources import source_kind
    from sam_model.io import SAMFileError

    (tmp_path / "notes.txt").write_text("no runs here\n")
    with pytest.raises(SAMFileError, match="smolagents memories"):
        source_kind(tmp_path)


@pytest.mark.parametrize("earlier, code, expected", [
    # a loop variable: each pass a value of the list, not the rid an earlier step bound (the last pass's: a literal
    # list's passes are read one by one), and over a list the code computed not known
    ('rid = "QX7Z9A"\nprint(rid)', 'for rid in ["AB12CD", "EF34GH"]:\n    get_user(rid)', {"user_id": "EF34GH"}),
    ('rid = "QX7Z9A"\nprint(rid)', 'for rid in get_user("ann")["ids"]:\n    get_user(rid)', {}),
    # a value bound in one branch is not known in the other, nor after the if
    (None, 'if len("x") > 5:\n    rid = "AB12CD"\nelse:\n    get_user(rid)', {}),
    ('rid = "QX7Z9A"\nprint(rid)', 'if len("x") > 5:\n    rid = "AB12CD"\nget_user(rid)', {}),
    # a function's parameter and a comprehension's variable hide the name bound outside
    ('user_id = "QX7Z9A"\nprint(user_id)', 'def look(user_id):\n    return get_user(user_id)\nlook(str(1))', {}),
    ('u = "QX7Z9A"\nprint(u)', 'found = [get_user(u) for u in ["AB12CD", "EF34GH"]]', {}),
    # bound again by a tuple, +=, with ... as, := or an annotated assignment, or changed by a method
    ('rid = "QX7Z9A"\nprint(rid)', 'rid, name = get_user("ann")\nget_user(rid)', {}),
    (None, 'rid = "QX7"\nrid += "Z9A"\nget_user(rid)', {}),
    (None, 'ids = ["QX7Z9A"]\nids.append("AB12CD")\nget_user(ids)', {}),
    # changed by a method called inside a comprehension's or a lambda's own scope: the change outlives the scope
    (None, 'ids = ["QX7Z9A"]\n[ids.append(x) for x in ["AB12CD"]]\nget_user(ids)', {}),
    (None, 'ids = ["QX7Z9A"]\nadd = lambda x: ids.append(x)\nget_user(ids)', {}),
    (None, 'rid = "QX7Z9A"\nwith open("f") as rid:\n    get_user(rid)', {}),
    (None, 'rid = "QX7Z9A"\nif (rid := get_user("ann")["r"]):\n    get_user(rid)', {}),
    (None, 'rid = "QX7Z9A"\nrid: str = get_user("ann")\nget_user(rid)', {}),
    # still traced where the binding surely holds: in the branch that made it, and after a def of its own
    (None, 'if len("x") > 5:\n    rid = "AB12CD"\n    get_user(rid)', {"user_id": "AB12CD"}),
    ('rid = "QX7Z9A"\nprint(rid)', 'def look(user_id):\n    return user_id\nget_user(rid)', {"user_id": "QX7Z9A"}),
    # a parameter the call gives a literal, read where the function is called
    ('user_id = "QX7Z9A"\nprint(user_id)', 'def look(user_id):\n    return get_user(user_id)\nlook("AB12CD")',
     {"user_id": "AB12CD"}),
])
def test_a_name_a_code_binds_otherwise_than_once_to_a_literal_is_not_traced(earlier, code, expected):
    """A name is read as the literal an earlier line bound only where that binding surely holds when the call runs:
    a loop variable, a branch's binding, a parameter, a tuple's or +='s were read as the value an earlier line (or
    step) bound, so the call was labelled with a value it was not made with."""
    steps = [{"system_prompt": PROMPT}, {"task": "t", "task_images": None}]
    for k, c in enumerate([earlier, code] if earlier else [code]):
        steps.append(code_step(k + 1, c, "Execution logs:\nok\nLast output from code snippet:\nNone", call=k + 1))
    calls = [c["function"] for m in to_chat(steps).messages for c in m.get("tool_calls") or []]
    assert calls[-1] == {"name": "get_user", "arguments": expected}


def test_a_plan_in_the_messages_keeps_its_fenced_plan_as_the_steps_do(tmp_path):
    """smolagents writes a plan as its words and the plan in a ``` fence ("Here are the facts I know and the plan of
    action ...:\n```\n1. ...\n```"): the messages' reader took the fence for a CodeAgent's code and dropped it, so
    the plan said nothing of itself where the steps' reader kept it."""
    plan = ("Here are the facts I know and the plan of action that I will follow to solve the task:\n```\n1. Look up "
            "ann_lee_123 with get_user.\n2. Offer to cancel QX7Z9A.\n```")
    memory = code_memory()
    memory.insert(2, {"model_input_messages": [], "model_output_message": {"role": "assistant", "content": plan},
                      "plan": plan, "timing": TIMING, "token_usage": None})
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    said = [m["content"] for m in to_chat(as_messages(memory)).messages if m["role"] == "assistant"]
    assert plan in said
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))


@pytest.mark.parametrize("failed", [True, False])
def test_a_final_answer_is_said_after_its_steps_result_and_not_when_the_step_failed(tmp_path, failed):
    """Code that calls a tool and then final_answer(...): its answer was said to the user though the call raised and
    smolagents never gave it (the step's error, no is_final_answer), and the messages' reader said it before the
    step's result, where the steps' reader said it after."""
    code = 'cancel("QX7Z9A", "ann_lee_123", "change of plans")\nfinal_answer("Cancelled QX7Z9A.")'
    memory = code_memory()[:5]
    memory.append(code_step(1, code, None, error="Code execution failed: ValueError: already cancelled", call=4)
                  if failed else code_step(1, code, "Execution logs:\nLast output from code snippet:\nCancelled QX7Z9A.",
                                           "Cancelled QX7Z9A.", final=True, call=4))
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    for chat in (to_chat(memory), to_chat(as_messages(memory))):
        assert [m["role"] for m in chat.messages[-3:]] == ["assistant", "tool", "assistant"] if not failed else \
            [m["role"] for m in chat.messages[-2:]] == ["assistant", "tool"]
        assert ("Cancelled QX7Z9A." in [m["content"] for m in chat.messages]) is not failed
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))


def test_a_tool_calling_agents_answer_given_beside_another_call_is_refused_as_smolagents_refuses_it():
    """final_answer beside another call in one step: smolagents raises ('... do not perform any other tool calls
    than the final answer tool call!'), keeps no tool_calls and runs on; the answer was read as said to the user."""
    calls = [{"function": {"arguments": {"flight": "UA120"}, "name": "get_flight", "description": None}, "id": "p2",
              "type": "function"},
             {"function": {"arguments": {"answer": "All good."}, "name": "final_answer", "description": None},
              "id": "p3", "type": "function"}]
    step = {"step_number": 2, "timing": TIMING, "tool_calls": [], "error": {
        "type": "AgentExecutionError", "message": "If you want to return an answer, please do not perform any other "
                                                  "tool calls than the final answer tool call!"},
        "model_output_message": {"role": "assistant", "content": None, "tool_calls": calls, "raw": None,
                                 "token_usage": None}, "model_output": None, "code_action": None,
        "observations": None, "observations_images": None, "action_output": None, "token_usage": None,
        "is_final_answer": False}
    chat = to_chat([{"task": "Is UA120 on time?", "task_images": None}, step])
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool"]
    assert "All good." not in json.dumps(chat.messages)


def test_a_tool_calling_agents_python_interpreter_tool_is_a_call_like_any_other():
    """ToolCallingAgent(add_base_tools=True) has smolagents' PythonInterpreterTool, whose call's arguments are
    {"code": ...}: a memory holding one was refused, "'code_action' is an object, expected the code the agent ran",
    its call taken for a CodeAgent's code (a string), in the steps and in write_memory_to_messages() alike."""
    call = {"id": "q1", "type": "function", "function": {"name": "python_interpreter",
                                                         "arguments": {"code": "print(17 * 3)"}}}
    step = {"step_number": 1, "timing": TIMING, "tool_calls": [call], "error": None,
            "model_output_message": {"role": "assistant", "content": None, "tool_calls": [call], "raw": None,
                                     "token_usage": None}, "model_output": None, "code_action": None,
            "observations": "Stdout:\n51\n\nOutput: None", "observations_images": None, "action_output": None,
            "token_usage": None, "is_final_answer": False}
    memory = [{"task": "what is 17 * 3?", "task_images": None}, step]
    for chat in (to_chat(memory), to_chat(as_messages(memory))):
        assert [c["function"] for m in chat.messages for c in m.get("tool_calls") or []] == [
            {"name": "python_interpreter", "arguments": {"code": "print(17 * 3)"}}]
        assert chat.messages[-1]["content"] == "Stdout:\n51\n\nOutput: None"


def test_a_final_answer_the_code_may_not_have_reached_is_not_said():
    """final_answer(...) under an if: the step that did not take the branch ran on (is_final_answer false), yet its
    literal was said to the user; in the messages, which keep no is_final_answer, a conditional answer is unknown."""
    code = 'user = get_user("ann_lee_123")\nif user["vip"]:\n    final_answer("You are a VIP.")\nprint(user)'
    memory = code_memory()[:2] + [code_step(1, code, "Execution logs:\n{'vip': False}\nLast output from code "
                                                    "snippet:\nNone")]
    for chat in (to_chat(memory), to_chat(as_messages(memory))):
        assert "You are a VIP." not in [m["content"] for m in chat.messages if m["role"] == "assistant"]
        assert [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls") or []] == ["get_user"]


def test_a_failed_code_steps_printed_logs_and_error_are_one_failed_result_in_the_messages_too(tmp_path):
    """Code that printed, then raised: its step keeps both (observations "Execution logs:\\n...", and the error), which
    write_memory_to_messages() writes as two tool-responses; the messages' reader took the first for the step's
    result, not failed, said the code's final answer after it, and counted the error as 'result without a call'."""
    code = 'print("checking QX7Z9A")\ncancel("QX7Z9A", "ann_lee_123", "change of plans")\nfinal_answer("Cancelled.")'
    memory = code_memory()[:5] + [code_step(1, code, "Execution logs:\nchecking QX7Z9A\n",
                                            error="Code execution failed: ValueError: already cancelled", call=4)]
    chat = to_chat(as_messages(memory))
    assert chat.messages[-1]["role"] == "tool" and chat.messages[-1]["is_error"] is True
    assert chat.messages[-1]["content"].endswith("already cancelled")
    assert "Cancelled." not in [m["content"] for m in chat.messages]
    assert "result without a call" not in chat.ignored
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))


def test_a_tools_image_between_a_call_and_its_observation_keeps_the_call_answered(tmp_path):
    """A tool that returns an image (a browser agent's screenshot): write_memory_to_messages() puts a user message of
    the images between the step's tool-call and its tool-response; the messages' reader took it for the user's
    (empty) turn, forgot the step's calls, and counted their result as 'result without a call'."""
    memory = code_memory()
    memory[2] = {**memory[2], "observations_images": ["<the image's bytes>"]}
    chat = to_chat(as_messages(memory))
    assert "result without a call" not in chat.ignored and chat.ignored["image"] == 1
    assert "" not in [m.get("content") for m in chat.messages if m["role"] == "user"]
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))


def test_the_error_of_a_tool_calling_step_after_a_good_one_is_not_joined_to_its_result():
    """A ToolCallingAgent's step whose call raised writes no tool-call, only its Error (no 'Call id:', as it keeps no
    tool_calls); after a step whose model wrote no text it follows that step's Observation at once, yet is not its
    step's: that result stays ok, the error one of a call these messages do not hold."""
    steps = smolagents_steps()
    memory = [steps[1], steps[2], {**steps[5], "step_number": 2}]
    chat = to_chat(as_messages(memory))
    results = [m for m in chat.messages if m["role"] == "tool"]
    assert len(results) == 1 and not results[0].get("is_error") and ERROR not in results[0]["content"]
    assert chat.ignored == {"result without a call": 1}


@pytest.mark.parametrize("agent", ["code", "tool_calling", "code_dict"])
def test_one_real_run_dumped_as_steps_or_as_messages_gives_the_same_events(tmp_path, agent):
    """One scripted run of smolagents 1.26 (tests/fixtures/smolagents_scripted.py wrote it), dumped both ways, where
    the messages hold all the steps do. They differed: in the messages a CodeAgent's final_answer(reply), reply no
    literal, gave no answer (the steps have its action_output; the messages its step's last output), and a
    ToolCallingAgent's fenced words were cut as if they were a CodeAgent's code (the steps keep them); a dict it
    built (code_dict) was said as Python's str() of it in the messages, as JSON in the steps."""
    run = json.loads((TESTS / "fixtures" / "smolagents_scripted.json").read_text())[agent]
    events = {}
    for way in ("steps", "messages"):
        (tmp_path / f"{way}.json").write_text(json.dumps(run[way]))
        events[way] = [{k: v for k, v in e.items() if k != "episode_id"}
                       for e in iter_transcript_events(tmp_path / f"{way}.json")]
    assert events["messages"] == events["steps"]
    said = [e["text"] for e in events["steps"] if e["kind"] == "system"]
    assert said == ({"code": ["Thought: look the user up.", "Thought: answer with what I found.",
                              "I see {'name': 'Ann', 'reservations': ['QX7Z9A']}.", "Thought: check first.",
                              "{'name': 'Ann', 'reservations': ['QX7Z9A']} still"],
                     "tool_calling": ["I will look you up, as in:\n```\nget_user('ann_lee_123')\n```",
                                      "Your reservations:\n```py\n['QX7Z9A']\n```", "You have QX7Z9A."],
                     "code_dict": ["Thought: look up.", "Thought: answer.",
                                   '{"user": "ann_lee_123", "found": true, "n": 1}']}[agent])


def test_an_image_in_a_final_step_does_not_say_its_answer_twice(tmp_path):
    """The images of a step whose code gave final_answer(...) sit between its tool-call and tool-response: the
    messages' reader said the answer there, as if no response came, and again after the response."""
    memory = code_memory()
    memory[3] = {**memory[3], "observations_images": ["<the image's bytes>"]}
    said = [m["content"] for m in to_chat(as_messages(memory)).messages if m["role"] == "assistant"]
    assert said.count("I see reservation QX7Z9A. Cancel it?") == 1
    steps, messages = tmp_path / "steps.jsonl", tmp_path / "messages.jsonl"
    steps.write_text(json.dumps({"id": "c", "system_prompt": memory[0]["system_prompt"], "steps": memory[1:]}) + "\n")
    messages.write_text(json.dumps({"id": "c", "messages": as_messages(memory)}) + "\n")
    assert list(iter_transcript_events(messages)) == list(iter_transcript_events(steps))


@pytest.mark.parametrize("way", ["steps", "messages"])
def test_another_reader_forced_on_a_memory_names_this_one(tmp_path, capsys, way):
    """--format openai on a smolagents dump (a list: each step or message was tried as a conversation) said only
    what a conversation should be, where another format's file forced so says which reader reads it."""
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(json.loads((TESTS / "fixtures" / "smolagents_scripted.json").read_text())["code"][way]))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0
    capsys.readouterr()
    assert main([str(path), str(tmp_path / "p.jsonl"), "--format", "openai"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: conversation 0: expected" in err and "try --format smolagents" in err and err.count("\n") == 1


def test_a_tool_call_in_the_codes_own_function_is_read_where_the_function_is_called():
    """A tool call inside a function the code defines was read once, where the def was, called or not: a function
    never called made calls that never ran, one called twice made one. It is read at each call, its parameters
    given literals bound to them; one passed as a value or calling itself is counted, not guessed."""
    steps = [{"system_prompt": PROMPT}, {"task": "t", "task_images": None},
             code_step(1, 'def look(user_id):\n    return get_user(user_id)\n\ndef never():\n    get_user("ZZ")\n'
                          'look("ann")\nlook("bob")', "Execution logs:\nok\nLast output from code snippet:\nNone"),
             code_step(2, 'rid = "QX7Z9A"\ndef drop(why="change"):\n    cancel(rid, "ann", why)\n'
                          'print(list(map(look, ["cy"])))\ndrop()\n'
                          'def again(n):\n    get_user("dee")\n    again(n)\nagain(1)',
                       "Execution logs:\nok\nLast output from code snippet:\nNone", call=2)]
    chat = to_chat(steps)
    calls = [c["function"] for m in chat.messages for c in m.get("tool_calls") or []]
    assert calls == [{"name": "get_user", "arguments": {"user_id": "ann"}},
                     {"name": "get_user", "arguments": {"user_id": "bob"}},
                     {"name": "cancel", "arguments": {"reservation_id": "QX7Z9A", "user_id": "ann",
                                                      "reason": "change"}},
                     {"name": "get_user", "arguments": {"user_id": "dee"}}]
    assert chat.ignored == {"tool call in a function not traced": 2}  # look passed to map, again calling itself
    # each function calling the last twice (2**30 calls) is read through a bounded number of calls, the rest counted
    bomb = 'def f0():\n    get_user("x")\n' + "".join(f"def f{i}():\n    f{i - 1}()\n    f{i - 1}()\n"
                                                       for i in range(1, 31)) + "f30()"
    chat = to_chat([{"task": "t", "task_images": None}, code_step(1, bomb, "Execution logs:\nok")])
    assert 0 < len(chat.messages[1]["tool_calls"]) <= 1000 and chat.ignored["tool call in a function not traced"] > 0


@pytest.mark.parametrize("agent", ["code", "tool_calling", "code_dict"])
def test_a_memory_smolagents_1_17_dumped_reads_as_1_26s(tmp_path, agent):
    """smolagents 1.8 to 1.18 dump an action's number as "step" (not step_number), with no code_action nor
    is_final_answer: such a memory was no smolagents memory at all (its steps told by no kind). The same scripted
    runs dumped by 1.17 (tests/fixtures/smolagents_scripted_1.17.json) now give the events 1.26's dumps give, where
    the runs are alike (a CodeAgent's, its code fenced as 1.17's prompt asks, "Code:\\n```py ...```<end_code>");
    a ToolCallingAgent's model_output, which 1.17 wrote as its own "Called Tool: 'get_user' with arguments: ..."
    lines, is no words of the agent: its steps' words are the model's, which 1.17 kept in model_output_message
    (until conversion 173 read as none, its steps' events differing from 1.26's), while its messages lost them."""
    old = json.loads((TESTS / "fixtures" / "smolagents_scripted_1.17.json").read_text())[agent]
    new = json.loads((TESTS / "fixtures" / "smolagents_scripted.json").read_text())[agent]
    events = {}
    for name, run in (("old", old), ("new", new)):
        for way in ("steps", "messages"):
            (tmp_path / f"{name}-{way}.json").write_text(json.dumps(run[way]))
            events[name, way] = [{k: v for k, v in e.items() if k != "episode_id"}
                                 for e in iter_transcript_events(tmp_path / f"{name}-{way}.json")]
    assert "step_number" not in old["steps"][2] and old["steps"][2]["step"] == 1
    assert events["old", "steps"] == events["new", "steps"]
    if agent == "tool_calling":  # 1.17's messages say its "Called Tool" lines, not the model's words: those lost
        lost = {s["model_output_message"]["content"] for s in old["steps"] if s.get("model_output_message")}
        assert len(lost) == 2 and lost <= {e["text"] for e in events["old", "steps"]}
        assert [e["text"] for e in events["old", "messages"]] == [e["text"] for e in events["old", "steps"]
                                                                   if e["text"] not in lost]
    else:
        assert events["old", "steps"] == events["old", "messages"]
    assert not any("Called Tool" in e["text"] for e in events["old", "steps"])
    assert "CALL get_user(user_id=ann_lee_123)" in [e["text"] for e in events["old", "steps"] if e["kind"] == "action"]


def test_a_step_of_agent_logs_before_1_8_is_refused_saying_what_to_do(tmp_path):
    """Before 1.8 smolagents kept agent.logs, with no dump of its own (a program's dataclasses.asdict() of each
    step): its steps name the model's text llm_output. Such a file was no smolagents memory, refused as another
    format's; it is refused in one line naming the step and what to do."""
    logs = [{"system_prompt": PROMPT}, {"task": "Hi, my user id is ann_lee_123."},
            {"agent_memory": [], "tool_calls": [{"name": "get_user", "arguments": {"user_id": "ann_lee_123"},
                                                 "id": "call_0"}], "start_time": 0.0, "end_time": 1.0, "step": 0,
             "error": None, "duration": 1.0, "llm_output": "Action: get_user", "observations": "Ann",
             "action_output": None}]
    (tmp_path / "logs.json").write_text(json.dumps(logs))
    with pytest.raises(TranscriptFormatError, match=r"logs\.json.*step 2: a smolagents step from before 1\.8 "
                                                    r"\(agent\.logs.*get_full_steps\(\)"):
        list(iter_transcript_events(tmp_path / "logs.json"))


def test_a_plan_of_smolagents_before_1_12_is_a_planning_step():
    """1.8 to 1.11 wrote a PlanningStep's messages as model_output_message_facts and model_output_message_plan."""
    plan = {"model_output_message_facts": {"role": "assistant", "content": "facts"}, "facts": "Ann has QX7Z9A.",
            "model_output_message_plan": {"role": "assistant", "content": "plan"}, "plan": "1. Look Ann up."}
    assert step_kind(plan) == "planning"
    chat = to_chat([{"task": "Hi", "task_images": None}, plan], format="smolagents")
    assert chat.messages[-1] == {"role": "assistant", "content": "1. Look Ann up."}


@pytest.mark.parametrize("code, expected", [
    # a literal list, or a name bound to one: the tool is called once per item, with it
    ('for rid in ["AB12CD", "EF34GH"]:\n    get_user(rid)', [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('ids = ("AB12CD", "EF34GH")\nfor rid in ids:\n    print(rid)\n    get_user(user_id=rid)',
     [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('for rid, why in [("AB12CD", "moved"), ("EF34GH", "ill")]:\n    cancel(rid, "ann", why)',
     [{"reservation_id": "AB12CD", "user_id": "ann", "reason": "moved"},
      {"reservation_id": "EF34GH", "user_id": "ann", "reason": "ill"}]),
    # what a pass binds is known to the rest of it; the variable after the loop holds the last item
    ('for rid in ["AB12CD", "EF34GH"]:\n    uid = "ann"\n    cancel(rid, uid, "x")\nget_user(rid)',
     [{"reservation_id": "AB12CD", "user_id": "ann", "reason": "x"},
      {"reservation_id": "EF34GH", "user_id": "ann", "reason": "x"}, {"user_id": "EF34GH"}]),
    # a pass that may stop or be skipped, a list the body changes, an else: read once, its variable unknown
    ('for rid in ["AB12CD", "EF34GH"]:\n    if rid == "x":\n        break\n    get_user(rid)', [{}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    get_user(rid)\n    continue', [{}]),
    ('ids = ["AB12CD"]\nfor rid in ids:\n    get_user(rid)\n    ids.append("x")', [{}]),
    ('for rid in ["AB12CD"]:\n    get_user(rid)\nelse:\n    print(1)', [{}]),
    ('for rid in {"AB12CD", "EF34GH"}:\n    get_user(rid)', [{}]),  # a set's order is Python's hash's
])
def test_a_tool_called_in_a_loop_over_a_literal_list_is_read_once_per_item(code, expected):
    """for x in ids: tool(x), ids a literal list: the loop was read once, its variable unknown, so the values the
    user gave, written in the list, labelled one call made with none of them."""
    steps = [{"system_prompt": PROMPT}, {"task": "cancel AB12CD and EF34GH", "task_images": None},
             code_step(1, code, "Execution logs:\nok\nLast output from code snippet:\nNone")]
    calls = [c["function"]["arguments"] for m in to_chat(steps).messages for c in m.get("tool_calls") or []]
    assert calls == expected


def loop_calls(code: str) -> tuple[list[dict], dict]:
    """The arguments of the tool calls one CodeAgent step's code reads as, and what the reading counted."""
    steps = [{"system_prompt": PROMPT}, {"task": "cancel AB12CD and EF34GH", "task_images": None},
             code_step(1, code, "Execution logs:\nok\nLast output from code snippet:\nNone")]
    chat = to_chat(steps)
    return [c["function"]["arguments"] for m in chat.messages for c in m.get("tool_calls") or []], dict(chat.ignored)


@pytest.mark.parametrize("code, expected", [
    ('for i in range(3):\n    get_user(i)', [{"user_id": 0}, {"user_id": 1}, {"user_id": 2}]),
    ('n = 5\nfor i in range(1, n, 2):\n    get_user(user_id=i)', [{"user_id": 1}, {"user_id": 3}]),
    ('for i in range(3, 0, -2):\n    get_user(i)', [{"user_id": 3}, {"user_id": 1}]),
    ('for i, rid in enumerate(["AB12CD", "EF34GH"]):\n    cancel(rid, "ann", i)',
     [{"reservation_id": "AB12CD", "user_id": "ann", "reason": 0},
      {"reservation_id": "EF34GH", "user_id": "ann", "reason": 1}]),
    ('ids = ["AB12CD", "EF34GH"]\nfor n, rid in enumerate(ids, start=1):\n    cancel(rid, "ann", n)',
     [{"reservation_id": "AB12CD", "user_id": "ann", "reason": 1},
      {"reservation_id": "EF34GH", "user_id": "ann", "reason": 2}]),
    ('for rid, why in zip(["AB12CD", "EF34GH", "XX"], ("moved", "ill")):\n    cancel(rid, "ann", why)',
     [{"reservation_id": "AB12CD", "user_id": "ann", "reason": "moved"},
      {"reservation_id": "EF34GH", "user_id": "ann", "reason": "ill"}]),
    ('for i, (rid, why) in enumerate(zip(["AB12CD"], ["moved"])):\n    cancel(rid, i, why)',
     [{"reservation_id": "AB12CD", "user_id": 0, "reason": "moved"}]),
    # no pass: the tool never called, the code is the python_interpreter call smolagents records
    ('for i in range(0):\n    get_user(i)', [{"code": 'for i in range(0):\n    get_user(i)'}]),
    # what Python would not run as written, or a range the code took, or bounds not said: read once, as before
    ('for rid, why in zip(["AB12CD", "EF34GH"], ["moved"], strict=True):\n    cancel(rid, "ann", why)',
     [{"user_id": "ann"}]),
    ('for i in range(1, 3, 0):\n    get_user(i)', [{}]),
    ('range = lambda n: [7]\nfor i in range(3):\n    get_user(i)', [{}]),
    ('for i in range(len(get_user("a"))):\n    get_user(i)', [{"user_id": "a"}, {}]),
    ('for i, rid in enumerate(["AB12CD"]):\n    get_user(rid)\n    break', [{}]),
    ('n = 2\nfor i in range(n):\n    get_user(i)\n    n = 9', [{}]),
])
def test_a_tool_called_in_a_loop_over_range_enumerate_or_zip_is_read_once_per_pass(code, expected):
    """for i, rid in enumerate(ids) / range(3) / zip(a, b), the values literals: the loop was read once, its
    variables unknown, so the values written in the code labelled one call made with none of them."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code, expected", [
    # for i in range(len(ids)): ids[i], ids a literal list: each pass its item
    ('ids = ["AB12CD", "EF34GH"]\nfor i in range(len(ids)):\n    get_user(ids[i])',
     [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('order = {"id": "QX7Z9A", "who": ["ann"]}\ncancel(order["id"], order["who"][0], "x")',
     [{"reservation_id": "QX7Z9A", "user_id": "ann", "reason": "x"}]),
    ('ids = ["AB12CD"]\nget_user(ids[-1])\nget_user(len(ids))', [{"user_id": "AB12CD"}, {"user_id": 1}]),
    # no such item, a slice, a name bound to no literal, a len the code redefined: computed at run time, left out
    ('ids = ["AB12CD"]\nget_user(ids[3])', [{}]),
    ('ids = ["AB12CD"]\nget_user(ids[0:1])', [{}]),
    ('user = get_user("ann")\nget_user(user["id"])', [{"user_id": "ann"}, {}]),
    ('len = lambda x: 9\nids = ["AB12CD"]\nget_user(len(ids))', [{}]),
    ('ids = ["AB12CD"]\nids.append("EF34GH")\nget_user(ids[0])', [{}]),  # changed by a method: unknown
    # a default runs where the def is: its item of a name bound later is not the call's
    ('ids = ["AB12CD"]\ndef look(uid=ids[0]):\n    get_user(uid)\nids = ["EF34GH"]\nlook()', [{}]),
])
def test_an_item_of_a_literal_or_its_len_is_read_as_its_value(code, expected):
    """ids[i] and order["id"], the container a literal the code bound and the index one too: computed at run time,
    they were left out, as was range(len(ids)), so the loop over a literal list by its index was read once."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code", [
    'def look(range):\n    for i in range(2):\n        get_user(i)\nlook(lambda n: ["AB12CD"])',
    'def look(len):\n    get_user(len(["AB12CD", "EF34GH"]))\nlook(lambda ids: "AB12CD")',
    'look = lambda len: get_user(len(["AB12CD", "EF34GH"]))\nlook(max)',
])
def test_a_parameter_named_as_a_builtin_read_is_not_that_builtin(code):
    """range and len bound as a function's or lambda's parameter hold what the call gives: they were read as the
    builtins, the calls labelled with passes and lengths the code never made (0, 1; 2)."""
    assert loop_calls(code)[0] == [{}]


@pytest.mark.parametrize("code", [
    'ids = ["AB12CD"]\nalias = ids\nalias.append("EF34GH")\nget_user(len(ids))',
    'ids = ["AB12CD"]\nalias = ids\nalias += ["EF34GH"]\nget_user(len(ids))',
    'ids = ["AB12CD"]\nalias = ids\nif ids:\n    alias.append("EF34GH")\nget_user(ids)',
    'order = {"ids": ["AB12CD"]}\norder["ids"].append("EF34GH")\nget_user(len(order["ids"]))',
    'order = {"ids": ["AB12CD"]}\norder["ids"][0] = "EF34GH"\nget_user(order["ids"][0])',
    'order = {"ids": ["AB12CD"]}\ndel order["ids"][0]\nget_user(order)',
    'order = {"ids": ["AB12CD"]}\nids = order["ids"]\nids.append("EF34GH")\nget_user(len(order["ids"]))',
    'rows = [["AB12CD"]]\nfor row in rows:\n    row.append("EF34GH")\nget_user(rows[0])',
    'ids = ["AB12CD"]\ndef add(more):\n    more.append("EF34GH")\nadd(ids)\nget_user(len(ids))',
    'order = {"ids": ["AB12CD"]}\ndef empty():\n    order["ids"].clear()\nempty()\nget_user(order)',
    # a module's function given the list may change it (smolagents authorizes random by default)
    'import random\nids = ["AB12CD", "EF34GH"]\nrandom.shuffle(ids)\nget_user(ids[0])',
    'from random import shuffle\nids = ["AB12CD", "EF34GH"]\nshuffle(x=ids)\nget_user(ids[0])',
    'import heapq\norder = {"ids": ["EF34GH"]}\nheapq.heappush(order["ids"], "AB12CD")\nget_user(order["ids"][0])',
])
def test_a_literal_changed_through_another_name_or_its_item_is_no_longer_known(code):
    """A list the code bound, changed through a name bound to it (alias = ids), an item of it (order["ids"]),
    a loop's item or a function's parameter: still read as first written (ids[0], len(ids), the whole), the call
    labelled with a value it was not made with."""
    assert loop_calls(code)[0] == [{}]


@pytest.mark.parametrize("code, expected", [
    ('ids = ["AB12CD"]\nalias = ids\nalias = ["EF34GH"]\nget_user(ids)', [{"user_id": ["AB12CD"]}]),
    ('ids = ["AB12CD"]\nother = ["AB12CD"]\nother.append("EF34GH")\nget_user(ids)', [{"user_id": ["AB12CD"]}]),
    ('ids = ["AB12CD", "EF34GH"]\nfor i in range(2):\n    get_user(ids[i])\n    alias = ids\n    alias[1] = "QX7Z9A"',
     [{"user_id": "AB12CD"}, {}]),
])
def test_a_literal_is_still_known_where_nothing_changed_it(code, expected):
    """Rebinding the other name, or changing an equal list of its own, leaves the literal as written."""
    assert loop_calls(code)[0] == expected


def test_a_loop_of_more_passes_than_the_cap_is_read_once_and_counted():
    """Over 100 passes (range(10**12) never listed) the loop is read once, its variable unknown, and counted
    as such; at 100 each pass is read."""
    calls, ignored = loop_calls("for i in range(1000000000000):\n    get_user(i)")
    assert calls == [{}] and ignored[smolagents_code.LONG] == 1 and ignored["code argument computed at run time"] == 1
    calls, ignored = loop_calls(f"for i in range({smolagents_code.PASSES}):\n    get_user(i)")
    assert calls == [{"user_id": i} for i in range(smolagents_code.PASSES)] and smolagents_code.LONG not in ignored
    calls, ignored = loop_calls("for i, x in enumerate(range(500)):\n    get_user(x)")
    assert calls == [{}] and ignored[smolagents_code.LONG] == 1


def test_loops_read_pass_by_pass_inside_each_other_walk_each_loop_once(monkeypatch):
    """Loops over literal lists inside each other: each pass read the loops in it again, walking each through (the
    names it changes, whether it may stop) once a pass, so that 20 such loops of 100 items, the passes read capped
    at 1000, took half a minute to read. Each loop is walked once a read, and its calls read as before."""
    from sam_model.data.formats import smolagents_code

    walked = []
    stored = smolagents_code._stored
    monkeypatch.setattr(smolagents_code, "_stored", lambda node: walked.append(node) or stored(node))
    items = "[" + ", ".join(f'"R{i}"' for i in range(100)) + "]"
    code = "".join("    " * d + f"for v{d} in {items}:\n" for d in range(8)) + "    " * 8 + "get_user(v0)\n"
    calls = [c["function"]["arguments"] for m in to_chat([{"system_prompt": PROMPT}, {"task": "go", "task_images": None},
                                                         code_step(1, code, "ok")]).messages
             for c in m.get("tool_calls") or []]
    assert calls[:2] == [{"user_id": "R0"}, {"user_id": "R0"}] and len(calls) > 900
    assert len(walked) == len({id(n) for n in walked}) <= 8  # each loop once


@pytest.mark.parametrize("printed, said", [("3.10", "3.10"), ("None", "None"), ("(1, 'a')", '[1, "a"]'),
                                           ("True", "true"), ("{'a'}", "{'a'}")])
def test_a_final_answer_printed_reads_back_only_as_json_can_say_it(printed, said):
    """The messages' final answer is its step's printed last output: a dict, list, tuple or bool is read back and
    said as JSON, as the steps say their action_output; a number's text is kept (a version 3.10 had been said 3.1,
    where the steps say "3.10"), as are a set's and None's."""
    memory = [{"system_prompt": PROMPT}, {"task": "which version?", "task_images": None},
              code_step(1, 'v = get_user("ann")["v"]\nfinal_answer(v)',
                        f"Execution logs:\nLast output from code snippet:\n{printed}", printed, final=True)]
    answers = [m["content"] for m in to_chat(as_messages(memory)).messages if m["role"] == "assistant"
               and m.get("content") and not m.get("tool_calls")]
    assert answers[-1] == said


@pytest.mark.parametrize("content, words", [
    ("Let me look Ann up.", "Let me look Ann up."),
    ([{"type": "text", "text": "Let me look Ann up."}], "Let me look Ann up."),
    (None, None),  # the model wrote only the call: no words
])
def test_a_tool_calling_step_of_smolagents_1_15_to_1_19_says_the_models_words(content, words):
    """1.15 to 1.19 wrote "Called Tool: ..." over a ToolCallingAgent step's model_output, keeping the model's text in
    model_output_message.content only: the step had no words, though its dump held them."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_user", "arguments": {"user_id": "ann"}}}
    step = {"step": 1, **TIMING, "model_input_messages": None, "tool_calls": [call], "error": None,
            "model_output_message": {"role": "assistant", "content": content, "tool_calls": [call], "raw": None},
            "model_output": "Called Tool: 'get_user' with arguments: {'user_id': 'ann'}", "observations": "Ann",
            "observations_images": None, "action_output": None}
    chat = to_chat([{"task": "look ann up", "task_images": None}, step])
    assert chat.messages[1]["content"] == words and chat.messages[1]["tool_calls"][0]["id"] == "call_1"


def test_a_tool_calling_steps_words_come_from_its_message_only_where_smolagents_wrote_its_lines():
    """The model's text is taken from model_output_message.content only where model_output holds smolagents' own
    "Called Tool" lines: a blank model_output (no words) had taken the message's text too."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_user", "arguments": {"user_id": "ann"}}}
    step = {"step_number": 1, "timing": TIMING, "tool_calls": [call], "error": None, "model_output": "\n",
            "model_output_message": {"role": "assistant", "content": "draft", "tool_calls": [call], "raw": None},
            "observations": "Ann", "observations_images": None, "action_output": None}
    chat = to_chat([{"task": "look ann up", "task_images": None}, step])
    assert chat.messages[1]["content"] is None and chat.messages[1]["tool_calls"][0]["id"] == "call_1"


@pytest.mark.parametrize("code, expected", [
    # a call in a branch of a pass: made on some passes only, which the log does not say: its item unknown
    ('for rid in ["AB12CD", "EF34GH"]:\n    if rid == "AB12CD":\n        get_user(rid)', [{}, {}]),
    # a name the pass bound before the branch to the same literal each pass holds it whichever passes the branch
    # ran, as the literal itself would (until conversion 211 unknown there); after the branch the pass's values known
    ('for rid in ["AB12CD", "EF34GH"]:\n    uid = "ann"\n    if rid:\n        cancel(rid, uid, "x")\n    get_user(rid)',
     [{"user_id": "ann", "reason": "x"}, {"user_id": "AB12CD"}, {"user_id": "ann", "reason": "x"},
      {"user_id": "EF34GH"}]),
    ('for rid in ["AB12CD"]:\n    uid = "ann"\n    for n in range(2):\n        if n:\n            get_user(uid)',
     [{"user_id": "ann"}, {"user_id": "ann"}]),
    # but not one bound to the pass's item, after the branch, again elsewhere in the loop, or to a list
    ('for rid in ["AB12CD", "EF34GH"]:\n    uid = rid\n    if rid == "AB12CD":\n        get_user(uid)', [{}, {}]),
    ('uid = "bob"\nfor rid in ["AB12CD", "EF34GH"]:\n    if rid:\n        get_user(uid)\n    uid = "ann"', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    uid = "ann"\n    if rid:\n        get_user(uid)\n        uid = "bob"',
     [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    uid = "ann"\n    if rid > "B":\n        uid = rid\n    if rid:\n'
     '        get_user(uid)', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    ids = ["ann"]\n    if rid:\n        get_user(ids)', [{}, {}]),
    # a comprehension's first filter runs on each pass (its iterable a literal not empty): the pass's item known
    # there (until conversion 211 unknown), not in its element, which the filter may skip
    ('for rid in ["AB12CD", "EF34GH"]:\n    ok = [u for u in ["x"] if get_user(rid)]', [{"user_id": "AB12CD"},
                                                                                   {"user_id": "EF34GH"}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    ok = [get_user(rid) for u in ["x"] if u]', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    ok = [u for u in [] if get_user(rid)]', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    ok = (u for u in ["x"] if get_user(rid))', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    try:\n        get_user(rid)\n    except Exception:\n'
     '        cancel(rid, "ann", "x")', [{"user_id": "AB12CD"}, {"user_id": "ann", "reason": "x"},
                                       {"user_id": "EF34GH"}, {"user_id": "ann", "reason": "x"}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    x = get_user(rid) if rid > "B" else None', [{}, {}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    ok = rid > "B" and get_user(rid)', [{}, {}]),
    ('for i in range(2):\n    match i:\n        case 0:\n            get_user(i)', [{}, {}]),
    ('for rid in ["AB12CD"]:\n    look = lambda: get_user(rid)', [{}]),
    # outside the branch, or outside a loop, the values stay known
    ('for rid in ["AB12CD", "EF34GH"]:\n    if rid == "AB12CD":\n        print(rid)\n    get_user(rid)',
     [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('rid = "AB12CD"\nif rid:\n    get_user(rid)', [{"user_id": "AB12CD"}]),
    ('uid = "ann"\nfor rid in ["AB12CD", "EF34GH"]:\n    if rid == "AB12CD":\n        get_user(uid)',
     [{"user_id": "ann"}, {"user_id": "ann"}]),
])
def test_a_tool_called_in_a_branch_of_a_pass_does_not_know_the_passs_values(code, expected):
    """for rid in ids: if rid == "A": tool(rid): the call was read on every pass with that pass's item, as if the
    condition always held, a call never made with "B" labelled. It may run on some passes only, so the values a
    pass binds are unknown there (a wrong value makes a wrong label; an unknown one makes none)."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code", [
    'box = dict()\nrid = ["AB12CD"]\nbox["r"] = rid\nbox["r"].append("EF34GH")\nget_user(rid)',
    'out = get_user("ann")\nids = ["AB12CD"]\nout.append(ids)\nout[-1].append("EF34GH")\nget_user(ids[-1])',
    'out = []\nids = ["AB12CD"]\nout.append(ids)\nout[0].append("EF34GH")\nget_user(len(ids))',
    'ids = ["AB12CD"]\ndef f():\n    return ids\nalias = f()\nalias.append("EF34GH")\nget_user(ids)',
    'ids = ["AB12CD"]\nalias = ids or []\nalias.append("EF34GH")\nget_user(ids)',
    'rows = [["AB12CD"]]\nfor i in range(len(get_user("y"))):\n    r = rows[i]\n    r.append("EF")\nget_user(rows)',
    'ids = ["AB12CD"]\nbox = get_user("x")\nfor n in box:\n    n.append("EF")\n    box = [ids]\nget_user(ids)',
    # a list of the code's own, once it may hold one let out, or a name no longer holding it
    'ids = ["AB12CD"]\nout = []\nout.append(ids)\nout.append(1)\nfor r in out[:1]:\n    r.append("EF")\nget_user(ids)',
    'ids = ["AB12CD"]\nbox = get_user("x")\nbox["r"] = ids\ntmp = []\ntmp.append(1)\ntmp = box["r"]\n'
    'tmp.append("EF")\nget_user(ids)',
    'ids = ["AB12CD"]\nbox = get_user("x")\nbox["r"] = ids\ntmp = box["r"]\ndef f():\n    tmp = []\n'
    '    tmp.append(1)\nf()\ntmp.append("EF")\nget_user(ids)',
])
def test_a_list_changed_through_a_value_not_traced_is_no_longer_known(code):
    """A list the code bound, let out into a value the reader does not trace (a dict(), a tool's output, a function's
    return, an item picked at run time) and changed through it: read as first written, a wrong label."""
    assert loop_calls(code)[0][-1] == {}


@pytest.mark.parametrize("code, expected", [
    ('ids = ["AB12CD"]\ninfo = get_user("ann")\ninfo["seen"] = True\nfor rid in ids:\n    get_user(rid)',
     [{"user_id": "ann"}, {"user_id": "AB12CD"}]),
    ('ids = ["AB12CD"]\nbox = get_user("ann")\nif "AB12CD" in ids:\n    box.append(len(ids))\nget_user(ids)',
     [{"user_id": "ann"}, {"user_id": ["AB12CD"]}]),
    ('ids = ["AB12CD"]\nbox = ids\nother = get_user("x")\nother.append(1)\nget_user(box[0])',
     [{"user_id": "x"}, {"user_id": "AB12CD"}]),
])
def test_a_list_never_let_out_stays_known_where_a_value_not_traced_changes(code, expected):
    """A change through a tool's output touches no list the code only read (compared, measured, aliased)."""
    assert loop_calls(code)[0] == expected


RECALL = "[2 memories recalled by SAM]\n1. Ann's manager is m.chen\n2. Ann's notes:\n   leave in May"


def tool_step(n: int, name: str, observed: str) -> dict:
    """A ToolCallingAgent's ActionStep calling ``name`` once, its output ``observed``."""
    return {"step_number": n, "timing": TIMING, "tool_calls": [{"id": f"c{n}", "type": "function", "function": {
        "name": name, "arguments": {"query": "manager"}}}], "error": None, "model_output_message": None,
        "model_output": "", "code_action": None, "observations": observed, "observations_images": None,
        "action_output": None, "token_usage": None, "is_final_answer": False}


def test_sams_own_recalls_in_a_dumped_memory_are_read_as_the_marker():
    """A dump of an agent's memory that ran with SAMRecallTool holds its recalls' outputs: read as the tool's
    results, the memories were stored again (into the training data and the bank under a new step) each time the
    dump was read. A recall (its head "[N memories recalled by SAM]" and its N numbered memories) in a step that
    called recall_memory is read as the marker the step callback stores; a CodeAgent's other printed lines, an app's
    own recall_memory tool (no head), a head without its memories and another tool's output are read as they are."""
    code = 'print(recall_memory(query="manager"))\nprint("balance: 12 days")'
    printed = f"Execution logs:\n{RECALL}\nbalance: 12 days\nLast output from code snippet:\nNone"
    steps = [{"system_prompt": "You are an HR assistant."}, {"task": "Who is my manager?", "task_images": None},
             tool_step(1, "recall_memory", RECALL), code_step(2, code, printed),
             tool_step(3, "recall_memory", "1. Ann's manager is m.chen"),
             tool_step(4, "recall_memory", "[2 memories recalled by SAM]\n1. only one"),
             tool_step(5, "lookup", RECALL)]
    tools = [m["content"] for m in to_chat(steps).messages if m["role"] == "tool"]
    marker = "[2 memories recalled: stored already]"
    # the printed recall's last memory has an indented line, which the code may have printed: read as printed
    assert tools == [marker, printed,
                     "1. Ann's manager is m.chen", "[2 memories recalled by SAM]\n1. only one", RECALL], tools


@pytest.mark.parametrize("code, expected", [
    ('ids = ["AB12CD", "EF34GH"]\nprint(", ".join(ids))\nresults = []\nresults.append(get_user("ann"))\n'
     'results.append(get_user("bob"))\nget_user(ids)',
     [{"user_id": "ann"}, {"user_id": "bob"}, {"user_id": ["AB12CD", "EF34GH"]}]),
    ('ids = ["AB12CD"]\npayload = {"ids": ids}\nuser = get_user("ann")\nname = user.get("name")\nget_user(ids[0])',
     [{"user_id": "ann"}, {"user_id": "AB12CD"}]),
    ('ids = ["AB12CD", "EF34GH"]\nnote = str(ids)\nfound = []\nfound.append("start")\nfor rid in ids:\n    found.append(get_user(rid))',
     [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('ids = ["AB12CD"]\nprint(sorted(ids))\nfor q in ["ann", "bob"]:\n    rows = []\n    rows.append(q)\n'
     '    rows.append(get_user(q).lower())\nget_user(ids)',
     [{"user_id": "ann"}, {"user_id": "bob"}, {"user_id": ["AB12CD"]}]),
])
def test_a_list_let_out_stays_known_where_only_a_list_of_the_codes_own_or_a_read_changes(code, expected):
    """A list let out (", ".join(ids), {"ids": ids}, str(ids)) was made unknown by any later change in place of a
    name: results.append(x) on a list the code wrote, user.get("name") on a tool's output, which change no list let
    out (a list's own append changes it alone, a read changes nothing): each common in a CodeAgent's code, the
    calls after it lost their labels."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code, expected", [
    ('for rid in ["AB12CD", "EF34GH"]:\n    found = [cancel(rid, uid, "x") for uid in ["ann", "bob"]]',
     [{"reservation_id": "AB12CD", "reason": "x"}, {"reservation_id": "EF34GH", "reason": "x"}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    found = {uid: cancel(rid, uid, "x") for uid in range(2)}',
     [{"reservation_id": "AB12CD", "reason": "x"}, {"reservation_id": "EF34GH", "reason": "x"}]),
    # one that may not run on the pass (filtered, over a value not traced, lazy) does not know the pass's values
    ('for rid in ["AB12CD", "EF34GH"]:\n    found = [cancel(rid, uid, "x") for uid in ["ann"] if uid != rid]',
     [{"reason": "x"}, {"reason": "x"}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    found = [cancel(rid, uid, "x") for uid in get_user(rid)]',
     [{"user_id": "AB12CD"}, {"reason": "x"}, {"user_id": "EF34GH"}, {"reason": "x"}]),
    ('for rid in ["AB12CD", "EF34GH"]:\n    found = any(cancel(rid, uid, "x") for uid in ["ann"])',
     [{"reason": "x"}, {"reason": "x"}]),
])
def test_a_comprehension_that_surely_runs_in_a_pass_knows_the_passs_values(code, expected):
    """A list, set or dict comprehension over a literal list or range that is not empty, with no filter, runs in the
    pass it stands in, once an item: since conversion version 193 it was read as a part of the pass that may not run,
    the pass's item unknown in it (a label lost); one filtered, over a value not traced or lazy still may not."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code, expected", [
    ('ids = ["AB12CD"]\nd = {}\nd["k"] = ids\nd.get("k").append("EF34GH")\nget_user(ids)', {}),
    ('box = {"r": ["AB12CD"]}\nbox.get("r").append("EF34GH")\nget_user(box)', {}),
    ('ids = ["AB12CD"]\nd = {}\nd["k"] = ids\nd.setdefault("k", []).append("EF34GH")\nget_user(ids[-1])', {}),
    # a module's function's value changes nothing the code bound
    ('import datetime\nids = ["AB12CD"]\nprint(", ".join(ids))\nstamp = datetime.datetime.now().strftime("%Y")\n'
     'get_user(ids)', {"user_id": ["AB12CD"]}),
])
def test_a_list_changed_through_a_value_a_method_gave_is_no_longer_known(code, expected):
    """d.get("k").append(x) changes the list d holds under "k": a change through a method's value named no name, so
    nothing was changed (the list let out, or d's own, read as first written: a wrong label)."""
    assert loop_calls(code)[0][-1] == expected


@pytest.mark.parametrize("code, expected", [
    ('ids = ["AB12CD"]\nprint(", ".join(ids))\ninfo = get_user("ann")\ninfo["seen"] = True\ninfo.update({"n": 1})\n'
     'get_user(ids)', [{"user_id": "ann"}, {"user_id": ["AB12CD"]}]),
    # what the output holds since may be a list let out
    ('ids = ["AB12CD"]\ninfo = get_user("ann")\ninfo["r"] = ids\ninfo["r"].append("EF34GH")\nget_user(ids)',
     [{"user_id": "ann"}, {}]),
])
def test_a_tools_output_changed_by_its_own_methods_changes_no_list_let_out(code, expected):
    """A tool's output is the tool's value, no list the code let out (a tool's arguments are read, not kept):
    info["seen"] = True on it made every list let out (", ".join(ids)) unknown, the calls after it unlabelled."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("code, expected", [
    ('def look(x):\n    if x == "AB12CD":\n        get_user(x)\nfor rid in ["AB12CD", "EF34GH"]:\n    look(rid)',
     [{}, {}]),
    ('def look(x):\n    return get_user(x) if x > "B" else None\nfor rid in ["AB12CD", "EF34GH"]:\n    look(rid)',
     [{}, {}]),
    # outside its branches, or outside a loop, the function's parameters stay known
    ('def look(x):\n    get_user(x)\nfor rid in ["AB12CD", "EF34GH"]:\n    look(rid)',
     [{"user_id": "AB12CD"}, {"user_id": "EF34GH"}]),
    ('def look(x):\n    if x:\n        get_user(x)\nlook("AB12CD")', [{"user_id": "AB12CD"}]),
])
def test_a_branch_of_a_function_called_in_a_pass_does_not_know_the_passs_values(code, expected):
    """def look(x): if x == "A": get_user(x), called for each item of a loop read pass by pass: the call in the
    function's branch was read on every pass with that pass's item, a call never made with "EF34GH" labelled, the
    very reading conversion version 193 ended for a branch written in the loop itself."""
    assert loop_calls(code)[0] == expected


@pytest.mark.parametrize("after", ["   a  b\n0  1  2", "   total: 12 days"])
def test_a_printed_recall_keeps_the_code_s_indented_lines_printed_after_it(after):
    """A CodeAgent printing a recall, then lines of its own that open with spaces (a DataFrame's header, an indented
    note): read as the recall's last memory's further lines, they went into the marker, lost. Where a print's lines
    cannot be told from the last memory's, the recall is read as printed; its memories' lines followed by a line of
    no indent, or the code's last output (the tool's output whole), are read as the marker."""
    one = "[2 memories recalled by SAM]\n1. Ann's manager is m.chen\n2. Ann's leave is in May"
    marker = "[2 memories recalled: stored already]"
    code = 'print(recall_memory(query="manager"))\nprint(table)'
    steps = [{"task": "Who is my manager?", "task_images": None},
             code_step(1, code, f"Execution logs:\n{RECALL}\n{after}\nLast output from code snippet:\nNone"),
             code_step(2, code, f"Execution logs:\n{one}\n{after}\nLast output from code snippet:\nNone", call=2),
             code_step(3, code, f"Execution logs:\n{one}\nbalance: 12 days\nLast output from code snippet:\nNone",
                       call=3),
             code_step(4, 'recall_memory(query="manager")',
                       f"Execution logs:\n{after}\nLast output from code snippet:\n{RECALL}", call=4)]
    tools = [m["content"] for m in to_chat(steps).messages if m["role"] == "tool"]
    assert tools == [f"Execution logs:\n{RECALL}\n{after}\nLast output from code snippet:\nNone",
                     f"Execution logs:\n{one}\n{after}\nLast output from code snippet:\nNone",
                     f"Execution logs:\n{marker}\nbalance: 12 days\nLast output from code snippet:\nNone",
                     f"Execution logs:\n{after}\nLast output from code snippet:\n{marker}"], tools
