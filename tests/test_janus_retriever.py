"""Retriever-head adapter (tiny BERT, prefilled vectors, synthetic episodes) and the SGD benchmark plumbing."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from sam_model.bench import janus, janus_config
from sam_model.bench import janus_head as bench
from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.io import SAMFileError
from sam_model.janus import HybridEvalSet, JanusController, make_gate
from sam_model.janus.adapters.retriever_head import (
    HeadContext,
    HeadEvaluator,
    HeadFineTuner,
    HeadMemory,
    ParamSketch,
    ProbeFeatures,
)
from sam_model.models.bert import tiny_bert
from sam_model.models.sam import SAMConfig, SAMNet

HIDDEN = 32
SGD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "sgd"


def episodes(n=24, seed=0):
    """Five facts then a question whose state names the slot (fact) it needs."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        r = int(rng.integers(0, 5))
        evs = [{"episode_id": f"e{i}", "step": j, "kind": "user", "text": f"ep{i} fact{j}",
                "state": {"phase": "tell"}} for j in range(5)]
        evs.append({"episode_id": f"e{i}", "step": 5, "kind": "user", "text": f"ep{i} ask",
                    "state": {"phase": "ask", "uncertainty_flags": [f"slot{r}"]}, "useful_memory_steps": [r]})
        out.append(Episode(f"e{i}", tuple(parse_event(e) for e in evs)))
    return out


def vectors_for(memories, examples, seed=0):
    """Memory j of any episode ≈ base_j; a state needing slot r is s_r: learnable, not given for free."""
    rng = np.random.default_rng(seed)
    base, s = rng.normal(size=(5, HIDDEN)), rng.normal(size=(5, HIDDEN))
    vec = {}
    for m in memories:
        j = int(re.search(r"fact(\d)", m.text).group(1)) if "fact" in m.text else 0
        vec[m.text] = base[j] + 0.3 * rng.normal(size=HIDDEN)
    for e in examples:
        vec[e.state_text] = s[int(re.search(r"slot(\d)", e.state_text).group(1))]
        vec[e.observation] = rng.normal(size=HIDDEN)
    return {k: v.astype(np.float32) for k, v in vec.items()}


