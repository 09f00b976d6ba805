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
