"""Leftovers of the log importers: the hint of a file without tool calls names every format's call fields, a
forced reader's refusal names the reader that would read the file, SWE-agent runs of one instance share a split
group, and long conversions show progress (also into a file)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from sam_model.data import formats, transcripts
from sam_model.data.sgd import iter_sgd_dialogues
from sam_model.data.sources import materialise
from sam_model.data.transcripts import iter_transcript_events, main


def test_a_file_without_tool_fields_names_every_formats_call_fields(tmp_path, capsys):
    """The hint was written by hand and missed OpenHands' actions, Gemini's functionCall and Bedrock's toolUse
    as formats were added: it is told from the formats' marks now."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": [{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": "hello"}]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "no tool call was read" in err and err.count("\n") == 1
    for what, fmt in formats._MARKS:
        assert what in err, (what, fmt)
    assert {fmt for _, fmt in formats._MARKS} >= set(formats.FORMATS) - {"tau1"}  # tau1's calls are openai's


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "logs"


@pytest.mark.parametrize("log, forced, reader", [
    ("gemini.jsonl", "bedrock", "gemini"),  # "role 'model' is not a Converse role"
    ("gemini.jsonl", "anthropic", "gemini"),
    ("gemini.jsonl", "responses", "gemini"),
    ("gemini.jsonl", "tau2", "gemini"),
    ("gemini.jsonl", "langchain", "gemini"),  # "not a LangChain message"
    ("bedrock.jsonl", "gemini", "bedrock"),  # "role 'assistant' is not a Gemini role"
    ("gemini.jsonl", "otel", "gemini"),  # "expected OTLP JSON"
    ("openai.jsonl", "swe-agent", "openai"),  # "not a SWE-agent trajectory"
    ("anthropic.jsonl", "openhands", "anthropic"),  # "not an OpenHands trajectory"
    ("swe-agent.traj", "openhands", "swe-agent"),  # its history holds OpenAI tool_calls too: SWE-agent's reader
    ("swe-agent.traj", "openai", "swe-agent"),  # "expected a conversation"
])
def test_a_forced_readers_refusal_names_the_reader_that_reads_the_file(log, forced, reader, tmp_path, capsys):
    """A reader's refusal of another format's role or shape said only what it expected: the user who forced the
    wrong --format was not told which one reads the file."""
    assert main([str(EXAMPLES / log), str(tmp_path / "o.jsonl"), "--format", forced]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith(f"which the {reader} reader reads: try --format {reader}"), err
    assert "--skip-bad" not in err  # skipping would skip every conversation


def test_a_bad_role_in_a_log_of_the_readers_own_format_names_no_other_reader(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a", "contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "assistant", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "not a Gemini role" in err and "--format" not in err and "--skip-bad" in err


def swe_run(instance: str | None, model: str) -> dict:
    """A SWE-agent 1.x run as its .traj holds it (sweagent/agent/agents.py, get_trajectory_data): the history, and
    the run's config as the JSON string ``replay_config`` whose problem_statement.id is the instance (None: a 0.x
    run, which records none)."""
    config = None if instance is None else json.dumps({
        "env": {"deployment": {"image": "python:3.11"}, "name": instance}, "agent": {"model": {"name": model}},
        "problem_statement": {"text": f"fix {instance}", "id": instance, "type": "text", "extra_fields": {}}})
    history = [{"role": "system", "content": "You fix bugs.", "agent": "main", "message_type": "system_prompt"},
               {"role": "user", "content": f"Fix the bug of {instance}.", "agent": "main",
                "message_type": "observation"},
               {"role": "assistant", "content": "Look.", "thought": "Look.", "action": "find_file reader.py",
                "agent": "main", "message_type": "action"},
               {"role": "user", "content": "src/reader.py", "agent": "main", "message_type": "observation"},
               {"role": "assistant", "content": "Open it.", "thought": "Open it.", "action": "open src/reader.py",
                "agent": "main", "message_type": "action"},
               {"role": "user", "content": "[File: src/reader.py]", "agent": "main", "message_type": "observation"}]
    return {"trajectory": [], "history": history, "info": {"exit_status": "submitted"}, "replay_config": config,
            "environment": instance or "swe_main"}


def test_swe_agent_runs_of_one_instance_in_a_jsonl_stay_on_one_side_of_the_split(tmp_path):
    """A .jsonl of runs made each line its own split group: the runs of one instance by several models fell on both
    sides, and the test split held instances trained on. The run's replay_config names its instance."""
    instances = [f"org__repo-{i}" for i in range(10)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(swe_run(i, m)) + "\n" for m in ("gpt", "claude", "qwen") for i in instances))
    sides = {}
    for split in ("train", "test"):
        events = list(iter_transcript_events(path, split=split))
        assert {e["meta"]["group"] for e in events} <= set(instances)
        sides[split] = {e["meta"]["group"] for e in events}
        per_instance = Counter(group for _, group in {(e["episode_id"], e["meta"]["group"]) for e in events})
        assert set(per_instance.values()) == {3}, per_instance  # all three models' runs of each
    assert sides["train"] and sides["test"] and not sides["train"] & sides["test"]
    assert sides["train"] | sides["test"] == set(instances)


def test_a_run_without_an_instance_is_grouped_by_its_file_and_a_bad_config_is_one_line(tmp_path, capsys):
    old = tmp_path / "org__repo-7.traj"
    old.write_text(json.dumps(swe_run(None, "gpt")))  # 0.x: no replay_config
    assert {e["meta"]["group"] for e in iter_transcript_events(old) if "meta" in e} <= {"org__repo-7"}
    renamed = tmp_path / "copy.traj"
    renamed.write_text(json.dumps(swe_run("org__repo-7", "gpt")))
    assert {e["meta"]["group"] for e in iter_transcript_events(renamed)} == {"org__repo-7"}
    bad = tmp_path / "bad.traj"
    bad.write_text(json.dumps({**swe_run("x", "gpt"), "replay_config": "{not json"}))
    assert main([str(bad), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{bad}: 'replay_config' is not JSON" in err, err


def test_a_conversion_into_a_file_shows_progress_lines_and_the_final_count(tmp_path, monkeypatch):
    """`sam-data transcripts BIG OUT 2> log` converted thousands of conversations without a word; it counts them
    now (a bar on a terminal, lines into a file), and a folder's files against their total. PROGRESS_AFTER_S is
    set to 0 so this small input shows what a long one does (the default keeps a quick one, and its error, quiet)."""
    monkeypatch.setattr(transcripts, "PROGRESS_AFTER_S", 0)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(swe_run(f"org__repo-{i}", "gpt")) + "\n" for i in range(7)))
    out = tmp_path / "o.jsonl"
    with open(tmp_path / "log.txt", "w") as log:
        monkeypatch.setattr(sys, "stderr", log)
        assert main([str(path), str(out), "--split", "train"]) == 0
    text = (tmp_path / "log.txt").read_bytes().decode()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].startswith("grouping runs.jsonl (--split): 0 conversations")
    assert any(line.startswith("grouping runs.jsonl (--split): 7 conversations") for line in lines)
    assert lines[-1].startswith("converting runs.jsonl: 7 conversations"), lines  # every one read, out of split too
    assert [json.loads(line) for line in out.read_text().splitlines()] == list(
        iter_transcript_events(path, split="train"))  # the log is what it was without progress

    runs = tmp_path / "runs"
    for i in range(3):
        (runs / f"org__repo-{i}").mkdir(parents=True)
        (runs / f"org__repo-{i}" / f"org__repo-{i}.traj").write_text(json.dumps(swe_run(f"org__repo-{i}", "gpt")))
    with open(tmp_path / "log2.txt", "w") as log:
        monkeypatch.setattr(sys, "stderr", log)
        assert main([str(runs), str(tmp_path / "o2.jsonl")]) == 0
    last = (tmp_path / "log2.txt").read_text().splitlines()[-1]
    assert last.startswith("converting runs: 100%") and "3/3" in last and "3 conversations" in last, last


