"""Review 54 of the day's labelling rules (shellwords, toolstate): values traced to an event that did not give them,
and values lost, with command lines and tool calls coding agents write."""

from __future__ import annotations

import json

import pytest
from shell_calls import decide

from sam_model.data.shellwords import command_words
from sam_model.data.toolstate import TranscriptState


@pytest.mark.parametrize("command, expected", [
    ("sed -n '1,200p' src/app.py", ["1", "src/app.py"]),  # the first 200 lines: head -n 200
    ("sed -n '1,240p;250,270p' src/app.py", ["1", "250", "270", "src/app.py"]),  # a later range keeps its end
    ("sed -n '1,240p;240,480p' src/app.py", ["1", "src/app.py"]),  # ... unless a page (test_shell_leftovers_54)
    ("awk 'NR<=200' src/app.py", ["src/app.py"]),
    ("awk 'NR<200' src/app.py", ["src/app.py"]),
    ("awk 'NR>=1 && NR<=200' src/app.py", ["1", "src/app.py"]),
    ("awk 'NR==1,NR==200' src/app.py", ["1", "src/app.py"]),
    ("sed -n '120,160p' src/app.py", ["120", "160", "src/app.py"]),  # a range a grep -n hit opened: as before
    ("awk 'NR>=120 && NR<=160' src/app.py", ["120", "160", "src/app.py"]),
    ("awk 'NR>300' src/app.py", ["300", "src/app.py"]),  # from line 300 on: a line number, as tail -n +300's
    ("awk 'NR<=160 && NR>=120' src/app.py", ["160", "120", "src/app.py"]),  # a bound above the first line: as before
    ("awk 'NR<=200 && NR>=100' src/app.py", ["src/app.py"]),  # a page (test_shell_leftovers_54)
    ("sed -n '2024p' log.txt", ["2024", "log.txt"]),  # one line: a line number
])
def test_a_range_from_the_first_line_is_a_count(command, expected):
    assert command_words(command) == expected


def test_the_first_view_of_a_file_is_not_labelled_with_an_output_that_printed_its_length():
    """sed -n '1,200p' FILE, the first look at a file (Codex's habit), shows its first 200 lines as head -n 200 does:
    the 200 is how much to show, no line an earlier event gave, yet it was traced to the issue's HTTP 200."""
    got = decide("Bash", {"command": "sed -n '1,200p' src/app.py"}, "GET /health answers 200 instead of 503.")
    assert got.needed == {} and got.labels == []


@pytest.mark.parametrize("command, expected", [
    ('grep -rn "Module not found" .', ["Module not found", "."]),  # an error message: a phrase, traced whole
    ('grep -rn "Type mismatch" src', ["Type mismatch", "src"]),
    ('grep -rn "Import failed" logs', ["Import failed", "logs"]),
    ('grep -rn "class not found" .', ["class not found", "."]),  # no name after the declaration: prose
    ('grep -rn "return to the main menu" docs', ["return to the main menu", "docs"]),
    ('grep -rn "from the user" docs', ["from the user", "docs"]),
    ('grep -rn "def foo" src', ["foo", "src"]),  # code, as before
    ('grep -rn "from django.db import models" .', ["django.db", "models", "."]),
    ('grep -rn "import numpy as np" .', ["numpy", "np", "."]),
    ('grep -rn "type Config struct" .', ["Config", "."]),
    ('rg "impl Display for" src', ["Display", "src"]),
    ('grep -rn "export default" src', ["default", "src"]),
])
def test_a_phrase_opening_with_a_declaration_word_is_a_phrase(command, expected):
    assert command_words(command) == expected


def test_an_error_message_searched_for_is_not_split_into_common_words():
    """grep -rn "Module not found" took Module for a declaration (Ruby's module) and traced found, a word of any
    earlier output (here a find that found nothing), while the message is what the failing run printed."""
    got = decide("Bash", {"command": 'grep -rn "Module not found" src'}, "Nothing found under build/.",
                  "Error: Module not found: tinyparse.extras")
    assert got.needed == {"command": ["module not found"]} and got.labels == [1]


