"""What a tool call's arguments are, judged from the tool's and the argument's names: which tool is a
shell (:func:`is_shell_tool`) and which of its arguments a command line (:func:`is_command_line`), a setting
(:func:`is_shell_setting`, :func:`is_tool_setting`), an editor's operation (:func:`is_operation`) or line range
(:func:`view_lines`), the directory a shell command runs in (:func:`shell_directory`), a read's page offset
(:func:`is_page_offset`), a search tool's pattern (:func:`search_pattern`), a patch (:func:`is_patch_tool`), a SQL
query (:func:`is_sql_query`).

The labelling rule (:mod:`sam_model.data.toolstate`) traces every argument as a value unless told otherwise; agents'
harnesses name the same things differently (``Bash``, ``execute_bash``, ``run_shell_command``; ``timeout``,
``timeout_ms``), so these rules read names as words, in one place, for every format.
"""

from __future__ import annotations

import re
from typing import Any

from sam_model.data.lineranges import is_page, line_numbers
from sam_model.data.patternwords import pattern_words
from sam_model.data.shellprograms import POWERSHELLS

SHELL_TOOL_WORDS = frozenset({"bash", "sh", "zsh", "shell", "terminal", "powershell", "pwsh", "ssh"})
COMMAND_ARGUMENTS = frozenset({"command", "cmd"})  # and "script", of a tool whose name says a shell
# words that name another language or engine: a tool ``sql_exec``, ``python_exec`` or ``python_shell`` runs no shell
# command line (its SQL or Python, read as bash reads a line, gave its table and variable names as values)
OTHER_LANGUAGES = frozenset({"sql", "mysql", "psql", "sqlite", "postgres", "db", "query", "cypher", "sparql",
                             "graphql", "redis", "mongo", "python", "py", "ipython", "jupyter", "notebook", "cell",
                             "js", "javascript", "node", "ruby", "php", "perl", "lua"})
_RUN = frozenset({"run", "exec", "execute"})
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _name_words(name: str) -> list[str]:
    """A tool's or an argument's name as its words, in lower case (``run_shell_command``, ``ExecuteBash``)."""
    return [w.lower() for w in _NAME_WORD.findall(name)]


def is_shell_tool(name: str) -> bool:
    """A tool whose name says it runs shell commands, read as words (``run_shell_command``, ``execute_bash``,
    ``Bash``, ``terminal``, ``ssh_command``, ``container.exec``): a word among :data:`SHELL_TOOL_WORDS`, a last word
    ``exec``, ``run``/``exec``/``execute`` followed by ``command``/``cmd`` (``execute_command``, ``exec_command``), or
    the name ``run`` alone (OpenHands' text-mode command action), and no word of :data:`OTHER_LANGUAGES`
    (``sql_exec``, ``python_shell``). ``execute_ipython_cell``, ``str_replace_editor`` or ``send_command`` are
    none."""
    found = _name_words(name)
    return bool(found) and not OTHER_LANGUAGES.intersection(found) and (
        any(w in SHELL_TOOL_WORDS for w in found) or found[-1] == "exec" or found == ["run"]
        or any(a in _RUN and b in ("command", "cmd") for a, b in zip(found, found[1:])))


def is_powershell(tool: str) -> bool:
    """A tool whose name says PowerShell (``powershell``, ``run_pwsh``): its command lines are PowerShell's."""
    return bool(POWERSHELLS.intersection(_name_words(tool)))


# the words of a shell tool's argument names that say how its command runs, not what it acts on (a timeout, an output
# cap, a permission and its reason, a description for the user, background or interactive running)
SETTING_WORDS = frozenset({"timeout", "ms", "sec", "secs", "seconds", "yield", "max", "output", "tokens", "limit",
                           "sandbox", "permissions", "escalated", "justification", "description", "security", "risk",
                           "background", "input", "approval", "login", "tty"})


def is_shell_setting(tool: str, argument: str, arguments: dict[str, Any] | None = None) -> bool:
    """Whether the top-level argument ``argument`` of a call to ``tool`` says how a shell runs its command, not what
    it acts on: an argument of a shell tool (:func:`is_shell_tool`) whose name says a timeout, an output limit, a
    permission, a description for the user or background running (:data:`SETTING_WORDS`). Codex repeats
    ``"timeout_ms": 120000`` on every call, Claude Code a ``timeout``, OpenHands a ``security_risk``: traced as values,
    each later call was labelled with the first call that said the same setting. Those are the harness's settings and
    the agent's habit, never what it needs to remember; a shell tool's other arguments (the command line, a working
    directory, a running shell's id, a ``docker_exec``'s container, an ``ssh`` tool's host) are values as the spec
    reads them, so a setting is named by its words rather than by being anything but a command. ``arguments``: the
    call's, given where known; then only a call that runs a command line (:func:`is_command_line`) has settings. A
    retail or telecom tool named for a card or SIM terminal (``update_terminal(login_code, max_refund,
    description)``) runs none: its arguments are the customer's values, which were judged trivial."""
    return is_shell_tool(tool) and bool(SETTING_WORDS.intersection(w.lower() for w in _NAME_WORD.findall(argument))) \
        and (arguments is None or any(is_command_line(tool, k, v) for k, v in arguments.items()))