def test_training_and_evaluations_conversions_show_progress(tmp_path, monkeypatch, capsys, shared_dir):
    """train.py and evaluate.py convert a transcript file or an SGD split into the cache (sources.materialise), as
    long as sam-data does and as silent: they count what they convert now."""
    monkeypatch.setattr(transcripts, "PROGRESS_AFTER_S", 0)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(swe_run(f"org__repo-{i}", "gpt")) + "\n" for i in range(4)))
    log = materialise(path, cache_dir=tmp_path / "cache")
    err = capsys.readouterr().err
    assert "\r" not in err and err.splitlines()[-1].startswith("converting runs.jsonl: 4 conversations"), err
    assert [json.loads(line) for line in log.read_text().splitlines()] == list(iter_transcript_events(path))

    split = tmp_path / "sgd"
    split.mkdir()
    (split / "dialogues_001.json").write_text(json.dumps(list(iter_sgd_dialogues(shared_dir / "data" / "sgd" / "dev",
                                                                                 max_dialogues=3))))
    materialise(split, cache_dir=tmp_path / "cache")
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("converting sgd: 3 dialogues"), err



def test_a_quiet_evaluation_shows_no_conversion_progress(tmp_path, monkeypatch, capsys, shared_dir):
    """evaluate(quiet=True) printed the count of its SGD split's (or transcript file's) conversion
    (sources.materialise) on stderr; quiet is quiet now, and without it the count is still shown."""
    from sam_model.evaluation.run import evaluate

    monkeypatch.setattr(transcripts, "PROGRESS_AFTER_S", 0)
    split = tmp_path / "sgd"
    split.mkdir()
    (split / "dialogues_001.json").write_text(json.dumps(list(iter_sgd_dialogues(shared_dir / "data" / "sgd" / "dev",
                                                                                 max_dialogues=3))))
    for quiet, cache in ((True, "quiet"), (False, "loud")):
        monkeypatch.setenv("SAM_CACHE_DIR", str(tmp_path / cache))  # a conversion each: a cached one shows nothing
        evaluate(split, tmp_path / cache / "report", None, baselines=["recency"], latency_queries=1, quiet=quiet)
        err = capsys.readouterr().err
        assert err == "" if quiet else "converting sgd: 3 dialogues" in err, err
