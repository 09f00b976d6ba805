"""Janus benchmark on a non-stationary SGD stream: which gate keeps the retriever head best?

The stream is SGD train decision points ordered by service domain (Banks, then Buses, ...);
the memory is the SAM retriever's head (BERT frozen, pooled vectors cached), M_0 is trained
offline on ``data.pretrain_domains`` (the default config leaves the stream's domains out, so
updates carry new knowledge), and the base updater fine-tunes it for a few steps on each new
batch: it learns the new domain and drifts away from the others. Each policy gates that same updater; the score is top-1 accuracy (the first retrieved
memory is useful) on held-out SGD dev decision points from all domains::

    python -m sam_model.janus.bench --config configs/janus_sgd.yaml --out runs/janus

writes ``runs/janus/janus.json`` (per policy: final accuracy, comparisons, accuracy at each
checkpoint), ``janus_accuracy.png`` and one Janus workdir per policy under ``runs/``.
Pooled BERT vectors are cached under ``$SAM_CACHE_DIR`` (default ``~/.cache/sam_model``), so only
the first run pays for BERT.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.io import SAMFileError, atomic_path, atomic_write_text
from sam_model.janus.adapters.retriever_head import (
    HeadContext,
    HeadEvaluator,
    HeadFineTuner,
    ParamSketch,
    ProbeEncoder,
)
from sam_model.janus.controller import Decision, JanusController
from sam_model.janus.evalset import HybridEvalSet
from sam_model.janus.gates import make_gate
from sam_model.janus.stats import (
    CountedPhi,
    auc,
    default_pairs,
    evaluation_cost,
    fmt_ci,
    fmt_diff,
    paired_table,
    policy_stats,
)

# -- configuration ------------------------------------------------------------------------------------------


@dataclass
class DataCfg:
    train: str = "../shared/data/sgd/train"
    dev: str = "../shared/data/sgd/dev"
    domains: list[str] = field(default_factory=list)  # stream order; empty = every train domain, A→Z
    pretrain_per_domain: int = 10  # dialogues of every pretraining domain M_0 is trained on (0 = M_0 untrained)
    history_per_domain: int = 10  # dialogues per history domain served before the stream, never trained on
    pretrain_domains: list[str] = field(default_factory=list)  # M_0's domains; empty = every train domain
    history_domains: list[str] = field(default_factory=list)  # history's domains; empty = every train domain
    train_per_domain: int = 40  # dialogues per domain in the stream (disjoint from the pretraining ones)
    dev_domains: list[str] = field(default_factory=list)  # held-out domains; empty = every dev domain
    dev_per_domain: int = 20  # held-out dialogues per dev domain
    label: str = "origin"
    masked: bool = True
    seed: int = 0
    # noisy-feedback regime: this fraction of the stream's batches (a seeded draw per run seed) carry corrupted
    # feedback — the useful memories the agent reports are wrong candidates of the same episode — and the
    # updater trains on what was reported; the evaluator and E_t keep the true labels. 0 = clean stream
    feedback_noise: float = 0.0


@dataclass
class ModelCfg:
    bert_path: str = ""
    dim: int = 128
    hidden: int = 256
    proj_hidden: int = 128
    projection: str = "diag"
    alpha: float = 0.9
    learn_alpha: bool = True
    dropout: float = 0.1
    max_length: int = 64


@dataclass
class UpdaterCfg:
    batch: int = 16  # decision points per update (one Janus step)
    steps: int = 10  # optimiser steps per update
    lr: float = 3e-3
    minibatch: int = 16
    temperature: float = 0.05


@dataclass
class PretrainCfg:
    steps: int = 300  # M_0: the deployed retriever head, trained offline on data.pretrain_domains
    lr: float = 1e-3
    minibatch: int = 32


@dataclass
class JanusCfg:
    policies: list[str] = field(default_factory=lambda: ["none", "always", "mmt", "random", "periodic"])
    ablations: list[str] = field(default_factory=lambda: ["coverage", "boundary", "fresh"])  # each off, under MMT
    beta: float = 0.9
    tau: float = 0.0
    budget: float | None = None  # MMT in budget mode mmtq(beta, budget, tau): threshold = budget-quantile of cosines
    warmup: int = 0  # (plain mode only)
    momentum: str = "deployed"  # m follows the deployed steps, or every "proposed" step (the literal formula)
    periodic_n: float = 0  # 0 = match MMT's number of comparisons (a real period, evenly spaced)
    coverage: int = 16
    boundary: int = 16
    fresh: int = 8
    phi: str = "loglik"  # φ: probe log-likelihoods "loglik", probe distributions "probs", or "params" (sketch)
    probes: int = 256  # probe tasks for φ=loglik/probs
    probe_pool: str = "pretrain"  # where probes are sampled: M_0's training tasks, or the held-out "history"
    sketch_dim: int = 4096  # buckets for φ=params
    holdout_latest: bool = True  # judge a candidate on tasks it was not fine-tuned on


@dataclass
class BenchCfg:
    data: DataCfg = field(default_factory=DataCfg)
    model: ModelCfg = field(default_factory=ModelCfg)
    pretrain: PretrainCfg = field(default_factory=PretrainCfg)
    updater: UpdaterCfg = field(default_factory=UpdaterCfg)
    janus: JanusCfg = field(default_factory=JanusCfg)
    eval_every: int = 4  # steps between dev evaluations (the accuracy curve)
    seeds: list[int] = field(default_factory=lambda: [0])  # the held-out seeds of the report
    tuning_seeds: list[int] = field(default_factory=list)  # where settings were chosen (``--seeds tuning``)
    device: str = ""  # "" = cuda when available
    threads: int = 1  # torch CPU threads for the head: tiny matrices, where more threads only spin
    keep_checkpoints: bool = False  # keep every run's memories/ and tasks/ (about 1 GB); manifests are always kept


def load_config(path: str | None, cfg: Any = None) -> Any:
    """A config dataclass (``BenchCfg`` by default) with the sections of the YAML file at ``path`` filled in."""
    cfg = BenchCfg() if cfg is None else cfg
    if not path:
        return cfg
    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise SAMFileError(f"config not found: {path}") from None
    except yaml.YAMLError as exc:
        raise SAMFileError(f"{path} is not valid YAML: {exc}") from None
    for key, value in raw.items():
        if not hasattr(cfg, key):
            raise SAMFileError(f"{path}: unknown section {key!r}; known: {sorted(vars(cfg))}")
        sub = getattr(cfg, key)
        if isinstance(value, dict) and hasattr(sub, "__dataclass_fields__"):
            for k, v in value.items():
                if not hasattr(sub, k):
                    raise SAMFileError(f"{path}: unknown field {key}.{k}; known: {sorted(vars(sub))}")
                setattr(sub, k, v)
        else:
            setattr(cfg, key, value)
    return cfg


def as_dict(obj: Any) -> Any:
    return {k: as_dict(v) for k, v in vars(obj).items()} if hasattr(obj, "__dataclass_fields__") else obj


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


# -- pooled BERT vectors, cached on disk --------------------------------------------------------------------


def cache_dir() -> Path:
    import os

    return Path(os.environ.get("SAM_CACHE_DIR", Path.home() / ".cache" / "sam_model")) / "janus"


def pooled_vectors(enc, texts: list[str], bert_key: str, progress: bool = True) -> dict[str, np.ndarray]:
    """Mean-pooled (unnormalised, as SAMNet's text encoder makes them) BERT vectors of ``texts``."""
    folder = cache_dir() / hashlib.sha1(bert_key.encode()).hexdigest()[:12]
    have: dict[str, np.ndarray] = {}
    if (folder / "texts.json").exists() and (folder / "vectors.npy").exists():
        try:
            old_texts = json.loads((folder / "texts.json").read_text(encoding="utf-8"))
            vecs = np.load(folder / "vectors.npy")
            if len(old_texts) == len(vecs):
                have = dict(zip(old_texts, vecs))
        except (json.JSONDecodeError, ValueError, OSError):
            have = {}  # a damaged cache is rebuilt
    missing = [t for t in texts if t not in have]
    if missing:
        from tqdm.auto import tqdm

        enc.bert.eval()
        order = sorted(missing, key=len)
        bs = 128
        with torch.no_grad():
            for i in tqdm(range(0, len(order), bs), desc="BERT (cached after this run)", disable=not progress,
                          unit="batch"):
                chunk = order[i : i + bs]
                for t, v in zip(chunk, enc._encode(chunk).float().cpu().numpy()):
                    have[t] = v
        all_texts = list(have)
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(folder / "vectors.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.stack([have[t] for t in all_texts]).astype(np.float32))
        atomic_write_text(folder / "texts.json", json.dumps(all_texts, ensure_ascii=False))
    return {t: have[t] for t in texts}


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
    if j.phi not in ProbeEncoder.KINDS:
        raise SAMFileError(f"janus.phi must be one of {(*ProbeEncoder.KINDS, 'params')}, got {j.phi!r}")
    pools = {"pretrain": s.pretrain_tasks, "history": s.history_tasks}
    if j.probe_pool not in pools:
        raise SAMFileError(f"janus.probe_pool must be one of {sorted(pools)}, got {j.probe_pool!r}")
    pool = pools[j.probe_pool]
    if not pool:
        raise SAMFileError(f"janus.phi={j.phi} samples its probes from the {j.probe_pool} tasks, and there are "
                           f"none; set data.{j.probe_pool}_per_domain > 0 or use janus.phi=params")
    rng = np.random.default_rng(seed)
    k = min(j.probes, len(pool))
    return ProbeEncoder(ctx, sorted(rng.choice(pool, k, replace=False).tolist()),
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

    def on_step(c: JanusController, d: Decision) -> None:
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


def plan(cfg: BenchCfg) -> list[tuple[str, str | None, str | None]]:
    """(name, gate or None = decided after MMT ran, ablation) in run order: MMT before the matched baselines."""
    j = cfg.janus
    if j.momentum not in ("deployed", "proposed"):
        raise SAMFileError(f"janus.momentum must be 'deployed' or 'proposed', got {j.momentum!r}")
    p = "p" if j.momentum == "proposed" else ""
    mmt = f"mmt{p}({j.beta},{j.tau},{j.warmup})" if j.budget is None else f"mmt{p}q({j.beta},{j.budget},{j.tau})"
    known = {"none", "always", "mmt", "random", "periodic"}
    bad = set(j.policies) - known
    if bad:
        raise SAMFileError(f"unknown policies {sorted(bad)}; known: {sorted(known)}")
    bad = set(j.ablations) - {"coverage", "boundary", "fresh"}
    if bad:
        raise SAMFileError(f"unknown ablations {sorted(bad)}; known: coverage, boundary, fresh")
    matched = {"random", "periodic"} & set(j.policies)
    runs: list[tuple[str, str | None, str | None]] = []
    for p in ("none", "always"):
        if p in j.policies:
            runs.append((p, p, None))
    if "mmt" in j.policies or matched or j.ablations:
        runs.append(("mmt", mmt, None))
    for p in ("random", "periodic"):
        if p in j.policies:
            runs.append((p, None, None))
    runs += [(f"mmt-no-{a}", mmt, a) for a in j.ablations]
    return runs


def run_seed(cfg: BenchCfg, s: Stream, vectors: dict[str, np.ndarray], seed: int, out: Path,
             console, bert=None, tokenizer=None) -> dict[str, dict]:
    from sam_model.models.sam import SAMConfig, SAMNet

    m = cfg.model
    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(seed)
    net_cfg = SAMConfig(bert_path=m.bert_path, dim=m.dim, hidden=m.hidden, proj_hidden=m.proj_hidden,
                        projection=m.projection, alpha=m.alpha, learn_alpha=m.learn_alpha, dropout=m.dropout,
                        max_length=m.max_length, trainable_layers=0, cache_text=True, phases=s.phases,
                        kinds=s.kinds)
    net = SAMNet(net_cfg, bert, tokenizer)
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


def plot(per_seed: dict[int, dict[str, dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seed = next(iter(per_seed))
    results = per_seed[seed]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    for name, r in results.items():
        ts = [p["t"] for p in r["accuracy_curve"]]
        acc = [100 * p["accuracy"] for p in r["accuracy_curve"]]
        style = "--" if name.startswith("mmt-no-") else "-"
        ax.plot(ts, acc, style, label=f"{name} ({r['comparisons']} comparisons)", lw=2 if name == "mmt" else 1.2)
    any_r = next(iter(results.values()))
    doms = any_r["domain_at"]
    for i in range(1, len(doms)):
        if doms[i] != doms[i - 1]:
            ax.axvline(i + 0.5, color="0.85", lw=0.8, zorder=0)
    starts = [0] + [i for i in range(1, len(doms)) if doms[i] != doms[i - 1]]
    for a, b in zip(starts, starts[1:] + [len(doms)]):
        ax.text((a + b) / 2 + 0.5, ax.get_ylim()[0], doms[a][:6], ha="center", va="bottom", fontsize=7,
                color="0.4", rotation=90)
    ax.set_xlabel("update step t (stream ordered by service domain)")
    ax.set_ylabel("dev top-1 accuracy, all domains (%)")
    ax.set_title(f"Janus on the SGD domain stream (seed {seed})")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if _stream_of(argv) == "bank":  # the bank stream: its own config sections and runner
        from sam_model.janus.bank_bench import main as bank_main

        return bank_main(argv)
    ap = argparse.ArgumentParser(prog="python -m sam_model.janus.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="YAML config (sections data, model, updater, janus; see "
                                     "configs/janus_sgd.yaml); omitted = built-in defaults")
    ap.add_argument("--out", required=True, help="output folder: janus.json, janus_accuracy.png, runs/")
    ap.add_argument("--policies", help="comma-separated subset of none,always,mmt,random,periodic (overrides config)")
    ap.add_argument("--ablations", help="comma-separated subset of coverage,boundary,fresh, or 'none' (overrides config)")
    ap.add_argument("--seeds", help="comma-separated seeds, or 'tuning' for the config's tuning_seeds (overrides "
                                    "the config's held-out seeds)")
    ap.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--train-per-domain", type=int, help="stream dialogues per domain (overrides config)")
    ap.add_argument("--dev-per-domain", type=int, help="held-out dialogues per domain (overrides config)")
    args = ap.parse_args(argv)
    from rich.console import Console

    console = Console(stderr=True)
    try:
        cfg = load_config(args.config)
        if args.policies:
            cfg.janus.policies = [p.strip() for p in args.policies.split(",") if p.strip()]
        if args.ablations:
            cfg.janus.ablations = [] if args.ablations == "none" else [a.strip() for a in args.ablations.split(",")]
        if args.seeds:
            cfg.seeds = cfg.tuning_seeds if args.seeds == "tuning" else [int(x) for x in args.seeds.split(",")]
        if args.device:
            cfg.device = args.device
        if args.train_per_domain:
            cfg.data.train_per_domain = args.train_per_domain
        if args.dev_per_domain:
            cfg.data.dev_per_domain = args.dev_per_domain
        plan(cfg)
        feedback_schedule(1, cfg.data.feedback_noise, 0)  # validate before any work
        out = Path(args.out)
        if (out / "runs").exists() and any((out / "runs").iterdir()):
            raise SAMFileError(f"{out}/runs already holds Janus runs; choose another --out or remove it")
        t0 = time.perf_counter()
        s = build_stream(cfg.data)
        console.print(f"M_0 pretraining: {len(s.pretrain_tasks)} decision points; history: "
                      f"{len(s.history_tasks)}; "
                      f"stream: {len(s.train_tasks)} train decision points in {len(set(s.train_domains))} domains; "
                      f"held out: {len(s.dev_tasks)} dev decision points; {len(s.memories)} memories")
        from sam_model.models.bert import load_bert
        from sam_model.models.text_encoder import TextEncoder

        bert, tok = load_bert(cfg.model.bert_path or None)
        texts = stream_texts(s)
        t_bert = time.perf_counter()
        vectors = pooled_vectors(TextEncoder(bert, tok, cfg.model.max_length, trainable_layers=0, cache=False),
                                 texts, json.dumps([cfg.model.bert_path, cfg.model.max_length]))
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
                             "texts": len(texts)},
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
        plot(per_seed, out / "janus_accuracy.png")
    except SAMFileError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    _print_table(console, summary, report["targets"], noisy=bool(cfg.data.feedback_noise), stats=stats,
                 paired=report["paired"])
    console.print(f"wrote {out / 'janus.json'} and {out / 'janus_accuracy.png'} "
                  f"({report['seconds']['total']:.0f}s, BERT {report['seconds']['bert']:.0f}s)")
    return 0


def _stream_of(argv: list[str]) -> str:
    """The ``stream:`` of the config named by ``--config`` ("head" when absent or unreadable: the parser reports)."""
    path = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--config"), None)
    path = path or next((a.split("=", 1)[1] for a in argv if a.startswith("--config=")), None)
    try:
        raw = yaml.safe_load(Path(path).read_text()) if path else None
    except (OSError, yaml.YAMLError):
        return "head"
    return raw.get("stream", "head") if isinstance(raw, dict) else "head"


def _print_table(console, summary: dict[str, dict], tg: dict, noisy: bool = False, stats: dict | None = None,
                 paired: list[dict] | None = None) -> None:
    from rich.table import Table

    title = "Janus on the SGD domain stream" + (" with noisy feedback" if noisy else "")
    table = Table(title=f"{title} (dev top-1 accuracy, all domains; mean [95% bootstrap interval] over seeds)")
    for col in ("policy", "gate", "final accuracy %", "mean over stream %", "comparisons", "cost % of always") + \
            (("corrupted deployed", "AUC −cos") if noisy else ()):
        table.add_column(col)
    for name, r in summary.items():
        st = (stats or {}).get(name)
        acc = fmt_ci((st["mean"], *st["ci"])) if st else f"{100 * r['final_accuracy']:.1f}"
        cost = f"{100 * st['cost_vs_always']:.0f}" if st and "cost_vs_always" in st else ""
        row = [name, r["gate"], acc, f"{100 * r['mean_accuracy']:.1f}", f"{r['comparisons']:.1f}/{r['steps']}", cost]
        if noisy:
            a = r.get("corrupted_auc_neg_cos")
            row += [f"{r.get('corrupted_deployed', 0):.1f}", "" if a is None else f"{a:.2f}"]
        table.add_row(*row)
    console.print(table)
    for p in paired or []:
        console.print(f"{p['a']} − {p['b']}: {fmt_diff((p['mean'], *p['ci']))} points (paired over seeds): {p['verdict']}")
    if tg:
        console.print(f"MMT − base {tg['mmt_minus_base_points']:+.1f} pts, MMT − always "
                      f"{tg['mmt_minus_always_points']:+.1f} pts, comparisons {100 * tg['comparisons_vs_always']:.0f}% "
                      f"of always; targets met: {tg['met']}")


if __name__ == "__main__":
    sys.exit(main())
