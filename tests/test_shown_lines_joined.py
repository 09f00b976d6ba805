"""Where a line number is traced to the output that showed that line of that file (tests/test_shown_lines.py), beyond
one editor call or one pipeline: OpenHands 0.x's read and edit actions as a run without function calling records
them (the action is the call, its observation the editor's text), and a shell command of several pipelines (``cat -n
a.py | sed -n '200,260p' && echo --- && ...``), whose outputs are printed one after another: a line is read only
where which file it is of is certain."""

from __future__ import annotations

import pytest
from test_openhands import Run
from test_shown_lines import ISSUE, REL, labels, listing
from test_swe_agent import convert, step_of, write

from sam_model.data.formats.numbered import call_lines, shell_lines

PATH = f"/workspace/{REL}"


def text_mode_run(view_result: str) -> list[dict]:
    """A run without function calling: a grep printing line 212 of the reader, a read of lines 212-230 (the editor's
    listing), an insert at 213, a read of 300-310 no output showed; each call after a result between (the result
    right before a call is no memory)."""
    run = Run()
    run.add(source="user", message=ISSUE, action="message", args={"content": ISSUE, "wait_for_response": False})
    ls = ("run", {"command": "ls tests"}, "test_reader.py\n")
    steps = [("run", {"command": f"grep -n 'def parse_header' {PATH}"}, "212:def parse_header(block):\n"), ls,
             ("read", {"path": PATH, "start": 0, "end": -1, "impl_source": "oh_aci", "view_range": [212, 230]},
              view_result), ls,
             ("edit", {"path": PATH, "command": "insert", "insert_line": 213, "new_str": "    if not block:",
                       "file_text": None, "old_str": None, "impl_source": "oh_aci"},
              f"The file {PATH} has been edited. Here's the result of running `cat -n` on a snippet of the edited "
              f"file:\n   213\t    if not block:\n"),
             ("read", {"path": PATH, "start": 0, "end": -1, "impl_source": "oh_aci", "view_range": [300, 310]},
              "   300\tpass\n")]
    for kind, args, out in steps:
        act = run.add(source="agent", message="", action=kind, args={**args, "thought": ""})
        run.add(source="agent", message="", cause=act["id"], observation=kind, content=out,
                extras={"metadata": {"exit_code": 0, "working_dir": "/workspace"}} if kind == "run" else {"path": PATH})
    return run.events


def test_openhands_text_mode_read_and_edit_are_labelled_by_the_output_that_showed_the_line(tmp_path):
    """A read's view_range [212, 230] was labelled by the issue's #212 though the grep -n printed line 212 of the
    file, the insert's insert_line 213 by the issue's #213 though the read printed line 213: the function-calling
    editor's calls were traced so, the same actions recorded without function calling were not. A read of lines
    300-310, shown by no output, is the issue's as before."""
    events, _ = convert(write(tmp_path, "session-1.json", text_mode_run(
        f"Here's the result of running `cat -n` on {PATH}:\n" + listing(212))))
    issue, grep = step_of(events, "user", "tinyparse"), step_of(events, "result", "run: 212:")
    said_path = step_of(events, "action", "CALL run(command=grep")
    view = step_of(events, "result", "read: Here's")
    assert labels(events, "CALL read(path") == [said_path, grep]  # was [issue, said_path]
    assert labels(events, "CALL edit(path") == [said_path, view]  # was [issue, said_path]
    assert labels(events, f"CALL read(path={PATH}, start=0, end=-1, view_range=[300") == [issue]  # as before


def test_a_text_mode_read_of_the_files_bare_text_shows_no_line():
    """OpenHands' own read (impl_source default) prints the file's lines without numbers, from its 0-based start:
    no line is shown, and start is no line number."""
    numbers, reader = call_lines("read", {"path": PATH, "start": 211, "end": 230}, "/workspace")
    assert numbers is None and reader is not None and reader("    key, value = block[0]\n   212\tx\n") == {}
    saved = "# a saved session\nHere's the result of running `cat -n` on /workspace/b.py:\n   212\tx\n"
    assert reader(saved) == {}  # the file's own text holds an editor's output: no line of this read
    numbers, _ = call_lines("edit", {"path": PATH, "command": "str_replace", "insert_line": None}, "/workspace")
    assert numbers is None  # an action's unset insert_line (null) is no line argument


def test_openhands_own_read_of_a_file_opening_with_the_editors_header_shows_no_line():
    """OpenHands' own read (impl_source default) prints the file's text: a file that opens with the editor's header
    (a saved session, a fixture of OpenHands' tests) showed line 212 of the file that header names, which this read
    never printed; the oh_aci editor's own output is read as before."""
    saved = "Here's the result of running `cat -n` on /workspace/b.py:\n   212\tx\n"
    for action in ("read", "edit"):
        _, reader = call_lines(action, {"path": PATH, "start": 0, "end": -1, "impl_source": "default"}, "/workspace")
        assert (reader(saved) if reader else {}) == {}
    _, reader = call_lines("read", {"path": "/workspace/b.py", "impl_source": "oh_aci"}, "/workspace")
    assert reader is not None and reader(saved) == {"/workspace/b.py": [212]}


