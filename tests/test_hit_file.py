"""A search hit's FILE (searchhits.HIT_FILE), read alike by the page-bound rule (grep_hit, hit_lines) and by the
grep -n readers of numbered.py: a path with a space, as grep, rg and Claude Code's Grep print it, is a FILE; prose,
a URL and a time are none."""

from __future__ import annotations

import pytest
from shell_calls import grep_then_read

from sam_model.data.formats.numbered import (
    _ARROW,
    _BARE,
    _CAT_N,
    _CONTEXT,
    _grep_named,
    _numbered,
    call_lines,
)
from sam_model.data.searchhits import grep_hit, hit_lines

MAC = "/Users/ann/My Project/src/a.py"
WINDOWS = "C:\\Users\\Ann Lee\\repo\\src\\a.py"


# (a result's line, the FILE a grep -n reader reads it naming (None: no hit), its line)
LINES = [
    (f"{MAC}:200:def parse(rows):", MAC, 200),
    (f"{WINDOWS}:200:def parse(rows):", WINDOWS, 200),
    ("./My Project/a.py:200:x = 1", "./My Project/a.py", 200),
    ("src/a.py:200:12:def parse(rows):", "src/a.py", 200),  # rg --column
    ("C:\\repo\\a.py:200:x", "C:\\repo\\a.py", 200),
    ("a:200:300:", "a", 200),  # a one-letter file: no drive before a number
    ("Error at line 200: foo", None, 0),
    ("Error: bad value at line 200: foo", None, 0),
    ("http://host:8080: refused", None, 0),
    ("see http://host:8080:200: x", None, 0),
    ("2024/01/01 12:30:45 started", None, 0),  # a Go log's time
    ("2024-01-01 12:30:45 started", None, 0),
    ("12:30:45 started", None, 0),  # a time: a bare hit of line 12 at most, no FILE
    ("src/a.py-211-    x = a / b[1:10:2]", None, 0),  # a context line holding a slice
    # a Node stack frame's (/home/x/a.js:200:10) is no grep FILE but a location, a hit of its line since
    # CONVERSION_VERSION 85: tests/test_label_leftovers.py
    ("My Project/notes draft.md:200:x", None, 0),  # a space in the file's own name: read as prose
]


@pytest.mark.parametrize("line, file, number", LINES)
def test_the_grep_readers_and_the_page_bound_rule_read_one_file_name(line, file, number):
    named = _grep_named(line, "")
    assert named == ({file: [number]} if file else {})
    bare = {int(line.split(":")[0])} if line.split(":")[0].isdigit() else set()  # "12:": a one-file hit
    assert hit_lines(line) == ({number} if file else set()) | bare
    assert hit_lines(f"Bash: {line}") == hit_lines(line)  # as the importer writes a result
    for n in (200, 300, 8080, 10, 30, 12):
        assert grep_hit(line, n) is (n in hit_lines(line))


# (a line no grep, cat -n, nl or Read prints: a number with a leading zero or of more than 12 digits, as
# searchhits.LINE_NUMBER reads one; the line as they print it; its number): numbered.py read 0200: as line 200 where
# hit_lines read none, and grep_hit took a 13-digit line no reader of lines takes
NOT_PRINTED = [("a.py:0200:x", "a.py:200:x", 200), ("0200:x", "200:x", 200), ("a.py:0:x", "a.py:7:x", 7),
               ("a.py:0200:5:x", "a.py:200:5:x", 200), ("Line 0200:x", "Line 200:x", 200),
               ("a.py:1234567890123:x", "a.py:123456789012:x", 123456789012),
               ("1234567890123:x", "123456789012:x", 123456789012),
               ("   0200\tx", "   200\tx", 200), ("  0200\u2192x", "  200\u2192x", 200), ("0200-x", "200-x", 200)]
READERS = (_ARROW, _BARE, _CAT_N, _CONTEXT)


@pytest.mark.parametrize("line, printed, number", NOT_PRINTED)
def test_every_reader_of_lines_reads_one_rule_for_a_line_number(line, printed, number):
    assert _grep_named(line, "") == {} and hit_lines(line) == frozenset()
    assert all(_numbered(line, "a.py", form) == {} for form in READERS)
    assert not any(grep_hit(line, n) for n in (0, 200, 1234567890123))
    shown = [sorted(hit_lines(printed)), _grep_named(printed, "").get("a.py"),
             *(_numbered(printed, "a.py", f).get("a.py") for f in READERS)]
    assert [number] in shown and grep_hit(printed, number) is (number in hit_lines(printed))


@pytest.mark.parametrize("path", [MAC, WINDOWS])
def test_a_page_at_a_hit_on_a_path_with_a_space_is_a_window_traced_to_the_hit(tmp_path, path):
    """Read(offset=200, limit=50) after a Grep that printed PATH:200: of that file opens a window at the hit, traced to
    the Grep (59, 64); a path with a space (a macOS or Windows home) was no hit to grep_hit, so it was a page and
    not labelled."""
    folder = path.rsplit("/" if "/" in path else "\\", 2)[0]
    offsets, grep = grep_then_read(tmp_path, "the importer skips rows; look at the parser", folder,
                                   f"{path}:200:def parse(rows):", path, 200, 50)
    assert offsets == [[grep]]


@pytest.mark.parametrize("command, printed", [
    ("nl -ba -nrz src/a.py", "000212\tx = 1\n000213\ty = 2"),  # -n rz: right-aligned, zero-padded
    ("nl -ba -n rz src/a.py", "000212\tx = 1\n000213\ty = 2"),
    ("nl -ba -nln src/a.py", "212   \tx = 1\n213   \ty = 2"),  # -n ln: left-aligned, padded after it
    ("nl -ba src/a.py", "   212\tx = 1\n   213\ty = 2"),  # -n rn, the default
])
def test_nl_shows_its_lines_in_each_number_format_it_reads_as_lines(command, printed):
    """numbered.py reads nl -ba -n rz and -n ln as numbering every line of the file, but read no line of their
    output: rz's leading zeros are no line number of grep -n's or cat -n's (shellwords.LINE_NUMBER), yet they are how
    nl prints one, and ln pads the number before its tab."""
    _, reader = call_lines("Bash", {"command": command}, "/repo")
    assert reader is not None and reader(printed) == {"/repo/src/a.py": [212, 213]}
