"""Honest resume: last.ckpt is written after every epoch, and a run killed mid-epoch and resumed from it
ends exactly where the uninterrupted run ends (epochs, global step, weights, validation metrics)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import yaml

from sam_model.io import SAMFileError
from sam_model.training.cli import main as train_main

REPO = Path(__file__).resolve().parents[1]
EPOCHS, KILL_EPOCH = 3, 1

KILLER = textwrap.dedent("""
    import os, signal
    import pytorch_lightning as pl

    class KillMidEpoch(pl.Callback):
        \"\"\"SIGKILL this process at the second batch of epoch ``epoch``: a crash, not a clean stop.\"\"\"

        def __init__(self, epoch: int = 0):
            self.epoch = epoch

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if trainer.current_epoch == self.epoch and batch_idx == 1:
                os.kill(os.getpid(), signal.SIGKILL)
""")


def _config(tmp_path: Path, run: str, log: Path, bert: Path, kill: bool = False, tensorboard: bool = False) -> Path:
    """configs/demo.yaml with its checkpoint callbacks as they are, on tiny data and a tiny model; with
    ``tensorboard``, the demo's TensorBoard logger, writing into the checkpoint folder (``tmp_path/run/tb``)."""
    cfg = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    trainer = cfg["trainer"]
    logger = {"class_path": "pytorch_lightning.loggers.TensorBoardLogger",
              "init_args": {"save_dir": str(tmp_path / run), "name": "tb"}} if tensorboard else False
    trainer.update(max_epochs=EPOCHS, logger=logger, enable_progress_bar=False, enable_model_summary=False,
                   default_root_dir=str(tmp_path / run), accelerator="cpu")
    callbacks = [c for c in trainer["callbacks"] if "LearningRateMonitor" not in c["class_path"]]
    for c in callbacks:
        if "dirpath" in c.get("init_args", {}):
            c["init_args"]["dirpath"] = str(tmp_path / run)
    if kill:
        callbacks.append({"class_path": "resume_killer.KillMidEpoch", "init_args": {"epoch": KILL_EPOCH}})
    trainer["callbacks"] = callbacks
    cfg["model"]["net"].update(bert_path=str(bert), dim=16, hidden=32, proj_hidden=16, max_length=48)
    cfg["model"].update(text_cache_dir="", warmup_steps=2)
    cfg["data"].update(train=[str(log)], batch_episodes=4, cache_dir=str(tmp_path / "cache"))
    path = tmp_path / f"{run}{'-kill' if kill else ''}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _state(ckpt: Path) -> dict:
    return torch.load(ckpt, map_location="cpu", weights_only=True)


def _monitor(state: dict, kind: str) -> dict:
    (value,) = [v for k, v in state["callbacks"].items() if k.startswith(kind) and "val/mrr" in k]
    return value


@pytest.mark.slow
def test_killed_mid_epoch_and_resumed_equals_uninterrupted(tmp_path, tiny_bert_dir):
    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 20, seed=0)
    (tmp_path / "resume_killer.py").write_text(KILLER)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    killed = subprocess.Popen([sys.executable, "train.py", "fit", "--config",
                               str(_config(tmp_path, "b", log, tiny_bert_dir, kill=True))],
                              cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    train_main(["fit", "--config", str(_config(tmp_path, "a", log, tiny_bert_dir))])  # uninterrupted, meanwhile
    _, err = killed.communicate(timeout=300)
    assert killed.returncode == -signal.SIGKILL, err[-2000:]
    last = tmp_path / "b" / "last.ckpt"
    interrupted = _state(last)
    assert interrupted["epoch"] == KILL_EPOCH - 1, "last.ckpt must be the last finished epoch"

    train_main(["fit", "--config", str(_config(tmp_path, "b", log, tiny_bert_dir)), f"--ckpt_path={last}"])

    a, b = _state(tmp_path / "a" / "last.ckpt"), _state(last)
    assert (a["epoch"], a["global_step"]) == (b["epoch"], b["global_step"]) == (EPOCHS - 1, a["global_step"])
    assert a["global_step"] > interrupted["global_step"]
    assert a["state_dict"].keys() == b["state_dict"].keys()
    for k, v in a["state_dict"].items():
        torch.testing.assert_close(b["state_dict"][k], v, rtol=0, atol=1e-6, msg=k)
    ma, mb = _monitor(a, "ModelCheckpoint"), _monitor(b, "ModelCheckpoint")
    assert float(ma["current_score"]) == pytest.approx(float(mb["current_score"]), abs=1e-6)
    assert float(ma["best_model_score"]) == pytest.approx(float(mb["best_model_score"]), abs=1e-6)
    ea, eb = _monitor(a, "EarlyStopping"), _monitor(b, "EarlyStopping")
    assert (ea["wait_count"], ea["stopped_epoch"]) == (eb["wait_count"], eb["stopped_epoch"])


def test_a_resume_on_logs_with_other_phases_is_refused_before_any_weight_loads(tmp_path, tiny_bert_dir):
    """The vocabularies were rebuilt from the resumed run's logs: a renamed tool silently moved every trained phase
    row to another name (same count), an added one was a size-mismatch traceback (found by review)."""
    import json

    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "v", log, tiny_bert_dir)
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    phase = json.loads(log.read_text().splitlines()[0])["state"]["phase"]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(line.replace(f'"phase": "{phase}"', f'"phase": "{phase}_v2"') + "\n"
                               for line in log.read_text().splitlines()))
    with pytest.raises(SAMFileError, match=rf"new: \['{phase}_v2'\]; not in these logs: \['{phase}'\]\): resume"):
        train_main(["fit", "--config", str(cfg), f"--data.train=[{renamed}]", "--trainer.max_epochs=2",
                    f"--ckpt_path={tmp_path / 'v' / 'last.ckpt'}"])


