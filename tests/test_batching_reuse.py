"""The reuse marks a training batch gives each decision (collate_episodes' q_used, q_recent): the rule of
sam_model.data.reuse, read only where a decision needs it."""

from __future__ import annotations

import random

import torch
from test_opening import make_net

from sam_model.data.chunks import Chunking
from sam_model.data.reuse import earlier_uses, recency, use_ranks
from sam_model.models.losses import MultiPositiveInfoNCE
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


def _by_earlier_uses(rows: list[tuple[int, dict]], whole: bool = False) -> tuple[list[list[int]], list[list[float]]]:
    """q_used and q_recent as collate_episodes built them before 2026-12-06: earlier_uses over every event (with
    ``whole``, over the episode as one task: q_used_episode, q_recent_episode)."""
    q_used, q_recent = [], []
    for _, row in rows:
        used = earlier_uses(row["steps"], row["labels"], None if whole else row["task_starts"])
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
        want_used, want_recent = _by_earlier_uses(rows, whole=True)  # a query whose task start is hidden (below)
        assert torch.equal(batch["q_used_episode"], torch.tensor(want_used, dtype=torch.long)), trial
        assert torch.equal(batch["q_recent_episode"], torch.tensor(want_recent, dtype=torch.float32)), trial


def _life() -> dict:
    """Two tasks (steps 0-2, 3-5): decisions at 2 (label 0), 4 and 5 (label 3)."""
    labels = [[], [], [0], [], [3], [3]]
    texts = [f"event {s}" for s in range(6)]
    return {"episode_id": "life", "steps": list(range(6)), "texts": texts, "memory_texts": texts,
            "kinds": ["user", "tool", "tool", "user", "tool", "tool"], "phases": ["collect"] * 6, "labels": labels,
            "state_texts": ["phase: collect"] * 6, "task_starts": [0, 0, 0, 3, 3, 3]}


def _told(monkeypatch, net, batch: dict, task_dropout: float) -> tuple[list, list[list[int]], list[list[float]]]:
    """What batch_loss tells each query: its task start (time features), its used memories and their r_m."""
    from sam_model.training import objective

    seen: dict = {}
    encode_queries, with_uses = net.encode_queries, objective.with_uses

    def spy_queries(*a, **kw):
        seen["starts"] = kw["task_starts"]
        return encode_queries(*a, **kw)

    def spy_uses(scores, q, used, recent=None):
        seen["used"] = [r.nonzero().flatten().tolist() for r in used]
        seen["recent"] = [[round(x, 3) for x in r[r > 0].tolist()] for r in recent]
        return with_uses(scores, q, used, recent)

    monkeypatch.setattr(net, "encode_queries", spy_queries)
    monkeypatch.setattr(objective, "with_uses", spy_uses)
    objective.batch_loss(net, MultiPositiveInfoNCE(0.1, learnable=False), batch, in_batch_negatives=False,
                         task_dropout=task_dropout)
    return seen["starts"], seen["used"], seen["recent"]


def test_a_query_whose_task_start_is_hidden_is_told_its_episodes_uses(tiny_bert_dir, monkeypatch):
    """Found by review (2026-12-06): a query whose task start task_dropout hid was still told its task's uses
    only, which say where the hidden start is (the second task's first decision had none; nothing before the
    start was marked), while a search not told the start (evaluate.py --task-start unknown, a live scope) is
    told every earlier decision's of the episode. Hidden now: the episode's, as earlier_uses with no starts."""
    net = make_net(tiny_bert_dir, time_features=4, task_opening=True, task_reuse=True, task_recency=True)
    row = _life()
    batch = collate_episodes([(0, row)])
    starts, used, recent = _told(monkeypatch, net, batch, 0.0)
    assert starts == [0, 3, 3] and used == [[], [], [3]] and recent == [[], [], [1.0]]  # the task's
    starts, used, recent = _told(monkeypatch, net, batch, 1.0)
    whole = earlier_uses(row["steps"], row["labels"])
    assert starts == [None] * 3 and used == [[m for m, _ in whole[s]] for s in (2, 4, 5)] == [[], [0], [0, 3]]
    assert recent == [[], [1.0], [0.5, 1.0]]  # memory 0's latest use (step 2) before memory 3's (step 4)


