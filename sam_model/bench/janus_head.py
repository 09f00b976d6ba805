"""Janus benchmark on a non-stationary SGD stream: which gate keeps the retriever head best?

The stream is SGD train decision points ordered by service domain (Banks, then Buses, ...);
the memory is the SAM retriever's head (BERT frozen, pooled vectors cached), M_0 is trained
offline on ``data.pretrain_domains`` (the default config leaves the stream's domains out, so
updates carry new knowledge), and the base updater fine-tunes it for a few steps on each new
batch: it learns the new domain and drifts away from the others. Each policy gates that same updater; the
score is top-1 accuracy (the first retrieved memory is useful) on held-out SGD dev decision points from all
domains::

    python -m sam_model.bench.janus --config configs/janus_sgd.yaml --out runs/janus

writes ``runs/janus/janus.json`` (per policy: final accuracy, comparisons, accuracy at each
checkpoint), ``janus_accuracy.png`` and one Janus workdir per policy under ``runs/``.
Pooled BERT vectors come from the package's one text-vector cache (``~/.cache/sam_model/text``, or
``$SAM_CACHE_DIR/text``; shared with training and evaluation), so only texts no run has seen cost BERT time.
A config with ``stream: bank`` (configs/janus_bank.yaml) runs the bank stream (sam_model.bench.janus_bank);
``--stream bank --help`` lists its options.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from sam_model.bench.janus_config import PolicyCfg, as_dict, parse_run, plan, refuse_earlier_runs
from sam_model.bench.janus_report import plot_head, print_head_table
from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.io import SAMFileError, atomic_write_text
from sam_model.janus.adapters.retriever_head import (
    HeadContext,
    HeadEvaluator,
    HeadFineTuner,
    ParamSketch,
    ProbeFeatures,
)
from sam_model.janus.controller import JanusController, StepDecision
from sam_model.janus.evalset import HybridEvalSet
from sam_model.janus.gates import make_gate
from sam_model.janus.stats import (
    CountedPhi,
    auc,
    default_pairs,
    evaluation_cost,
    paired_table,
    policy_stats,
)
from sam_model.models.sam import SAMConfig

# -- configuration: one typed tree, filled by jsonargparse from --config files and the command line ---------


@dataclass
class DataCfg:
    """The SGD domain stream (three disjoint pools of train dialogues per domain, and held-out dev dialogues).

    Args:
        train: SGD train split folder: M_0's pretraining dialogues, the history and the stream.
        dev: SGD dev split folder: the held-out decision points of the accuracy.
        domains: the stream's service domains, in stream order; [] = every train domain, A to Z.
        pretrain_per_domain: dialogues of every pretraining domain that M_0 is trained on (0 = M_0 untrained).
        history_per_domain: dialogues per history domain, served before the stream and never trained on.
        pretrain_domains: M_0's domains; [] = every train domain.
        history_domains: the history's domains; [] = every train domain.
        train_per_domain: stream dialogues per stream domain (disjoint from the pretraining and history ones).
        dev_domains: held-out domains; [] = every dev domain.
        dev_per_domain: held-out dialogues per dev domain.
        label: which earlier events count as useful (origin: where a value was first given; latest; all).
        masked: the decision point's state names the slots it needs, not their values.
        seed: the seed of the per-domain shuffle that draws the pools (not the run seed).
        feedback_noise: noisy-feedback regime: this fraction of the stream's batches (a seeded draw per run seed)
            report wrong useful memories (other candidates of the same episode), and the updater trains on what
            was reported; the evaluator and E_t keep the true labels. 0 = the clean stream.
    """

    train: str = "../shared/data/sgd/train"
    dev: str = "../shared/data/sgd/dev"
    domains: list[str] = field(default_factory=list)
    pretrain_per_domain: int = 10
    history_per_domain: int = 10
    pretrain_domains: list[str] = field(default_factory=list)
    history_domains: list[str] = field(default_factory=list)
    train_per_domain: int = 40
    dev_domains: list[str] = field(default_factory=list)
    dev_per_domain: int = 20
    label: str = "origin"
    masked: bool = True
    seed: int = 0
    feedback_noise: float = 0.0


@dataclass
class UpdaterCfg:
    """The base updater: a few Adam steps (fresh optimiser) on each new batch of the stream.

    Args:
        batch: decision points per update (one Janus step).
        steps: optimiser steps per update.
        lr: the updater's learning rate.
        minibatch: decision points per optimiser step.
        temperature: softmax temperature of the multi-positive InfoNCE loss (and of φ's probe scores).
    """

    batch: int = 16
    steps: int = 10
    lr: float = 3e-3
    minibatch: int = 16
    temperature: float = 0.05


@dataclass
class PretrainCfg:
    """M_0, the deployed retriever head, trained offline on ``data.pretrain_domains``.

    Args:
        steps: optimiser steps (0 = M_0 untrained).
        lr: M_0's learning rate (Adam).
        minibatch: decision points per step.
    """

    steps: int = 300
    lr: float = 1e-3
    minibatch: int = 32


@dataclass
class JanusCfg(PolicyCfg):
    """The policies compared and the Janus controller's gate, hybrid evaluation set (PolicyCfg's keys) and φ.

    Args:
        phi: the memory encoding φ: probe log-likelihoods "loglik", probe distributions "probs", or "params"
            (a sketch of the head's parameters).
        probes: probe tasks of φ=loglik/probs.
        probe_pool: where the probes are drawn: M_0's training tasks "pretrain", or the held-out "history".
        sketch_dim: buckets of φ=params, the count sketch of the head's parameters (its vector's length).
    """

    phi: str = "loglik"
    probes: int = 256
    probe_pool: str = "pretrain"
    sketch_dim: int = 4096


def head_model() -> SAMConfig:
    """The benchmark's retriever head: a small SAMNet over frozen MiniLM (SAMConfig's other defaults)."""
    return SAMConfig(dim=128, hidden=256, proj_hidden=128, max_length=64)


@dataclass
class BenchCfg:
    """Janus on the SGD domain stream: the memory is a SAM retriever head.

    Args:
        stream: "head", the SGD domain stream (a config with ``stream: bank`` runs the bank stream).
        data: the stream's data.
        model: the SAM network (sam_model.models.sam.SAMConfig; BERT stays frozen, its pooled vectors cached:
            trainable_layers 0, cache_text true; phases and kinds come from the stream).
        pretrain: M_0's offline training.
        updater: the base updater.
        janus: policies, gate, E_t and φ.
        eval_every: steps between dev evaluations (the accuracy curve).
        seeds: run seeds: a list, one seed, or "tuning" for tuning_seeds.
        tuning_seeds: the seeds where settings were chosen (--seeds tuning).
        device: cpu or cuda; "" = cuda when available.
        threads: torch CPU threads for the head (tiny matrices, where more threads only spin); 0 = torch's own.
        keep_checkpoints: keep every run's memories/ and tasks/ (about 1 GB); manifests are always kept.
    """

    stream: Literal["head"] = "head"
    data: DataCfg = field(default_factory=DataCfg)
    model: SAMConfig = field(default_factory=head_model)
    pretrain: PretrainCfg = field(default_factory=PretrainCfg)
    updater: UpdaterCfg = field(default_factory=UpdaterCfg)
    janus: JanusCfg = field(default_factory=JanusCfg)
    eval_every: int = 4
    seeds: list[int] | int | Literal["tuning"] = field(default_factory=lambda: [0])
    tuning_seeds: list[int] = field(default_factory=list)
    device: str = ""
    threads: int = 1
    keep_checkpoints: bool = False


def net_config(model: SAMConfig, phases: list[str], kinds: list[str]) -> SAMConfig:
    """The SAMConfig of the benchmark's net: ``model`` with the stream's vocabularies. The head adapter needs
    BERT frozen and its vectors cached; a config that asks otherwise is refused (key named)."""
    if model.trainable_layers != 0:
        raise SAMFileError(f"model.trainable_layers: the retriever-head benchmark keeps BERT frozen (0), got "
                           f"{model.trainable_layers}")
    if not model.cache_text:
        raise SAMFileError("model.cache_text: the retriever-head benchmark reads BERT's vectors from the text "
                           "cache; it must be true")
    if model.phases or model.kinds:
        raise SAMFileError("model.phases / model.kinds: the vocabularies come from the stream; leave them []")
    return dataclasses.replace(model, phases=list(phases), kinds=list(kinds))




# -- data ---------------------------------------------------------------------------------------------------


def domain_of(dialogue: dict) -> str:
    return dialogue["services"][0].split("_")[0]


def sample_episodes(split: str, counts: list[int], domains: list[str] | None, seed: int, label: str,
                    masked: bool) -> list[list[tuple[str, Episode]]]:
    """Disjoint pools of dialogues with decision points: ``counts[k]`` per domain for pool k.

    Each pool is a list of (domain, episode) in domain order. Episodes are cut after their last
    decision point: later events are never candidates, so BERT need not see them.
    """
    from sam_model.data.sgd import convert_dialogue, iter_sgd_dialogues

    by_domain: dict[str, list[dict]] = defaultdict(list)
    for d in iter_sgd_dialogues(split):
        by_domain[domain_of(d)].append(d)
    order = domains or sorted(by_domain)
    missing = [d for d in order if d not in by_domain]
    if missing:
        raise SAMFileError(f"domains {missing} have no dialogues in {split}; known: {sorted(by_domain)}")
    pools: list[list[tuple[str, Episode]]] = [[] for _ in counts]
    for dom in order:
        dialogues = by_domain[dom][:]
        random.Random(f"{seed}/{dom}").shuffle(dialogues)  # per domain: the same pools whatever the order
        k, taken = 0, 0
        for d in dialogues:
            while k < len(counts) and taken == counts[k]:
                k, taken = k + 1, 0
            if k == len(counts):
                break
            events = [parse_event(e, f"{split}:{d['dialogue_id']}", i) for i, e in
                      enumerate(convert_dialogue(d, label, masked))]
            last = max((i for i, e in enumerate(events) if e.is_decision_point), default=-1)
            if last >= 0:
                pools[k].append((dom, Episode(events[0].episode_id, tuple(events[: last + 1]))))
                taken += 1
    return pools


@dataclass
class Stream:
    memories: list
    examples: list
    pretrain_tasks: list[int]  # M_0 is trained on these (data.pretrain_domains), offline
    history_tasks: list[int]  # served before the stream (data.history_domains), not trained on: Janus's first "tasks seen"
    train_tasks: list[int]  # the stream, in domain order
    train_domains: list[str]
    dev_tasks: list[int]
    dev_domains: list[str]
    phases: list[str]
    kinds: list[str]


def build_stream(cfg: DataCfg) -> Stream:
    # per domain, the first dialogues of a seeded shuffle train M_0 (if it is a pretraining domain), the next
    # ones are the history (if it is a history domain; served before the stream, never trained on), the next
    # ones feed the stream: three disjoint pools whichever domains each of them draws from
    counts = [cfg.pretrain_per_domain, cfg.history_per_domain]
    pre, _ = sample_episodes(cfg.train, counts, cfg.pretrain_domains or None, cfg.seed, cfg.label, cfg.masked)
    _, hist = sample_episodes(cfg.train, counts, cfg.history_domains or None, cfg.seed, cfg.label, cfg.masked)
    *_, train = sample_episodes(cfg.train, [cfg.pretrain_per_domain, cfg.history_per_domain, cfg.train_per_domain],
                                cfg.domains or None, cfg.seed, cfg.label, cfg.masked)
    (dev,) = sample_episodes(cfg.dev, [cfg.dev_per_domain], cfg.dev_domains or None, cfg.seed, cfg.label,
                             cfg.masked)
    pools = {"pre": pre, "hist": hist, "train": train, "dev": dev}
    episodes = [ep for pool in pools.values() for _, ep in pool]
    domain_of_ep = {ep.episode_id: dom for pool in pools.values() for dom, ep in pool}
    pool_of_ep = {ep.episode_id: name for name, pool in pools.items() for _, ep in pool}
    memories = [m for ep in episodes for m in episode_memories(ep)]
    examples = list(iter_examples(episodes))
    tasks: dict[str, list[int]] = {k: [] for k in pools}
    for i, e in enumerate(examples):
        tasks[pool_of_ep[e.episode_id]].append(i)
    seen = [e for pool in (pre, train) for _, ep in pool for e in ep.events]
    return Stream(memories, examples, tasks["pre"], tasks["hist"], tasks["train"],
                  [domain_of_ep[examples[i].episode_id] for i in tasks["train"]], tasks["dev"],
                  [domain_of_ep[examples[i].episode_id] for i in tasks["dev"]],
                  sorted({e.state.phase for e in seen}), sorted({e.kind for e in seen}))


def stream_texts(s: Stream) -> list[str]:
    texts = dict.fromkeys(m.text for m in s.memories)
    for e in s.examples:
        texts.setdefault(e.state_text)
        texts.setdefault(e.observation)
    return list(texts)


# -- reported feedback: clean, or corrupted on a seeded fraction of the batches -----------------------------


def feedback_schedule(n_batches: int, noise: float, seed: int) -> list[bool]:
    """Which stream batches carry corrupted feedback: round(noise · n_batches) of them, drawn by the run seed."""
    if not 0.0 <= noise <= 1.0:
        raise SAMFileError(f"data.feedback_noise is a fraction of batches in [0, 1], got {noise}")
    k = round(noise * n_batches)
    bad = set(np.random.default_rng([seed, 0xFEED]).choice(n_batches, k, replace=False).tolist()) if k else set()
    return [i in bad for i in range(n_batches)]


def reported_labels(ctx: HeadContext, tasks: list[int], corrupted: bool, seed: int) -> dict[int, list[int]]:
    """The useful memories the agent reports for each task (positions in ``ctx.memories``).

    Clean: the true ones. Corrupted (a faulty success signal: a broken tool or judge): as many other
    candidates of the task's episode, none of them useful, drawn by (seed, task); a task whose every
    candidate is useful is reported with none (the updater then leaves it out).
    """
    out: dict[int, list[int]] = {}
    for t in tasks:
        true = ctx.relevant_pos[t]
        if not corrupted:
            out[t] = list(true)
            continue
        true_set = set(true)
        wrong = [p for p in ctx.examples[t].candidate_range("episode") if p not in true_set]
        k = min(max(len(true), 1), len(wrong))
        rng = np.random.default_rng([seed, t, 0xBAD])
        out[t] = sorted(int(p) for p in rng.choice(wrong, k, replace=False)) if k else []
    return out


# -- pooled BERT vectors, from the package's one text-vector cache -----------------------------------------


def text_vectors(bert, tokenizer, model: SAMConfig, texts: list[str], cache_dir: str | Path,
                 progress: bool = True) -> tuple[dict[str, np.ndarray], int]:
    """Pooled (unnormalised, as SAMNet's frozen text encoder makes them) BERT vectors of ``texts``, and how many
    BERT encoded.

    They go through the package's text-vector cache (``TextEncoder.cache_file``: one file per BERT
    fingerprint and precision under ``cache_dir``: float32 here, shared with float32 training and evaluation), so only texts that no run has
    encoded before cost BERT time. Those are encoded shortest first in batches of 128.
    """
    from sam_model.models.text_encoder import TextEncoder
    from sam_model.progress import progress_bar

    enc = TextEncoder(bert, tokenizer, model.max_length, trainable_layers=0, batch_size=128, pooling=model.pooling)
    path = enc.cache_file(cache_dir)
    enc.load_cache(path)
    missing = sorted(enc.uncached(texts), key=len)
    chunk = 128 * 8
    for i in progress_bar(range(0, len(missing), chunk), desc="BERT (cached after this run)",
                          disable=not progress or not missing, unit="chunk"):
        enc(missing[i : i + chunk])
    if missing:
        enc.save_cache(path)
    vectors = enc(list(texts)).float().cpu().numpy() if texts else np.zeros((0, enc.hidden_size), np.float32)
    return dict(zip(texts, vectors)), enc.encoded


# -- one policy run ----------------------------------------------------------------------------------------


class TimedEvaluator(HeadEvaluator):
    """Counts evaluator time, so the benchmark can report what comparisons cost on this device."""

    def __init__(self, ctx: HeadContext):
        super().__init__(ctx)
        self.seconds, self.tasks = 0.0, 0

    def correct(self, memory, tasks):
        return self.correct_many([memory], tasks)[0]

    def correct_many(self, memories, tasks):
        t0 = time.perf_counter()
        out = self.ctx.correct_many(memories, tasks)
        if self.ctx.device.type == "cuda":
            torch.cuda.synchronize()
        self.seconds += time.perf_counter() - t0
        self.tasks += len(tasks) * len(memories)
        return out


def memory_encoder(ctx: HeadContext, s: Stream, cfg: BenchCfg, seed: int):
    j = cfg.janus
    if j.phi == "params":
        return ParamSketch(j.sketch_dim, seed)
    if j.phi not in ProbeFeatures.KINDS:
        raise SAMFileError(f"janus.phi must be one of {(*ProbeFeatures.KINDS, 'params')}, got {j.phi!r}")
    pools = {"pretrain": s.pretrain_tasks, "history": s.history_tasks}
    if j.probe_pool not in pools:
        raise SAMFileError(f"janus.probe_pool must be one of {sorted(pools)}, got {j.probe_pool!r}")
    pool = pools[j.probe_pool]
    if not pool:
        raise SAMFileError(f"janus.phi={j.phi} samples its probes from the {j.probe_pool} tasks, and there are "
                           f"none; set data.{j.probe_pool}_per_domain > 0 or use janus.phi=params")
    rng = np.random.default_rng(seed)
    k = min(j.probes, len(pool))
    return ProbeFeatures(ctx, sorted(rng.choice(pool, k, replace=False).tolist()),
                        scale=1.0 / cfg.updater.temperature, kind=j.phi)


def run_policy(name: str, gate_spec: str, ablate: str | None, ctx: HeadContext, m0, s: Stream, cfg: BenchCfg,
               seed: int, workdir: Path) -> dict:
    j, u = cfg.janus, cfg.updater
    evalset = HybridEvalSet(ctx.task_embeddings, coverage=j.coverage, boundary=j.boundary, fresh=j.fresh,
                            use_coverage=ablate != "coverage", use_boundary=ablate != "boundary",
                            use_fresh=ablate != "fresh", seed=seed)
    updater = HeadFineTuner(ctx, steps=u.steps, lr=u.lr, batch_size=u.minibatch, temperature=u.temperature,
                            seed=seed)
    evaluator = TimedEvaluator(ctx)
    gate = make_gate(gate_spec)
    phi = CountedPhi(memory_encoder(ctx, s, cfg, seed)) if gate.needs_encoding else None
    ctrl = JanusController(updater, evaluator, phi, gate, evalset, workdir, holdout_latest=j.holdout_latest)
    batches = [s.train_tasks[i : i + u.batch] for i in range(0, len(s.train_tasks), u.batch)]
    domains = [s.train_domains[i] for i in range(0, len(s.train_tasks), u.batch)]
    corrupted = feedback_schedule(len(batches), cfg.data.feedback_noise, seed)
    feedback = [reported_labels(ctx, b, c, seed) for b, c in zip(batches, corrupted)]
    dev_eval = HeadEvaluator(ctx)
    curve = [(0, float(dev_eval.correct(m0, s.dev_tasks).mean()), 0)]

    def on_step(c: JanusController, d: StepDecision) -> None:
        if d.t % cfg.eval_every == 0 or d.t == len(batches):
            curve.append((d.t, float(dev_eval.correct(c.memory, s.dev_tasks).mean()), c.comparisons))

    t0 = time.perf_counter()
    final = ctrl.run(zip(batches, feedback), m0, on_step=on_step, history=s.history_tasks)
    seconds = time.perf_counter() - t0
    per_domain = _per_domain(dev_eval.correct(final, s.dev_tasks), s.dev_domains)
    decisions = ctrl.read_manifest()
    bad = [d for d in decisions if corrupted[d.t - 1]]
    good = [d for d in decisions if not corrupted[d.t - 1]]
    cos = [(d.cos, corrupted[d.t - 1]) for d in decisions if d.cos is not None]
    feedback_stats = {  # what the gate did with the corrupted candidates (and, for contrast, the clean ones)
        "corrupted_deployed": sum(d.accepted for d in bad), "corrupted_compared": sum(d.triggered for d in bad),
        "corrupted_rejected": sum(d.triggered and not d.accepted for d in bad),
        "clean_compared": sum(d.triggered for d in good),
        "clean_rejected": sum(d.triggered and not d.accepted for d in good),
        # how well −cos(z_t, m_{t−1}) singles out the corrupted batches (steps where cos is defined)
        "corrupted_auc_neg_cos": auc([-c for c, _ in cos], [b for _, b in cos])}
    cost = evaluation_cost(decisions, phi.calls if phi else 0, phi.tasks_per_call if phi else 0.0)
    return {"policy": name, "gate": gate_spec, "ablation": ablate, "final_accuracy": curve[-1][1],
            "mean_accuracy": float(np.mean([a for _, a, _ in curve[1:]])),  # over the stream's checkpoints
            "comparisons": ctrl.comparisons, "steps": len(batches),
            "rejected": sum(1 for d in decisions if d.triggered and not d.accepted),
            "accuracy_curve": [{"t": t, "accuracy": a, "comparisons": c} for t, a, c in curve],
            "triggered_at": [d.t for d in decisions if d.triggered],
            "domain_at": domains, "dev_accuracy_per_domain": per_domain,
            "eval_tasks": evaluator.tasks, "evaluator_seconds": round(evaluator.seconds, 3),
            "seconds": round(seconds, 2), **cost, **feedback_stats}


def _per_domain(correct: np.ndarray, domains: list[str]) -> dict[str, float]:
    out: dict[str, list[bool]] = defaultdict(list)
    for c, d in zip(correct, domains):
        out[d].append(bool(c))
    return {d: float(np.mean(v)) for d, v in sorted(out.items())}


# -- the benchmark -----------------------------------------------------------------------------------------




def run_seed(cfg: BenchCfg, s: Stream, vectors: dict[str, np.ndarray], seed: int, out: Path,
             console, bert=None, tokenizer=None) -> dict[str, dict]:
    from sam_model.models.sam import SAMNet

    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(seed)
    net = SAMNet(net_config(cfg.model, s.phases, s.kinds), bert, tokenizer)
    ctx = HeadContext(net, s.memories, s.examples, vectors, device=cfg.device or None)
    m0 = ctx.memory()
    if s.pretrain_tasks and cfg.pretrain.steps:
        p = cfg.pretrain
        t0 = time.perf_counter()
        m0 = HeadFineTuner(ctx, steps=p.steps, lr=p.lr, batch_size=p.minibatch, seed=seed).propose(m0, s.pretrain_tasks)
        console.print(f"seed {seed} M_0 trained on {len(s.pretrain_tasks)} decision points: dev accuracy "
                      f"{100 * ctx.correct(m0, s.dev_tasks).mean():.1f} ({time.perf_counter() - t0:.0f}s)")
    results: dict[str, dict] = {}
    n_steps = -(-len(s.train_tasks) // cfg.updater.batch)
    for name, gate, ablate in plan(cfg):
        if gate is None:  # matched to MMT's number of comparisons
            k = max(results["mmt"]["comparisons"], 1)
            gate = f"randomk({int(k)},{n_steps},{seed})" if name == "random" else \
                f"periodic({cfg.janus.periodic_n or n_steps / k:.12g})"
        workdir = out / "runs" / f"seed{seed}" / name
        r = run_policy(name, gate, ablate, ctx, m0, s, cfg, seed, workdir)
        if not cfg.keep_checkpoints:
            for sub in ("memories", "tasks"):
                shutil.rmtree(workdir / sub, ignore_errors=True)
        results[name] = r
        noisy = f" corrupted deployed={r['corrupted_deployed']}" if cfg.data.feedback_noise else ""
        console.print(f"seed {seed} {name:18s} gate={gate:24s} acc={100 * r['final_accuracy']:5.1f} "
                      f"comparisons={r['comparisons']:3d}/{r['steps']}{noisy} ({r['seconds']:.0f}s)")
    return results


def summarise(per_seed: dict[int, dict[str, dict]]) -> dict[str, dict]:
    names = list(next(iter(per_seed.values())))
    out = {}
    for n in names:
        rs = [per_seed[s][n] for s in per_seed]
        acc = np.array([r["final_accuracy"] for r in rs])
        out[n] = {"final_accuracy": float(acc.mean()), "final_accuracy_std": float(acc.std()),
                  "mean_accuracy": float(np.mean([r["mean_accuracy"] for r in rs])),
                  "comparisons": float(np.mean([r["comparisons"] for r in rs])), "steps": rs[0]["steps"],
                  "gate": rs[0]["gate"], "ablation": rs[0]["ablation"]}
        for k in ("corrupted_deployed", "corrupted_compared", "corrupted_rejected", "clean_compared",
                  "clean_rejected"):
            if all(k in r for r in rs):
                out[n][k] = float(np.mean([r[k] for r in rs]))
        aucs = [r["corrupted_auc_neg_cos"] for r in rs if r.get("corrupted_auc_neg_cos") is not None]
        if aucs:
            out[n]["corrupted_auc_neg_cos"] = float(np.mean(aucs))
    return out


def targets(summary: dict[str, dict], stats: dict[str, dict] | None = None) -> dict[str, Any]:
    if not {"none", "always", "mmt"} <= set(summary):
        return {}
    mmt, base, always = (summary[k] for k in ("mmt", "none", "always"))
    d_base = 100 * (mmt["final_accuracy"] - base["final_accuracy"])
    d_always = 100 * (mmt["final_accuracy"] - always["final_accuracy"])
    ratio = mmt["comparisons"] / max(always["comparisons"], 1e-9)
    out = {"mmt_minus_base_points": round(d_base, 2), "mmt_minus_always_points": round(d_always, 2),
           "comparisons_vs_always": round(ratio, 3),
           "met": {"base_plus_5": d_base >= 5.0, "always_minus_1": d_always >= -1.0, "comparisons_30pct": ratio <= 0.3}}
    if stats and "cost_vs_always" in stats.get("mmt", {}):  # comparisons and φ together, in tasks scored
        out["total_cost_vs_always"] = round(stats["mmt"]["cost_vs_always"], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the head benchmark on ``argv`` (``python -m sam_model.bench.janus`` with a ``stream: head`` config)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    from rich.console import Console

    console = Console(stderr=True)
    try:
        cfg, out, tensorboard = parse_run(argv, BenchCfg)
        plan(cfg)
        feedback_schedule(1, cfg.data.feedback_noise, 0)  # validate before any work
        net_config(cfg.model, [], [])
        refuse_earlier_runs(out)
        t0 = time.perf_counter()
        s = build_stream(cfg.data)
        console.print(f"M_0 pretraining: {len(s.pretrain_tasks)} decision points; history: "
                      f"{len(s.history_tasks)}; "
                      f"stream: {len(s.train_tasks)} train decision points in {len(set(s.train_domains))} domains; "
                      f"held out: {len(s.dev_tasks)} dev decision points; {len(s.memories)} memories")
        from sam_model.data.sources import default_cache_dir
        from sam_model.models.bert import load_bert

        bert, tok = load_bert(cfg.model.bert_path or None)
        texts = stream_texts(s)
        t_bert = time.perf_counter()
        vectors, encoded = text_vectors(bert, tok, cfg.model, texts, default_cache_dir() / "text")
        t_bert = time.perf_counter() - t_bert
        per_seed = {seed: run_seed(cfg, s, vectors, seed, out, console, bert, tok) for seed in cfg.seeds}
        summary = summarise(per_seed)
        stats = policy_stats(per_seed)
        device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        report = {"config": as_dict(cfg), "device": device,
                  "stream": {"pretrain_tasks": len(s.pretrain_tasks), "history_tasks": len(s.history_tasks),
                             "train_tasks": len(s.train_tasks),
                             "dev_tasks": len(s.dev_tasks),
                             "domains": list(dict.fromkeys(s.train_domains)), "memories": len(s.memories),
                             "texts": len(texts), "texts_encoded": encoded},
                  "feedback": {"noise": cfg.data.feedback_noise, "corrupted_batches": {  # steps t (1-based)
                      str(seed): [t for t, c in enumerate(feedback_schedule(
                          -(-len(s.train_tasks) // cfg.updater.batch), cfg.data.feedback_noise, seed), 1) if c]
                      for seed in cfg.seeds}},
                  "summary": summary, "statistics": stats,
                  "paired": paired_table(per_seed, default_pairs(list(summary))), "targets": targets(summary, stats),
                  "seconds": {"bert": round(t_bert, 1), "total": round(time.perf_counter() - t0, 1)},
                  "per_seed": {str(k): v for k, v in per_seed.items()}}
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "janus.json", json.dumps(report, indent=1))
        plot_head(per_seed, out / "janus_accuracy.png", tensorboard)
    except SAMFileError as exc:
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return 2
    print_head_table(console, summary, report["targets"], noisy=bool(cfg.data.feedback_noise), stats=stats,
                 paired=report["paired"])
    console.print(f"wrote {out / 'janus.json'} and {out / 'janus_accuracy.png'} "
                  f"({report['seconds']['total']:.0f}s, BERT {report['seconds']['bert']:.0f}s for {encoded} texts)")
    return 0