# a file tool's arguments that say how much of its output to show and in what form, not what it reads or searches:
# Claude Code's Grep ``output_mode``, ``head_limit`` and grep's flags ``-A``/``-B``/``-C``/``-n``/``-i``, its Read's
# ``limit`` (Gemini CLI's read_file too), named without their dashes, in lower case
FILE_TOOL_WORDS = frozenset({"grep", "glob", "read"})
# the other words a file tool's name may hold (read_file, read_many_files, grep_search, read_text_file): a read tool
# of anything else (read_customer, mark_as_read, spreadsheet_read) is a business tool, its context or limit a value
FILE_NAME_WORDS = frozenset({"file", "files", "many", "multiple", "text", "search", "content", "tool"})
FILE_SETTINGS = frozenset({"output_mode", "head_limit", "limit", "a", "b", "c", "context", "n", "i", "multiline"})


def is_tool_setting(tool: str, argument: str, arguments: dict[str, Any] | None = None) -> bool:
    """Whether the top-level argument ``argument`` of a call to ``tool`` is a setting, judged trivial: a shell's
    (:func:`is_shell_setting`), or an output setting of a file tool, one whose name says grep, glob or read
    (:data:`FILE_SETTINGS`). Claude Code's Grep writes ``"output_mode": "content"`` on most searches: traced as a value,
    each later search was a decision point labelled with the session's first one (in a walkthrough's hand-written
    sessions, two decision points with no other label); a ``Read`` with ``"limit": 200`` traced to any earlier file
    listing that printed line 200. ``path``, ``pattern`` and ``glob`` say what is read and stay values, and so does
    ``offset`` unless it starts a page (:func:`is_page_offset`, which sees the call's ``limit``)."""
    return is_shell_setting(tool, argument, arguments) or (is_file_tool(tool)
                                                          and argument.lstrip("-").lower() in FILE_SETTINGS)


def is_file_tool(tool: str) -> bool:
    """Whether ``tool``'s name says grep, glob or read and nothing but file words (:data:`FILE_NAME_WORDS`; an MCP
    server's prefix, ``mcp__filesystem__``, left out): ``Read``, ``read_file``, ``grep_search``. A business tool that
    reads is none: ``read_customer``'s ``context`` or ``mark_as_read``'s ``n`` were dropped as settings."""
    found = _name_words(tool.rsplit("__", 1)[-1])
    return bool(FILE_TOOL_WORDS.intersection(found)) and set(found) <= FILE_TOOL_WORDS | FILE_NAME_WORDS


PAGE_START, PAGE_SIZE = "offset", "limit"  # a file read's first line and its number of lines (Read, read_file)
RESULTS_SIZE = "head_limit"  # a search's number of results shown (Claude Code's Grep), its offset the results skipped


def is_page_offset(tool: str, argument: str, arguments: dict[str, Any]) -> bool:
    """Whether ``argument`` is the ``offset`` of a file tool (:func:`is_file_tool`) that, with the call's ``limit``
    n, starts a page of the file as :func:`~sam_model.data.lineranges.is_page` judges the lines read: Claude Code's
    Read counts from 1 (``offset`` 201, ``limit`` 200: lines 201-400, ``offset`` k*n+1), Gemini CLI's read_file from 0
    (``offset`` 200:
    the same lines, k*n); either base is taken. Such an offset is how far the agent has read, as ``[201, 400]`` after
    ``[1, 200]`` is an editor's (:func:`view_lines`), no line an earlier event gave: traced as a value, ``Read``'s
    201 went to any earlier event that printed 201 (an HTTP status). An offset that starts no page (245, from a grep
    hit at line 245; no ``limit``) stays a value. A search's ``offset`` beside its ``head_limit`` n (Claude Code's
    Grep: the first results skipped, then n shown) pages through its results at any multiple k*n: no line of a
    file (a page of 20 results is one, where is_page's fewest lines judge a file's), and traced, ``offset`` 100
    went to any earlier output that printed 100."""
    if argument.lower() != PAGE_START or not is_file_tool(tool):
        return False
    first = _count(arguments[argument])
    results = [v for k, v in arguments.items() if k.lower() == RESULTS_SIZE]
    if first is not None and len(results) == 1 and (n := _count(results[0])):
        return first > 0 and first % n == 0
    sizes = [v for k, v in arguments.items() if k.lower() == PAGE_SIZE]
    n = _count(sizes[0]) if len(sizes) == 1 else None
    return first is not None and bool(n) and (is_page(first + 1, first + n) or is_page(first, first + n - 1))


