"""Agent lives as data, and the learned time and task context of the score (sam_model.models.time)."""

from __future__ import annotations

import datasets
import torch
import training

from sam_model.data.lives import make_lives, task_starts
from sam_model.data.schema import parse_event
from sam_model.models.sam import SAMNet
from sam_model.models.time import TimeEncoding
from sam_model.training.batching import collate_episodes
from sam_model.training.datamodule import concat_lives


def make_net(bert_dir, **kw) -> SAMNet:
    return training.make_net(bert_dir, ["collect", "ask_city"], ["user"], **kw)


def _episode(eid: str, n: int, label_at: int | None = None) -> list[dict]:
    out = [{"episode_id": eid, "step": s, "kind": "user", "text": f"{eid} {s}"} for s in range(n)]
    if label_at is not None:
        out[-1]["useful_memory_steps"] = [label_at]
    return out


def test_lives_shift_steps_and_labels_and_keep_the_source():
    events = _episode("a", 3, 1) + _episode("b", 4, 2) + _episode("c", 2, 0)
    lives = list(make_lives(events, 2))
    assert [e["episode_id"] for e in lives] == ["life2-00000"] * 7 + ["life2-00001"] * 2
    assert [e["step"] for e in lives] == [0, 1, 2, 3, 4, 5, 6, 0, 1]
    assert lives[6]["useful_memory_steps"] == [5]  # b's step 2, shifted by a's length 3
    assert lives[2]["useful_memory_steps"] == [1] and lives[8]["useful_memory_steps"] == [0]
    assert {e["meta"]["source_episode"] for e in lives[:7]} == {"a", "b"}
    assert [e["text"] for e in lives] == [e["text"] for e in events]
    parsed = [parse_event(e) for e in lives[:7]]
    assert task_starts(parsed) == [0, 0, 0, 3, 3, 3, 3]
    assert task_starts([parse_event(e) for e in _episode("x", 3)]) == [0, 0, 0]
    assert list(make_lives(events, 1)) == events


def test_concat_lives_of_training_rows():
    rows = [{"episode_id": f"e{i}", "group": f"e{i}", "steps": [0, 1], "kinds": ["user"] * 2, "texts": ["x", "y"],
             "phases": ["p"] * 2, "memory_texts": ["x", "y"], "state_texts": ["s"] * 2, "state_json": ["{}"] * 2,
             "labels": [[], [0]], "task_starts": [0, 0]} for i in range(5)]
    ds = datasets.Dataset.from_list(rows)
    out = concat_lives(ds, [1, 2])
    assert len(out) == 5 + 3
    life = out[5]
    assert life["steps"] == [0, 1, 2, 3] and life["labels"] == [[], [0], [], [2]]
    assert life["task_starts"] == [0, 0, 2, 2] and out[7]["steps"] == [0, 1]
    # one builder: the training rows' lives carry the ids and steps make_lives gives the same episodes' events
    events = [e for i in range(5) for e in _episode(f"e{i}", 2)]
    by_id: dict = {}
    for e in make_lives(events, 2):
        by_id.setdefault(e["episode_id"], []).append(e["step"])
    assert [r["episode_id"] for r in list(out)[5:]] == list(by_id) == ["life2-00000", "life2-00001", "life2-00002"]
    assert [r["steps"] for r in list(out)[5:]] == list(by_id.values())


def test_time_score_depends_only_on_step_differences():
    torch.manual_seed(0)
    enc = TimeEncoding(dim=8, n_frequencies=6)
    with torch.no_grad():
        enc.head.weight.normal_()
        enc.head.bias.normal_()
    v = torch.randn(3, 8)
    tq, t0, tm = [40, 7, 1000], [30, None, 990], [12, 3, 995]
    base = (enc.query(v, tq, t0) * enc.memory(tm, 3, torch.float32)).sum(-1)
    c = 123456
    shifted = (enc.query(v, [t + c for t in tq], [None if t is None else t + c for t in t0])
               * enc.memory([t + c for t in tm], 3, torch.float32)).sum(-1)
    assert torch.allclose(base, shifted, atol=1e-3)
    before = (enc.query(v[:1], [40], [30]) * enc.memory([29], 1, torch.float32)).sum()
    after = (enc.query(v[:1], [40], [30]) * enc.memory([31], 1, torch.float32)).sum()
    assert not torch.isclose(before, after)  # one-sided: before and after the task start differ


def test_untrained_time_part_scores_nothing_and_missing_steps_are_zero(tiny_bert_dir):
    net = make_net(tiny_bert_dir, alpha=0.7, learn_alpha=False, time_features=4).eval()
    q = net.encode_queries(["phase: ask_city"], ["ask_city"], ["ok"], steps=[10], task_starts=[2])
    m = net.encode_memories(["my city is 3", "hi"], ["user", "user"], ["collect"] * 2, steps=[1, 9])
    assert q.shape[1] == m.shape[1] == net.out_dim == 16 + 32 + 8
    assert torch.allclose(q[:, -8:], torch.zeros(1, 8))
    assert torch.allclose(net.encode_memories(["hi"], ["user"], ["collect"])[:, -8:], torch.zeros(1, 8))


def _duplicate_rows(n: int) -> list[tuple[int, dict]]:
    """Each episode says the same thing three times; the decision needs the latest: only time can tell."""
    rows = []
    for ep in range(n):
        texts = ["my city is paris", "hello", "my city is paris", "weather", "my city is paris", "ok go"]
        rows.append((ep, {"steps": list(range(6)), "texts": texts, "memory_texts": texts, "kinds": ["user"] * 6,
                          "phases": ["collect"] * 5 + ["ask_city"], "labels": [[]] * 5 + [[4]],
                          "state_texts": ["phase: collect"] * 5 + ["phase: ask_city"], "task_starts": [0] * 6}))
    return rows


def test_time_features_learn_what_content_cannot_tell_apart(tiny_bert_dir):
    net = make_net(tiny_bert_dir, alpha=1.0, learn_alpha=False, time_features=4)
    first, last = training.train_part(net, net.time.parameters(), collate_episodes(_duplicate_rows(8)), 60)
    assert last < 0.5 * first
    net.eval()
    with torch.no_grad():
        q = net.encode_queries(["phase: ask_city"], ["ask_city"], ["ok go"], steps=[5], task_starts=[0])
        m = net.encode_memories(["my city is paris"] * 3, ["user"] * 3, ["collect"] * 3, steps=[0, 2, 4])
    assert int((q @ m.T).argmax()) == 2