@pytest.mark.parametrize("command, expected", [
    ("grep -rn 'Connection refused\\|timed out' logs", ["Connection refused", "timed out", "logs"]),
    ("grep -rnE 'Connection refused|timed out' logs", ["Connection refused", "timed out", "logs"]),
    ("grep -rn 'user .* not found' logs", ["user", "not found", "logs"]),
    ("grep -rn 'No module named .*tinyparse' .", ["No module named", "tinyparse", "."]),
    ("grep -rn 'TODO\\|FIXME' src", ["TODO", "FIXME", "src"]),  # names, as before
    ("grep -rnE 'foo.*bar|baz' .", ["foo", "bar", "baz", "."]),
    ("grep -rn 'def foo\\s*(' .", ["foo", "."]),  # code inside a regex: its names
    ("grep -rn 'class .*Error' .", ["Error", "."]),
    ("grep -n 'self\\.assertEqual\\(' t.py", ["self.assertEqual", "t.py"]),
    ("grep -E '^(def|class) ' a.py", ["a.py"]),
    ("grep -rn 'status.*500' logs", ["status", "500", "logs"]),
])
def test_a_regex_keeps_its_phrases_whole(command, expected):
    assert command_words(command) == expected


def test_a_regex_of_error_messages_is_not_split_into_common_words():
    """grep -rn 'Connection refused\\|timed out' traced Connection, refused, timed and out apart: out was labelled
    with the first earlier event saying it (here the user's words), not the log line that printed the message."""
    got = decide("Bash", {"command": "grep -rn 'Connection refused\\|timed out' logs"},
                  "The worker falls over and the jobs time out.", "worker.log: ERROR Connection refused by db:5432")
    assert got.needed == {"command": ["connection refused"]} and got.labels == [1]


@pytest.mark.parametrize("tool, argument, setting", [
    ("Grep", "output_mode", True), ("Grep", "-n", True), ("Read", "limit", True), ("Glob", "limit", True),
    ("read_file", "limit", True), ("read_many_files", "limit", True), ("grep_search", "context", True),
    ("read_text_file", "limit", True), ("mcp__filesystem__read_file", "limit", True),  # file tools' output settings
    ("Read", "offset", False), ("Grep", "pattern", False),  # what is read or searched: values
    ("read_customer", "context", False), ("mark_as_read", "n", False), ("read_order", "limit", False),
    ("spreadsheet_read", "c", False), ("mcp__crm__read_contact", "context", False), ("read_thread", "a", False),
])
def test_only_a_file_tools_output_settings_are_settings(tool, argument, setting):
    from sam_model.data.toolarguments import is_tool_setting

    assert is_tool_setting(tool, argument) is setting


def test_a_business_tool_that_reads_keeps_its_values():
    """read_customer's context (the support ticket it reads the customer for) was judged a file tool's output setting,
    trivial, because the tool's name says read: the ticket the user gave labelled nothing."""
    got = decide("read_customer", {"customer_id": "cus_8812", "context": "ticket-58213"},
                  "Ticket ticket-58213: customer cus_8812 was charged twice.")
    assert got.needed == {"customer_id": ["cus_8812"], "context": ["ticket-58213"]} and got.labels == [0]


@pytest.mark.parametrize("command, expected", [
    ("docker exec -e DATABASE_URL=postgres://db:5432/app web pytest", ["postgres://db:5432/app", "web"]),
    ("docker exec --env=DEBUG_TOKEN=tok_991 web env", ["tok_991", "web"]),
    ("docker compose run -e API_KEY=sk_live_42 app pytest", ["sk_live_42", "app"]),
    ("docker exec -e HOME web ls", ["HOME", "web"]),  # a variable passed on by name: its name, as before
    ("DATABASE_URL=postgres://db:5432/app pytest", ["postgres://db:5432/app"]),  # as a shell's own assignment
])
def test_a_containers_environment_gives_its_value_as_a_shells_assignment_does(command, expected):
    assert command_words(command) == expected


def test_the_value_set_in_a_containers_environment_is_traced():
    """docker exec -e DATABASE_URL=postgres://... traced DATABASE_URL=postgres://... whole, which no event says: the
    address the user gave labelled nothing, while the same assignment before a command (KEY=value cmd) gave it."""
    got = decide("Bash", {"command": "docker exec -e DATABASE_URL=postgres://db:5432/app web_7 pytest"},
                  "The tests need the database at postgres://db:5432/app; they run in web_7.")
    assert got.needed == {"command": ["postgres://db:5432/app", "web_7"]} and got.labels == [0]


