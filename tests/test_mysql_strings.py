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


@pytest.mark.parametrize("query, literals", [
    ('SELECT * FROM "User" WHERE "createdAt" > "updatedAt" AND "email" = \'ann@x.com\'', ["ann@x.com"]),
    ('SELECT p."title" FROM "Post" p JOIN "User" u ON "authorId" = "id" WHERE u."name" = \'ann\'', ["ann"]),
    ('UPDATE "Order" SET "total" = "subtotal" + 5 WHERE "id" = 42', [5, 42]),
    ('SELECT * FROM orders WHERE "shippedAt" = "deliveredAt" AND customer_id = 42', [42]),
])
def test_a_query_that_quotes_its_names_compares_names_to_names(query, literals):
    """A query that double-quotes a name where no string may stand (FROM "User", "createdAt" >) reads every
    double-quoted token as a name, as PostgreSQL does: the name compared to a name had been a MySQL string."""
    assert sql_literals(query) == literals


def test_a_mysql_query_keeps_its_strings_beside_a_json_path_or_a_fulltext_search():
    """A MySQL JSON path compared (doc->>"$.city" = ...), AGAINST ("..." IN BOOLEAN MODE) and a date a BETWEEN
    follows quote no name."""
    assert "Bob" in sql_literals('SELECT * FROM t WHERE doc->>"$.city" = "Paris" AND name = "Bob"')
    assert sql_literals('SELECT * FROM p WHERE MATCH(title) AGAINST ("usb hub" IN BOOLEAN MODE) AND brand = "Anker"') \
        == ["Anker"]
    assert sql_literals('SELECT * FROM rates WHERE "2024-01-15" BETWEEN valid_from AND valid_to AND plan = "pro"') \
        == ["pro"]


def test_a_name_a_postgresql_query_compares_to_labels_no_schema_listing():
    """The name "publishedAt" compared to a name, read as a MySQL string, was a needed value traced to the listing of
    the table's columns, which became the query's label beside the user's turn."""
    events = convert([
        {"role": "user", "content": "which of ann's posts were edited after publishing? db is blog_pg"},
        sql("p0", "SELECT column_name FROM information_schema.columns WHERE table_name = 'Post'", "blog_pg"),
        {"role": "tool", "tool_call_id": "p0", "content": "column_name\nid\ntitle\nauthorId\npublishedAt\nupdatedAt"},
        {"role": "user", "content": "ok, now the query"},
        sql("p1", 'SELECT p."title" FROM "Post" p JOIN "User" u ON u."id" = p."authorId" WHERE u."name" = \'ann\' '
                  'AND "updatedAt" > "publishedAt"', "blog_pg"),
        {"role": "tool", "tool_call_id": "p1", "content": "title\nHello"},
    ])
    decision = events[3]
    assert decision["meta"]["needed"] == {"query": ["ann"], "database": ["blog_pg"]}
    assert decision["useful_memory_steps"] == [0]


def test_a_name_written_before_its_column_in_a_mysql_query_is_traced_to_the_user():
    """MySQL's "Alice" = name (a value written before its column) is shaped as PL/pgSQL's "Email" = email, so it
    reads as a name; but a query that writes its other strings in double quotes where only a value stands (AND
    city = "Paris") is MySQL's: until 2026-12-07 every double-quoted token of it was a name, Paris too, and the
    customer the user named labelled nothing."""
    events = convert([
        {"role": "user", "content": "does Alice still live in Paris? the db is crm_mysql"},
        sql("m0", "SHOW TABLES", "crm_mysql"),
        {"role": "tool", "tool_call_id": "m0", "content": "Tables_in_crm_mysql\ncustomers\norders"},
        sql("m1", 'SELECT id, name, city FROM customers WHERE "Alice" = name AND city = "Paris" '
                  'ORDER BY created_at DESC LIMIT 5', "crm_mysql"),
    ])
    decision = next(e for e in events if "query" in e.get("meta", {}).get("needed", {}))
    assert decision["meta"]["needed"] == {"query": ["alice", "paris"], "database": ["crm_mysql"]}
    assert decision["useful_memory_steps"] == [0]


