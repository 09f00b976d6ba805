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
    assert set(scripts) == {"sam-train", "sam-export", "sam-eval", "sam-data"}
    for target in scripts.values():
        module, _, name = target.partition(":")
        assert callable(getattr(import_module(module), name))


def test_sam_data_dispatches_and_explains(tmp_path, capsys):
    assert sam_data([]) == 2 and "transcripts" in capsys.readouterr().out
    assert sam_data(["--help"]) == 0
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"id": "c", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert sam_data(["transcripts", str(chats), str(tmp_path / "out.jsonl")]) == 0
    assert sam_data(["validate", str(tmp_path / "out.jsonl")]) == 0
