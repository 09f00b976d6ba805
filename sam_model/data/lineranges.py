"""Line ranges a command or a tool shows (``sed -n '120,160p'``, ``awk 'NR>=120'``, ``git blame -L
120,160``) read as their line numbers (:func:`line_numbers`, :func:`git_lines`), and pages told from windows
(:func:`is_page`, :class:`PageBound`).

A line number an agent asks for is a value an earlier event gave (a grep -n hit, a traceback), traced to it; a
range's count of lines (``1,200p``: head's 200) and a page's bounds (``200,400p`` after ``1,200p``: how far the agent
has read) are none. The shell rule (:mod:`sam_model.data.shellwords`), an editor's ``view_range`` and a read tool's
``offset`` (:mod:`sam_model.data.toolarguments`) judge numbers by the same rules here.
"""

from __future__ import annotations

import re

from sam_model.data.shellpaths import listed_path

# a script that prints lines by number (sed -n '120,160p' FILE, awk 'NR>=120 && NR<=160'): its line numbers are
# values an earlier event said (a grep -n hit, FILE:120:), the script whole none; an end of $ or +K (a count) is none,
# and so is the end of a range from the first line (sed -n '1,200p', awk 'NR<=200': head -n 200's count)
# a line number: no file has more lines than 12 digits count, and int() of more than 4,300 digits is a ValueError
# (sed -n '9999...,9999...p' stopped the conversion with a traceback); a longer number makes the script no line range
RANGE_LINE = r"\d{1,12}"
_SED_LINES = re.compile(rf"\s*({RANGE_LINE})\s*(?:,\s*({RANGE_LINE}|\$|\+\d+)\s*)?p\s*")
_AWK_LINE = rf"NR\s*(==|>=|<=|>|<)\s*({RANGE_LINE})"
_AWK_LINES = re.compile(rf"\s*{_AWK_LINE}\s*(?:(&&|,)\s*{_AWK_LINE}\s*)?(?:\{{\s*print(?:\s+\$0)?\s*;?\s*\}}\s*)?")


def git_lines(value: str, pages: bool = False) -> list[str]:
    """The traced words of ``git blame -L`` / ``git log -L``'s value: a range ``120,160`` (``120,+40``, ``120``; in
    ``git log`` followed by ``:FILE``) its line numbers as a sed range's (:func:`line_numbers`: an end of ``+40`` or of
    a range from the first line is a count, none), its file a path; ``:NAME[:FILE]`` the function's name and the file;
    anything else (a ``/regex/`` bound) one word, as before. ``120,160`` whole was said by no event, while a grep -n
    hit said 120. ``pages``: a page's bounds are kept, as :class:`PageBound` words (:func:`line_numbers`)."""
    m = re.fullmatch(rf"({RANGE_LINE})(?:,({RANGE_LINE}|[+-]\d+))?(?::(.+))?", value, re.DOTALL)
    if m:
        first, end, file = m.groups()
        lines = line_numbers("sed", f"{first},{end}p" if end and not end.startswith("-") else f"{first}p",
                             pages) or []
        return lines + ([listed_path(file)] if file else [])
    if value.startswith(":") and len(value) > 1:
        return [w for w in value[1:].split(":", 1) if w]
    return [listed_path(value)]


def line_numbers(program: str | None, script: str, pages: bool = False) -> list[str] | None:
    """The line numbers of a ``sed`` script of line-range prints (``10,40p``, ``5p;9,12p``) or an ``awk`` program of
    ``NR`` bounds (``NR>=10 && NR<=40``, ``NR==10,NR==40``, a ``{print}`` after them); None for any other script,
    which stays one word as before. The end of a range from the first line (``1,200p``, ``NR<=200``) is none: it
    says how many lines to show, as ``head -n 200`` does (Codex's first look at a file), no line an earlier event
    gave, and it was traced to any earlier output that printed 200. Nor are a page's bounds (:func:`is_page`:
    ``200,400p`` after ``1,200p``), unless ``pages``: then they are :class:`PageBound` words, for a reader who sees
    the earlier outputs to judge (a window opening at a grep hit is no page)."""
    if program == "sed" and script.strip():
        parts = [_SED_LINES.fullmatch(p) for p in re.split(r"[;\n]", script.strip().rstrip(";"))]
        if all(parts):
            out: list[str] = []
            for m in parts:
                first, end = m.groups()  # type: ignore[union-attr]
                if not (end and end.isdigit() and is_page(int(first), int(end))):
                    out += [n for n in (first, end) if n and n.isdigit() and (n == first or int(first) > 1)]
                elif pages:
                    out += [PageBound(n, (int(first), int(end))) for n in (first, end)]
            return out
    if program == "awk" and (m := _AWK_LINES.fullmatch(script)):
        op, first, _, op2, second = m.groups()
        bounds = [(op, first), *([(op2, second)] if second else [])]
        starts = [n for i, (o, n) in enumerate(bounds) if o in (">=", ">") or o == "==" and i == 0]
        ends = [n for n in (first, second) if n and n not in starts]
        if starts and ends and is_page(int(starts[0]), int(ends[0])):
            window = (int(starts[0]), int(ends[0]))
            return [PageBound(n, window) for _, n in bounds] if pages else []
        return [n for _, n in bounds if n in starts or starts and int(starts[0]) > 1]  # NR<=200 alone: a count
    return None


PAGE_LINES = 50  # the fewest lines a page of a file holds: a window around a grep hit is smaller (120,160p)


class PageBound(str):
    """A bound of a page of a file (:func:`is_page`: ``200`` and ``400`` of ``sed -n '200,400p'``), which the
    labelling rule does not trace unless the window opens or closes at a line an earlier output printed as a search
    hit (:func:`~sam_model.data.searchhits.grep_hit`): then it is a window around that hit, whose numbers are
    values, as ``120,160p``'s are.
    Only a reader that sees the earlier outputs can tell (:func:`sam_model.data.argumentleaves.call_leaves`), so the
    readers of a command (``pages``) give the bounds as these words. ``window``: the range's first and last line."""

    window: tuple[int, int]

    def __new__(cls, word: str, window: tuple[int, int]) -> PageBound:
        bound = super().__new__(cls, word)
        bound.window = window
        return bound


def is_page(first: int, end: int) -> bool:
    """Whether the line range ``first``-``end`` is a page of a file read page by page: its k-th window of n lines,
    n at least :data:`PAGE_LINES` and a multiple of 10 (``200,400p`` or ``201,400p`` after ``1,200p``, ``250,500p``,
    ``300,350p``). Its bounds are the agent's paging, how far it has read, no line an earlier event gave: ``400`` was
    traced to any earlier output that printed 400 (an HTTP status, a constant of the page before). The first page
    (``1,200p``) has its own rule; a range of another start (``120,160p``, ``150,250p``: around a grep hit) keeps
    its numbers, and so does a page by these numbers that opens or closes at a line an earlier result printed as a
    hit (:class:`PageBound`: the labelling rule sees the results, this judges the numbers alone)."""
    return first > 1 and any(n >= PAGE_LINES and n % 10 == 0 and start % n == 0
                             for n, start in ((end - first, first), (end - first + 1, first - 1)))
