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


@pytest.mark.parametrize("option, value", [
    ("net.projection", "diagonal"), ("net.pooling", "max"), ("net.query_input", "obs"), ("net.alpha", "1.5"),
    ("net.dropout", "1.5"), ("positives", "every"), ("warmup_steps", "-5"), ("temperature", "0.005"),
])
def test_a_bad_model_option_is_named_by_its_key(tmp_path, capsys, option, value):
    """Found walking through "Train on your own logs": --model.net.projection diagonal said "projection must be
    one of ...", --model.net.dropout 1.5 torch's "dropout probability has to be between 0 and 1", --model.positives
    a loss's message, none naming the key; a negative --model.warmup_steps trained as 1 without a word; a
    --model.temperature below 0.01 trained at 0.01 (the loss clamps 1/τ at 100)."""
    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.cli import run as train

    log = tmp_path / "log.jsonl"
    write_synthetic(log, 4, seed=0)
    args = ["fit", "--config", str(REPO / "configs" / "demo.yaml"), "--data.train", f"[{log}]",
            f"--model.{option}", value, f"--data.cache_dir={tmp_path / 'cache'}", "--model.text_cache_dir="]
    assert train(args) == 1
    err = capsys.readouterr().err.strip()
    assert f"model.{option}" in err and "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err


def test_a_run_folder_given_as_the_export_names_the_export_inside(tmp_path, capsys):
    """Found walking through "Export and use the retriever": SAMRetriever.load("checkpoints/adapt") (or
    --model.init_from, or python -m sam_model.export with it) said "not a complete export: config.json is missing
    (export it again)", which sends the user to re-export a run that has its export; now it names what to give."""
    from sam_model.export import main as export
    from sam_model.io import SAMFileError
    from sam_model.retriever import SAMRetriever

    run = tmp_path / "checkpoints" / "adapt"
    (run / "export").mkdir(parents=True)
    (run / "last.ckpt").write_bytes(b"not read")
    with pytest.raises(SAMFileError, match="not an export: give .*adapt/last.ckpt"):
        SAMRetriever.load(run)
    (run / "export" / "config.json").write_text("{}")
    with pytest.raises(SAMFileError, match=r"training run's folder \(last.ckpt\), not an export: give .*adapt/export"):
        SAMRetriever.load(run)
    assert export([str(run), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert f"give {run / 'export'}" in err and len(err.splitlines()) == 1, err
    (tmp_path / "other").mkdir()  # a folder with neither keeps the message it had
    with pytest.raises(SAMFileError, match="not a complete export: config.json is missing"):
        SAMRetriever.load(tmp_path / "other")


def test_training_warns_of_fields_the_log_format_does_not_define_cold_and_warm(tmp_path, caplog):
    """Found walking through "Train on your own logs": a log whose decision points spelt ``useful_steps`` trained
    on the other decision points without a word (the field is kept, never read: half the labels were gone);
    only sam-data validate said so. Training's conversion now warns in one line per file, naming the field and
    its count, also when the converted rows come from the cache."""
    import json
    import logging

    from sam_model.data.hf import episodes_to_dataset

    log = tmp_path / "log.jsonl"
    events = [{"episode_id": "e", "step": i, "kind": "user", "text": f"t{i}", "state": {"phase": "p"}}
              for i in range(4)]
    events[2]["useful_steps"], events[3]["useful_memory_steps"] = [0], [1]
    events[1]["state"]["phse"] = "typo"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    for _ in ("cold", "warm"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="sam_model.data.hf"):
            episodes_to_dataset(log, cache_dir=tmp_path / "cache")
        lines = [r.getMessage() for r in caplog.records if "does not define" in r.getMessage()]
        assert len(lines) == 1, lines
        assert f"{log}: " in lines[0] and "useful_steps (1 events)" in lines[0] and "state.phse (1 events)" in lines[0]
    caplog.clear()
    clean = tmp_path / "clean.jsonl"
    clean.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "useful_steps"}) + "\n"
                             for e in events[:1]))
    episodes_to_dataset(clean, cache_dir=tmp_path / "cache")
    assert not [r for r in caplog.records if "does not define" in r.getMessage()]


def test_run_over_a_printed_config_is_refused_instead_of_overwriting_the_other_run(tmp_path, capsys, monkeypatch):
    """Found walking through "Train on your own logs": a config saved from --print_config has checkpoints/${run}
    resolved (checkpoints/demo), so `--config saved.yaml --run mine` trained into checkpoints/demo, over that run's
    last.ckpt and export, while the user expected checkpoints/mine. Now it is one line before anything runs."""
    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.cli import run as train

    monkeypatch.chdir(tmp_path)
    log = tmp_path / "log.jsonl"
    write_synthetic(log, 4, seed=0)
    base = ["fit", "--config", str(REPO / "configs" / "demo.yaml"), "--data.train", f"[{log}]"]
    with pytest.raises(SystemExit):
        train([*base, "--print_config"])
    saved = tmp_path / "saved.yaml"
    saved.write_text(capsys.readouterr().out)
    assert "checkpoints/demo" in saved.read_text()
    assert train(["fit", "--config", str(saved), "--run", "mine", "--model.text_cache_dir="]) == 1
    err = capsys.readouterr().err.strip()
    assert "--run mine: the config writes to checkpoints/demo" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "checkpoints").exists()
