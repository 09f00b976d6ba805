"""The validation holdout of a training config written as an agent log: exactly the run's validation
episodes of one source (never a training one), readable by the evaluation, and one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml
from test_transcripts import MESSAGES

from sam_model.evaluation.data import load_eval_data
from sam_model.io import SAMFileError
from sam_model.training.val_log import main, validation_log


def _config(tmp_path, **extra):
    tau = tmp_path / "agent-shop.json"
    tau.write_text(json.dumps([{"task_id": t, "trial": k, "traj": MESSAGES} for t in range(10) for k in range(4)]))
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"episode_id": f"d{i}", "step": s, "kind": "user", "text": f"x{i} {s}",
                                       **({"useful_memory_steps": [0]} if s == 2 else {})}) + "\n"
                           for i in range(20) for s in range(3)))
    data = {"train": [str(log), str(tau)], "val_fraction": 0.5, "transcript_split": "train", "repeat": [1, 3],
            "cache_dir": str(tmp_path / "cache"), **extra}
    base, over = tmp_path / "base.yaml", tmp_path / "over.yaml"
    base.write_text(yaml.safe_dump({"data": {**data, "val_fraction": 0.2}}))
    over.write_text(yaml.safe_dump({"data": data}))  # a later config replaces the earlier's keys
    return [base, over], data


def test_the_validation_log_holds_the_runs_validation_episodes_of_one_source(tmp_path):
    from sam_model.training.datamodule import AgentLogDataModule

    configs, data = _config(tmp_path)
    n_ep, n_ev = validation_log(configs, "agent-shop.json", tmp_path / "val.jsonl")
    dm = AgentLogDataModule(**data)
    dm.setup()
    val = {e for e in dm._val["episode_id"] if e.startswith("tau1")}
    written = [json.loads(line) for line in (tmp_path / "val.jsonl").read_text().splitlines()]
    assert {e["episode_id"] for e in written} == val and n_ep == len(val) > 0 and n_ev == len(written)
    assert not val & set(dm._train["episode_id"])
    assert load_eval_data(tmp_path / "val.jsonl", "episode").examples  # decision points to evaluate


def test_bad_sources_and_lives_are_one_line_errors(tmp_path, capsys):
    configs, _ = _config(tmp_path)
    with pytest.raises(SAMFileError, match="names 0 of the configs' data.train sources"):
        validation_log(configs, "nope.json", tmp_path / "v.jsonl")
    lives = tmp_path / "lives.yaml"
    lives.write_text(yaml.safe_dump({"data": {"lives": [1, 4]}}))
    with pytest.raises(SystemExit):
        main(["--config", str(configs[1]), "--config", str(lives), "--source", "agent-shop.json",
              "--out", str(tmp_path / "v.jsonl")])
    assert "data.lives is [1, 4]" in capsys.readouterr().err and not (tmp_path / "v.jsonl").exists()
