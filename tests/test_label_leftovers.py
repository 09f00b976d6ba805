"""Leftovers in the tool-transcript labelling: quoted shell syntax read as syntax, backslash-newlines inside double
quotes, other tools' locations, Gemini CLI's search hits, OpenHands' open_file and amounts written with thousands
separators. Each test writes the smallest call or transcript that showed the wrong label or the miss."""

from __future__ import annotations

import pytest
from shell_calls import decide, needed

from sam_model.data.formats.numbered import _grep_named, call_lines
from sam_model.data.sayings import says
from sam_model.data.searchhits import grep_hit, hit_lines
from sam_model.data.sedwords import sed_words
from sam_model.data.shellwords import command_words


@pytest.mark.parametrize("command, expected", [
    ("grep -n '|' src/table.py", ["src/table.py"]),  # the pattern is one character: trivial, the file stays
    ('grep -c ";" build/run.sh', ["build/run.sh"]),
    ("cut -d '|' -f 2 data/users.csv", ["2", "data/users.csv"]),
    ("grep -n '>' src/render.py", ["src/render.py"]),  # no redirection either
])
def test_a_quoted_operator_is_a_word(command, expected):
    """A quoted ';', '|' or '>' is a word, as bash reads it: shlex's token had lost its quotes, so it split the
    command (or redirected), and the file after it was read as a new command's program word."""
    assert [w for w in command_words(command) or [] if len(w) > 1 or w.isalnum()] == expected


def test_a_quoted_reserved_word_is_a_grep_pattern():
    """grep -n "done" FILE searches for done; 'done' was taken for the shell's reserved word, so FILE became the
    pattern and the user's done was traced by nothing."""
    got = needed('grep -n "done" jobs/queue.py', "Jobs marked done in jobs/queue.py are requeued")
    assert got == ({"command": ["done", "jobs/queue.py"]}, [0])


def test_the_file_after_a_quoted_pipe_is_traced_to_the_user():
    assert needed("grep -n '|' src/parser.py", "The table rows in src/parser.py split wrong") \
        == ({"command": ["src/parser.py"]}, [0])


def test_a_grep_for_a_quoted_pipe_shows_the_lines_it_printed():
    """numbered.py read grep -n '|' a.py as a pipe into a program named a.py, so its hits showed no line."""
    _, reader = call_lines("Bash", {"command": "grep -n '|' src/table.py"}, "/r")
    assert reader is not None and reader("212:    row = line.split('|')") == {"/r/src/table.py": [212]}


def test_an_escaped_semicolon_still_ends_find_exec_and_a_bare_one_splits():
    assert command_words("find src -name '*.py' -exec grep -l parse_block {} \\;") == ["src", "*.py", "parse_block",
                                                                                      "{}", ";"]
    assert command_words("cd src; cat reader.py") == ["src", "reader.py"]


def test_a_backslash_newline_inside_double_quotes_is_removed():
    """bash removes a backslash-newline inside double quotes (and outside them), both characters: the path an agent
    wrapped, "config/environments/\\<newline>production.yaml", is config/environments/production.yaml, which had been
    read as 'config/environments/ production.yaml', said by no event."""
    got = needed('python scripts/migrate.py --config "config/environments/\\\nproduction.yaml"',
                 "Run the migration with config/environments/production.yaml")
    assert got == ({"command": ["config/environments/production.yaml"]}, [0])
    assert command_words('grep -rn "pool_\\\nsize" src') == ["pool_size", "src"]
    assert command_words("cat src/pool_\\\nsize.py") == ["src/pool_size.py"]  # unquoted: the same
    assert command_words("cat src/a.py \\\n  src/b.py") == ["src/a.py", "src/b.py"]  # the spaces around it stay
    assert command_words("bash <<EOF\ncat src/pool_\\\nsize.py\nEOF") == ["src/pool_size.py"]  # a body's


def test_sed_text_right_after_an_addressed_a_is_the_text_added():
    """bash leaves "3a\\<newline>import sys" as 3aimport sys, which GNU sed reads as appending import sys after line
    3 (its text right after the letter, where an address comes before): it was read as no sed script at all."""
    assert sed_words("3aimport sys") == ["sys", "3"]
    assert sed_words("/^import os$/iimport sys") == ["os", "sys"]
    assert command_words('sed -i "3a\\\nimport sys" src/app.py') == ["sys", "3", "src/app.py"]
    assert sed_words("app.py") is None  # no address: no a command, a file name