@pytest.mark.parametrize("tool, pattern, expected", [
    ("Grep", "def parse_header", ["parse_header"]),  # Claude Code's Grep: as grep -rn 'def parse_header' reads
    ("Grep", "parse_header\\(", ["parse_header"]),
    ("Grep", "Connection refused", ["connection refused"]),  # a phrase: whole, as before
    ("grep_search", "class TokenStream", ["TokenStream"]),
    ("lookup_order", "def parse_header", []),  # another tool's pattern: whole, as the spec reads it
    ("mcp__files__grep", "def parse_header", ["parse_header"]),  # an MCP server's grep tool
    ("mcp__search__fetch", "def parse_header", []),  # a server named search makes no search tool of fetch
])
def test_a_grep_tools_pattern_is_read_as_a_shell_greps(tool, pattern, expected):
    """Claude Code's Grep {"pattern": "def parse_header"} traced the pattern whole, which no event says, while the same
    search run through Bash (grep -rn 'def parse_header') traced parse_header to the issue that named it."""
    got = decide(tool, {"pattern": pattern}, "parse_header() drops the last header of a TokenStream; Connection refused in CI.")
    assert [v for vs in got.needed.values() for v in vs] == [v.lower() for v in expected]


_PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x = 1\n+x = 2\n*** End Patch"


def _forgotten(calls: list[tuple[str, dict | str]], said: str, cwd: str | None = None, forget: int = 0,
               reload: bool = False) -> tuple[dict, dict]:
    """The decision point's meta.needed of one message's ``calls`` after a user turn saying ``said`` (in ``cwd``),
    before and after the memory of call ``forget`` is deleted (``reload``: from a saved tracker)."""
    st = TranscriptState()
    user = {"role": "user", "content": said, **({"cwd": cwd} if cwd else {})}
    calls_message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": a if isinstance(a, str)
                                                          else json.dumps(a)}} for i, (name, a) in enumerate(calls)]}
    for m in (user, {"role": "assistant", "content": "Looking."}, calls_message):
        st.feed(m)
    before = st.events[1]["meta"]["needed"]
    if reload:
        st = TranscriptState.from_state_dict(json.loads(json.dumps(st.state_dict())))
    st.forget([e["step"] for e in st.events if e["kind"] == "action"][forget])
    return before, st.events[1]["meta"]["needed"]


@pytest.mark.parametrize("tool, arguments, said, cwd, needed", [
    ("apply_patch", _PATCH, "the bug is in src/app.py", None, {"input": ["src/app.py"]}),  # Codex's freeform patch
    ("apply_patch", {"input": _PATCH}, "the bug is in src/app.py", None, {"input": ["src/app.py"]}),
    ("Grep", {"pattern": "Connection refused\\|timed out"}, "it said Connection refused, or timed out", None,
     {"pattern": ["connection refused", "timed out"]}),
    ("Glob", {"pattern": "*.py", "path": "/home/me/inv/invoicer/"}, "look in invoicer", "/home/me/inv",
     {"path": ["invoicer"]}),  # the relative part of a path under the working directory
])
def test_forgetting_a_call_takes_out_the_needed_values_its_leaves_were_judged_by(tool, arguments, said, cwd, needed):
    """forget took a call's needed values out of the decision's meta by the values it wrote in the constraints and
    their shell words only: a patch's paths (the patch is free text, no constraint), a search pattern's phrases and a
    path's relative part stayed in the meta, and in every save, after the call's memory was deleted."""
    for reload in (False, True):
        assert _forgotten([(tool, arguments)], said, cwd, reload=reload) == (needed, {})


def test_forgetting_one_call_keeps_the_needed_values_of_the_other_calls_of_its_message():
    before, after = _forgotten([("apply_patch", _PATCH), ("Read", {"file_path": "docs/notes.md"})],
                               "the bug is in src/app.py, see docs/notes.md")
    assert before == {"input": ["src/app.py"], "file_path": ["docs/notes.md"]}
    assert after == {"file_path": ["docs/notes.md"]}


def test_a_saved_calls_needed_values_that_are_no_lists_of_strings_are_refused():
    st = TranscriptState()
    for m in ({"role": "user", "content": "the bug is in src/app.py"}, {"role": "assistant", "content": "Looking."},
              {"role": "assistant", "tool_calls": [{"id": "c0", "function": {"name": "apply_patch", "arguments": _PATCH}}]}):
        st.feed(m)
    saved = st.state_dict()
    saved["writes"][0]["needed"] = {"input": "src/app.py"}
    with pytest.raises(ValueError, match=r"'writes' item 0 must be .*\"needed\""):
        TranscriptState.from_state_dict(saved)
