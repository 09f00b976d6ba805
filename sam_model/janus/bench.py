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
Pooled BERT vectors come from the package's one text-vector cache (``~/.cache/sam_model/text``, or
``$SAM_CACHE_DIR/text``; shared with training and evaluation), so only texts no run has seen cost BERT time.
A config with ``stream: bank`` (configs/janus_bank.yaml) runs the bank stream (sam_model.janus.bank_bench);
``--stream bank --help`` lists its options.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

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
        lr: learning rate.
        minibatch: decision points per step.
    """

    steps: int = 300
    lr: float = 1e-3
    minibatch: int = 32


@dataclass
class JanusCfg:
    """The policies compared and the Janus controller's gate, hybrid evaluation set and φ.

    Args:
        policies: subset of none (the base updater alone), always, mmt, random, periodic (random and periodic
            make as many comparisons as MMT).
        ablations: parts of E_t switched off one at a time under MMT: subset of coverage, boundary, fresh.
        beta: MMT's momentum factor (EMA of the deployed update directions).
        tau: MMT compares when cos(z_t, m_{t-1}) < tau (budget mode: until 8 cosines have been seen).
        budget: MMT in budget mode when set: compare when cos < the budget-quantile of the last 64 cosines.
        warmup: steps deployed without comparison before MMT starts (plain mode only).
        momentum: m follows the deployed steps ("deployed") or every proposed step ("proposed", the literal
            formula).
        periodic_n: the periodic gate's period; 0 = MMT's number of comparisons, evenly spaced.
        coverage: E_t's coverage part: cluster representatives of every task seen.
        boundary: E_t's boundary part: tasks whose correctness flipped.
        fresh: E_t's fresh part: tasks since the last trigger.
        phi: the memory encoding φ: probe log-likelihoods "loglik", probe distributions "probs", or "params"
            (a sketch of the head's parameters).
        probes: probe tasks of φ=loglik/probs.
        probe_pool: where the probes are drawn: M_0's training tasks "pretrain", or the held-out "history".
        sketch_dim: buckets of φ=params.
        holdout_latest: judge a candidate on tasks it was not fine-tuned on.
    """

    policies: list[str] = field(default_factory=lambda: ["none", "always", "mmt", "random", "periodic"])
    ablations: list[str] = field(default_factory=lambda: ["coverage", "boundary", "fresh"])
    beta: float = 0.9
    tau: float = 0.0
    budget: float | None = None
    warmup: int = 0
    momentum: str = "deployed"
    periodic_n: float = 0
    coverage: int = 16
    boundary: int = 16
    fresh: int = 8
    phi: str = "loglik"
    probes: int = 256
    probe_pool: str = "pretrain"
    sketch_dim: int = 4096
    holdout_latest: bool = True


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


USAGE = """Options come from --config files (repeat --config to stack overrides: later files win) and then from the
command line, one option per config key (--janus.beta 0.97, --data.train_per_domain 10, --seeds 0,
--seeds tuning, --janus.policies [none,mmt]); --print_config shows the resolved config and exits."""


def _help_formatter():
    from jsonargparse import DefaultHelpFormatter

    class HelpFormatter(DefaultHelpFormatter, argparse.RawDescriptionHelpFormatter):
        """Option help with its type and default; the description as written."""

    return HelpFormatter


def parser(cfg_class: type = BenchCfg, description: str | None = None):
    """The benchmark's jsonargparse parser for ``cfg_class`` (BenchCfg, or bank_bench.BankBenchCfg)."""
    from jsonargparse import ActionConfigFile, ArgumentParser

    from sam_model import cli_config

    p = ArgumentParser(prog="python -m sam_model.janus.bench", description=f"{description or __doc__}\n{USAGE}",
                       usage="%(prog)s --config FILE [--config OVERRIDE ...] --out DIR [--KEY VALUE ...]",
                       parser_mode=cli_config.PARSER_MODE, exit_on_error=False, formatter_class=_help_formatter())
    p.add_argument("--config", action=ActionConfigFile,
                   help="a YAML config (configs/janus_sgd.yaml, configs/janus_bank.yaml); repeat it to stack "
                        "overrides on it (configs/janus_sgd_noisy.yaml on janus_sgd.yaml)")
    p.add_argument("--out", required=True, help="output folder: janus.json (and janus_accuracy.png), runs/; it must "
                                                "hold no earlier runs")
    p.add_class_arguments(cfg_class, None)
    return p


def parse_config(argv: Sequence[str], cfg_class: type = BenchCfg, description: str | None = None):
    """(config, output folder) from ``argv``; a bad config raises SAMFileError in one line naming key and file."""
    from jsonargparse import ArgumentError

    from sam_model import cli_config

    cli_config.use_interpolation()
    from omegaconf.errors import OmegaConfBaseException
    argv = cli_config.resolve_configs(argv)  # --config janus_sgd.yaml: the installed one when the folder has none
    p = parser(cfg_class, description)
    try:
        ns = p.parse_args(list(argv))
    except ArgumentError as exc:
        raise SAMFileError(cli_config.explain(str(exc), argv, p)) from None
    except OmegaConfBaseException as exc:
        raise SAMFileError(cli_config.explain_interpolation(exc, argv)) from None
    init = p.instantiate(ns) if hasattr(p, "instantiate") else p.instantiate_classes(ns)
    cfg = cfg_class(**{f.name: init[f.name] for f in fields(cfg_class)})
    if cfg.seeds == "tuning":
        cfg.seeds = list(cfg.tuning_seeds)
    elif isinstance(cfg.seeds, int):
        cfg.seeds = [cfg.seeds]
    return cfg, Path(ns.out)


def load_config(path: str | None = None, cfg_class: type = BenchCfg, *args: str):
    """The config of ``--config path`` (defaults without a path), with further command-line ``args``."""
    return parse_config([*(("--config", path) if path else ()), *args, "--out", "-"], cfg_class)[0]


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


# -- pooled BERT vectors, from the package's one text-vector cache -----------------------------------------


def text_vectors(bert, tokenizer, model: SAMConfig, texts: list[str], cache_dir: str | Path,
                 progress: bool = True) -> tuple[dict[str, np.ndarray], int]:
    """Pooled (unnormalised, as SAMNet's frozen text encoder makes them) BERT vectors of ``texts``, and how many
    BERT encoded.

    They go through the package's text-vector cache (``TextEncoder.cache_file``: one file per BERT
    fingerprint under ``cache_dir``, shared with training and evaluation), so only texts that no run has
    encoded before cost BERT time. Those are encoded shortest first in batches of 128.
    """
    from tqdm.auto import tqdm

    from sam_model.models.text_encoder import TextEncoder

    enc = TextEncoder(bert, tokenizer, model.max_length, trainable_layers=0, batch_size=128, pooling=model.pooling)
    path = enc.cache_file(cache_dir)
    enc.load_cache(path)
    missing = sorted(enc.uncached(texts), key=len)
    chunk = 128 * 8
    for i in tqdm(range(0, len(missing), chunk), desc="BERT (cached after this run)", disable=not progress or not
                  missing, unit="chunk"):
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


def override_alone(argv: Sequence[str]) -> str | None:
    """The first --config file when it is an override (it sets no ``data.train``: janus_sgd_noisy.yaml), which
    would otherwise run on the built-in defaults instead of the base it changes; None when the stack is fine."""
    import yaml

    from sam_model import cli_config

    files = cli_config.config_files(list(argv))
    if not files:
        return None
    try:
        raw = yaml.safe_load(Path(files[0]).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None  # the parser names an unreadable file
    data = raw.get("data") if isinstance(raw, dict) else None
    return None if isinstance(data, dict) and "train" in data else files[0]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    alone = override_alone(argv)
    if alone is not None:
        print(f"error: {alone} sets no data.train: it is an override; stack it on a base, e.g. --config "
              f"configs/janus_sgd.yaml --config {alone}", file=sys.stderr)
        return 2
    if stream_of(argv) == "bank":  # the bank stream: its own config sections and runner
        from sam_model.janus.bank_bench import main as bank_main

        return bank_main(argv)
    from rich.console import Console

    console = Console(stderr=True)
    try:
        cfg, out = parse_config(argv)
        plan(cfg)
        feedback_schedule(1, cfg.data.feedback_noise, 0)  # validate before any work
        net_config(cfg.model, [], [])
        if (out / "runs").exists() and any((out / "runs").iterdir()):
            raise SAMFileError(f"{out}/runs already holds Janus runs; choose another --out or remove it")
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
        plot(per_seed, out / "janus_accuracy.png")
    except SAMFileError as exc:
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return 2
    _print_table(console, summary, report["targets"], noisy=bool(cfg.data.feedback_noise), stats=stats,
                 paired=report["paired"])
    console.print(f"wrote {out / 'janus.json'} and {out / 'janus_accuracy.png'} "
                  f"({report['seconds']['total']:.0f}s, BERT {report['seconds']['bert']:.0f}s for {encoded} texts)")
    return 0


def stream_of(argv: Sequence[str]) -> str:
    """Which benchmark ``argv`` asks for: ``--stream X``, else the ``stream:`` of the last --config file that has
    one, else "head" (an unreadable file is left to the parser to report)."""
    import yaml

    from sam_model import cli_config

    args = list(argv)
    for i, a in enumerate(args):
        if a == "--stream" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--stream="):
            return a.split("=", 1)[1]
    for path in reversed(cli_config.config_files(args)):
        try:
            raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            return "head"
        if isinstance(raw, dict) and "stream" in raw:
            return str(raw["stream"])
    return "head"


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
