"""Splitting the configs into bases and overrides changes no run: every config (or stack of them) resolves to
what it resolved to before the split.

tests/fixtures/configs_before/ holds those resolved forms, made on main 64b53f7 before the split (see its
README.md): ``train.py fit --config ... --print_config`` for the training configs, and what the Janus
benchmarks' own loader made of their YAML files. Compared here, in process, against the same resolution now.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import sys
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BEFORE = REPO / "tests" / "fixtures" / "configs_before"

# fixture -> the config stack that replaces it
TRAINING = {
    "demo": ["demo.yaml"],
    "sgd": ["sgd.yaml"],
    "tools": ["tools.yaml"],
    "ddp": ["demo.yaml", "ddp.yaml"],
    "sgd_content_only": ["sgd.yaml", "content_only.yaml"],
    "tools_content_only": ["tools.yaml", "content_only.yaml"],
}
JANUS = {
    "janus_sgd": ["janus_sgd.yaml"],
    "janus_sgd_noisy": ["janus_sgd.yaml", "janus_sgd_noisy.yaml"],
    "janus_bank": ["janus_bank.yaml"],
}

# Keys the split added, with no effect of their own: ``experiment`` and ``run`` only name the checkpoint and
# log folders, and those folders are compared.
NEW_NAMES = ("experiment", "run")
# Options added after the split, at values that train and search exactly as before (off): issue 21's phase
# dropout, dense-state fusion, lexical re-rank, start from a pretrained model, known-value dropout and the task-opening
# flag; issue 24's chunked memories;
# issue 28's clipped query texts (0: the encoder reads up to max_length tokens of each, as before).
ADDED_OFF = {("model", "phase_dropout"): 0.0, ("model", "net", "state_content"): False,
             ("model", "store", "lexical"): 0.0, ("model", "init_from"): "",
             ("model", "store", "chunking"): None, ("data", "chunking"): None,
             # the used memories first, a search's rule (issues 21 and 24; StoreConfig.used_order), off
             ("model", "store", "used_order"): None,
             ("model", "net", "state_max_length"): 0, ("model", "net", "observation_max_length"): 0,
             # no teacher: the distillation's weight and temperature are read only with one
             ("model", "distill_from"): "", ("model", "distill_weight"): 1.0, ("model", "distill_temperature"): 0.05,
             ("model", "known_dropout"): 0.0,
             # issue 21's task-opening flag (sam_model.models.opening)
             ("model", "net", "task_opening"): False,
             # ... and the reuse-within-a-task part stacked on it (sam_model.models.reuse)
             ("model", "net", "task_reuse"): False,
             # ... and how recently the task used each memory, stacked on that (variant reuse-recent)
             ("model", "net", "task_recency"): False,
             # ... and the lexical weight learned in training (variant lexlearn; SAMConfig.lexical_learned)
             ("model", "net", "lexical_learned"): False,
             # ... and its head's own learning rate (0: the heads' lr, as before)
             ("model", "opening_lr"): 0.0,
             # ... and the learned lexical weight's own learning rate (variant lexfast; 0: the heads' lr)
             ("model", "lexical_lr"): 0.0,
             # ... and the loss of the served ranking (variant apart; off: the loss over every candidate)
             ("model", "used_apart"): False,
             # ... and the lexical weight read from the state (variant lexstate; SAMConfig.lexical_state), off, and
             # the store's per-query lexical weight it is served with (StoreConfig.lexical_per_query), off
             ("model", "net", "lexical_state"): False, ("model", "store", "lexical_per_query"): False,
             # ... and the reuse head trained on the whole ranking over that base (variant soft; off: as before)
             ("model", "reuse_soft"): False,
             # filled by sam-train before the model is made (which model.net fields the run set, whether it resumes),
             # never by a config
             ("model", "net_fields"): None, ("model", "resumed"): False,
             # a command-line choice to replace the run in the folder (sam-train ignores it in a config file)
             ("overwrite",): False,
             # the export's store ordering and lexical weight (sam_model.training.export_order): unset, the
             # config's model.store.used_order (off) and model.store.lexical (0)
             ("export",): {"used_order": None, "used_order_on": None, "lexical": None}}
# Set by train.py from the terminal, not by a config: a progress bar on a terminal, plain lines on a pipe.
MACHINE = (("trainer", "enable_progress_bar"),)

LR_MONITOR = {"class_path": "pytorch_lightning.callbacks.LearningRateMonitor",
              "init_args": {"logging_interval": "epoch", "log_momentum": False, "log_weight_decay": False}}
# The two values the split did change, deliberately, and why neither changes what is trained or found:
CHANGED = {
    # ddp.yaml now stacks on demo.yaml and gets its learning-rate monitor: it only writes the learning rate
    # to TensorBoard (no state in the checkpoint).
    "ddp": lambda before: before["trainer"]["callbacks"].append(LR_MONITOR),
    # one content_only.yaml for every dataset: tools' content-only model no longer carries tools.yaml's
    # slot_match 0.1, which its store never used (a content-only MemoryStore's slot_match is 0).
    "tools_content_only": lambda before: (before["model"].update(store=None), _repeat_by_name(before)),
    # tools.yaml names the source it repeats instead of giving a count per source: the same counts [1, 8] for
    # its sources (test_tools_repeat_reads_as_before), and a --data.train override is no longer refused.
    "tools": lambda before: _repeat_by_name(before),
}


def _repeat_by_name(before: dict) -> None:
    assert before["data"]["repeat"] == [1, 8]
    before["data"]["repeat"] = {"gpt-4o-airline.json.gz": 8}


def resolved_training(files: list[str]) -> dict:
    from sam_model.training.cli import main

    args = ["fit"] + [a for f in files for a in ("--config", str(REPO / "configs" / f))] + ["--print_config"]
    out = io.StringIO()
    with mock.patch.object(sys, "argv", ["train.py", *args]), redirect_stdout(out), \
            pytest.raises(SystemExit) as exit_:
        main(None)  # LightningCLI reads sys.argv, as from train.py
    assert exit_.value.code in (0, None), out.getvalue()
    return yaml.safe_load(out.getvalue())


def _drop(cfg: dict, *keys: tuple[str, ...]) -> dict:
    cfg = copy.deepcopy(cfg)
    for path in keys:
        node = cfg
        for k in path[:-1]:
            node = node.get(k) or {}
        node.pop(path[-1], None)
    return cfg


@pytest.mark.parametrize("name", sorted(TRAINING))
def test_training_config_resolves_as_before(name, monkeypatch):
    monkeypatch.chdir(REPO)  # the configs' relative data paths resolve as they do for train.py
    before = yaml.safe_load((BEFORE / f"{name}.yaml").read_text(encoding="utf-8"))
    CHANGED.get(name, lambda _: None)(before)
    now = resolved_training(TRAINING[name])
    assert now["experiment"] and now["run"] == now["trainer"]["logger"]["init_args"]["save_dir"].split("/")[-1]
    for path, off in ADDED_OFF.items():
        node = now
        for k in path:
            node = node[k] if node is not None else None  # a null store (content-only) has no search options
        assert node in (off, None) if path[-2:-1] == ("store",) else node == off, (path, node)
    assert _drop(now, *MACHINE, *ADDED_OFF, *((k,) for k in NEW_NAMES)) == _drop(before, *MACHINE)


def test_tools_repeat_reads_as_before(monkeypatch):
    """tools.yaml's repeat mapping gives its sources the counts the list gave; an override of data.train with one
    source of your own reads it once (the README recipe), where the list was refused."""
    from sam_model.training.datamodule import repeat_counts

    monkeypatch.chdir(REPO)
    data = resolved_training(["tools.yaml"])["data"]
    assert repeat_counts(data["train"], data["repeat"]) == [1, 8]
    assert repeat_counts(["my_logs.jsonl"], data["repeat"]) == [1]
    with pytest.raises(ValueError, match="one count per data.train source"):
        repeat_counts(["my_logs.jsonl"], [1, 8])


def resolved_janus(files: list[str]) -> dict:
    """What the benchmark runs with: its config, with the head benchmark's net as run_seed builds it."""
    from sam_model.bench import janus_config
    from sam_model.bench import janus_head as bench
    from sam_model.bench.janus_bank import BankBenchCfg

    argv = [a for f in files for a in ("--config", str(REPO / "configs" / f))]
    cls = BankBenchCfg if janus_config.stream_of(argv) == "bank" else bench.BenchCfg
    cfg, _ = janus_config.parse_config([*argv, "--out", "unused"], cls)
    out = dataclasses.asdict(cfg)
    assert out["janus"].pop("ema") == "vectors"  # new: the trigger's EMA of update vectors, as before (or directions)
    if cls is bench.BenchCfg:
        out["model"] = dataclasses.asdict(bench.net_config(cfg.model, [], []))
        assert out["model"].pop("state_content") is False  # issue 21's dense-state fusion, off
        assert out["model"].pop("task_opening") is False  # issue 21's task-opening flag, off
        assert out["model"].pop("task_reuse") is False  # and its reuse-within-a-task part, off
        assert out["model"].pop("task_recency") is False  # and its recency part, off
        assert out["model"].pop("lexical_learned") is False  # issue 21's lexical weight learned in training, off
        assert out["model"].pop("lexical_state") is False  # and the one read from the state, off
        for clip in ("state_max_length", "observation_max_length"):  # issue 28's clipped query texts, off
            assert out["model"].pop(clip) == 0
        assert out.pop("stream") == "head"  # new: which benchmark runs (the loader before had one class each)
    else:
        assert out.pop("gates") == []  # new: the sweep's --gates, a command-line option before, now a key
    return out


