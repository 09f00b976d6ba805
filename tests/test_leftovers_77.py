"""Leftovers after stop 76: a Gemini CLI shell call's own directory (dir_path, older directory) for the lines a grep
-n printed there, a fixed-strings search's pattern read as literal text, and the refusals of a bad offset, limit or
step that named 2**62 in digits as the range to pick from."""

from __future__ import annotations

import pytest
from shell_calls import needed
from test_cwd_paths import CWD, TAX, gemini_session
from test_format_gemini_cli import read, write
from test_swe_agent import step_of

from sam_model.data.formats.numbered import call_lines
from sam_model.data.shellwords import command_words
from sam_model.memory import HashingEncoder, ScopedMemory

CODE = "    return round(total * rate, 2)"


@pytest.mark.parametrize("directory", ["dir_path", "directory", "workdir"])
def test_a_shell_calls_own_directory_is_where_its_grep_printed_lines(directory):
    """Gemini CLI's run_shell_command runs in its dir_path (older releases: directory), relative to the project root;
    only Codex's workdir was read, so grep -n's 'reader.py' lines were marked as /r/reader.py's."""
    _, reader = call_lines("run_shell_command", {"command": "grep -n 'def parse' reader.py",
                                                 directory: "src/tinyparse"}, "/r")
    assert reader is not None and reader("212:def parse(block):") == {"/r/src/tinyparse/reader.py": [212]}
    _, reader = call_lines("run_shell_command", {"command": "grep -n 'def parse' reader.py",
                                                 directory: "/elsewhere/lib"}, "/r")  # absolute: itself
    assert reader is not None and reader("212:def parse(block):") == {"/elsewhere/lib/reader.py": [212]}


def test_a_read_at_a_line_a_grep_in_dir_path_printed_is_traced_to_that_grep(tmp_path):
    """read_file(start_line=212) of /home/me/invoicer/invoicer/tax.py after run_shell_command(grep -n, dir_path=
    invoicer) printed line 212 of its tax.py was labelled by the issue's "line 212" alone: the grep's line was marked
    as /home/me/invoicer/tax.py's, another file, so its 212 was no hit of the file the read opened."""
    records = gemini_session(("user", "Totals are off by a cent, the rounding at line 212 looks wrong"),
                             ("call", "l1", "list_directory", {"dir_path": CWD}, "[DIR] invoicer"),
                             ("call", "g1", "run_shell_command", {"command": "grep -n 'round(' tax.py",
                                                                  "dir_path": "invoicer"}, f"212:{CODE}"),
                             ("call", "l2", "run_shell_command", {"command": "ls tests"}, "test_tax.py"),
                             ("call", "r1", "read_file", {"absolute_path": TAX, "start_line": 212, "end_line": 230},
                              CODE))
    events, _ = read(write(tmp_path / "session-1.jsonl", records))
    issue, grep = step_of(events, "user", "Totals"), step_of(events, "result", "run_shell_command: 212:")
    got = next((e["useful_memory_steps"] for e in events if "start_line" in e.get("meta", {}).get("needed", {})), [])
    assert grep in got and issue not in got


@pytest.mark.parametrize("command, expected", [
    ("grep -F '[database]' config.ini", ["database", "config.ini"]),
    ("fgrep -n '[database]' config.ini", ["database", "config.ini"]),
    ("rg -F '[database]' config.ini", ["database", "config.ini"]),
    ("rg --fixed-strings '[database]' config.ini", ["database", "config.ini"]),
    ("grep -n '[database]' -F config.ini", ["database", "config.ini"]),  # a flag after the pattern counts too
    ("grep -rnF -e '[database]' conf/", ["database", "conf"]),
    ("ag -Q '[database]' conf/", ["database", "conf"]),  # ag's and ack's --literal
    ("git grep -F 'settings[db]'", ["settings[db]"]),  # a phrase of names: whole, as a pattern with no regex's
    ("grep -F 'Connection refused|timed out' app.log", ["Connection refused|timed out", "app.log"]),  # no operator
])
def test_a_fixed_strings_pattern_is_literal_text(command, expected):
    """grep -F, fgrep, rg -F / --fixed-strings search for the pattern's characters as written: '[database]' was read
    as a regex's class of characters, so the pattern traced nothing."""
    assert command_words(command) == expected


@pytest.mark.parametrize("command", ["grep -n '[database]' config.ini", "grep -FE '[database]' config.ini",
                                     "rg -e '[database]' config.ini"])
def test_a_regex_pattern_is_read_as_before(command):
    """Without fixed strings (or with -E after -F, the last one counting) the brackets are a class of characters."""
    assert command_words(command) == ["config.ini"]


def test_the_section_a_user_named_is_traced_to_that_user_by_a_fixed_strings_grep():
    got = needed("grep -F -A3 '[database]' config.ini", "Raise the timeout in the database section of config.ini")
    assert got == ({"command": ["database", "config.ini"]}, [0])


def test_fixed_strings_code_is_its_names():
    assert command_words("grep -rnF 'def parse(' src/") == ["parse", "src"]


def _store():
    pytest.importorskip("langgraph", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langgraph import SAMStore

    return SAMStore(HashingEncoder(64))


@pytest.mark.parametrize("call, says", [
    (lambda: _store().search(("memories",), offset=-2),
     "offset must be a non-negative integer (how many results to skip), got -2"),
    (lambda: _store().list_namespaces(offset=2**62 + 1),
     "offset must be a non-negative integer (how many results to skip) no larger than 2**62, past any number of "
     "results, got 4611686018427387905"),
    (lambda: ScopedMemory(HashingEncoder(64)).get_all(user_id="mia", limit=-1),
     "limit must be a non-negative integer (how many memories to list; None lists them all), got -1"),
    (lambda: ScopedMemory(HashingEncoder(64)).get_all(user_id="mia", limit=2**63),
     "limit must be a non-negative integer (how many memories to list; None lists them all) no larger than "
     "2**63 - 1, past any number of memories, got 9223372036854775808"),
])
def test_a_bad_offset_or_limit_says_what_it_is_not_a_bound_to_pick_from(call, says):
    """They said "must be an integer from 0 to 4611686018427387904" (or 9223372036854775807): a bound no caller
    picks from, read as the range to pick from. They say what the field is and that it is >= 0, as a step's refusal
    does (limits.check_count, which check_step uses), naming the bound only for a value past it."""
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == says
    assert "4611686018427387904" not in says and "9223372036854775807" not in says
