"""Where the changes of one day met (readers, session folders, failure flags, search by call, add in any format):
each test here is a place where one change undid or bypassed another, and fails on the code before its fix."""

from __future__ import annotations

import json

import pytest

from sam_model.data import sources


def _pairs_line() -> str:
    """An older OpenHands evaluation line: [action, observation] pairs whose observations name no cause."""
    null = {"observation": "null", "content": "", "extras": {}, "message": "No observation"}
    history = [
        [{"source": "user", "action": "message", "args": {"content": "tinyparse crashes on an empty header block"}},
         {"source": "agent", **null}],
        [{"source": "agent", "action": "run", "args": {"command": "grep -rl parse_header src"}},
         {"source": "agent", "observation": "run", "content": "src/tinyparse/reader.py\r\n", "extras": {}}],
        [{"source": "agent", "action": "read", "args": {"path": "src/tinyparse/reader.py"}},
         {"source": "agent", "observation": "read", "content": "def parse_header", "extras": {}}]]
    return json.dumps({"instance_id": "tinyparse__tinyparse-1", "history": history}) + "\n"


def test_a_log_converted_before_the_openhands_pairs_were_read_is_converted_again(tmp_path, monkeypatch):
    """The causeless [action, observation] pairs of an older OpenHands evaluation changed from user turns to the
    actions' results after CONVERSION_VERSION 7 was set, with no new version ('same stop as the reader'), so
    train.py and evaluate.py kept a conversion cached under 7 by the reader before it (the cache is per machine)."""
    path = tmp_path / "output.jsonl"
    path.write_text(_pairs_line())
    monkeypatch.setattr(sources, "CONVERSION_VERSION", 7)
    old = sources.materialise(path, cache_dir=tmp_path / "cache")
    old.write_text(old.read_text().replace('"kind": "result"', '"kind": "user"'))  # what the reader wrote then
    monkeypatch.undo()
    new = sources.materialise(path, cache_dir=tmp_path / "cache")
    assert new != old
    assert [json.loads(line)["kind"] for line in new.read_text().splitlines()].count("result") == 2


def test_an_openhands_event_a_line_given_as_an_agent_log_is_not_sent_to_a_reader_that_refuses_it(tmp_path, capsys):
    """validate (and train.py, evaluate.py) told a .jsonl of OpenHands events, one a line, to 'convert it with
    sam-data transcripts (train.py and evaluate.py take transcripts as they are)' (the container keys' hint, which
    took action / observation in): sam-data transcripts refuses such a line as an event alone, and train.py reads
    the file as an agent log, so the advice went round in a circle. It now says how to write the run."""
    from sam_model.data.transcripts import iter_transcript_events
    from sam_model.data.validate import main
    from sam_model.io import SAMFileError

    events = [{"id": 0, "source": "user", "action": "message", "args": {"content": "fix the header parser"}},
              {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls src"}},
              {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "reader.py", "extras": {}}]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(SAMFileError, match="OpenHands event alone"):  # where the advice sent the user
        list(iter_transcript_events(path))
    assert main([str(path)]) == 1
    said = capsys.readouterr()
    said = said.out + said.err
    assert "events.jsonl:1: missing required field 'episode_id'" in said
    assert "looks like a tool-call transcript" not in said
    assert "write the run's events as one list" in said


def test_a_conversation_line_given_as_an_agent_log_is_still_told_to_convert(tmp_path, capsys):
    from sam_model.data.validate import main

    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert main([str(path)]) == 1
    said = capsys.readouterr()
    assert "looks like a tool-call transcript" in said.out + said.err


def _strands_folder(root):
    """A Strands Agents session store: one agent's two messages, a call and its result."""
    messages = root / "session_s1" / "agents" / "agent_a1" / "messages"
    messages.mkdir(parents=True)
    said = [{"role": "user", "content": [{"text": "my order is ORD-4412"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "track",
                                                           "input": {"order": "ORD-4412"}}}]}]
    for n, m in enumerate(said):
        (messages / f"message_{n}.json").write_text(json.dumps({"message": m, "message_id": n}))
    return root


def test_the_commands_that_take_a_folder_say_they_take_a_session_folder(tmp_path):
    """Session folders came after sam-eval's --data and sam-train's --data.train help was brought up to date with
    the new readers, so both (and the refusal of a path not found) still named trajectory folders and SGD splits
    alone, while both take a Strands or OpenHands session folder (README: 'and session folders directly')."""
    from sam_model.evaluation.run import build_parser
    from sam_model.io import SAMFileError
    from sam_model.training.datamodule import AgentLogDataModule

    folder = _strands_folder(tmp_path / "store")
    assert sources.source_kind(folder) == "transcripts"  # what the help is about
    data = next(a for a in build_parser()._actions if a.dest == "data").help
    train = AgentLogDataModule.__doc__.split("train:", 1)[1].split("val:", 1)[0]
    with pytest.raises(SAMFileError) as missing:
        sources.source_kind(tmp_path / "nowhere")
    for text in (data, train, str(missing.value)):
        assert "session folder" in " ".join(text.split()), text


