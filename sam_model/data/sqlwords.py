"""The values a SQL query names: its string and number literals (``WHERE tenant = 'acme-eu' AND total > 2500``).

A data agent writes the tenant, merchant, id or day it was given into a query (``run_sql(query=..., database=...)``).
The spec traces an argument whole: a query of more than 8 words is free text and was never traced, a shorter one was
said whole by no event, so the value the user gave three turns earlier labelled nothing. As the shell rule reads a
command line by its words (:mod:`sam_model.data.shellwords`) and :mod:`sam_model.data.scriptwords` a one-line script
by its string literals, a query is read by its literals: its table and column names are the schema, the same in every
conversation (``OTHER_LANGUAGES`` in :mod:`sam_model.data.toolarguments` keeps a SQL tool out of the shell rule for
that reason), its literals what this conversation asked about.

Nothing is parsed as SQL: a small scanner reads past comments (``--``, ``/* */``), quoted identifiers (``"Tenant
Id"``, MySQL's backticks) and dollar-quoted bodies (``$$...$$``, code), and reads single-quoted strings (``''`` an
escaped quote; a backslash escapes one too where the query does not scan without, as MySQL's strings and
PostgreSQL's ``E''`` read it) and unsigned numbers standing alone (not a digit of ``t2`` or ``$1``). A double-quoted
token is a string where only a value may stand, as MySQL reads ``WHERE name = "Alice"`` (after a comparison's
operator, LIKE, a BETWEEN or its AND, in an IN list or a VALUES row, no part of a qualified name), and a quoted
identifier anywhere else (after FROM, JOIN or INTO, in a SELECT's columns, before an operator, ``t."status"``), as
ANSI SQL and PostgreSQL read it (:func:`_double_quoted_string`), as is every double-quoted token of a query that
quotes a name so in such a place (:func:`_quoting`: ``WHERE "createdAt" > "updatedAt"``); before a comparison with
a bare column it is a string where no name is shaped as it (``WHERE "alice@x.com" = email``, MySQL's comparison the
other way round), and one shaped as a name (``"Alice" = name``, PL/pgSQL's ``"Email" = email``) is a string only in a
query that writes a string in double quotes where only a value stands (``AND city = "Paris"``, an IN list's
``IN ("Paris", "Lyon")``; not a camelCase name, ``id = "userId"``) or that shows MySQL outside its strings (a
backtick, ``LIMIT 0, 10``, ``IFNULL(``, ...: :data:`_MYSQL`), else a name; a query that shows PostgreSQL (a
``::`` cast, a ``$1`` parameter, ILIKE, a dollar-quoted body, an ``E''`` string; not RETURNING, which SQLite
and MariaDB write too) reads every
double-quoted token as a name, as PostgreSQL does (:func:`_quoting`). A ``LIKE`` /
``ILIKE`` pattern's leading and trailing ``%`` are dropped (``'%acme%'`` names ``acme``); the count after ``LIMIT``,
``OFFSET``, ``TOP``, ``FETCH FIRST``/``NEXT`` says how much to show, no value (as a file read's ``limit`` is a
setting); a word a status-like column is compared to (``state = 'ready'``, ``order_status IN ('failed')``) is the
schema's vocabulary, as the column is (traced, ``ready`` went to a ``get_pods`` listing whose header says READY),
where it is written as the schema writes its words, in lower case (a state of up to three words too where its
column says status, phase or stage, ``status = 'on hold'``, ``'in-progress'``; a state's or type's such words are a
place or a thing, ``LOWER(state) = 'new york'``, ``type = 'red wine'``) or as a constant (``PENDING``): a capitalised word or a two-letter code is a place or
name the conversation gave (``state = 'Texas'``, ``state IN ('NY')``). The column is read as written: quoted
(``"status"``, MySQL's backticks), cast (``status::text``, ``CAST(status AS text)``), after the literal (``'open' =
status``), or an INSERT's column that a VALUES row fills by its position (these had been missed, the state traced
to the first event saying it, a listing of the states).
A text that does not open as a statement with its clause (``SELECT ... FROM`` with an operator, list or clause,
``WITH name AS (``, ``INSERT INTO``, ``UPDATE t SET``, ``DELETE FROM``, ``MERGE INTO``, ``VALUES (``, any of them
after ``EXPLAIN`` or opening parentheses: English opens with select, with, explain, update and delete too, and a
search engine's tool named ``query`` is a SQL tool by its name), one whose quotes or comments do not close, and one
with no literal are None: read whole, as the spec reads them.
"""