@pytest.fixture(autouse=True)
def one_thread():
    """The head is a few small matrices: extra threads only spin on a shared CPU (as the bench does)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture()
def ctx():
    torch.manual_seed(0)
    eps = episodes()
    memories = [m for ep in eps for m in episode_memories(ep)]
    examples = list(iter_examples(eps))
    cfg = SAMConfig(dim=16, hidden=32, proj_hidden=16, phase_dim=4, kind_dim=4, dropout=0.0, phases=["tell", "ask"],
                    kinds=["user"], trainable_layers=0)
    net = SAMNet(cfg, tiny_bert(hidden=HIDDEN), tokenizer=None)
    return HeadContext(net, memories, examples, vectors_for(memories, examples), device="cpu")


def test_memory_roundtrip_and_errors(ctx, tmp_path):
    mem = ctx.memory()
    assert not any("bert" in k for k in mem.tensors)
    mem.save(tmp_path / "h.mem")
    back = HeadMemory.load(tmp_path / "h.mem")
    assert back.tensors.keys() == mem.tensors.keys()
    assert all(torch.equal(back.tensors[k], mem.tensors[k]) for k in mem.tensors)
    (tmp_path / "bad.mem").write_bytes(b"not safetensors")
    with pytest.raises(SAMFileError, match="not a retriever-head checkpoint"):
        HeadMemory.load(tmp_path / "bad.mem")
    with pytest.raises(SAMFileError, match="does not fit"):
        ctx.load(HeadMemory({"x": torch.zeros(1)}))


def test_correct_matches_an_independent_top1(ctx):
    mem, tasks = ctx.memory(), list(range(len(ctx.examples)))
    got = HeadEvaluator(ctx).correct(mem, tasks)
    with torch.no_grad():
        ex = ctx.examples
        q = ctx.net.encode_queries([e.state_text for e in ex], [e.state.phase for e in ex],
                                   [e.observation for e in ex]).numpy()
        m = ctx.net.encode_memories([x.text for x in ctx.memories], [x.kind for x in ctx.memories],
                                    [x.phase for x in ctx.memories]).numpy()
    want = []
    for i, e in enumerate(ex):
        cands = list(e.candidate_range("episode"))
        best = cands[int(np.argmax(m[cands] @ q[i]))]
        want.append(ctx.memories[best].id in e.relevant_ids)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == bool and len(got) == len(tasks)


def test_correct_many_judges_both_memories_in_one_pass(ctx):
    """The batched pass (vmap over the stacked heads: what a GPU runs) gives exactly the one-by-one answers."""
    m0, tasks = ctx.memory(), list(range(len(ctx.examples)))
    m1 = HeadFineTuner(ctx, steps=20, lr=1e-2, batch_size=8).propose(m0, tasks[:12])
    one_by_one = [ctx.correct(m, tasks) for m in (m0, m1)]
    assert not np.array_equal(*one_by_one)
    for batched in (True, False):
        got = ctx.correct_many([m0, m1], tasks, batch_size=7, batched=batched)
        assert all(np.array_equal(a, b) for a, b in zip(got, one_by_one))
    assert len(HeadEvaluator(ctx).correct_many([m0], tasks[:3])) == 1


def test_finetuning_learns_is_pure_and_deterministic(ctx):
    m0, tasks = ctx.memory(), list(range(len(ctx.examples)))
    snapshot = {k: v.clone() for k, v in m0.tensors.items()}
    before = ctx.correct(m0, tasks).mean()
    up = HeadFineTuner(ctx, steps=60, lr=1e-2, batch_size=8)
    m1 = up.propose(m0, tasks, None)
    m1b = up.propose(m0, tasks, None)
    assert all(torch.equal(m1.tensors[k], m1b.tensors[k]) for k in m1.tensors)  # same inputs, same result
    assert all(torch.equal(m0.tensors[k], snapshot[k]) for k in m0.tensors)  # the old memory is untouched
    assert not all(torch.equal(m0.tensors[k], m1.tensors[k]) for k in m0.tensors)
    after = ctx.correct(m1, tasks).mean()
    assert after > before + 0.2  # 5 candidates: chance is ~0.2, the state says which fact is needed


def test_param_sketch_is_linear_and_keeps_angles(ctx):
    phi = ParamSketch(dim=4096, seed=1)
    m0 = ctx.memory()
    keys = sorted(m0.tensors)

    def shifted(direction_seed, scale=1e-2):
        g = np.random.default_rng(direction_seed)
        return HeadMemory({k: m0.tensors[k] + scale * torch.as_tensor(g.normal(size=tuple(m0.tensors[k].shape)),
                                                                       dtype=m0.tensors[k].dtype)
                           for k in keys})

    a, b = shifted(1), shifted(2)
    za, zb = phi(a) - phi(m0), phi(b) - phi(m0)
    assert abs(np.dot(za, zb) / np.linalg.norm(za) / np.linalg.norm(zb)) < 0.1  # independent steps: cos ≈ 0
    both = HeadMemory({k: a.tensors[k] + b.tensors[k] - m0.tensors[k] for k in keys})
    np.testing.assert_allclose(phi(both) - phi(m0), za + zb, atol=1e-6)  # linear


def test_probe_encoder_sees_behaviour(ctx):
    probes = list(range(10))
    phi = ProbeFeatures(ctx, probes, scale=20.0, kind="probs")
    m0 = ctx.memory()
    v0 = phi(m0)
    n_cands = sum(len(ctx.examples[i].candidate_range("episode")) for i in probes)
    assert v0.shape == (n_cands,)
    np.testing.assert_allclose(v0.reshape(10, -1).sum(1), 1.0, rtol=1e-6)  # a distribution per probe (5 candidates)
    np.testing.assert_array_equal(phi(m0), v0)  # deterministic: a no-op update has z = 0
    assert phi.tasks_per_call == 10 and ParamSketch().tasks_per_call == 0  # what φ costs, in tasks scored
    m1 = HeadFineTuner(ctx, steps=20, lr=1e-2, batch_size=8).propose(m0, list(range(len(ctx.examples))))
    m2 = HeadFineTuner(ctx, steps=20, lr=1e-2, batch_size=8).propose(m1, list(range(len(ctx.examples))))
    z1, z2 = phi(m1) - v0, phi(m2) - phi(m1)
    assert np.linalg.norm(z1) > 0.1
    assert np.dot(z1, z2) > 0  # more of the same training keeps going the same way
    with pytest.raises(ValueError, match="probe"):
        ProbeFeatures(ctx, [])


def test_janus_over_the_head(ctx, tmp_path):
    tasks = list(range(len(ctx.examples)))
    batches = [(tasks[i : i + 6], None) for i in range(0, len(tasks), 6)]

    def controller(path):
        return JanusController(HeadFineTuner(ctx, steps=5, lr=5e-3, batch_size=6), HeadEvaluator(ctx),
                               ParamSketch(512), make_gate("mmt(0.5,0.0)"),
                               HybridEvalSet(ctx.task_embeddings, coverage=3, boundary=4, fresh=3), path)

    m0 = ctx.memory()
    full = controller(tmp_path / "full")
    final = full.run(batches, m0)
    decisions = full.read_manifest()
    assert len(decisions) == len(batches) and decisions[0].triggered
    part = controller(tmp_path / "part")
    part.run(batches[:2], m0)
    resumed = controller(tmp_path / "part")
    final2 = resumed.run(batches, m0, resume=True)
    strip = [{**d.__dict__, "seconds": 0} for d in resumed.read_manifest()]
    assert strip == [{**d.__dict__, "seconds": 0} for d in decisions]
    assert all(torch.equal(final.tensors[k], final2.tensors[k]) for k in final.tensors)


def test_bench_plan_config_and_targets(tmp_path):
    cfg = janus_config.load_config(bench.BenchCfg)
    names = [n for n, _, _ in janus_config.plan(cfg)]
    assert dict((n, g) for n, g, _ in janus_config.plan(cfg))["mmt"] == "mmt(0.9,0.0,0)"
    cfg.janus.budget, cfg.janus.tau = 0.3, -0.1
    assert dict((n, g) for n, g, _ in janus_config.plan(cfg))["mmt"] == "mmtq(0.9,0.3,-0.1)"
    cfg.janus.warmup = 2  # budget mode has no warm-up: it was dropped without a word (found by review)
    with pytest.raises(SAMFileError, match="janus.warmup .* plain mode only"):
        janus_config.plan(cfg)
    cfg.janus.warmup = 0
    assert names.index("mmt") < names.index("random") and names.index("mmt") < names.index("periodic")
    assert {"mmt-no-coverage", "mmt-no-boundary", "mmt-no-fresh"} <= set(names)
    (tmp_path / "c.yaml").write_text("janus: {policies: [none, mmt], colour: 3}\n")
    with pytest.raises(SAMFileError, match="janus.colour"):
        janus_config.load_config(bench.BenchCfg, str(tmp_path / "c.yaml"))
    (tmp_path / "c.yaml").write_text("janus: {policies: [none, sometimes]}\n")
    with pytest.raises(SAMFileError, match="unknown policies"):
        janus_config.plan(janus_config.load_config(bench.BenchCfg, str(tmp_path / "c.yaml")))
    summary = {"none": {"final_accuracy": 0.50, "comparisons": 0}, "always": {"final_accuracy": 0.58, "comparisons": 40},
               "mmt": {"final_accuracy": 0.575, "comparisons": 10}}
    tg = bench.targets(summary)
    assert tg["mmt_minus_base_points"] == pytest.approx(7.5) and tg["comparisons_vs_always"] == 0.25
    assert tg["met"] == {"base_plus_5": True, "always_minus_1": True, "comparisons_30pct": True}


@pytest.mark.skipif(not SGD.is_dir(), reason="needs the SGD data in ../shared/data/sgd")
def test_bench_stream_domains(tmp_path):
    """M_0's domains and the history's are chosen separately; the four pools never share a dialogue."""
    split = tmp_path / "sgd"
    split.mkdir()
    shutil.copy(SGD / "dev" / "dialogues_001.json.gz", split)
    cfg = bench.DataCfg(train=str(split), dev=str(split), domains=["Flights"], pretrain_per_domain=2,
                        history_per_domain=2, train_per_domain=3, pretrain_domains=["Restaurants", "RideSharing"],
                        history_domains=["Flights", "Restaurants"], dev_domains=["Flights"], dev_per_domain=1)
    s = bench.build_stream(cfg)

    def doms(tasks):
        eps = {s.examples[i].episode_id for i in tasks}
        return eps, {ep: d for ep, d in _episode_domains(split).items() if ep in eps}

    pre, pre_dom = doms(s.pretrain_tasks)
    hist, hist_dom = doms(s.history_tasks)
    train, train_dom = doms(s.train_tasks)
    assert set(pre_dom.values()) == {"Restaurants", "RideSharing"}
    assert set(hist_dom.values()) == {"Flights", "Restaurants"}
    assert set(train_dom.values()) == {"Flights"}
    assert not (pre & hist) and not (pre & train) and not (hist & train)
    cfg.pretrain_domains = []  # every domain: the Flights dialogues M_0 gets are still not the stream's
    s2 = bench.build_stream(cfg)
    pre2 = {s2.examples[i].episode_id for i in s2.pretrain_tasks}
    flights = {ep for ep in pre2 if _episode_domains(split)[ep] == "Flights"}
    assert flights and pre < pre2 and not pre2 & train


def _episode_domains(split: Path) -> dict[str, str]:
    from sam_model.data.sgd import iter_sgd_dialogues

    return {"sgd-" + d["dialogue_id"]: bench.domain_of(d) for d in iter_sgd_dialogues(str(split))}


@pytest.mark.skipif(not SGD.is_dir(), reason="needs the SGD data in ../shared/data/sgd")
def test_bench_smoke_on_sgd(tmp_path, monkeypatch):
    """The whole CLI on a few dialogues (one SGD file serves as both splits: reading all of train is slow)."""
    monkeypatch.setenv("SAM_CACHE_DIR", str(tmp_path / "cache"))
    split = tmp_path / "sgd"
    split.mkdir()
    shutil.copy(SGD / "dev" / "dialogues_001.json.gz", split)
    (tmp_path / "c.yaml").write_text(
        f"data: {{train: {split}, dev: {split}, domains: [Restaurants, Flights], pretrain_per_domain: 1, history_per_domain: 1,"
        " train_per_domain: 2, dev_domains: [Flights], dev_per_domain: 1}\nmodel: {max_length: 24}\n"
        "pretrain: {steps: 2}\nupdater: {batch: 2, steps: 2}\njanus: {policies: [none, always, mmt, random],"
        " ablations: [fresh], coverage: 2, boundary: 2, fresh: 2}\neval_every: 2\ndevice: cpu\n")
    assert janus.main(["--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "janus.json").read_text())
    s = report["summary"]
    assert set(s) == {"none", "always", "mmt", "random", "mmt-no-fresh"}
    assert s["none"]["comparisons"] == 0 and s["always"]["comparisons"] == s["always"]["steps"]
    assert report["stream"]["domains"] == ["Restaurants", "Flights"]
    assert (tmp_path / "out" / "janus_accuracy.png").stat().st_size > 1000
    st = report["statistics"]
    assert st["always"]["cost_vs_always"] == 1.0 and st["none"]["total_tasks"] == 0
    assert st["mmt"]["phi_tasks"] > 0 and st["random"]["phi_tasks"] == 0  # φ scores probe tasks: not free
    assert {(p["a"], p["b"]) for p in report["paired"]} >= {("mmt", "random"), ("mmt-no-fresh", "mmt")}
    curve = report["per_seed"]["0"]["mmt"]["accuracy_curve"]
    assert curve[0]["t"] == 0 and curve[-1]["t"] == s["mmt"]["steps"]
    assert janus.main(["--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")]) == 2  # no overwrite
