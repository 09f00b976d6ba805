"""A line number a coding agent passes (Claude Code's Read offset, OpenHands' view_range and insert_line, a shell's
``sed -n '212,240p' FILE``) is labelled by the latest output that printed that line of that file with its number (a
``grep -n``'s ``212:``, an editor's ``cat -n`` listing, Claude Code's ``  212→``), not by the first event that says the
number anywhere (the issue's ``#212``); a number no output showed as a line of that file is labelled as before.

The readers of Claude Code, OpenHands 0.x and V1, Codex, codex exec, Gemini CLI and mini-swe-agent mark their chat
messages (sam_model.data.formats.numbered); the outputs follow the producers' formats (the module doc cites them)."""

from __future__ import annotations

import json

import pytest
from test_format_claude_code import Session, text, tool_use
from test_format_claude_code import write as write_lines
from test_format_codex import line, message, meta
from test_openhands import Run as Run0
from test_openhands import response
from test_openhands_v1 import Run as RunV1
from test_openhands_v1 import terminal
from test_swe_agent import convert, needed, step_of, write

from sam_model.data.formats import to_chat
from sam_model.data.formats.base import LINE_ARGUMENTS, SHOWN_LINES
from sam_model.data.formats.numbered import call_lines, shell_lines

REL = "src/tinyparse/reader.py"
ISSUE = "tinyparse crashes on an empty header block: see #212 and #213 (the fixture has 300 rows). Fix it."
CODE = ["def parse_header(block):", "    key, value = block[0]", "    return key"]


def listing(first: int, sep: str = "\t") -> str:
    """Lines of the reader from ``first`` as ``cat -n`` numbers them (``sep``: Claude Code's arrow)."""
    return "\n".join(f"{first + k:6}{sep}{c}" for k, c in enumerate(CODE)) + "\n"


def labels(events: list[dict], call: str) -> list[int]:
    return needed(events, call)[0]


def test_claude_codes_read_offset_and_a_sed_range_are_labelled_by_the_output_that_showed_the_line(tmp_path):
    """Read's offset 212 was labelled by the issue's #212, though a grep -n printed line 212 of the file; the range of
    a sed after the Read that printed lines 212-214 by the issue's #213: now each is labelled by that output. Read's
    offset 300, which no output showed, is the issue's as before."""
    file = f"/home/ann/airline/{REL}"
    s = Session()
    s.user(ISSUE)
    s.respond(text("Find the parser."), tool_use("t1", "Bash", {"command": f"grep -n 'def parse_header' {REL}",
                                                                "description": "Find the parser"}))
    s.result("t1", "212:def parse_header(block):")
    s.respond(tool_use("l1", "Bash", {"command": "ls tests", "description": "List the tests"}))  # a result between:
    s.result("l1", "test_reader.py")  # a value the result right before the call says is no memory's
    s.respond(tool_use("t2", "Read", {"file_path": file, "offset": 212, "limit": 20}))
    s.result("t2", listing(212, "→"))
    s.respond(tool_use("l2", "Bash", {"command": "ls tests", "description": "List the tests"}))
    s.result("l2", "test_reader.py")
    s.respond(tool_use("t3", "Bash", {"command": f"sed -n '213,214p' {REL}", "description": "Print two lines"}))
    s.result("t3", "\n".join(CODE[1:]))
    s.respond(tool_use("t4", "Read", {"file_path": file, "offset": 300, "limit": 10}))
    s.result("t4", "   300→pass")
    s.respond(text("Done."))
    events, _ = convert(write_lines(tmp_path / "conv-1.jsonl", s.entries))
    issue, grep = step_of(events, "user", "tinyparse"), step_of(events, "result", "Bash: 212:")
    said_path = step_of(events, "action", "CALL Bash(command=grep")  # the path's first saying
    read = step_of(events, "result", "Read:    212")
    assert labels(events, "CALL Read(file_path=") == [said_path, grep]  # was [issue, said_path]
    assert labels(events, "CALL Bash(command=sed") == [said_path, read]  # was [issue, said_path, read]
    first_read = step_of(events, "action", "CALL Read(")  # said the whole path first
    assert labels(events, f"CALL Read(file_path={file}, offset=300") == [issue, first_read]  # as before


def test_claude_codes_edit_snippet_shows_lines_of_its_file():
    edited = ("The file /r/x.py has been updated. Here's the result of running `cat -n` on a snippet of the edited "
              "file:\n   210→a\n   211→b\n")
    numbers, reader = call_lines("Edit", {"file_path": "/r/x.py", "old_string": "a", "new_string": "b"}, "/r")
    assert numbers is None and reader is not None and reader(edited) == {"/r/x.py": [210, 211]}