@pytest.mark.parametrize("name", sorted(JANUS))
def test_janus_config_resolves_as_before(name):
    before = yaml.safe_load((BEFORE / f"{name}.yaml").read_text(encoding="utf-8"))
    assert resolved_janus(JANUS[name]) == before


def test_an_override_changes_only_what_it_names(monkeypatch):
    """The check above can fail: content_only.yaml's one change shows up in the resolved form."""
    monkeypatch.chdir(REPO)
    base, ablation = resolved_training(["sgd.yaml"]), resolved_training(["sgd.yaml", "content_only.yaml"])
    assert ablation["model"]["net"]["query_input"] == "observation" != base["model"]["net"]["query_input"]
    assert ablation["trainer"]["callbacks"][0]["init_args"]["dirpath"] == "checkpoints/sgd_content_only"
    assert ablation["data"] == base["data"]


def test_the_more_sgd_finding_changes_only_the_mix_and_the_epochs(monkeypatch):
    """configs/sam-general-sgd3.yaml (issue 21's retrain with more SGD, a finding, not shipped) stacked on the
    shipped recipe changes SGD's share, the other sources' repeats, the epoch cap and its folder, nothing else;
    each repeat names a data.train source (a name that misses one is ignored, and the worlds were read once)."""
    from sam_model.training.datamodule import repeat_counts

    monkeypatch.chdir(REPO)
    shipped = resolved_training(["tools.yaml", "sam-general.yaml"])
    finding = resolved_training(["tools.yaml", "sam-general.yaml", "sam-general-sgd3.yaml"])
    assert finding["data"]["sgd_every"] < shipped["data"]["sgd_every"]
    counts, repeat = repeat_counts(finding["data"]["train"], finding["data"]["repeat"]), finding["data"]["repeat"]
    assert sorted(counts[1:]) == sorted(repeat.values()) and counts[0] == 1, (counts, repeat)  # SGD read once
    assert finding["trainer"]["callbacks"][0]["init_args"]["dirpath"] == "checkpoints/sam-general-sgd3"
    assert "toolworlds:600" in finding["data"]["train"]  # the worlds it was measured with, not today's shipped ones
    changed = [("trainer", "max_epochs"), ("data", "sgd_every"), ("data", "repeat"), ("data", "train"),
               ("seed_everything",), ("trainer", "logger"), ("trainer", "callbacks"), *((k,) for k in NEW_NAMES)]
    assert _drop(finding, *changed) == _drop(shipped, *changed)


