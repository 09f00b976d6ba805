"""A location an output names (a test run's, a compiler's, a linter's FILE:LINE:, a Python traceback's File "FILE",
line LINE): it says line LINE of FILE without printing its text as grep -n does, and what is certain is that the number
was said there as a line of that file. The line-number rule traces such a number to the output that said it, and the
page-bound rule opens a window there only in that file; a grep's own output is read as before."""

from __future__ import annotations

import pytest
from shell_calls import claude_session, grep_then_read

from sam_model.data.formats.numbered import call_lines
from sam_model.data.searchhits import grep_hit, hit_lines

ROOT = "/home/ann/airline"  # the session's working directory (tests/test_format_claude_code.Session)
TESTS = "tests/test_cart.py"

# (a run's command, its output naming line 212 of FILE, FILE as the output prints it)
RUNS = [
    ("pytest -q tests", f"F\n{'_' * 20} test_total {'_' * 20}\n\n    def test_total():\n>       assert total() == 3\n"
                        f"E       assert 2 == 3\n\n{TESTS}:212: AssertionError\n1 failed in 0.12s", TESTS),
    ("make", "src/cart.c: In function 'total':\nsrc/cart.c:212:5: error: 'n' undeclared\n"
                                "  212 |     n += 1;\n      |     ^", "src/cart.c"),
    ("mypy src", "src/cart.py:212: error: Incompatible return value type  [return-value]\nFound 1 error in 1 file",
     "src/cart.py"),
    ("python -m cart.cli", f'Traceback (most recent call last):\n  File "{ROOT}/cart/cli.py", line 212, in main\n'
                           "    total(rows)\nZeroDivisionError: division by zero", f"{ROOT}/cart/cli.py"),
]


@pytest.mark.parametrize("command, output, file", RUNS)
def test_a_location_names_its_line_of_its_file(command, output, file):
    """The output of a command no reader of numbered lines reads is marked with the lines its locations name, its
    files under the directory the command ran in; a hit of that line for the page-bound rule, as a grep's."""
    _, reader = call_lines("Bash", {"command": f"cd {ROOT} && {command}"}, "")
    assert reader is not None and reader(output) == {file if file.startswith("/") else f"{ROOT}/{file}": [212]}
    assert hit_lines(output) == {212} and grep_hit(output, 212) and not grep_hit(output, 21)


@pytest.mark.parametrize("text, hit", [
    ('  File "a.py", line 200, in f', True),
    ('Bash:   File "/srv/app/a.py", line 200', True),  # as the importer writes a result, no colon in it
    ('  File "a.py", line 2000, in f', False),
    ('  File "a.py", line 0200, in f', False),
    ("the loop at line 200 of a.py", False),  # prose
    ("a.py line 200: x", False),
])
def test_a_traceback_location_is_a_hit_of_its_line(text, hit):
    assert grep_hit(text, 200) is hit and (200 in hit_lines(text)) is hit


@pytest.mark.parametrize("command, output, file", RUNS)
def test_a_line_a_location_named_is_traced_to_it(tmp_path, command, output, file):
    """sed -n '212,240p' FILE after a run that named FILE's line 212: the rule for line numbers labels 212 with the
    run's output, which said that line of that file; the user's 'issue #212' (the first event saying 212) had been its
    label."""
    assert_traced_to_the_run(tmp_path, command, output, file)


def assert_traced_to_the_run(tmp_path, command: str, output: str, file: str) -> None:
    """The user's 'issue #212', then ``command`` printing ``output`` (a location of ``file``'s line 212), then
    sed -n '212,240p' FILE: its 212 is labelled by the run's output alone."""
    events = claude_session(tmp_path, "The cart total is wrong, see issue #212.",
                            ("Bash", {"command": command}, output),
                            ("Bash", {"command": "ls"}, "README.md"),
                            ("Bash", {"command": f"sed -n '212,240p' {file}"}, "    total(rows)"))
    run = next(e["step"] for e in events if e["kind"] == "result")
    decision = [e for e in events if "212" in e.get("meta", {}).get("needed", {}).get("command", [])]
    assert len(decision) == 1 and decision[0]["useful_memory_steps"] == [run]


@pytest.mark.parametrize("command, output, file", RUNS)
def test_a_page_opens_a_window_only_in_the_file_its_location_named(tmp_path, command, output, file):
    """Read(offset=200, limit=50) is a page by its numbers; a run that named line 200 of FILE opens a window there in
    FILE, traced to the run, and none in another file (the location was a hit of any file's page)."""
    at = output.replace("212", "200")
    ran = ("Bash", {"command": command})
    offsets, step = grep_then_read(tmp_path / "same", "The cart total is wrong.", "", at, file, 200, 50, ran)
    assert offsets == [[step]]
    offsets, _ = grep_then_read(tmp_path / "other", "The cart total is wrong.", "", at, "src/other.py", 200, 50, ran)
    assert offsets == []


