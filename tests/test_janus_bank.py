"""Memory-bank adapter: tasks, a non-mutating updater, the retrieval evaluator, φ, and Janus gating it."""

import json

import numpy as np
import pytest

from sam_model.data.schema import parse_event
from sam_model.data.synthetic import generate_episodes
from sam_model.janus import HybridEvalSet, JanusController, Memory, make_gate
from sam_model.janus.adapters.memory_bank import (
    BankEvaluator,
    BankFeatures,
    BankTask,
    BankTaskFeatures,
    BankUpdater,
    bank_tasks,
    copy_bank,
)
from sam_model.memory import HashingEncoder, MemoryBank, MemoryConfig

R = HashingEncoder(128)
TINY = MemoryConfig(capacity=3)  # prunes nearly everything: the deliberately harmful policy


def episodes(n, seed=3):
    return [[parse_event(d) for d in ep] for ep in generate_episodes(n, seed=seed)]


def ids(bank):
    return sorted(u.id for u in bank)


@pytest.fixture(scope="module")
def eps():
    return episodes(6)


def test_bank_tasks_cut_one_decision_each(eps):
    tasks = bank_tasks(eps)
    assert [e for t in tasks for e in t.events] == [e for ep in eps for e in ep]  # nothing lost or reordered
    assert all(len(t.decision_points) == 1 for t in tasks)
    assert len(tasks) == sum(e.is_decision_point for ep in eps for e in ep)
    t = tasks[0]
    assert t.id == f"{t.decision.episode_id}#{t.decision.step}" and t.labels()
    no_dp = [e for e in eps[0] if not e.is_decision_point][:3]
    assert bank_tasks([no_dp])[0].decision is None


def test_propose_does_not_mutate_and_adds_the_tasks(eps):
    tasks = bank_tasks(eps[:2])
    base = BankUpdater(R).propose(MemoryBank(R.dim), tasks[:3])
    before = (ids(base), base.clock, BankFeatures()(base).tolist())
    new = BankUpdater(R).propose(base, tasks[3:])
    assert (ids(base), base.clock, BankFeatures()(base).tolist()) == before
    assert new is not base and new.clock == base.clock + sum(len(t.events) for t in tasks[3:])
    written = {f"{e.episode_id}#{e.step}" for t in tasks[3:] for e in t.events}
    assert written <= set(ids(new)) and set(ids(base)) < set(ids(new))
    # the batched embeddings are the ones the bank would compute itself
    u = new[next(iter(written))]
    assert np.allclose(new.vector(u.id), R.encode_memories([u])[0], atol=1e-6)


def test_propose_errors(eps):
    tasks = bank_tasks(eps[:1])
    with pytest.raises(TypeError, match="not a BankTask"):
        BankUpdater(R).propose(MemoryBank(R.dim), ["x"])
    with pytest.raises(ValueError, match="one list of used memory ids per task"):
        BankUpdater(R).propose(MemoryBank(R.dim), tasks, feedback=[[]])
    with pytest.raises(ValueError, match="tier shape"):
        BankUpdater(R, MemoryConfig(working_size=8)).propose(MemoryBank(R.dim), tasks)
    bank = BankUpdater(R).propose(MemoryBank(R.dim), tasks)
    with pytest.raises(ValueError, match="already in the bank"):
        BankUpdater(R).propose(bank, tasks[:1])


def test_feedback_reinforces_used_memories(eps):
    tasks = bank_tasks(eps[:1])
    uid = sorted(tasks[0].labels())[0]
    plain = BankUpdater(R).propose(MemoryBank(R.dim), tasks)
    fed = BankUpdater(R).propose(MemoryBank(R.dim), tasks, feedback=[[uid]] + [[]] * (len(tasks) - 1))
    assert fed.importance(uid) > plain.importance(uid)


def test_evaluator_prefers_the_bank_that_holds_the_labels(eps):
    tasks = bank_tasks(eps)
    full = BankUpdater(R).propose(MemoryBank(R.dim), tasks)
    pruned = BankUpdater(R, TINY).propose(MemoryBank(R.dim), tasks)
    assert len(pruned) < len(full)
    for k in (1, 5):
        ev = BankEvaluator(R, k=k)
        c_full, c_pruned, c_empty = (ev.correct(b, tasks) for b in (full, pruned, MemoryBank(R.dim)))
        for c in (c_full, c_pruned, c_empty):
            assert c.dtype == bool and c.shape == (len(tasks),)
        assert not c_empty.any()
        assert c_full.mean() > c_pruned.mean()
    assert BankEvaluator(R, k=5).correct(full, tasks).sum() >= BankEvaluator(R, k=1).correct(full, tasks).sum()
    # whole-episode tasks: solved only when every decision point is
    whole = [BankTask(tuple(ep)) for ep in eps]
    per_ep = BankEvaluator(R, k=5, all_points=True).correct(full, whole)
    c5 = BankEvaluator(R, k=5).correct(full, tasks)
    by_ep = [all(c for t, c in zip(tasks, c5) if t.decision.episode_id == ep[0].episode_id) for ep in eps]
    assert per_ep.tolist() == by_ep
    with pytest.raises(ValueError, match="positive int"):
        BankEvaluator(R, k=0)


