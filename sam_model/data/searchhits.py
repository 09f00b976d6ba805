"""Search hits and locations an output prints: ``FILE:LINE:`` of ``grep -n``, ``rg``, a Grep tool, a
compiler or pytest, ``LINE:`` of a one-file grep, SWE-agent's ``Line LINE:``, Gemini CLI's ``LLINE:``, a Python
traceback's ``File "FILE", line LINE`` and other tools' locations (Rust's ``--> FILE:LINE:COL``, a Node stack
frame's, tsc's ``FILE(LINE,COL): error``: :data:`LOCATIONS`) (:func:`grep_hit`, :func:`hit_lines`), with the FILE
and LINE they are read by (:data:`HIT_FILE`, :data:`LINE_NUMBER`, :data:`TRACEBACK_LINE`).

A page of a file whose bounds open or close at such a line is a window around the hit, its numbers values, where
any other page's bounds are none (:class:`sam_model.data.lineranges.PageBound`); and the readers of shown lines
(:mod:`sam_model.data.formats.numbered`) mark the lines an output printed by the same FILE and LINE. One reading of
a hit in one place, so the page-bound rule and the shown lines never disagree on what an output printed.
"""

from __future__ import annotations

import functools
import re

# the FILE of a search hit FILE:LINE: (grep_hit, hit_lines; numbered.py's grep -n readers), as grep -rn, rg -n, git
# grep -n and Claude Code's Grep print it: the path as given or found, unquoted, so a folder with a space stays in it
# (C:\Users\Ann Lee\repo\a.py:200:, /Users/ann/My Project/a.py:200:; grep_hit stopped at the space, numbered.py
# took anything up to the first :N:). It holds no colon but a drive's (C: before a separator), so a URL
# (http://host:8080:) is none; a space only before a path's last separator, the file's own name none, so prose
# (Error at line 200: foo) and a Go log's time (2024/01/01 12:30:45) are none; and it opens with no number before a
# dash or colon: a one-file grep's context line (211-code) or hit (211:code), or a time (12:30:45)
HIT_FILE = r"(?!\d+[-:])(?:[A-Za-z]:(?=[/\\]))?(?:[^\s:]+|[^\s:][^:\n]*[/\\][^\s:/\\]+)"
# the LINE of a search hit or a numbered listing (grep_hit, hit_lines; numbered.py's readers of grep -n, cat -n, nl
# and Read), as those print it: no leading zero (0200: is no line 200, 0: no line) and at most 12 digits, as
# lineranges.RANGE_LINE reads a range's (no file has more lines; int() of 4,300 digits is a ValueError). The readers
# had disagreed: numbered took 0200: for line 200 where hit_lines took none, and grep_hit a 13-digit line no reader
# of lines reads
LINE_NUMBER = r"[1-9]\d{0,11}(?!\d)"
_LINE_NUMBER = re.compile(LINE_NUMBER)
# a Python traceback's location (an indented 'File "FILE", line LINE', ", in NAME" after it; pytest's --tb=native
# prints it too): it names line LINE of FILE as a compiler's or pytest's FILE:LINE: does (grep_hit, hit_lines;
# numbered.py's reader of an output's locations), its groups FILE and LINE
TRACEBACK_FILE = r'[ \t]*File "([^"\n]+)", line '  # the location before its LINE
TRACEBACK_LINE = rf"{TRACEBACK_FILE}({LINE_NUMBER})"
# other tools' locations (numbered.py's reader of an output's locations; grep_hit, hit_lines), each opening a line,
# each naming line LINE of FILE as a compiler's FILE:LINE: does, their groups FILE and LINE: Rust's (rustc, cargo,
# clippy) "  --> src/main.rs:12:5" under its message; a Node (V8) stack frame "    at getUser (/app/src/users.js:12:5)"
# or "    at /app/src/users.js:12:5" (its FILE no space or parenthesis: node:internal/... and file:// URLs none); and
# TypeScript's tsc (MSBuild's, C#'s alike) "src/a.ts(12,5): error TS2345" (or warning). They were read as no
# location, so a line number the agent took from one was traced to the first event saying the number anywhere. A
# frame's line may end in CRLF (a terminal's output: docker exec -t, a pty), which its end had not taken
RUST_LINE = rf"[ \t]*--> ({HIT_FILE}):({LINE_NUMBER}):\d"
NODE_LINE = rf"[ \t]+at (?:[^\n()]* \()?((?:[A-Za-z]:(?=[/\\]))?[^\s:()]+):({LINE_NUMBER}):\d+\)?[ \t\r]*$"
TSC_LINE = rf"({HIT_FILE})\(({LINE_NUMBER}),\d+\): (?:error|warning)\b"
LOCATIONS = [re.compile(rf"(?m)^{form}") for form in (RUST_LINE, NODE_LINE, TSC_LINE)]


