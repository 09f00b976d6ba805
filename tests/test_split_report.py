"""A fit says what it trains and validates on, and warns when validation is too small to pick an epoch by.

Found by a user adapting the default model to 48 conversations of their own ("Train on your own logs"): the run
split them 41 / 7 and read 3 batches an epoch without a word, so nothing said that the validation MRR choosing
best-epoch=NN.ckpt (and stopping early) rested on a few dozen decisions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _module(tmp_path, **kw):
    from sam_model.training.datamodule import AgentLogDataModule

    return AgentLogDataModule(**kw, cache_dir=str(tmp_path / "cache"))


def _split_line(out: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith("data: ") and "training" in ln]
    assert len(lines) == 1, out
    return lines[0]


def _numbers(line: str) -> dict[str, tuple[int, int]]:
    """{"training": (conversations, decision points), "validation": (...)} as the split line gives them."""
    found = re.findall(r"(training|validation) (\d+) conversations \((\d+) decision points\)", line)
    return {side: (int(c), int(d)) for side, c, d in found}


def test_setup_says_the_split_and_warns_of_few_validation_decisions(tmp_path, capsys):
    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "chats.jsonl"
    counts = write_synthetic(log, 48, seed=0)
    dm = _module(tmp_path, train=[str(log)], val_fraction=0.15, lives=[1, 8], batch_episodes=16)
    dm.setup("fit")
    dm.setup("validate")  # said once, not per stage
    out, err = capsys.readouterr()
    line = _split_line(out)
    assert line.startswith(f"data: chats.jsonl: {counts['episodes']} conversations, "
                           f"{counts['decision_points']} decision points, {counts['events']} memories -> "), line
    sides = _numbers(line)
    val = round(0.15 * counts["episodes"])
    assert sides["validation"][0] == val and sides["training"][0] == counts["episodes"] - val, line
    assert sides["training"][1] + sides["validation"][1] == counts["decision_points"], line
    assert "val_fraction 0.15 held out by conversation (seed 0)" in line, line
    batches = -(-len(dm._train) // 16)  # the rows with the lives of 8
    assert f"an epoch is {batches} batches of 16 ({len(dm._train)} rows with the lives of 8)" in line, line
    warnings = [ln for ln in err.splitlines() if ln.startswith("warning: validation")]
    assert len(warnings) == 1, err
    assert f"only {sides['validation'][1]} decision points ({val} conversations)" in warnings[0]
    assert "best-epoch" in warnings[0] and "--data.val_fraction (now 0.15)" in warnings[0], warnings[0]


def test_enough_validation_decisions_give_no_warning(tmp_path, capsys):
    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    log = tmp_path / "chats.jsonl"
    write_synthetic(log, 48, seed=0)
    _module(tmp_path, train=[str(log)], val_fraction=0.5).setup("fit")
    out, err = capsys.readouterr()
    assert _numbers(_split_line(out))["validation"][1] >= MIN_VAL_DECISIONS, out
    assert "warning" not in err, err


def test_several_sources_get_a_line_each_and_groups_are_named(tmp_path, capsys):
    """Conversations sharing a ``group`` are held out together, and the line says so; a source read more often
    than once says that too."""
    from sam_model.data.synthetic import write_synthetic

    first, second, grouped = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "grouped.jsonl"
    write_synthetic(first, 30, seed=0)
    b = write_synthetic(second, 20, seed=1)
    lines, groups = [], set()
    for text in second.read_text().splitlines():  # two conversations a group
        event = json.loads(text)
        group = f"g{int(event['episode_id'].rsplit('-', 1)[1]) // 2}"
        event["meta"] = {**event.get("meta", {}), "group": group}
        lines.append(json.dumps(event))
        groups.add(group)
    grouped.write_text("\n".join(lines) + "\n")
    dm = _module(tmp_path, train=[str(first), str(grouped)], repeat={"grouped.jsonl": 2}, val_fraction=0.2)
    dm.setup("fit")
    out = capsys.readouterr().out.splitlines()
    sources = [ln for ln in out if ln.startswith("data: ") and "training" not in ln]
    assert sources[0].startswith("data: a.jsonl: 30 conversations, "), sources
    assert sources[1].startswith(f"data: grouped.jsonl: {b['episodes']} conversations, "), sources
    assert sources[1].endswith("(read 2 times an epoch)"), sources
    split = _split_line("\n".join(out))
    held = len(set(dm._val["group"]))
    assert f"held out by group ({held} of {30 + len(groups)} groups, seed 0)" in split, split
    assert "with the repeated sources" in split, split


@pytest.fixture(scope="module")
def fit_into_files(tmp_path_factory, tiny_bert_dir) -> tuple[str, str]:
    """(stdout, stderr) of one epoch through train.py with both sent to files (a job's log)."""
    from sam_model.data.synthetic import write_synthetic

    folder = tmp_path_factory.mktemp("fit")
    log = folder / "chats.jsonl"
    write_synthetic(log, 24, seed=0)
    args = [sys.executable, str(REPO / "train.py"), "fit", "--config", str(REPO / "configs" / "demo.yaml"),
            f"--data.train=[{log}]", f"--data.cache_dir={folder / 'cache'}", "--model.text_cache_dir=",
            f"--model.net.bert_path={tiny_bert_dir}", "--model.net.dim=16", "--model.net.max_length=32",
            "--trainer.max_epochs=1", f"--trainer.default_root_dir={folder}", "--trainer.logger=false",
            "--trainer.callbacks=[]", "--run=files"]
    out, err = folder / "out.log", folder / "err.log"
    with out.open("w") as o, err.open("w") as e:
        rc = subprocess.run(args, stdout=o, stderr=e, cwd=folder, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(REPO)}).returncode
    assert rc == 0, err.read_text()[-2000:]
    return out.read_text(), err.read_text()


