"""A state a SQL query compares a status-like column to is the schema's word (sqlwords._is_enum, CONVERSION_VERSION
92), not a value the conversation gave; it was missed, and traced to the first event that said it, where the state
is of a few lower-case words (``'on hold'``, ``'in-progress'``), the column is quoted (``"status"``, MySQL's
backticks) or cast (``status::text``, ``CAST(status AS text)``), comes after the literal (``'open' = status``), or
is an INSERT's column the VALUES row fills by position."""

from __future__ import annotations

import pytest
from test_sql_literals import convert, sql

from sam_model.data.sqlwords import sql_literals


@pytest.mark.parametrize("query", [
    "SELECT * FROM tickets WHERE status = 'on hold' AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE status = 'in-progress' AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE status IN ('pending', 'not started') AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE 'open' = status AND tenant = 'acme'",
    "SELECT * FROM tickets t WHERE 'open' <> t.\"status\" AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE status::text = 'open' AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE CAST(status AS text) = 'open' AND tenant = 'acme'",
    "SELECT * FROM tickets t WHERE t.\"status\" = 'open' AND tenant = 'acme'",
    "SELECT * FROM tickets WHERE `status` = 'open' AND tenant = 'acme'",
    "INSERT INTO tickets (status, tenant) VALUES ('open', 'acme')",
])
def test_a_state_the_schema_names_is_no_value(query):
    assert sql_literals(query) == ["acme"]


def test_values_the_conversation_gave_are_still_traced():
    """A state written as a name is given (capitalised, a code), and every other column's literal is a value: an
    INSERT's by its position, a literal inside a function call of a row too, the ON CONFLICT clause's by its column."""
    assert sql_literals("SELECT * FROM orders WHERE status = 'Active' AND state = 'NY'") == ["Active", "NY"]
    assert sql_literals("SELECT * FROM t WHERE status = 'open' AND priority = 'high'") == ["high"]
    assert sql_literals("INSERT INTO tickets (title, status, tenant) VALUES ('Printer jam', 'open', 'acme'), "
                        "(concat('a', 'b'), 'closed', 'beta') ON CONFLICT (id) DO UPDATE SET status = 'open', "
                        "owner = 'ann' RETURNING id") == ["Printer jam", "acme", "a", "b", "beta", "ann"]
    assert sql_literals("SELECT status AS s FROM t WHERE name = 'acme'") == ["acme"]
    assert sql_literals("INSERT INTO tickets (\"status\", `tenant`) VALUES ('open', 'acme'), ('closed', 123)") \
        == ["acme", 123]


def test_a_state_a_result_listed_labels_no_query_that_filters_by_it():
    """The tickets a tool listed say 'on hold'; the query that filters by that state asks the tenant the user gave,
    and its state is the schema's: it is no needed value traced to the listing."""
    events = convert([
        {"role": "user", "content": "which tickets of tenant acme are waiting? db is support_prod"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "l1", "type": "function", "function": {
            "name": "list_ticket_states", "arguments": '{"database": "support_prod"}'}}]},
        {"role": "tool", "tool_call_id": "l1", "content": "state     | tickets\n----------+--------\n open      | 12\n"
                                                           " on hold   | 4\n in-progress | 9\n(3 rows)"},
        {"role": "user", "content": "ok, count the waiting ones"},
        sql("q1", "SELECT count(*) FROM tickets WHERE \"status\" = 'on hold' AND tenant = 'acme' "
                  "AND 'in-progress' <> status", "support_prod"),
    ])
    decision = events[3]
    assert decision["meta"]["needed"] == {"query": ["acme"], "database": ["support_prod"]}
    assert decision["useful_memory_steps"] == [0]


@pytest.mark.parametrize("query, literals", [
    ("SELECT * FROM customers WHERE LOWER(state) = 'new york' AND city = 'albany'", ["new york", "albany"]),
    ("SELECT count(*) FROM stores WHERE state ILIKE '%new mexico%' AND open = true", ["new mexico"]),
    ("SELECT * FROM products WHERE type = 'red wine' AND price < 30", ["red wine", 30]),
    ("SELECT * FROM rooms WHERE room_type = 'double room' AND hotel_id = 7", ["double room", 7]),
    ("SELECT * FROM tickets WHERE order_status = 'not started' AND stage = 'in review'", None),
])
def test_a_phrase_is_a_state_only_of_a_progress_column(query, literals):
    """A few lower-case words are the schema's state where the column says status, phase or stage; compared to a
    state (a place), a type or a level they are what the user asked for, and had been no literal."""
    assert sql_literals(query) == literals