def test_the_sgd6_finding_doubles_the_mix_and_changes_nothing_else(monkeypatch):
    """configs/sam-general-sgd6.yaml (issue 21: twice the shipped SGD share, a finding, not shipped): one SGD
    dialogue in 6, every other source read twice as often as shipped (the mix keeps its proportions), its own
    folder; the worlds, epochs and seed are the shipped ones."""
    from sam_model.training.datamodule import repeat_counts

    monkeypatch.chdir(REPO)
    shipped = resolved_training(["tools.yaml", "sam-general.yaml"])
    finding = resolved_training(["tools.yaml", "sam-general.yaml", "sam-general-sgd6.yaml"])
    assert 2 * finding["data"]["sgd_every"] == shipped["data"]["sgd_every"]
    twice = [2 * c for c in repeat_counts(shipped["data"]["train"], shipped["data"]["repeat"])[1:]]
    assert repeat_counts(finding["data"]["train"], finding["data"]["repeat"]) == [1, *twice]
    assert finding["trainer"]["callbacks"][0]["init_args"]["dirpath"] == "checkpoints/sam-general-sgd6"
    changed = [("data", "sgd_every"), ("data", "repeat"), ("trainer", "logger"), ("trainer", "callbacks"),
               *((k,) for k in NEW_NAMES)]
    assert _drop(finding, *changed) == _drop(shipped, *changed)


