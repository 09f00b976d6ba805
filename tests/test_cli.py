"""The console commands declared in pyproject.toml exist and dispatch to the module CLIs."""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path

import pytest

from sam_model.data.cli import main as sam_data

REPO = Path(__file__).resolve().parents[1]


def test_console_scripts_point_at_callables():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"sam-train", "sam-export", "sam-eval", "sam-data", "sam-serve"}
    for target in scripts.values():
        module, _, name = target.partition(":")
        assert callable(getattr(import_module(module), name))


def test_sam_data_dispatches_and_explains(tmp_path, capsys):
    assert sam_data([]) == 2 and "transcripts" in capsys.readouterr().out
    assert sam_data(["--help"]) == 0
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"id": "c", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert sam_data(["transcripts", str(chats), str(tmp_path / "out.jsonl")]) == 1  # no tool call: refused
    assert "no tool call was read" in capsys.readouterr().err
    assert sam_data(["transcripts", str(chats), str(tmp_path / "out.jsonl"), "--allow-empty"]) == 0
    assert sam_data(["validate", str(tmp_path / "out.jsonl")]) == 0
    assert sam_data(["formats"]) == 0 and "tau2" in capsys.readouterr().out


def test_sam_data_help_names_every_format_transcripts_reads(capsys):
    """sam-data --help listed seven formats after SWE-agent trajectories became the eighth, so a user with .traj
    files read that transcripts did not take them; and --split did not say what groups a trajectory."""
    from sam_model.data.formats import FORMATS
    from sam_model.data.transcripts import main as transcripts

    assert sam_data(["--help"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("transcripts"))
    for fmt in FORMATS.values():
        assert fmt.title.split()[0] in line, (fmt.name, line)
    with pytest.raises(SystemExit):
        transcripts(["--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "SWE-agent: the instance id" in usage and "OpenHands: an evaluation line's instance_id" in usage


def test_faiss_comes_from_exactly_one_extra_and_the_index_names_it():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("faiss") for d in project["dependencies"])  # the GPU extra replaces, not adds
    extras = project["optional-dependencies"]
    assert [d.split(">")[0] for d in extras["cpu"]] == ["faiss-cpu"]
    assert [d.split(">")[0] for d in extras["gpu"]] == ["faiss-gpu-cu12"]
    from sam_model.index import MemoryIndex

    assert MemoryIndex.from_config(4, {"kind": "flat"}).backend.startswith("faiss")


def test_converters_never_replace_what_is_not_their_output(tmp_path, capsys):
    """Found by an adversarial review: sgd overwrote its own input file; every converter replaced whatever was at
    the output path (a pipe, a device, a link, a folder: a traceback); an unwritable folder was a traceback."""
    import gzip
    import os

    from sam_model.data import sgd, synthetic, transcripts

    split = tmp_path / "split"
    split.mkdir()
    dialogue = {"dialogue_id": "1_00000", "services": ["Restaurants_1"], "turns": [
        {"speaker": "USER", "utterance": "Find a table in Napa", "frames": [{"service": "Restaurants_1", "slots": [],
                                                                          "state": {"active_intent": "FindRestaurants",
                                                                                    "requested_slots": [],
                                                                                    "slot_values": {"city": ["Napa"]}},
                                                                          "actions": []}]}]}
    victim = split / "dialogues_001.json.gz"
    with gzip.open(victim, "wt") as f:
        json.dump([dialogue], f)
    before = victim.read_bytes()
    with pytest.raises(SystemExit):
        sgd.main([str(split), str(victim)])
    assert victim.read_bytes() == before and "dialogues files" in capsys.readouterr().err
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    folder = tmp_path / "adir"
    folder.mkdir()
    for out in (fifo, link, folder):
        assert synthetic.main([str(out), "--episodes", "1"]) == 1
        assert "error: " in capsys.readouterr().err
    assert fifo.is_fifo() and link.is_symlink() and folder.is_dir() and list(folder.iterdir()) == []
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps({"id": "c", "messages": [
        {"role": "user", "content": "refund 5"},
        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {
            "name": "refund", "arguments": '{"amount": NaN, "big": 1e400, "n": "5"}'}}]}]}) + "\n")
    assert transcripts.main([str(log), str(tmp_path / "o.jsonl"), "--allow-empty"]) == 0
    from sam_model.data.validate import main as validate  # what it wrote reads back as JSON

    assert validate([str(tmp_path / "o.jsonl")]) == 0


