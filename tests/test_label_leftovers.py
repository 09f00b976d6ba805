"""Leftovers in the tool-transcript labelling: quoted shell syntax read as syntax, backslash-newlines inside double
quotes, other tools' locations, Gemini CLI's search hits, OpenHands' open_file and amounts written with thousands
separators. Each test writes the smallest call or transcript that showed the wrong label or the miss."""

from __future__ import annotations

import pytest
from shell_calls import needed

from sam_model.data.formats.numbered import call_lines
from sam_model.data.shellwords import command_words


@pytest.mark.parametrize("command, expected", [
    ("grep -n '|' src/table.py", ["src/table.py"]),  # the pattern is one character: trivial, the file stays
    ('grep -c ";" build/run.sh', ["build/run.sh"]),
    ("cut -d '|' -f 2 data/users.csv", ["2", "data/users.csv"]),
    ("grep -n '>' src/render.py", ["src/render.py"]),  # no redirection either
])
def test_a_quoted_operator_is_a_word(command, expected):
    """A quoted ';', '|' or '>' is a word, as bash reads it: shlex's token had lost its quotes, so it split the
    command (or redirected), and the file after it was read as a new command's program word."""
    assert [w for w in command_words(command) or [] if len(w) > 1 or w.isalnum()] == expected


def test_a_quoted_reserved_word_is_a_grep_pattern():
    """grep -n "done" FILE searches for done; 'done' was taken for the shell's reserved word, so FILE became the
    pattern and the user's done was traced by nothing."""
    got = needed('grep -n "done" jobs/queue.py', "Jobs marked done in jobs/queue.py are requeued")
    assert got == ({"command": ["done", "jobs/queue.py"]}, [0])


def test_the_file_after_a_quoted_pipe_is_traced_to_the_user():
    assert needed("grep -n '|' src/parser.py", "The table rows in src/parser.py split wrong") \
        == ({"command": ["src/parser.py"]}, [0])


def test_a_grep_for_a_quoted_pipe_shows_the_lines_it_printed():
    """numbered.py read grep -n '|' a.py as a pipe into a program named a.py, so its hits showed no line."""
    _, reader = call_lines("Bash", {"command": "grep -n '|' src/table.py"}, "/r")
    assert reader is not None and reader("212:    row = line.split('|')") == {"/r/src/table.py": [212]}


def test_an_escaped_semicolon_still_ends_find_exec_and_a_bare_one_splits():
    assert command_words("find src -name '*.py' -exec grep -l parse_block {} \\;") == ["src", "*.py", "parse_block",
                                                                                      "{}", ";"]
    assert command_words("cd src; cat reader.py") == ["src", "reader.py"]

