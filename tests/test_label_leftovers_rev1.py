"""A review of the labelling leftovers (833854a..851e24e, tests/test_label_leftovers.py): OpenHands agent-skill
cells whose line numbers no mark tied to a file, and compact JSON lists read as amounts with thousands separators.
Each test writes the smallest transcript an agent writes that got a wrong label or none."""

from __future__ import annotations

import pytest
from test_label_leftovers import FOUND, READER, WINDOW, assert_read_traced_to_the_search, codeact_run

from sam_model.data.chatmessages import ToolCall
from sam_model.data.sayings import says
from sam_model.data.toolstate import TranscriptState

# the first page of READER, as open_file(READER) prints it (no line asked for: no line number in the cell)
FIRST_PAGE = (f"[File: {READER} (300 lines total)]\n" + "".join(f"{n}|    pass\n" for n in range(1, 101))
              + "(200 more lines below)")


def codeact_cells(tmp_path, *cells: tuple[str, str]) -> list[dict]:
    """The events of an OpenHands CodeAct run (function calling) whose issue says '#212', then each (cell, output)
    an execute_ipython_cell call and its result."""
    from test_swe_agent import convert, write

    events, _ = convert(write(tmp_path, "session-1.json", codeact_run(list(cells))))
    return events


def labels_of(events: list[dict], code: str) -> list[int]:
    """The labels of the decision point before the call whose cell is ``code``."""
    call = next(e for e in events if e["kind"] == "action" and e["text"] == f"CALL execute_ipython_cell(code={code})")
    return events[call["step"] - 1].get("useful_memory_steps", [])


SEARCH = f"search_file('def parse_header', '{READER}')"


@pytest.mark.parametrize("opening, code", [
    ([(f"open_file('{READER}')", FIRST_PAGE)], "goto_line(212)"),  # the file open: the one an earlier cell opened
    ([], f"insert_content_at_line('{READER}', 212, 'import logging')"),  # its file named
    ([], f"open_file('{READER}', 212)\nscroll_down()"),  # an open_file at a line, then more skills
])
def test_a_skill_line_number_is_traced_to_the_search_that_showed_it(tmp_path, opening, code):
    """goto_line(212), insert_content_at_line(PATH, 212, ...) and open_file(PATH, 212) with another skill after it
    take a line of a file as a lone open_file(PATH, 212) does: since the cell is read by its arguments, their 212 was
    labelled by the first event saying 212 (the issue's #212), not by the search that showed line 212 of PATH (read
    whole before, the cell had been traced by nothing)."""
    events = codeact_cells(tmp_path, *opening, (SEARCH, FOUND), ("print('thinking')", "thinking"), (code, WINDOW))
    search = next(e["step"] for e in events if e["kind"] == "result" and "[Found 1 matches" in e["text"])
    issue = next(e["step"] for e in events if e["kind"] == "user")
    got = labels_of(events, code)
    assert search in got and issue not in got


def test_a_cell_naming_lines_of_two_files_is_no_line_of_either():
    """open_file(A, 212) then open_file(B, 30): no one file the cell's numbers are of, so none is marked."""
    from sam_model.data.agentskills import line_file

    assert line_file("execute_ipython_cell", {"code": f"open_file('{READER}', 212)\nopen_file('/w/b.py', 300)"}) \
        is None
    assert line_file("execute_ipython_cell", {"code": "goto_line(212)"}) is None  # no file open known
    assert line_file("execute_ipython_cell", {"code": "goto_line(212)"}, READER) == READER
    assert line_file("execute_ipython_cell", {"code": f"search_file('212', '{READER}')\ngoto_line(212)"},
                     READER) is None  # a search term 212 would be read as a line


def decide_after(result: str, tool: str, arguments: dict) -> tuple[dict, list[int]]:
    """The needed values and labels of a call to ``tool`` made after a user turn (event 0), a list_rooms call
    (event 1) and its ``result`` (event 2), then the agent's words."""
    st = TranscriptState()
    st.add({"role": "user", "content": "Book me a room at HX-4 for two nights."})
    st.add({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "list_rooms", "arguments": '{"hotel": "HX-4"}'}}]})
    st.add({"role": "tool", "tool_call_id": "c1", "content": result})
    st.add({"role": "assistant", "content": "Booking the room."})
    d = st.decide([ToolCall(tool, arguments, "x")])
    return d.needed, d.labels


@pytest.mark.parametrize("result", ['{"available_rooms":[204,305,412]}',  # JSON.stringify's, jq -c's: no spaces
                                    '[{"id":7,"rooms":[101,305]}]'])
def test_a_compact_json_list_of_numbers_says_its_items(result):
    """JSON writes no number with thousands separators, so [204,305,412] is a list of three numbers: since a number
    written with separators is one token (ced315a), 305 was said by no event and the room's number untraceable."""
    assert decide_after(result, "book_room", {"room_number": 305}) == ({"room_number": ["305"]}, [2])
    assert says(result, "305")