def openhands_0x(view_result: str) -> list[dict]:
    path = f"/workspace/{REL}"
    run = Run0()
    run.add(source="user", message=ISSUE, action="message",
            args={"content": ISSUE, "file_urls": None, "image_urls": [], "wait_for_response": False})
    grep = f"grep -n 'def parse_header' {path}"
    run.calls(response(1, "Find the parser.", ("c1", "execute_bash", {"command": grep})),
              ("run", {"command": grep}, "run", "212:def parse_header(block):\n",
               {"command": grep, "metadata": {"exit_code": 0, "working_dir": "/workspace"}}))
    ls = ("run", {"command": "ls tests"}, "test_reader.py\n")  # a result between: the one right before a call is no memory
    for n, (kind, args, out) in enumerate([
            ls, ("read", {"command": "view", "path": path, "view_range": [212, 230]}, view_result), ls,
            ("edit", {"command": "insert", "path": path, "insert_line": 213, "new_str": "    if not block:"},
             f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of the edited "
             f"file:\n   213\t    if not block:\n"),
            ("read", {"command": "view", "path": path, "view_range": [300, 310]}, "   300\tpass\n")], 2):
        tool = "execute_bash" if kind == "run" else "str_replace_editor"
        run.calls(response(n, None, (f"c{n}", tool, args)), (kind, args, kind, out, {}))
    return run.events


def test_openhands_view_range_and_insert_line_are_labelled_by_the_output_that_showed_the_line(tmp_path):
    """str_replace_editor's view_range [212, 230] was labelled by the issue's #212 though a grep -n printed line 212
    of the file, insert_line 213 by the issue's #213 though the view printed line 213: now by those outputs. A view
    of lines 300-310, shown by no output, is the issue's as before."""
    path = f"/workspace/{REL}"
    events, _ = convert(write(tmp_path, "session-1.json", openhands_0x(
        f"Here's the result of running `cat -n` on {path}:\n" + listing(212))))
    issue, grep = step_of(events, "user", "tinyparse"), step_of(events, "result", "execute_bash: 212:")
    said_path = step_of(events, "action", "CALL execute_bash(")
    view = step_of(events, "result", "str_replace_editor: Here's")
    assert labels(events, "CALL str_replace_editor(command=view, path") == [said_path, grep]  # was [issue, ...]
    assert labels(events, "CALL str_replace_editor(command=insert") == [said_path, view]  # was [issue, ...]
    assert labels(events, f"CALL str_replace_editor(command=view, path={path}, view_range=[300") == [issue]  # as before
    # (the path: said by the edit's output, the result right before the call)


def test_openhands_v1s_file_editor_and_terminal_are_read_alike(tmp_path):
    """V1's file_editor prints the same cat -n listing, its terminal the grep's lines: the same labels as 0.x."""
    path = f"/workspace/{REL}"
    run = RunV1()
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": [{"type": "text", "text": ISSUE}],
                                                 "tool_calls": None}, llm_response_id=None, activated_skills=[],
            extended_content=[], sender=None)
    grep = f"grep -n 'def parse_header' {path}"
    (search,) = run.act("r1", "Find the parser.", ("c1", "terminal", {"command": grep}))
    run.observe(search, "212:def parse_header(block):", **terminal("", 0))
    (ls,) = run.act("r1b", "", ("c1b", "terminal", {"command": "ls tests"}))
    run.observe(ls, "test_reader.py", **terminal("", 0))
    (view,) = run.act("r2", "", ("c2", "file_editor", {"command": "view", "path": path, "view_range": [212, 230]}))
    run.observe(view, f"Here's the result of running `cat -n` on {path}:\n" + listing(212), command="view", path=path)
    (ls,) = run.act("r2b", "", ("c2b", "terminal", {"command": "ls tests"}))
    run.observe(ls, "test_reader.py", **terminal("", 0))
    (ins,) = run.act("r3", "", ("c3", "file_editor", {"command": "insert", "path": path, "insert_line": 213,
                                                      "new_str": "    if not block:"}))
    run.observe(ins, f"The file {path} has been edited.", command="insert", path=path)
    events, _ = convert(write(tmp_path, "v1.json", run.events))
    grep_step = step_of(events, "result", "terminal: 212:")
    said_path = step_of(events, "action", "CALL terminal(")
    shown = step_of(events, "result", "file_editor: Here's")
    assert labels(events, "CALL file_editor(command=view") == [said_path, grep_step]
    assert labels(events, "CALL file_editor(command=insert") == [said_path, shown]