from __future__ import annotations

import re

# a statement's opening with the clause that makes it one: English opens with select, with, explain, update, delete
# and values too (a search engine's query "select the best laptop under 1000", a tool named query), so the keyword
# alone is no SQL; a SELECT names FROM and an operator, a list (* ( = < > , ;) or a clause's keyword (WHERE, LIKE,
# BETWEEN, JOIN, LIMIT, GROUP BY, ORDER BY), a WITH a name AS (, an UPDATE SET
STATEMENT = re.compile(
    r"\s*(?:\(\s*)*(?:explain\b(?:\s*\([^)]*\))?(?:\s+(?:analyze|verbose|query\s+plan|format\s+\w+))*\s+)?(?:"
    r"select\b(?=.*(?:[*(=<>,;]|\b(?:where|like|ilike|between|join|limit|group\s+by|order\s+by)\b)).*?\bfrom\b"
    r"|with\s+(?:recursive\s+)?[\w\"`]+(?:\s*\([^)]*\))?\s+as\s+(?:not\s+)?(?:materialized\s+)?\("
    r"|insert\s+(?:ignore\s+)?into\b|update\s+[\w.\"`]+(?:\s+(?:as\s+)?\w+)?\s+set\b|delete\s+from\b"
    r"|merge\s+into\b|values\s*\()", re.IGNORECASE | re.DOTALL)
