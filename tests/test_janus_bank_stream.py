"""The bank stream: its fault schedule, its probes and visits, the updater's faults and the recall evaluator."""

import numpy as np
import pytest

from sam_model.bench.janus_bank_stream import FAULTS, build_bank_stream, dialogue_from_events, fault_schedule
from sam_model.data.schema import parse_event
from sam_model.data.synthetic import generate_episodes
from sam_model.janus.adapters.bank_recall import RecallEvaluator, RecallTaskFeatures, StreamUpdater
from sam_model.janus.adapters.memory_bank import copy_bank
from sam_model.memory import HashingEncoder, MemoryBank, MemoryConfig
from sam_model.memory.rules import BankRules

R = HashingEncoder(128)


@pytest.fixture(scope="module")
def dialogues():
    return [dialogue_from_events([parse_event(e) for e in ep], "Trip") for ep in generate_episodes(14, seed=5)]


def stream(dialogues, share=0.0, kinds=FAULTS, seed=0, flood=20):
    return build_bank_stream(dialogues, n_history=2, n_batches=6, per_batch=2, visits=3, probes=2, share=share,
                             kinds=kinds, flood=flood, seed=seed)


def test_fault_schedule_is_seeded_balanced_and_spares_the_first_batch():
    s = fault_schedule(40, 0.25, FAULTS, seed=3)
    assert s == fault_schedule(40, 0.25, FAULTS, seed=3) and s != fault_schedule(40, 0.25, FAULTS, seed=4)
    assert s[0] is None and sum(f is not None for f in s) == 10
    counts = [s.count(k) for k in FAULTS]
    assert max(counts) - min(counts) <= 1
    assert fault_schedule(10, 0.0, FAULTS, 0) == [None] * 10
    with pytest.raises(ValueError, match="unknown fault"):
        fault_schedule(10, 0.5, ["typo"], 0)


def test_stream_probes_visits_and_faults(dialogues):
    clean, bad = stream(dialogues), stream(dialogues, share=1.0, kinds=["misread"])
    eps = [b.events[0].episode_id for b in clean.batches]
    assert len(set(eps)) == len(eps) and len(clean.heldout) == 14 * 1 and len(clean.history_tasks) == 2
    asked = {(t.episode_id, t.slot) for b in clean.batches for t in b.tasks} | {(t.episode_id, t.slot)
                                                                              for t in clean.history_tasks}
    held = {(t.episode_id, t.slot) for t in clean.heldout}
    assert not asked & held and all(t.batch == b.t for b in clean.batches for t in b.tasks)
    for b_clean, b_bad in zip(clean.batches[1:], bad.batches[1:]):
        assert len(b_clean.visits) == len(b_bad.visits) > 0  # a misread batch writes as much as a clean one
        assert all(not v.misread and (v.episode_id, v.slot) not in asked | held for v in b_clean.visits)
        assert all(v.misread and (v.episode_id, v.slot) in asked | held for v in b_bad.visits)
        truth = {(t.episode_id, t.slot): t.value for t in bad.heldout + bad.history_tasks} | \
            {(t.episode_id, t.slot): t.value for b in bad.batches for t in b.tasks}
        assert all(v.value != truth[(v.episode_id, v.slot)] for v in b_bad.visits)
        seen = {e.episode_id for e in bad.history} | {e.episode_id for b in bad.batches[: b_bad.t - 1] for e in b.events}
        assert {v.episode_id for v in b_bad.visits} <= seen  # users come back to dialogues served earlier


def test_updater_faults_and_recall(dialogues):
    flood = stream(dialogues, share=1.0, kinds=["flood"], flood=25)
    clean, misread = stream(dialogues), stream(dialogues, share=1.0, kinds=["misread"])
    m0 = MemoryBank(R.dim, MemoryConfig(capacity=0))
    StreamUpdater(R, []).observe(m0, BankRules(m0, encode=R.encode_memories), clean.history)
    ev = RecallEvaluator(R, k=5)
    before = copy_bank(m0)
    up = StreamUpdater(R, clean.batches)
    bank = m0
    for b in clean.batches[:3]:
        bank = up.propose(bank, b.tasks)
    assert sorted(u.id for u in m0) == sorted(u.id for u in before)  # proposals never touch the deployed bank
    old = [t for t in clean.heldout if t.batch < 4]
    base = ev.correct(bank, old)
    t4 = clean.batches[3].tasks
    c_clean = up.propose(bank, t4)
    c_misread = StreamUpdater(R, misread.batches).propose(bank, t4)
    hit = {(v.episode_id, v.slot) for v in misread.batches[3].visits}
    victims = [i for i, t in enumerate(old) if (t.episode_id, t.slot) in hit and base[i]]
    assert victims, "the misread batch should hit an old probe this bank answered"
    assert not ev.correct(c_misread, [old[i] for i in victims]).any()  # the wrong value is read first
    assert ev.correct(c_clean, [old[i] for i in victims]).all()
    n = len(bank)
    pruned = StreamUpdater(R, misread.batches, prune_keep=0.4)
    cand = copy_bank(c_clean)
    ids = pruned.prune_pass(cand, BankRules(cand, encode=R.encode_memories))
    assert len(cand) == int(0.4 * len(c_clean)) and len(ids) == len(c_clean) - len(cand) and len(c_clean) > n
    assert ev.correct(cand, old).mean() < ev.correct(c_clean, old).mean()
    kept = copy_bank(c_clean)
    StreamUpdater(R, [], prune_keep=0.4, prune_mode="absorb").prune_pass(kept, BankRules(kept, encode=R.encode_memories))
    assert len(kept) < len(c_clean) and ev.correct(kept, old).mean() > ev.correct(cand, old).mean()
    c_flood = StreamUpdater(R, flood.batches).propose(bank, t4)
    assert len(c_flood) == len(c_clean) + 25
    # both memories in one call, the same answers; the task encoder gives unit vectors
    a, b = ev.correct_many([bank, c_misread], old)
    assert np.array_equal(a, base) and np.array_equal(b, ev.correct(c_misread, old))
    emb = RecallTaskFeatures(R)(old)
    assert emb.shape == (len(old), R.dim) and np.allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)
    with pytest.raises(ValueError, match="one stream batch"):
        up.propose(bank, clean.batches[0].tasks + clean.batches[1].tasks)
    with pytest.raises(TypeError, match="RecallTask"):
        ev.correct(bank, ["x"])


