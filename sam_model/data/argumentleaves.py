"""Which leaves of a tool call's arguments the labelling rule judges, and at which path.

The spec judges each scalar leaf of the arguments, whole (:func:`leaves`). The extensions of
:mod:`sam_model.data.toolstate` read some arguments by their parts instead: a shell command line by its words, a
patch by the paths it names, a search tool's pattern by its names, a SQL query by its literals, an editor's
``view_range`` as a line range; and a
setting, an editor's operation and a page's offset are judged trivial. :func:`call_leaves` is that reading for one
call, the one the state's decisions and a scoped memory's count of a call's values both take, so they count alike.
What the words of each kind of argument are is the shell and tool modules' (shellwords, toolarguments, shellpaths);
this module picks which reading an argument gets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sam_model.data.agentskills import skill_words
from sam_model.data.chatmessages import ToolCall
from sam_model.data.lineranges import PageBound
from sam_model.data.shellpaths import patch_paths
from sam_model.data.shellwords import command_words
from sam_model.data.sqlwords import sql_literals
from sam_model.data.toolarguments import (
    is_command_line,
    is_operation,
    is_page_offset,
    is_patch_tool,
    is_powershell,
    is_sql_query,
    is_tool_setting,
    page_offset_line,
    search_pattern,
    view_lines,
)


def leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(path, scalar) pairs: a dict gives the leaves of each value at ``path.key``, a list those of each item
    at ``path`` (no index), a scalar is one leaf."""
    if isinstance(value, Mapping):
        return [leaf for k, v in value.items() for leaf in leaves(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves(v, path)]
    return [(path, value)]


def argument_leaves(tool: str, name: str, value: Any, pages: bool = False) -> list[tuple[str, Any]]:
    """The leaves of argument ``name`` of a call to ``tool`` that the labelling rule judges: the spec's
    :func:`leaves`, except a shell command's words (the extension of toolstate's doc, "shell command lines"), an
    OpenHands IPython cell of agent skills' arguments (:func:`sam_model.data.agentskills.skill_words`), a
    search tool's pattern's names (:func:`sam_model.data.toolarguments.search_pattern`), a SQL query's literals
    (:func:`sam_model.data.sqlwords.sql_literals`, of :func:`sam_model.data.toolarguments.is_sql_query`) and an
    editor's ``view_range``
    line numbers (:func:`sam_model.data.toolarguments.view_lines`), each at the argument's path; a
    command that is read whole (its quotes do not close) is one leaf, as the spec reads it. ``pages``: a page's
    bounds in a line range are leaves too, as :class:`~sam_model.data.lineranges.PageBound` words."""
    found = command_words(value, powershell=is_powershell(tool), pages=pages) \
        if is_command_line(tool, name, value) else None
    if found is None and isinstance(value, str) and is_patch_tool(tool):
        found = patch_paths(value)
    if found is None and is_sql_query(tool, name, value):
        found = sql_literals(value)
    if found is None:
        found = skill_words(tool, name, value)
    if found is None:
        found = search_pattern(tool, name, value)
    if found is None:
        found = view_lines(name, value, pages)
    if found is not None:
        return [(name, w) for w in found]
    return leaves(value, name)


RAW_PATCH = "input"  # the path a freeform patch's file paths are judged at (a Responses custom tool call's field)


def raw_patch(call: ToolCall) -> list[str] | None:
    """The file paths of a call whose arguments are a freeform patch, no JSON object (Codex's ``apply_patch`` custom
    tool call, its input the patch itself: :func:`sam_model.data.shellpaths.patch_paths`); None for any other call."""
    return patch_paths(call.arguments) if isinstance(call.arguments, str) and is_patch_tool(call.name) else None


def call_leaves(call: ToolCall, hit: Callable[[int], bool] | None = None) -> list[tuple[str, Any, bool]]:
    """(path, leaf, whether it is a shell's setting) of each leaf of ``call`` the labelling rule judges: its
    arguments' (:func:`argument_leaves`; a setting, :func:`sam_model.data.toolarguments.is_tool_setting`, an operation
    and a page's offset, :func:`sam_model.data.toolarguments.is_page_offset`, are judged trivial), or, of arguments that are no JSON object, a freeform patch's paths at :data:`RAW_PATCH` (any other raw
    string gives none, as the spec reads it). ``hit``: whether an earlier output printed a line as a search hit;
    given, a line range that is a page by its numbers (``sed -n '200,250p'``, a Read's ``offset`` 200) but opens or
    closes at a hit is a window around it, its numbers leaves as :class:`~sam_model.data.lineranges.PageBound`
    words (its paging rule took them for a page and traced nothing)."""
    if not call.valid:
        return [(RAW_PATCH, p, False) for p in raw_patch(call) or ()]
    out: list[tuple[str, Any, bool]] = []
    for name, value in call.arguments.items():
        page = is_page_offset(call.name, name, call.arguments)
        line = page_offset_line(call.name, name, call.arguments) if page and hit else None
        for path, v in argument_leaves(call.name, name, value, pages=hit is not None):
            if isinstance(v, PageBound) and not (hit and any(map(hit, v.window))):
                continue  # a page's bound: no leaf, as without hit
            if line is not None and hit and hit(line):
                v, page = PageBound(str(line), (line, line)), False
            out.append((path, v, is_tool_setting(call.name, name, call.arguments) or is_operation(call.name, name, value) or page))
    return out
