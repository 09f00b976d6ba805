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
    assert record["used_order"] == pick(record["table"])["used_order"]  # the rule, on the figures it wrote
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


def test_a_source_auto_cannot_name_is_refused_before_the_training(tmp_path, tiny_bert_dir):
    """It was refused in after_fit: after the whole training, and no export written."""
    from sam_model.io import SAMFileError

    with pytest.raises(SAMFileError, match="export.used_order_on: 'nope.jsonl' names 0"):
        _fit(tmp_path, tiny_bert_dir, "badon", "--export.used_order=auto", "--export.used_order_on=[nope.jsonl]")
    assert not list((tmp_path / "badon").glob("*.ckpt"))  # nothing trained


def test_auto_with_no_validation_decisions_to_choose_on_still_exports_and_says_why(tmp_path, tiny_bert_dir, capsys):
    """A source chosen on whose holdout holds no decision point (a user's unlabelled or tiny log) raised after the
    training, and the run ended with no export: it is exported with the config's ordering (off) and a note."""
    from sam_model.data.synthetic import write_synthetic

    write_synthetic(tmp_path / "train.jsonl", 20, seed=0)
    rows = [json.loads(line) for line in (tmp_path / "train.jsonl").read_text().splitlines()]
    for r in rows:  # a second source: other conversations, no decision labelled
        r["episode_id"] = "plain-" + r["episode_id"]
        r.pop("useful_memory_steps", None)
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows[:60]))
    cfg = _config(tmp_path, "nodec", tmp_path / "train.jsonl", tiny_bert_dir)
    train_main(["fit", "--config", str(cfg), "--trainer.max_epochs=1", f"--data.train=[{tmp_path / 'train.jsonl'}, "
                f"{plain}]", "--export.used_order=auto", "--export.used_order_on=[plain.jsonl]"])
    out = tmp_path / "nodec" / "export"
    assert json.loads((out / "config.json").read_text())["store"]["used_order"] is None
    assert "used_order_chosen" not in json.loads((out / "training.json").read_text())
    said = capsys.readouterr().out
    assert "export.used_order auto: nothing to choose on" in said and "store.used_order off" in said


def test_a_choice_on_few_validation_decisions_says_so(tmp_path, tiny_bert_dir, capsys):
    """choose_order's CLI warns where its log holds few decisions; at export the same choice on the run's holdout
    (a user's 20 conversations: 16 decisions) was made and written in silence."""
    _fit(tmp_path, tiny_bert_dir, "few", "--export.used_order=auto")
    assert "export.used_order auto: warning: only 16 decision points" in capsys.readouterr().out


def test_lexical_auto_chooses_the_weight_the_held_out_evidence_favours_and_the_export_serves_it(tmp_path,
                                                                                              tiny_bert_dir, capsys):
    """export.lexical auto (issue 21): the fit's export chose the ordering alone, at the config's weight, where
    python -m sam_model.choose_order chooses the weight too. On held-out freight-like conversations (the needed
    result is named only by the state's booking reference) the lexical match wins, and the export serves it."""
    from test_choose_order import _named
    from test_task_first import write

    from sam_model.choose_order import LEXICALS
    from sam_model.memory.scoped import ScopedMemory
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    val = write(tmp_path / "val.jsonl", [e for i in range(MIN_VAL_DECISIONS) for e in _named(f"v{i}")])
    out = _fit(tmp_path, tiny_bert_dir, "lex", "--export.used_order=auto", "--export.lexical=auto",
               f"--data.val=[{val}]")
    record = json.loads((out / "training.json").read_text())["used_order_chosen"]
    table = {(r["used_order"], r["lexical"]): r["mrr"] for r in record["table"]}
    assert len(table) == len(ORDERS) * len(LEXICALS) and record["lexical_kept"] is None
    assert record["lexical"] > 0 and table[(record["used_order"], record["lexical"])] == max(table.values())
    assert (record["used_order"], record["lexical"]) == (pick(record["table"])["used_order"],
                                                         pick(record["table"])["lexical"])
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == record["lexical"]
    assert ScopedMemory(SAMRetriever.load(out, device="cpu")).store.lexical == record["lexical"]  # what it searches
    said = capsys.readouterr().out
    assert f"chose {record['used_order']}, lexical {record['lexical']:g}" in said
    assert f"store.lexical {record['lexical']:g}" in said


