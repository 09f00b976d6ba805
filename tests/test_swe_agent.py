"""SWE-agent trajectories (``.traj``): both generations of actions (1.x function calls answered by
``tool_call_ids``; text commands such as ``open src/x.py 100``, split by the reader's documented rule), labels of a
path a search printed and a later call opened, demonstrations and other agents' items kept out, the trajectory's
steps when it has no history, a retry agent's attempts, SWE-agent's output folder, and bad files in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.formats import FORMATS, detect, swe_agent
from sam_model.data.formats import main as formats_main
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

PATH = "src/tinyparse/reader.py"
SYSTEM = "You are an autonomous programmer working in a shell with a file viewer and editor."
ISSUE = "ISSUE: tinyparse crashes on an empty header block.\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"


def item(role: str, content: str, **more) -> dict:
    return {"role": role, "content": content, "agent": "primary", **more}


def text_history() -> list[dict]:
    """SWE-agent 0.x: the command is the assistant's ``action``, its output the next user item; a demonstration
    (``is_demo``) that mentions the same path comes before the issue."""
    act = lambda thought, action: item("assistant", f"{thought}\n```\n{action}\n```", thought=thought,  # noqa: E731
                                       action=action + "\n")
    return [item("system", SYSTEM),
            item("user", f"--- DEMONSTRATION ---\nopen {PATH} 5\n[File: /demo/{PATH}]", is_demo=True),
            item("user", ISSUE),
            act("Let's find where the header is parsed.", "search_dir parse_header src"),
            item("user", f"Found 2 matches for \"parse_header\" in /repo/src:\n/repo/{PATH} (2 matches)\n"
                         "End of matches for \"parse_header\" in /repo/src"),
            act("Let's look at the tests first.", "ls tests | head -n 5"),
            item("user", "test_reader.py\ntest_writer.py"),
            act("Now open the reader at the header code.", f'open "{PATH}" 212'),
            item("user", f"[File: /repo/{PATH} (400 lines total)]\n212:def parse_header(block):\n213:    key, value "
                         "= block[0]\n214:    return key"),
            act("Guard the empty block.", "edit 213:214\n    if not block:\n        return None\n    key, value = "
                                          "block[0]\n    return key\nend_of_edit"),
            item("user", "File updated."),
            act("Done.", "submit")]


def function_history() -> list[dict]:
    """SWE-agent 1.x with function calling: ``tool_calls`` on the assistant item, ``tool_call_ids`` on its
    output; the editor is one tool (``str_replace_editor``) whose ``command`` says what it does."""
    def act(i: int, name: str, args: dict) -> dict:
        call = {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        return item("assistant", f"step {i}", thought=f"step {i}", action=f"{name} ...", tool_calls=[call],
                    message_type="action", agent="main")

    out = lambda i, text: item("tool", text, tool_call_ids=[f"call_{i}"], message_type="observation",  # noqa: E731
                               agent="main")
    return [item("system", SYSTEM, message_type="system_prompt", agent="main"),
            item("user", f"Demonstration: str_replace_editor view /demo/{PATH}", is_demo=True,
                 message_type="demonstration", agent="main"),
            item("user", ISSUE, message_type="observation", agent="main"),
            act(1, "bash", {"command": "grep -rl parse_header /repo/src"}), out(1, f"/repo/{PATH}\n"),
            act(2, "bash", {"command": "python -m pytest tests -q"}), out(2, "1 failed, 12 passed"),
            act(3, "str_replace_editor", {"command": "view", "path": f"/repo/{PATH}", "view_range": [205, 220]}),
            out(3, f"Here's the result of running `cat -n` on /repo/{PATH}:\n   212\tdef parse_header(block):"),
            item("assistant", "a reviewer's note", agent="reviewer", message_type="thought"),
            act(4, "submit", {}), out(4, "diff --git a/src/tinyparse/reader.py b/src/tinyparse/reader.py")]


def write(tmp_path: Path, name: str, doc: dict) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def convert(path: Path, **kw) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def step_of(events: list[dict], kind: str, starts: str) -> int:
    return next(e["step"] for e in events if e["kind"] == kind and e["text"].startswith(starts))


def test_text_commands_become_calls_whose_path_is_traced_to_the_search_result(tmp_path):
    events, report = convert(write(tmp_path, "tinyparse-1.traj", {"history": text_history(), "trajectory": [],
                                                                   "info": {"exit_status": "submitted"}}))
    assert report.formats == {"swe-agent": 1} and report.ignored == {"demonstration items": 1}
    assert {e["episode_id"] for e in events} == {"tinyparse-1"}
    calls = [e["text"] for e in events if e["kind"] == "action"]
    assert calls == ["CALL search_dir(search_term=parse_header, dir=src)", "CALL bash(command=ls tests | head -n 5)",
                     f"CALL open(path={PATH}, line_number=212)",
                     'CALL edit(start_line=213, end_line=214, replacement_text=    if not block:\n        return None\n'
                     '    key, value = block[0]\n    return key)', "CALL submit()"]
    # the words are the thought, not the command again; the output of a command is its result
    assert [e["text"] for e in events if e["kind"] == "system"][0] == "Let's find where the header is parsed."
    found = step_of(events, "result", "search_dir: Found 2 matches")
    opened = next(e for e in events if e["kind"] == "result" and e["text"].startswith("bash:"))  # the decision event
    assert opened["useful_memory_steps"] == [found]  # not the demonstration, which said the path first
    assert opened["state"]["phase"] == "open" and opened["state"]["uncertainty_flags"] == ["path"]


def test_function_calls_are_matched_by_tool_call_ids_and_the_viewed_path_is_traced(tmp_path):
    events, report = convert(write(tmp_path, "tinyparse-1.traj", {"history": function_history()}))
    assert report.formats == {"swe-agent": 1} and report.unmatched_results == []
    assert report.ignored == {"demonstration items": 1, "items of agent reviewer": 1}
    assert not any("reviewer" in e["text"] for e in events)
    results = [e["text"].split(":")[0] for e in events if e["kind"] == "result"]
    assert results == ["bash", "bash", "str_replace_editor", "submit"]  # each output named by the call it answers
    decision = next(e for e in events if e.get("state", {}).get("phase") == "str_replace_editor"
                    and "useful_memory_steps" in e)
    assert decision["useful_memory_steps"] == [step_of(events, "result", f"bash: /repo/{PATH}")]
    assert decision["state"]["uncertainty_flags"] == ["path"]  # 205 and 220 were never said: not labels
    assert detect(function_history()) == detect(text_history()) == "swe-agent"


def test_a_trajectory_without_history_is_read_from_its_steps(tmp_path):
    steps = [{"action": "find_file reader.py\n", "observation": f"Found 1 matches:\n/repo/{PATH}",
              "response": "x", "thought": "Find it.", "state": "{}"},
             {"action": "scroll_down", "observation": "(nothing new)", "thought": "Look around."},
             {"action": f"open {PATH}", "observation": "[File]", "thought": "Open it."}]
    events, report = convert(write(tmp_path, "t.traj", {"trajectory": steps, "info": {}}))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL find_file(file_name=reader.py)", "CALL scroll_down()", f"CALL open(path={PATH})"]
    assert events[step_of(events, "result", "scroll_down")]["useful_memory_steps"] == [
        step_of(events, "result", "find_file")]


def test_a_step_without_a_command_keeps_its_output(tmp_path):
    """A step with no action (SWE-agent's autosubmission after a cost limit, a forfeit) still has what the
    environment said; it was dropped, only the thought read."""
    steps = [{"action": "find_file reader.py", "observation": f"Found 1 matches:\n/repo/{PATH}", "thought": "Find."},
             {"action": "", "observation": "Exited (autosubmitted)", "thought": "Exit due to cost limit"}]
    events, _ = convert(write(tmp_path, "t.traj", {"trajectory": steps}))
    assert [(e["kind"], e["text"]) for e in events][-2:] == [("system", "Exit due to cost limit"),
                                                              ("user", "Exited (autosubmitted)")]


def test_a_retry_agents_attempts_are_episodes_of_one_group_and_its_folder_copies_are_not_read_twice(tmp_path):
    attempt = {"history": text_history(), "trajectory": [], "info": {}}
    run = tmp_path / "run"
    write(run, "tinyparse-1/tinyparse-1.traj", {"attempts": [attempt, attempt], **attempt})
    write(run, "tinyparse-1/attempt_0/tinyparse-1.traj", attempt)  # the retry agent's own copies
    write(run, "tinyparse-1/attempt_1/tinyparse-1.traj", attempt)
    write(run, "other-cfg/tinyparse-1/tinyparse-1.traj", attempt)  # the same instance run by another configuration
    events, report = convert(run)
    assert report.conversations == 3 and report.formats == {"swe-agent": 3}
    assert sorted({e["episode_id"] for e in events}) == ["other-cfg_tinyparse-1_tinyparse-1",
                                                         "tinyparse-1_tinyparse-1-attempt0",
                                                         "tinyparse-1_tinyparse-1-attempt1"]
    assert {e["meta"]["group"] for e in events} == {"tinyparse-1"}  # one instance: one split
    single, _ = convert(run / "tinyparse-1" / "tinyparse-1.traj")
    assert {e["episode_id"] for e in single} == {"tinyparse-1-attempt0", "tinyparse-1-attempt1"}


@pytest.mark.parametrize("doc, says", [
    ({"info": {"exit_status": "submitted"}, "environment": "main"},
     "not a SWE-agent trajectory: expected an object with 'history'"),
    ({"history": [], "trajectory": []}, "the trajectory holds no step"),
    ({"history": {"role": "user"}}, "'history' is an object, expected a list"),
    ([{"history": []}], "not a SWE-agent trajectory: expected an object with 'history' (the messages the model "
                        "saw) or 'trajectory' (its steps), as SWE-agent writes {instance_id}.traj; got a list"),
    ({"history": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x", "tool_call_ids": "c1"}]},
     "history item 1: 'tool_call_ids' is a string"),
    ({"history": [{"role": "observer", "content": "hi", "message_type": "observation"}]},
     "history item 0: role 'observer' is not a SWE-agent history role"),
    ({"history": [{"role": "assistant", "content": "x", "tool_calls": [{"id": "1", "function": {"arguments": "{}"}}],
                   "message_type": "action"}]}, "history item 0, tool call 0: tool call without a name"),
    ({"trajectory": [{"action": "ls", "observation": "", "state": {"working_dir": 5}}]},
     "trajectory step 0: 'state' has working_dir a number"),
])
def test_a_bad_trajectory_is_one_line_naming_the_file_and_item(doc, says, tmp_path, capsys):
    path = write(tmp_path, "bad.traj", doc)
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and f"{path}" in err and says in err, err


def test_a_folder_without_trajectories_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x")
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 1
    assert "is a folder without SWE-agent .traj files" in capsys.readouterr().err


@pytest.mark.parametrize("action, args", [
    ('find_file "reader.py" src', {"file_name": "reader.py", "dir": "src"}),
    # a quoted argument over lines; two words and no text: windowed_edit_replace's edit <search> <replace>
    ("edit 'old text' 'new\ntext'", {"search": "old text", "replace": "new\ntext"}),
    # a command that is not SWE-agent's own, or holds shell syntax, is the shell's: its whole line
    ("cd src && grep -n parse_header reader.py | head", {"command": "cd src && grep -n parse_header reader.py | head"}),
    ("find_file x.py | head -n 3", {"command": "find_file x.py | head -n 3"}),
    # an open quote: split at whitespace
    ("search_file don't reader.py", {"search_term": "don't", "file": "reader.py"}),
    ("edit 5:5\nx = 1\nend_of_edit\n", {"start_line": 5, "end_line": 5, "replacement_text": "x = 1"}),
    ("goto 583", {"line_number": "583"}),
    # '#' starts a comment only at the start of a word outside quotes, as in bash (shlex cut 'a#b src' to 'a')
    ("search_dir issue#12 src", {"search_term": "issue#12", "dir": "src"}),
    ("find_file \"#x\" src  # find it", {"file_name": "#x", "dir": "src"}),
    ("ls src  # list it\nfind_file \"#x\" src", {"command": "ls src  # list it\nfind_file \"#x\" src"}),
    ("python -m pytest tests/x.py -q", {"command": "python -m pytest tests/x.py -q"}),
    # 1.x's text form of a function call: --NAME takes the words after it
    ("str_replace_editor view /testbed/x.py --view_range 240 260",
     {"command": "view", "path": "/testbed/x.py", "view_range": [240, 260]}),
    ("str_replace_editor insert /testbed/x.py --insert_line 5 --new_str '    pass'",
     {"command": "insert", "path": "/testbed/x.py", "insert_line": 5, "new_str": "    pass"}),
    # SWE-agent's signatures name an own command's words (a bundle's edit by the form its words fit), a word past
    # them keeps its position's argN
    ("goto 583 600", {"line_number": "583", "arg2": "600"}),
    ("str_replace_editor view /testbed/x.py 12", {"command": "view", "path": "/testbed/x.py", "arg3": "12"}),
    ("edit 5 7\nx = 1\nend_of_edit", {"start_line": "5", "end_line": "7", "replacement_text": "x = 1"}),
    ("edit\nx = 1\nend_of_edit", {"replacement_text": "x = 1"}),  # cursors_edit_linting: between the cursors
    ("edit 'x = 1'", {"text": "x = 1"}),  # windowed_edit_rewrite
    ("insert '    pass' 212", {"text": "    pass", "line": "212"}),
    ("create tests/test_x.py", {"filename": "tests/test_x.py"}),
    ("filemap src/x.py", {"file_path": "src/x.py"}),
    # a line range of no plausible line numbers is a word (int() refused its 5000 digits: the import died)
    ("edit " + "9" * 5000 + ":2\nx\nend_of_edit", {"arg1": "9" * 5000 + ":2", "replacement_text": "x"}),
])
def test_the_text_command_rule(action, args):
    call = swe_agent.command_call(action, "a", "t.traj")
    assert call is not None and json.loads(json.dumps(call["function"]["arguments"])) == args
    assert (call["function"]["name"] == "bash") == (set(args) == {"command"})
    assert swe_agent.command_call("  \n", "a", "t.traj") is swe_agent.command_call("# a note", "a", "t.traj") is None


def test_the_format_is_listed_and_a_traj_is_training_data(tmp_path, capsys):
    assert "swe-agent" in FORMATS
    assert formats_main([]) == 0 and "swe-agent" in capsys.readouterr().out
    path = write(tmp_path, "x.traj", {"history": text_history()})
    assert source_kind(path) == "transcripts"  # sam-train and sam-eval take it as it is
    # JSON Lines of trajectories, one run a line, as sam-data transcripts reads them: sam-train read the file as an
    # agent log ("missing required field 'episode_id'")
    lines = tmp_path / "runs.jsonl"
    lines.write_text("".join(json.dumps({"history": text_history(), "info": {}}) + "\n" for _ in range(2)))
    assert source_kind(lines) == "transcripts" and len({e["episode_id"] for e in convert(lines)[0]}) == 2


def test_a_traj_gzipped_or_named_json_reads_and_a_bad_run_in_a_folder_is_skipped(tmp_path):
    import gzip

    doc = {"history": text_history()}
    want, _ = convert(write(tmp_path, "a/tinyparse-1.traj", doc))
    (tmp_path / "b").mkdir()
    with gzip.open(tmp_path / "b" / "tinyparse-1.traj.gz", "wt") as fh:
        fh.write(json.dumps(doc))
    assert convert(tmp_path / "b" / "tinyparse-1.traj.gz")[0] == want
    assert convert(write(tmp_path, "c/tinyparse-1.json", doc))[0] == want  # told from the content
    write(tmp_path, "d/broken.traj", {"info": {}})
    write(tmp_path, "d/tinyparse-1.traj", doc)
    with pytest.raises(TranscriptFormatError, match="broken.traj: not a SWE-agent trajectory"):
        convert(tmp_path / "d")
    events, report = convert(tmp_path / "d", skip_bad=True)
    assert report.conversations == 1 and len(report.skipped) == 1 and events == want


def test_a_jsonl_of_runs_or_spans_whose_first_line_is_bad_keeps_its_good_lines(tmp_path):
    """The first line that parses tells the container: told from the first line, a cut or non-UTF-8 first line made
    every run (or OTLP export) a refused conversation object, so --skip-bad kept nothing and sam-train took the
    file for an agent log."""
    run = json.dumps({"history": text_history(), "info": {}})
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"history": [\n' + run + "\n" + run + "\n")
    events, report = convert(runs, skip_bad=True)
    assert report.conversations == 2 and len(report.skipped) == 1 and "runs.jsonl:1" in str(report.skipped[0])
    assert {e["episode_id"] for e in events} == {"runs-line2", "runs-line3"}
    assert source_kind(runs) == "transcripts"
    spans = tmp_path / "spans.jsonl"
    otlp = json.loads((Path(__file__).parents[1] / "examples" / "logs" / "otel-traces.json").read_text())
    spans.write_bytes(b'{"resourceSpans": "\xff"}\n' + json.dumps(otlp).encode() + b"\n")
    events, report = convert(spans, skip_bad=True)
    assert report.conversations == 1 and len(report.skipped) == 1 and events
    assert source_kind(spans) == "transcripts"


def needed(events: list[dict], call: str) -> tuple[list[int] | None, dict]:
    """The labels and needed values of the decision point of the first call whose text starts with ``call``."""
    at = next(k for k, e in enumerate(events) if e["kind"] == "action" and e["text"].startswith(call))
    decision = next(e for e in reversed(events[:at]) if e["kind"] in ("result", "user"))  # before the turn
    return decision.get("useful_memory_steps"), decision.get("meta", {}).get("needed", {})


def obs(text: str, open_file: str = "n/a") -> dict:
    """An observation as SWE-agent 0.x's next_step_template writes it."""
    return item("user", f"{text}\n(Open file: {open_file})\n(Current directory: /testbed)\nbash-$")


def test_a_0x_shell_command_is_a_bash_call_and_a_path_under_the_directory_is_traced(tmp_path):
    """Every text command was a call of its first word: the second `ls -F` was labelled by the first (its flag a
    value), `python -m pytest ...` traced -m and pytest; a command the system prompt documents is SWE-agent's own;
    the directory each observation ends with traces /testbed/src/... to the grep that printed src/..."""
    system = ("SETTING: You are an autonomous programmer.\n\nCOMMANDS:\nopen <path> [<line_number>] - opens the file"
              "\nsummarize <path> - prints a summary of a file\nsubmit - submits your current code\n\nRESPONSE FORMAT:\n"
              "Your shell prompt is formatted as follows:\n(Open file: <path>) <cwd> $")
    act = lambda action: item("assistant", f"x\n```\n{action}\n```", thought="Next.", action=action + "\n")  # noqa: E731
    history = [item("system", system), obs("ISSUE: tinyparse crashes on an empty header block."),
               act("ls -F"), obs("src/\ntests/"),
               act("grep -rn parse_header src"), obs(f"{PATH}:212:def parse_header(block):"),
               act("ls -F"), obs("src/\ntests/"),
               act("python -m pytest tests/test_reader.py -q -k header"), obs("1 failed"),
               act(f"open /testbed/{PATH} 212"), obs(f"[File: /testbed/{PATH} (400 lines total)]", f"/testbed/{PATH}"),
               act(f"summarize {PATH}"), obs("a summary"), act("submit"), obs("diff")]
    events, _ = convert(write(tmp_path, "t0.traj", {"environment": "swe_main", "history": history, "info": {}}))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL bash(command=ls -F)", "CALL bash(command=grep -rn parse_header src)", "CALL bash(command=ls -F)",
        "CALL bash(command=python -m pytest tests/test_reader.py -q -k header)",
        f"CALL open(path=/testbed/{PATH}, line_number=212)", f"CALL summarize(path={PATH})", "CALL submit()"]
    assert needed(events, "CALL bash(command=ls -F)")[0] is None  # the first of two
    steps = [k for k, e in enumerate(events) if e["text"] == "CALL bash(command=ls -F)"]
    assert events[steps[1] - 2].get("useful_memory_steps") is None  # the second: no value, no label
    _, pytest_needs = needed(events, "CALL bash(command=python")
    assert not {"-m", "pytest", "-q", "-k"} & {v for vs in pytest_needs.values() for v in vs}
    grep = step_of(events, "result", "bash: src/tinyparse")
    assert needed(events, "CALL open(") == ([grep], {"path": [PATH], "line_number": ["212"]})