def page_offset_line(tool: str, argument: str, arguments: dict[str, Any]) -> int | None:
    """The line a file read's page offset names (:func:`is_page_offset` with its ``limit``): the offset itself, for
    the labelling rule to ask whether an earlier search printed it as a hit
    (:func:`~sam_model.data.searchhits.grep_hit`: then it opens a window around the hit, a value); None for any other
    argument, and for a search's offset, a count of results."""
    if not is_page_offset(tool, argument, arguments) or any(k.lower() == RESULTS_SIZE for k in arguments):
        return None
    return _count(arguments[argument])


def _count(value: Any) -> int | None:
    """A line number or count a tool was given: an int (no bool) or a string of digits, of at most 12 digits."""
    if isinstance(value, str) and value.isdigit() and len(value) <= 12:
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** 12 else None


def is_command_line(tool: str, argument: str, value: Any) -> bool:
    """Whether ``value``, the top-level argument ``argument`` of a call to ``tool``, is a shell command: an argument
    named ``command`` or ``cmd`` (any case) of a shell tool (:func:`is_shell_tool`), or ``script`` of one whose name
    says a shell (``bash``, ``shell``, ...: a ``run`` or ``exec`` tool's script may be any language's), holding a
    string (a command line) or a list of strings (an argv). Anything else (another tool's ``command``, such as an
    editor's ``view``; a shell tool's ``timeout``) is no command line."""
    argument = argument.lower()
    return (argument in COMMAND_ARGUMENTS or argument == "script" and bool(SHELL_TOOL_WORDS.intersection(
        _name_words(tool)))) and is_shell_tool(tool) and (
        isinstance(value, str) or isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value))


# a shell tool's argument naming the directory its command runs in, relative to the agent's working directory where
# it is relative: Codex's ``workdir``, Gemini CLI's run_shell_command ``dir_path`` (its older ``directory``)
SHELL_DIRECTORIES = ("workdir", "dir_path", "directory")


def shell_directory(arguments: Any) -> str | None:
    """The directory a shell call's command runs in as its arguments name it (:data:`SHELL_DIRECTORIES`, the first
    that is a non-empty string), None where they name none (it runs in the agent's working directory). Why one rule:
    a grep -n run in ``dir_path`` printed lines of that directory's files, which the line marks read under the
    project root (only Codex's ``workdir`` was read)."""
    if not hasattr(arguments, "get"):
        return None
    return next((d for a in SHELL_DIRECTORIES if isinstance(d := arguments.get(a), str) and d), None)


# the argument an editor tool names its operation by (OpenHands' and SWE-agent's str_replace_editor, Anthropic's
# text editor tool, OpenHands V1's file_editor, the memory tool: view, create, str_replace, insert, undo_edit)
OPERATION_ARGUMENTS = frozenset({"command"})
_OPERATION = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def is_operation(tool: str, argument: str, value: Any) -> bool:
    """Whether ``value``, the top-level argument ``argument`` of a call to ``tool``, names the operation the tool runs:
    a ``command`` of one word (``view``, ``str_replace``, ``insert``) of a tool that is no shell
    (:func:`is_command_line`; a shell's ``command`` is a command line, read by its words). It is syntax, as a shell's
    sub-command is (``git commit``), and judged trivial: traced as a value, an editor's every ``view`` after the first
    was labelled with the first call that said ``view`` (a hand-written OpenHands session of 13 calls: 6 of its 10
    decision points were such, no other value needed there). A ``command`` that is more than a word (a path, a line)
    is a value as the spec reads it."""
    return argument.lower() in OPERATION_ARGUMENTS and isinstance(value, str) and bool(_OPERATION.fullmatch(value)) \
        and not is_command_line(tool, argument, value)


# the argument an editor tool takes a line range by, [START, END] (END -1: the file's end): OpenHands' and SWE-agent's
# str_replace_editor, Anthropic's text editor tool, OpenHands V1's file_editor
LINE_RANGE_ARGUMENTS = frozenset({"view_range"})