def test_lexical_auto_on_too_few_held_out_decisions_keeps_the_weight_and_warns(tmp_path, tiny_bert_dir, capsys):
    """A user's 20 conversations hold out 16 decisions: the weight is kept, as choose_order keeps it, and said."""
    out = _fit(tmp_path, tiny_bert_dir, "lexfew", "--export.used_order=auto", "--export.lexical=auto")
    record = json.loads((out / "training.json").read_text())["used_order_chosen"]
    assert {r["lexical"] for r in record["table"]} == {0.0} and record["lexical"] == 0.0
    assert "not chosen" in record["lexical_kept"]
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == 0.0
    said = capsys.readouterr().out
    assert "warning: the lexical weight is not chosen on 16 decision points" in said
    assert "scoring off, model and latest on 16 decisions" in said  # not "at lexical weights ...", which it is not


def test_a_fixed_lexical_weight_is_exported_as_given(tmp_path, tiny_bert_dir):
    out = _fit(tmp_path, tiny_bert_dir, "lexfixed", "--export.lexical=0.3")
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == 0.3
    assert SAMRetriever.load(out, device="cpu").store.config.lexical == 0.3


@pytest.mark.parametrize("given, match", [(["--export.lexical=auto"], "give export.used_order auto too"),
                                          (["--export.lexical=-1"], "export.lexical: .* neither auto nor a weight"),
                                          (["--export.lexical=lots"], "export.lexical: .* neither auto nor a weight")])
def test_a_lexical_option_that_cannot_be_served_is_refused_before_the_training(tmp_path, tiny_bert_dir, given, match):
    from sam_model.io import SAMFileError

    with pytest.raises(SAMFileError, match=match):
        _fit(tmp_path, tiny_bert_dir, "badlex", *given)
    assert not list((tmp_path / "badlex").glob("*.ckpt"))  # nothing trained


def test_the_lexical_option_says_its_choices_and_default(capsys):
    with pytest.raises(SystemExit):
        train_main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--export.lexical" in text and "default: unset, model.store.lexical" in text


def test_the_readmes_way_to_keep_adapt_yamls_ordering_off_trains_and_exports_it_off(tmp_path, tiny_bert_dir):
    """README "Train on your own logs" says which option keeps adapt.yaml's ordering off. Since adapt.yaml sets
    export.lexical auto too, the option it gave, --export.used_order off alone, was refused before the training
    (auto chooses the weight with the ordering): the recipe's line as written must run and serve what it says."""
    import re

    import yaml
    from test_resume import REPO

    said = re.search(r"`(--export\.used_order off[^`]*)`\s+keeps\s+(?:the ordering|both) off", (REPO / "README.md")
                     .read_text(encoding="utf-8"))
    assert said is not None, "README: the option that keeps adapt.yaml's ordering off is gone"
    adapt = tmp_path / "adapt_export.yaml"  # adapt.yaml's export section, on the tiny demo run
    adapt.write_text(yaml.safe_dump({"export": yaml.safe_load((REPO / "configs" / "adapt.yaml").read_text())["export"]}))
    out = _fit(tmp_path, tiny_bert_dir, "keepoff", "--config", str(adapt), *said.group(1).split())
    store = json.loads((out / "config.json").read_text())["store"]
    assert store["used_order"] is None and store["lexical"] == 0.0


def test_lexical_auto_with_no_held_out_conversation_says_the_weight_is_kept_and_advice_that_runs(tmp_path,
                                                                                              tiny_bert_dir, capsys):
    """adapt.yaml's two autos where the conversations chosen on hold no decision: the note named only the
    ordering kept, and its advice, set export.used_order off, model or latest, is refused beside export.lexical
    auto; it names the weight kept and the option a fixed ordering needs beside it."""
    from sam_model.data.synthetic import write_synthetic

    write_synthetic(tmp_path / "train.jsonl", 20, seed=0)
    rows = [json.loads(line) for line in (tmp_path / "train.jsonl").read_text().splitlines()]
    for r in rows:  # a second source: other conversations, no decision labelled, the one chosen on
        r["episode_id"] = "plain-" + r["episode_id"]
        r.pop("useful_memory_steps", None)
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows[:60]))
    out = _fit(tmp_path, tiny_bert_dir, "noval", f"--data.train=[{tmp_path / 'train.jsonl'}, {plain}]",
               "--export.used_order=auto", "--export.lexical=auto", "--export.used_order_on=[plain.jsonl]")
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == 0.0
    (note,) = [line for line in capsys.readouterr().out.splitlines() if "nothing to choose on" in line]
    assert "store.used_order off and store.lexical 0" in note and "export.lexical" in note.split("(", 1)[1]


