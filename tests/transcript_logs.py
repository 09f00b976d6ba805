"""The helpers the transcript-importer tests share: a chat log of ``{"id", "messages"}`` conversations, one a line
(the importer's plainest container), a tau-bench trajectories file, an import by ``sam-data transcripts`` with
what the report printed, and the walkthroughs' memory added whole after each run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sam_model.data.transcripts import main
from sam_model.memory import HashingEncoder, ScopedMemory


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


def listed(memory: ScopedMemory, user_id: str = "me", run_id: str = "s") -> list[tuple[int, str]]:
    """A scope's memories as (step, text), in step order: what an import of the same log gives, to compare with."""
    return [(r["step"], r["memory"]) for r in sorted(memory.get_all(user_id=user_id, run_id=run_id, limit=None)["results"],
                                                      key=lambda r: r["step"])]


def added_whole_after_each_run(messages: list[Any], ends: list[int]) -> tuple[ScopedMemory, dict[str, Any]]:
    """A scope given ``messages[:end]`` for each of ``ends`` (an agent adding its whole memory after each run), and
    the last add's result: each message stored once means it holds what one add of them all holds."""
    memory = ScopedMemory(HashingEncoder(16))
    result: dict[str, Any] = {}
    for end in ends:
        result = memory.add(messages[:end], user_id="me", run_id="s")
    return memory, result