def test_a_fresh_run_does_not_warn_that_its_checkpoint_folder_is_not_empty(tmp_path, tiny_bert_dir, recwarn):
    """Found by a walkthrough: after ``rm -rf checkpoints`` a first run warned "Checkpoint directory ... exists and
    is not empty": the run's own TensorBoard logs and config, written there first. A re-run over checkpoints asked
    for with --overwrite does not warn either (a re-run without it is refused)."""
    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "w", log, tiny_bert_dir, tensorboard=True)

    def warned() -> bool:
        found = any("exists and is not empty" in str(w.message) for w in recwarn.list)
        recwarn.clear()
        return found

    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    assert (tmp_path / "w" / "tb").is_dir() and (tmp_path / "w" / "last.ckpt").is_file()
    # nor that the frozen BERT is in eval mode ("may lead to unexpected behavior"): it is so on purpose
    assert not any("in eval mode at the start of training" in str(w.message) for w in recwarn.list)
    assert not warned()
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1", "--overwrite"])  # replaced on purpose
    assert not warned()


def test_a_fresh_run_into_another_runs_folder_is_refused_or_replaces_it_whole(tmp_path, tiny_bert_dir, capsys):
    """A re-run into a folder holding another run's checkpoints overwrote its last.ckpt and export and left its
    best-epoch=NN.ckpt beside the new run's best (a listing or a resume saw another run's best). It is refused in
    one line, nothing touched; ``--overwrite`` deletes the earlier run's files once the new run saved its first
    checkpoint, so a run that fails before that leaves the earlier one whole."""
    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.cli import run as train

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "o", log, tiny_bert_dir)
    folder = tmp_path / "o"
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    [best] = folder.glob("best-*.ckpt")
    best.rename(folder / "best-epoch=07.ckpt")  # the earlier run's best was a later epoch than the new one's
    before = {p.name: p.read_bytes() for p in folder.glob("*.ckpt")}
    assert (folder / "export").is_dir() and len(before) == 2
    capsys.readouterr()
    assert train(["fit", "--config", str(cfg), "--trainer.max_epochs=1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {folder} holds the checkpoints of an earlier run"), err
    assert f"--ckpt_path {folder / 'last.ckpt'}" in err and "--run NAME" in err and "--overwrite" in err
    assert {p.name: p.read_bytes() for p in folder.glob("*.ckpt")} == before
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert train(["fit", "--config", str(cfg), f"--data.train=[{empty}]", "--overwrite"]) == 1  # fails before a save
    assert {p.name: p.read_bytes() for p in folder.glob("*.ckpt")} == before and (folder / "export").is_dir()
    (folder / "export" / "old-marker").write_text("the earlier run's export")
    assert train(["fit", "--config", str(cfg), "--trainer.max_epochs=1", "--overwrite"]) == 0
    now = sorted(p.name for p in folder.glob("*.ckpt"))
    assert now == ["best-epoch=00.ckpt", "last.ckpt"], now
    assert _state(folder / "last.ckpt")["epoch"] == 0
    assert (folder / "export" / "config.json").is_file() and not (folder / "export" / "old-marker").exists()


def test_overwrite_replaces_the_earlier_runs_tensorboard_logs_once_the_new_run_saved(tmp_path, tiny_bert_dir):
    """``--overwrite`` deleted the earlier run's checkpoints and export but left its TensorBoard ``version_N``
    folders, so the new run's plots sat beside the old run's. They go with the checkpoints, after the new run's first
    save (a run that fails before it leaves them); where the logger's version is fixed, the earlier event files."""
    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.cli import run as train

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "tb", log, tiny_bert_dir, tensorboard=True)
    tb = tmp_path / "tb" / "tb"
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    (tb / "version_3").mkdir()  # an earlier run's own earlier logs
    (tb / "version_3" / "events.out.tfevents.old").write_text("")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert train(["fit", "--config", str(cfg), f"--data.train=[{empty}]", "--overwrite"]) == 1  # fails before a save
    assert sorted(p.name for p in tb.iterdir()) == ["version_0", "version_3"]
    assert train(["fit", "--config", str(cfg), "--trainer.max_epochs=1", "--overwrite"]) == 0
    [new] = tb.iterdir()
    assert new.name == "version_4" and list(new.glob("events.out.tfevents.*"))
    fixed = ["fit", "--config", str(cfg), "--trainer.max_epochs=1", "--overwrite",
             "--trainer.logger.init_args.version=fixed"]
    assert train(fixed) == 0
    [folder] = tb.iterdir()  # version_4 went too
    events = {p.name for p in folder.glob("events.out.tfevents.*")}
    assert folder.name == "fixed" and len(events) == 1
    assert train(fixed) == 0  # into the earlier run's own folder: its event file goes, this run's stays
    again = {p.name for p in folder.glob("events.out.tfevents.*")}
    assert len(again) == 1 and again != events