def test_training_and_evaluation_refuse_bad_settings_in_one_line(tmp_path, capsys):
    """Found by an adversarial review: an empty data.train and a trainer setting Lightning refuses were tracebacks;
    val_fraction and batch_episodes out of range named no option; a typo'd key in a config file named no file (the
    wording of jsonargparse 4.5x); a config file not in UTF-8 named none; evaluate.py --out at a file failed only
    after the whole evaluation."""
    from sam_model.evaluation.run import main as evaluate
    from sam_model.training.cli import run as train

    root = Path(__file__).resolve().parents[1]
    log = tmp_path / "d.jsonl"
    from sam_model.data.synthetic import write_synthetic

    write_synthetic(log, 4, 0)
    base = ["fit", "--config", str(root / "configs" / "demo.yaml"), "--data.train", f"[{log}]"]
    typo = tmp_path / "typo.yaml"
    typo.write_text("data:\n  batch_episode: 4\n")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe data: 1\n")
    twice = tmp_path / "twice.yaml"  # YAML keeps the last silently: the run would train with 8, not 2
    twice.write_text("data:\n  batch_episodes: 2\ntrainer:\n  max_epochs: 1\ndata:\n  batch_episodes: 8\n")
    for extra, says in [(["--data.train=[]"], "data.train is empty"),
                        (["--data.val_fraction=0"], "data.val_fraction must be a share"),
                        (["--data.batch_episodes=0"], "data.batch_episodes must be an integer >= 1"),
                        ([f"--data.train=[{log}, {log}]"], "lists " + str(log) + " more than once"),
                        (["--config", str(typo)], "typo.yaml: data.batch_episode: unknown key; known in data: "
                                                  "batch_episodes"),
                        (["--config", str(binary)], "bin.yaml: not UTF-8"),
                        (["--config", str(twice)], "twice.yaml: line 5: key 'data' is given twice in one mapping "
                                                   "(first on line 1); keep one")]:
        assert train(base + extra) == 1
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
    (tmp_path / "afile.txt").write_text("x")
    with pytest.raises(SystemExit):
        evaluate(["--retriever", "sam-general", "--data", str(log), "--out", str(tmp_path / "afile.txt")])
    assert "a file is there" in capsys.readouterr().err


def test_help_names_the_traceback_option_and_validate_shows_progress_in_a_file(tmp_path, capsys):
    import subprocess
    import sys

    from sam_model.export import main as export

    with pytest.raises(SystemExit):
        export(["--help"])
    assert "--traceback: on an error, print the full Python trace" in capsys.readouterr().out
    from sam_model.data.synthetic import write_synthetic

    write_synthetic(tmp_path / "d.jsonl", 3, 0)
    with open(tmp_path / "err.txt", "w") as err:  # stderr to a file, not a terminal
        subprocess.run([sys.executable, "-m", "sam_model.data.validate", str(tmp_path / "d.jsonl")], stderr=err,
                       stdout=subprocess.DEVNULL, check=True)
    assert "validating" in (tmp_path / "err.txt").read_text()


def test_help_into_a_reader_that_has_gone_ends_quietly():
    """`python evaluate.py --help | head`: the reader gone, the line run_cli adds after argparse's help was a
    BrokenPipeError trace (exit 1)."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first byte
    try:
        res = subprocess.run([sys.executable, "-m", "sam_model.pretrained.pack", "--help"], stdout=write,
                             stderr=subprocess.PIPE, text=True, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        os.close(write)
    assert res.returncode == 0 and "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr


def test_negative_learning_rates_are_refused():
    from sam_model.training.module import SAMLightningModule

    for key, value in (("lr", -1.0), ("temperature", 0.0), ("weight_decay", -0.1)):
        with pytest.raises(ValueError, match=f"model.{key} must be"):
            SAMLightningModule(**{key: value})


def test_pack_names_a_folder_inside_the_package_only(tmp_path):
    from sam_model.io import SAMFileError
    from sam_model.pretrained.pack import pack

    for name in ("/abs/path", "../escape", ".hidden"):
        with pytest.raises(SAMFileError, match="must be a plain file name"):
            pack(tmp_path / "no-export", name, folder=tmp_path)


def test_evaluate_never_writes_over_a_readme_or_folder_it_did_not_write(tmp_path, capsys, tiny_bert_dir):
    """Found by an adversarial review: --card appended its table to a folder's own README.md; --out overwrote a
    folder's report.md and friends; both only after the whole evaluation."""
    from sam_model.card import add_evaluation
    from sam_model.evaluation.run import main as evaluate
    from sam_model.io import SAMFileError
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever

    export = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32,
                                           max_length=32))).save(tmp_path / "exp")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text("{}")
    (mine / "README.md").write_text("# My project\n\nHand-written.\n")
    with pytest.raises(SAMFileError, match="not a SAM model card"):
        add_evaluation(mine, {})
    assert (mine / "README.md").read_text() == "# My project\n\nHand-written.\n"
    swapped = "# n\n<!-- evaluation:end -->\nx\n<!-- evaluation:start -->\n"  # found by review: "written", nowhere
    (mine / "README.md").write_text(swapped)
    with pytest.raises(SAMFileError, match="comes before"):
        add_evaluation(mine, {"methods": {"sam": {"mrr": 0.5}}})
    assert (mine / "README.md").read_text() == swapped
    (mine / "README.md").write_text("# My project\n\nHand-written.\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("my own report")
    from sam_model.data.synthetic import write_synthetic

    write_synthetic(tmp_path / "d.jsonl", 2, 0)
    for extra in (["--card", str(mine), "--out", str(tmp_path / "o2")], ["--out", str(tmp_path / "out")]):
        with pytest.raises(SystemExit):
            evaluate(["--retriever", str(export), "--data", str(tmp_path / "d.jsonl"), *extra])
        assert "error:" in capsys.readouterr().err
    assert (tmp_path / "out" / "report.md").read_text() == "my own report" and not (tmp_path / "o2").exists()


@pytest.mark.parametrize("script, args", [("tool_agent.py", ["--transcripts", "nope.json"]),
                                          ("agent_loop.py", ["--retriever", "nope"]),
                                          ("langgraph_agent.py", ["--retriever", "nope"])])
def test_the_examples_name_a_bad_path_in_one_line(script, args, tmp_path):
    """The examples printed a four-frame traceback for a missing file or retriever (found by review)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, str(REPO / "examples" / script), *args], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    err = res.stderr.strip()
    assert res.returncode != 0 and "Traceback" not in err and err.startswith("error: ") and "nope" in err.splitlines()[0]
