"""The leftovers of the log readers and the labelling rule named by stop 60's closing note: each test fails on the
code before its fix (a guard that passes before says so)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("said, value", [
    ("The report says total number of users 123,456 this month; record that figure.", 123456),
    ("Count of customers 204,305 as of today, record it.", 204305),
    ("The number of active users 123,456 is up; log it.", 123456),  # a tally word right before: as before
])
def test_a_count_said_before_its_noun_and_of_is_one_number(said, value):
    """People are counted only after a word that says a count (active users 123,456), so the number after 'total
    number of users' was read as a list of two ids, 123 and 456, and the count a later call passed said by no event.
    A count's noun and 'of' before the noun say a count too; 'of' alone does not (a list of users 123,456)."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    d = decide("record_metric", {"value": value}, said)
    assert d.labels == [0] and d.needed
    assert not says(norm(said), str(value)[3:])
    listed = "Ban a list of users 123,456 from the channel."
    assert says(norm(listed), "456") and decide("ban_user", {"user_id": "456"}, listed).labels == [0]


def windows_run(windows: bool) -> dict:
    """A SWE-agent 0.x run on Windows (paths with backslashes under C:\\repo; ``windows``) or its POSIX twin (/repo):
    a search prints the file, the agent opens it whole, then by its relative path at a line an earlier view showed."""
    root, sep = ("C:\\repo", "\\") if windows else ("/repo", "/")
    rel = sep.join(["src", "http", "headers.py"])
    full = root + sep + rel

    def obs(text: str, open_file: str = "n/a") -> dict:
        return {"role": "user", "content": f"{text}\n(Open file: {open_file})\n(Current directory: {root})",
                "agent": "main", "message_type": "observation"}

    def act(action: str) -> dict:
        return {"role": "assistant", "content": action, "agent": "main", "message_type": "action", "thought": "",
                "action": action}

    return {"history": [
        {"role": "system", "content": "You are an agent.", "agent": "main", "message_type": "system_prompt"},
        obs("Fix the crash in parse_header."),
        act("search_dir parse_header"), obs(f'Found 1 matches for "parse_header" in {root}:\n{full} (1 matches)'),
        act("ls"), obs("src"),  # a result between: the one right before a call is no memory
        act(f"open {full}"), obs(f"[File: {full} (300 lines total)]\n1:import re\n2:\n212:def parse_header(x):", full),
        act("search_file re"), obs(f'Found 1 matches for "re" in {full}:\nLine 1:import re', full),
        act(f"open {rel} 212"), obs(f"[File: {full} (300 lines total)]\n212:def parse_header(x):", full),
        act("submit")], "trajectory": [], "info": {}}


def test_a_swe_agent_run_on_windows_labels_as_its_posix_twin(tmp_path):
    """SWE-agent's text commands were shell-split as bash reads them, so a Windows path written bare lost its
    backslashes (open C:\\repo\\src\\http\\headers.py: path C:reposrchttpheaders.py, a file no output printed;
    open src\\http\\headers.py 212: srchttpheaders.py, whose line 212 no view showed), traced to nothing. Bare
    Windows paths keep their backslashes, so the run labels as its POSIX twin does."""
    from sam_model.data.formats import swe_agent
    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    labels = {}
    for windows in (True, False):
        path = tmp_path / f"run{windows}.traj"
        path.write_text(json.dumps(windows_run(windows)))
        events = list(iter_transcript_events(path, report=ImportReport()))
        labels[windows] = [(e["step"], e.get("useful_memory_steps")) for e in events]
    assert labels[True] == labels[False] and [u for _, u in labels[False] if u] == [[2], [6]]  # the path, line 212
    args = lambda action: swe_agent.command_call(action, "a", "t.traj")["function"]["arguments"]  # noqa: E731
    assert args("open C:\\repo\\src\\x.py 212") == {"path": "C:\\repo\\src\\x.py", "line_number": "212"}
    assert args('search_dir "a\\"b" src\\http') == {"search_term": 'a"b', "dir": "src\\http"}
    assert args("open my\\ file.py") == {"path": "my file.py"}  # bash's escape of a space, as before
    assert args("find_file x.py C:\\") == {"file_name": "x.py", "dir": "C:\\"}  # a drive's root
