"""mini-swe-agent trajectories (``{instance_id}/{instance_id}.traj.json``), written by hand as the producer's source
writes them (sam_model/data/formats/mini_swe_agent.py cites it): v1's plain messages (the command a ```bash block of the
assistant's words, its observation a user message rendered from swebench.yaml's action_observation_template), and
v2's three layouts of the same run (a text-based model's messages with ``extra``, a tool-calling model's ``bash``
calls and ``tool`` messages, a Responses API model's response objects and ``function_call_output`` items). A command
is a call of the shell tool, traced by its words; a failed command (returncode 1) is flagged; a format error is no
result and no user's words; the submission is the submitting command's result; a folder of runs, bad files in one
line, the sniff and the CLI's choice of reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_format_claude_code import to_claude_code
from test_format_codex import example_rollout
from test_format_gemini_cli import as_jsonl, to_gemini_cli
from test_formats import (
    EXAMPLES,
    anthropic_messages,
    bedrock_messages,
    gemini_contents,
    genai_messages,
    langchain_messages,
    openai_messages,
    openhands_events,
    openhands_v1_events,
    responses_items,
    swe_agent_history,
    tau2_messages,
)

from sam_model.data.formats import FORMATS, detect, is_log_message, mini_swe_agent, to_chat, tool_marks
from sam_model.data.formats import main as formats_main
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.data.validate import main as validate_main

INSTANCE = "tinyparse__tinyparse-12"
PATH = "src/tinyparse/reader.py"
SYSTEM = ("You are a helpful assistant that can interact multiple times with a computer shell to solve programming "
          "tasks.\nYour response must contain exactly ONE bash code block with ONE command.")
TASK = ("<pr_description>\nConsider the following PR description:\ntinyparse crashes on an empty header block\n"
        "</pr_description>\n\n<instructions>\n# Task Instructions\n...\n</instructions>")
SUBMIT = f"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add {PATH} && git diff --cached"
DIFF = f"diff --git a/{PATH} b/{PATH}\n--- a/{PATH}\n+++ b/{PATH}\n@@ -212 +212,2 @@\n+    if not block:\n"
FORMAT_ERROR = ("Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\nIf you have "
                "completed your assignment, please consult the first message about how to submit your solution.")
# (the THOUGHT, the command, its return code, its output); None: a turn with two blocks, refused as a format error
STEPS = [("THOUGHT: Find where the header is parsed.", "grep -rl parse_header src", 0, f"{PATH}\n"),
         ("THOUGHT: Run the tests first.", "python -m pytest tests -q", 1, "1 failed, 12 passed\n"),
         None,
         ("THOUGHT: Read the header code.", f"nl -ba {PATH} | sed -n '205,220p'", 0,
          "   212\tdef parse_header(block):\n   213\t    key, value = block[0]\n"),
         ("THOUGHT: Guard the empty block and submit.", SUBMIT, 0, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n" + DIFF)]
TWO_BLOCKS = "THOUGHT: Look at both.\n\n```{fence}\nls src\n```\n\n```{fence}\nls tests\n```"


def observation(code: int, output: str) -> str:
    """config/extra/swebench.yaml's action_observation_template, rendered."""
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def words(thought: str, command: str, fence: str = "bash") -> str:
    return f"{thought}\n\n```{fence}\n{command}\n```"


def v1_messages(steps: list = STEPS) -> list[dict]:
    """mini-swe-agent 1.x (agents/default.py): plain {role, content}; the submitting command's output raises
    Submitted before its observation is added, and its message is the output after the first line."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for step in steps:
        if step is None:
            msgs += [{"role": "assistant", "content": TWO_BLOCKS.format(fence="bash")},
                     {"role": "user", "content": FORMAT_ERROR}]
            continue
        thought, command, code, output = step
        msgs.append({"role": "assistant", "content": words(thought, command)})
        submitted = output.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
        msgs.append({"role": "user", "content": output.split("\n", 1)[1] if submitted else observation(code, output)})
    return msgs


def v1_run(messages: list[dict] | None = None, **more) -> dict:
    """save_traj's document, as run/extra/swebench.py writes it."""
    return {"info": {"exit_status": "Submitted", "submission": DIFF, "model_stats": {"instance_cost": 0.12,
                                                                                       "api_calls": 6},
                     "mini_version": "1.17.2", "config": {"agent": {"step_limit": 250}, "agent_type":
                                                          "__main__.ProgressTrackingAgent"}},
            "messages": v1_messages() if messages is None else messages, "trajectory_format": "mini-swe-agent-1",
            "instance_id": INSTANCE, **more}


