"""Review of the line-number marks (sam_model.data.formats.numbered, toolstate's rule) against live adds, Claude
Code's own search tool and hostile outputs: each case here was labelled otherwise before its fix."""

from __future__ import annotations

import json

import pytest
import test_shown_lines as shown
from shell_calls import grep_then_read
from test_live_adds import conversation, fed, imported
from test_openhands_v1 import Run as RunV1
from test_openhands_v1 import terminal

from sam_model.data.transcripts import ImportReport, iter_transcript_events

ROLLOUT = "rollout-2025-10-29T00-59-38-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"
LS = ("ls tests", "test_reader.py\n")  # a result between: the one right before a call is no memory


def codex() -> tuple[str, list]:
    """A current Codex rollout (read in file order): rg -n prints line 212, nl -ba lines 212-214, then ranges."""
    return ROLLOUT, shown.rollout([("rg -n 'def parse_header' src", f"{shown.REL}:212:def parse_header(block):\n"),
                                   LS, (f"nl -ba {shown.REL} | sed -n '212,240p'", shown.listing(212)), LS,
                                   (f"sed -n '213,214p' {shown.REL}", "\n".join(shown.CODE[1:]))])


def openhands_v1() -> tuple[str, list]:
    path = f"/workspace/{shown.REL}"
    run = RunV1()
    run.add("MessageEvent", "user", llm_message={"role": "user", "content": [{"type": "text", "text": shown.ISSUE}],
                                                 "tool_calls": None}, llm_response_id=None, activated_skills=[],
            extended_content=[], sender=None)
    (search,) = run.act("r1", "Find it.", ("c1", "terminal", {"command": f"grep -n 'def parse_header' {path}"}))
    run.observe(search, "212:def parse_header(block):", **terminal("", 0))
    (ls,) = run.act("r1b", "", ("c1b", "terminal", {"command": "ls tests"}))
    run.observe(ls, "test_reader.py", **terminal("", 0))
    (view,) = run.act("r2", "", ("c2", "file_editor", {"command": "view", "path": path, "view_range": [212, 230]}))
    run.observe(view, f"Here's the result of running `cat -n` on {path}:\n" + shown.listing(212), command="view",
                path=path)
    return "v1.json", run.events


@pytest.mark.parametrize("session", [codex, openhands_v1])
def test_a_session_added_line_by_line_labels_line_numbers_by_the_outputs_the_importer_does(tmp_path, session):
    """A current Codex rollout fed a line an add read each function_call_output as the first line of a new open turn,
    without the function_call its reader reads the output's numbered lines by (numbered.mark): the shown lines were
    lost when the next add read the turn again, and `nl -ba FILE | sed -n '212,240p'` took 212 from the issue's #212
    as well as from rg's FILE:212: (the importer: rg's alone). An output now stays in its call's turn."""
    name, lines = session()
    if name == "v1.json":
        (tmp_path / "v1.json").write_text(json.dumps(lines))
        events = list(iter_transcript_events(tmp_path / "v1.json", report=ImportReport()))
    else:
        events = imported(tmp_path, name, lines)
    want = [e.get("useful_memory_steps") or [] for e in events]
    assert any(want) and not any(0 in w for w in want)  # the issue (#212, #213) labels no line number
    assert [labels for _, labels in conversation(fed(lines, [lines]))] == want
    assert [labels for _, labels in conversation(fed(lines, [[x] for x in lines]))] == want


