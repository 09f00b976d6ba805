"""A walkthrough on an insurer's claims-intake agent on Amazon Bedrock (Strands Agents): its calls logged by
Bedrock's own model invocation logging (CloudWatch / S3 records, ``schemaType: ModelInvocationLog``), which the
team took for the README's "logged Converse request". Each record was refused for a field it was never meant to
have: "conversation without 'id'", and with an id added "'input' is an object, expected a list of items" (the
Responses reader's). It is now named for what it is, with the line that makes the bedrock format of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.transcripts import TranscriptFormatError, iter_transcript_events, main

POLICY = "HM-514002"
MESSAGES = [{"role": "user", "content": [{"text": f"I need to report a claim. My policy number is {POLICY}."}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "lookup_policy",
                                                           "input": {"policy_number": POLICY}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
                                                         "content": [{"json": {"deductible": "$500.00"}}]}}]}]
ANSWER = {"role": "assistant", "content": [{"text": "Found your policy: a $500.00 deductible. What happened?"}]}


def record(request_id: str, with_id: bool = False) -> dict:
    """One Converse call as Bedrock's model invocation logging writes it."""
    rec = {"schemaType": "ModelInvocationLog", "schemaVersion": "1.0", "timestamp": "2026-12-01T10:00:00Z",
           "accountId": "123456789012", "region": "us-east-1", "requestId": request_id, "operation": "Converse",
           "modelId": "anthropic.claude-3-5-sonnet-20240620-v1:0",
           "input": {"inputContentType": "application/json", "inputTokenCount": 120,
                     "inputBodyJson": {"messages": MESSAGES, "system": [{"text": "You are a claims assistant."}]}},
           "output": {"outputContentType": "application/json", "outputTokenCount": 14,
                      "outputBodyJson": {"output": {"message": ANSWER}, "stopReason": "end_turn"}}}
    return {"id": request_id, **rec} if with_id else rec


@pytest.mark.parametrize("with_id", [False, True])
def test_an_invocation_log_record_is_named_with_the_line_that_converts_it(tmp_path, capsys, with_id):
    log = tmp_path / "invocations.jsonl"
    log.write_text(json.dumps(record("req-1", with_id)) + "\n")
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(log))
    message = str(err.value)
    assert message.startswith(f"{log}:1: a Bedrock model invocation log record")
    assert "without 'id'" not in message and "expected a list of items" not in message
    assert main([str(log), str(tmp_path / "out.jsonl")]) != 0
    err_line = capsys.readouterr().err.strip()
    assert err_line.count("\n") == 0 and "ModelInvocationLog" in err_line and "inputBodyJson" in err_line


def test_the_line_the_message_gives_is_read_as_the_conversation(tmp_path):
    """Guard (passes before): what the refusal says to write, made from the record, converts: the call's messages
    and its answer."""
    rec = record("req-1")
    line = {"id": "claim-1", **rec["input"]["inputBodyJson"], "output": rec["output"]["outputBodyJson"]["output"]}
    log = tmp_path / "converse.jsonl"
    log.write_text(json.dumps(line) + "\n")
    events = list(iter_transcript_events(log))
    assert [e["kind"] for e in events] == ["user", "action", "result", "system"]
    assert events[-1]["text"] == ANSWER["content"][0]["text"]
    assert POLICY in events[1]["text"]


def test_a_strands_session_folder_is_still_read(tmp_path: Path):
    """The new check looks at records only: a Strands message file (its ``message`` a Converse message) is read."""
    folder = tmp_path / "session_s1" / "agents" / "agent_claims" / "messages"
    folder.mkdir(parents=True)
    for n, m in enumerate([*MESSAGES, ANSWER]):
        (folder / f"message_{n}.json").write_text(json.dumps({"message": m, "message_id": n, "redact_message": None}))
    events = list(iter_transcript_events(tmp_path))
    assert {e["episode_id"] for e in events} == {"s1_claims"} and len(events) == 4