def v2_run(messages: list[dict]) -> dict:
    return {"info": {"model_stats": {"instance_cost": 0.1, "api_calls": 5}, "config": {"agent": {}, "model": {}},
                     "mini_version": "2.1.0", "exit_status": "Submitted", "submission": DIFF},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1", "instance_id": INSTANCE}


def exit_message(submission: str = DIFF, status: str = "Submitted") -> dict:
    """environments/local.py's Submitted (and the agent's LimitsExceeded): the last message."""
    return {"role": "exit", "content": submission, "extra": {"exit_status": status, "submission": submission}}


def v2_text_messages(steps: list = STEPS) -> list[dict]:
    """v2 with a text-based model (models/utils/actions_text.py): the model's message with extra.actions, the
    observation a user message with extra.returncode; a format error keeps no assistant message, its words in
    extra.model_response; the submission an exit message."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    fence = "mswea_bash_command"
    for step in steps:
        if step is None:
            msgs.append({"role": "user", "content": FORMAT_ERROR, "extra": {
                "interrupt_type": "FormatError", "n_actions": 2, "model_response": TWO_BLOCKS.format(fence=fence)}})
            continue
        thought, command, code, output = step
        msgs.append({"role": "assistant", "content": words(thought, command, fence), "tool_calls": None,
                     "function_call": None, "extra": {"actions": [{"command": command}], "cost": 0.02,
                                                      "timestamp": 1.0}})
        if output.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"):
            msgs.append(exit_message())
        else:
            msgs.append({"role": "user", "content": observation(code, output),
                         "extra": {"raw_output": output, "returncode": code, "timestamp": 2.0}})
    return msgs


def v2_toolcall_messages(steps: list = STEPS) -> list[dict]:
    """v2 with a tool-calling model (actions_toolcall.py): the bash tool's calls, answered by tool messages."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for n, step in enumerate(s for s in steps if s is not None):
        thought, command, code, output = step
        call = {"id": f"call_{n}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        msgs.append({"role": "assistant", "content": thought, "tool_calls": [call],
                     "extra": {"actions": [{"command": command, "tool_call_id": f"call_{n}"}], "cost": 0.02}})
        if output.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"):
            msgs.append(exit_message())
        else:
            msgs.append({"role": "tool", "tool_call_id": f"call_{n}", "content": observation(code, output),
                         "extra": {"raw_output": output, "returncode": code}})
    return msgs


