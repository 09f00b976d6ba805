"""Leftovers of the shell rules (shellwords) after CONVERSION_VERSION 65: an escaped bracket in a search pattern."""

from __future__ import annotations

import pytest
from shell_calls import needed

from sam_model.data.shellwords import command_words, search_pattern


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
