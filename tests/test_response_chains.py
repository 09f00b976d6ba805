"""Responses API requests logged one a line and chained by ``previous_response_id`` (the stateful API: each request
sends only its new items) are one conversation. Read one a line, a property-management agent's 224 requests of
20 conversations gave 224 conversations and no decision point: the tenant's phone, said in the first request,
traced to nothing when the fourth request's call used it (a walkthrough)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sam_model.data.formats.base import TranscriptFormatError
from sam_model.data.transcripts import ImportReport, iter_transcript_events

POLICY = "You are HarborKeys' maintenance assistant. Verify the tenant first."


def user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def said(text: str) -> dict:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def call(cid: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}


def output(cid: str, value: dict) -> dict:
    return {"type": "function_call_output", "call_id": cid, "output": json.dumps(value)}


def conversation() -> list[list[dict]]:
    """Each request's new items then its response's output: a tenant reports a leak, gives her phone, the agent
    looks her up, and four requests later opens a work order on the unit the lookup returned."""
    return [
        [user("Hi, the sink in 4B is leaking. My phone is (415) 555-0142."),
         call("c1", "lookup_tenant", {"phone": "(415) 555-0142"})],
        [output("c1", {"tenant_id": "TN-48213", "unit_id": "U-17-4B"}), said("Found you. Can we enter if you're out?")],
        [user("yes, that's fine"),
         call("c2", "create_work_order", {"unit_id": "U-17-4B", "category": "plumbing"})],
        [output("c2", {"work_order_id": "WO-88412"}), said("Work order WO-88412 is open. Book FlowRight Thursday?")],
        [user("ok, go ahead"),
         call("c3", "schedule_vendor", {"work_order_id": "WO-88412", "tenant_phone": "(415) 555-0142"})],
        [output("c3", {"appointment_id": "APT-1"}), said("Booked.")],
    ]


def requests(turns: list[list[dict]], prefix: str) -> list[dict]:
    """One line a request, as an app logs the stateful API: its new input items, the response's output items."""
    lines, prev = [], None
    for n, items in enumerate(turns):
        k = next(i for i, it in enumerate(items) if it.get("role") == "assistant" or it["type"] == "function_call")
        rid = f"resp_{prefix}{n}"
        lines.append({"id": rid, "object": "response", "previous_response_id": prev, "instructions": POLICY,
                      "input": items[:k], "output": items[k:]})
        prev = rid
    return lines


def write(path: Path, lines: list[dict]) -> Path:
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps(x) + "\n" for x in lines)
    return path


def convert(path: Path) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report)), report


def test_a_chain_of_requests_is_one_conversation_with_the_events_of_the_whole_log(tmp_path):
    whole = [{"id": "conv-1", "instructions": POLICY, "input": [i for t in conversation() for i in t]}]
    chained, report = convert(write(tmp_path / "chained.jsonl.gz", requests(conversation(), "a")))
    expected, _ = convert(write(tmp_path / "whole.jsonl.gz", whole))
    assert report.conversations == 1
    assert {e["episode_id"] for e in chained} == {"resp_a0"}  # the chain is named by its first request
    strip = [{k: v for k, v in e.items() if k != "episode_id"} for e in chained]
    assert strip == [{k: v for k, v in e.items() if k != "episode_id"} for e in expected]
    texts = [e["text"] for e in chained]
    before = chained[texts.index(next(t for t in texts if t.startswith("CALL schedule_vendor"))) - 1]
    assert [chained[s]["text"] for s in before["useful_memory_steps"]] == [
        "Hi, the sink in 4B is leaking. My phone is (415) 555-0142.",
        'create_work_order: {"work_order_id": "WO-88412"}']


def test_a_request_sent_again_branches_the_chain_and_the_last_written_branch_is_read(tmp_path):
    """The second request timed out and was sent again (the same previous_response_id): the retry's line is the
    conversation's, the first attempt's is reported as a branch left, and the line after it follows the retry."""
    lines = requests(conversation(), "b")
    retry = {**lines[1], "id": "resp_b1-retry", "output": [said("Sorry, one moment: can we enter if you're out?")]}
    lines.insert(2, retry)
    lines[3]["previous_response_id"] = "resp_b1-retry"
    events, report = convert(write(tmp_path / "retry.jsonl.gz", lines))
    texts = [e["text"] for e in events]
    assert report.conversations == 1
    assert "Sorry, one moment: can we enter if you're out?" in texts
    assert "Found you. Can we enter if you're out?" not in texts
    assert report.abandoned == {f"{tmp_path / 'retry.jsonl.gz'}:2": 1}
    assert "1 entry of branches the conversation left" in "\n".join(report.lines())


def test_lines_without_a_chain_read_as_before_and_a_missing_start_begins_its_own(tmp_path):
    """Conversations a line (no previous_response_id, or null) read one a line; a request continuing a response
    the file does not hold (logging began mid-conversation) is a conversation of its own."""
    lines = requests(conversation(), "c")
    lines[0]["id"], lines[1]["previous_response_id"] = "resp_c0", None
    lines[3]["previous_response_id"] = "resp_not_logged"
    events, report = convert(write(tmp_path / "loose.jsonl.gz", lines))
    assert report.conversations == 3  # c0 | c1 -> c2 | c3 -> c4 -> c5
    assert sorted({e["episode_id"] for e in events}) == ["resp_c0", "resp_c1", "resp_c3"]


def test_a_json_list_of_chained_requests_is_read_alike(tmp_path):
    """The README's other layout, a .json list: its chained requests are one conversation too."""
    path = tmp_path / "requests.json"
    path.write_text(json.dumps(requests(conversation(), "d")))
    events, report = convert(path)
    assert report.conversations == 1 and report.decision_points == 2
    assert {e["episode_id"] for e in events} == {"resp_d0"}