def rollout(commands: list[tuple[str, str]]) -> list[dict]:
    """A Codex session: the issue, then each ``bash -lc`` command (a shell function call) and its output."""
    r = lambda item: line("response_item", item)  # noqa: E731
    lines = [meta(), r(message("user", ISSUE))]
    for n, (command, output) in enumerate(commands):
        lines += [r({"type": "function_call", "name": "shell", "call_id": f"s{n}",
                     "arguments": json.dumps({"command": ["bash", "-lc", command], "timeout_ms": 10000})}),
                  r({"type": "function_call_output", "call_id": f"s{n}",
                     "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})})]
    return lines


def test_codex_shell_line_ranges_are_labelled_by_the_grep_or_listing_that_printed_the_line(tmp_path):
    """`nl -ba FILE | sed -n '212,240p'` took 212 from the issue's #212, though rg -n printed FILE:212:; `sed -n
    '213,214p' FILE` took 213 from the issue, though that nl listing printed line 213 of FILE. A sed that prints
    lines without their numbers shows none (the later sed's 214 is the nl listing's, not the sed's). 300, shown by
    no output, is the issue's as before."""
    ls = ("ls tests", "test_reader.py\n")  # a result between: the one right before a call is no memory
    commands = [("rg -n 'def parse_header' src", f"{REL}:212:def parse_header(block):\n"), ls,
                (f"nl -ba {REL} | sed -n '212,240p'", listing(212)), ls,
                (f"sed -n '213,214p' {REL}", "\n".join(CODE[1:])),
                (f"sed -n '214,216p' {REL}", "    return key\n"),
                (f"sed -n '300,310p' {REL}", "pass\n")]
    path = tmp_path / "rollout-2025-10-29T00-59-38-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rollout(commands)))
    events, _ = convert(path)
    issue = step_of(events, "user", "tinyparse")
    rg, nl = step_of(events, "result", "shell: src/"), step_of(events, "result", "shell:    212")
    # the path: rg printed it (src/tinyparse/reader.py, under the session's directory)
    assert labels(events, 'CALL shell(command=["bash", "-lc", "nl') == [rg]  # was [issue, rg]
    assert labels(events, 'CALL shell(command=["bash", "-lc", "sed -n \'213') == [rg, nl]  # was [issue, rg, nl]
    assert labels(events, 'CALL shell(command=["bash", "-lc", "sed -n \'214') == [rg, nl]
    assert labels(events, 'CALL shell(command=["bash", "-lc", "sed -n \'300') == [issue, rg]  # as before


@pytest.mark.parametrize(("command", "output", "shown"), [
    ("grep -n x src/a.py", "12:x\n13:y", {"/r/src/a.py": [12, 13]}),
    ("grep -rn x src", "src/a.py:12:x\nsrc/b.py:7:y", {"/r/src/a.py": [12], "/r/src/b.py": [7]}),
    ("grep -n -C 1 x src/a.py", "11-w\n12:x\n--", {"/r/src/a.py": [11, 12]}),
    ("cd sub && cat -n a.py | head -2", "     1\tx\n     2\ty", {"/r/sub/a.py": [1, 2]}),
    ("git grep -n x", "a.py:3:x", {"/r/a.py": [3]}),
    ("nl a.py", "     1\tx\n       \n     2\ty", {}),  # plain nl numbers the lines that are not blank: no line number
    ("cat -b a.py", "     1\tx", {}),
    ("sed -n '200,260p' a.py", "200 is here", {}),  # printed without numbers: no line shown
    ("grep -c x a.py", "12", {}),
    ("cat -n a.py | grep -n x", "3:     7\tx", {}),  # grep's own numbers count the piped lines
    ("grep -n x a.py; grep -n y b.py", "1:x\n2:y", {}),  # two outputs: whose line is whose is not told
])
def test_a_shell_commands_output_shows_the_lines_it_printed_with_their_numbers(command, output, shown):
    _, reader = shell_lines("command", command, "/r")
    assert (reader(output) if reader else {}) == shown


@pytest.mark.parametrize(("command", "file"), [
    ("sed -n '212,240p' a.py", "/r/a.py"),
    ("nl -ba a.py | sed -n '212,240p'", "/r/a.py"),
    ("head -n 400 a.py | tail -n +212", "/r/a.py"),
    ("awk 'NR>=212 && NR<=240' a.py", "/r/a.py"),
    ("grep -n 212 a.py", None),  # a pattern, no line number
    ("sed -n '212,240p' a.py | grep 305", None),  # 305 is no line of a.py
    ("sed -n 's/212/213/p' a.py", None),
])
def test_a_shell_commands_line_numbers_are_marked_where_every_number_it_says_is_a_line_of_one_file(command, file):
    marked, _ = shell_lines("command", command, "/r")
    assert (marked or {}).get("file") == file and (marked is None or marked["arguments"] == ["command"])


@pytest.mark.parametrize("fmt", ["codex-exec", "gemini-cli", "mini-swe-agent"])
def test_the_other_shell_agents_readers_mark_their_messages(fmt):
    """codex exec's command_execution, Gemini CLI's run_shell_command and mini-swe-agent's bash are read alike."""
    grep, nl = "grep -n parse_header src/x.py", "nl -ba src/x.py | sed -n '212,230p'"
    if fmt == "codex-exec":
        item = lambda n, cmd, out: {"type": "item.completed", "item": {  # noqa: E731
            "id": f"item_{n}", "type": "command_execution", "command": f"bash -lc {json.dumps(cmd)}",
            "aggregated_output": out, "exit_code": 0, "status": "completed"}}
        lines = [{"type": "thread.started", "thread_id": "t1"}, item(0, grep, "212:def f():\n"),
                 item(1, nl, "   212\tdef f():\n")]
    elif fmt == "gemini-cli":
        call = lambda n, cmd, out: {"id": f"c{n}", "name": "run_shell_command", "args": {"command": cmd},  # noqa: E731
                                    "status": "success", "timestamp": "2026-01-01T00:00:00Z", "result": [
                                        {"functionResponse": {"id": f"c{n}", "name": "run_shell_command",
                                                              "response": {"output": out}}}]}
        lines = [{"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
                  "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"},
                 {"id": "m1", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": ISSUE},
                 {"id": "m2", "timestamp": "2026-01-01T00:00:01Z", "type": "gemini", "content": "",
                  "toolCalls": [call(0, grep, "212:def f():"), call(1, nl, "   212\tdef f():")]}]
    else:
        lines = [{"role": "user", "content": ISSUE},
                 {"role": "assistant", "content": f"THOUGHT: look\n\n```bash\n{grep}\n```"},
                 {"role": "user", "content": "<returncode>0</returncode>\n<output>\n212:def f():\n</output>"},
                 {"role": "assistant", "content": f"THOUGHT: read\n\n```bash\n{nl}\n```"},
                 {"role": "user", "content": "<returncode>0</returncode>\n<output>\n   212\tdef f():\n</output>"}]
    chat = to_chat(lines, "t", fmt).messages
    results = [m for m in chat if m["role"] == "tool"]
    marks = [m[LINE_ARGUMENTS] for m in chat if LINE_ARGUMENTS in m]
    assert [list(r.get(SHOWN_LINES, {}).values()) for r in results] == [[[212]], [[212]]]
    assert [list(m.values())[0]["arguments"] for m in marks] == [["command"]]
    assert all(f.endswith("src/x.py") for r in results for f in r[SHOWN_LINES]) and \
        list(marks[0].values())[0]["file"].endswith("src/x.py")


def test_a_long_listing_is_saved_as_runs_of_lines_and_labels_as_before():
    """A tracker kept every line number each output showed: a 100 KB cat -n listing's 2,000 ints, saved with every
    tracker save (MBs a long session). It keeps runs ([[first, last], ...]) now: a listing of lines 1-2000 and
    2101-2200 is two pairs, labels as before (a line shown by the listing, one in its gap, one after), and a save
    of before (each line an int) loads and labels alike."""
    from sam_model.data.toolstate import TranscriptState

    def goto(n: int) -> dict:
        return {"role": "assistant", "content": None, LINE_ARGUMENTS: {"g": {"file": "x.py", "arguments": ["line"]}},
                "tool_calls": [{"id": "g", "type": "function",
                                "function": {"name": "goto", "arguments": json.dumps({"line": n})}}]}

    shown = [*range(1, 2001), *range(2101, 2201)]
    text = "\n".join(f"{n:6}\tline {n}" for n in shown)  # says every number, as cat -n prints it
    st = TranscriptState()
    st.feed({"role": "user", "content": "rows 1500, 2050 and 2150 of x.py are wrong; see also 3000"})
    st.feed({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "view", "arguments": '{"path": "/t/x.py"}'}}]})
    st.feed({"role": "tool", "tool_call_id": "c", "content": text, SHOWN_LINES: {"/t/x.py": shown}})
    st.feed({"role": "user", "content": "go on"})
    saved = json.loads(json.dumps(st.state_dict()))
    assert saved["shown"] == [[2, "/t/x.py", [[1, 2000], [2101, 2200]]]]
    assert len(json.dumps(saved["shown"])) < 100  # was 2,100 numbers: 10 KB
    old = {**saved, "shown": [[2, "/t/x.py", shown]]}  # a save of before

    def load(d: dict) -> TranscriptState:  # a fresh copy: the tracker keeps the lists it is given
        return TranscriptState.from_state_dict(json.loads(json.dumps(d)))

    for n in (1500, 2050, 2150, 3000):
        want = load(saved).feed(goto(n))[0].labels
        assert load(old).feed(goto(n))[0].labels == want
        assert (want == [2]) == (n in shown), (n, want)  # a shown line: the listing's; else the user's words
    assert load(old).shown == st.shown
    with pytest.raises(ValueError, match="'shown' item 0"):
        TranscriptState.from_state_dict({**saved, "shown": [[2, "/t/x.py", [[5, 3]]]]})