def v2_response_messages(steps: list = STEPS) -> list[dict]:
    """v2 with a Responses API model (litellm_response_model.py, actions_toolcall_response.py): the response object
    is the turn, a function_call_output item its observation."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for n, step in enumerate(s for s in steps if s is not None):
        thought, command, code, output = step
        msgs.append({"id": f"resp_{n}", "object": "response", "model": "gpt-5", "output": [
            {"type": "reasoning", "id": f"rs_{n}", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": thought}]},
            {"type": "function_call", "call_id": f"fc_{n}", "name": "bash", "arguments": json.dumps({"command": command})}],
            "extra": {"actions": [{"command": command, "tool_call_id": f"fc_{n}"}], "cost": 0.02}})
        if output.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"):
            msgs.append(exit_message())
        else:
            msgs.append({"type": "function_call_output", "call_id": f"fc_{n}", "output": observation(code, output),
                         "extra": {"raw_output": output, "returncode": code}})
    return msgs


def example_mini_swe_agent() -> dict:
    """examples/logs/mini-swe-agent.traj.json: the v1 run, as the bash-only leaderboard's runs are written."""
    return v1_run()


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def convert(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def traj(tmp_path: Path, doc: dict, name: str = INSTANCE) -> Path:
    return write(tmp_path / name / f"{name}.traj.json", doc)


def step_of(events: list[dict], kind: str, starts: str) -> int:
    return next(e["step"] for e in events if e["kind"] == kind and e["text"].startswith(starts))


# ---- what a run reads as ------------------------------------------------------------------------------------------
def test_a_v1_runs_commands_are_shell_calls_whose_words_are_traced(tmp_path):
    events, report = convert(traj(tmp_path, v1_run()))
    assert report.formats == {"mini-swe-agent": 1} and report.ignored == {"format errors": 1}
    assert {e["episode_id"] for e in events} == {INSTANCE}
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL bash(command=grep -rl parse_header src)", "CALL bash(command=python -m pytest tests -q)",
        f"CALL bash(command=nl -ba {PATH} | sed -n '205,220p')", f"CALL bash(command={SUBMIT})"]
    # the system prompt is the policy (no event), the task the user's words; the words beside a call its THOUGHT
    assert events[0]["kind"] == "user" and events[0]["text"] == TASK
    assert [e["text"] for e in events if e["kind"] == "system"][:2] == [
        "THOUGHT: Find where the header is parsed.", "THOUGHT: Run the tests first."]
    assert not any(SYSTEM in e["text"] for e in events)
    # the failed test run is flagged by its return code; the others are not
    results = [e for e in events if e["kind"] == "result"]
    assert [r["text"].split(":")[0] for r in results] == ["bash"] * 4
    after = {r["step"]: r.get("state", {}).get("last_action_result", "") for r in events if "state" in r}
    tested = step_of(events, "result", "bash: <returncode>1</returncode>")
    assert after[tested + 1].startswith("bash: error") and after[step_of(events, "result", "bash: <returncode>0")] \
        == "bash: ok"
    # the format error is no result and no user's words: the harness's template is left out, the words stay
    assert not any(FORMAT_ERROR[:30] in e["text"] for e in events)
    assert any(e["kind"] == "system" and e["text"] == TWO_BLOCKS.format(fence="bash") for e in events)
    # the submission (the output after the marker) is the submitting command's result
    assert results[-1]["text"] == f"bash: {DIFF}"
    # the path the grep printed, read by nl and added by git, is traced to the grep's output
    found = step_of(events, "result", f"bash: <returncode>0</returncode>\n<output>\n{PATH}")
    labelled = [e for e in events if "useful_memory_steps" in e]
    assert labelled and all(e["useful_memory_steps"] == [found] for e in labelled)
    assert any(e["state"]["phase"] == "bash" and e["state"]["uncertainty_flags"] == ["command"] for e in labelled)


@pytest.mark.parametrize("layout", [v2_toolcall_messages, v2_response_messages])
def test_v2s_layouts_read_as_the_v1_run(layout, tmp_path):
    """A text-based v2 model's messages read as v1's (its format error's words kept from extra.model_response); a
    tool-calling and a Responses API model's run (no format error in it) as v1's without it."""
    text, _ = convert(traj(tmp_path / "text", v2_run(v2_text_messages())))
    want, _ = convert(traj(tmp_path / "v1", v1_run()))
    assert [{**e, "text": e["text"].replace("mswea_bash_command", "bash")} for e in text] == want
    steps = [s for s in STEPS if s is not None]
    events, report = convert(traj(tmp_path / "tools", v2_run(layout(steps))))
    plain, _ = convert(traj(tmp_path / "plain", v1_run(v1_messages(steps))))
    assert events == plain
    assert report.ignored == ({"reasoning items": 4} if layout is v2_response_messages else {})
    assert detect(layout()) == detect(v2_text_messages()) == "mini-swe-agent"


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_command_on_an_absolute_path_under_the_runs_working_directory_traces_its_relative_part(version, tmp_path):
    """The task names src/tinyparse/reader.py; the agent lists the repo, then cats /testbed/src/tinyparse/reader.py.
    The run records its environment's cwd (/testbed, the SWE-bench config's: save_traj's info.config.environment):
    the cat's path is traced to the task by its part below it (before: traced whole, no decision point). A local
    environment's "" records none: traced whole."""
    task = {"role": "user", "content": f"{TASK}\nThe crash is in {PATH}."}
    steps = [("THOUGHT: List the repo.", "ls", 0, "src tests setup.py\n"),
             ("THOUGHT: Read it.", f"cat /testbed/{PATH}", 0, "def parse_header(block):\n")]
    messages = (v1_messages if version == "v1" else v2_text_messages)(steps)
    messages[1] = task
    doc = v1_run(messages) if version == "v1" else v2_run(messages)
    for cwd, needed in (("/testbed", {"command": [PATH]}), ("", None)):
        doc["info"]["config"]["environment"] = {"image": "swebench/sweb.eval.x86_64.tinyparse", "cwd": cwd}
        events, _ = convert(traj(tmp_path / (cwd.strip("/") or "local"), doc))
        labelled = [e for e in events if e.get("useful_memory_steps")]
        assert [e["meta"]["needed"] for e in labelled] == ([needed] if needed else [])
        assert all(e["useful_memory_steps"] == [step_of(events, "user", TASK[:20])] for e in labelled)


