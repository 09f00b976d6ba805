"""Janus on the bank stream: which gate keeps a memory bank that accumulates knowledge, through faults?

The stream and its fault model are in :mod:`sam_model.bench.janus_bank_stream`; the updater with faults and
the recall evaluator in :mod:`sam_model.janus.adapters.bank_recall`. The command::

    python -m sam_model.bench.janus --config configs/janus_bank.yaml --out runs/janus_bank [--seeds tuning]

(a config with ``stream: bank``, or ``--stream bank``, runs here). Vectors: untrained all-MiniLM-L6-v2 sentence
vectors for unit texts and queries (the content retriever), read from and added to the package's one
text-vector cache (``~/.cache/sam_model/text``, or ``$SAM_CACHE_DIR/text``), so that only the first run of a
seed pays for BERT. φ = :class:`~sam_model.janus.adapters.memory_bank.BankFeatures`, the
importance-weighted mean of the unit vectors the writes already stored, the kind histogram and the size: it
encodes no text, one pass over the bank (counted as one task scored per call).

Per seed, every policy gates the same stream; the report (``janus.json``) has per policy the final
held-out accuracy (all held-out probes; also split by the age of their dialogue), the mean over the stream,
comparisons, the evaluation cost in tasks scored (comparisons 2·|E_t| each, φ calls), and — under always-trigger,
which judges every candidate — the share of candidates that win on E_t, clean and faulty apart.
``janus_accuracy.png`` draws the first seed's held-out recall along the stream per policy, faults marked.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sam_model.bench.janus_bank_stream import FAULTS, BankStream, Dialogue, build_bank_stream, parse_dialogue
from sam_model.bench.janus_config import PolicyCfg, as_dict, parse_run, plan, refuse_earlier_runs
from sam_model.bench.janus_report import bank_table, plot_bank
from sam_model.io import SAMFileError, atomic_write_text
from sam_model.janus.adapters.bank_recall import RecallEvaluator, RecallTaskFeatures, StreamUpdater
from sam_model.janus.adapters.memory_bank import BankFeatures
from sam_model.janus.controller import JanusController
from sam_model.janus.evalset import HybridEvalSet
from sam_model.janus.gates import make_gate
from sam_model.janus.stats import CountedPhi, auc, default_pairs, evaluation_cost, paired_table, policy_stats
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.encoders import ContentEncoder
from sam_model.memory.rules import BankRules

# -- configuration ------------------------------------------------------------------------------------------


@dataclass
class BankDataCfg:
    """The bank stream's dialogues.

    Args:
        train: SGD train split folder.
        every: read one SGD train dialogue in ``every`` (all services): the pool every seed samples from.
        history: dialogues the bank observed before the stream (M_0).
        batches: stream batches (Janus steps).
        per_batch: new dialogues per batch.
        visits: returning users per batch (one slot of an old dialogue changes).
        probes: probed slots per dialogue: half of them the stream's tasks, half held out.
    """

    train: str = "../shared/data/sgd/train"
    every: int = 4
    history: int = 16
    batches: int = 32
    per_batch: int = 4
    visits: int = 8
    probes: int = 4


@dataclass
class FaultCfg:
    """The faulty batches (sam_model/bench/janus_bank_stream.py).

    Args:
        share: fraction of batches with a fault (never the first).
        kinds: the fault kinds drawn from: misread, prune, flood.
        prune_keep: an over-eager pruning pass keeps this fraction of the bank ...
        prune_mode: ... deleting the rest outright ("delete"), or by the bank's own rules ("absorb").
        flood: near-duplicate writes of one flood (a retry loop).
    """

    share: float = 0.25
    kinds: list[str] = field(default_factory=lambda: list(FAULTS))
    prune_keep: float = 0.5
    prune_mode: str = "delete"
    flood: int = 300


@dataclass
class BankMemoryCfg:
    """The bank's own rules (sam_model.memory.MemoryConfig); anything not named keeps MemoryConfig's default.

    Args:
        capacity: units the bank keeps before it prunes (0 = unbounded).
        half_life: ticks (events) for a unit's importance to halve; 0 = no decay.
        working_size: units of the exact working tier (0 = one flat exact store).
        ivf_nlist: IVF lists of the long-term tier (null: about 4·sqrt(n)).
        ivf_nprobe: IVF lists probed per query.
    """

    capacity: int = 2000
    half_life: float = 1000.0
    working_size: int = 256
    ivf_nlist: int | None = 16
    ivf_nprobe: int = 4


@dataclass
class BankJanusCfg(PolicyCfg):
    """The policies compared and the Janus controller's gate, hybrid evaluation set (PolicyCfg's keys, with
    the bank's defaults) and φ.

    Args:
        coverage: E_t's coverage part: cluster representatives of every task seen.
        fresh: E_t's fresh part: tasks since the last trigger.
        holdout_latest: judge a candidate only on tasks before its batch (a bank cannot answer for dialogues
            it has not seen, so the default judges on the batch too).
        kind_weight: φ (BankFeatures): weight of the kind histogram.
        size_weight: φ: weight of the size terms.
        weighting: φ's mean unit vector: weighted by "importance", or "uniform".
        k: the agent reads the top-k units of the episode and answers with the first value they record.
    """

    coverage: int = 32
    fresh: int = 16
    holdout_latest: bool = False
    kind_weight: float = 1.0
    size_weight: float = 0.1
    weighting: str = "importance"
    k: int = 5


@dataclass
class BankBenchCfg:
    """Janus on the bank stream: the memory is a SAM MemoryBank that accumulates knowledge, through faults.

    Args:
        stream: "bank", the bank stream of configs/janus_bank.yaml (``stream: head`` runs the SGD domain stream).
        data: the stream's dialogues.
        faults: the faulty batches.
        memory: the bank's rules.
        janus: policies, gate, E_t and φ.
        eval_every: steps between held-out evaluations (the accuracy curve).
        seeds: run seeds: a list, one seed, or "tuning" for tuning_seeds.
        tuning_seeds: the seeds where settings were chosen (--seeds tuning).
        gates: a tuning sweep instead of the configured MMT: none, always, then for every gate G (e.g.
            "mmtq(0.9,0.25)", "mmt(0.9,0.0)"; one per --gates+ G) MMT with G and random and periodic at its
            count.
        bert_path: the content retriever's text encoder folder; "" = all-MiniLM-L6-v2.
        oracle: under always-trigger, also score both memories of every step on the held-out probes.
        keep_checkpoints: keep every run's memories/ and tasks/; manifests are always kept.
        threads: faiss threads (the tiers are small, and OpenMP start-up made each tier move ~100x slower).
    """

    stream: Literal["bank"] = "bank"
    data: BankDataCfg = field(default_factory=BankDataCfg)
    faults: FaultCfg = field(default_factory=FaultCfg)
    memory: BankMemoryCfg = field(default_factory=BankMemoryCfg)
    janus: BankJanusCfg = field(default_factory=BankJanusCfg)
    eval_every: int = 4
    seeds: list[int] | int | Literal["tuning"] = field(default_factory=lambda: [10])
    tuning_seeds: list[int] = field(default_factory=list)
    gates: list[str] = field(default_factory=list)
    bert_path: str = ""
    oracle: bool = True
    keep_checkpoints: bool = False
    threads: int = 1


class TimedRecall(RecallEvaluator):
    """Counts the tasks the comparisons score (each memory each task) and their seconds."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.tasks, self.seconds = 0, 0.0

    def correct_many(self, memories, tasks):
        t0 = time.perf_counter()
        out = super().correct_many(memories, tasks)
        self.seconds += time.perf_counter() - t0
        self.tasks += len(tasks) * len(memories)
        return out