@pytest.mark.parametrize("query, literals", [
    # PL/pgSQL's column compared to a parameter beside a camelCase name compared to a column: both names (until
    # conversion 159 id = "userId" was taken as a MySQL string, and both were read as values)
    ('SELECT id FROM users WHERE "Email" = email AND id = "userId" AND age > 30', [30]),
    # a query that shows PostgreSQL (a cast, a $1 parameter, ILIKE, an E'' string) reads its double
    # quotes as PostgreSQL does, as names
    ('SELECT * FROM posts WHERE "Title" = title AND author = "Bob" AND created_at::date = \'2024-01-01\'',
     ["2024-01-01"]),
    ('SELECT * FROM users WHERE "Email" = email AND team = "Core" AND id = $1 AND age > 3', [3]),
    ('SELECT * FROM users WHERE "Email" = email AND team = "Core" AND note ILIKE \'%vip%\'', ["vip"]),
    ("SELECT * FROM users WHERE \"Email\" = email AND team = \"Core\" AND note = E'x\\'y'", ["x'y"]),
])
def test_a_postgresql_query_reads_its_double_quotes_as_names(query, literals):
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query, literals", [
    # an IN list's double-quoted items are MySQL's strings (PostgreSQL's IN lists hold values, not columns)
    ('SELECT * FROM users WHERE "Alice" = name AND city IN ("Paris", "Lyon")', ["Alice", "Paris", "Lyon"]),
    ('SELECT * FROM users WHERE "Alice" = name AND city = "Paris"', ["Alice", "Paris"]),
    # no PostgreSQL sign: a value's double quotes stay MySQL's strings
    ('SELECT * FROM users WHERE name = "Alice" AND city IN ("Paris") LIMIT 5', ["Alice", "Paris"]),
    ("SELECT * FROM users WHERE name = \"Alice\" AND note = 'e'", ["Alice", "e"]),
    # MySQL names may hold a $: no PostgreSQL parameter
    ('SELECT * FROM users WHERE "Alice" = name AND price$1 > 5 AND city = "Paris"', ["Alice", 5, "Paris"]),
    # RETURNING is no sign of PostgreSQL: SQLite (3.35) and MariaDB (10.5) write it, their values in double quotes
    # strings (conversions 159 to 165 read them as names, and these queries as holding no literal)
    ('INSERT INTO users (name, city) VALUES ("Alice", "Paris") RETURNING id', ["Alice", "Paris"]),
    ('DELETE FROM sessions WHERE user = "alice" RETURNING id', ["alice"]),
    ('UPDATE users SET name = "Bob" WHERE id = 3 RETURNING *', ["Bob", 3]),
])
def test_a_mysql_query_keeps_its_double_quoted_strings(query, literals):
    assert sql_literals(query) == literals


def test_a_plpgsql_name_compared_to_a_camelcase_name_labels_no_schema_listing():
    """PL/pgSQL's WHERE "Email" = email AND id = "userId": the camelCase name after the operator was taken as a MySQL
    string, which made "Email" one too; both were needed values, traced to the listing of the table's columns."""
    events = convert([
        {"role": "user", "content": "find the accounts older than 40 in app_pg"},
        sql("p0", "SELECT column_name FROM information_schema.columns WHERE table_name = 'users'", "app_pg"),
        {"role": "tool", "tool_call_id": "p0", "content": "column_name\nid\nEmail\nuserId\nage"},
        {"role": "user", "content": "ok, now the query"},
        sql("p1", 'SELECT id FROM users WHERE "Email" = email AND id = "userId" AND age > 40', "app_pg"),
        {"role": "tool", "tool_call_id": "p1", "content": "id\n7"},
    ])
    decision = events[3]
    assert decision["meta"]["needed"] == {"database": ["app_pg"]}  # 40: a small number, traced by no rule
    assert decision["useful_memory_steps"] == [0]