def test_resuming_a_run_that_stopped_early_trains_nothing(tmp_path, tiny_bert_dir, capsys):
    """Lightning does not keep that the trainer should stop: a resume of an early-stopped run trained one more epoch
    (and stopped again)."""
    import yaml as _yaml

    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "e", log, tiny_bert_dir)
    data = _yaml.safe_load(cfg.read_text())
    for c in data["trainer"]["callbacks"]:  # nothing is better by 1.0 MRR: stops after epoch 1
        if "EarlyStopping" in c["class_path"]:
            c["init_args"].update(patience=1, min_delta=1.0)
    data["trainer"]["max_epochs"] = 5
    cfg.write_text(_yaml.safe_dump(data))
    train_main(["fit", "--config", str(cfg)])
    last = tmp_path / "e" / "last.ckpt"
    before = _state(last)
    assert before["epoch"] == 1 and _monitor(before, "EarlyStopping")["stopped_epoch"] == 1
    capsys.readouterr()
    train_main(["fit", "--config", str(cfg), f"--ckpt_path={last}"])
    assert "stopped early after epoch 1" in capsys.readouterr().out
    after = _state(last)
    assert (after["epoch"], after["global_step"]) == (before["epoch"], before["global_step"])


def test_a_resume_from_another_folder_finds_a_relative_bert_path_the_checkpoint_recorded(tmp_path, tiny_bert_dir,
                                                                                        monkeypatch, capsys):
    """A checkpoint written before bert_path was recorded absolute holds it as given ('mybert'); its hyper-parameters
    win over the config on a resume, so a resume from another folder said 'text encoder folder not found: mybert'
    whatever the command line gave. It is found beside the checkpoint's folders now (tests/test_bad_inputs.py has
    loading and the one-line error)."""
    import shutil

    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    cfg = _config(tmp_path, "rel", log, tiny_bert_dir)
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    shutil.copytree(tiny_bert_dir, tmp_path / "mybert")  # the folder the run trained in: tmp_path
    last = tmp_path / "rel" / "last.ckpt"
    state = _state(last)
    state["hyper_parameters"]["net"]["bert_path"] = "mybert"
    torch.save(state, last)
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=2", f"--ckpt_path={last}"])
    after = _state(last)
    assert after["epoch"] == 1 and after["hyper_parameters"]["net"]["bert_path"] == str((tmp_path / "mybert").resolve())
    state = _state(last)
    state["hyper_parameters"]["net"]["bert_path"] = "gone"
    torch.save(state, last)
    with pytest.raises(SAMFileError, match=rf"^{last}: field 'hyper_parameters.net.bert_path' is the folder 'gone'"):
        train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=3", f"--ckpt_path={last}"])


def test_a_run_started_from_init_from_resumes_without_that_folder(tmp_path, tiny_bert_dir):
    """A resume rebuilt the model from ``model.init_from`` before loading the checkpoint's weights over all of it, so
    it failed once the start's folder was gone (moved, deleted, or relative to another folder), though nothing of it
    was used. The checkpoint's network is resumed; its record still names the start."""
    import shutil

    from sam_model.data.synthetic import write_synthetic
    from sam_model.export import save_exported
    from sam_model.models.sam import SAMConfig, SAMNet

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 12, seed=0)
    start = save_exported(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=16,
                                           max_length=48)), tmp_path / "start")
    cfg = _config(tmp_path, "from", log, tiny_bert_dir)
    data = yaml.safe_load(cfg.read_text())
    data["model"].pop("net")  # the start's architecture, as adapt.yaml
    data["model"]["init_from"] = str(start)
    cfg.write_text(yaml.safe_dump(data))
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1"])
    shutil.rmtree(start)
    last = tmp_path / "from" / "last.ckpt"
    before = _state(last)
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=2", f"--ckpt_path={last}"])  # was: not found
    after = _state(last)
    assert after["epoch"] == 1 and after["global_step"] > before["global_step"]
    assert after["hyper_parameters"]["init_from"] == str(start)
    assert after["hyper_parameters"]["net"] == before["hyper_parameters"]["net"]
