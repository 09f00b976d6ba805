"""A review of how a file viewer/editor agent's calls are labelled (OpenHands' and SWE-agent's str_replace_editor,
Anthropic's text editor tool, OpenHands V1's file_editor; SWE-agent's own text commands): its operation word and its
paging were traced as values an earlier event gave."""

from __future__ import annotations

import json

import pytest

from sam_model.data.chatmessages import ToolCall
from sam_model.data.toolarguments import is_operation, view_lines
from sam_model.data.toolstate import TranscriptState

EDITOR = "str_replace_editor"
PATH = "/workspace/shop/src/shop/cart.py"


def _numbered(first: int, last: int, line=lambda k: f"total_{k} = 0") -> str:
    """A file view as the editor prints it (cat -n)."""
    return f"Here's the result of running `cat -n` on {PATH}:\n" + "\n".join(
        f"{k:6d}\t{line(k)}" for k in range(first, last + 1))


def _session(*calls: tuple[str, dict, str]) -> TranscriptState:
    st = TranscriptState()
    st.add({"role": "user", "content": f"Checkout answers HTTP 400 on an empty cart; the code is {PATH}."})
    for i, (name, args, output) in enumerate(calls):
        st.add({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
            "name": name, "arguments": json.dumps(args)}}]})
        st.add({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    return st


def test_an_editor_operation_is_no_value():
    """Every view after the first was a decision point labelled with the first call that said 'view' (in a
    hand-written OpenHands session, 6 of its 10 decision points and no other value needed there): the operation
    is the tool's syntax, as a shell's sub-command is."""
    st = _session((EDITOR, {"command": "view", "path": PATH}, _numbered(1, 40)),
                  ("execute_bash", {"command": "git status"}, "On branch main"))
    d = st.decide([ToolCall(EDITOR, {"command": "view", "path": PATH, "view_range": [20, 30]}, "c9")])
    assert d.needed == {"path": [PATH.lower()]} and d.labels == [0]  # the path the user gave; lines 20-30 the view's
    again = st.decide([ToolCall("file_editor", {"command": "str_replace", "path": PATH, "old_str": "total_7 = 0",
                                                "new_str": "total_7 = None"}, "c9")])
    assert again.needed == {"path": [PATH.lower()], "old_str": ["total_7 = 0"]}  # old_str: copied from the view
    assert again.labels == [0, 2] and again.outcomes["trivial"] == 1  # the operation alone


@pytest.mark.parametrize("tool, argument, value, expected", [
    (EDITOR, "command", "undo_edit", True),
    ("memory", "command", "view", True),
    (EDITOR, "command", "src/shop/cart.py", False),  # no operation: a value as the spec reads it
    (EDITOR, "path", "view", False),
    ("execute_bash", "command", "ls", False),  # a shell's command line, read by its words
    (EDITOR, "command", 3, False),
])
def test_which_arguments_are_operations(tool, argument, value, expected):
    assert is_operation(tool, argument, value) is expected


def test_a_page_of_a_file_view_is_no_value():
    """view_range [201, 400] after [1, 200]: 400 is how far the agent has read, no line an earlier event gave; it was
    traced to the first event that printed 400 (the user's 'HTTP 400'), as sed -n '201,400p' no longer is
    (lineranges.is_page)."""
    st = _session((EDITOR, {"command": "view", "path": PATH, "view_range": [1, 200]}, _numbered(1, 200)),
                  ("execute_bash", {"command": "git status"}, "On branch main"))
    d = st.decide([ToolCall(EDITOR, {"command": "view", "path": PATH, "view_range": [201, 400]}, "c9")])
    assert d.needed == {"path": [PATH.lower()]}


def test_a_window_around_a_grep_hit_keeps_its_lines():
    """[240, 260] around a hit the grep printed at 250 is no page: its numbers are values, traced as before (here to
    the grep that printed them); the end of a first view, [1, 200], says how much to show, no line."""
    st = _session(("execute_bash", {"command": "grep -n 'def checkout' src/shop/cart.py"},
                   "240:# checkout\n250:def checkout(self):\n260:    return self.total"),
                  ("execute_bash", {"command": "git status"}, "On branch main 200"))
    d = st.decide([ToolCall(EDITOR, {"command": "view", "path": PATH, "view_range": [240, 260]}, "c9")])
    assert d.needed == {"path": [PATH.lower()], "view_range": ["240", "260"]} and d.labels == [0, 2]


@pytest.mark.parametrize("value, expected", [
    ([1, 200], ["1"]),  # the first page: its end a count
    ([201, 400], []),  # a page
    ([240, 260], ["240", "260"]),  # a window around a hit
    ([401, -1], ["401"]),  # to the end: its start
    ([240], None),  # no range: read as the spec reads it
    (["240", "260"], None),
    ([True, 260], None),
    ([260, 240], None),
])
def test_view_lines(value, expected):
    assert view_lines("view_range", value) == expected
    assert view_lines("range", [201, 400]) is None