@pytest.mark.parametrize("query, literals", [
    # a value written before its column beside a camelCase value ("iPhone" reads as PostgreSQL's "userId" may): read
    # as names, no literal, unless the query shows MySQL outside its strings (a backtick, LIMIT's offset before a
    # comma, MySQL's own functions, REGEXP, <=>, ON DUPLICATE KEY): then both strings
    ('SELECT * FROM `products` WHERE "Apple" = brand AND name = "iPhone"', ["Apple", "iPhone"]),
    ('SELECT * FROM products WHERE "Apple" = brand AND name IN ("iPhone", "iPad") LIMIT 0, 10',
     ["Apple", "iPhone", "iPad"]),
    ('SELECT GROUP_CONCAT(sku) FROM products WHERE "Apple" = brand AND name = "iPhone"', ["Apple", "iPhone"]),
    ("SELECT * FROM products WHERE \"Apple\" = brand AND name = \"iPhone\" AND sku REGEXP '^A'", ["Apple", "iPhone", "^A"]),
    ('SELECT * FROM products WHERE "Apple" = brand AND name <=> "iPhone"', ["Apple", "iPhone"]),
    ('INSERT INTO stock (brand, qty) SELECT brand, 1 FROM products WHERE "Apple" = brand AND name = "iPhone" '
     'ON DUPLICATE KEY UPDATE qty = qty + 1', [1, "Apple", "iPhone", 1]),
])
def test_a_camelcase_value_reads_as_a_mysql_string_where_the_query_shows_mysql(query, literals):
    """A camelCase token where a value stands ("iPhone") is no evidence of MySQL's double-quoted strings (it may be a
    PostgreSQL name, id = "userId"), so a query writing a value before its column and only such values read every
    double-quoted token as a name: the product the user named was no literal. What PostgreSQL cannot write tells."""
    assert sql_literals(query) == literals


@pytest.mark.parametrize("query", [
    # no sign of MySQL: names, as before (PL/pgSQL's column compared to a parameter, a camelCase name to a column)
    'SELECT * FROM products WHERE "Apple" = brand AND name = "iPhone"',
    'SELECT id FROM users WHERE "Email" = email AND id = "userId" LIMIT 5',
    # PostgreSQL 16's date_add, a backtick or a MySQL function inside a string: no sign
    'SELECT id FROM users WHERE "Email" = email AND id = "userId" AND date_add(now(), interval) > created_at',
    "SELECT id FROM users WHERE \"Email\" = email AND id = \"userId\" AND note = '`ifnull(x)` limit 1, 2'",
    # a PostgreSQL sign beside a MySQL one: PostgreSQL's names, as PostgreSQL runs it
    'SELECT * FROM products WHERE "Apple" = brand AND name = "iPhone" AND id = $1 LIMIT 10, 20',
    # a column or a schema's function named as MySQL's words, after a dot: PostgreSQL writes them (regexp, rlike
    # and ifnull are no words of its own), no sign of MySQL
    'SELECT p.regexp FROM products p WHERE "Apple" = brand AND name = "iPhone"',
    'SELECT * FROM rules r WHERE "Apple" = r.brand AND name = "iPhone" AND r.RLIKE > 0',
    'SELECT app.ifnull(p.price, 0) FROM products p WHERE "Apple" = brand AND name = "iPhone"',
])
def test_a_camelcase_name_stays_a_name_without_a_sign_of_mysql(query):
    assert not {"Apple", "iPhone", "Email", "userId", "ifnull"} & set(sql_literals(query) or [])


def test_a_camelcase_product_in_a_mysql_query_is_traced_to_the_user():
    """The user names the iPhone; the agent's MySQL query (backticks) writes it in double quotes beside "Apple" =
    brand: until conversion 171 both were names, and the query's label held nothing the user said."""
    events = convert([
        {"role": "user", "content": "how many Apple iPhone units are left? db is shop_mysql"},
        sql("m0", "SHOW TABLES", "shop_mysql"),
        {"role": "tool", "tool_call_id": "m0", "content": "Tables_in_shop_mysql\nproducts"},
        sql("m1", 'SELECT qty FROM `products` WHERE "Apple" = brand AND name = "iPhone"', "shop_mysql"),
    ])
    decision = next(e for e in events if "query" in e.get("meta", {}).get("needed", {}))
    assert decision["meta"]["needed"] == {"query": ["apple", "iphone"], "database": ["shop_mysql"]}
    assert decision["useful_memory_steps"] == [0]
