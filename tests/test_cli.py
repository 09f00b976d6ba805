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
