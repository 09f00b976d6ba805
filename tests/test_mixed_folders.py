"""A folder of agent runs in more than one layout (SWE-agent ``.traj`` files, session stores, OpenHands V1
conversations, OpenHands 0.x ``.json`` trajectories) is read whole, each run by its layout's reader: the first
layout found was read alone and every other run skipped without a word (one ``.traj`` beside fifty OpenHands runs
read one run). A ``.json`` beside the other layouts is a run only when it holds a list of events (``preds.json``,
``base_state.json``, ``metadata.json`` are records); episode ids stay unique across layouts; the cached conversion
is keyed by every layout's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_openhands import codeact_run
from test_openhands_v1 import coding_run, save
from test_sessions import openhands_session, strands_messages, write_agent
from test_swe_agent import convert, text_history, write

from sam_model.data.sources import materialise, source_kind
from sam_model.data.transcripts import main
from sam_model.io import SAMFileError


def episodes(events: list[dict]) -> set[str]:
    return {e["episode_id"] for e in events}


def alone(tmp_path: Path, run: list[dict], name: str) -> list[dict]:
    """The events of an OpenHands run saved as one .json and read by itself."""
    return convert(write(tmp_path / "alone", f"{name}.json", run))[0]


def test_a_traj_beside_openhands_trajectories_reads_every_run(tmp_path):
    folder = tmp_path / "runs"
    write(folder, "tinyparse-1/tinyparse-1.traj", {"history": text_history(), "info": {}})
    write(folder, "preds.json", {"tinyparse-1": {"instance_id": "tinyparse-1", "model_patch": "",
                                                 "model_name_or_path": "gpt"}})  # SWE-agent's: no run
    for sid in ("a1b2c3", "d4e5f6"):
        write(folder, f"{sid}.json", codeact_run())
    assert source_kind(folder) == "transcripts"
    events, report = convert(folder)
    assert report.formats == {"swe-agent": 1, "openhands": 2}
    assert episodes(events) == {"tinyparse-1_tinyparse-1", "a1b2c3", "d4e5f6"}
    assert [e for e in events if e["episode_id"] == "a1b2c3"] == alone(tmp_path, codeact_run(), "a1b2c3")


@pytest.mark.parametrize("where", ["d4e5f6", "conversations/d4e5f6"])
def test_0x_sessions_beside_v1_conversations_read_both(tmp_path, where):
    """An OpenHands home: 0.x sessions (sessions/<sid>/events/<N>.json) and V1 conversations side by side."""
    root = tmp_path / "openhands"
    openhands_session(root, "a1b2c3")
    save(root / where, coding_run())
    events, report = convert(root)
    assert report.formats == {"openhands": 1, "openhands-v1": 1}
    assert episodes(events) == {"a1b2c3", where.replace("/", "_")}
    v1_alone, _ = convert(root / where)  # the same events, named by the conversation's path in the folder
    mine = [e for e in events if e["episode_id"] != "a1b2c3"]
    assert [{k: v for k, v in e.items() if k != "meta"} for e in mine] == [
        {**{k: v for k, v in e.items() if k != "meta"}, "episode_id": where.replace("/", "_")} for e in v1_alone]
    assert {e.get("meta", {}).get("group", e["episode_id"]) for e in mine} == {"d4e5f6"}  # grouped by conversation


def test_a_v1_conversation_beside_0x_trajectories_reads_both_and_takes_no_record_for_a_run(tmp_path):
    folder = tmp_path / "runs"
    save(folder / "d4e5f6", coding_run())
    write(folder, "a1b2c3.json", codeact_run())
    write(folder, "metadata.json", {"conversation_id": "a1b2c3", "title": "fix tinyparse"})
    events, report = convert(folder)
    assert report.formats == {"openhands-v1": 1, "openhands": 1}
    assert episodes(events) == {"d4e5f6", "a1b2c3"}
    assert [e for e in events if e["episode_id"] == "a1b2c3"] == alone(tmp_path, codeact_run(), "a1b2c3")


def test_a_strands_store_beside_swe_agent_runs_reads_both(tmp_path):
    folder = tmp_path / "runs"
    write_agent(folder / "strands", "s1", "default", strands_messages())
    write(folder, "swe/tinyparse-1/tinyparse-1.traj", {"history": text_history(), "info": {}})
    events, report = convert(folder)
    assert report.formats == {"swe-agent": 1, "bedrock": 1}
    assert episodes(events) == {"swe_tinyparse-1_tinyparse-1", "s1_default"}


def test_the_same_run_as_a_session_and_as_its_saved_json_is_one_line_and_skip_bad_keeps_one(tmp_path, capsys):
    root = tmp_path / "openhands"
    openhands_session(root, "a1b2c3")
    write(root, "a1b2c3.json", codeact_run())
    out = tmp_path / "o.jsonl"
    assert main([str(root), str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{root / 'a1b2c3.json'}: duplicate conversation id 'a1b2c3'" in err, err
    assert main([str(root), str(out), "--skip-bad"]) == 0
    assert {json.loads(line)["episode_id"] for line in out.read_text().splitlines()} == {"a1b2c3"}


def test_the_cache_reconverts_when_a_run_of_another_layout_is_added(tmp_path):
    folder = tmp_path / "runs"
    write(folder, "tinyparse-1/tinyparse-1.traj", {"history": text_history(), "info": {}})
    cache = tmp_path / "cache"
    first = materialise(folder, cache_dir=cache)
    assert materialise(folder, cache_dir=cache) == first
    write(folder, "a1b2c3.json", codeact_run())
    second = materialise(folder, cache_dir=cache)
    assert second != first and '"a1b2c3"' in second.read_text() and '"a1b2c3"' not in first.read_text()
    save(folder / "d4e5f6", coding_run())
    third = materialise(folder, cache_dir=cache)
    assert third not in (first, second) and '"d4e5f6"' in third.read_text()
    write(folder, "preds.json", {})  # a record, no run: nothing to convert again
    assert materialise(folder, cache_dir=cache) == third


@pytest.mark.parametrize("runs, says", [
    ({"tinyparse-1/tinyparse-1.traj": {"history": text_history(), "info": {}}}, "(swe-agent, such as tinyparse-1"),
    ({"a1b2c3.json": codeact_run()}, "(openhands, such as a1b2c3.json)"),
])
def test_agent_runs_beside_an_sgd_split_are_refused_naming_both(tmp_path, runs, says):
    """A folder of SGD dialogues_*.json files was read as an SGD split, and the agent runs beside them were skipped
    without a word; it is refused naming both and what to do. The split's own files (its dialogues and schema.json,
    JSON lists both) and a record beside them (an object) are no runs: such a folder is an SGD split as before."""
    folder = tmp_path / "mixed"
    write(folder, "dialogues_001.json", [])
    write(folder, "schema.json", [])
    write(folder, "notes.json", {"source": "sgd"})
    assert source_kind(folder) == "sgd"
    for name, run in runs.items():
        write(folder, name, run)
    for read in (source_kind, materialise):
        with pytest.raises(SAMFileError) as err:
            read(folder)
        assert str(err.value).count("\n") == 0 and says in str(err.value), err.value
        assert f"{folder} holds both an SGD split (dialogues_*.json files) and agent runs" in str(err.value)
        assert "give each its own folder" in str(err.value)