def test_an_amount_with_separators_is_still_one_number():
    assert not says("the budget is $3,500.", "500") and not says('{"note":"pay 3,500"}', "500")
    assert not says("(total 3,500)", "500") and says("[3,500]", "500")  # between brackets: JSON's items 3 and 500


def test_gemini_cli_grep_search_shows_its_hit_lines(tmp_path):
    """Gemini CLI's search tool is grep_search since its rename (GREP_TOOL_NAME; search_file_content before), its
    output the same: its L212: hits were read as no line, so read_file(start_line=212) after it was labelled by the
    user's 'line 212'. Context lines (L211-, its context arguments) are shown lines too, as grep -C's 211-code."""
    from test_cwd_paths import CWD

    from sam_model.data.formats.numbered import call_lines

    _, reader = call_lines("grep_search", {"pattern": "round(", "dir_path": "invoicer", "context": 1}, CWD)
    context = 'Found 1 match for pattern "round(" in path "invoicer":\n---\nFile: tax.py\nL211- x\nL212: round(y)\n---'
    assert reader is not None and reader(context) == {f"{CWD}/invoicer/tax.py": [211, 212]}
    assert_read_traced_to_the_search(tmp_path, "grep_search")


def test_a_cell_output_with_jupyter_line_ends_shows_its_lines(tmp_path):
    """An IPython cell's output comes from Jupyter with CRLF line ends (OpenHands' runtime tests compare
    obs.content.replace('\\r\\n', '\\n')): no '[File: ...]' or '[Found ...]' header fullmatched a line ending in \\r,
    so a real run's windows and search hits showed no line and open_file(PATH, 212) went to the issue's #212."""
    crlf = FOUND.replace("\n", "\r\n")
    events = codeact_cells(tmp_path, (SEARCH, crlf), ("print('thinking')", "thinking"),
                           (f"open_file('{READER}', 212)", WINDOW.replace("\n", "\r\n")))
    search = next(e["step"] for e in events if e["kind"] == "result" and "[Found 1 matches" in e["text"])
    issue = next(e["step"] for e in events if e["kind"] == "user")
    got = labels_of(events, f"open_file('{READER}', 212)")
    assert search in got and issue not in got


def test_the_window_after_an_edit_shows_its_lines_and_opens_its_file(tmp_path):
    """An edit skill prints its window as '[File: PATH (301 lines total after edit)]' then '212|code': read as no
    view, its lines were shown by nothing and its file not open, so goto_line(212) after it was labelled by the issue."""
    edit = (f"edit_file_by_replace('{READER}', to_replace='    pass', new_content='    return None')",
            f"[File: {READER} (301 lines total after edit)]\r\n(161 more lines above)\r\n"
            + "".join(f"{n}|    x = {n}\r\n" for n in range(162, 212))
            + "212|    return None\r\n(89 more lines below)\r\n[File updated (edited at line 212). Please review.]")
    events = codeact_cells(tmp_path, edit, ("print('thinking')", "thinking"), ("goto_line(212)", WINDOW))
    edited = next(e["step"] for e in events if e["kind"] == "result" and "after edit" in e["text"])
    assert labels_of(events, "goto_line(212)") == [edited]


def test_a_skill_search_term_that_is_code_is_traced_by_its_names():
    """search_file('def parse_header', PATH) searches for the name the issue gave, as grep -F 'def parse_header' and
    SWE-agent's search_file 'def parse_header' do, which are traced by their names (parse_header): the cell's term was
    traced whole, 'def parse_header', said by no event, so the search's decision got no label."""
    from shell_calls import decide

    from sam_model.data.agentskills import skill_words

    assert skill_words("execute_ipython_cell", "code", f"search_file('def parse_header', '{READER}')") \
        == ["parse_header", READER]
    assert skill_words("execute_ipython_cell", "code", "search_dir('connection refused')") == ["connection refused"]
    d = decide("execute_ipython_cell", {"code": "search_dir('def parse_header')"},
               "tinyparse crashes in parse_header on an empty header block.")
    assert d.needed == {"code": ["parse_header"]} and d.labels == [0]


def test_a_node_frame_in_crlf_output_names_its_line():
    """A Node frame was read only where its line ended in a newline: output from a terminal (docker exec -t, a
    pty, Windows) ends its lines with CRLF, and the frame's pattern ended at a blank or the line's end, not a \\r."""
    from sam_model.data.formats.numbered import call_lines
    from sam_model.data.searchhits import hit_lines

    out = "TypeError: x is undefined\r\n    at total (/app/src/cart.js:212:15)\r\n    at /app/src/index.js:30:1\r\n"
    _, reader = call_lines("Bash", {"command": "node src/index.js"}, "/app")
    assert reader is not None and reader(out).get("/app/src/cart.js") == [212] and 212 in hit_lines(out)