def test_a_fit_into_files_says_the_split(fit_into_files):
    stdout, stderr = fit_into_files
    assert _split_line(stdout).startswith("data: chats.jsonl: 24 conversations, "), stdout
    assert "warning: validation holds only" in stderr, stderr


def test_a_fit_prints_no_lightning_tips(fit_into_files):
    """Lightning's "💡 Tip: ... try installing litlogger" advertisement at every fit start is filtered on its
    logger (its documented way: it has no option for it); its other lines still pass."""
    stdout, stderr = fit_into_files
    assert "Tip:" not in stderr + stdout and "litlogger" not in stderr + stdout, stderr
    assert "GPU available" in stderr, stderr


@pytest.mark.parametrize("given", [True, False])
def test_the_warning_says_what_to_do(given):
    from sam_model.training.split_report import Counts, few_decisions

    line = few_decisions(Counts(3, 12, 100), given, 0.15)
    assert line is not None and "\n" not in line
    assert ("data.val" in line) and (("val_fraction" in line) != given), line
    assert "0.042" in line  # 0.5 / 12: one decision from 2nd to 1st
    assert few_decisions(Counts(30, 500, 4000), given, 0.15) is None


def test_sources_of_one_file_name_are_told_apart_by_their_folders(tmp_path, capsys):
    """A walkthrough kept its agent's logs one folder per format, ``openai/chats.jsonl``, ``anthropic/chats.jsonl``:
    the fit printed three lines ``data: chats.jsonl: ...``, and which counts were whose was anyone's guess. A name
    two sources share is shown with as many of its folders as tell them apart."""
    from sam_model.data.synthetic import write_synthetic

    paths = [tmp_path / "logs" / "openai" / "chats.jsonl", tmp_path / "logs" / "anthropic" / "chats.jsonl",
             tmp_path / "old" / "openai" / "chats.jsonl", tmp_path / "other.jsonl"]
    for i, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_synthetic(path, 10 + i, seed=i)
    _module(tmp_path, train=[str(p) for p in paths], val_fraction=0.2).setup("fit")
    out = capsys.readouterr().out.splitlines()
    sources = [ln.split(": ")[1] for ln in out if ln.startswith("data: ") and "training" not in ln]
    assert sources == ["logs/openai/chats.jsonl", "anthropic/chats.jsonl", "old/openai/chats.jsonl",
                       "other.jsonl"], out