def test_one_draw_hides_a_query_from_the_time_features_and_the_uses_alike(tiny_bert_dir, monkeypatch):
    net = make_net(tiny_bert_dir, time_features=4, task_opening=True, task_reuse=True, task_recency=True)
    batch = collate_episodes([(ep, _life()) for ep in range(6)])
    task_uses = [[], [], [3]]
    torch.manual_seed(3)
    starts, used, _ = _told(monkeypatch, net, batch, 0.5)
    hidden = [s is None for s in starts]
    assert 0 < sum(hidden) < len(hidden)
    for i, (h, u) in enumerate(zip(hidden, used)):
        ep = i // 3
        own = [m - 6 * ep for m in u]  # memory positions of episode ep
        assert own == ([[], [0], [0, 3]][i % 3] if h else task_uses[i % 3]), i


def _episode_events(rng: random.Random, eid: str, n: int) -> list[dict]:
    """An episode's events as a log holds them: a user event first, about two in five decisions labelling earlier
    events of the episode."""
    first = rng.choice([0, 0, 2])
    out = []
    for k in range(n):
        s = first + k
        event = {"episode_id": eid, "step": s, "kind": "user" if k == 0 else rng.choice(["tool", "agent", "user"]),
                 "text": f"{eid} {s} " + "word " * rng.randint(0, 40), "state": {"phase": "collect"}}
        if k and rng.random() < 0.4:
            event["useful_memory_steps"] = sorted({rng.randrange(first, s) for _ in range(rng.randint(1, 3))})
        out.append(event)
    return out


def test_a_lifes_marks_are_those_evaluate_tells_its_searches_task_start_known_or_not():
    """Guard (passes before; review, 2026-12-06): what training tells a query of a life (the rows concat_rows
    builds; q_used, q_recent, and q_used_episode, q_recent_episode for a query whose task start is hidden) is
    what evaluate.py's replay tells the same decision's search (used_ranks over the examples of the life
    make_lives builds), with the task start known and with --task-start unknown: the same memories, each with
    r = 1/k of the same rank."""
    import dataclasses

    from sam_model.data.examples import episode_memories, episode_row, iter_examples
    from sam_model.data.lives import concat_rows, make_lives
    from sam_model.data.reader import Episode
    from sam_model.data.schema import parse_event
    from sam_model.evaluation.ranking import used_ranks

    def episode(events: list[dict]) -> Episode:
        return Episode(events[0]["episode_id"], tuple(parse_event(e) for e in events))

    def told(memories, examples) -> list[list[tuple[int, float]]]:
        return [sorted((memories[p].step, round(recency(k), 5)) for p, k in used_ranks(memories, ex).items())
                for ex in examples]

    def marks(used: torch.Tensor, recent: torch.Tensor) -> list[list[tuple[int, float]]]:
        return [sorted((s, round(r, 5)) for s, r in zip(u, x) if s >= 0) for u, x in zip(used.tolist(), recent.tolist())]

    rng = random.Random(11)
    for trial in range(40):
        n = rng.randint(2, 5)
        parts = [_episode_events(rng, f"t{trial}-{i}", rng.randint(1, 15)) for i in range(n)]
        life = episode(list(make_lives([e for p in parts for e in p], n)))
        memories, examples = episode_memories(life), list(iter_examples([life]))
        rows = [{**episode_row(episode(p)), "group": p[0]["episode_id"]} for p in parts]
        batch = collate_episodes([(0, concat_rows(rows, n, 0))], Chunking(30, 5) if trial % 2 else None)
        assert batch["q_step"].tolist() == [ex.step for ex in examples], trial
        assert marks(batch["q_used"], batch["q_recent"]) == told(memories, examples), trial
        unknown = [dataclasses.replace(ex, task_start=None) for ex in examples]
        assert marks(batch["q_used_episode"], batch["q_recent_episode"]) == told(memories, unknown), trial
