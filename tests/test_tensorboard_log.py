"""``--tensorboard LOGDIR`` (sam_model.tensorboard_log) as a person uses it: a run that fails still closes its log,
and runs into one LOGDIR stay apart.

Found by review (2026-12-06): evaluate.py closed its writer only at its very end, so a report write (or a diagnostic)
that failed left the writer open, its queued events unwritten until the process ended; and every run wrote into
LOGDIR itself, so a second evaluation wrote its state embeddings over the first's (the projector's files are per
folder) and TensorBoard drew both runs' scalars as one line."""

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
    [folder] = (tmp_path / "tb").iterdir()
    assert "diagnostics/tsne_states" in _tags(folder)["images"]  # logged before the failure, and written


def _projector(run: Path) -> dict[str, int]:
    """Each embedding the run's projector config lists: its tag and the width of the vectors its tensor file holds."""
    config = (run / "projector_config.pbtxt").read_text()
    tags = [line.split('"')[1] for line in config.splitlines() if line.strip().startswith("tensor_name:")]
    paths = [line.split('"')[1] for line in config.splitlines() if line.strip().startswith("tensor_path:")]
    return {t: len((run / p).read_text().splitlines()[0].split("\t")) for t, p in zip(tags, paths)}


def test_two_evaluations_into_one_logdir_keep_their_own_runs(log, tmp_path):
    """The second run wrote its state embeddings over the first's (one 00000/state_embeddings/ and one
    projector_config.pbtxt per folder) and its scalars into the first's lines: each run now has a folder of its
    own in LOGDIR, named by its --out folder."""
    tb = tmp_path / "tb"
    wide = evaluate(log, tmp_path / "wide", HashedBowRetriever(dim=256), baselines=["recency"], latency_queries=2,
                    tsne_points=20, tensorboard=tb, quiet=True)
    narrow = evaluate(log, tmp_path / "narrow", HashedBowRetriever(dim=32), baselines=["recency"], latency_queries=2,
                      tsne_points=20, tensorboard=tb, quiet=True)
    again = evaluate(log, tmp_path / "narrow", HashedBowRetriever(dim=32), baselines=["recency"], latency_queries=2,
                     tsne_points=20, tensorboard=tb, quiet=True)
    assert sorted(p.name for p in tb.iterdir()) == ["narrow_0", "narrow_1", "wide_0"]
    assert _projector(tb / "wide_0") == {"state_embeddings:00000": 256}
    assert _projector(tb / "narrow_0") == _projector(tb / "narrow_1") == {"state_embeddings:00000": 32}
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    for name, report in (("wide_0", wide), ("narrow_0", narrow), ("narrow_1", again)):
        acc = EventAccumulator(str(tb / name))
        acc.Reload()
        assert [e.value for e in acc.Scalars("eval/sam/mrr")] == pytest.approx([report["methods"]["sam"]["mrr"]])
