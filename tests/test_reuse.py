"""Reuse within a task as a scored part (sam_model.models.reuse): u_m(t) = 1 for a memory an earlier decision
point of t's task labelled, weighted by w_u(v_s), a linear head of the state starting at zero.

u_m changes over time, so it is per (decision, memory): in training the U matrix of collate_episodes /
reuse_matrix, in evaluate.py's replay the index update before each decision's search. Both must be causal (a
label of the current or a later decision never sets it), and off the model must be the one before, byte for byte.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_opening import make_net
from test_task_first import data_of, write
from test_used_first import ISSUE

from sam_model.encoder import SAMEncoder
from sam_model.evaluation.methods import retriever_methods
from sam_model.evaluation.ranking import used_memories
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import collate_episodes, reuse_matrix
from sam_model.training.objective import batch_loss


def test_off_the_vectors_are_those_of_a_model_without_it_and_on_the_weight_starts_at_zero(tiny_bert_dir):
    off = make_net(tiny_bert_dir, time_features=4, task_opening=True).eval()
    on = make_net(tiny_bert_dir, time_features=4, task_opening=True, task_reuse=True).eval()
    assert not any(k.startswith("reuse.") for k in off.state_dict())
    assert on.out_dim == off.out_dim + 1
    texts, kinds, phases = ["fix foo in bar.py", "ok"], ["user", "tool"], ["collect"] * 2
    with torch.no_grad():
        m_off = off.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False])
        m_on = on.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False])
        q_off = off.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
        q_on = on.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
    assert torch.equal(m_on[:, :-1], m_off) and m_on[:, -1].tolist() == [0.0, 0.0]  # unused as written
    assert torch.equal(q_on[:, :-1], q_off) and q_on[:, -1].tolist() == [0.0]
    assert "task_reuse" not in SAMConfig().to_dict() and SAMConfig(task_reuse=True).to_dict()["task_reuse"] is True
    with pytest.raises(ValueError, match="task_opening"):
        make_net(tiny_bert_dir, task_reuse=True)


def test_an_export_without_it_is_as_before(tiny_bert_dir, tmp_path):
    from serving import tiny_export

    from sam_model.export import read_config

    tiny_export(tiny_bert_dir, tmp_path / "off", task_opening=True)
    assert "task_reuse" not in json.loads((tmp_path / "off" / "config.json").read_text())["sam"]
    assert read_config(tmp_path / "off" / "config.json")[0].task_reuse is False
    tiny_export(tiny_bert_dir, tmp_path / "on", task_opening=True, task_reuse=True)
    assert read_config(tmp_path / "on" / "config.json")[0].task_reuse is True


def _row(labels: list[list[int]], starts: list[int] | None = None, texts: list[str] | None = None) -> dict:
    n = len(labels)
    texts = texts or [f"event {s}" for s in range(n)]
    return {"steps": list(range(n)), "texts": texts, "memory_texts": texts, "kinds": ["tool"] * n,
            "phases": ["collect"] * n, "labels": labels, "state_texts": ["phase: collect"] * n,
            "task_starts": starts or [0] * n}


def test_training_uses_only_earlier_decisions_of_the_task():
    # decisions at 2 (label 0), 4 (labels 0, 1), 5 (label 3); a second episode's memories are never used
    batch = collate_episodes([(0, _row([[], [], [0], [], [0, 1], [3]])), (1, _row([[], [0]]))])
    u = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
    assert u.shape == (4, 8)
    assert u[0].nonzero().flatten().tolist() == []  # its own label 0 is not known yet
    assert u[1].nonzero().flatten().tolist() == [0]  # not its own label 1
    assert u[2].nonzero().flatten().tolist() == [0, 1]  # not its own label 3
    assert u[3].nonzero().flatten().tolist() == []  # the other episode: 0 is its own label
    # a new task forgets the earlier task's uses
    batch = collate_episodes([(0, _row([[], [0], [], [0, 2], [0]], starts=[0, 0, 2, 2, 2]))])
    u = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
    assert [r.nonzero().flatten().tolist() for r in u] == [[], [], [0, 2]]


def _reuse_rows(n: int) -> list[tuple[int, dict]]:
    """Two copies of one text; the label of the last decision is the copy an earlier decision used."""
    texts = ["order 17", "searching", "order 17", "call", "call"]
    return [(ep, _row([[], [], [], [2], [2]], texts=texts)) for ep in range(n)]


def test_the_weight_learns_to_rank_the_used_memory_first(tiny_bert_dir):
    net = make_net(tiny_bert_dir, alpha=1.0, learn_alpha=False, task_opening=True, task_reuse=True)
    batch = collate_episodes(_reuse_rows(8))
    loss_fn, opt = MultiPositiveInfoNCE(0.1, learnable=False), torch.optim.Adam(net.reuse.parameters(), lr=0.05)
    first = None
    for _ in range(40):
        loss = batch_loss(net, loss_fn, batch, in_batch_negatives=False)
        first = loss.item() if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.75 * first and net.reuse.head.bias.item() > 0


def test_evaluate_replay_sets_u_where_earlier_calls_used_the_memory_and_nowhere_else(tiny_bert_dir, tmp_path):
    """The replay's rankings are the inner products plus w_u on the memories earlier decisions of the task used,
    per decision (the index updated as calls are made): a large w_u ranks exactly those first."""
    net = make_net(tiny_bert_dir, task_opening=True, task_reuse=True).eval()
    with torch.no_grad():
        net.reuse.head.bias.fill_(10.0)
    enc = SAMEncoder(net)
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    (method,) = retriever_methods("sam", enc)
    got = method.rank(data, "episode", 10, np.zeros(len(data.memories)))
    m = enc.encode_memories(data.memories)
    q = method.replay.encode_queries(data.examples)
    for i, ex in enumerate(data.examples):
        used = set(used_memories(data.memories, ex))
        r = range(ex.episode_start, ex.cutoff)
        score = {p: float(m[p] @ q[i]) + (10.0 if p in used else 0.0) for p in r}
        assert list(got[i]) == sorted(r, key=lambda p: -score[p])
        assert set(got[i][: len(used)]) == used
    assert [len(used_memories(data.memories, ex)) for ex in data.examples] == [0, 1, 2]


def test_the_store_encodes_for_it_and_refuses_a_search_not_told_the_uses(tiny_bert_dir, tmp_path):
    """Memories are written with u_m = 0, so the store encodes them; a search must be told which memories earlier
    calls of the task used (``used``, as evaluate.py's replay and ScopedMemory tell it), else it is refused: it must
    not serve such a model silently (tests/test_live_reuse.py: the live path)."""
    enc = SAMEncoder(make_net(tiny_bert_dir, task_opening=True, task_reuse=True))
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    store = MemoryStore(enc, StoreConfig())
    store.add(data.memories)
    np.testing.assert_array_equal(store.index.get_vectors([m.id for m in data.memories]),
                                  enc.encode_memories(data.memories))
    ex = data.examples[-1]
    with pytest.raises(ValueError, match="task_reuse"):
        store.search(ex.state, ex.observation, 3, episode_id=ex.episode_id, step=ex.step)
    assert len(store.search(ex.state, ex.observation, 3, episode_id=ex.episode_id, step=ex.step, used=[])) == 3


class _Reuse:  # what reads_reuse reads: an encoder whose net has a reuse part
    dim, net = 9, type("Net", (), {"reuse": object()})()


def _told_and_marked(n: int, used: list[str], depth: int = 8) -> tuple[MemoryStore, MemoryStore]:
    """Two stores of ``n`` random memories of episode "e": one of a reuse model, told the uses at search time, and
    one whose index holds u_m = 1 for ``used`` (what evaluate.py's replay wrote before 2026-12-06)."""
    from sam_model.data.examples import MemoryRecord

    x = np.random.default_rng(0).normal(size=(n, _Reuse.dim)).astype(np.float32)
    x[:, -1] = 0.0
    recs = [MemoryRecord(f"e#{s}", "e", s, "tool", "collect", f"memory {s}") for s in range(n)]
    told = MemoryStore(_Reuse(), StoreConfig(provenance=False, rerank_depth=depth))
    told.add(recs, x)
    marked = MemoryStore(None, StoreConfig(provenance=False, rerank_depth=depth), _Reuse.dim)
    y = x.copy()
    y[[int(i.split("#")[1]) for i in used], -1] = 1.0
    marked.add(recs, y)
    return told, marked


def _assert_same(told: MemoryStore, marked: MemoryStore, q: np.ndarray, k: int, used: list[str]) -> None:
    a = told.search_vector(q, k, used=used)
    b = marked.search_vector(q, k)
    assert [h.id for h in a] == [h.id for h in b]
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=0, atol=1e-9)
    assert [h.used for h in a] == [h.id in used for h in a] and all(h.used is None for h in b)


def _queries(seed: int, weights: tuple[float, ...]) -> list[np.ndarray]:
    """One random query per w_u in ``weights``, its last part (what weights u_m) set to it: the sign decides
    whether the used memories rise or sink, so each test asks both."""
    rng = np.random.default_rng(seed)
    qs = [rng.normal(size=_Reuse.dim).astype(np.float32) for _ in weights]
    for q, w in zip(qs, weights, strict=True):
        q[-1] = w
    return qs


def test_scoring_used_equals_the_index_holding_u_m_1():
    """The store scores the memories it is told are used as if their vectors' last part were 1 in the index (what
    evaluate.py's replay did by updating the index), a negative w_u too (which lets memories below the index's
    top up): the same ids, order and scores."""
    used = [f"e#{s}" for s in (3, 7, 20, 41, 55)]
    told, marked = _told_and_marked(60, used)
    for q in _queries(0, (-3.0, -0.5, 0.4, 3.0)):
        _assert_same(told, marked, q, 10, used)
    assert any(h.id in used for h in told.search_vector(q, 10, used=used)[:5])


def test_a_search_as_deep_as_the_index_may_be_asked_misses_no_memory_the_used_ones_sink_below(monkeypatch):
    """The used memories are made candidates with as many more of the index's top; where that is deeper than an
    index search may go (MAX_K: k or the re-rank depth near it, more memories than it), the used ones took places of
    the index's top that a negative w_u then sank, and the memories below them were missed: the last of the k were
    used memories an index holding u_m = 1 ranks below others. The top of the others is searched among them alone."""
    import sam_model.storesearch

    monkeypatch.setattr(sam_model.storesearch, "MAX_K", 40)  # 60 memories, more than a search may ask
    used = [f"e#{s}" for s in (2, 11, 23, 37, 50)]
    told, marked = _told_and_marked(60, used)
    for q in _queries(1, (-50.0, -1.0, 1.0, 50.0)):
        for k in (38, 40):
            _assert_same(told, marked, q, k, used)


@pytest.mark.parametrize(("variant", "on", "flag"), [("reuse", "opening", "task_reuse"),
                                                     ("reuse-recent", "reuse", "task_recency"),
                                                     ("lexlearn", "turns", "lexical_learned")])
def test_a_lodo_variant_is_the_one_it_is_on_with_its_config_stacked_last(variant, on, flag):
    """bench.lodo's reuse variants are paired with the one they build on by seed: the same configs, worlds, plots and
    briefing, plus the one config that turns their flag on (configs/FLAG.yaml)."""
    from pathlib import Path

    import yaml

    from sam_model.bench import lodo

    this, base = lodo.VARIANTS[variant], lodo.VARIANTS[on]
    config = "configs/" + flag + ".yaml"
    assert this.configs == (*base.configs, config) and this.on == on
    assert (this.worlds, this.plots, this.brief, this.turn) == (base.worlds, base.plots, base.brief, base.turn)
    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / config).read_text())
    assert cfg["model"] == {"net": {flag: True}}
