"""OpenHands' agent skills in an IPython cell, read as the file views and searches they are.

A CodeAct agent opens, scrolls and searches files by calling the Python functions its kernel imports
(openhands/runtime/plugins/agent_skills/file_ops): its ``execute_ipython_cell`` call's ``code`` (a text-mode run's
``run_ipython`` action's) is ``open_file('/workspace/src/a.py', 212)``, ``goto_line(212)`` or ``search_file('def
parse', '/workspace/src/a.py')``. Read whole, as the spec reads any value, such a cell is said by no earlier event,
so the path a search printed and the line it printed were traced by nothing. A cell that is only such calls, each
argument a literal, is read by its arguments (:func:`skill_words`): a path as a listing prints it, a line number as
a number, a search term as grep -F's pattern (code its names: ``def parse_header`` is ``parse_header``, as
SWE-agent's search_file term is; a phrase whole), a text whole, a window's size (``context_lines``) no value; and its
line numbers are lines of the file it opens, inserts into or has open (:func:`line_file`), as SWE-agent's ``open PATH
212`` and ``goto 212`` are, which the readers of shown lines mark (:mod:`sam_model.data.formats.numbered`). Any other
cell is read whole, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from sam_model.data.patternwords import pattern_words
from sam_model.data.shellpaths import listed_path

IPYTHON_TOOLS = frozenset({"execute_ipython_cell", "run_ipython"})  # a call's tool and a text-mode run's action
# each skill's parameters in order (file_ops.py's signatures)
SKILLS: dict[str, tuple[str, ...]] = {
    "open_file": ("path", "line_number", "context_lines"),
    "goto_line": ("line_number",),
    "scroll_down": (),
    "scroll_up": (),
    "search_dir": ("search_term", "dir_path"),
    "search_file": ("search_term", "file_path"),
    "find_file": ("file_name", "dir_path"),
    "create_file": ("filename",),
    "edit_file_by_replace": ("file_name", "to_replace", "new_content"),
    "insert_content_at_line": ("file_name", "line_number", "content"),
    "append_file": ("file_name", "content"),
}
PATHS = frozenset({"path", "dir_path", "file_path", "file_name", "filename"})
TERMS = frozenset({"search_term"})  # searched for as written (``search_term in line``): grep -F's pattern
LINES = frozenset({"line_number"})
COUNTS = frozenset({"context_lines"})  # how many lines a window shows: no value the agent looked up
MAX_CELL_CHARS = 10_000  # a longer cell is no call of skills alone: read whole, unparsed


def skill_calls(code: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The skill calls a cell is, each ``(name, {parameter: literal})`` in order; None where the cell is anything
    else (other code, an argument no literal, a parameter the skill does not take, a cell that does not parse)."""
    if len(code) > MAX_CELL_CHARS:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    for statement in tree.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in SKILLS):
            return None
        names = SKILLS[call.func.id]
        given = [(names[j] if j < len(names) else None, a) for j, a in enumerate(call.args)]
        given += [(k.arg, k.value) for k in call.keywords]
        bound: dict[str, Any] = {}
        for name, node in given:
            if name not in names or name in bound or not isinstance(node, ast.Constant):
                return None
            bound[name] = node.value
        calls.append((call.func.id, bound))
    return calls or None


def skill_words(tool: str, argument: str, value: Any) -> list[str] | None:
    """The traced words of an IPython cell of skill calls (the module doc), None for any other argument or cell."""
    calls = skill_calls(value) if tool in IPYTHON_TOOLS and argument == "code" and isinstance(value, str) else None
    if calls is None:
        return None
    words: list[str] = []
    for _, args in calls:
        for name, v in args.items():
            if name in COUNTS or v is None or isinstance(v, bool):
                continue
            if name in LINES and isinstance(v, int):
                words.append(str(v))
            elif name in PATHS and isinstance(v, str):
                words.append(listed_path(v))
            elif name in TERMS and isinstance(v, str):
                words += pattern_words(v, v, fixed=True)  # code its names (def parse_header: parse_header)
            elif isinstance(v, str):
                words.append(v)  # a text: whole
            else:
                return None
    return words


def line_file(tool: str, args: Any, opened: str = "") -> str | None:
    """The file whose lines a cell of skill calls names (every ``line_number`` of its calls, each a line of one file):
    ``open_file(PATH, 212)``'s PATH, ``insert_content_at_line(PATH, 212, TEXT)``'s, and ``goto_line(212)``'s the file
    open then (the cell's own ``open_file`` or ``create_file`` before it, else ``opened``: the file an earlier
    cell's window showed, :func:`sam_model.data.formats.swe_agent.viewed_file`), as SWE-agent's ``goto 212`` is a line
    of its open file. None for any other call or cell: one naming no line, lines of two files or of a file unknown,
    or another number (a search term ``'212'``, which would be read as a line). Read by its arguments, such a cell's
    212 had been labelled by the first event saying 212 (the issue's #212), where a lone ``open_file`` was marked."""
    code = args.get("code") if isinstance(args, Mapping) else None
    calls = skill_calls(code) if tool in IPYTHON_TOOLS and isinstance(code, str) else None
    files: set[str] = set()
    for name, bound in calls or ():
        if name in ("open_file", "create_file"):
            opened = bound.get("path", bound.get("filename"))
        file = bound.get("file_name") if name == "insert_content_at_line" else opened
        for parameter, v in bound.items():
            if parameter in LINES:
                if not (isinstance(v, int) and not isinstance(v, bool) and v > 0 and isinstance(file, str) and file):
                    return None
                files.add(file)
            elif isinstance(v, str) and v.strip().isdigit():
                return None
    return files.pop() if len(files) == 1 else None