def editor_history() -> list[dict]:
    """SWE-agent 1.x with a thought-action parser: text commands, its editor's optional arguments as --NAME words,
    observations without the directory (its default next_step_template)."""
    system = ("You are a helpful assistant that can interact with a computer to solve tasks.\n\nCOMMANDS:\n"
              "bash:\n  docstring: runs the given command directly in bash\n  signature: <command>\n\n"
              "str_replace_editor:\n  docstring: Custom editing tool for viewing, creating and editing files\n"
              "  signature: str_replace_editor <command> <path> [<file_text>] [<view_range>] [<old_str>] [<new_str>] "
              "[<insert_line>]\n\nsubmit:\n  docstring: submits the current file\n  signature: submit\n")
    act = lambda action: item("assistant", f"x\n```\n{action}\n```", thought="Next.", action=action,  # noqa: E731
                              message_type="action", agent="main")
    out = lambda text: item("user", f"OBSERVATION:\n{text}", message_type="observation", agent="main")  # noqa: E731
    return [item("system", system, message_type="system_prompt", agent="main"),
            item("user", f"<uploaded_files>\n/testbed\n</uploaded_files>\nThe crash is in {PATH}: an empty header "
                         "block.", message_type="observation", agent="main"),
            act(f"grep -n 'def parse_header' {PATH}"), out("240:def parse_header(block):"),
            act("ls tests"), out("test_reader.py"),
            act(f"str_replace_editor view /testbed/{PATH} --view_range 240 260"), out("   240\tdef parse_header(block):"),
            act(f"str_replace_editor view /testbed/{PATH} --view_range 261 281"), out("   261\t    return key"),
            act("submit"), out("diff")]


