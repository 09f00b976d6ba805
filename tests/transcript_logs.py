"""The helpers the transcript-importer tests share: a chat log of ``{"id", "messages"}`` conversations, one a line
(the importer's plainest container), a tau-bench trajectories file, and an import by ``sam-data transcripts`` with
what the report printed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sam_model.data.transcripts import main


def chat_log(path: Path, conversations: Mapping[str, list[dict[str, Any]]]) -> Path:
    """Write ``conversations`` (id -> messages) to ``path``, one JSON line each, in the mapping's order."""
    path.write_text("".join(json.dumps({"id": cid, "messages": messages}) + "\n"
                            for cid, messages in conversations.items()))
    return path


def tau_log(path: Path, messages: list[dict[str, Any]], tasks: int, trials: int) -> Path:
    """Write a tau-bench trajectories file (a JSON list, as tau-bench saves its runs): ``trials`` runs of each of
    ``tasks`` tasks, every one the conversation ``messages``."""
    path.write_text(json.dumps([{"task_id": t, "trial": k, "traj": messages} for t in range(tasks)
                                for k in range(trials)]))
    return path


def import_report(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    """Import ``path`` into ``out`` as the CLI does, which must succeed, and what it printed (``.out``, ``.err``)."""
    assert main([str(path), str(out)]) == 0
    return capsys.readouterr()