def test_a_run_that_hit_its_limits_and_the_raw_messages(tmp_path):
    """LimitsExceeded: v2 ends with an exit message answering no command, v1 with an empty user message; both are
    no event, and v2's is counted. The messages alone (live_state, ScopedMemory.add) read as the file does."""
    steps = STEPS[:2]
    v2 = [*v2_text_messages(steps), exit_message("LimitsExceeded", "LimitsExceeded")]
    events, report = convert(traj(tmp_path / "v2", v2_run(v2)))
    v1, _ = convert(traj(tmp_path / "v1", v1_run([*v1_messages(steps), {"role": "user", "content": ""}])))
    assert events == v1 and report.ignored == {"exit messages (LimitsExceeded)": 1}
    crashed = [*v2_text_messages(steps)[:-1], exit_message("docker: container gone", "RuntimeError")]
    chat = to_chat(crashed)  # an error's exit while the command ran is no output of it: counted, not its result
    assert chat.ignored == {"exit messages (RuntimeError)": 1} and chat.messages[-1]["role"] == "assistant"
    assert to_chat(v2).messages == to_chat(v2, format="mini-swe-agent").messages
    assert [m["role"] for m in to_chat(v2).messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert to_chat(v2).messages[-1]["is_error"] is True
    assert all(is_log_message(m) for m in v2_response_messages())
    assert ("mini-swe-agent messages with the commands the harness ran (extra.actions)", "mini-swe-agent") in \
        tool_marks(v2)


def test_a_v1_command_killed_at_its_timeout_is_flagged():
    """v1 shows no return code for a command it killed (ExecutionTimeoutError's message, config/default.yaml's
    timeout_template): that result is flagged too."""
    msgs = [*v1_messages(STEPS[:1]),
            {"role": "assistant", "content": words("THOUGHT: Serve it.", "python -m http.server")},
            {"role": "user", "content": "The last command <command>python -m http.server</command> timed out and has "
                                        "been killed.\nThe output of the command was:\n<output>\nServing HTTP\n"
                                        "</output>\nPlease try another command and make sure to avoid those "
                                        "requiring interactive input."}]
    results = [m for m in to_chat(msgs, format="mini-swe-agent").messages if m["role"] == "tool"]
    assert [m.get("is_error", False) for m in results] == [False, True]


def test_the_runs_own_action_regex_finds_its_commands(tmp_path):
    """A v1 run configured with another action_regex (swebench_xml.yaml's <bash_code>) recorded it in its config:
    its commands are found by it, as the agent found them."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK},
            {"role": "assistant", "content": "THOUGHT: Find it.\n\n<bash_code>grep -rl parse_header src</bash_code>"},
            {"role": "user", "content": observation(0, f"{PATH}\n")},
            {"role": "assistant", "content": "THOUGHT: Test it.\n\n<bash_code>python -m pytest -q</bash_code>"},
            {"role": "user", "content": observation(1, "1 failed\n")},
            {"role": "assistant", "content": f"THOUGHT: Read it.\n\n<bash_code>cat {PATH}</bash_code>"},
            {"role": "user", "content": observation(0, "def parse_header(block):\n")}]
    doc = v1_run(msgs)
    doc["info"]["config"]["agent"]["action_regex"] = "<bash_code>(.*?)</bash_code>"
    events, _ = convert(traj(tmp_path, doc))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL bash(command=grep -rl parse_header src)", "CALL bash(command=python -m pytest -q)",
        f"CALL bash(command=cat {PATH})"]
    assert [e["useful_memory_steps"] for e in events if "useful_memory_steps" in e] == [
        [step_of(events, "result", "bash:")]]  # the path the grep printed (the words beside the call hold no block)
    assert [e["text"] for e in events if e["kind"] == "system"][-1] == "THOUGHT: Read it."


# ---- files and folders ---------------------------------------------------------------------------------------------
def test_a_folder_of_runs_is_read_whole_and_grouped_by_instance(tmp_path):
    """mini-extra swebench's output folder: {instance_id}/{instance_id}.traj.json, preds.json and the exit statuses
    beside them (another's records); an instance run by two configurations stays in one split group."""
    out = tmp_path / "swebench"
    traj(out, v1_run())
    other = v2_run(v2_text_messages())
    other["instance_id"] = "tinyparse__tinyparse-13"
    traj(out, other, "tinyparse__tinyparse-13")
    traj(out / "sonnet", v1_run())  # the same instance by another model
    (out / "preds.json").write_text(json.dumps({INSTANCE: {"model_patch": DIFF, "instance_id": INSTANCE}}))
    (out / "exit_statuses_1.yaml").write_text("instances_by_exit_status:\n  Submitted: []\n")
    (out / "minisweagent.log").write_text("INFO ...\n")
    events, report = convert(out)
    assert report.conversations == 3 and report.formats == {"mini-swe-agent": 3}
    assert sorted({e["episode_id"] for e in events}) == [
        f"sonnet_{INSTANCE}_{INSTANCE}", f"{INSTANCE}_{INSTANCE}", "tinyparse__tinyparse-13_tinyparse__tinyparse-13"]
    groups = {e["episode_id"]: e["meta"]["group"] for e in events}
    assert groups[f"sonnet_{INSTANCE}_{INSTANCE}"] == groups[f"{INSTANCE}_{INSTANCE}"] == INSTANCE
    assert source_kind(out) == "transcripts"  # sam-train and evaluate.py take the folder as it is
    assert main([str(out), str(tmp_path / "o.jsonl"), "--format", "swe-agent"]) == 1  # a folder's files tell


def test_a_run_without_an_instance_is_grouped_by_its_files_name_and_a_jsonl_of_runs_reads(tmp_path):
    doc = v1_run()
    del doc["instance_id"]  # mini's own `mini` CLI writes none (last_mini_run.traj.json)
    events, _ = convert(traj(tmp_path / "a", doc, "last_mini_run"), split="all")
    assert {e["episode_id"] for e in events} == {"last_mini_run"}
    lines = tmp_path / "runs.jsonl"
    lines.write_text(json.dumps(doc) + "\n" + json.dumps(v1_run()) + "\n")
    events, report = convert(lines)
    assert report.formats == {"mini-swe-agent": 2}
    assert sorted({e["episode_id"] for e in events}) == ["runs-line1", "runs-line2"]


@pytest.mark.parametrize("doc, says", [
    ({**v1_run(), "messages": {"role": "user"}}, "'messages' is an object, expected the list of the run's messages"),
    ({**v1_run(), "messages": [], "info": {"exit_status": "RuntimeError", "mini_version": "1.17.2"}},
     "the trajectory holds no message (exit status RuntimeError): the run ended before its agent started"),
    ({"info": {"exit_status": "Submitted"}, "messages": []}, "not a mini-swe-agent trajectory: expected an object "
                                                             "with 'messages' and 'trajectory_format'"),
    (v1_run([{"role": "narrator", "content": "x"}]), "message 0: role 'narrator' is not a mini-swe-agent message role"),
    (v1_run([{"role": "assistant", "content": "x", "extra": "cost"}]), "message 0: 'extra' is a string"),
    (v2_run([{"role": "assistant", "content": "x", "extra": {"actions": {"command": "ls"}}}]),
     "message 0: 'extra.actions' is an object, expected the list of commands"),
    (v2_run([{"role": "assistant", "content": "x", "extra": {"actions": [{"cmd": "ls"}]}}]),
     "message 0, action 0: an action is an object without a string 'command'"),
    (v2_run([*v2_text_messages(STEPS[:1])[:3], {"role": "user", "content": "x", "extra": {"returncode": "0"}}]),
     "message 3: 'extra.returncode' is a string, expected the command's exit code"),
    ({**v1_run(), "info": {"mini_version": "1", "config": {"agent": {"action_regex": "(```"}}}},
     "'info.config.agent.action_regex' is no regex"),
    ({**v1_run(), "info": {"mini_version": "1", "config": {"environment": {"cwd": ["/testbed"]}}}},
     "'info.config.environment.cwd' is a list, expected the directory the run's commands ran in"),
])
def test_a_bad_trajectory_is_one_line_naming_the_file_and_field(doc, says, tmp_path, capsys):
    path = traj(tmp_path, doc)
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and str(path) in err and says in err, err


def test_a_truncated_trajectory_is_refused_in_one_line(tmp_path, capsys):
    """mini-swe-agent rewrites the file after every step: a copy taken meanwhile can end mid-document."""
    path = traj(tmp_path, v1_run())
    path.write_text(path.read_text()[:-200])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "invalid JSON" in err, err


# ---- what tells the format -----------------------------------------------------------------------------------------
def test_the_sniff_takes_only_mini_swe_agents_messages():
    others = [openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(), openhands_events(),
              openhands_v1_events(), example_rollout(), to_claude_code(openai_messages()), v1_messages()]
    assert not any(FORMATS["mini-swe-agent"].sniff(m) for m in others)  # v1's plain messages: the file tells them
    for layout in (v2_text_messages, v2_toolcall_messages, v2_response_messages):
        assert detect(layout()) == "mini-swe-agent"
    assert [detect(m) for m in others[:3]] == ["openai", "tau2", "anthropic"]


def test_gemini_clis_sniff_and_this_one_take_none_of_each_others_and_a_folder_of_both_reads_both(tmp_path):
    """gemini-cli sniffs second, before this reader: neither takes the other's messages, one or all, and a folder
    holding a Gemini CLI chats folder beside a run reads each by its reader."""
    mine = [layout() for layout in (v2_text_messages, v2_toolcall_messages, v2_response_messages, v1_messages)]
    gemini = as_jsonl(to_gemini_cli(openai_messages()))
    assert not any(FORMATS["gemini-cli"].sniff(m) or any(FORMATS["gemini-cli"].sniff([x]) for x in m) for m in mine)
    assert not FORMATS["mini-swe-agent"].sniff(gemini) and not any(FORMATS["mini-swe-agent"].sniff([r]) for r in gemini)
    assert [detect(m) for m in mine[:3]] == ["mini-swe-agent"] * 3 and detect(gemini) == "gemini-cli"
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "session-2026-01-05T10-00-abcd1234.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gemini))
    traj(tmp_path, v1_run())
    _, report = convert(tmp_path)
    assert report.formats == {"mini-swe-agent": 1, "gemini-cli": 1}


def test_another_formats_file_named_traj_json_is_still_its_readers(tmp_path):
    """The name alone does not take a file another reader reads: an OpenHands trajectory saved as x.traj.json, alone
    or in its folder, is read as before."""
    path = tmp_path / "run" / "x.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps(openhands_events()))
    for given in (path, path.parent):
        _, report = convert(given)
        assert report.formats == {"openhands": 1}


def test_the_cli_picks_the_reader_and_a_forced_wrong_one_names_it(tmp_path, capsys):
    path = traj(tmp_path, v1_run())
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out)]) == 0 and out.read_text().count("\n") > 5
    assert main([str(path), str(tmp_path / "f.jsonl"), "--format", "mini-swe-agent"]) == 0
    renamed = write(tmp_path / "run.json", v1_run())  # told from its content, whatever its name
    assert main([str(renamed), str(tmp_path / "r.jsonl")]) == 0
    lines = lambda p: [(e["kind"], e["text"]) for e in map(json.loads, p.read_text().splitlines())]  # noqa: E731
    assert lines(tmp_path / "r.jsonl") == lines(tmp_path / "f.jsonl") == lines(out)
    capsys.readouterr()
    assert main([str(renamed), str(tmp_path / "s.jsonl"), "--format", "swe-agent"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith("which the mini-swe-agent reader reads: try --format mini-swe-agent"), err
    assert validate_main([str(path)]) == 1  # sam-data validate: a transcript, not an agent log
    err = capsys.readouterr().err  # names the format and the command to run on this very file
    assert "this is a mini-swe-agent file" in err and f"sam-data transcripts {path} OUT.jsonl --format mini-swe-agent" in err
    assert validate_main([str(tmp_path)]) == 2  # the folder: one of agent trajectories, told by its layout
    assert f"this is a folder of agent trajectories: convert it with `sam-data transcripts {tmp_path}" in \
        capsys.readouterr().err
    assert formats_main([]) == 0 and "mini-swe-agent" in capsys.readouterr().out


def test_the_shipped_example_reads():
    events, report = convert(EXAMPLES / "mini-swe-agent.traj.json")
    assert report.formats == {"mini-swe-agent": 1} and sum("useful_memory_steps" in e for e in events) >= 1
    assert mini_swe_agent.is_trajectory(json.loads((EXAMPLES / "mini-swe-agent.traj.json").read_text()))