def test_a_1x_editor_command_in_text_has_named_arguments_and_the_steps_directory(tmp_path):
    """`str_replace_editor view PATH --view_range 240 260` was arg1=view, arg3=--view_range, ...: each view's `view`
    was a value labelled by the first, and the absolute path untraceable (the run's directory unread)."""
    steps = [{"action": "x", "observation": "", "state": {"open_file": "n/a", "working_dir": "/testbed"}}] * 4 + [
        {"action": "submit", "observation": "diff"}]  # a step that states nothing says no move
    events, _ = convert(write(tmp_path, "t1.traj", {"history": editor_history(), "trajectory": steps, "info": {}}))
    assert [e["text"] for e in events if e["kind"] == "action"][2:] == [
        f"CALL str_replace_editor(command=view, path=/testbed/{PATH}, view_range=[240, 260])",
        f"CALL str_replace_editor(command=view, path=/testbed/{PATH}, view_range=[261, 281])", "CALL submit()"]
    issue, grep = 0, step_of(events, "result", "bash: OBSERVATION:\n240")
    assert needed(events, "CALL str_replace_editor(command=view") == ([issue, grep], {"path": [PATH],
                                                                                     "view_range": ["240"]})
    # the next page: its bounds and its `view` are no values, only the path the first view said
    assert needed(events, f"CALL str_replace_editor(command=view, path=/testbed/{PATH}, view_range=[261") == (
        [step_of(events, "action", "CALL str_replace_editor")], {"path": [f"/testbed/{PATH}"]})
    no_steps, _ = convert(write(tmp_path, "t2.traj", {"history": editor_history(), "info": {}}))
    assert needed(no_steps, "CALL str_replace_editor(command=view")[1] == {"view_range": ["240"]}  # no directory