@pytest.mark.parametrize("command, expected", [
    ("grep -e'[database]' -F config.ini", ["database", "config.ini"]),  # fixed strings given with -e, attached
    ("grep -F -rne'[database]' conf/", ["database", "conf"]),
    ("grep -eparse_rows src/", ["parse_rows", "src"]),
    ("rg -eparse_rows src/", ["parse_rows", "src"]),
    ("grep -fpatterns.txt src/", ["patterns.txt", "src"]),
])
def test_a_pattern_attached_to_its_e_is_the_pattern(command, expected):
    """grep -e'[database]' -F (the -e's value in its word, as grep reads it) was taken for flags alone: the pattern
    was traced by nothing and the file read as the pattern. The -e forms with the value apart were read already,
    as fixed strings where -F is given anywhere (35667cc)."""
    assert command_words(command) == expected


def test_the_section_a_user_named_is_traced_through_an_attached_fixed_pattern():
    got = needed("grep -n -e'[database]' -F config.ini", "Raise the timeout in the database section")
    assert got == ({"command": ["database"]}, [0])


ROOT = "/home/ann/airline"  # the session's working directory (tests/test_format_claude_code.Session)
# (a run's command, its output naming line 212 of FILE, FILE as the output prints it)
OTHER_TOOLS = [
    ("cargo build", "error[E0308]: mismatched types\n  --> src/cart.rs:212:5\n    |\n212 |     total(rows)\n    |"
                    "     ^^^^^ expected `u32`, found `i64`", "src/cart.rs"),
    ("node src/index.js", "TypeError: Cannot read properties of undefined (reading 'id')\n"
                          f"    at total ({ROOT}/src/cart.js:212:15)\n    at {ROOT}/src/index.js:30:1\n"
                          "    at node:internal/main/run_main_module:28:49", f"{ROOT}/src/cart.js"),
    ("npx tsc --noEmit", "src/cart.ts(212,5): error TS2345: Argument of type 'string' is not assignable to parameter"
                         " of type 'number'.", "src/cart.ts"),
]


@pytest.mark.parametrize("command, output, file", OTHER_TOOLS)
def test_another_tools_location_names_its_line_of_its_file(command, output, file):
    """Rust's --> FILE:LINE:COL, a Node stack frame's (FILE:LINE:COL) and tsc's FILE(LINE,COL): error name a line of
    a file as gcc's FILE:LINE: does: they were read as no location, so no line was shown and no page opened there."""
    _, reader = call_lines("Bash", {"command": f"cd {ROOT} && {command}"}, "")
    shown = reader(output) if reader is not None else {}
    assert shown.get(file if file.startswith("/") else f"{ROOT}/{file}") == [212]
    assert 212 in hit_lines(output) and grep_hit(output, 212) and grep_hit(f"Bash: {output}", 212)
    assert not grep_hit(output, 21)


@pytest.mark.parametrize("command, output, file", OTHER_TOOLS)
def test_a_line_another_tools_location_named_is_traced_to_it(tmp_path, command, output, file):
    """sed -n '212,240p' FILE after a build or run that named FILE's line 212 is labelled by that output, not by the
    user's 'issue #212' (the first event that says 212)."""
    from test_locations import assert_traced_to_the_run

    assert_traced_to_the_run(tmp_path, command, output, file)


@pytest.mark.parametrize("line", ["    at async Promise.all (index 0)", "    at node:internal/main:12:5",
                                  "    at file:///app/x.mjs:212:5", "see src/a.ts(212,5) for details"])
def test_lines_that_only_look_like_locations_name_none(line):
    _, reader = call_lines("Bash", {"command": "node x.js"}, "/r")
    assert reader is not None and reader(line) == {} and not grep_hit(line, 212)


def test_a_node_frame_is_no_grep_hit_but_a_location():
    """A grep -n reader reads no FILE in a stack frame (its words before the path), the page-bound rule a hit."""
    line = "    at Object.<anonymous> (/home/x/a.js:200:10)"
    assert _grep_named(line, "") == {} and hit_lines(line) == {200} and grep_hit(line, 200)


GEMINI_HITS = ('Found 2 matches for pattern "round(" in path "invoicer":\n---\nFile: tax.py\nL212: return round(total *'
               ' rate, 2)\nL230: return round(x, 2)\n---\nFile: lines.py\nL12: round(y)\n---')