def test_a_swe_agent_run_s_own_error_is_not_sent_to_the_openai_reader(tmp_path):
    """The hint naming the reader of a conversation forced through another's (5a66294) was added to every reader's
    refusal, and for a SWE-agent 1.x history, which holds OpenAI's tool_calls, it named them: a bad history item of
    a run read by its own reader said 'which the openai reader reads: try --format openai', a reader that refuses
    the file. Its own reader's refusal now stands alone; one forced through another's still names it."""
    from pathlib import Path

    from sam_model.data.transcripts import iter_transcript_events
    from sam_model.io import SAMFileError

    run = json.loads((Path(__file__).resolve().parents[1] / "examples" / "logs" / "swe-agent.traj").read_text())
    item = next(i for i, m in enumerate(run["history"]) if m.get("tool_calls")) + 1
    run["history"][item]["content"] = 5
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(run))
    with pytest.raises(SAMFileError) as own:
        list(iter_transcript_events(path))
    assert f"history item {item}: 'content' is a number" in str(own.value)
    assert "--format" not in str(own.value) and "openai reader" not in str(own.value)
    chats = tmp_path / "chats.jsonl"  # Gemini contents forced through the bedrock reader: named, as before
    chats.write_text(json.dumps({"id": "c1", "contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": "hi"}}}]}]}) + "\n")
    with pytest.raises(SAMFileError, match="which the gemini reader reads: try --format gemini"):
        list(iter_transcript_events(chats, format="bedrock"))


def test_live_state_reads_only_the_conversation_of_the_scopes_given():
    """ScopedMemory.live_state(call=...) (README: 'gives the state alone', 'only the conversation of exactly the
    scopes given feeds it') did not check its scopes as search does, so user_id="mia/bot" read the conversation
    of user mia with agent bot, another combination's state."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "user", "content": "my booking is ABC123"}, {"role": "user", "content": "cancel it please"}],
               user_id="mia", agent_id="bot")
    call = {"name": "cancel", "arguments": {"booking": "ABC123"}}
    assert memory.live_state(user_id="mia", agent_id="bot", call=call).uncertainty_flags == ("booking",)
    for bad in ({"user_id": "mia/bot"}, {"user_id": "mia", "run_id": "/x"}):
        with pytest.raises(ValueError, match="must be a non-empty string without '/'"):
            memory.live_state(**bad, call=call)
        with pytest.raises(ValueError, match="must be a non-empty string without '/'"):
            memory.live_state(**bad)
        with pytest.raises(ValueError, match="must be a non-empty string without '/'"):  # a batching server's step
            memory.query_input("", **bad, call=call)
    assert memory.live_state(user_id="mia", call=call).uncertainty_flags == ()  # its own (empty) conversation


@pytest.mark.parametrize("forced", ["swe-agent", "openhands", "openhands-v1", "gemini", "openai"])
def test_a_format_forced_on_a_folder_its_files_do_not_have_is_refused_in_one_line(tmp_path, capsys, forced):
    """--format was passed over for a folder (swe-agent, openhands, openhands-v1 and bedrock read it with the
    readers its files tell, a Strands store by the bedrock reader under --format swe-agent), or, for another
    format, the folder was 'a transcript file that is a folder (give ... or a session folder)', the very thing
    given. A folder's --format is now the reader of every layout it holds or refused, naming what it holds."""
    from sam_model.data.transcripts import main

    folder = _strands_folder(tmp_path / "store")
    out = tmp_path / "o.jsonl"
    assert main([str(folder), str(out), "--format", forced]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --format {forced} does not read {folder}: it holds 1 Strands Agents session conversation "
                   "(read by the bedrock reader); drop --format (a folder's files tell their reader, each run its own)"
                   f", or give one file of the {forced} format"]
    assert not out.exists()
    assert main([str(folder), str(out), "--format", "bedrock"]) == 0  # its own reader, forced or told
    assert main([str(folder), str(out), "--force"]) == 0


def test_a_format_forced_on_a_folder_of_several_layouts_is_refused_unless_it_reads_every_one(tmp_path, capsys):
    """A folder of SWE-agent runs and OpenHands trajectories under --format swe-agent read the OpenHands runs by
    their own reader all the same; it is refused now, naming each layout, how many runs and its reader."""
    from test_openhands import codeact_run
    from test_swe_agent import text_history, write

    from sam_model.data.transcripts import main

    folder = tmp_path / "runs"
    write(folder, "tinyparse-1/tinyparse-1.traj", {"history": text_history(), "info": {}})
    for sid in ("a1b2c3", "d4e5f6"):
        write(folder, f"{sid}.json", codeact_run())
    out = tmp_path / "o.jsonl"
    assert main([str(folder), str(out), "--format", "swe-agent"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --format swe-agent does not read every run of {folder}: it holds 1 SWE-agent trajectory "
                   "file (.traj) (read by the swe-agent reader), 2 OpenHands trajectory files (.json) (read by the "
                   "openhands or openhands-v1 reader); drop --format (a folder's files tell their reader, each run its "
                   "own), or give its swe-agent runs alone"]
    assert not out.exists()
    assert main([str(folder), str(out)]) == 0
    assert main([str(folder / "tinyparse-1"), str(out), "--format", "swe-agent"]) == 0  # its own reader's runs alone


def test_a_v1_conversation_folder_is_read_under_its_own_format_and_refused_under_0x(tmp_path, capsys):
    """--format openhands on an OpenHands V1 conversation folder read it by the V1 reader all the same."""
    from test_openhands_v1 import coding_run, save

    from sam_model.data.transcripts import main

    folder = save(tmp_path / "d4e5f6", coding_run())
    out = tmp_path / "o.jsonl"
    assert main([str(folder), str(out), "--format", "openhands"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --format openhands does not read {folder}: it holds 1 OpenHands V1 conversation (read by "
                   "the openhands-v1 reader); drop --format (a folder's files tell their reader, each run its own), or "
                   "give one file of the openhands format"]
    assert not out.exists()
    assert main([str(folder), str(out), "--format", "openhands-v1"]) == 0
    assert main([str(folder), str(out), "--force"]) == 0