def test_each_steps_directory_is_told_on_its_commands_output(tmp_path):
    """A run that moved (cd src): the k-th step's state.working_dir on the output of the history's k-th call."""
    def act(i: int, name: str, args: dict) -> dict:
        call = {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        return item("assistant", f"step {i}", thought=f"step {i}", action="...", tool_calls=[call],
                    message_type="action", agent="main")

    out = lambda i, text: item("tool", text, tool_call_ids=[f"call_{i}"], agent="main")  # noqa: E731
    history = [item("system", SYSTEM, agent="main"), item("user", "ISSUE: an empty header block crashes.", agent="main"),
               act(1, "bash", {"command": "cd src"}), out(1, ""),
               act(2, "bash", {"command": "grep -rl parse_header ."}), out(2, "./tinyparse/reader.py"),
               act(3, "bash", {"command": "ls ../tests"}), out(3, "test_reader.py"),
               act(4, "str_replace_editor", {"command": "view", "path": "/repo/src/tinyparse/reader.py"}),
               out(4, "def parse_header(block):")]
    steps = [{"action": a, "observation": "", "state": {"working_dir": d}}
             for a, d in (("cd src", "/repo/src"), ("grep", "/repo/src"), ("ls", "/repo/src"), ("view", "/repo/src"))]
    steps[0]["state"] = json.dumps(steps[0]["state"])  # as 0.x writes it
    events, _ = convert(write(tmp_path, "moved.traj", {"history": history, "trajectory": steps}))
    grep = step_of(events, "result", "bash: ./tinyparse")
    assert needed(events, "CALL str_replace_editor") == ([grep], {"path": ["tinyparse/reader.py"]})
    steps[1]["state"] = {"working_dir": "/repo"}  # the steps disagree and the history holds another count: none
    events, _ = convert(write(tmp_path, "moved.traj", {"history": history, "trajectory": steps[:2]}))
    assert needed(events, "CALL str_replace_editor")[0] is None


def test_a_state_string_that_is_no_json_tells_no_directory_and_loses_no_run(tmp_path):
    """0.x writes a step's state as its state command printed it; one that is no JSON (a warning before it) was a
    refusal of the whole run, though the directory is only a hint for tracing paths."""
    steps = [{"action": "x", "observation": "", "state": "bash: warning\n{open_file"}] * 4 + [
        {"action": "submit", "observation": "diff"}]
    events, _ = convert(write(tmp_path, "warn.traj", {"history": editor_history(), "trajectory": steps, "info": {}}))
    assert needed(events, "CALL str_replace_editor(command=view")[1] == {"view_range": ["240"]}  # no directory


DOCUMENTED = """SETTING: You are an autonomous programmer.

COMMANDS:
open:
  docstring: opens the file at the given path in the editor
  signature: open "<path>" [<line_number>]
  arguments:
    - path (string) [required]: the path to the file to open
    - line_number (integer) [optional]: the line number to move the window to

edit:
  docstring: replaces *all* of the text between the START CURSOR and the END CURSOR with the replacement_text
  signature: edit
<replacement_text>
end_of_edit
  arguments:
    - replacement_text (string) [required]: the text to replace the current selection with

str_replace_editor:
  docstring: Custom editing tool for viewing, creating and editing files
  * State is persistent across command calls
  signature: str_replace_editor <command> <path> [<file_text>] [<view_range>] [<old_str>] [<new_str>] [<insert_line>]

  arguments:
    - command (string) [required]: The commands to run.

lint:
  docstring: lints a file
  signature: lint
  arguments:
    - file_path (string) [required]: the file to lint
    - strict (boolean) [optional]: fail on warnings

RESPONSE FORMAT:
Your shell prompt is formatted as follows:
(Open file: <path>) <cwd> $
"""


def test_the_signatures_a_system_prompt_documents_name_the_words():
    """0.x's COMMANDS lines (edit's form over three lines) and 1.x's blocks (a signature over lines, the arguments
    list where the signature names none, str_replace_editor's options --NAME words, no positions)."""
    compact = ("COMMANDS:\nopen <path> [<line_number>] - opens the file\nsummarize <file> [<depth>] - sums it up\n"
               "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit - replaces lines <start_line> through "
               "<end_line>\nsubmit - submits\n\nRESPONSE FORMAT:\nshow - a word, no command here")
    found = swe_agent.signatures(compact)
    assert set(found) == {"open", "summarize", "edit", "submit"} == set(swe_agent.documented(compact))
    assert found["summarize"] == swe_agent.Signature(((("file",), False), (("depth",), True)), None)
    assert found["edit"] == swe_agent.Signature(((("start_line", "end_line"), False),), "replacement_text")
    found = swe_agent.signatures(DOCUMENTED)
    assert found["edit"] == swe_agent.Signature((), "replacement_text")
    assert found["str_replace_editor"].words == ((("command",), False), (("path",), False))
    assert found["lint"].words == ((("file_path",), False), (("strict",), True))


def test_a_documented_signature_names_the_words_before_swe_agents_own(tmp_path):
    """The run's system prompt says what each word is: its cursor edit takes no line range (edit_linting's would
    name 5:5 start_line and end_line), and a command SWE-agent ships no form of is named by its documentation."""
    act = lambda action: item("assistant", "x", thought="Next.", action=action)  # noqa: E731
    history = [item("system", DOCUMENTED), obs("ISSUE: tinyparse crashes on an empty header block."),
               act(f"open {PATH} 212"), obs("212:def parse_header(block):"),
               act("edit\n    return None\nend_of_edit"), obs("File updated."),
               act(f"lint {PATH} yes extra"), obs("ok"),
               act("str_replace_editor create /testbed/x.py 'x = 1'"), obs("created")]
    events, _ = convert(write(tmp_path, "d.traj", {"history": history}))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        f"CALL open(path={PATH}, line_number=212)", "CALL edit(replacement_text=    return None)",
        f"CALL lint(file_path={PATH}, strict=yes, arg3=extra)",
        "CALL str_replace_editor(command=create, path=/testbed/x.py, arg3=x = 1)"]