def test_a_bad_override_is_one_line_naming_its_file_and_key(tmp_path, capsys, monkeypatch):
    from sam_model.bench.janus_config import parse_config
    from sam_model.bench.janus_head import BenchCfg
    from sam_model.io import SAMFileError
    from sam_model.training.cli import run

    monkeypatch.chdir(REPO)
    bad = tmp_path / "mine.yaml"
    bad.write_text("model:\n  net:\n    colour: 3\n")
    argv = ["fit", "--config", "configs/sgd.yaml", "--config", str(bad), "--print_config"]
    monkeypatch.setattr(sys, "argv", ["train.py", *argv])
    assert run(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: model.net.colour: unknown key"), err
    bad.write_text("janus:\n  beta: high\n")
    with pytest.raises(SAMFileError, match=f"^{bad}: janus.beta: expected float"):
        parse_config(["--config", "configs/janus_sgd.yaml", "--config", str(bad), "--out", "unused"], BenchCfg)


def test_a_janus_override_given_alone_is_refused_not_run_on_defaults(capsys, monkeypatch):
    from sam_model.bench import janus, janus_config

    monkeypatch.chdir(REPO)
    assert janus.main(["--config", "configs/janus_sgd_noisy.yaml", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "configs/janus_sgd_noisy.yaml sets no data.train: it is an override" in err[0], err
    assert janus_config.override_alone(["--config", "configs/janus_sgd.yaml", "--config", "configs/janus_sgd_noisy.yaml"]) is None
    assert janus_config.override_alone(["--config", "configs/janus_bank.yaml"]) is None


@pytest.mark.parametrize("files,clips,folder", [(["short-texts.yaml"], (48, 8), "sam-general-short"),
                                                (["short-texts.yaml", "short-texts-40.yaml"], (40, 8),
                                                 "sam-general-short40")])
def test_the_short_texts_findings_change_only_what_the_model_reads(monkeypatch, files, clips, folder):
    """configs/short-texts.yaml and short-texts-40.yaml (issue 28: the shipped recipe trained to read shorter query
    texts, findings, not shipped) set the two clips and their own folder; the data, the epochs and the seed are the
    shipped recipe's."""
    monkeypatch.chdir(REPO)
    shipped = resolved_training(["tools.yaml", "sam-general.yaml"])
    finding = resolved_training(["tools.yaml", "sam-general.yaml", *files])
    net = finding["model"]["net"]
    assert (net["state_max_length"], net["observation_max_length"]) == clips
    assert 0 < net["observation_max_length"] < net["state_max_length"] < net["max_length"]
    assert finding["trainer"]["callbacks"][0]["init_args"]["dirpath"] == f"checkpoints/{folder}"
    changed = [("model", "net", "state_max_length"), ("model", "net", "observation_max_length"),
               ("trainer", "logger"), ("trainer", "callbacks"), *((k,) for k in NEW_NAMES)]
    assert _drop(finding, *changed) == _drop(shipped, *changed)


def test_the_distill_finding_starts_from_and_learns_from_the_shipped_head(monkeypatch):
    """configs/distill-40.yaml (issue 28, a finding): the shipped recipe's data, epochs and seed, started from the
    packaged head and distilled from it, reading 40 + 8 tokens, at half the learning rate."""
    monkeypatch.chdir(REPO)
    shipped = resolved_training(["tools.yaml", "sam-general.yaml"])
    finding = resolved_training(["tools.yaml", "sam-general.yaml", "distill-40.yaml"])
    model = finding["model"]
    assert model["init_from"] == model["distill_from"] == "sam-general" and model["lr"] == 0.0005
    assert (model["net"]["state_max_length"], model["net"]["observation_max_length"]) == (40, 8)
    assert finding["trainer"]["callbacks"][0]["init_args"]["dirpath"] == "checkpoints/distill-40"
    changed = [("model", "net", "state_max_length"), ("model", "net", "observation_max_length"),
               ("model", "init_from"), ("model", "distill_from"), ("model", "lr"),
               ("trainer", "logger"), ("trainer", "callbacks"), *((k,) for k in NEW_NAMES)]
    assert _drop(finding, *changed) == _drop(shipped, *changed)


def test_coding_adopts_the_reuse_flags_and_the_ordering_chosen_on_its_agent_and_coding_plain_undoes_both(
        monkeypatch):
    """configs/coding.yaml took task_opening + task_reuse and export.used_order auto on the coding agent's holdout
    (README "Used ordering chosen on validation", by the rule fixed before its results); configs/coding_plain.yaml
    stacked last gives the recipe before it back, every other key as coding.yaml resolves it."""
    monkeypatch.chdir(REPO)
    now = resolved_training(["tools.yaml", "coding.yaml"])
    plain = resolved_training(["tools.yaml", "coding.yaml", "coding_plain.yaml"])
    assert now["model"]["net"]["task_opening"] and now["model"]["net"]["task_reuse"]
    assert now["export"]["used_order"] == "auto"
    (on,) = now["export"]["used_order_on"]
    assert [p for p in now["data"]["train"] if p.endswith(on)] == [p for p in now["data"]["train"] if "coding" in p]
    assert not plain["model"]["net"]["task_opening"] and not plain["model"]["net"]["task_reuse"]
    assert plain["export"] == {"used_order": "off", "used_order_on": None, "lexical": None}
    adopted = [("model", "net", "task_opening"), ("model", "net", "task_reuse"), ("export",)]
    assert _drop(now, *adopted) == _drop(plain, *adopted)


def test_adapt_chooses_the_lexical_weight_with_the_ordering(monkeypatch):
    """adapt.yaml's export chose the ordering alone; since 2026-12-07 the lexical weight too (export.lexical auto,
    adopted by the rule fixed before docs/benchmarks/adapt-curve.md's runs), and auto needs the ordering's auto."""
    monkeypatch.chdir(REPO)
    export = resolved_training(["adapt.yaml"])["export"]
    assert export["used_order"] == "auto" and export["lexical"] == "auto"
