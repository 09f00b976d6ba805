"""The line-number marks of a conversation, read and kept: which lines of which file a result showed, and which
arguments of a call are line numbers of which file.

The extension of :mod:`sam_model.data.toolstate` for line numbers labels a needed line number of a file by the
latest earlier event that showed that line of that file. Readers that know their tools say so with
:data:`~sam_model.data.formats.base.SHOWN_LINES` on a result and
:data:`~sam_model.data.formats.base.LINE_ARGUMENTS` on a call's message (the SWE-agent reader,
:func:`sam_model.data.formats.numbered.mark`). This module checks the marks' shapes, keeps a result's lines as runs
(a ``cat -n`` of thousands of lines is one pair) and tells whether two paths name one file; which event labels a
number is the state's rule (TranscriptState._showed).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sam_model.data.formats.base import LINE_ARGUMENTS, SHOWN_LINES, TranscriptFormatError
from sam_model.data.shellpaths import is_windows_path, windows_key


def shown_lines(message: Mapping[str, Any], where: str) -> dict[str, list[int]]:
    """A result message's :data:`~sam_model.data.formats.base.SHOWN_LINES` (``{}`` where it has none); one that is no
    ``{FILE: [N, ...]}`` is refused, naming the message."""
    raw = message.get(SHOWN_LINES)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
            isinstance(f, str) and isinstance(ns, list) and all(isinstance(n, int) and not isinstance(n, bool)
                                                                for n in ns) for f, ns in raw.items()):
        raise TranscriptFormatError(where, f"message's '{SHOWN_LINES}' is {json.dumps(raw, default=str)[:80]}: give "
                                           "{FILE: [LINE NUMBER, ...]}, the lines of each file its text printed, or "
                                           "leave it out")
    return {f: sorted(set(ns)) for f, ns in raw.items() if ns}


def line_runs(numbers: Iterable[int]) -> list[list[int]]:
    """Line numbers as runs ``[[first, last], ...]`` (ascending, apart): how a tracker keeps the lines a result
    showed (``shown``), since a long ``cat -n`` listing shows thousands of consecutive lines, each an int saved
    with the tracker (MBs a long session); the same lines, one pair a run."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return runs


def in_runs(n: int, runs: Sequence[Sequence[int]]) -> bool:
    """Whether line ``n`` is in ``runs`` (:func:`line_runs`)."""
    i = bisect_right(runs, n, key=lambda r: r[0]) - 1
    return i >= 0 and runs[i][0] <= n <= runs[i][1]


def saved_runs(lines: Any) -> list[list[int]] | None:
    """A saved ``shown`` item's lines as runs: ``[[first, last], ...]``, or a save's from before runs, ``[N, ...]``;
    None where it is neither."""
    if not isinstance(lines, list):
        return None
    if all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
        return line_runs(lines)
    pairs = [r for r in lines if isinstance(r, list) and len(r) == 2
             and all(isinstance(n, int) and not isinstance(n, bool) for n in r) and r[0] <= r[1]]
    if len(pairs) < len(lines):
        return None
    runs: list[list[int]] = []
    for a, b in sorted(pairs):  # as line_runs would give them: sorted, touching runs joined
        if runs and a <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b])
    return runs


def line_arguments(message: Mapping[str, Any], where: str) -> dict[str, tuple[str, frozenset[str]]]:
    """An assistant message's :data:`~sam_model.data.formats.base.LINE_ARGUMENTS` as ``{call id: (file, argument
    names)}`` (``{}`` where it has none); one of another shape is refused, naming the message."""
    raw = message.get(LINE_ARGUMENTS)
    if raw is None:
        return {}
    ok = isinstance(raw, Mapping) and all(
        isinstance(m, Mapping) and isinstance(m.get("file"), str) and isinstance(m.get("arguments"), list)
        and all(isinstance(a, str) for a in m["arguments"]) for m in raw.values())
    if not ok:
        raise TranscriptFormatError(where, f"message's '{LINE_ARGUMENTS}' is {json.dumps(raw, default=str)[:80]}: "
                                           "give {TOOL CALL ID: {\"file\": FILE, \"arguments\": [NAME, ...]}}, the "
                                           "arguments of each call that are line numbers of FILE, or leave it out")
    return {str(k): (m["file"], frozenset(m["arguments"])) for k, m in raw.items()}


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file as a reader wrote them: equal, or one is the other's part below a directory
    (``src/x.py`` of ``/testbed/src/x.py``, where the working directory was unknown); a Windows path with either
    separator and in any case (shellpaths.windows_key: ``C:\\repo\\src\\app.py`` is ``src/App.py``'s)."""
    if is_windows_path(a) or is_windows_path(b):
        a, b = windows_key(a), windows_key(b)
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))