def test_an_edits_text_is_free_text_and_its_lines_are_traced_as_before(tmp_path):
    """The names change what the state shows, not what is traced: an edit's long replacement_text is free text (no
    value), its line range's numbers values as arg1's were, the opened path traced to the search that printed it."""
    code = "\n".join(f"    value_{k} = block[{k}]  # keep the header's key {k}" for k in range(6))
    act = lambda action: item("assistant", "x", thought="Next.", action=action)  # noqa: E731
    history = [item("system", SYSTEM), obs("ISSUE: tinyparse crashes on an empty header block."),
               act("search_dir parse_header src"),
               obs(f"Found 1 matches for \"parse_header\" in /testbed/src:\n/testbed/{PATH} (1 matches)"),
               act("ls tests"), obs("test_reader.py"),
               act(f"open {PATH} 212"), obs("[File]\n212:def parse_header(block):\n213:    key = block[0]"),
               act("ls tests"), obs("test_reader.py"),
               act(f"edit 213:213\n{code}\nend_of_edit"), obs("File updated.")]
    events, _ = convert(write(tmp_path, "e.traj", {"history": history}))
    search = step_of(events, "result", "search_dir: Found")
    assert needed(events, "CALL open(") == ([search], {"path": [PATH]})
    opened = step_of(events, "result", "open: [File]")
    assert needed(events, "CALL edit(") == ([opened], {"start_line": ["213"], "end_line": ["213"]})
    decision = events[step_of(events, "action", "CALL edit(") - 2]
    assert decision["state"]["uncertainty_flags"] == ["end_line", "start_line"]