# the keywords whose number is how many rows to show or skip, no value the conversation gave
COUNT_KEYWORDS = frozenset({"limit", "offset", "top", "first", "next"})
PATTERN_KEYWORDS = frozenset({"like", "ilike"})
_WORD = re.compile(r"[^\W\d][\w$]*")  # a name or keyword (Unicode letters too), or ``$1``'s placeholder below
_PLACEHOLDER = re.compile(r"\$\w*")
_NUMBER = re.compile(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")  # .125 too
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_CLOSING = {'"': '"', "`": "`"}  # quoted identifiers (MySQL's backticks): names, no values
# the words of a column whose values are the schema's own vocabulary (status, order_state, type, kind): a word it is
# compared to, state = 'ready', is what the agent knows of the schema, as it knows the column, no value it was given
ENUM_COLUMN_WORDS = frozenset({"status", "state", "type", "kind", "mode", "level", "phase", "stage"})
# the words between a column and what it is compared to (status NOT IN (...), name ILIKE '...'): no column
OPERATOR_WORDS = frozenset({"in", "not", "like", "ilike", "any", "all", "some", "array", "is", "similar", "to"})
# the schema's words are written in lower case (ready, in_progress) or as a constant (PENDING); a capitalised word or
# a two-letter code is a place or a name the conversation gave (state = 'Texas', state IN ('NY', 'NJ'))
_ENUM_VALUE = re.compile(r"[a-z][a-z_]*|[A-Z][A-Z_]{2,}")
# a progress column's state of a few lower-case words is the schema's too (status = 'on hold', 'in-progress', 'not
# started'); a state's, type's, level's or mode's such words are a place or a thing the conversation gave
# (LOWER(state) = 'new york', state ILIKE '%new mexico%', type = 'red wine', room_type = 'double room')
_ENUM_PHRASE = re.compile(r"[a-z][a-z_]*(?:[ -][a-z][a-z_]*){1,2}")
PROGRESS_COLUMN_WORDS = frozenset({"status", "phase", "stage"})
# a literal compared to a column written after it ('open' = status, 'open' <> t."status"): the column's name
_COLUMN_AFTER = re.compile(r"\s*(?:=|<>|!=)\s*(?:[\w$]+\s*\.\s*)?([\"`]?)([^\W\d][\w$]*)\1(?![\w$(.])")
# an INSERT's column list before its VALUES (INSERT INTO t (title, status) VALUES ('Printer jam', 'open')): each
# row's k-th literal is compared to the k-th column as a WHERE's is to its column
_INSERT_COLUMNS = re.compile(r"\s*insert\s+(?:ignore\s+)?into\s+[\w.\"`]+\s*\(([^()']*)\)\s*values\s*(?=\()",
                             re.IGNORECASE)
_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def sql_literals(text: str) -> list[str | int | float] | None:
    """The literals of the SQL statement ``text`` in order (strings as written, their ``''`` read as one quote;
    numbers as int or float), without a count after ``LIMIT``/``OFFSET`` and a pattern's outer ``%``; None where
    ``text`` opens no statement, does not scan (a quote or comment left open) or names no literal."""
    if not STATEMENT.match(text):
        return None
    found = _scan(text, backslash=False)
    if found is None and "\\" in text:  # MySQL's strings, PostgreSQL's E'': O\'Brien's quote ended its string
        found = _scan(text, backslash=True)
    return found or None


def _scan(text: str, backslash: bool) -> list[str | int | float] | None:
    """The literals of ``text`` (:func:`sql_literals`), a backslash escaping the next character of a string where
    ``backslash``; None where a quote or comment does not close."""
    out: list[str | int | float] = []
    previous = ""  # the last keyword-like word, lower case: what a literal follows
    column = ""  # the last name that is no operator's word: what a literal is compared to
    i, n = 0, len(text)
    insert = _INSERT_COLUMNS.match(text)
    columns = [c.strip().strip('"`') for c in insert.group(1).split(",")] if insert else []
    rows = insert.end() if insert else -1  # where the VALUES rows open: each literal of a row is its column's
    depth, position = 0, 0  # within the rows: how deep in parentheses, which column a row's literal is at
    last = ""  # the last token: a keyword-like word (lower case), an operator's or a parenthesis' character
    level, lists = 0, set()  # how deep in parentheses; the levels of IN (...) lists
    between = False  # a BETWEEN's AND is to come: the literal after it is a value
    quoting = _quoting(text) if '"' in text else ""
    ansi = quoting == NAMES  # its double quotes are names wherever they stand
    mysql = quoting == STRINGS  # its double quotes are strings, "Alice" = name too

    def take(value: str, at: int) -> None:  # a string literal ending before ``at``, unless a pattern's or the schema's
        value = value.strip("%") if previous in PATTERN_KEYWORDS else value
        compared = columns[position] if rows >= 0 and depth == 1 and position < len(columns) else column
        after = _COLUMN_AFTER.match(text, at)
        if any(ch.isalnum() for ch in value) and not _is_enum(compared, value) \
                and not (after and _is_enum(after.group(2), value)):
            out.append(value)

    while i < n:
        c = text[i]
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return None
            i = end + 2
        elif c == "'" or c == '"' and not ansi and _double_quoted_string(text, i, last, between, level in lists
                                                                          or rows >= 0 and depth >= 1, mysql):
            value, i = _string(text, i, backslash, c)
            if value is None:
                return None
            take(value, i)
            between = between and last != "and"
            previous, last = "", "'"
        elif c in _CLOSING:
            end = text.find(_CLOSING[c], i + 1)
            if end < 0:
                return None
            # a quoted identifier is a name as a bare one is: what a literal after it is compared to ("status")
            i, previous, column, last = end + 1, "", text[i + 1:end], c
        elif c == "$" and (m := _DOLLAR.match(text, i)):
            end = text.find(m.group(0), m.end())
            if end < 0:
                return None
            i, previous = end + len(m.group(0)), ""
        elif (m := _WORD.match(text, i) or _PLACEHOLDER.match(text, i)) is not None:
            typed = text.endswith("::", 0, i) or previous == "as"  # a cast's type (status::text, AS text): no column
            previous, i = m.group(0).lower(), m.end()
            column = column if previous in OPERATOR_WORDS or previous == "as" or typed else m.group(0)
            between = previous == "between" or between and (previous == "and" or last != "and")
            last = previous
            if rows >= 0 and i > rows and depth == 0:  # a word after the rows (ON CONFLICT, RETURNING): rows end
                rows = -1
        elif c.isdecimal() or c == "." and text[i + 1:i + 2].isdecimal() and not _joined(text, i):
            m = _NUMBER.match(text, i)
            word, i = m.group(0), m.end()
            if i < n and (text[i].isalnum() or text[i] == "_"):  # 3rd, 2x: part of a word, no number
                rest = _WORD.match(text, i)
                previous, i = "", rest.end() if rest else i + 1
            elif previous in COUNT_KEYWORDS:  # LIMIT 100 (and MySQL's LIMIT 10, 20): how much to show
                continue
            else:
                out.append(float(word) if any(ch in word for ch in ".eE") else int(word))
                previous = ""
            between, last = between and last != "and", "0"
        else:
            if rows >= 0 and i >= rows:  # the VALUES rows: ( opens one, each , at its level the next column
                depth += (c == "(") - (c == ")")
                position = 0 if c == "(" and depth == 1 else position + (c == "," and depth == 1)
            if c == "(":
                level += 1
                lists |= {level} if last == "in" else set()
            elif c == ")":
                lists.discard(level)
                level -= 1
            if not c.isspace() and c not in "(":
                previous = previous if c == "," and previous in COUNT_KEYWORDS else ""
            last = last if c.isspace() else c
            i += 1
    return out


# what a value follows: a comparison's operator (=, <>, !=, <, >=, ...), a pattern's keyword, a BETWEEN
_VALUE_AFTER = frozenset({"=", "<", ">", "like", "ilike", "regexp", "rlike", "between"})


def _double_quoted_string(text: str, i: int, last: str, between: bool, listed: bool, mysql: bool = False) -> bool:
    """Whether the ``"`` at ``i`` opens a string, as MySQL reads ``WHERE name = "Alice"`` (without ANSI_QUOTES), not a
    quoted identifier, as ANSI SQL and PostgreSQL read it: where it stands where only a value may, after a
    comparison's operator or a pattern's keyword (:data:`_VALUE_AFTER`; ``>= "2024-01-01"``, ``LIKE "%acme%"``),
    after a BETWEEN's AND, or as an item of an IN list or a VALUES row (``listed``, after its ``(`` or a ``,``), and
    is no part of a qualified name (``t."status"``, ``"t"."col"``, a join's ``= c."id"``). Anywhere else, after
    FROM, JOIN or INTO, in a SELECT's columns, before an operator (``"status" = 'open'``), it is a name, as before;
    and so is every double-quoted token of a query that quotes a name so elsewhere (:func:`_quoting`: PostgreSQL's
    ``WHERE "a" = "b"``, its ``"a"`` a name before an operator). Before a comparison with a bare column a token no
    name is shaped as is a string (:func:`_value_before_column`: ``"alice@example.com" = email``, MySQL's comparison
    written the other way round), which had made the query's strings names; one shaped as a name stays a name
    (``ON "userId" = u.id``), but in a query that writes its strings in double quotes (``mysql``, :func:`_quoting`:
    ``"Alice" = name AND city = "Paris"``)."""
    if i > 0 and text[i - 1] == ".":
        return False
    end = text.find('"', i + 1)
    while end >= 0 and text.startswith('""', end):  # "" is one quote inside a MySQL string
        end = text.find('"', end + 2)
    if end >= 0 and text.startswith(".", end + 1):
        return False
    return last in _VALUE_AFTER or last == "and" and between or last in ("(", ",") and listed or (
        end >= 0 and _value_before_column(text[i + 1:end], text, end + 1, mysql))


# a comparison's operator and a bare column after it (name, c.name; no function's call, no qualified name's first
# part): what a value written before its column is compared to
_COLUMN_COMPARED = re.compile(r"\s*(?:=|<>|!=|<=|>=|<|>)\s*(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\b(?!\s*[.(])")
# the bare words after an operator that are values, not columns
_VALUE_WORDS = frozenset({"null", "true", "false", "default", "current_date", "current_time", "current_timestamp",
                          "localtime", "localtimestamp", "current_user", "session_user", "user", "interval", "date",
                          "time", "timestamp", "any", "all", "some", "select", "not", "exists", "case", "cast"})


# a token shaped as a name (a word of letters, digits, _ and $ not beginning with a digit): before a column, a
# PostgreSQL name compared to another ("userId" = u.id, "Email" = email), not a MySQL value
_NAME_SHAPED = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def _value_before_column(token: str, text: str, at: int, mysql: bool = False) -> bool:
    """Whether the double-quoted ``token``, ending before ``at``, is a MySQL value written before the column it is
    compared to (``"alice@example.com" = email``, ``"2024-01-15" <= created_at``, ``"Alice Smith" = name``): a token
    no name is shaped as (:data:`_NAME_SHAPED`), before a comparison with a bare column (:func:`_compared_to_column`).
    One shaped as a name is a PostgreSQL name there (``ON "userId" = u.id``, PL/pgSQL's ``WHERE "Email" = email``,
    ``WHERE "contentId" = id``: queries written so are common, a MySQL value written first rare), as before 119,
    which read each as a literal (a name, traced to any output saying it). The price: MySQL's ``"Alice" = name``
    reads its query's double-quoted tokens as names, as before 119, unless the query writes a string in double
    quotes where only a value stands (``mysql``, :func:`_quoting`: ``AND city = "Paris"``, ``IN ("Paris")``)."""
    return (mysql or _NAME_SHAPED.fullmatch(token) is None) and _compared_to_column(text, at)


def _compared_to_column(text: str, at: int) -> bool:
    """Whether what ends before ``at`` is compared to a bare column after it (``"Alice" = name``, ``"acme" <>
    c.tenant``): a value written before its column, as MySQL lets a query write it, where a PostgreSQL name before
    an operator is compared to a value (``"status" = 'open'``, ``"total" > 100``) or to a name quoted as it is
    (``"shippedAt" = "deliveredAt"``)."""
    m = _COLUMN_COMPARED.match(text, at)
    return m is not None and m.group(1).lower() not in _VALUE_WORDS


# a token a query scans past: a single-quoted string (its '' and \' inside), a comment; or a double-quoted token
_SKIPPED_OR_DOUBLE = re.compile(r"'(?:[^'\\]|''|\\.)*'?|--[^\n]*|/\*.*?(?:\*/|$)|\"((?:[^\"\\]|\"\"|\\.)*)\"",
                                re.DOTALL)
# where only a name stands, so that a double-quoted token there is a quoted identifier: after a keyword that a table
# follows, right before a comparison, a pattern's keyword, IS, IN or a cast, or a part of a qualified name
_NAME_BEFORE = re.compile(r"(?:\b(?:from|join|into|update|table)|\.)\s*$", re.IGNORECASE)
# (not MySQL's AGAINST ("words" IN BOOLEAN MODE), nor a JSON path after -> or ->>, data->>"$.status" = "active", nor a
# BETWEEN's, which a MySQL date may open: "2024-01-15" BETWEEN valid_from AND valid_to)
_NAME_AFTER = re.compile(r"\s*(?:\.|::|=|<|>|!=|(?:is|not|like|ilike)\b|in\b(?!\s+(?:boolean|natural)\b))",
                         re.IGNORECASE)
_JSON_PATH_BEFORE = re.compile(r"->>?\s*$")


NAMES, STRINGS = "names", "strings"  # how a query's double quotes read: ANSI's names, MySQL's strings
# a double-quoted token where only a value stands: after a comparison's operator or a pattern's keyword
_STRING_BEFORE = re.compile(r"(?:[=<>]|\b(?:like|ilike|regexp|rlike)\b)\s*$", re.IGNORECASE)
# the keywords that open a query's clauses: which one a token stands in (a join's ON compares columns)
_CLAUSE = re.compile(r"\b(on|where|having|set|select|from|join|using|group|order|limit|values|returning)\b",
                     re.IGNORECASE)


# a name PostgreSQL quotes for its capitals, camelCase ("userId", "createdAt"): where a value stands (id = "userId")
# no evidence of a MySQL string, a value seldom being written so
_CAMEL = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+")
# a key column's name, what a join's ON compares a column to ("authorId", "AuthorId", "authorID", "author_id"): any
# other token there is a value the join filters on (ON b.cabin = "economy", SQLite's and MySQL's string), no sign of
# names. A name part of two letters or more stands before the Id: a short code a user gave ("AID", "OID", "K_ID") is
# a value (until conversion 212 read as a key's name, the code traced to nothing)
_KEY = re.compile(r"[A-Za-z][a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)*I[dD]|[A-Za-z]{2}[A-Za-z0-9_]*_(?:id|ID)")
# the first item of an IN list, and what a next item follows
_LIST_OPENS = re.compile(r"\bin\s*\(\s*$", re.IGNORECASE)
_LIST_NEXT = re.compile(r"\s*,\s*")
# what MySQL cannot write and PostgreSQL does, outside strings: a cast (status::text), a positional parameter ($1),
# ILIKE, a dollar-quoted body ($$...$$, $fn$), an E'' string. Not RETURNING: SQLite (3.35) and MariaDB (10.5) write
# it too, and read a value's double quotes as a string (INSERT ... VALUES ("Alice") RETURNING id)
_POSTGRES = re.compile(r"::|(?<![\w$])\$(?:\d|(?:[A-Za-z_]\w*)?\$)|\bilike\b|(?<![\w$])[eE]$", re.IGNORECASE)


# what PostgreSQL cannot write and MySQL does (SQLite too, which reads a double-quoted token no column is named as a
# string), outside strings and quotes: a backtick-quoted name, <=>, REGEXP / RLIKE, LIMIT's offset before a comma,
# ON DUPLICATE KEY, INSERT IGNORE, MySQL's own functions (IFNULL, GROUP_CONCAT, DATE_FORMAT, ...; not DATE_ADD,
# which PostgreSQL 16 has); a word after a dot is a column or a schema's function PostgreSQL may name so (p.regexp)
_MYSQL = re.compile(r"`|<=>|(?<![.\w])(?:regexp|rlike|straight_join|sql_calc_found_rows)\b|\blimit\s+\d+\s*,\s*\d+"
                    r"|\bon\s+duplicate\s+key\b|\binsert\s+ignore\b|(?<![.\w])(?:ifnull|group_concat|date_format|str_to_date"
                    r"|date_sub|curdate|datediff|unix_timestamp|from_unixtime|last_insert_id)\s*\(", re.IGNORECASE)


def _postgres(gap: str, before_quote: bool) -> bool:
    """Whether ``gap``, text outside strings and quotes, says the query is PostgreSQL's (:data:`_POSTGRES`); an
    ``E`` counts only right before a single-quoted string (``before_quote``)."""
    m = _POSTGRES.search(gap)
    while m is not None and m.group(0) in ("e", "E") and not before_quote:
        m = _POSTGRES.search(gap, m.end())
    return m is not None


def _quoting(text: str) -> str:
    """How ``text``'s double quotes read: :data:`NAMES` where it double-quotes a name where no string may stand
    (``FROM "orders"``, ``"createdAt" >``, ``t."id"``, ``"status"::text``): a query written so reads ``"..."`` as
    ANSI SQL and PostgreSQL do, as names, even where a value may stand (``WHERE "createdAt" > "updatedAt"``, ``ON
    "authorId" = "id"``, ``SET "total" = "subtotal"``: the second name had been read as a MySQL string, a literal
    ``id`` traced to any output saying id). A MySQL query whose double quotes are strings quotes its names bare or
    with backticks. A token shaped as a name compared to a bare column (``"Alice" = name``, PL/pgSQL's ``"Email" =
    email``) is either; it reads as a name (:data:`NAMES`), as it did, unless the query writes a string in double
    quotes where only a value stands (``AND city = "Paris"``, which this reader reads as MySQL's string wherever no
    name is quoted), then as a string too (:data:`STRINGS`): such a query read every double-quoted token as a name,
    ``Paris`` as well, and ``Alice``, which the user said, was traced to nothing. In a join's ON, which compares
    columns, such a token is a name (``ON "postId" = p.id``) and one after the operator no MySQL string (``ON u.id =
    "authorId"``): as evidence of strings it had made PostgreSQL's ``ON "postId" = p.id JOIN users u ON u.id =
    "authorId"`` read both names as values, traced to any output saying them. An IN list's item is a value as one
    after an operator is (``"Alice" = name AND city IN ("Paris", "Lyon")``: PostgreSQL's lists hold values, its
    quoted names stand before the IN), and a camelCase token there is no such evidence (PL/pgSQL's ``WHERE "Email"
    = email AND id = "userId"``, a column compared to a parameter and a column to a column: until conversion 159
    read as two MySQL strings, each traced to a listing of the columns), but for a query that shows MySQL outside its
    strings (:data:`_MYSQL`: a backtick, ``LIMIT 0, 10``, ``IFNULL(``, ...), which PostgreSQL cannot run: there
    ``"Apple" = brand AND name = "iPhone"`` is two strings (until conversion 171 two names, the product the user
    named traced to nothing). A query that shows PostgreSQL outside its
    strings (:data:`_POSTGRES`: ``::``, ``$1``, ILIKE, ``$$``, ``E''``) reads its double quotes as names
    (:data:`NAMES`) wherever they stand, as PostgreSQL runs it. So does a query that compares a column to a
    key column's name (:data:`_KEY`) double-quoted in a join's ON and shows no MySQL (no string in double quotes
    elsewhere, no :data:`_MYSQL`): ``JOIN posts p ON u.id = "authorId"``, a column compared to a column (until
    conversion version 196 read by its place, as a string traced to any listing of the columns). Another token
    there is a value the join filters on (``ON b.flight = f.id AND b.cabin = "economy"``), read by its place (from
    conversion versions 196 to 201 every double-quoted token was a name, the cabin the user asked for traced to
    nothing). Else "", a query of no dialect's sign: each token by
    its place (:func:`_double_quoted_string`): where only a value stands a string (``WHERE name = "Alice"``, and
    ``id = "userId"``, a MySQL value written so or a PostgreSQL name: read as the value), elsewhere a name."""
    either = strings = postgres = mysql = joined = False  # joined: a join's ON compares a column to a "token"
    doubled = False  # a double-quoted token at all
    clause, read = "", 0  # the clause the token stands in, told by the last keyword outside strings and quotes
    listed = -1  # where the last item of an IN list ended: a "," after it opens the next
    for m in _SKIPPED_OR_DOUBLE.finditer(text):
        gap = text[read:m.start()]
        mysql = mysql or _MYSQL.search(gap) is not None
        clause = next((k.group(1).lower() for k in reversed(list(_CLAUSE.finditer(text, read, m.start())))), clause)
        postgres = postgres or _postgres(gap, m.group(0).startswith("'"))
        item = _LIST_NEXT.fullmatch(gap) is not None and listed == read
        read = m.end()
        before = text[max(0, m.start() - 24):m.start()]  # a few characters: linear in a long INSERT's strings
        if m.group(1) is None or _JSON_PATH_BEFORE.search(before):
            continue
        doubled = True
        if _NAME_BEFORE.search(before):
            return NAMES
        if _NAME_AFTER.match(text, m.end()):
            if not _compared_to_column(text, m.end()):
                return NAMES
            shaped = _NAME_SHAPED.fullmatch(m.group(1)) is not None  # else "a@b.com" = email: a string
            if shaped and clause == "on":  # a join's condition: a column compared to a column
                return NAMES
            either = either or shaped
        elif (item or _LIST_OPENS.search(before)) and clause != "on":  # IN ("acme", "beta"): MySQL's values
            listed, strings = m.end(), strings or _CAMEL.fullmatch(m.group(1)) is None
        elif _STRING_BEFORE.search(before) and clause != "on":
            strings = strings or _CAMEL.fullmatch(m.group(1)) is None  # id = "userId": PostgreSQL's name
        elif _STRING_BEFORE.search(before) and _KEY.fullmatch(m.group(1)):
            joined = True
    if doubled and (postgres or _postgres(text[read:], False)):
        return NAMES
    mysql = mysql or _MYSQL.search(text[read:]) is not None
    if joined and not (strings or mysql):  # ON u.id = "authorId" in a query of no dialect's sign: a column
        return NAMES
    return (STRINGS if strings or mysql else NAMES) if either else ""


def _is_enum(column: str, value: str) -> bool:
    """Whether ``value``, compared to ``column``, is a word of the schema's vocabulary: one word of letters (``ready``,
    ``in_progress``) and a column whose name says status, state, type, kind, ... (:data:`ENUM_COLUMN_WORDS`), or a
    few lower-case words (``'on hold'``, ``'in-progress'``) and a column whose name says status, phase or stage
    (:data:`PROGRESS_COLUMN_WORDS`): compared to a state, type, level or mode column such words had been the
    schema's too, and a place or thing the user gave, ``LOWER(state) = 'new york'``, ``type = 'red wine'``, was
    no literal."""
    words = {w.lower() for w in _NAME_PART.findall(column)}
    if _ENUM_VALUE.fullmatch(value):
        return bool(ENUM_COLUMN_WORDS & words)
    return bool(_ENUM_PHRASE.fullmatch(value)) and bool(PROGRESS_COLUMN_WORDS & words)


def _joined(text: str, i: int) -> bool:
    """Whether the ``.`` at ``i`` joins a name to what follows (``t.5``, ``"t".col``), so no fraction opens there."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$\"`]")


def _string(text: str, start: int, backslash: bool = False, quote: str = "'") -> tuple[str | None, int]:
    """The string ``quote`` opens at ``start`` (single-quoted, or MySQL's double-quoted; the quote doubled is one
    quote, ``\\'`` too where ``backslash``) and the index past it; None where it does not close."""
    parts, i, end = [], start + 1, start
    while True:
        end = text.find(quote, i) if end < i else end  # kept past an escape before it: linear in the string
        if end < 0:
            return None, len(text)
        escape = text.find("\\", i, end) if backslash else -1
        if escape >= 0:  # the character after a backslash is itself, a quote too
            parts.append(text[i:escape] + text[escape + 1:escape + 2])
            i = escape + 2
            continue
        parts.append(text[i:end])
        if text.startswith(quote * 2, end):
            parts.append(quote)
            i = end + 2
        else:
            return "".join(parts), end + 1
