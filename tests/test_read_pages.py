"""A file read's paging (Claude Code's Read, Gemini CLI's read_file: ``offset`` and ``limit``): an offset that starts
a page is how far the agent has read, no value an earlier event gave, as an editor's ``view_range`` page is."""

from __future__ import annotations

import pytest
from shell_calls import decide

PATH = "/home/me/shop/src/shop/cart.py"



@pytest.mark.parametrize("tool, arguments", [
    ("Read", {"file_path": PATH, "offset": 201, "limit": 200}),  # Claude Code's: from line 1, lines 201-400
    ("read_file", {"absolute_path": PATH, "offset": 200, "limit": 200}),  # Gemini CLI's: from 0, the same lines
    ("mcp__filesystem__read_file", {"path": PATH, "offset": "400", "limit": "200"}),
])
def test_an_offset_that_starts_a_page_is_no_value(tool, arguments):
    """201 (or 200) was traced to the earlier event that printed it, the user's 'HTTP 201'/'HTTP 200': each page after
    the first was a decision point labelled with that turn."""
    got = decide(tool, arguments, f"Checkout answers HTTP 201 or 200 or 400 in {PATH}; it should not.")
    path = next(k for k in arguments if k.endswith("path"))
    assert got.needed == {path: [PATH.lower()]} and got.labels == [0]


def test_an_offset_from_a_grep_hit_is_a_value():
    """offset 245 comes from a grep hit at line 245, no page of 40 (nor of 200): it is traced to the grep."""
    got = decide("Read", {"file_path": PATH, "offset": 245, "limit": 40}, f"Checkout fails in {PATH}.",
                  "grep said: 245:    def checkout(self):")
    assert got.needed == {"file_path": [PATH.lower()], "offset": ["245"]} and got.labels == [0, 1]


@pytest.mark.parametrize("tool, arguments, page", [
    ("Read", {"offset": 201, "limit": 200}, True),  # k*n + 1
    ("Read", {"offset": 400, "limit": 200}, True),  # k*n
    ("read_file", {"offset": 100, "limit": 50}, True),
    ("Read", {"offset": 245, "limit": 200}, False),  # around a grep hit
    ("Read", {"offset": 245, "limit": 40}, False),  # a window smaller than a page
    ("Read", {"offset": 201}, False),  # no limit: no page to judge
    ("Read", {"offset": 201, "limit": True}, False),
    ("Read", {"offset": 1, "limit": 200}, False),  # the first page has its own rule (its small number is trivial)
    ("read_customer", {"offset": 200, "limit": 200}, False),  # a business tool that reads: its offset a value
    ("Read", {"limit": 200, "offset": 201}, True),
])
def test_which_offsets_start_a_page(tool, arguments, page):
    from sam_model.data.toolarguments import is_page_offset

    assert is_page_offset(tool, "offset", arguments) is page
    assert not is_page_offset(tool, "limit", arguments | {"offset": 200, "limit": 200})