def test_a_search_term_is_read_as_the_grep_pattern_swe_agent_hands_it_to():
    """SWE-agent's search_dir/search_file pass their search_term to grep: a code-like term, `def parse_header(`, was
    traced whole, said by no event, though the issue had said parse_header."""
    from sam_model.data.chatmessages import ToolCall
    from sam_model.data.toolstate import TranscriptState

    st = TranscriptState()
    st.add({"role": "user", "content": "parse_header drops the last key"})
    st.add({"role": "assistant", "content": "Searching."})
    d = st.decide([ToolCall("search_dir", {"search_term": "def parse_header(", "dir": "src"}, "x")])
    assert d.needed == {"search_term": ["parse_header"]} and d.labels == [0]


def test_a_signature_naming_an_argument_twice_keeps_every_word():
    """A documented form `foo <a> <a> <b>` read `foo 1 2 3` as a=2, b=3: the first word was dropped without a word
    (found by review). A name an earlier word took leaves the next word its position's name."""
    from sam_model.data.formats.swe_agent import _arguments, signature

    form = signature("foo <a> <a> <b>")
    assert _arguments("foo", ["1", "2", "3"], None, form) == {"a": "1", "arg2": "2", "b": "3"}
    assert _arguments("open", ["x.py", "12"], None, signature("open <path> [<line_number>]")) == {
        "path": "x.py", "line_number": "12"}


