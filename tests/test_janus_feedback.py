"""Noisy-feedback regime of the Janus benchmark: reported labels, the corruption schedule, the updater's use."""

import re

import numpy as np
import pytest
import torch

from sam_model.bench import janus_head as bench
from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.io import SAMFileError
from sam_model.janus.adapters.retriever_head import HeadContext, HeadFineTuner
from sam_model.models.bert import tiny_bert
from sam_model.models.sam import SAMConfig, SAMNet

HIDDEN = 32


@pytest.fixture()
def ctx():
    """Episodes of five facts then two questions (one needs a fact, one needs two): the same toy as
    test_janus_retriever, with a multi-label decision point so corrupted label counts are exercised."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    eps = []
    for i in range(12):
        r, r2 = (int(x) for x in rng.choice(5, 2, replace=False))
        evs = [{"episode_id": f"e{i}", "step": j, "kind": "user", "text": f"ep{i} fact{j}",
                "state": {"phase": "tell"}} for j in range(5)]
        evs.append({"episode_id": f"e{i}", "step": 5, "kind": "user", "text": f"ep{i} ask",
                    "state": {"phase": "ask", "uncertainty_flags": [f"slot{r}"]}, "useful_memory_steps": [r]})
        evs.append({"episode_id": f"e{i}", "step": 6, "kind": "user", "text": f"ep{i} ask again",
                    "state": {"phase": "ask", "uncertainty_flags": [f"slot{r2}"]}, "useful_memory_steps": [r, r2]})
        eps.append(Episode(f"e{i}", tuple(parse_event(e) for e in evs)))
    # one episode whose only earlier event is useful: no wrong candidate exists
    one = [{"episode_id": "solo", "step": 0, "kind": "user", "text": "solo fact0", "state": {"phase": "tell"}},
           {"episode_id": "solo", "step": 1, "kind": "user", "text": "solo ask",
            "state": {"phase": "ask", "uncertainty_flags": ["slot0"]}, "useful_memory_steps": [0]}]
    eps.append(Episode("solo", tuple(parse_event(e) for e in one)))
    memories = [m for ep in eps for m in episode_memories(ep)]
    examples = list(iter_examples(eps))
    base, s = rng.normal(size=(5, HIDDEN)), rng.normal(size=(5, HIDDEN))
    vec = {}
    for m in memories:
        j = int(re.search(r"fact(\d)", m.text).group(1)) if "fact" in m.text else 0
        vec[m.text] = (base[j] + 0.3 * rng.normal(size=HIDDEN)).astype(np.float32)
    for e in examples:
        vec[e.state_text] = s[int(re.search(r"slot(\d)", e.state_text).group(1))].astype(np.float32)
        vec[e.observation] = rng.normal(size=HIDDEN).astype(np.float32)
    cfg = SAMConfig(dim=16, hidden=32, proj_hidden=16, phase_dim=4, kind_dim=4, dropout=0.0, phases=["tell", "ask"],
                    kinds=["user"], trainable_layers=0)
    return HeadContext(SAMNet(cfg, tiny_bert(hidden=HIDDEN), tokenizer=None), memories, examples, vec, device="cpu")


def same(a, b):
    return all(torch.equal(a.tensors[k], b.tensors[k]) for k in a.tensors)


def test_no_noise_is_the_old_behaviour(ctx):
    tasks = list(range(len(ctx.examples)))
    assert bench.feedback_schedule(51, 0.0, 3) == [False] * 51
    clean = bench.reported_labels(ctx, tasks, False, seed=3)
    assert clean == {t: ctx.relevant_pos[t] for t in tasks}
    up = HeadFineTuner(ctx, steps=5, lr=1e-2, batch_size=8)
    m0 = ctx.memory()
    assert same(up.propose(m0, tasks, clean), up.propose(m0, tasks, None))  # bit for bit: the clean benchmark
    assert same(up.propose(m0, tasks, {}), up.propose(m0, tasks))  # omitted tasks keep their true labels


def test_corrupted_labels_are_wrong_candidates_of_the_episode(ctx):
    tasks = list(range(len(ctx.examples)))
    bad = bench.reported_labels(ctx, tasks, True, seed=3)
    assert bad == bench.reported_labels(ctx, tasks, True, seed=3)  # a pure function of the seed
    assert bad != bench.reported_labels(ctx, tasks, True, seed=4)
    for t in tasks:
        e, true = ctx.examples[t], set(ctx.relevant_pos[t])
        wrong = set(e.candidate_range("episode")) - true
        assert not set(bad[t]) & true  # never a truly useful memory
        assert set(bad[t]) <= wrong  # earlier events of the same episode only
        assert len(bad[t]) == min(len(true), len(wrong)) and len(set(bad[t])) == len(bad[t])
        assert all(ctx.memories[p].id not in e.relevant_ids for p in bad[t])
    assert any(len(v) == 2 for v in bad.values())  # multi-label decision points keep their label count
    solo = next(t for t in tasks if ctx.examples[t].episode_id == "solo")
    assert bad[solo] == []  # every candidate is useful: nothing wrong to report


def test_corruption_schedule_is_deterministic_per_seed():
    a = bench.feedback_schedule(51, 0.2, seed=3)
    assert a == bench.feedback_schedule(51, 0.2, seed=3)
    assert sum(a) == 10 and len(a) == 51  # round(0.2 · 51)
    assert a != bench.feedback_schedule(51, 0.2, seed=4)
    assert sum(bench.feedback_schedule(51, 1.0, seed=0)) == 51
    with pytest.raises(SAMFileError, match="feedback_noise"):
        bench.feedback_schedule(51, 1.5, seed=0)


def test_updater_trains_on_the_reported_labels(ctx):
    """Corrupted feedback changes the candidate, deterministically; empty reports are left out; positions
    outside a task's candidates are refused."""
    tasks = [t for t in range(len(ctx.examples)) if ctx.examples[t].episode_id != "solo"]
    up = HeadFineTuner(ctx, steps=40, lr=1e-2, batch_size=8)
    m0 = ctx.memory()
    bad = bench.reported_labels(ctx, tasks, True, seed=0)
    m_bad, m_good = up.propose(m0, tasks, bad), up.propose(m0, tasks, None)
    assert same(m_bad, up.propose(m0, tasks, bad)) and not same(m_bad, m_good)
    assert ctx.correct(m_good, tasks).mean() > ctx.correct(m_bad, tasks).mean()  # the wrong signal hurts
    assert same(up.propose(m0, tasks[:1], {tasks[0]: []}), m0)  # nothing reported useful: no update
    other = ctx.examples[tasks[-1]].episode_start
    with pytest.raises(ValueError, match="not among its candidates"):
        up.propose(m0, tasks[:1], {tasks[0]: [other]})