def test_gemini_search_file_content_shows_its_hit_lines():
    """Gemini CLI's search_file_content prints each file's hits as 'L212: code' under 'File: PATH' (PATH relative
    to the directory searched): they were read as no line of any file."""
    from test_cwd_paths import CWD

    _, reader = call_lines("search_file_content", {"pattern": "round(", "dir_path": "invoicer"}, CWD)
    assert reader is not None and reader(GEMINI_HITS) == {f"{CWD}/invoicer/tax.py": [212, 230],
                                                          f"{CWD}/invoicer/lines.py": [12]}
    _, reader = call_lines("search_file_content", {"pattern": "round(", "path": f"{CWD}/invoicer/tax.py"}, CWD)
    one = 'Found 1 match for pattern "round(" in file "invoicer/tax.py":\n---\nFile: tax.py\nL212: return 1\n---'
    assert reader is not None and reader(one) == {f"{CWD}/invoicer/tax.py": [212]}  # a file searched: itself
    assert grep_hit(f"search_file_content: {GEMINI_HITS}", 212) and 230 in hit_lines(GEMINI_HITS)


def test_a_read_at_a_gemini_search_hit_is_traced_to_the_search(tmp_path):
    """read_file(start_line=212) of the file whose line 212 search_file_content printed: labelled by the search, not
    by the user's 'line 212' (the first event saying 212)."""

    assert_read_traced_to_the_search(tmp_path, "search_file_content")


def assert_read_traced_to_the_search(tmp_path, tool: str) -> None:
    """The user's 'line 212', Gemini CLI's search ``tool`` printing L212: of tax.py, a listing, then
    read_file(start_line=212): the start line is labelled by the search, not by the user."""
    from test_cwd_paths import CWD, TAX, gemini_session
    from test_format_gemini_cli import read, write
    from test_swe_agent import step_of

    records = gemini_session(("user", "Totals are off by a cent, the rounding at line 212 looks wrong"),
                             ("call", "l1", "list_directory", {"dir_path": CWD}, "[DIR] invoicer"),
                             ("call", "s1", tool, {"pattern": "round(", "dir_path": "invoicer"}, GEMINI_HITS),
                             ("call", "l2", "run_shell_command", {"command": "ls tests"}, "test_tax.py"),
                             ("call", "r1", "read_file", {"absolute_path": TAX, "start_line": 212, "end_line": 230},
                              "return round(total * rate, 2)"))
    events, _ = read(write(tmp_path / "session-1.jsonl", records))
    issue, search = step_of(events, "user", "Totals"), step_of(events, "result", f"{tool}: Found")
    got = next((e["useful_memory_steps"] for e in events if "start_line" in e.get("meta", {}).get("needed", {})), [])
    assert search in got and issue not in got


def test_a_read_right_after_the_gemini_search_is_its_observation(tmp_path):
    """The search that printed L212: is the decision point's own event: the line is in the observation, no memory
    (it had been labelled by the user's 'line 212', the search's text saying no 212 as a whole token)."""
    from test_cwd_paths import CWD, TAX, gemini_session
    from test_format_gemini_cli import read, write

    records = gemini_session(("user", "Totals are off by a cent, the rounding at line 212 looks wrong"),
                             ("call", "l1", "list_directory", {"dir_path": CWD}, "[DIR] invoicer"),
                             ("call", "s1", "search_file_content", {"pattern": "round(", "dir_path": "invoicer"},
                              GEMINI_HITS),
                             ("call", "r1", "read_file", {"absolute_path": TAX, "start_line": 212, "end_line": 230},
                              "return round(total * rate, 2)"))
    events, _ = read(write(tmp_path / "session-1.jsonl", records))
    read_call = next(e for e in events if e["kind"] == "action" and "read_file" in e["text"])
    decision = events[read_call["step"] - 1]
    assert "start_line" not in decision.get("meta", {}).get("needed", {}) and decision["kind"] == "result"


