"""``NAME+used``: a model's ranking with the memories the task's earlier calls took values from moved first, each
part in the model's own order (sam_model.data.reuse.used_first; README "Reuse within a task", issue 21), and
``NAME+used-latest``, the used ones by their latest use: measured through the store's ``used_order``
(tests/test_served_used_order.py), as a live search orders them.

The set is ``used-first``'s (ranking.used_memories: the same causality), the order the model's, and a decision
with no earlier use keeps the model's ranking as it is.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_opening import make_net
from test_task_first import data_of, write
from test_used_first import ISSUE

from sam_model.data.reader import read_episodes
from sam_model.data.reuse import used_first
from sam_model.encoder import SAMEncoder
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.methods import retriever_methods
from sam_model.evaluation.ranking import used_memories, used_ranks
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig


def test_used_items_come_first_in_the_rankings_order_then_the_rest_in_its_order():
    ranked = [5, 2, 9, 1, 7, 4]
    assert used_first(ranked, {7, 9}) == [9, 7, 5, 2, 1, 4]  # 9 before 7: the ranking's order, not the set's
    assert used_first(ranked, [7, 9]) == used_first(ranked, [9, 7])
    assert used_first(ranked, ()) == ranked  # nothing used: the ranking as it is
    assert used_first(ranked, {3, 4}) == [4, 5, 2, 9, 1, 7]  # 3 is not ranked: not added
    assert used_first(["b", "a", "c"], {"c"}) == ["c", "b", "a"]  # ids as well as positions (a live store's hits)
    assert used_first(ranked, {7, 9, 1}, {7: 1, 9: 2, 1: 1}) == [1, 7, 9, 5, 2, 4]  # by rank, ties as ranked
    assert ranked == [5, 2, 9, 1, 7, 4]  # pure


def _model_that_ranks_used_memories_last(tiny_bert_dir) -> SAMEncoder:
    """A reuse model whose w_u is very negative: the model itself puts every used memory last, so moving them
    first is visible."""
    net = make_net(tiny_bert_dir, task_opening=True, task_reuse=True).eval()
    with torch.no_grad():
        net.reuse.head.bias.fill_(-10.0)
    return SAMEncoder(net)


def test_the_method_moves_the_used_memories_first_in_the_models_order(tiny_bert_dir, tmp_path):
    enc = _model_that_ranks_used_memories_last(tiny_bert_dir)
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    (model,) = retriever_methods("m", enc)
    jitter = np.zeros(len(data.memories))
    plain = model.rank(data, "episode", 10, jitter)
    got = model.ordered("model").rank(data, "episode", 10, jitter)
    assert model.ordered("model").name == "m+used" and model.ordered("latest").name == "m+used-latest"
    for ex, r, g in zip(data.examples, plain, got, strict=True):
        used = used_memories(data.memories, ex)
        assert list(r[len(r) - len(used):]) == [p for p in r if p in used]  # the model ranks them last
        assert list(g) == [p for p in r if p in used] + [p for p in r if p not in used]
    assert [len(used_memories(data.memories, ex)) for ex in data.examples] == [0, 1, 2]
    assert list(got[0]) == list(plain[0])  # no earlier use: the model's ranking
    # a search cut at depth 2 still moves a used memory the model ranks below it (every candidate is ranked)
    cut = model.ordered("model").rank(data, "episode", 2, jitter)
    assert [len(c) for c in cut] == [2, 2, 2] and set(cut[2]) == set(used_memories(data.memories, data.examples[2]))


def test_the_store_path_is_the_post_hoc_rule_over_every_candidate(tiny_bert_dir, tmp_path):
    """What evaluate measured before the store served it (the model's ranking of every candidate, then
    data.reuse.used_first, cut at the depth) is what the store's used_order gives, decision by decision; "latest"
    orders the used ones by the rank of their latest use (ranking.used_ranks), ties in the model's order."""
    enc = _model_that_ranks_used_memories_last(tiny_bert_dir)
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    (model,) = retriever_methods("m", enc)
    jitter = np.zeros(len(data.memories))
    every = model.rank(data, "episode", len(data.memories), jitter)
    for depth in (2, 3, 10):
        post_hoc = [used_first(r.tolist(), used_memories(data.memories, ex))[:depth]
                    for r, ex in zip(every, data.examples, strict=True)]
        assert [g.tolist() for g in model.ordered("model").rank(data, "episode", depth, jitter)] == post_hoc
        latest = [used_first(r.tolist(), used_memories(data.memories, ex), used_ranks(data.memories, ex))[:depth]
                  for r, ex in zip(every, data.examples, strict=True)]
        assert [g.tolist() for g in model.ordered("latest").rank(data, "episode", depth, jitter)] == latest


def test_the_ordered_replay_encodes_the_decisions_once(tiny_bert_dir, tmp_path, monkeypatch):
    """``NAME+used`` replays the log again with the store's used_order: the decisions' query vectors are those of
    the first replay, not encoded again (with plus_used every retriever's queries twice)."""
    enc = _model_that_ranks_used_memories_last(tiny_bert_dir)
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    (model,) = retriever_methods("m", enc)
    encoded = []
    real = model.replay.encode_queries
    monkeypatch.setattr(model.replay, "encode_queries", lambda exs: encoded.append(len(exs)) or real(exs))
    jitter = np.zeros(len(data.memories))
    plain = model.rank(data, "episode", 10, jitter)
    model.ordered("model").rank(data, "episode", 10, jitter)
    model.ordered("latest").rank(data, "episode", 10, jitter)
    assert encoded == [len(data.examples)]
    assert [list(r) for r in model.rank(data, "episode", 10, jitter)] == [list(r) for r in plain]