@pytest.mark.parametrize(("command", "output", "shown"), [
    # one pipeline printing numbered lines beside others that print none such
    ("cat -n a.py | sed -n '200,202p' && echo '---' && wc -l a.py", "   200\tx\n   201\ty\n---\n300 a.py",
     {"/r/a.py": [200, 201]}),
    ("mkdir -p out; grep -n x a.py || echo 'not found'", "12:x", {"/r/a.py": [12]}),
    ("cd sub && echo a.py: && cat -n a.py | head -2", "a.py:\n     1\tx\n     2\ty", {"/r/sub/a.py": [1, 2]}),
    # each line naming its file
    ("grep -rn x src && grep -rn y tests", "src/a.py:12:x\ntests/t.py:7:y", {"/r/src/a.py": [12], "/r/tests/t.py": [7]}),
    # two windows of one file
    ("cat -n a.py | sed -n '1,2p'; cat -n a.py | sed -n '200,201p'", "     1\tx\n     2\ty\n   200\tz\n   201\tw",
     {"/r/a.py": [1, 2, 200, 201]}),
    # not certain: bare numbers of two files, an output not read, an echo of a number, a cd that may not run
    ("grep -n x a.py; grep -n y b.py", "1:x\n2:y", {}),
    ("cat -n a.py && cat -n b.py", "     1\tx\n     1\ty", {}),
    ("sed -n '200,210p' data.tsv && cat -n a.py", "   12\tfrom data\n     1\tx", {}),
    ("python run.py && grep -rn x src", "src/b.py:3:log\nsrc/a.py:12:x", {}),
    ("echo 12: && grep -n x a.py", "12:\n5:x", {}),
    ("echo $HIT && grep -n x a.py", "12:y\n5:x", {}),  # a variable's text is not the command's
    ("echo -e '\\x31\\x32:' && grep -n x a.py", "12:\n5:x", {}),
    ("cat -n a.py; cd sub; cat -n b.py", "     1\tx", {}),
    ("grep -rn x src && grep -n y a.py", "src/a.py:12:x\n3:y", {}),
    # a cd that may not run or runs apart: cat runs where cd failed (./a.py), the second cd is skipped (/x), cd runs
    # in the background; a directory the shell works out (cd -: the one before, a variable's)
    ("cd sub || cat -n a.py", "     1\tx", {}),
    ("cd /x || cd /y && cat -n a.py", "     1\tx", {}),
    ("cd sub & cat -n a.py", "     1\tx", {}),
    ("cd sub && cd - && cat -n a.py", "     1\tx", {}),
    ("cd $SRC && cat -n a.py", "     1\tx", {}),
    ("cd sub; cat -n a.py", "     1\tx", {"/r/sub/a.py": [1]}),  # as before: the cd's first
])
def test_a_command_of_several_pipelines_shows_the_lines_whose_file_is_certain(command, output, shown):
    _, reader = shell_lines("command", command, "/r")
    assert (reader(output) if reader else {}) == shown


@pytest.mark.parametrize(("command", "file"), [
    ("cat -n a.py | sed -n '212,240p' && echo ---", "/r/a.py"),
    ("sed -n '212,240p' a.py; sed -n '300,310p' a.py", "/r/a.py"),
    ("wc -l a.py && sed -n '212,240p' a.py", "/r/a.py"),
    ("cd sub && sed -n '212,240p' a.py && cd .. && ls", None),  # ls is not read
    ("sed -n '212,240p' a.py && sed -n '5,9p' b.py", None),  # two files
    ("sed -n '212,240p' a.py && sleep 212", None),  # a number of a command not read
    ("cd sub || sed -n '212,240p' a.py", None),  # ./a.py's lines, where cd failed: unsure
])
def test_a_command_of_several_pipelines_marks_its_numbers_where_each_is_a_line_of_one_file(command, file):
    marked, _ = shell_lines("command", command, "/r")
    assert (marked or {}).get("file") == file and (marked is None or marked["arguments"] == ["command"])


def test_a_later_call_at_a_line_a_joined_command_printed_is_labelled_by_it(tmp_path):
    """A grep -n after an echo printed line 212 of the reader; a later read at 212 was labelled by the issue's #212
    (the joined command's output showed no line), now by that output."""
    run = Run()
    run.add(source="user", message=ISSUE, action="message", args={"content": ISSUE, "wait_for_response": False})
    for kind, args, out in [
            ("run", {"command": f"echo '== reader ==' && grep -n 'def parse_header' {PATH}"},
             "== reader ==\n212:def parse_header(block):\n"),
            ("run", {"command": "ls tests"}, "test_reader.py\n"),
            ("read", {"path": PATH, "impl_source": "oh_aci", "view_range": [212, 230]},
             f"Here's the result of running `cat -n` on {PATH}:\n" + listing(212))]:
        act = run.add(source="agent", message="", action=kind, args=args)
        run.add(source="agent", message="", cause=act["id"], observation=kind, content=out, extras={})
    events, _ = convert(write(tmp_path, "session-2.json", run.events))
    grep, said_path = step_of(events, "result", "run: == reader"), step_of(events, "action", "CALL run(command=echo")
    assert labels(events, "CALL read(path") == [said_path, grep]  # was [issue, said_path]
