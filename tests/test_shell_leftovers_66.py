"""Leftovers of the shell rules (shellwords) after CONVERSION_VERSION 65: an escaped bracket in a search pattern, and
the text sed's a, i and c append in a single-quoted script."""

from __future__ import annotations

import pytest
from shell_calls import needed

from sam_model.data.sedwords import sed_words
from sam_model.data.shellwords import command_words
from sam_model.data.toolarguments import search_pattern


@pytest.mark.parametrize("command, expected", [
    # an escaped bracket is a literal's (an INI or TOML section, an index): the names between them are traced
    (r"grep -n '\[database\]' config.ini", ["database", "config.ini"]),
    (r"rg -n '^\[tool\.poetry\]' pyproject.toml", ["tool.poetry", "pyproject.toml"]),
    (r"""grep -rn 'settings\["db_host"\]' src""", ["settings", "db_host", "src"]),
    (r"sed -i 's/\[database\]/[db_primary]/' config.ini", ["database", "db_primary", "config.ini"]),
    # a bracket that opens a class is none, as before (an escaped backslash before it too)
    ("grep -rn 'order_[0-9]+' logs", ["order_", "logs"]),
    (r"grep -rn 'C:\\[a-z]' notes.txt", ["C", "notes.txt"]),
])
def test_an_escaped_bracket_is_a_literal(command, expected):
    assert command_words(command) == expected


def test_a_section_searched_by_its_escaped_brackets_is_traced_to_who_named_it():
    """grep '\\[database\\]' read [database\\] as a class of characters: the pattern traced nothing, though the user
    named the section."""
    values, labels = needed(r"grep -n '\[database\]' config.ini", "The [database] section of config.ini is wrong.")
    assert values == {"command": ["database", "config.ini"]} and labels == [0]
    assert search_pattern("Grep", "pattern", r"^\[database\]$") == ["database"]


@pytest.mark.parametrize("script, expected", [
    ("3a\\\nline one\\\nline two", ["line one\nline two", "3"]),  # a\ then two lines: sed appends two lines
    ("/^def main/i\\\n    # TODO: remove\\\n    import pdb", ["main", "TODO: remove\n    import pdb"]),
    ("/^import os$/a\\\nimport sys", ["os", "sys"]),  # code: its names, as before
])
def test_a_single_quoted_sed_text_is_the_lines_sed_appends(script, expected):
    """In single quotes a backslash-newline is the script's own text, which sed reads as its text's line breaks; the
    whole command line's had been joined first (``'3a\\<newline>one\\<newline>two'`` read ``one two``)."""
    assert command_words(f"sed -i '{script}' src/app.py") == [*expected, "src/app.py"] == [*sed_words(script),
                                                                                           "src/app.py"]


@pytest.mark.parametrize("command, expected", [
    ("grep -rn parse_rows \\\n  src/ | head", ["parse_rows", "src"]),  # unquoted: bash joins the lines
    ('sed -i "3a\\\nimport sys" src/app.py', ["sys", "3", "src/app.py"]),  # in double quotes too
    ("bash <<EOF\ngrep -rn parse_rows \\\n  src/\nEOF", ["parse_rows", "src"]),  # a heredoc's body, as before
])
def test_a_backslash_newline_outside_single_quotes_still_joins_two_lines(command, expected):
    assert command_words(command) == expected


def test_a_comment_ends_at_its_line_break_whatever_it_ends_with():
    """bash reads no escape in a comment: a backslash ending one does not join the next line to it (the whole line's
    backslash-newlines had been joined first, so the command after it was read as the comment's)."""
    assert command_words("ls src  # list \\\ncat src/app.py") == ["src", "src/app.py"]


@pytest.mark.parametrize("command, expected", [
    # a quoted delimiter: the body is bash's as written, no backslash-newline joined (bash runs two commands here)
    ("bash <<'EOF'\nls src # list \\\ncat src/app.py\nEOF", ["src", "src/app.py"]),
    ("python3 <<'EOF'\nimport os  # paths \\\nprint(open('src/app.py').read())\nEOF", ["src/app.py"]),
    # a body's last line ending with a backslash: the delimiter after it still ends the body
    ("cat > run.sh <<'EOF'\npython train.py \\\nEOF\ncat src/app.py", ["run.sh", "src/app.py", "python train.py \\"]),
    # <<\EOF quotes the delimiter as <<'EOF' does: its word is EOF (the body had run to the end of the command)
    ("cat <<\\EOF > notes.txt\nhello\nEOF\ncat src/app.py", ["notes.txt", "src/app.py", "hello"]),
    # an unquoted delimiter: bash joins the body's lines, a comment ending in a backslash takes the next line
    ("bash <<EOF\nls src # list \\\ncat src/app.py\nEOF", ["src"]),
])
def test_a_quoted_heredoc_body_is_read_as_written(command, expected):
    """A heredoc whose delimiter is quoted ('EOF', "EOF", \\EOF) is fed to its command as written: bash joins no
    backslash-newline of it, where b578e5a (like the join of the whole line before it) joined every body's, so a
    comment ending in a backslash took the next command, and a last line ending in one took the delimiter."""
    assert command_words(command) == expected
