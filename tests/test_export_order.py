"""``train.py fit --export.used_order``: the export's store ordering set, or chosen on the run's validation
conversations (auto, sam_model.training.export_order), and off (unset) by default."""

from __future__ import annotations

import json

import pytest
from test_resume import _config

from sam_model.choose_order import ORDERS, pick
from sam_model.retriever import SAMRetriever
from sam_model.training.cli import main as train_main


def _fit(tmp_path, tiny_bert_dir, run: str, *extra: str):
    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    if not log.exists():
        write_synthetic(log, 20, seed=0)
    train_main(["fit", "--config", str(_config(tmp_path, run, log, tiny_bert_dir)), "--trainer.max_epochs=1", *extra])
    return tmp_path / run / "export"


def test_unset_exports_off_and_a_fixed_ordering_is_exported_as_given(tmp_path, tiny_bert_dir):
    plain = _fit(tmp_path, tiny_bert_dir, "plain")
    assert json.loads((plain / "config.json").read_text())["store"]["used_order"] is None
    fixed = _fit(tmp_path, tiny_bert_dir, "fixed", "--export.used_order=latest")
    assert SAMRetriever.load(fixed, device="cpu").store.config.used_order == "latest"
    assert "used_order_chosen" not in json.loads((fixed / "training.json").read_text())


def test_auto_chooses_on_the_runs_validation_conversations_and_the_export_serves_the_choice(tmp_path, tiny_bert_dir,
                                                                                        capsys):
    out = _fit(tmp_path, tiny_bert_dir, "auto", "--export.used_order=auto", "--export.used_order_on=[train.jsonl]")
    record = json.loads((out / "training.json").read_text())["used_order_chosen"]
    assert [r["used_order"] for r in record["table"]] == list(ORDERS)
    assert record["used_order"] == pick(record["table"])  # the rule, on the figures it wrote
    held = json.loads((out / "training.json").read_text())["data"]["val_episodes"]
    assert record["log"]["conversations"] == held  # every held-out conversation, and only those
    want = None if record["used_order"] == "off" else record["used_order"]
    assert json.loads((out / "config.json").read_text())["store"]["used_order"] == want
    assert SAMRetriever.load(out, device="cpu").store.config.used_order == want
    assert "## Used ordering chosen on validation" in (out / "README.md").read_text()
    assert "export.used_order auto: chose" in capsys.readouterr().out
    assert record["log"]["name"].endswith("of train.jsonl")


def test_the_sources_chosen_on_are_named_by_their_ends():
    from types import SimpleNamespace

    from sam_model.io import SAMFileError
    from sam_model.training.export_order import chosen_sources

    dm = SimpleNamespace(hparams=SimpleNamespace(val=[], train=["/d/sgd/train", "/d/coding/a.jsonl.gz"]))
    assert chosen_sources(dm, None) is None  # every source
    assert chosen_sources(dm, ["a.jsonl.gz"]) == ["/d/coding/a.jsonl.gz"]
    with pytest.raises(SAMFileError, match="export.used_order_on: 'b.jsonl' names 0"):
        chosen_sources(dm, ["b.jsonl"])


def test_the_option_says_every_choice_and_its_default(capsys):
    with pytest.raises(SystemExit):
        train_main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--export.used_order {off,model,latest,auto}" in text and "default: unset" in text
    assert "--export.used_order_on" in text and "default: every source" in text


def test_a_bare_off_in_yaml_is_named_with_the_quoting_that_fixes_it(tmp_path):
    from sam_model.io import SAMFileError

    cfg = tmp_path / "off.yaml"
    cfg.write_text("export:\n  used_order: off\n")  # YAML 1.1: false
    with pytest.raises(SAMFileError, match="write it quoted, used_order: 'off'"):
        train_main(["fit", "--config", "demo.yaml", "--config", str(cfg), "--print_config"])