def test_a_line_logged_twice_or_a_try_not_taken_leaves_the_conversation_whole(tmp_path):
    """The branch followed is the one whose last request was written last (a Claude Code session's rule): a line
    logged twice (at-least-once logging) and a best-of-2 request whose first try the app went on from are branches
    left, not the conversation. Following the try written last at each fork cut both after their second request,
    the five requests after it reported as 'branches the conversation left'."""
    whole, _ = convert(write(tmp_path / "whole.jsonl.gz", requests(conversation(), "w")))
    twice = requests(conversation(), "w")
    twice.insert(2, dict(twice[1]))
    other = requests(conversation(), "w")
    other.insert(2, {**other[1], "id": "resp_w1-second-try", "output": [said("Let me check that first.")]})
    for name, lines in (("twice", twice), ("best-of-2", other)):
        events, report = convert(write(tmp_path / f"{name}.jsonl.gz", lines))
        assert report.conversations == 1
        assert events == whole, name
        assert report.abandoned == {f"{tmp_path / f'{name}.jsonl.gz'}:3": 1}, name


def test_an_item_of_a_later_request_is_named_by_its_own_line(tmp_path):
    """A joined chain's items were named by their place in the joined list: a bad item of the sixth request was
    'FILE:1, item 10' (line 1 holds two items), a result answering no call of the fourth 'FILE:1, item 6'. Each
    is now named by its line and its place there."""
    bad = requests(conversation(), "n")
    del bad[5]["input"][0]["call_id"]
    path = write(tmp_path / "bad.jsonl.gz", bad)
    with pytest.raises(TranscriptFormatError, match=r"bad\.jsonl\.gz:1, line 6, item 0: function_call_output item "
                                                    r"without a 'call_id'"):
        convert(path)
    stray = requests(conversation(), "s")
    stray[3]["input"][0]["call_id"] = "c9"  # the fourth request's output answers a call no response made
    _, report = convert(write(tmp_path / "stray.jsonl.gz", stray))
    assert any(u.startswith(f"{tmp_path / 'stray.jsonl.gz'}:1, line 4, item 0: tool_call_id 'c9' answers no")
               for u in report.unmatched_results), report.unmatched_results


def test_a_request_continuing_a_response_the_file_lacks_is_reported(tmp_path):
    """A log rotated by day, or a line lost: the request after the gap starts a conversation of its own, whatever
    was said before it unread (the tenant's phone traced to nothing). The report said nothing of it; it now says
    how many conversations begin so, and where the first is."""
    lines = requests(conversation(), "g")
    day1, day2 = write(tmp_path / "day1.jsonl.gz", lines[:3]), write(tmp_path / "day2.jsonl.gz", lines[3:])
    _, whole = convert(write(tmp_path / "whole.jsonl.gz", lines))
    _, first = convert(day1)
    _, second = convert(day2)
    assert not whole.continuing and not first.continuing
    assert second.continuing == [f"{day2}:1, continuing resp_g2"]
    note = next(n for n in second.lines() if "previous_response_id" in n)
    assert f"1 conversation begins at a request whose previous_response_id names a response no line of the file " \
           f"holds (the first at {day2}:1, continuing resp_g2)" in note and "\n" not in note
    del lines[2]  # a line lost mid-file: two conversations, the second begun at the line after the gap
    _, gap = convert(write(tmp_path / "gap.jsonl.gz", lines))
    assert gap.conversations == 2 and gap.continuing == [f"{tmp_path / 'gap.jsonl.gz'}:3, continuing resp_g2"]


def test_ids_two_conversations_share_are_not_followed(tmp_path):
    """An app that logs its own turn counter for the id (0, 1, 2 in each conversation) writes ids that name two
    lines: following the first line of an id mixed the second conversation's requests into the first (read with
    --skip-bad: its fourth request after the first's third, the rest 'branches left'). No request is continued
    through such an id; its repeats are refused as duplicate ids, as before chains were read."""
    first, second = requests(conversation(), ""), requests(conversation(), "")
    second[0]["input"][0]["content"][0]["text"] = "Hello, the fridge in 7C is broken. My phone is (212) 555-0199."
    for lines in (first, second):
        for n, line in enumerate(lines):
            line["id"], line["previous_response_id"] = str(n), str(n - 1) if n else None
    for line in second:
        line["model"] = "gpt-4.1"  # another conversation's lines: not the first's logged again
    path = write(tmp_path / "counter.jsonl.gz", first + second[:5])
    report = ImportReport()
    events = list(iter_transcript_events(path, report=report, skip_bad=True))
    assert [f"{path}:{n + 7}: duplicate conversation id '{n}', first at {path}:{n + 1}" for n in range(5)] == [
        str(e).split(" (")[0] for e in report.skipped]
    assert not report.abandoned
    assert not any("fridge" in e["text"] for e in events)  # the second conversation's lines: all refused


def test_the_branches_of_many_conversations_of_one_file_are_not_called_files(tmp_path):
    """25 conversations of one file each sent a request again: the note named 20 and said '5 more files'."""
    lines = []
    for k in range(25):
        chain = requests(conversation(), f"m{k}-")
        lines += [*chain[:2], {**chain[1], "id": f"resp_m{k}-again", "output": [said("One moment.")]}, *chain[2:]]
    _, report = convert(write(tmp_path / "many.jsonl.gz", lines))
    note = next(n for n in report.lines() if "branches the conversation left" in n)
    assert report.conversations == 25 and note.startswith("25 entries of branches")
    assert note.endswith(f"{tmp_path / 'many.jsonl.gz'}:136 and 5 more conversations")
