"""Agent logs → Hugging Face datasets: same content as the reader, streamed, offline, cached by file version."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import datasets
import pytest

from sam_model.data import hf
from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import read_episodes
from sam_model.data.schema import LogFormatError, State
from sam_model.data.text import state_to_text


def ev(episode_id: str, step: int, labels=None, **state) -> dict:
    out = {"episode_id": episode_id, "step": step, "kind": "user", "text": f"{episode_id}-{step} ü", "state": state}
    if labels is not None:
        out["useful_memory_steps"] = labels
    return out


LINES = [
    ev("a", 1, phase="clarify", constraints={"city": "Paris"}),
    ev("b", 0, phase="x", subgoal_stack=["g"], mood="calm"),
    ev("a", 0, phase="clarify"),
    ev("a", 4, [0, 1], phase="book", uncertainty_flags=["date"], constraints={"city": "Paris", "n": [1, 2]}),
    ev("b", 2, [0]),
]


def test_episode_rows_equal_the_reader(write_log, tmp_path):
    path = write_log(LINES)
    ds = hf.episodes_to_dataset(path, cache_dir=tmp_path / "cache")
    episodes = read_episodes(path)
    assert ds.num_rows == len(episodes)
    for row, ep in zip(ds, episodes):
        assert row["episode_id"] == ep.episode_id
        assert row["steps"] == [e.step for e in ep.events]
        assert row["kinds"] == [e.kind for e in ep.events] and row["texts"] == [e.text for e in ep.events]
        assert row["phases"] == [e.state.phase for e in ep.events]
        assert row["memory_texts"] == [m.text for m in episode_memories(ep)]
        assert row["state_texts"] == [state_to_text(e.state) for e in ep.events]
        assert row["labels"] == [list(e.useful_memory_steps or ()) for e in ep.events]
        assert [State.from_json(json.loads(s)) for s in row["state_json"]] == [e.state for e in ep.events]


def test_example_rows_equal_iter_examples(write_log, tmp_path):
    path = write_log(LINES)
    ds = hf.examples_to_dataset(path, cache_dir=tmp_path / "cache")
    episodes = read_episodes(path)
    memories = [m for ep in episodes for m in episode_memories(ep)]
    examples = list(iter_examples(episodes))
    assert ds.num_rows == len(examples) == 2
    for row, ex in zip(ds, examples):
        assert (row["episode_id"], row["step"], row["observation"]) == (ex.episode_id, ex.step, ex.observation)
        assert (row["episode_start"], row["cutoff"]) == (ex.episode_start, ex.cutoff)
        assert row["state_text"] == ex.state_text and State.from_json(json.loads(row["state_json"])) == ex.state
        assert set(row["relevant_ids"]) == ex.relevant_ids
        assert {memories[i].id for i in row["relevant_positions"]} == ex.relevant_ids
        assert all(row["episode_start"] <= i < row["cutoff"] for i in row["relevant_positions"])


def test_conversion_streams_through_from_generator(write_log, tmp_path, monkeypatch):
    """Rows come from a generator over the streaming reader; nothing builds the table in memory first."""
    calls = []
    real = datasets.Dataset.from_generator

    def spy(generator, **kw):
        calls.append((generator, kw))
        return real(generator, **kw)

    monkeypatch.setattr(datasets.Dataset, "from_generator", spy)
    path = write_log(LINES)
    hf.episodes_to_dataset([path], cache_dir=tmp_path / "cache")
    hf.examples_to_dataset([path], cache_dir=tmp_path / "cache")
    assert [c[0] for c in calls] == [hf._episode_rows, hf._example_rows]
    rows = hf._episode_rows((str(path),), "raise")
    assert iter(rows) is rows  # a generator, consumed row by row
    assert next(rows)["episode_id"] == "a"
    assert not any(isinstance(v, list) for _, kw in calls for v in kw["gen_kwargs"].values())  # no sharding


def test_bad_log_raises_the_reader_error_and_skip_keeps_good_rows(write_log, tmp_path):
    path = write_log([*LINES, ev("c", 0), '{"episode_id": "c", "step": 1}'])
    with pytest.raises(LogFormatError, match="^" + re.escape(f"{path}:7: missing required field 'kind'")):
        hf.episodes_to_dataset(path, cache_dir=tmp_path / "cache")
    ds = hf.episodes_to_dataset(path, on_error="skip", cache_dir=tmp_path / "cache")
    assert ds["episode_id"] == ["a", "b", "c"]
    with pytest.raises(FileNotFoundError, match="agent log not found"):
        hf.episodes_to_dataset(tmp_path / "nope.jsonl", cache_dir=tmp_path / "cache")
    with pytest.raises(ValueError, match="on_error"):
        hf.episodes_to_dataset(path, on_error="ignore", cache_dir=tmp_path / "cache")


def test_cache_goes_to_cache_dir_and_an_edited_log_is_converted_again(write_log, tmp_path):
    cache = tmp_path / "cache"
    path = write_log(LINES)
    assert hf.episodes_to_dataset(path, cache_dir=cache).num_rows == 2
    assert any(cache.rglob("*.arrow"))
    path.write_text(path.read_text() + json.dumps(ev("new", 0)) + "\n")
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse-clock file systems
    assert hf.episodes_to_dataset(path, cache_dir=cache)["episode_id"] == ["a", "b", "new"]


def test_works_offline_with_the_default_cache(write_log, tmp_path):
    path = write_log(LINES, "log.jsonl.gz")
    cache = tmp_path / "hf-default-cache"
    script = textwrap.dedent(
        f"""
        from sam_model.data.hf import episodes_to_dataset, examples_to_dataset
        print(episodes_to_dataset({str(path)!r}).num_rows, examples_to_dataset({str(path)!r}).num_rows)
        """
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(cache)}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "2"]
    assert any(cache.rglob("*.arrow"))
