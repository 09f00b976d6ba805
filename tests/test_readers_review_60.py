"""A hostile review of stop 60's reader commits (conversions 116-119): where a new rule read real logs wrong more often
than the rule before it, the rule refined; each test fails on the code before its fix."""

from __future__ import annotations

import pytest

from sam_model.data.sqlwords import sql_literals


@pytest.mark.parametrize("query, literals", [
    # PL/pgSQL (a function's parameter compared to a quoted column), as found in public repositories
    ('SELECT user_id FROM "User" u WHERE "Email" = email AND "user_password" = password__', None),
    ('SELECT * FROM users WHERE "Email" = email AND "user_password" = password__', None),
    ('SELECT * FROM posts p JOIN users u ON "authorId" = u.id WHERE u.id = 5', [5]),
    ("SELECT title FROM docs WHERE \"contentId\" = id AND lang = 'en'", ["en"]),
    ('SELECT * FROM users WHERE "Alice" = name AND city = "Paris"', None),  # the price: names, as before 119
])
def test_a_quoted_name_compared_to_a_bare_column_stays_a_name(query, literals):
    """119 read a double-quoted token compared to a bare column after it as a MySQL string, for "Alice" = name: but
    PostgreSQL queries write a quoted camelCase name compared to a bare or qualified one (ON "userId" = u.id, WHERE
    "contentId" = id; public repositories hold many, and no MySQL value written first was found), which 119 read as
    literals, the names traced to any output saying them. A token shaped as a name stays a name there; one no name is
    shaped as ("alice@example.com" = email) is a string (tests/test_readers_leftovers_60.py)."""
    assert sql_literals(query) == literals