def test_evaluate_writes_name_plus_used_beside_each_model_and_the_seed_tables_read_it(tiny_bert_dir, tmp_path):
    """evaluate(plus_used=True) (evaluate.py --plus-used, bench.lodo always) writes ``reuse+used`` in
    per_query.jsonl beside ``reuse``; decision 2's label, the issue, is the one used memory: the model ranks it
    last, ``reuse+used`` first (RR 1). bench.paired and bench.lodo_seeds compare it by that name."""
    from sam_model.bench import lodo_seeds, paired
    from sam_model.evaluation import evaluate
    from sam_model.evaluation.run import build_parser

    log = write(tmp_path / "issue.jsonl", ISSUE)
    base = ["--retriever", "x", "--data", str(log), "--out", str(tmp_path / "o")]
    assert build_parser().parse_args([*base, "--plus-used"]).plus_used
    assert not build_parser().parse_args(base).plus_used
    enc = _model_that_ranks_used_memories_last(tiny_bert_dir)
    runs = [tmp_path / f"s{s}" for s in (0, 1)]
    for run in runs:
        report = evaluate(log, run / "coding", None, baselines=["used-first", "recency"], compare={"reuse": enc},
                          latency_queries=1, quiet=True, plus_used=True)
        rows = [json.loads(x) for x in (run / "coding" / "per_query.jsonl").read_text().splitlines()]
        assert set(rows[0]["methods"]) == {"used-first", "recency", "reuse", "reuse+used", "reuse+used-latest",
                                          "reuse+used-needed"}
        assert rows[1]["methods"]["reuse+used"]["rr"] == pytest.approx(1.0)
        assert rows[1]["methods"]["reuse"]["rr"] < 1.0
        assert rows[0]["methods"]["reuse+used"] == rows[0]["methods"]["reuse"]  # nothing used yet
        assert "reuse+used" in report["methods"]
        (run / "lodo.json").write_text(json.dumps([{"domain": "coding", "best_baseline": "used-first"}]))
    assert "| MRR |" in paired.table(runs[0] / "coding", "reuse+used", "reuse")
    summary = lodo_seeds.summarise(*lodo_seeds.load(runs, "reuse+used", "reuse"))
    assert summary["coding"]["variant - reference"][0] > 0
    plain = evaluate(log, tmp_path / "plain", None, baselines=[], compare={"reuse": enc}, latency_queries=1,
                     quiet=True)
    assert set(plain["methods"]) == {"reuse"}  # off by default: evaluate.py's reports as before


def test_a_plain_row_searches_with_the_stores_own_used_order_as_the_deployed_store_does(tiny_bert_dir, tmp_path):
    """An export whose store sets ``used_order`` (StoreConfig) is searched live with its used memories first; its
    plain ``NAME`` row must rank as that store does, not with the ordering turned off (it did: the plain row forced
    "off", so a shipped ordering showed only in the ``NAME+used`` rows). A model without reuse heads too."""
    from types import SimpleNamespace

    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = SAMEncoder(make_net(tiny_bert_dir).eval())
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    jitter = np.zeros(len(data.memories))
    (off,) = retriever_methods("m", enc)
    shipped = SimpleNamespace(encoder=enc, store=MemoryStore(enc, StoreConfig(provenance=False, used_order="latest")))
    (plain,) = retriever_methods("m", shipped)
    want = [g.tolist() for g in off.ordered("latest").rank(data, "episode", 10, jitter)]
    assert want != [g.tolist() for g in off.rank(data, "episode", 10, jitter)]  # the ordering moves something
    assert [g.tolist() for g in plain.rank(data, "episode", 10, jitter)] == want


@pytest.mark.parametrize(("scope", "reuse"), [("episode", False), ("global", True)])
def test_the_store_path_is_the_post_hoc_rule_with_the_rerank_on_a_demo_log(tiny_bert_dir, small_demo_logs, scope,
                                                                            reuse):
    """As above, through a retriever whose store re-ranks (needed slots, provenance links: the store orders the
    re-ranked list, not the index's), on a demo log's decisions in both scopes, with and without a reuse model: the
    store's used_order gives the post-hoc rule's rankings decision by decision."""
    net = make_net(tiny_bert_dir, task_opening=True, task_reuse=reuse).eval()
    if reuse:
        with torch.no_grad():
            net.reuse.head.bias.fill_(-3.0)
    _, held = small_demo_logs
    data = build_eval_data(str(held), read_episodes(held), scope)
    data.examples = data.examples[:60]
    model = retriever_methods("m", SAMRetriever(net, StoreConfig(slot_match=0.3, provenance=True,
                                                                 source_kinds=["user", "system"])))[0]
    assert model.reranks
    jitter = np.zeros(len(data.memories))
    every = model.rank(data, scope, len(data.memories), jitter)
    assert sum(bool(used_memories(data.memories, ex)) for ex in data.examples) > 20  # the test can fail
    for depth in (5, 20):
        for order, ranks in (("model", lambda ex: None), ("latest", lambda ex: used_ranks(data.memories, ex))):
            want = [used_first(r.tolist(), used_memories(data.memories, ex), ranks(ex))[:depth]
                    for r, ex in zip(every, data.examples, strict=True)]
            assert [g.tolist() for g in model.ordered(order).rank(data, scope, depth, jitter)] == want
