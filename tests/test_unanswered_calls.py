"""A log of the model's outputs alone (a Responses API response object holds no input: neither the user's words nor
the function_call_output items the next request sends) answers none of its calls, and the import report said
nothing of it: a walkthrough's 116 calls gave 8 decision points and 71 % untraceable values without a word on why.
The report now counts the calls no result answers and says what log would hold them."""

from __future__ import annotations

import json
from pathlib import Path

from sam_model.data.sources import iter_source_events
from sam_model.data.transcripts import ImportReport, iter_transcript_events


def call(cid: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}


def responses(with_input: bool) -> list[dict]:
    """Three requests of one conversation, each logged with its response's output (and, where ``with_input``, the
    request's input: the user's words and the outputs of the previous response's calls)."""
    turns = [([{"role": "user", "content": "My phone is (415) 555-0142, the sink leaks"}],
              [call("c1", "lookup_tenant", {"phone": "(415) 555-0142"})]),
             ([{"type": "function_call_output", "call_id": "c1", "output": '{"unit_id": "U-17-4B"}'}],
              [call("c2", "list_work_orders", {"unit_id": "U-17-4B", "phone": "(415) 555-0142"})]),
             ([{"type": "function_call_output", "call_id": "c2", "output": "[]"}],
              [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "None open."}]}])]
    return [{"id": f"resp_{n}", "object": "response", "previous_response_id": f"resp_{n - 1}" if n else None,
             **({"input": inp} if with_input else {}), "output": out} for n, (inp, out) in enumerate(turns)]


def report_of(tmp_path: Path, lines: list[dict]) -> ImportReport:
    log = tmp_path / "responses.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = ImportReport()
    list(iter_transcript_events(log, report=report, allow_empty=True))
    return report


def test_calls_no_result_answers_are_counted_and_said(tmp_path):
    report = report_of(tmp_path, responses(with_input=False))
    assert (report.unanswered, report.unanswered_in) == (2, 1)
    note = next(x for x in report.lines() if "no result answering" in x)
    assert note.startswith(f"2 tool calls with no result answering them, in 1 conversation (the first at "
                           f"{tmp_path / 'responses.jsonl'}:1, item 0)")
    assert "log each request's 'input' beside its 'output'" in note


def test_a_log_with_its_inputs_has_no_such_note(tmp_path):
    report = report_of(tmp_path, responses(with_input=True))
    assert report.unanswered == 0 and report.decision_points == 1
    assert not any("no result answering" in x for x in report.lines())


def test_training_s_conversion_says_it_too(tmp_path, capsys):
    """sam-train converts a transcript file itself (iter_source_events): its log says what the report says."""
    log = tmp_path / "responses.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in responses(with_input=False)))
    list(iter_source_events(log))
    assert f"{log}: 2 tool calls with no result answering them" in capsys.readouterr().out
