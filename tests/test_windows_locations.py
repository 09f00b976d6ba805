"""A location a Windows tool's output names (a test run's C:\\repo\\src\\cart.py:212:, MSBuild's or tsc's
src\\Cart.cs(212,5): error, a traceback's File "C:\\...", line 212) is a file read as Windows reads it: it had been
glued onto the working directory as a relative POSIX path (C:\\repo/C:\\repo\\src\\cart.py), so the line it named
was of no file the agent read, and sed -n '212,240p' FILE after it was labelled by the user's 'issue #212'."""

from __future__ import annotations

import pytest
from shell_calls import claude_session

from sam_model.data.formats.numbered import call_lines
from sam_model.data.shownlines import same_file

WIN = "C:\\Users\\ann\\airline"  # a Claude Code session's working directory on Windows
POSIX = "/home/ann/airline"

# (the session's directory, a run's command, its output naming line 212 of a file, the file sed then pages)
RUNS = [
    (WIN, "dotnet build", "src\\Cart.cs(212,5): error CS0029: Cannot implicitly convert type 'string' to 'int' "
                          f"[{WIN}\\Cart.csproj]", "src/Cart.cs"),
    (WIN, "dotnet build", f"{WIN}\\src\\Cart.cs(212,5): error CS0029: Cannot implicitly convert type", "src/Cart.cs"),
    (WIN, "python -m pytest -q", f"{WIN}\\tests\\test_cart.py:212: AssertionError", "tests/test_cart.py"),
    (WIN, "python cart.py", f'Traceback (most recent call last):\n  File "{WIN}\\src\\cart.py", line 212, in total\n'
                            "    return sum(rows)\nTypeError: unsupported operand", "src/cart.py"),
    (POSIX, "npx tsc --noEmit", "src\\cart.ts(212,5): error TS2345: Argument of type 'string'", "src/cart.ts"),
]


@pytest.mark.parametrize("cwd, command, output, file", RUNS)
def test_a_windows_location_is_the_file_the_agent_then_reads(tmp_path, cwd, command, output, file):
    events = claude_session(tmp_path, "The cart total is wrong, see issue #212.",
                            ("Bash", {"command": command}, output),
                            ("Bash", {"command": "ls"}, "README.md"),
                            ("Bash", {"command": f"sed -n '212,240p' {file}"}, "    total(rows)"), cwd=cwd)
    run = next(e["step"] for e in events if e["kind"] == "result")
    decision = [e for e in events if "212" in e.get("meta", {}).get("needed", {}).get("command", [])]
    assert len(decision) == 1 and decision[0]["useful_memory_steps"] == [run]


@pytest.mark.parametrize("cwd, path, file", [
    (WIN, f"{WIN}\\src\\cart.py", f"{WIN}\\src\\cart.py"),
    (WIN, "src\\cart.py", f"{WIN}\\src\\cart.py"),
    (WIN, "src/cart.py", f"{WIN}\\src\\cart.py"),
    (WIN, "..\\lib\\x.py", "C:\\Users\\ann\\lib\\x.py"),
    (WIN, "D:\\other\\cart.py", "D:\\other\\cart.py"),
    (WIN, "\\\\build01\\share\\src\\cart.py", "\\\\build01\\share\\src\\cart.py"),
    (WIN, "/tmp/scratch/cart.py", "/tmp/scratch/cart.py"),  # a POSIX shell's (Git Bash) absolute path: itself
    (POSIX, "C:\\repo\\src\\cart.py", "C:\\repo\\src\\cart.py"),
    (POSIX, "src\\cart.py", f"{POSIX}/src/cart.py"),
    (POSIX, "src/cart.py", f"{POSIX}/src/cart.py"),  # POSIX as before
    (POSIX, "/etc/hosts", "/etc/hosts"),
    ("", "src\\cart.py", "src\\cart.py"),  # no directory told: as printed
])
def test_a_path_is_read_as_windows_or_posix_by_its_shape(cwd, path, file):
    from sam_model.data.shellpaths import file_under

    assert file_under(cwd, path) == file


def test_a_location_elsewhere_on_windows_is_no_line_of_the_file_here():
    """An absolute path on another drive is that file, not one under the working directory."""
    _, reader = call_lines("Bash", {"command": "python -m pytest"}, WIN)
    assert reader is not None
    shown = reader("D:\\vendor\\cart.py:212: AssertionError")
    assert shown == {"D:\\vendor\\cart.py": [212]}
    assert not same_file("D:\\vendor\\cart.py", f"{WIN}\\src\\cart.py")
    assert same_file(f"{WIN}\\src\\cart.py", "c:/users/ann/airline/src/Cart.py") and same_file(
        f"{WIN}\\src\\cart.py", "src/cart.py")
    assert not same_file("/home/ann/a/App.py", "/home/ann/a/app.py")  # POSIX names keep their case


def test_a_posix_path_a_windows_session_prints_is_the_file_a_call_names_so(tmp_path):
    """Git Bash in a Windows session runs pytest on /tmp/scratch/test_cart.py; the Read of its line 212 names the
    file so: the location had been joined onto the directory's drive (C:\\tmp\\scratch\\test_cart.py), no line of
    the file read, so the offset was labelled by the user's 'issue #212' alone."""
    events = claude_session(tmp_path, "The cart total is wrong, see issue #212.",
                            ("Bash", {"command": "python -m pytest /tmp/scratch/test_cart.py"},
                             "/tmp/scratch/test_cart.py:212: AssertionError"),
                            ("Bash", {"command": "ls"}, "README.md"),
                            ("Read", {"file_path": "/tmp/scratch/test_cart.py", "offset": 212, "limit": 20},
                             "   212\t    assert total(rows) == 3"), cwd=WIN)
    run = next(e["step"] for e in events if e["kind"] == "result")
    decision = [e for e in events if e.get("meta", {}).get("needed", {}).get("offset") == ["212"]]
    assert len(decision) == 1 and run in decision[0]["useful_memory_steps"]
    assert events[0]["step"] not in decision[0]["useful_memory_steps"]
