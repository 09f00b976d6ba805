"""Leftovers after stop 76: a Gemini CLI shell call's own directory (dir_path, older directory) for the lines a grep
-n printed there, a fixed-strings search's pattern read as literal text, and the refusals of a bad offset, limit or
step that named 2**62 in digits as the range to pick from."""

from __future__ import annotations

import pytest
from test_cwd_paths import CWD, TAX, gemini_session
from test_format_gemini_cli import read, write
from test_swe_agent import step_of

from sam_model.data.formats.numbered import call_lines

CODE = "    return round(total * rate, 2)"


@pytest.mark.parametrize("directory", ["dir_path", "directory", "workdir"])
def test_a_shell_calls_own_directory_is_where_its_grep_printed_lines(directory):
    """Gemini CLI's run_shell_command runs in its dir_path (older releases: directory), relative to the project root;
    only Codex's workdir was read, so grep -n's 'reader.py' lines were marked as /r/reader.py's."""
    _, reader = call_lines("run_shell_command", {"command": "grep -n 'def parse' reader.py",
                                                 directory: "src/tinyparse"}, "/r")
    assert reader is not None and reader("212:def parse(block):") == {"/r/src/tinyparse/reader.py": [212]}
    _, reader = call_lines("run_shell_command", {"command": "grep -n 'def parse' reader.py",
                                                 directory: "/elsewhere/lib"}, "/r")  # absolute: itself
    assert reader is not None and reader("212:def parse(block):") == {"/elsewhere/lib/reader.py": [212]}


def test_a_read_at_a_line_a_grep_in_dir_path_printed_is_traced_to_that_grep(tmp_path):
    """read_file(start_line=212) of /home/me/invoicer/invoicer/tax.py after run_shell_command(grep -n, dir_path=
    invoicer) printed line 212 of its tax.py was labelled by the issue's "line 212" alone: the grep's line was marked
    as /home/me/invoicer/tax.py's, another file, so its 212 was no hit of the file the read opened."""
    records = gemini_session(("user", "Totals are off by a cent, the rounding at line 212 looks wrong"),
                             ("call", "l1", "list_directory", {"dir_path": CWD}, "[DIR] invoicer"),
                             ("call", "g1", "run_shell_command", {"command": "grep -n 'round(' tax.py",
                                                                  "dir_path": "invoicer"}, f"212:{CODE}"),
                             ("call", "l2", "run_shell_command", {"command": "ls tests"}, "test_tax.py"),
                             ("call", "r1", "read_file", {"absolute_path": TAX, "start_line": 212, "end_line": 230},
                              CODE))
    events, _ = read(write(tmp_path / "session-1.jsonl", records))
    issue, grep = step_of(events, "user", "Totals"), step_of(events, "result", "run_shell_command: 212:")
    got = next((e["useful_memory_steps"] for e in events if "start_line" in e.get("meta", {}).get("needed", {})), [])
    assert grep in got and issue not in got

