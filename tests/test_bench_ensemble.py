"""sam_model.bench.ensemble: K retrievers as one encoder whose inner product is the mean of their scores."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from sam_model.bench.ensemble import ScoreEnsemble, load_members, main
from sam_model.data.examples import episode_memories
from sam_model.data.reader import read_episodes
from sam_model.retriever import SAMRetriever


@pytest.fixture(scope="module")
def two_members(trained_demo_export):
    """The demo export, and a copy of it whose projection is perturbed: two members that rank differently."""
    a, b = SAMRetriever.load(trained_demo_export), SAMRetriever.load(trained_demo_export)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in b.net.named_parameters():
            if "text_encoder" not in name and p.ndim == 2:  # the heads, not the frozen BERT
                p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return a, b


def _inputs(small_demo_logs):
    episode = read_episodes([small_demo_logs[1]])[0]
    mems = episode_memories(episode)
    states = [e.state for e in episode.events]
    obs = [e.text for e in episode.events]
    return mems, states, obs


def test_the_ensemble_score_is_the_mean_of_its_members_scores(two_members, small_demo_logs):
    a, b = two_members
    mems, states, obs = _inputs(small_demo_logs)
    sa = a.encode_queries(states, obs) @ a.encode_memories(mems).T
    sb = b.encode_queries(states, obs) @ b.encode_memories(mems).T
    assert not np.allclose(sa, sb, atol=1e-3), "the perturbed member must score differently for the test to mean much"
    ens = ScoreEnsemble([a, b])
    q, m = ens.encode_queries(states, obs), ens.encode_memories(mems)
    assert q.shape[1] == m.shape[1] == ens.dim == a.dim + b.dim
    assert np.allclose(q @ m.T, (sa + sb) / 2, atol=1e-4)


def test_an_ensemble_of_one_ranks_as_its_member_with_its_store_settings(two_members, small_demo_logs):
    a, _ = two_members
    mems, states, obs = _inputs(small_demo_logs)
    one = ScoreEnsemble([a])
    assert np.allclose(one.encode_queries(states, obs) @ one.encode_memories(mems).T,
                       a.encode_queries(states, obs) @ a.encode_memories(mems).T, atol=1e-5)
    assert one.store.config == a.store.config


def test_no_member_is_an_error_that_says_what_to_give():
    with pytest.raises(ValueError, match="at least one member"):
        ScoreEnsemble([])
    with pytest.raises(SystemExit):
        main(["--members", " , ", "--data", "x.jsonl", "--out", "o"])


def test_the_bench_reports_the_ensemble_beside_each_member(trained_demo_export, small_demo_logs, tmp_path):
    out = tmp_path / "ens"
    assert main(["--members", f"{trained_demo_export},{trained_demo_export}", "--data", str(small_demo_logs[1]),
                 "--max-queries", "40", "--out", str(out)]) == 0
    methods = json.loads((out / "report.json").read_text())["methods"]
    assert {"sam", "m0", "m1"} <= set(methods)
    # two copies of one model: the ensemble ranks exactly as the model does
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert len(rows) == 40
    assert all(r["methods"]["sam"]["rr"] == r["methods"]["m0"]["rr"] for r in rows)


def test_a_read_too_short_for_any_text_is_refused_naming_the_field(trained_demo_export, small_demo_logs, tmp_path):
    with pytest.raises(ValueError, match="observation_max_length"):
        main(["--members", str(trained_demo_export), "--observation-max-length", "2", "--data",
              str(small_demo_logs[1]), "--out", str(tmp_path / "o")])


def test_members_read_the_observation_length_given(trained_demo_export):
    (m,) = load_members([str(trained_demo_export)], 5)
    assert m.net.cfg.observation_max_length == 5
    text = "one two three four five six seven eight"
    assert m.net.observations_read([text]) == ["one two three"]  # 5 tokens: [CLS], three words, [SEP]
