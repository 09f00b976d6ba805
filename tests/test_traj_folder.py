"""A folder of SWE-agent trajectories is training and evaluation data (sam-train ``data.train``, evaluate.py
``--data``), read as ``sam-data transcripts`` reads it: the same events, split groups (the instance ids) and
``--split``; ``data.repeat`` names it by its folder name; its cached conversion is keyed by every ``.traj`` in it,
so changing, adding or removing one re-converts; a folder of neither trajectories nor SGD dialogues is one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_swe_agent import text_history, write

from sam_model.data.sources import SourceOptions, materialise, source_kind
from sam_model.data.transcripts import held_out_groups, iter_transcript_events
from sam_model.evaluation.data import load_eval_data
from sam_model.evaluation.run import main as evaluate_main
from sam_model.io import SAMFileError
from sam_model.training.datamodule import AgentLogDataModule

INSTANCES = ("tinyparse-1", "tinyparse-2")


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two instances, each run by two configurations (as SWE-agent's output folder holds them): 4 episodes in 2
    split groups, with a notes file SWE-agent does not write beside them."""
    folder = tmp_path / "runs"
    for cfg in ("cfg-a", "cfg-b"):
        for instance in INSTANCES:
            write(folder, f"{cfg}/{instance}/{instance}.traj", {"history": text_history(), "info": {}})
    (folder / "notes.txt").write_text("not a trajectory")
    return folder


def episodes_of(events) -> dict[str, str]:
    """episode id -> its split group."""
    return {e["episode_id"]: e["meta"]["group"] for e in events}


def val_log(tmp_path: Path) -> Path:
    """An agent log to validate on (agent logs take no split), so each split of the folder trains alone."""
    lines = [{"episode_id": f"v{i}", "step": s, "kind": "user", "text": f"v{i} {s}",
              **({"useful_memory_steps": [0]} if s == 2 else {})} for i in range(2) for s in range(3)]
    path = tmp_path / "val.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_the_folder_is_a_transcript_source_converted_as_sam_data_transcripts_converts_it(runs, tmp_path):
    assert source_kind(runs) == "transcripts"
    for split in ("all", "train", "test"):
        log = materialise(runs, SourceOptions(split=split), tmp_path / "cache")
        cached = [json.loads(line) for line in log.read_text().splitlines()]
        assert cached == list(iter_transcript_events(runs, split=split)) != []


@pytest.mark.parametrize("split", ["all", "train", "test"])
def test_training_reads_the_folder_in_the_chosen_split_by_instance(runs, tmp_path, split):
    everything = episodes_of(iter_transcript_events(runs))
    assert len(everything) == 4 and set(everything.values()) == set(INSTANCES)
    test = held_out_groups(everything.values())
    want = {e for e, g in everything.items() if split == "all" or (g in test) == (split == "test")}
    assert 0 < len(want) <= len(everything)
    if split == "all":  # the validation holdout is by group: an instance's runs stay on one side
        dm = AgentLogDataModule(train=[str(runs)], val_fraction=0.5, transcript_split=split,
                                cache_dir=str(tmp_path / "cache"))
        dm.setup("fit")
        train, val = set(dm._train["episode_id"]), set(dm._val["episode_id"])
        assert train | val == want and not train & val
        assert {everything[e] for e in train}.isdisjoint({everything[e] for e in val})
        return
    dm = AgentLogDataModule(train=[str(runs) + "/"], val=[str(val_log(tmp_path))], transcript_split=split,
                            repeat={runs.name: 2}, cache_dir=str(tmp_path / "cache"))
    dm.setup("fit")
    assert set(dm._train["episode_id"]) == want and len(dm._train) == 2 * len(want)  # named by its folder name
    assert dm.vocab["data"]["sources"][0]["kind"] == "transcripts"


def test_evaluation_reads_the_folder_and_its_split(runs):
    for split in ("all", "test"):
        data = load_eval_data(runs, "episode", options=SourceOptions(split=split))
        events = list(iter_transcript_events(runs, split=split))
        assert data.n_decision_points == sum(1 for e in events if e.get("useful_memory_steps")) > 0
        assert {ex.episode_id for ex in data.examples} <= set(episodes_of(events))


def test_the_cache_reconverts_when_a_trajectory_inside_changes_is_added_or_removed(runs, tmp_path):
    cache = tmp_path / "cache"
    first = materialise(runs, cache_dir=cache)
    assert materialise(runs, cache_dir=cache) == first  # unchanged: the cached log is reused
    folder_time = runs.stat().st_mtime_ns
    changed = runs / "cfg-a" / INSTANCES[0] / f"{INSTANCES[0]}.traj"
    history = text_history()
    history[-1] = {**history[-1], "thought": "Submit the fix.", "content": "Submit the fix."}
    changed.write_text(json.dumps({"history": history}))
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert runs.stat().st_mtime_ns == folder_time  # the folder's own time misses it
    second = materialise(runs, cache_dir=cache)
    assert second != first and "Submit the fix." in second.read_text() and "Submit the fix." not in first.read_text()
    write(runs, "cfg-c/tinyparse-3/tinyparse-3.traj", {"history": text_history()})
    third = materialise(runs, cache_dir=cache)
    assert third not in (first, second) and "cfg-c_tinyparse-3_tinyparse-3" in third.read_text()
    (runs / "cfg-c" / "tinyparse-3" / "tinyparse-3.traj").unlink()
    assert materialise(runs, cache_dir=cache) == second


def test_a_folder_of_neither_trajectories_nor_sgd_dialogues_is_one_line(tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "sub" / "notes.json").write_text("{}")
    with pytest.raises(SAMFileError) as err:
        AgentLogDataModule(train=[str(empty)], cache_dir=str(tmp_path / "cache")).setup("fit")
    message = str(err.value)
    assert "\n" not in message and str(empty) in message
    assert "dialogues_*.json[.gz]" in message and ".traj[.gz]" in message  # what was looked for
    assert evaluate_main(["--retriever", str(tmp_path), "--data", str(empty), "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().err.strip()
    assert "\n" not in out and message in out


def test_an_sgd_split_edited_in_place_is_converted_again(tmp_path, shared_dir):
    """An SGD split's conversion was keyed by the folder's own size and time, which a dialogues file edited in place
    leaves as they were: the stale log was read on. Now every dialogues file's size and time are in the key."""
    from sam_model.data.sgd import iter_sgd_dialogues

    dev = shared_dir / "data" / "sgd" / "dev"
    if not dev.is_dir():
        pytest.skip(f"{dev} not present (the shared SGD data lives in ../shared/data/sgd)")
    dialogues = list(iter_sgd_dialogues(dev, max_dialogues=2))
    split = tmp_path / "dev"
    split.mkdir()
    f = split / "dialogues_001.json"
    f.write_text(json.dumps(dialogues[:1]))
    first = materialise(split, SourceOptions(), tmp_path / "cache")
    folder_time = split.stat().st_mtime_ns
    f.write_text(json.dumps(dialogues))
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert split.stat().st_mtime_ns == folder_time  # the folder itself did not change
    second = materialise(split, SourceOptions(), tmp_path / "cache")
    assert second != first and len(second.read_text().splitlines()) > len(first.read_text().splitlines())
