"""``--tensorboard LOGDIR`` (sam_model.tensorboard_log) as a person uses it: a run that fails still closes its log.

Found by review (2026-12-06): evaluate.py closed its writer only at its very end, so a report write (or a diagnostic)
that failed left the writer open, its queued events unwritten until the process ended."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_evaluate import HashedBowRetriever

from sam_model.data.synthetic import write_synthetic
from sam_model.evaluation import evaluate, run


def _tags(logdir: Path) -> dict[str, list[str]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "images": 0, "tensors": 0})
    acc.Reload()
    return acc.Tags()


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("log") / "log.jsonl.gz"
    write_synthetic(path, n_episodes=4, seed=0)
    return path


def _evaluate(log: Path, out: Path, tb: Path) -> dict:
    return evaluate(log, out, HashedBowRetriever(), baselines=["recency"], latency_queries=2, tsne_points=20,
                    tensorboard=tb, quiet=True)


def test_an_evaluation_that_fails_writing_its_report_closes_its_log(log, tmp_path, monkeypatch):
    """Closed: its events written and its file released (the writer's thread and file stayed open until exit)."""
    from sam_model import tensorboard_log

    opened = []

    def writer(logdir, *a, **kw):
        opened.append(tensorboard_log_writer(logdir, *a, **kw))
        return opened[-1]

    def full_disk(*_):
        raise OSError("[Errno 28] No space left on device")

    tensorboard_log_writer = tensorboard_log.writer
    monkeypatch.setattr(tensorboard_log, "writer", writer)
    monkeypatch.setattr(run, "write_reports", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _evaluate(log, tmp_path / "out", tmp_path / "tb")
    [w] = opened
    assert w.all_writers is None  # SummaryWriter.close() empties it
    assert "diagnostics/tsne_states" in _tags(tmp_path / "tb")["images"]  # logged before the failure, and written