def test_a_text_command_is_split_into_words_once(monkeypatch):
    """command_call split a one-line command into shell words twice (to see a comment alone, then for its words),
    besides reading its first line's tokens: a 4 MB command line took 5.8 s (found by review)."""
    from sam_model.data.formats import swe_agent

    calls = []
    real = swe_agent.shell_words
    monkeypatch.setattr(swe_agent, "shell_words", lambda text: calls.append(text) or real(text))
    call = swe_agent.command_call("open src/x.py 12", "c1", "t.traj")
    assert calls == ["open src/x.py 12"] and call is not None


def test_an_option_whose_name_a_word_took_keeps_both_values(tmp_path):
    """`edit 5:7 --start_line 9` read start_line=9: the option overwrote the word's 5, and the word was gone from the
    call. SWE-agent's tools never read such an option (windowed's open reads its first two words; the edit and
    str_replace_editor parse with argparse, which refuses an option they do not define and keeps a repeated option's
    last value): the word keeps its name, the option its position."""
    act = lambda action: item("assistant", "x", thought="Next.", action=action)  # noqa: E731
    history = [item("system", SYSTEM), obs("ISSUE: tinyparse crashes on an empty header block."),
               act(f"open {PATH} 212 --line_number 400"), obs("[File]\n212:def parse_header(block):"),
               act("edit 213:214 --start_line 9\n    return None\nend_of_edit"), obs("File updated."),
               act(f"str_replace_editor view /testbed/{PATH} --view_range 1 9 --view_range 200 240 --path /x"),
               obs("ok")]
    events, _ = convert(write(tmp_path, "o.traj", {"history": history}))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        f"CALL open(path={PATH}, line_number=212, arg3=400)",
        "CALL edit(start_line=213, end_line=214, replacement_text=    return None, arg2=9)",
        f"CALL str_replace_editor(command=view, path=/testbed/{PATH}, arg3=[1, 9], view_range=[200, 240], arg9=/x)"]


def test_commands_the_instance_template_documents_are_named_by_their_signatures(tmp_path):
    """SWE-agent 1.x renders {{command_docs}} into every template (agents.py _get_format_dict), so a config may put
    the docs in its instance template, the first user item: only the system prompt's were read, and `summarize
    src/x.py 2` became a bash call of the whole line, its words no arguments of the command the model was told of.
    A command's own output that prints docs documents nothing (it is what a file said, not the run's interface)."""
    docs = ("We're solving this issue: tinyparse crashes on an empty header block.\n\nCOMMANDS:\n"
            "summarize <file> [<depth>] - sums a file up\n\nRESPONSE FORMAT: one command")
    printed = "COMMANDS:\nlint <file_path> - lints a file"
    act = lambda action: item("assistant", "x", thought="Next.", action=action)  # noqa: E731
    history = [item("system", SYSTEM), item("user", docs), act(f"summarize {PATH} 2"), obs("a summary"),
               act("cat docs/commands.txt"), obs(printed), act(f"lint {PATH}"), obs("ok")]
    events, _ = convert(write(tmp_path, "i.traj", {"history": history}))
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        f"CALL summarize(file={PATH}, depth=2)", "CALL bash(command=cat docs/commands.txt)",
        f"CALL bash(command=lint {PATH})"]


def view(path: str, first: int, code: list[str], total: int = 400) -> str:
    """A windowed view as SWE-agent prints it (WindowedFile.get_window_text): header, numbered lines."""
    return "\n".join([f"[File: {path} ({total} lines total)]", f"({first - 1} more lines above)",
                      *(f"{first + k}:{c}" for k, c in enumerate(code)), f"({total - first - len(code) + 1} more "
                                                                          "lines below)"])