def test_episode_scoped_search_ranks_only_that_episode(dialogues):
    s = stream(dialogues)
    bank = MemoryBank(R.dim)
    StreamUpdater(R, []).observe(bank, BankRules(bank, encode=R.encode_memories), s.history)
    t = s.history_tasks[0]
    q = R.encode_queries([t.state], [t.text])[0]
    hits = bank.search(q, 500, needs=(t.slot,), episode_id=t.episode_id)
    assert hits and {h.episode_id for h in hits} == {t.episode_id}
    assert len(hits) == sum(u.episode_id == t.episode_id for u in bank)
    assert {h.episode_id for h in bank.search(q, 50)} != {t.episode_id}
    assert bank.search(q, 5, episode_id="nobody") == []


def test_content_encoder_encodes_each_text_once_across_runs(tmp_path):
    from sam_model.memory.encoders import ContentEncoder

    units = [type("U", (), {"text": t})() for t in ("[user] hi", "[user] my city is Paris")]
    first = ContentEncoder(cache_dir=str(tmp_path))
    vecs = first.encode_memories(units)
    assert first.encoded == 2
    first.save()
    again = ContentEncoder(cache_dir=str(tmp_path))
    assert np.allclose(again.encode_memories(units), vecs, atol=1e-2) and again.encoded == 0


def test_bank_bench_runs_every_policy_and_reports_the_regime(dialogues, tmp_path):
    from rich.console import Console

    from sam_model.bench import janus_bank as bb
    from sam_model.bench.janus_report import bank_table
    from sam_model.janus.stats import default_pairs, paired_table, policy_stats

    class Hashing(HashingEncoder):
        encoded = 0

        def save(self):
            pass

    cfg = bb.BankBenchCfg()
    cfg.data = bb.BankDataCfg(history=2, batches=4, per_batch=1, visits=2, probes=2)
    cfg.faults = bb.FaultCfg(share=0.5, flood=20)
    cfg.memory = bb.BankMemoryCfg(capacity=300, working_size=0, ivf_nlist=None)
    cfg.janus = bb.BankJanusCfg(ablations=["fresh"], coverage=4, boundary=4, fresh=4, tau=-0.5, size_weight=1.0)
    per_seed = {0: bb.run_seed(cfg, dialogues[:6], 0, tmp_path / "out", Console(quiet=True), Hashing(128))}
    r = per_seed[0]
    assert set(r) == {"none", "always", "mmt", "random", "periodic", "mmt-no-fresh"}
    assert r["none"]["total_tasks"] == 0 and r["always"]["comparisons"] == 4
    assert r["random"]["comparisons"] == r["periodic"]["comparisons"] == r["mmt"]["comparisons"]
    assert r["mmt"]["phi_tasks"] == 5 and r["random"]["phi_tasks"] == 0  # φ on M_0 and on each candidate
    assert r["none"]["faulty"]["deployed"] == r["none"]["faulty"]["n"] == 2
    assert len(r["always"]["oracle"]) == 4 and set(r["none"]["accuracy_by_age"]) == {"history", "old", "new"}
    stats = policy_stats(per_seed)
    paired = paired_table(per_seed, default_pairs(list(stats)))
    regime = bb.regime(per_seed)
    assert regime["clean"]["candidates"] + regime["faulty"]["candidates"] == 4
    tg = bb.targets(stats, paired)
    assert set(tg["met"]) == {"base_plus_5", "always_minus_1", "cost_40pct", "beats_random", "beats_periodic"}
    report = {"statistics": stats, "paired": paired, "targets": tg, "regime": regime,
              "per_seed": {str(k): v for k, v in per_seed.items()}}
    md = bank_table(report)
    assert "| mmt − random |" in md and "| faulty |" in md
    pytest.importorskip("matplotlib", reason="the [eval] extra is not installed")
    from sam_model.bench.janus_report import plot_bank

    report["faults"] = {"0": {"2": "prune"}}
    plot_bank(report, tmp_path / "janus_accuracy.png")  # the curve along the stream, faults marked
    assert (tmp_path / "janus_accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unquoted_gate_list_on_the_command_line_says_to_quote_each_gate():
    from sam_model.bench.janus_bank import BankBenchCfg
    from sam_model.bench.janus_config import parse_config
    from sam_model.io import SAMFileError

    base = ["--config", "configs/janus_bank.yaml", "--out", "-"]
    with pytest.raises(SAMFileError, match=r"""gates: .*quote each item, e.g. --gates '\["mmt\(0.9,-0.6,0\)","mmtu"\]'"""):
        parse_config([*base, "--gates", "[mmt(0.9,-0.6,0),mmtu]"], BankBenchCfg)
    cfg, _ = parse_config([*base, "--gates", '["mmt(0.9,-0.6,0)","mmtu"]'], BankBenchCfg)
    assert cfg.gates == ["mmt(0.9,-0.6,0)", "mmtu"]  # the advice works