def grep_hit(text: str, line: int) -> bool:
    """Whether ``text``, an earlier event's, prints line ``line`` as a search hit: a line of ``grep -n``'s, ``rg``'s
    or a search tool's output opening ``FILE:LINE:`` (``FILE:LINE:COL:``; FILE as :data:`HIT_FILE` reads it, a
    Windows ``C:\\...`` or a folder with a space too), ``LINE:`` (one file's hits), ``LLINE:`` (Gemini CLI's
    search_file_content, under its ``File: PATH``) or ``Line LINE:`` (SWE-agent's
    search_file; LINE as :data:`LINE_NUMBER` reads it), after the tool's name a result is written with (``Bash:
    src/a.py:200:``). A location is one too: a compiler's, a linter's or pytest's ``FILE:LINE:`` (gcc's
    ``src/a.c:200:5: error``, mypy's ``a.py:200: error``, pytest's ``tests/test_a.py:200: AssertionError``) and a
    Python traceback's ``File "FILE", line LINE`` (:data:`TRACEBACK_LINE`). It names line LINE of FILE without
    printing the line's text, as a hit prints it; what is certain is that the value was said there as a line of that
    file, so a window opening there came from it as much (which file, where a reader marks it: numbered.py's
    locations). A context line
    (``FILE-200-``), a numbered view (``   200\t``), prose (``Error at line 200:``) or a number elsewhere is none."""
    # the substrings first: the pattern took 3 ms over a 100 KB result, read for each page bound over every earlier
    # result of a long session, the substrings 0.1 ms
    if _LINE_NUMBER.fullmatch(str(line)) is None:
        return False
    if (f"{line}:" in text or f"line {line}" in text) and _hit_line(line).search(text) is not None:
        return True
    return (f":{line}:" in text or f"({line}," in text) and line in _location_lines(text)


_TOOL_NAME = re.compile(r"^[\w.-]+: (?=\S)")  # the tool's name a result's text opens with


def _location_lines(text: str) -> frozenset[int]:
    """The lines other tools' locations in ``text`` name (:data:`LOCATIONS`; a result's first line after the tool's
    name it is written with, ``Bash: src/a.ts(12,5): error``)."""
    text = _TOOL_NAME.sub("", text, count=1)
    return frozenset(int(m.group(2)) for form in LOCATIONS for m in form.finditer(text))


@functools.lru_cache(maxsize=256)
def _hit_line(line: int) -> re.Pattern[str]:
    """The pattern of a search hit at ``line`` (:func:`grep_hit`), compiled once for each line a session pages at."""
    return re.compile(rf"(?m)^(?:[\w.-]+: )?(?:(?:{HIT_FILE}:|Line |L)?{line}:|{TRACEBACK_FILE}{line}(?!\d))")


# each way a line may open with a hit (grep_hit's pattern, its optional parts given or not): one number each (a
# FILE ends at its first colon, or at the one after a drive's, which a separator follows: one place a line)
_HIT_FORMS = [re.compile(rf"(?m)^{prefix}{where}({LINE_NUMBER}):")
              for prefix in ("", r"[\w.-]+: ") for where in ("", rf"{HIT_FILE}:", "Line ", "L")] + [
    re.compile(rf"(?m)^(?:[\w.-]+: )?{TRACEBACK_LINE}")]  # a traceback's location: its LINE the last group


def hit_lines(text: str) -> frozenset[int]:
    """Every line :func:`grep_hit` finds ``text`` printing as a search hit, read once (a line's number as
    :data:`LINE_NUMBER` reads it: ``0200:`` is not ``200:``), for a reader asking of many lines (toolstate's page
    bounds)."""
    if ":" not in text and "line " not in text:
        return frozenset()
    return frozenset(int(m.group(m.lastindex or 0)) for form in _HIT_FORMS for m in form.finditer(text)) \
        | _location_lines(text)