def test_a_number_inside_an_amount_with_thousands_separators_is_not_said():
    """An amount written 3,500 is one number: its 500 is no whole token of it, as 350 is none of 3500. The
    whole-token rule read 500 in '3,500' (a comma is no word character), so an invented 500 was traced to it."""
    d = decide("add_payment", {"reservation_id": "ZFA04Y", "amount": 500}, "My budget for the trip is $3,500.")
    assert d.labels == [] and d.needed == {}
    d = decide("add_payment", {"amount": 500}, "My budget for the trip is $3,500.", "Put 500 on the gift card.")
    assert d.labels == [1]
    assert not says("budget 3,500 total", "500") and not says("1,500,000", "500") and not says("3,500.00", "500.00")
    assert says("3,500 or 500", "500") and says("pay 500, then 300", "500") and says("500,000", "500,000")
    assert says("ids 12, 500", "500")  # a list with spaces: its items


READER = "/workspace/src/tinyparse/reader.py"
FOUND = (f'[Found 1 matches for "def parse_header" in {READER}]\nLine 212: def parse_header(block):\n'
         f'[End of matches for "def parse_header" in {READER}]')
WINDOW = (f"[File: {READER} (300 lines total)]\n(161 more lines above)\n"
          + "".join(f"{n}|    pass\n" for n in range(162, 212)) + "212|def parse_header(block):\n(88 more lines below)")


def codeact_skills_run() -> list[dict]:
    """An OpenHands CodeAct run (function calling) that searches a file with search_file, thinks, then opens it at
    the hit with open_file, each an IPython cell."""
    return codeact_run([(f"search_file('def parse_header', '{READER}')", FOUND), (None, None),
                        (f"open_file('{READER}', 212)", WINDOW)])


def codeact_run(cells: list[tuple[str | None, str | None]]) -> list[dict]:
    """The raw events of an OpenHands CodeAct run (function calling) whose issue says '#212', then each (cell,
    output) an execute_ipython_cell call and its result; a cell None is a think step."""
    from test_openhands import ISSUE, SYSTEM, Run, response

    run = Run()
    run.add(source="agent", message=SYSTEM, action="system",
            args={"content": SYSTEM, "tools": [], "openhands_version": "0.39.0", "agent_class": "CodeActAgent"})
    issue = ISSUE + " Reported in issue #212."
    run.add(source="user", message=issue, action="message",
            args={"content": issue, "file_urls": None, "image_urls": [], "wait_for_response": False})
    for n, (code, out) in enumerate(cells, 1):
        if code is None:
            note = "The header parser is where it crashes."
            run.calls(response(n, None, (f"toolu_0{n}", "think", {"thought": note})),
                      ("think", {"thought": note}, "think", "Your thought has been logged.", {}))
            continue
        run.calls(response(n, None, (f"toolu_0{n}", "execute_ipython_cell", {"code": code})),
                  ("run_ipython", {"code": code, "include_extra": True}, "run_ipython", out, {"code": code}))
    return run.events


def test_an_open_file_cell_is_a_view_at_the_line_a_search_printed(tmp_path):
    """open_file(PATH, 212) in an IPython cell was one value, said by no event: neither the path search_file printed
    nor the line it printed was traced. The cell is read by its arguments, and 212 is a line of PATH, labelled by the
    search that showed it (not by the issue's #212)."""
    from test_swe_agent import convert, step_of, write

    events, _ = convert(write(tmp_path, "session-1.json", codeact_skills_run()))
    search = step_of(events, "result", "execute_ipython_cell: [Found")
    decision = next(e for e in events if "code" in e.get("meta", {}).get("needed", {})
                    and "212" in e["meta"]["needed"]["code"])
    issue, searched = step_of(events, "user", "tinyparse"), step_of(events, "action", "CALL execute_ipython_cell")
    assert decision["meta"]["needed"]["code"] == [READER, "212"]
    assert decision["useful_memory_steps"] == [searched, search] and issue not in decision["useful_memory_steps"]


@pytest.mark.parametrize("code, words", [
    ("open_file('/workspace/a.py', 212, context_lines=50)", ["/workspace/a.py", "212"]),  # a window's size: none
    ("goto_line(212)", ["212"]),
    ("search_dir('parse_header', dir_path='./src')", ["parse_header", "src"]),
    ("open_file('/workspace/a.py')\nscroll_down()", ["/workspace/a.py"]),
    ("print(open('/workspace/a.py').read())", None),  # other code: read whole, as before
    ("open_file(path)", None),  # no literal
])
def test_an_ipython_cell_of_agent_skills_is_its_arguments(code, words):
    from sam_model.data.agentskills import skill_words

    assert skill_words("execute_ipython_cell", "code", code) == words
    assert skill_words("execute_bash", "code", code) is None