def test_claude_codes_grep_shows_the_lines_a_read_offset_takes(tmp_path):
    """Claude Code's Grep in content mode prints ripgrep's PATH:212:code (212:code for one file), but only Read, Edit,
    MultiEdit and Write were read for shown lines: Read(offset=212) after the Grep that printed line 212 took 212 from
    the issue's #212 (CONVERSION_VERSION 62). Now it is labelled by the Grep that showed it, for a tree and
    for one file."""
    from sam_model.data.formats.numbered import call_lines

    file = "/repo/invoicer/dates.py"
    offsets, grep = grep_then_read(tmp_path, "due_date is off by one since #212 was merged: fix it", "/repo/invoicer",
                                   f"{file}:212:def due_date(issued, terms):", file, 212, 30)
    assert offsets == [[grep]]  # was [[0]]: the issue's #212
    _, one = call_lines("Grep", {"pattern": "def due", "path": "invoicer/dates.py", "output_mode": "content",
                                 "-C": 1}, "/repo")
    assert one is not None and one("57-import x\n58:def due_date():\n59-    pass") == {file: [57, 58, 59]}
    _, listed = call_lines("Grep", {"pattern": "def due", "output_mode": "files_with_matches"}, "/repo")
    assert listed is None  # file names, no lines


def test_a_page_bound_reads_each_earlier_result_for_hits_once_a_session(monkeypatch):
    """Each decision with a page bound (sed -n '200,250p') read every earlier result for a hit at that line again
    (grep_hit): a 2,000-event session of 100 KB results paging through files read a million results (0.1 ms to 3 ms
    each). A result's hits are now read once (searchhits.hit_lines, kept by the tracker): as many reads as results,
    and the same labels (a page at a hit traced to the searches that printed it)."""
    from sam_model.data import searchhits, toolstate

    reads: list[int] = []
    pattern, lines = searchhits._hit_line, toolstate.hit_lines
    monkeypatch.setattr(searchhits, "_hit_line", lambda line: reads.append(line) or pattern(line))
    monkeypatch.setattr(toolstate, "hit_lines", lambda text: reads.append(0) or lines(text))
    state = toolstate.TranscriptState("e")
    state.feed({"role": "user", "content": "the parser fails on the header"})
    results = 0
    for k in range(45):  # a search printing a hit at line 200, a listing (the result right before the page), a page
        command, output = [("grep -rn parse_header src", f"src/m{k}.py:200:def parse_header():"), ("ls", "README"),
                           (f"sed -n '200,250p' src/m{k - 2}.py", "    return key")][k % 3]
        state.feed({"role": "assistant", "content": None, "tool_calls": [{"id": f"c{k}", "type": "function", "function": {
            "name": "bash", "arguments": json.dumps({"command": command})}}]})
        state.feed({"role": "tool", "tool_call_id": f"c{k}", "content": output})
        results += 1
    pages = [e for e in state.events if "200" in e.get("meta", {}).get("needed", {}).get("command", [])]
    assert len(pages) == 15  # each page at 200 traced to the searches that printed src/...:200:
    assert all(state.events[s]["text"].startswith("bash: src/") for e in pages for s in e["useful_memory_steps"])
    assert 0 < len(reads) <= results  # was the results before each page bound: 15 pages, ~340 reads
    state.forget(2)  # a forgotten result's text is no longer kept for its hits
    assert all(t == e["text"] for k, (t, _) in state._hits.items() for e in [state.events[k]])
    assert "_hits" not in state.state_dict()


def test_a_grep_outputs_files_are_resolved_once_each(monkeypatch):
    """numbered's grep -rn reader resolved each output line's path under the working directory (posixpath.join and
    normpath: 27 ms a 100 KB output, twice a conversion, more than the rest of a grep-heavy session's conversion).
    A file is now resolved once an output, and the lines each file showed are as before."""
    from sam_model.data.formats import numbered

    resolved: list[str] = []
    under = numbered._under
    monkeypatch.setattr(numbered, "_under", lambda cwd, path: resolved.append(path) or under(cwd, path))
    _, reader = numbered.shell_lines("command", "grep -rn compute src", "/repo")
    output = "".join(f"src/m{k % 3}.py:{k}:    value = compute({k})\n" for k in range(1, 1000))
    shown = reader(output) if reader else {}
    assert {f: len(ns) for f, ns in shown.items()} == {"/repo/src/m0.py": 333, "/repo/src/m1.py": 333,
                                                       "/repo/src/m2.py": 333}
    assert shown["/repo/src/m1.py"][:2] == [1, 4]
    assert resolved.count("src/m1.py") == 1  # was 333: once a line


