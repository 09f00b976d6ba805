"""Gemini CLI's read_file prints a file's lines without their numbers, but where it shows part of the file a header
before them names the first and last (and, since its start_line and end_line, the line to read next): a later line
number of that file taken from that header is traced to that read (tests/test_shown_lines.py, the rule), not to the
first event that says the number (the issue's #231). Its start_line and end_line are line numbers of its file; its
older offset counts from 0 and is none."""

from __future__ import annotations

import pytest
from test_format_gemini_cli import as_jsonl, call, gemini, read, user, write
from test_shown_lines import REL, labels
from test_swe_agent import step_of

from sam_model.data.formats.numbered import call_lines

ISSUE = "tinyparse crashes on an empty header block: see #212 and the report in #231 (the fixture has 300 rows)."
CODE = "def parse_header(block):\n    key, value = block[0]\n    return key"
PAGED = ("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 212-230 of 400 total lines.\nAction: "
         "To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent "
         "'read_file' call. For example, to read the next section of the file, use start_line: 231.\n\n--- FILE "
         f"CONTENT (truncated) ---\n{CODE}")
OLD = f"[File content truncated: showing lines 300-309 of 400 total lines. Use offset/limit parameters to view more.]\n{CODE}"


def test_read_files_header_and_start_line_trace_a_later_line_to_the_read_that_named_it(tmp_path):
    """read_file(start_line=212) was labelled by the issue's #212 though a grep -n printed line 212 of the file; the
    next read_file(start_line=231) by the issue's #231 though the read before said to start there; a sed at line 300
    by the issue's "300 rows" though an older read_file's header named line 300 of the file: now each by that
    output."""
    ls = lambda n: gemini(f"g{n}", "", [call(f"l{n}", "run_shell_command", {"command": "ls tests"},  # noqa: E731
                                              "test_reader.py")])  # a result between: the one before a call is none
    messages = [
        user("u1", ISSUE),
        gemini("g1", "Find it.", [call("c1", "run_shell_command", {"command": f"grep -n 'def parse_header' {REL}"},
                                       "212:def parse_header(block):")]), ls(2),
        gemini("g3", "", [call("c3", "read_file", {"file_path": REL, "start_line": 212, "end_line": 230}, PAGED)]),
        ls(4),
        gemini("g5", "", [call("c5", "read_file", {"file_path": REL, "start_line": 231, "end_line": 260}, CODE)]),
        gemini("g6", "", [call("c6", "read_file", {"absolute_path": REL, "offset": 299, "limit": 10}, OLD)]), ls(7),
        gemini("g8", "", [call("c8", "run_shell_command", {"command": f"sed -n '300,305p' {REL}"}, CODE)]),
        gemini("g9", "Done.")]
    events, _ = read(write(tmp_path / "session-1.jsonl", as_jsonl(messages)))
    issue, said_path = step_of(events, "user", "tinyparse"), step_of(events, "action", "CALL run_shell_command(command=grep")
    grep = step_of(events, "result", "run_shell_command: 212:")
    paged, old = step_of(events, "result", "read_file: \nIMPORTANT"), step_of(events, "result", "read_file: [File")
    got = [labels(events, "CALL read_file(file_path=src/tinyparse/reader.py, start_line=212"),
           labels(events, "CALL read_file(file_path=src/tinyparse/reader.py, start_line=231"),
           labels(events, "CALL run_shell_command(command=sed -n '300")]
    assert got == [[said_path, grep], [said_path, paged], [said_path, old]]
    assert not any(issue in g for g in got)  # each was [issue, said_path]


@pytest.mark.parametrize(("args", "output", "numbers", "shown"), [
    ({"file_path": "a.py", "start_line": 212, "end_line": 230}, PAGED, ["start_line", "end_line"], [212, 230, 231]),
    ({"absolute_path": "/r/a.py", "offset": 299, "limit": 10}, OLD, None, [300, 309]),  # offset: 0-based, no line
    ({"file_path": "a.py"}, CODE, None, None),  # the whole file: no header, no number
    ({"file_path": "a.py", "start_line": 0}, f"{CODE}\n{PAGED}", None, None),  # a header inside the file's text
    # a file whose own text opens with a header (a saved tool output, a fixture), read whole or from another line:
    # the header names no first line this read starts at
    ({"file_path": "a.py"}, PAGED, None, None),
    ({"absolute_path": "/r/a.py"}, OLD, None, None),
    ({"file_path": "a.py", "start_line": 1, "end_line": 50}, PAGED, ["start_line", "end_line"], None),
    ({"absolute_path": "/r/a.py", "offset": 0, "limit": 10}, OLD, None, None),
    ({"absolute_path": "/r/a.py", "offset": "299", "limit": 10}, OLD, None, [300, 309]),  # its digits, as a number
])
def test_read_file_shows_the_lines_its_header_names(args, output, numbers, shown):
    marked, reader = call_lines("read_file", args, "/r")
    assert (marked or {}).get("arguments") == numbers and reader is not None
    assert reader(output) == ({"/r/a.py": shown} if shown else {})
