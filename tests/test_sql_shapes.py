"""A SQL tool's query is read by its literals only where it is SQL, and every literal it names is a value.

Found by a hostile review of the SQL rule (sam_model.data.sqlwords): a search engine's tool named ``query`` (or
``search_database``, ``query_knowledge_base``) is a SQL tool by its name, and its words ``select the best laptop
under 1000`` open as a statement, so the search's words were read as SQL and its ``1000`` traced alone; a US state a
query filters by (``state = 'Texas'``, ``state IN ('NY', 'NJ')``) was dropped as a status word; ``.125`` was read as
125.
"""

from __future__ import annotations

import json

from sam_model.data.sqlwords import sql_literals
from sam_model.data.transcripts import Conversation, convert_conversation


def convert(messages: list[dict]) -> list[dict]:
    return convert_conversation(Conversation("shop-1", messages, "shop.jsonl:1", "shop-1"))


def test_english_that_opens_with_a_keyword_is_no_statement():
    for words in ("select the best laptop under 1000 dollars", "explain the refund policy for order 45821",
                  "with love from paris 2024", "update on the 'acme' outage", "delete events for 'acme'",
                  "values of 'acme' shares in 2024", "select the 'cheap' laptop from amazon"):
        assert sql_literals(words) is None, words
    for query, literals in (("SELECT * FROM t WHERE id = 4521", [4521]),
                            ("select name from t where region = 'eu'", ["eu"]),
                            ("WITH r AS (SELECT 1) SELECT * FROM r WHERE name = 'acme'", [1, "acme"]),
                            ("EXPLAIN ANALYZE SELECT * FROM t WHERE id = 4521", [4521]),
                            ("UPDATE t SET note = 'late' WHERE order_id = 88123", ["late", 88123]),
                            ("DELETE FROM t WHERE id = 4521", [4521]),
                            ("INSERT INTO t VALUES ('acme', 4521)", ["acme", 4521]),
                            ("(SELECT id FROM t WHERE x = 'a') UNION (SELECT id FROM u WHERE x = 'b')", ["a", "b"]),
                            # a filter of no sign: LIKE, BETWEEN
                            ("SELECT id FROM orders WHERE tenant LIKE 'acme%'", ["acme"]),
                            ("SELECT name FROM users WHERE email ILIKE '%acme.com'", ["acme.com"]),
                            ("SELECT id FROM orders WHERE total BETWEEN 1000 AND 5000", [1000, 5000])):
        assert sql_literals(query) == literals, query


def test_a_search_engines_query_is_traced_whole_as_the_spec_reads_it():
    said = "find me the best laptop under 1000 dollars"
    events = convert([
        {"role": "user", "content": said},
        {"role": "assistant", "content": "searching"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "q", "type": "function", "function": {
            "name": "query", "arguments": json.dumps({"query": "select the best laptop under 1000 dollars"})}}]},
    ])
    assert "useful_memory_steps" not in events[1], events[1]  # the search's words, said whole by no event


def test_a_place_or_code_a_state_column_holds_is_a_value():
    assert sql_literals("SELECT * FROM customers WHERE state = 'Texas' AND city = 'Austin'") == ["Texas", "Austin"]
    assert sql_literals("SELECT * FROM customers WHERE state IN ('NY', 'NJ')") == ["NY", "NJ"]
    # the schema's own words, lower case or a constant's upper case, are still no value
    assert sql_literals("SELECT * FROM o WHERE status IN ('failed', 'PENDING') AND id = 4521") == [4521]


def test_a_fraction_written_without_its_zero():
    assert sql_literals("SELECT * FROM loans WHERE rate > .125") == [0.125]
    assert sql_literals("SELECT t.x FROM t WHERE t.id = 4521") == [4521]


def test_a_backslash_escaped_quote_is_read_as_mysql_and_postgres_e_strings_read_it():
    """MySQL's strings and PostgreSQL's E'' strings escape a quote with a backslash: O\\'Brien's quote was read as
    the string's end, the rest of the query did not scan, and the whole query (free text) traced nothing."""
    assert sql_literals("SELECT * FROM t WHERE name = E'O\\'Brien' AND id = 4521") == ["O'Brien", 4521]
    assert sql_literals("SELECT * FROM t WHERE name = 'O\\'Brien' AND city = 'Cork'") == ["O'Brien", "Cork"]
    assert sql_literals("SELECT * FROM t WHERE path = 'C:\\' AND id = 4521") == ["C:\\", 4521]  # standard SQL's