@pytest.mark.parametrize("value", ["off", "yes"])
def test_a_yaml_boolean_lexical_is_named_with_what_to_give(tmp_path, value):
    """YAML 1.1 reads a bare off (or yes) as a boolean: the line named the key but not what it takes."""
    from sam_model.io import SAMFileError

    cfg = tmp_path / "lex.yaml"
    cfg.write_text(f"export:\n  lexical: {value}\n")
    with pytest.raises(SAMFileError, match=r"export\.lexical: .*; give auto or a weight >= 0 \(0: the lexical match "
                                           r"off\)"):
        train_main(["fit", "--config", "demo.yaml", "--config", str(cfg), "--print_config"])


def test_lexical_auto_on_too_few_decisions_keeps_the_starts_weight(tmp_path, tiny_bert_dir):
    """adapt.yaml says what is kept below 50 held-out decisions: the start's weight, which an init_from export
    (one chosen by python -m sam_model.choose_order on a larger log) carries into the fit's store, not 0."""
    start = _fit(tmp_path, tiny_bert_dir, "start", "--export.lexical=0.3")
    out = _fit(tmp_path, tiny_bert_dir, "next", f"--model.init_from={start}", "--model.store=null",  # as adapt.yaml
               "--export.used_order=auto", "--export.lexical=auto")
    record = json.loads((out / "training.json").read_text())["used_order_chosen"]
    assert "not chosen" in record["lexical_kept"] and record["lexical"] == record["lexical_own"] == 0.3
    assert SAMRetriever.load(out, device="cpu").store.config.lexical == 0.3


def test_a_ddp_fit_chooses_on_rank_0_alone_and_exports(tmp_path, tiny_bert_dir):
    """configs/ddp.yaml (2 processes, gloo): rank 0 chooses and writes the export after the other rank has left.
    The choice's metrics (torchmetrics) synced across the process group there and waited for the rank gone: the
    run ended in gloo's "Connection closed by peer" with no export."""
    import os
    import subprocess
    import sys

    from test_choose_order import _named
    from test_resume import REPO
    from test_task_first import write

    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    write_synthetic(tmp_path / "train.jsonl", 20, seed=0)
    val = write(tmp_path / "val.jsonl", [e for i in range(MIN_VAL_DECISIONS) for e in _named(f"v{i}")])
    cfg = _config(tmp_path, "ddp", tmp_path / "train.jsonl", tiny_bert_dir)
    run = subprocess.run([sys.executable, "train.py", "fit", "--config", str(cfg), "--config", "configs/ddp.yaml",
                          "--trainer.max_epochs=1", "--export.used_order=auto", "--export.lexical=auto",
                          f"--data.val=[{val}]"], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("export.used_order auto: chose") == 1  # rank 0 alone
    out = tmp_path / "ddp" / "export"
    record = json.loads((out / "training.json").read_text())["used_order_chosen"]
    assert len(record["table"]) == 12 and SAMRetriever.load(out, device="cpu").store.config.lexical == record["lexical"]


def test_a_fit_ends_saying_what_next_with_its_export_and_its_curves(tmp_path, tiny_bert_dir, capsys):
    """A fit ended on the export's path: the walkthrough's user went back to the README for how to load it, how to
    measure it and where its TensorBoard curves were. The line after the export says the three, with its paths."""
    from sam_model.data.synthetic import write_synthetic

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 20, seed=0)
    train_main(["fit", "--config", str(_config(tmp_path, "tb", log, tiny_bert_dir, tensorboard=True)),
                "--trainer.max_epochs=1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("exported ") and lines[-1].startswith("next: ")
    export, curves = tmp_path / "tb" / "export", tmp_path / "tb" / "tb"
    assert f"SAMRetriever.load({str(export)!r})" in lines[-1] and f"--retriever {export} " in lines[-1]
    assert lines[-1].endswith(f"tensorboard --logdir {curves}") and list(curves.rglob("events.out.tfevents.*"))
    assert (export / "config.json").is_file()


def test_the_next_line_quotes_its_paths_for_the_shell(tmp_path):
    """The next: line's sam-eval and tensorboard commands named a run folder with a space unquoted: as printed,
    the shell split it into two arguments."""
    import shlex
    from types import SimpleNamespace

    from sam_model.training.cli import next_steps

    export = tmp_path / "my runs" / "export"
    line = next_steps(export, SimpleNamespace(root_dir=str(tmp_path / "my runs" / "tb")))
    evaluate = shlex.split(line.split("; ")[1].split(" measures")[0])
    assert evaluate == ["sam-eval", "--retriever", str(export), "--data", "LOG", "--out", str(export.parent / "eval")]
    assert shlex.split(line.rsplit(": ", 1)[1]) == ["tensorboard", "--logdir", str(tmp_path / "my runs" / "tb")]
    assert "curves" not in next_steps(export, None)  # another logger: no tensorboard command
