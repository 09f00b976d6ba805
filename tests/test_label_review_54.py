"""Review 54 of the day's labelling rules (shellwords, toolstate): values traced to an event that did not give them,
and values lost, with command lines and tool calls coding agents write."""

from __future__ import annotations

import pytest

from sam_model.data.shellwords import command_words
from sam_model.data.toolstate import ToolCall, TranscriptState


def _decide(tool: str, arguments: dict, *earlier: str):
    """The decision of one call to ``tool`` after a user turn for each of ``earlier`` and the agent's words."""
    st = TranscriptState()
    for text in earlier:
        st.add({"role": "user", "content": text})
    st.add({"role": "assistant", "content": "Looking."})
    return st.decide([ToolCall(tool, arguments, "x")])


@pytest.mark.parametrize("command, expected", [
    ("sed -n '1,200p' src/app.py", ["1", "src/app.py"]),  # the first 200 lines: head -n 200
    ("sed -n '1,240p;240,480p' src/app.py", ["1", "240", "480", "src/app.py"]),  # a later range keeps its end
    ("awk 'NR<=200' src/app.py", ["src/app.py"]),
    ("awk 'NR<200' src/app.py", ["src/app.py"]),
    ("awk 'NR>=1 && NR<=200' src/app.py", ["1", "src/app.py"]),
    ("awk 'NR==1,NR==200' src/app.py", ["1", "src/app.py"]),
    ("sed -n '120,160p' src/app.py", ["120", "160", "src/app.py"]),  # a range a grep -n hit opened: as before
    ("awk 'NR>=120 && NR<=160' src/app.py", ["120", "160", "src/app.py"]),
    ("awk 'NR>300' src/app.py", ["300", "src/app.py"]),
    ("awk 'NR<=200 && NR>=100' src/app.py", ["200", "100", "src/app.py"]),  # a bound above the first line: as before  # from line 300 on: a line number, as tail -n +300's
    ("sed -n '2024p' log.txt", ["2024", "log.txt"]),  # one line: a line number
])
def test_a_range_from_the_first_line_is_a_count(command, expected):
    assert command_words(command) == expected


def test_the_first_view_of_a_file_is_not_labelled_with_an_output_that_printed_its_length():
    """sed -n '1,200p' FILE, the first look at a file (Codex's habit), shows its first 200 lines as head -n 200 does:
    the 200 is how much to show, no line an earlier event gave, yet it was traced to the issue's HTTP 200."""
    got = _decide("Bash", {"command": "sed -n '1,200p' src/app.py"}, "GET /health answers 200 instead of 503.")
    assert got.needed == {} and got.labels == []
