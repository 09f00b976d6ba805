"""What a user mistypes in a training run's options is named in one line, before any data or model is read."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("option, value", [
    ("label", "orign"), ("transcript_split", "tst"), ("on_error", "ignore"), ("seed", "-1"),
    ("num_workers", "-1"), ("max_dialogues", "0"), ("max_val_dialogues", "0"), ("sgd_every", "0"),
    ("lives", "[1, 0]"),
])
def test_a_bad_data_option_is_named_before_the_data_is_read(tmp_path, capsys, option, value):
    """Found walking through "Train on your own logs": a typo in data.label or data.transcript_split trained on
    agent logs without a word (they ignore it) and on transcripts said "split must be one of" naming no option;
    data.max_dialogues 0 blamed the converted cache file ("no events; the log is empty"); a bad on_error, seed or
    num_workers surfaced from inside the data loading. The data path here does not exist: the option is checked
    first, so the message is about the option."""
    from sam_model.training.cli import run as train

    missing = tmp_path / "not-read.jsonl"
    args = ["fit", "--config", str(REPO / "configs" / "demo.yaml"), "--data.train", f"[{missing}]",
            f"--data.{option}", value, f"--data.cache_dir={tmp_path / 'cache'}"]
    assert train(args) == 1
    err = capsys.readouterr().err.strip()
    assert f"data.{option} must" in err and "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    assert not (tmp_path / "cache").exists()  # nothing was converted
