"""The import report named the share of untraceable argument values (23 % of a walkthrough's property-management
logs) but not which arguments they were, so a user could not tell a date said as a weekday or the agent's own
template names from values the logs lost. It now names them, the most frequent first."""

from __future__ import annotations

import json
from pathlib import Path

from sam_model.data.transcripts import ImportReport, iter_transcript_events


def chat(cid: str, day: str) -> dict:
    call = {"id": "c1", "type": "function", "function": {"name": "schedule_vendor", "arguments": json.dumps(
        {"work_order_id": "WO-88412", "date": day, "template": "vendor_scheduled"})}}
    return {"id": cid, "messages": [
        {"role": "user", "content": "My sink leaks. Work order WO-88412 is open already."},
        {"role": "assistant", "content": "Which day suits you?"},
        {"role": "user", "content": "Thursday please, ok go ahead"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "booked"}]}


def test_the_report_names_the_arguments_whose_values_are_untraceable(tmp_path: Path):
    log = tmp_path / "chats.jsonl"
    log.write_text("".join(json.dumps(chat(f"c{i}", f"2026-03-1{i}")) + "\n" for i in range(3)))
    report = ImportReport()
    events = list(iter_transcript_events(log, report=report))
    assert report.outcomes["untraceable"] == 6  # the date (a weekday was said) and the agent's template, each chat
    assert report.untraceable == {"schedule_vendor.date": 3, "schedule_vendor.template": 3}
    line = next(x for x in report.lines() if x.startswith("untraceable by argument"))
    assert line.endswith(": schedule_vendor.date 3, schedule_vendor.template 3")
    assert any(e.get("useful_memory_steps") for e in events)  # the work order id is still traced