def test_a_strands_agents_messages_added_whole_after_each_turn_are_read_once(tmp_path):
    """A hook adding ``agent.messages`` whole after every invocation stored the turns before again (Converse
    messages carry no message id): the scope's last add, opening the next and holding a call by its toolUseId, is
    now read once (sam_model.memory.resent), so it stores the importer's memories once each, as adding only the
    messages after the last add (``agent.messages[n:]``) does."""
    from sam_model.memory import ScopedMemory
    from sam_model.memory.encoders import HashingEncoder

    msgs = [*MESSAGES, ANSWER, {"role": "user", "content": [{"text": "ok, go ahead"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t2", "name": "file_fnol",
                                                           "input": {"policy_number": POLICY}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t2", "status": "success",
                                                         "content": [{"json": {"claim_id": "CLM-38140"}}]}}]},
            {"role": "assistant", "content": [{"text": "Your claim CLM-38140 is open."}]}]
    turns = [4, 8]  # agent.messages after each invocation ends
    log = tmp_path / "c.jsonl"
    log.write_text(json.dumps({"id": "c", "messages": msgs}) + "\n")
    imported = [e["text"] for e in iter_transcript_events(log)]
    whole, new = ScopedMemory(HashingEncoder()), ScopedMemory(HashingEncoder())
    n = 0
    for end in turns:
        whole.add(msgs[:end], user_id="cust", run_id="claim")
        new.add(msgs[n:end], user_id="cust", run_id="claim")
        n = end
    texts = lambda m: [r["memory"] for r in m.get_all(user_id="cust", run_id="claim")["results"]]  # noqa: E731
    assert sorted(texts(new)) == sorted(imported) == sorted(texts(whole))


def test_a_search_by_a_converse_tool_use_takes_the_block_its_value_or_a_list():
    """README names the Converse call shapes a search takes (a Strands agent holds the block's value); each gives
    the state ``live_state`` gives for the same call (passes before: documents behaviour)."""
    from sam_model.data.transcripts import live_state
    from sam_model.memory import ScopedMemory
    from sam_model.memory.encoders import HashingEncoder

    before = [*MESSAGES, ANSWER, {"role": "user", "content": [{"text": "ok, go ahead"}]}]
    use = {"toolUseId": "t2", "name": "file_fnol", "input": {"policy_number": POLICY, "deductible": "$500.00"}}
    memory = ScopedMemory(HashingEncoder())
    memory.add(before, user_id="cust")
    want = live_state(before, use)
    flags = want["uncertainty_flags"] if isinstance(want, dict) else want.uncertainty_flags
    assert flags == ["deductible", "policy_number"]
    for call in (use, {"toolUse": use}, [{"toolUse": use}]):
        assert memory.search("", user_id="cust", call=call)["state"]["uncertainty_flags"] == flags


def test_validate_names_a_strands_session_folder_for_what_it_holds(tmp_path, capsys):
    """``sam-data validate`` on the sessions folder said "a folder of agent trajectories" alone: it now says whose."""
    from sam_model.data.validate import main as validate_main

    folder = tmp_path / "sessions" / "session_s1" / "agents" / "agent_claims" / "messages"
    folder.mkdir(parents=True)
    (folder / "message_0.json").write_text(json.dumps({"message": MESSAGES[0], "message_id": 0}))
    assert validate_main([str(tmp_path / "sessions")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"`sam-data transcripts {tmp_path / 'sessions'} OUT.jsonl`" in err
    assert "it holds 1 Strands Agents session conversation (read by the bedrock reader)" in err


def test_a_strands_line_logged_after_each_invocation_is_refused_saying_to_keep_the_last(tmp_path):
    """Documents behaviour (README's bedrock paragraph says to write a Strands agent's line once,
    when the conversation ends): a line after each invocation repeats the conversation so far, and the second is
    refused as the same conversation logged again, in one line saying to keep each id's last line."""
    log = tmp_path / "strands.jsonl"
    first = {"id": "claim-1", "system": "You are a claims assistant.", "messages": [*MESSAGES, ANSWER]}
    later = {**first, "messages": [*first["messages"], {"role": "user", "content": [{"text": "ok, go ahead"}]},
                                   {"role": "assistant", "content": [{"text": "Filed."}]}]}
    log.write_text(json.dumps(first) + "\n" + json.dumps(later) + "\n")
    with pytest.raises(TranscriptFormatError) as err:
        list(iter_transcript_events(log))
    message = str(err.value)
    assert message.startswith(f"{log}:2: duplicate conversation id 'claim-1'") and "\n" not in message
    assert "the same conversation logged again" in message and "keep each id's last line" in message
