"""A SQL query that shows no dialect (no MySQL sign, no PostgreSQL sign, no name quoted where only a name stands)
reads each double-quoted token by its place (sam_model.data.sqlwords._quoting returns ""): a string where only a
value stands, a name elsewhere. A join's ON compares a column to a column: a double-quoted token after its operator
was read as a string there too, the column name traced to any listing of the columns."""

from __future__ import annotations

import pytest

from sam_model.data.sqlwords import sql_literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM users u JOIN posts p ON u.id = "authorId"', None),
    ('SELECT * FROM users u JOIN posts p ON u.id = "author_id" WHERE u.name = \'ann\'', ["ann"]),
    ('SELECT * FROM a JOIN b ON a.k = "k" AND a.t <> "tenant_id" WHERE a.x > 3', [3]),
    # a key's name in PascalCase (Entity Framework's columns) or with its Id in capitals
    ('SELECT * FROM users u JOIN posts p ON u.id = "AuthorId" WHERE p.n > 3', [3]),
    ('SELECT * FROM users u JOIN posts p ON u.id = "authorID" WHERE p.n > 3', [3]),
])
def test_a_double_quoted_token_a_join_compares_is_a_column_where_no_dialect_shows(query, literals):
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    # no dialect: by its place, a value where only a value stands, a name elsewhere
    ('SELECT * FROM users WHERE name = "Alice"', ["Alice"]),
    ('SELECT * FROM users WHERE id = "userId" AND name = \'ann\'', ["userId", "ann"]),
    ('SELECT "name" FROM users WHERE id = 7', [7]),
    # MySQL shown (a string in double quotes elsewhere, a LIMIT's offset): the join's token is MySQL's string
    ('SELECT * FROM users u JOIN p ON u.id = "author_id" WHERE u.city = "Paris"', ["author_id", "Paris"]),
    ('SELECT * FROM users u JOIN p ON u.id = "author_id" WHERE u.city = \'Paris\' LIMIT 0, 5', ["author_id", "Paris"]),
])
def test_a_query_of_no_dialects_sign_reads_its_double_quotes_by_their_place(query, literals):
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM flights f JOIN bookings b ON b.flight = f.id AND b.cabin = "economy" WHERE f.origin = \'SFO\'',
     ["economy", "SFO"]),
    ('SELECT * FROM tickets t JOIN codes c ON c.code = "ABC123"', ["ABC123"]),
    ('SELECT * FROM parcels p LEFT JOIN scans s ON s.parcel = p.id AND s.carrier = "DHL Express" WHERE p.weight > 2',
     ["DHL Express", 2]),
])
def test_a_join_filtering_on_a_double_quoted_value_keeps_the_value(query, literals):
    """A join's ON often filters on a value too (ON b.flight = f.id AND b.cabin = "economy"), which SQLite and MySQL
    read as a string: a token of no column's shape there (no camelCase, no ..._id) read as a name made the whole
    query's double quotes names, the cabin the user asked for traced to nothing."""
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM tickets t JOIN codes x ON x.code = "AID"', ["AID"]),
    ('SELECT * FROM tickets t JOIN codes x ON x.code = "OID" WHERE t.n > 3', ["OID", 3]),
    ('SELECT * FROM tickets t JOIN codes x ON x.code = "KID"', ["KID"]),
    ('SELECT * FROM tickets t JOIN codes x ON x.code = "xId"', ["xId"]),
    ('SELECT * FROM tickets t JOIN codes x ON x.code = "K_ID"', ["K_ID"]),
    # a key's name keeps its name part: still a column
    ('SELECT * FROM users u JOIN posts p ON u.id = "AUTHOR_ID" WHERE p.n > 3', [3]),
    ('SELECT * FROM users u JOIN posts p ON u.id = "orderItemId" WHERE p.n > 3', [3]),
])
def test_a_short_code_ending_in_id_a_join_filters_on_is_a_value(query, literals):
    """A key column's name has a name before its Id (authorId, author_id): a code such as "AID" or "OID", which a
    user gave, read as a key column's name made the query's double quotes names and the code traced to nothing."""
    assert sql_literals(query) == literals