class TimedPhi(BankFeatures):
    """φ with its cost: no text is encoded (the unit vectors are the writes'), one pass over the bank,
    counted as one task scored per call."""

    tasks_per_call = 1.0

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seconds = 0.0

    def __call__(self, memory):
        t0 = time.perf_counter()
        out = super().__call__(memory)
        self.seconds += time.perf_counter() - t0
        return out


# -- one policy run ----------------------------------------------------------------------------------------


def memory_config(cfg: BankBenchCfg) -> MemoryConfig:
    return MemoryConfig(**dataclasses.asdict(cfg.memory))


def initial_bank(stream: BankStream, retriever: ContentEncoder, cfg: BankBenchCfg) -> MemoryBank:
    """M_0: the bank after the history dialogues, through the same updater (no faults)."""
    bank = MemoryBank(retriever.dim, memory_config(cfg))
    updater = StreamUpdater(retriever, [])
    updater.observe(bank, BankRules(bank, encode=retriever.encode_memories), stream.history)
    return bank


def run_policy(name: str, gate_spec: str, ablate: str | None, stream: BankStream, m0: MemoryBank,
               retriever: ContentEncoder, cfg: BankBenchCfg, seed: int, workdir: Path) -> dict:
    j = cfg.janus
    evalset = HybridEvalSet(RecallTaskFeatures(retriever), coverage=j.coverage, boundary=j.boundary, fresh=j.fresh,
                            use_coverage=ablate != "coverage", use_boundary=ablate != "boundary",
                            use_fresh=ablate != "fresh", seed=seed)
    updater = StreamUpdater(retriever, stream.batches, cfg.faults.prune_keep, cfg.faults.prune_mode)
    evaluator = TimedRecall(retriever, k=j.k)
    gate = make_gate(gate_spec)
    phi = CountedPhi(TimedPhi(j.kind_weight, j.size_weight, j.weighting)) if gate.needs_encoding else None
    ctrl = JanusController(updater, evaluator, phi, gate, evalset, workdir, holdout_latest=j.holdout_latest)
    heldout = RecallEvaluator(retriever, k=j.k)
    n = len(stream.batches)
    curve = [(0, float(heldout.correct(m0, stream.heldout).mean()), 0)]
    oracle: list[dict] = []

    def on_step(c: JanusController, d) -> None:
        if d.t % cfg.eval_every == 0 or d.t == n:
            curve.append((d.t, float(heldout.correct(c.memory, stream.heldout).mean()), c.comparisons))
        if cfg.oracle and name == "always" and d.triggered:  # the candidate's true effect on the held-out probes
            old, new = (MemoryBank.load(c.workdir / p) for p in (d.old_ckpt, d.new_ckpt))
            a, b = heldout.correct_many([old, new], stream.heldout)
            oracle.append({"t": d.t, "old": float(a.mean()), "new": float(b.mean())})

    t0 = time.perf_counter()
    final = ctrl.run(((b.tasks, None) for b in stream.batches), m0, on_step=on_step, history=stream.history_tasks)
    seconds = time.perf_counter() - t0
    decisions = ctrl.read_manifest()
    fault_of = {b.t: b.fault for b in stream.batches}
    final_ok = heldout.correct(final, stream.heldout)
    cost = evaluation_cost(decisions, phi.calls if phi else 0, phi.tasks_per_call if phi else 0.0)
    return {"policy": name, "gate": gate_spec, "ablation": ablate, "final_accuracy": float(final_ok.mean()),
            "accuracy_by_age": accuracy_by_age(final_ok, stream, n),
            "mean_accuracy": float(np.mean([a for _, a, _ in curve[1:]])),
            "comparisons": ctrl.comparisons, "steps": n, **cost, **candidate_stats(decisions, fault_of),
            "accuracy_curve": [{"t": t, "accuracy": a, "comparisons": k} for t, a, k in curve],
            "triggered_at": [d.t for d in decisions if d.triggered],
            "cos": [d.cos for d in decisions], "oracle": oracle, "final_units": len(final),
            "evaluator_seconds": round(evaluator.seconds, 3),
            "phi_seconds": round(phi.phi.seconds, 3) if phi else 0.0, "seconds": round(seconds, 2)}