def test_a_search_output_is_read_by_the_search_rules_as_before(tmp_path):
    """A grep -rn's lines are its hits (grep's reader, not a location's); a grep without -n prints no line number
    however its lines open, so it shows none, and a line that opens so in another search's output is no location."""
    hits = "src/cart.py:212:    return total / n\nsrc/cart.py:230:def total(rows):"
    _, reader = call_lines("Bash", {"command": "grep -rn total src"}, ROOT)
    assert reader is not None and reader(hits) == {f"{ROOT}/src/cart.py": [212, 230]}
    for command in ("grep -r total src", "rg --no-line-number total src", "pytest -q | grep -c total"):
        _, reader = call_lines("Bash", {"command": command}, ROOT)
        assert reader is None or reader(hits) == {}
    offsets, grep = grep_then_read(tmp_path, "the total is wrong", "src", "src/cart.py:200:def total(rows):",
                                   "src/cart.py", 200, 50)
    assert offsets == [[grep]]


# (a run's command, its output naming line 200 of FILE after words of prose, FILE): the prose is no folder of FILE
PROSE = [
    ("cargo run", "thread 'main' panicked at src/main.rs:200:5:\nexplicit panic", "src/main.rs"),  # Rust since 1.73
    ("make", "In file included from src/cart.c:200:\nsrc/cart.h:12:5: error: unknown type name 'row'", "src/cart.c"),
    ("python run.py", "Error in src/cart.py:200: bad total", "src/cart.py"),
]


@pytest.mark.parametrize("command, output, file", PROSE)
def test_a_location_after_words_of_prose_names_its_file(tmp_path, command, output, file):
    """A line opening with words before the path (Rust's panic, gcc's include chain) was read as a file named with
    the words ('thread 'main' panicked at src/main.rs'): a page of the file the location named opened no window
    there, where before locations were read it had (a hit of any file's page)."""
    _, reader = call_lines("Bash", {"command": f"cd {ROOT} && {command}"}, "")
    assert reader is not None and reader(output)[f"{ROOT}/{file}"] == [200]
    ran = ("Bash", {"command": command})
    offsets, step = grep_then_read(tmp_path, "The cart total is wrong.", "", output, f"{ROOT}/{file}", 200, 50, ran)
    assert offsets == [[step]]


def test_a_path_with_a_space_in_its_folders_is_still_read_whole():
    _, reader = call_lines("Bash", {"command": "pytest"}, "/Users/ann")
    assert reader is not None and reader("/Users/ann/My Project/tests/test_a.py:200: AssertionError") == {
        "/Users/ann/My Project/tests/test_a.py": [200]}


ENTERED = "make: Entering directory '/home/ann/airline/build'\n{}\nmake: Leaving directory '/home/ann/airline/build'"


@pytest.mark.parametrize("command, output, marked", [
    # make -C DIR: a compiler's names are relative to the directory make entered, not to the one it ran in
    ("make -C build", ENTERED.format("../src/cart.c:200:5: error: 'n' undeclared"), {f"{ROOT}/src/cart.c": [200]}),
    ("make -C build", ENTERED.format("cart.c:200:5: error: 'n' undeclared"), {f"{ROOT}/build/cart.c": [200]}),
    # ninja -C build (meson's) says so in make's words, its DIR relative to where it ran
    ("ninja -C build", "ninja: Entering directory `build'\n[1/2] Compiling C object cart.p/src_cart.c.o\n"
                       "../src/cart.c:200:5: error: 'n' undeclared", {f"{ROOT}/src/cart.c": [200]}),
    # a recursive make entering two directories: which one a name is under is unsure, so none is marked
    ("make", "make[1]: Entering directory '/home/ann/airline/lib'\nutil.c:200:5: error: x\nmake[1]: Leaving directory "
             "'/home/ann/airline/lib'\nmake[1]: Entering directory '/home/ann/airline/src'\nmake[1]: Leaving directory "
             "'/home/ann/airline/src'", {}),
])
def test_a_location_make_printed_is_under_the_directory_it_entered(command, output, marked):
    _, reader = call_lines("Bash", {"command": command}, ROOT)
    assert reader is not None and reader(output) == marked


def test_a_page_at_a_location_make_printed_in_a_directory_it_entered_is_traced_to_it(tmp_path):
    """A page of src/cart.c at the line make -C build named as ../src/cart.c: the window is traced to the run (it was
    read as ROOT/../src/cart.c, another file, and the page opened no window)."""
    output = ENTERED.format("../src/cart.c:200:5: error: 'n' undeclared")
    ran = ("Bash", {"command": "make -C build"})
    offsets, step = grep_then_read(tmp_path, "The cart total is wrong.", "", output, f"{ROOT}/src/cart.c", 200, 50, ran)
    assert offsets == [[step]]


@pytest.mark.parametrize("command", ["docker compose exec web make", "docker exec -w /app web pytest",
                                     "ssh build-host 'cd /app && make'", "kubectl exec deploy/web -- pytest"])
def test_a_location_printed_in_a_container_or_on_another_host_is_no_file_here(tmp_path, command):
    """A command run in a container or on another host prints its own machine's paths (/app/src/cart.c for the
    session's ROOT/src/cart.c): which file here a location names is unsure, so its output is read as before
    locations were (a hit of any file's page: the page at the line it named is a window traced to the run); read as
    /app/src/cart.c, the page of ROOT/src/cart.c had opened none."""
    _, reader = call_lines("Bash", {"command": command}, ROOT)
    assert reader is None
    output = "/app/src/cart.c:200:5: error: 'n' undeclared"
    ran = ("Bash", {"command": command})
    offsets, step = grep_then_read(tmp_path, "The cart total is wrong.", "", output, f"{ROOT}/src/cart.c", 200, 50, ran)
    assert offsets == [[step]]
