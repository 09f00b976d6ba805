"""MySQL reads a double-quoted token as a string (without ANSI_QUOTES): ``WHERE name = "Alice"`` compares to the name
Alice. sqlwords read every double-quoted token as a quoted identifier, as ANSI SQL and PostgreSQL do, so the value
a MySQL agent wrote so was no literal: its query traced nothing, or only its other literals. A double-quoted token
where only a value may stand is a string; one where a name must stand (after FROM, in a qualified name, before the
operator) is a name, as before."""

from __future__ import annotations

import pytest
from test_sql_literals import convert, sql

from sam_model.data.sqlwords import sql_literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM users WHERE name = "Alice"', ["Alice"]),
    ('SELECT id FROM orders WHERE created_at BETWEEN "2024-01-01" AND "2024-01-31" AND tenant IN ("acme", "beta")',
     ["2024-01-01", "2024-01-31", "acme", "beta"]),
    ('SELECT * FROM customers c WHERE c.name LIKE "%acme%" AND c.region <> "eu-west"', ["acme", "eu-west"]),
    ('SELECT * FROM t WHERE name = "O""Brien" OR name = "O\\"Brien"', ['O"Brien', 'O"Brien']),
    ('INSERT INTO users (name, status) VALUES ("Alice", "active")', ["Alice"]),  # a status word: the schema's
    ('UPDATE users SET email = "ann@example.com" WHERE id = 4521', ["ann@example.com", 4521]),
    ('SELECT * FROM orders WHERE status = "open" AND tenant = "acme"', ["acme"]),
])
def test_a_double_quoted_value_is_a_string(query, literals):
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT "Tenant Id", t2.col3 FROM "orders" t2 WHERE x = $1 OFFSET 400', None),
    ("SELECT * FROM \"users\" WHERE \"name\" = 'Alice'", ["Alice"]),
    ('SELECT * FROM orders o JOIN customers c ON o."customer_id" = c."id" WHERE c.tier = \'gold\'', ["gold"]),
    ('SELECT * FROM t WHERE a = "b"."c"', None),  # a qualified name after the operator
    ('SELECT * FROM t WHERE "t"."status" = \'open\'', None),
])
def test_a_double_quoted_name_stays_a_name(query, literals):
    assert sql_literals(query) == literals


def test_a_name_a_mysql_query_compares_to_is_traced_to_the_user():
    """The customer the user named, written double-quoted into a MySQL query of more than 8 words: it had been no
    literal, so the query was free text and the user's turn labelled nothing."""
    events = convert([
        {"role": "user", "content": "what did Alice Moreau order last week? the db is shop_mysql"},
        sql("m0", "SHOW TABLES", "shop_mysql"),
        {"role": "tool", "tool_call_id": "m0", "content": "Tables_in_shop_mysql\ncustomers\norders"},
        sql("m1", 'SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer_id '
                  'WHERE c.full_name = "Alice Moreau" AND o.created_at >= NOW() - INTERVAL 7 DAY', "shop_mysql"),
    ])
    decision = next(e for e in events if "query" in e.get("meta", {}).get("needed", {}))
    assert decision["meta"]["needed"] == {"query": ["alice moreau"], "database": ["shop_mysql"]}
    assert decision["useful_memory_steps"] == [0]