def test_phi_is_stable_and_moves_with_the_bank(eps):
    tasks = bank_tasks(eps[:2])
    enc = BankFeatures()
    a = BankUpdater(R).propose(MemoryBank(R.dim), tasks[:3])
    phi_a = enc(a)
    assert phi_a.shape == enc(MemoryBank(R.dim)).shape == (R.dim + 10,)
    assert np.array_equal(phi_a, enc(copy_bank(a)))
    b = BankUpdater(R).propose(a, tasks[3:])
    assert np.linalg.norm(enc(b) - phi_a) > 1e-3
    emb = BankTaskFeatures(R)(tasks)
    assert emb.shape == (len(tasks), R.dim) and np.allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)


class SwitchingUpdater:
    """The normal bank updater, except that the ``bad``-th proposal prunes to a tiny capacity."""

    def __init__(self, bad):
        self.calls, self.bad = 0, bad
        self.good, self.harmful = BankUpdater(R), BankUpdater(R, TINY)

    def propose(self, memory, tasks, feedback=None):
        self.calls += 1
        return (self.harmful if self.calls == self.bad else self.good).propose(memory, tasks, feedback)


def test_janus_keeps_the_old_bank_when_an_update_prunes_what_is_needed(tmp_path):
    eps = episodes(5, seed=7)
    stream = [(bank_tasks([ep]), None) for ep in eps]
    assert isinstance(MemoryBank(R.dim), Memory)
    # k=10: graded at the decision, the bank's expansion fills a top 5 with the temporal neighbours of
    # the best hits and episode 2's labels fall below it in either bank (a tie, kept old); a top 10 holds them
    ctrl = JanusController(SwitchingUpdater(bad=4), BankEvaluator(R, k=10), BankFeatures(), make_gate("always"),
                           HybridEvalSet(BankTaskFeatures(R), coverage=6, boundary=8, fresh=6), tmp_path)
    final = ctrl.run(stream, MemoryBank(R.dim))
    decisions = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert [d["accepted"] for d in decisions] == [True, True, True, False, True]
    bad = decisions[3]
    assert bad["triggered"] and bad["score_new"] < bad["score_old"]
    # the rejected candidate was checkpointed and really is the pruned bank
    assert len(MemoryBank.load(tmp_path / bad["new_ckpt"])) < len(MemoryBank.load(tmp_path / bad["old_ckpt"]))
    # the deployed bank holds every episode except the rejected one, and round-trips through its checkpoint
    episodes_in = {u.episode_id for u in final}
    assert episodes_in == {ep[0].episode_id for i, ep in enumerate(eps) if i != 3}
    loaded = MemoryBank.load(tmp_path / decisions[-1]["deployed"])
    assert ids(loaded) == ids(final) and np.array_equal(BankFeatures()(loaded), BankFeatures()(final))


def test_the_evaluator_grades_the_search_made_at_the_decision():
    """The evaluator asked the bank for k plus the episode's later units and dropped the later ones afterwards; but
    the bank's expansion walks from its hits, and the decision's own unit (its words are the query's) reached its
    temporal neighbours, which took the places: the labelled unit e#0, the bank's top-1 at the decision, was not in
    the top 3, and the task was graded unsolved. The search is now made at the decision (MemoryBank.search's
    before): neither the decision's unit nor later ones are hits or expansion seeds."""
    from sam_model.data.schema import Event, State

    st = State("book")
    texts = ["booking reference ZX9 for the Lisbon hotel", "the weather is sunny and warm today",
             "which booking reference for the Lisbon hotel", "booking reference ZX9 for the Lisbon hotel confirmed"]
    evs = [Event("e", i, "user", t, st, useful_memory_steps=(0,) if i == 2 else None) for i, t in enumerate(texts)]
    task = BankTask(tuple(evs))
    bank = BankUpdater(R).propose(MemoryBank(R.dim), [task])
    q = R.encode_queries([evs[2].state], [evs[2].text])[0]
    assert [h.id for h in bank.search(q, 1, before=("e", 2))] == ["e#0"]  # the bank's answer at the decision
    assert BankEvaluator(R, k=1).correct(bank, [task]).tolist() == [True]