def test_a_line_number_is_labelled_by_the_latest_output_that_showed_that_line_of_that_file(tmp_path):
    """A line number was labelled by the first event that said the number anywhere: the issue's `#212`, though the
    agent read line 212 in the search that printed it. Now the latest earlier output that showed that line of the file
    the command acts on labels it (a search's `Line 213:` after the view that showed 213 and 214; a search of another
    file showing a line 213 is none of it); a number no output showed as a line of that file is labelled as before."""
    full = f"/testbed/{PATH}"
    act = lambda action: item("assistant", "x", thought="Next.", action=action)  # noqa: E731
    history = [item("system", SYSTEM),
               obs("ISSUE: tinyparse crashes on an empty header block (#212; duplicates #213, #214; seen at 300 "
                   "rows)."),
               act(f"search_file parse_header {PATH}"),
               obs(f'Found 1 matches for "parse_header" in {full}:\nLine 212:def parse_header(block):\n'
                   f'End of matches for "parse_header" in {full}'),
               act("ls tests"), obs("test_reader.py"),
               act(f"open {PATH} 212"),
               obs(view(full, 212, ["def parse_header(block):", "    key, value = block[0]", "    return key"]), full),
               act("search_file 'key, value'"),
               obs(f'Found 1 matches for "key, value" in {full}:\nLine 213:    key, value = block[0]\n'
                   f'End of matches for "key, value" in {full}', full),
               act("search_file 'key, value' tests/test_reader.py"),
               obs('Found 1 matches for "key, value" in /testbed/tests/test_reader.py:\nLine 213:    key, value = x\n'
                   'End of matches for "key, value" in /testbed/tests/test_reader.py', full),
               act("ls tests"), obs("test_reader.py", full),
               act("edit 213:214\n    if not block:\n        return None\nend_of_edit"), obs("File updated.", full),
               act("goto 300"), obs(view(full, 280, ["pass"]), full)]
    events, _ = convert(write(tmp_path, "l.traj", {"history": history, "trajectory": []}))
    issue = step_of(events, "user", "ISSUE")
    search = step_of(events, "result", "search_file: Found 1 matches for \"parse_header\"")
    opened = step_of(events, "result", "open: [File")
    again = step_of(events, "result", f"search_file: Found 1 matches for \"key, value\" in {full}")
    searched = step_of(events, "action", "CALL search_file(search_term=parse_header")  # said the path first
    assert needed(events, "CALL open(") == ([searched, search], {"path": [PATH], "line_number": ["212"]})
    labels, values = needed(events, "CALL edit(")
    assert labels == [opened, again] and values == {"start_line": ["213"], "end_line": ["214"]}
    assert needed(events, "CALL goto(") == ([issue], {"line_number": ["300"]})  # shown by no output: as before
    assert issue < search < opened < again


def test_the_line_number_rule_is_the_tracers_own_read_from_marks_any_reader_may_set():
    """toolstate honours SHOWN_LINES and LINE_ARGUMENTS on any chat message (SWE-agent's reader sets them): `all` labels
    every output that showed the line, a saved tracker keeps what each output showed (a forgotten one shows nothing,
    a rolled-back message's marks go with it), and a mark of another shape is one line naming the message."""
    from sam_model.data.formats.base import LINE_ARGUMENTS, SHOWN_LINES
    from sam_model.data.toolstate import TranscriptState

    def run(label: str = "origin") -> TranscriptState:
        st = TranscriptState(label=label)
        st.feed({"role": "user", "content": "crash at row 212"})  # 0: says 212, shows no line
        for k, (shown, text) in enumerate([({"/t/x.py": [212]}, "212:def f():"), ({}, "no line"),
                                           ({"/t/x.py": [211, 212]}, "211:\n212:def f():")]):
            st.feed({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}}]})
            st.feed({"role": "tool", "tool_call_id": f"c{k}", "content": text, SHOWN_LINES: shown})
        st.feed({"role": "user", "content": "go on"})
        return st

    goto = {"role": "assistant", "content": None, LINE_ARGUMENTS: {"g": {"file": "x.py", "arguments": ["line"]}},
            "tool_calls": [{"id": "g", "type": "function", "function": {"name": "goto", "arguments": '{"line": 212}'}}]}
    st = run()
    shown = [e["step"] for e in st.events if e["kind"] == "result" and "212" in e["text"]]
    assert st.decide(*_calls(goto), lines={"g": ("x.py", frozenset({"line"}))}).labels == shown[-1:]
    assert st.decide(*_calls(goto)).labels == [0]  # no mark: the first event that says it, as the spec says
    assert run("all").decide(*_calls(goto), lines={"g": ("/t/x.py", frozenset({"line"}))}).labels == shown
    loaded = TranscriptState.from_state_dict(json.loads(json.dumps(st.state_dict())))
    loaded.forget(shown[-1])
    assert loaded.feed(goto)[0].labels == shown[:1]
    mark = st.mark()
    st.feed({"role": "tool", "tool_call_id": "c0", "content": "212:x", SHOWN_LINES: {"x.py": [212]}})
    st.rollback(mark)
    assert st.shown == run().shown
    with pytest.raises(TranscriptFormatError, match="shown_lines"):
        run().feed({"role": "tool", "tool_call_id": "c0", "content": "x", SHOWN_LINES: {"x.py": ["212"]}}, "m 9")
    with pytest.raises(TranscriptFormatError, match="line_arguments"):
        run().feed({**goto, LINE_ARGUMENTS: {"g": {"file": "x.py"}}}, "m 9")
    with pytest.raises(ValueError, match="'shown' item 0"):
        TranscriptState.from_state_dict({**st.state_dict(), "shown": [[99, "x.py", [1]]]})


def _calls(message: dict) -> tuple[list, None]:
    from sam_model.data.chatmessages import parse_tool_calls

    return parse_tool_calls(message, "m"), None


def test_an_editors_listing_after_its_own_words_shows_lines_of_its_file():
    """str_replace_editor prints an edit's listing on the line of its words ('The file X has been edited. Here's the
    result of running `cat -n` on a snippet of X:'), an insert's of 'the edited file': the listing header was read
    only alone on its line, so an edit's output showed no line of the file."""
    p = "/testbed/src/x.py"
    edited = f"The file {p} has been edited. Here's the result of running `cat -n` on a snippet of {p}:\n   212\tx\n"
    inserted = "The file has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n   9\ty"
    assert swe_agent.numbered_lines(edited) == {p: [212]}
    assert swe_agent.numbered_lines(inserted, p) == {p: [9]}
    assert swe_agent.numbered_lines(f"[File: {p} (400 lines total)]\n(9 more lines above)\n10:a\n11:\n") == {p: [10, 11]}