@pytest.mark.parametrize(("hit_file", "labelled"), [("/repo/src/b.py", False), ("/repo/src/a.py", True)])
def test_a_page_of_one_file_is_no_window_around_a_hit_in_another(tmp_path, hit_file, labelled):
    """A page's bound is kept as a value where an earlier result printed that line as a search hit (59): but the
    hit was of any file, so Read(src/a.py, offset=200, limit=50), a page, was traced to a Grep that printed
    src/b.py:200: (a grep -rn of a few hundred hits holds most page bounds of some file). Where the reader marked
    which file's lines the search showed and which file the call reads, a hit of another file opens no window."""
    offsets, grep = grep_then_read(tmp_path, "the importer skips rows; look at the parser", "/repo/src",
                                   f"{hit_file}:200:def parse(rows):", "/repo/src/a.py", 200, 50)
    assert offsets == ([[grep]] if labelled else [])  # b.py's hit: [[grep]] before


def test_a_file_named_relative_to_the_directory_an_earlier_add_told_is_the_importers(tmp_path):
    """A live add reads its open turn after the lines that told the working directory (a rollout's session_meta):
    the reader marked the lines an output showed before the scope's directory was put on the first message, so
    `grep -n ... ../lib/reader.py`'s line 212 was of ../lib/reader.py, no file `sed -n '212,214p'
    /home/agent/lib/reader.py` takes lines of: the sed was labelled by the issue's #212, the importer's by the grep.
    The open turn is marked again once its directory is told."""
    lines = shown.rollout([("grep -n 'def parse_header' ../lib/reader.py", "212:def parse_header(block):\n"), LS,
                           ("sed -n '212,214p' /home/agent/lib/reader.py", "    key, value = block[0]\n")])
    events = imported(tmp_path, ROLLOUT, lines)
    want = [e.get("useful_memory_steps") or [] for e in events]
    grep = next(e["step"] for e in events if e["kind"] == "result" and e["text"].startswith("shell: 212:"))
    assert [grep] in want  # the importer: the sed's 212 is the grep's
    assert [labels for _, labels in conversation(fed(lines, [[x] for x in lines]))] == want  # was the issue's


def test_a_local_shell_rollouts_open_turn_closes_at_each_call_after_an_output(tmp_path):
    """Codex's local_shell_call is a call as a function_call is: an open turn that opens only at a function_call
    after an output never closed in a run of local shell calls (each add read the run's lines again, up to the
    cap). It closes at each call after an output, and the memories and labels are the importer's."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    r = lambda item: shown.line("response_item", item)  # noqa: E731
    lines = [shown.meta(), r(shown.message("user", shown.ISSUE))]
    for n, (command, output) in enumerate([("grep -n 'def parse_header' src/tinyparse/reader.py", "212:def f():\n"),
                                           LS, ("sed -n '212,214p' src/tinyparse/reader.py", "x\n"), LS, LS]):
        lines += [r({"type": "local_shell_call", "call_id": f"s{n}", "status": "completed",
                     "action": {"type": "exec", "command": ["bash", "-lc", command]}}),
                  r({"type": "function_call_output", "call_id": f"s{n}",
                     "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})})]
    memory = ScopedMemory(HashingEncoder(16))
    held = []
    for x in lines:
        memory.add([x], user_id="me", run_id="s")
        held.append(len(memory._open["me//s"].lines))
    assert max(held) <= 3  # a call and its output (the first after the prompt: with it)
    events = imported(tmp_path, ROLLOUT, lines)
    assert [labels for _, labels in conversation(memory)] == [e.get("useful_memory_steps") or [] for e in events]
