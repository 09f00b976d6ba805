"""The reuse marks a training batch gives each decision (collate_episodes' q_used, q_recent): the rule of
sam_model.data.reuse, read only where a decision needs it."""

from __future__ import annotations

import random

import torch

from sam_model.data.chunks import Chunking
from sam_model.data.reuse import earlier_uses, recency, use_ranks
from sam_model.training.batching import collate_episodes


def _random_row(rng: random.Random, n: int) -> dict:
    """An episode of ``n`` events in one to three tasks; about a third are decisions labelling earlier events
    (of any task: a life's later task may take a value an earlier one said)."""
    cuts = sorted(rng.sample(range(1, n), k=min(n - 1, rng.randint(0, 2))))
    starts = [max([0, *(c for c in cuts if c <= s)]) for s in range(n)]
    labels = [sorted({rng.randrange(s) for _ in range(rng.randint(1, 3))}) if s and rng.random() < 0.35 else []
              for s in range(n)]
    texts = [f"event {s} " + "word " * rng.randint(0, 60) for s in range(n)]
    return {"episode_id": f"e{n}", "steps": list(range(n)), "texts": texts, "memory_texts": texts,
            "kinds": ["tool"] * n, "phases": ["collect"] * n, "labels": labels,
            "state_texts": ["phase: collect"] * n, "task_starts": starts}


def _padded(rows: list[list], pad: float) -> list[list]:
    width = max((len(x) for x in rows), default=1) or 1
    return [x + [pad] * (width - len(x)) for x in rows]


def _by_earlier_uses(rows: list[tuple[int, dict]]) -> tuple[list[list[int]], list[list[float]]]:
    """q_used and q_recent as collate_episodes built them before 2026-12-06: earlier_uses over every event."""
    q_used, q_recent = [], []
    for _, row in rows:
        used = earlier_uses(row["steps"], row["labels"], row["task_starts"])
        for i, labels in enumerate(row["labels"]):
            if labels:
                q_used.append([m for m, _ in used[i]])
                ranks = use_ranks(dict(used[i]))
                q_recent.append([recency(ranks[m]) for m, _ in used[i]])
    return _padded(q_used, -1), _padded(q_recent, 0.0)


def test_the_marks_read_at_the_decisions_are_those_earlier_uses_gives_on_random_episodes():
    rng = random.Random(7)
    for trial in range(40):
        rows = [(ep, _random_row(rng, rng.randint(1, 40))) for ep in range(rng.randint(1, 4))]
        chunking = Chunking(60, 10) if trial % 2 else None
        batch = collate_episodes(rows, chunking)
        want_used, want_recent = _by_earlier_uses(rows)
        if not want_used:
            assert batch["q_used"].shape[0] == 0
            continue
        assert torch.equal(batch["q_used"], torch.tensor(want_used, dtype=torch.long)), trial
        assert torch.equal(batch["q_recent"], torch.tensor(want_recent, dtype=torch.float32)), trial