def accuracy_by_age(ok: np.ndarray, stream: BankStream, n: int) -> dict[str, float]:
    """Held-out accuracy by when the probe's dialogue came: history, first half, second half of the stream."""
    groups: dict[str, list[bool]] = {"history": [], "old": [], "new": []}
    for c, task in zip(ok, stream.heldout):
        groups["history" if task.batch == 0 else "old" if task.batch <= n // 2 else "new"].append(bool(c))
    return {k: float(np.mean(v)) for k, v in groups.items() if v}


def candidate_stats(decisions, fault_of: dict[int, str | None]) -> dict[str, Any]:
    """Compared / won / deployed, for clean and faulty candidates (per fault kind), and the AUC of −cos."""
    out: dict[str, Any] = {}
    for label, pick in [("clean", lambda f: f is None), ("faulty", lambda f: f is not None),
                        *[(k, lambda f, k=k: f == k) for k in FAULTS]]:
        ds = [d for d in decisions if pick(fault_of[d.t])]
        out[label] = {"n": len(ds), "compared": sum(d.triggered for d in ds),
                      "won": sum(d.triggered and d.accepted for d in ds),
                      "tied": sum(d.triggered and d.score_new == d.score_old for d in ds),
                      "deployed": sum(d.accepted for d in ds)}
    cos = [(-d.cos, fault_of[d.t] is not None) for d in decisions if d.cos is not None]
    out["fault_auc_neg_cos"] = auc([c for c, _ in cos], [f for _, f in cos])
    return out


# -- the benchmark -----------------------------------------------------------------------------------------


def read_dialogues(cfg: BankDataCfg) -> list[Dialogue]:
    from sam_model.data.sgd import iter_sgd_dialogues

    if not Path(cfg.train).exists():
        raise SAMFileError(f"SGD split not found: {cfg.train} (data.train)")
    return [parse_dialogue(d) for d in iter_sgd_dialogues(cfg.train, every=cfg.every)]


def make_stream(cfg: BankBenchCfg, dialogues: list[Dialogue], seed: int) -> BankStream:
    d, f = cfg.data, cfg.faults
    try:
        return build_bank_stream(dialogues, d.history, d.batches, d.per_batch, d.visits, d.probes, f.share, f.kinds,
                                 f.flood, seed)
    except ValueError as exc:
        raise SAMFileError(str(exc)) from None


def runs_of(cfg: BankBenchCfg, gates: Sequence[str] = ()) -> list[tuple[str, str | None, str | None]]:
    """(name, gate or None = matched to an MMT run's count, ablation), MMT runs before their matched baselines.

    Without ``gates``: the benchmark's plan (``mmt`` from the config). With ``gates`` (a tuning sweep): none,
    always, then for every gate G ``mmt:G`` with ``random:G`` and ``periodic:G`` at its count.
    """
    if not gates:
        return plan(cfg)
    out: list[tuple[str, str | None, str | None]] = [("none", "none", None), ("always", "always", None)]
    for g in gates:
        make_gate(g)  # fail early on a typo
        out += [(f"mmt:{g}", g, None), (f"random:{g}", None, None), (f"periodic:{g}", None, None)]
    return out


def sweep_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """MMT variant G against random and periodic at its count (``runs_of`` with gates)."""
    return [(n, f"{b}:{n[4:]}") for n in names if n.startswith("mmt:") for b in ("random", "periodic")
            if f"{b}:{n[4:]}" in names]


def run_seed(cfg: BankBenchCfg, dialogues: list[Dialogue], seed: int, out: Path, console,
             retriever: ContentEncoder, gates: Sequence[str] = ()) -> dict[str, dict]:
    stream = make_stream(cfg, dialogues, seed)
    t0 = time.perf_counter()
    m0 = initial_bank(stream, retriever, cfg)
    console.print(f"seed {seed}: M_0 holds {len(m0)} units of {cfg.data.history} dialogues; {len(stream.batches)} "
                  f"batches, faults at {[(b.t, b.fault) for b in stream.batches if b.fault]}; "
                  f"{len(stream.heldout)} held-out probes ({time.perf_counter() - t0:.0f}s)")
    results: dict[str, dict] = {}
    n = len(stream.batches)
    for name, gate, ablate in runs_of(cfg, gates):
        if gate is None:  # matched to MMT's number of comparisons
            base, _, variant = name.partition(":")
            k = max(results[f"mmt:{variant}" if variant else "mmt"]["comparisons"], 1)
            gate = f"randomk({int(k)},{n},{seed})" if base == "random" else \
                f"periodic({cfg.janus.periodic_n or n / k:.12g})"
        workdir = out / "runs" / f"seed{seed}" / name
        r = run_policy(name, gate, ablate, stream, m0, retriever, cfg, seed, workdir)
        retriever.save()
        if not cfg.keep_checkpoints:
            for sub in ("memories", "tasks"):
                shutil.rmtree(workdir / sub, ignore_errors=True)
        results[name] = r
        console.print(f"seed {seed} {name:18s} gate={gate:24s} acc={100 * r['final_accuracy']:5.1f} "
                      f"comparisons={r['comparisons']:3d}/{n} faulty deployed={r['faulty']['deployed']}/"
                      f"{r['faulty']['n']} tasks scored={r['total_tasks']:.0f} ({r['seconds']:.0f}s)")
    return results


def regime(per_seed: dict) -> dict[str, Any]:
    """Under always-trigger (every candidate judged on E_t): how many candidates win, clean and faulty apart,
    and, from the held-out probes, how many really help (the oracle: new − old held-out accuracy > 0)."""
    out: dict[str, Any] = {}
    runs = [r["always"] for r in per_seed.values() if "always" in r]
    if not runs:
        return out
    for label in ("clean", "faulty", *FAULTS):
        n = sum(r[label]["compared"] for r in runs)
        out[label] = {"candidates": n, "won_share": sum(r[label]["won"] for r in runs) / n if n else None,
                      "tied_share": sum(r[label]["tied"] for r in runs) / n if n else None}
    return out


def oracle_regime(per_seed: dict, faults: dict[str, dict[int, str | None]]) -> dict[str, Any]:
    """Share of always-trigger's candidates that raise the held-out accuracy, clean and faulty apart."""
    gains: dict[str, list[float]] = {"clean": [], "faulty": []}
    for seed, runs in per_seed.items():
        for o in runs.get("always", {}).get("oracle", []):
            gains["faulty" if faults[str(seed)].get(o["t"]) else "clean"].append(o["new"] - o["old"])
    return {k: {"candidates": len(v), "helps_share": float(np.mean([g > 0 for g in v])) if v else None,
                "mean_gain_points": 100 * float(np.mean(v)) if v else None} for k, v in gains.items()}


def targets(stats: dict[str, dict], paired: list[dict]) -> dict[str, Any]:
    if not {"none", "always", "mmt"} <= set(stats):
        return {}
    d = {(p["a"], p["b"]): p for p in paired}
    mmt = stats["mmt"]
    out = {"mmt_minus_base_points": 100 * (mmt["mean"] - stats["none"]["mean"]),
           "mmt_minus_always_points": 100 * (mmt["mean"] - stats["always"]["mean"]),
           "total_cost_vs_always": mmt.get("cost_vs_always")}
    met = {"base_plus_5": out["mmt_minus_base_points"] >= 5.0, "always_minus_1": out["mmt_minus_always_points"] >= -1.0,
           "cost_40pct": (out["total_cost_vs_always"] or 0.0) <= 0.4}
    for b in ("random", "periodic"):
        if ("mmt", b) in d:
            met[f"beats_{b}"] = d[("mmt", b)]["verdict"] == "beats"
    out["met"] = met
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the bank benchmark on ``argv`` (``python -m sam_model.bench.janus`` with a ``stream: bank`` config)."""
    import sys

    from rich.console import Console

    argv = sys.argv[1:] if argv is None else list(argv)
    console = Console(stderr=True)
    try:
        cfg, out, tensorboard = parse_run(argv, BankBenchCfg)
        gates = [g.strip() for g in cfg.gates if g.strip()]
        runs_of(cfg, gates)
        refuse_earlier_runs(out)
        t0 = time.perf_counter()
        dialogues = read_dialogues(cfg.data)
        console.print(f"{len(dialogues)} SGD dialogues read ({time.perf_counter() - t0:.0f}s)")
        from sam_model.data.sources import default_cache_dir

        retriever = ContentEncoder(cfg.bert_path or None, "cpu", cache_dir=str(default_cache_dir() / "text"))
        if cfg.threads > 0:
            import faiss

            faiss.omp_set_num_threads(cfg.threads)
        per_seed, faults = {}, {}
        for seed in cfg.seeds:
            per_seed[seed] = run_seed(cfg, dialogues, seed, out, console, retriever, gates)
            faults[str(seed)] = {b.t: b.fault for b in make_stream(cfg, dialogues, seed).batches}
        stats = policy_stats(per_seed)
        paired = paired_table(per_seed, default_pairs(list(stats)) + sweep_pairs(list(stats)))
        report = {"config": as_dict(cfg), "statistics": stats, "paired": paired, "targets": targets(stats, paired),
                  "regime": regime(per_seed), "oracle_regime": oracle_regime(per_seed, faults),
                  "faults": {s: {str(t): f for t, f in fs.items() if f} for s, fs in faults.items()},
                  "texts_encoded": retriever.encoded, "seconds": round(time.perf_counter() - t0, 1),
                  "per_seed": {str(k): v for k, v in per_seed.items()}}
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "janus.json", json.dumps(report, indent=1))
        plot_bank(report, out / "janus_accuracy.png", tensorboard)
    except SAMFileError as exc:
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return 2
    console.print(bank_table(report))
    console.print(f"wrote {out / 'janus.json'} ({report['seconds']:.0f}s; {retriever.encoded} texts encoded)")
    return 0