def view_lines(argument: str, value: Any, pages: bool = False) -> list[str] | None:
    """The traced words of an editor's line range (:data:`LINE_RANGE_ARGUMENTS`, ``[START, END]``): its line numbers
    as the same range's in ``sed -n 'START,ENDp'`` (:func:`~sam_model.data.lineranges.line_numbers`: the end of
    ``[1, 200]`` says how much to show, a page's bounds, ``[201, 400]`` after ``[1, 200]``, how far the agent has
    read, :func:`~sam_model.data.lineranges.is_page`, and neither is a line an earlier event gave; ``[240, 260]``
    around a grep hit keeps both, ``[401, -1]`` its start); None for any other argument or value, read as the spec
    reads it. Traced as values, a page's end ``400`` went to an earlier view that printed ``status >= 400``.
    ``pages``: a page's bounds are kept, as :class:`~sam_model.data.lineranges.PageBound` words."""
    if argument.lower() not in LINE_RANGE_ARGUMENTS or not isinstance(value, list) or len(value) != 2 \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    first, end = value
    if not 0 < first < 10 ** 12 or not (end == -1 or first <= end < 10 ** 12):
        return None
    return line_numbers("sed", f"{first},{'$' if end == -1 else end}p", pages)


def is_patch_tool(tool: str) -> bool:
    """A tool whose name says it applies a patch (Codex's ``apply_patch``, its JSON or freeform form)."""
    return "patch" in _name_words(tool)


# the arguments of a search tool that hold its pattern (Claude Code's Grep and Gemini CLI's search_file_content
# pattern, Cline's search_files regex, SWE-agent's search_dir/search_file search_term, which it hands to grep), and
# the words of a tool's name that say it searches files
PATTERN_ARGUMENTS = frozenset({"pattern", "regex", "search_term"})
SEARCH_TOOL_WORDS = frozenset({"grep", "search", "rg", "ripgrep"})


def search_pattern(tool: str, argument: str, value: Any) -> list[str] | None:
    """The traced words of a search tool's pattern: the argument ``pattern``, ``regex`` or ``search_term`` (any case;
    :data:`PATTERN_ARGUMENTS`) of a tool whose
    name says grep or search (:data:`SEARCH_TOOL_WORDS`: ``Grep``, ``search_file_content``, ``grep_search``), read as
    a grep's pattern in a command line is (:func:`~sam_model.data.patternwords.pattern_words`: a regex or code,
    ``def due_date``, ``foo\\(``, is its names; any other pattern one value, as the spec reads it); None for any other
    argument. Claude Code's Grep takes
    ripgrep's regex as its ``pattern``, the word a shell agent's ``rg`` gets: traced whole, ``def due_date`` was said
    by no event although the user said ``due_date``. An MCP server's prefix (``mcp__files__grep``) is left out of the
    name, so a server called ``search`` makes no tool of it a search tool."""
    if argument.lower() not in PATTERN_ARGUMENTS or not isinstance(value, str) \
            or not SEARCH_TOOL_WORDS.intersection(_name_words(tool.rsplit("__", 1)[-1])):
        return None
    return pattern_words(value, value)


# the words of a tool's name that say it runs SQL (run_sql, query_db, execute_query, mcp__postgres__query,
# bigquery_run), and those of an argument's name that hold the statement (query, sql, sql_query, statement; a SQL
# tool's command, sql_exec(command=...), which the shell rule leaves to it: OTHER_LANGUAGES)
SQL_TOOL_WORDS = frozenset({"sql", "mysql", "psql", "sqlite", "postgres", "postgresql", "pg", "db", "database",
                            "duckdb", "bigquery", "bq", "snowflake", "clickhouse", "redshift", "athena", "trino",
                            "presto", "warehouse", "hive", "query"})
SQL_ARGUMENT_WORDS = frozenset({"query", "statement", "stmt", "command", "cmd"})


def is_sql_query(tool: str, argument: str, value: Any) -> bool:
    """Whether ``value``, the top-level argument ``argument`` of a call to ``tool``, is a SQL statement to read by
    its literals (:func:`~sam_model.data.sqlwords.sql_literals`): a string argument whose name says ``sql`` (any
    tool's), or says query, statement or command (:data:`SQL_ARGUMENT_WORDS`) of a tool whose name says SQL or a
    database (:data:`SQL_TOOL_WORDS`). A search tool's ``query`` (``search_docs``) is words, read as the spec reads
    them; whether the string opens as a statement is sql_literals' to judge."""
    if not isinstance(value, str):
        return False
    words = set(_name_words(argument))
    return "sql" in words or bool(SQL_ARGUMENT_WORDS & words) and bool(SQL_TOOL_WORDS.intersection(_name_words(tool)))
