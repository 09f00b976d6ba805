"""Leave-one-domain-out: train on every domain but one, evaluate zero-shot on the one left out.

Domains: SGD (held out by service: its dev split, whose services a model that never read SGD has never seen),
the tau-bench airline agent (its fixed test tasks) and the AutoCodeRover coding agent (its fixed test
instances; ``sam_model.data.transcripts.held_out_groups``). Each model variant is trained by ``train.py fit``
on ``configs/tools.yaml`` + ``configs/lodo.yaml`` (+ the variant's override files), and every variant of one
left-out domain is evaluated by ``evaluate.py``'s one code path (``sam_model.evaluation.run.evaluate``: the
memories replayed through the memory store, as a deployment searches) next to every untrained baseline on the
same decisions. The table gives each variant's MRR and Recall@5, the best untrained baseline and the paired
difference (95 % bootstrap over the decisions). Variants are cumulative, so each row is one change's effect::

    python -m sam_model.bench.lodo --out runs/lodo                       # every domain, every variant
    python -m sam_model.bench.lodo --out runs/lodo --domains coding --variants base,fusion --reuse

``--reuse`` evaluates the checkpoints an earlier run left in ``checkpoints/`` instead of training again.
``OUT/lodo.png`` draws the table: per left-out domain, each variant's MRR minus the best untrained baseline's with
its 95 % interval (:func:`plot`, redrawable from a saved ``lodo.json``); ``--tensorboard LOGDIR`` logs those
figures as scalars and the PNG as an image.
Coding-agents data is licensed for non-commercial evaluation: models trained on it here are never shipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sam_model import tensorboard_log
from sam_model.io import DefaultsHelp, SAMFileError, atomic_write_text, cli_name, run_cli

TEXT_CACHE = "~/.cache/sam_model/text"  # the frozen-BERT vector cache training fills (evaluate.py's default)


@dataclass(frozen=True)
class Domain:
    """A domain: its training source (under the data root), how many times it is read per epoch beside the
    others, and what is evaluated when it is left out (the file or folder, its split, a decision sample)."""

    train: str
    repeat: int
    eval_split: str = "test"
    eval_path: str | None = None  # default: the training source itself (its test split)


DOMAINS = {
    "sgd": Domain("sgd/train", 1, "all", "sgd/dev"),
    "airline": Domain("tau-bench/gpt-4o-airline.json.gz", 4),
    "coding": Domain("coding-agents/autocoderover-gpt4-swebench-lite-train.chat.jsonl.gz", 4),
}


@dataclass(frozen=True)
class Variant:
    """A model recipe: override files stacked on the base configs, and whether generated tool worlds
    (sam_model.data.toolworlds) are trained on beside the real domains."""

    label: str
    configs: tuple[str, ...] = ()
    worlds: bool = False
    lexical: bool = False  # the store's lexical re-rank on, its weight chosen on held-out generated worlds
    lexical_cv: bool = False  # the lexical re-rank's weight chosen by leave-one-domain-out over the other domains
    same_training_as: str | None = None  # a search-time change: the checkpoint of that variant
    user_first: float = 0.0  # the generated worlds' origin mix (sam_model.data.toolworlds: toolworlds:N:0:U)
    plots: str = "fixed"  # fixed: the first generator's one plot; free: random plots (sam_model.data.toolplots)
    brief: float = 0.0  # free plots: the share of conversations opening with the task statement (toolplots.briefed)
    turn: float = 0.0  # free plots: the share whose task turns to a new request after its calls (toolplots Story.turn)
    sgd_mix: float = 0.0  # > 0: then adapted to SGD alone (configs/adapt.yaml) and mixed back at this weight
    explicit: str = ""  # a demo family (sam_model.data.synthetic): its logs with explicit agent states trained on too
    on: str | None = None  # the variant this one is one change to, when it is not the one listed before it


VARIANTS = {  # cumulative up to plots, each one change to the one before; known, explicit, sgdmix, brief: each one to plots;
    # opening: one to brief; opening-lr, reuse: each one to opening; reuse-recent, turns: each one to reuse;
    # lexlearn, apart: each one to turns (apart: the loss of the served ranking); lexfast: one to lexlearn, compared
    # with turns; lexstate: one to apart (a lexical weight per query, w(v_s)); soft: one to apart (the reuse head
    # trained on the whole ranking, served with no hard ordering)
    "base": Variant("tools.yaml recipe"),
    "phase": Variant("+ phase dropout", ("configs/phase_dropout.yaml",)),
    "worlds": Variant("+ generated tool worlds", ("configs/phase_dropout.yaml",), True),
    "fusion": Variant("+ dense-state fusion", ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True),
    "lexical": Variant("+ lexical re-rank", ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, True,
                       "fusion"),
    "lexcv": Variant("+ lexical re-rank (w by leave-one-domain-out on the other domains)",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, same_training_as="fusion",
                     lexical_cv=True),
    "origins": Variant("+ worlds whose user names the item first (half)",
                       ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, user_first=0.5),
    "plots": Variant("+ worlds of random plots (free text, look-alike results, restatements) instead",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, plots="free"),
    "known": Variant("+ known-value dropout (30 % of training queries without their known values)",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/known_dropout.yaml"), True,
                     plots="free", on="plots"),
    "explicit": Variant("+ 150 synthetic trip-planning logs with explicit agent states",
                        ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, plots="free",
                        explicit="trip", on="plots"),
    "brief": Variant("+ half the worlds' conversations open with the task statement holding the values calls need",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml"), True, plots="free", brief=0.5,
                     on="plots"),
    "opening": Variant("+ the scorer told which memory opened its task (its first user event), weighted by the state",
                       ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml"), True,
                       plots="free", brief=0.5, on="brief"),
    "opening-lr": Variant("+ the opening head at 10x the heads' learning rate (its own optimiser group)",
                          ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                           "configs/opening_lr.yaml"), True, plots="free", brief=0.5, on="opening"),
    "reuse": Variant("+ the scorer told which memories earlier calls of the task took values from, weighted by the state",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                      "configs/task_reuse.yaml"), True, plots="free", brief=0.5, on="opening"),
    "reuse-recent": Variant("+ the scorer told how recently each of those memories was used (1/rank of its latest use)",
                            ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                             "configs/task_reuse.yaml", "configs/task_recency.yaml"), True, plots="free", brief=0.5,
                            on="reuse"),
    "turns": Variant("+ half the worlds' tasks turn, after their calls, to a new request with values nothing before said",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                      "configs/task_reuse.yaml"), True, plots="free", brief=0.5, turn=0.5, on="reuse"),
    "lexlearn": Variant("+ the lexical weight learned in training (BM25 of the state text inside the trained score)",
                        ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                         "configs/task_reuse.yaml", "configs/lexical_learned.yaml"), True, plots="free", brief=0.5,
                        turn=0.5, on="turns"),
    "lexfast": Variant("+ the lexical weight learned in training at its own rate (3e-2), so that it can move",
                       ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                        "configs/task_reuse.yaml", "configs/lexical_learned.yaml", "configs/lexical_lr.yaml"), True,
                       plots="free", brief=0.5, turn=0.5, on="turns"),
    "apart": Variant("+ the loss of the served ranking (used memories ranked apart from the rest, as the store's used "
                     "ordering serves them)",
                     ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                      "configs/task_reuse.yaml", "configs/used_apart.yaml"), True, plots="free", brief=0.5, turn=0.5,
                     on="turns"),
    "lexstate": Variant("+ a lexical weight read from the state (w(v_s)·BM25 of the state text, trained and served per "
                        "query)",
                        ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                         "configs/task_reuse.yaml", "configs/used_apart.yaml", "configs/lexical_state.yaml",
                         "configs/lexical_lr.yaml"), True, plots="free", brief=0.5, turn=0.5, on="apart"),
    "soft": Variant("+ the reuse head trained on the whole ranking over the apart-trained base: the state decides how "
                    "far used memories rise (no hard ordering)",
                    ("configs/phase_dropout.yaml", "configs/state_fusion.yaml", "configs/task_opening.yaml",
                     "configs/task_reuse.yaml", "configs/used_apart.yaml", "configs/reuse_soft.yaml"), True,
                    plots="free", brief=0.5, turn=0.5, on="apart"),
    "sgdmix": Variant("+ adapted to SGD (one dialogue in 3) and mixed back, w = 0.25", same_training_as="plots",
                      sgd_mix=0.25),  # a second pass on the plots variant's checkpoint (sgd_mixed)
}
EXPLICIT_EPISODES = 150  # variant explicit: synthetic episodes of its family (seed 0), a minority of the mix
SGD_MIX_EVERY = 3  # the SGD adaptation of variant sgdmix reads one SGD train dialogue in 3 (as configs/sgd.yaml)
LEXICAL_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
BASE_CONFIGS = ("configs/tools.yaml", "configs/lodo.yaml")


def train_sources(held_out: str, root: Path, variant: Variant, worlds: int) -> tuple[list[str], list[int]]:
    """(data.train, data.repeat) of a run that leaves ``held_out`` out."""
    train = [(str(root / d.train), d.repeat) for name, d in DOMAINS.items() if name != held_out]
    if variant.worlds:
        spec = f"toolworlds:{worlds}"
        if variant.user_first or variant.plots != "fixed":
            spec += f":0:{variant.user_first:g}" + ("" if variant.plots == "fixed" else f":{variant.plots}")
            spec += f":{variant.brief:g}" if variant.brief or variant.turn else ""
            spec += f":{variant.turn:g}" if variant.turn else ""
        train.append((spec, 1))
    return [t for t, _ in train], [r for _, r in train]


def run_name(held_out: str, variant: str, seed: int) -> str:
    return f"lodo-{held_out}-{variant}-s{seed}"


def train(held_out: str, variant_name: str, root: Path, args) -> Path:
    """Train one variant without ``held_out`` (or reuse its checkpoint); returns the best checkpoint."""
    variant = VARIANTS[variant_name]
    if variant.same_training_as:
        variant_name = variant.same_training_as
        variant = VARIANTS[variant_name]
    run = run_name(held_out, variant_name, args.seed)
    folder = Path("checkpoints") / run
    best = sorted(folder.glob("best-*.ckpt"))
    if args.reuse and best:
        return best[-1]
    for old in best:  # a fresh run: an older best-*.ckpt of another epoch would be picked up otherwise
        old.unlink()
    sources, repeat = train_sources(held_out, root, variant, args.worlds)
    if variant.explicit:  # logs in the agent-log format whose states the agent wrote itself (as the demo's)
        from sam_model.data.synthetic import write_synthetic

        log = Path(args.out) / f"synthetic-{variant.explicit}-n{EXPLICIT_EPISODES}-s0.jsonl"
        if not log.exists():
            write_synthetic(log, EXPLICIT_EPISODES, 0, (variant.explicit,))
        sources, repeat = sources + [str(log)], repeat + [1]
    cmd = [a for c in (*BASE_CONFIGS, *variant.configs) for a in ("--config", c)]
    cmd += ["--run", run, "--seed_everything", str(args.seed), "--data.train", json.dumps(sources),
            "--data.repeat", json.dumps(repeat), "--data.sgd_every", str(args.sgd_every)]
    if args.max_epochs:
        cmd += ["--trainer.max_epochs", str(args.max_epochs)]
    print(f"[lodo] training {run} ({variant.label}) on {', '.join(sources)}", flush=True)
    code, seconds, log = fit(cmd, Path(args.out) / "logs" / f"{run}.log")
    best = sorted(folder.glob("best-*.ckpt"))
    if code != 0 or not best:
        raise SAMFileError(f"training {run} failed (exit {code}); see {log}")
    print(f"[lodo] {run}: {seconds:.0f} s, {best[-1]}", flush=True)
    return best[-1]


def sgd_mixed(held_out: str, base: Path, weight: float, root: Path, args) -> Path:
    """The model ``base`` adapted to SGD alone by the README's own recipe (``configs/adapt.yaml`` from ``base``,
    one SGD train dialogue in 3) and mixed back, ``(1 − weight) · base + weight · adapted`` (WiSE-FT,
    sam_model.interpolate): a second pass on a trained domain that keeps most of what the first pass learnt.
    With SGD left out there is no SGD to adapt to, so the model is ``base`` itself. Returns an export folder."""
    if held_out == "sgd":
        return base
    from sam_model.interpolate import interpolate

    run = run_name(held_out, "sgdmix", args.seed)
    start = base.parent / "export" if (base.parent / "export").is_dir() else base
    mixed = Path("checkpoints") / run / "mixed"
    if args.reuse and mixed.is_dir():
        return mixed
    cmd = ["--config", "configs/adapt.yaml", "--model.init_from", str(start), "--run", run,
           "--seed_everything", str(args.seed), "--data.train", json.dumps([str(root / DOMAINS["sgd"].train)]),
           "--data.sgd_every", str(SGD_MIX_EVERY)]
    print(f"[lodo] adapting {start} to SGD ({run})", flush=True)
    code, seconds, log = fit(cmd, Path(args.out) / "logs" / f"{run}.log")
    adapted = Path("checkpoints") / run / "export"
    if code != 0 or not adapted.is_dir():
        raise SAMFileError(f"adapting {run} failed (exit {code}); see {log}")
    print(f"[lodo] {run}: {seconds:.0f} s; mixed at w = {weight:g}", flush=True)
    return interpolate(start, adapted, weight, mixed)


def fit(args: list[str], log: Path) -> tuple[int, float, Path]:
    """``train.py fit ARGS`` in a child process with its output in ``log``: (exit code, seconds, log)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        code = subprocess.call([sys.executable, "train.py", "fit", *args], stdout=fh, stderr=subprocess.STDOUT)
    return code, time.perf_counter() - t0, log


def paired_difference(per_query: Path, a: str, b: str) -> tuple[float, float, float]:
    """Mean reciprocal-rank difference a − b over the decisions of ``per_query.jsonl``, with its 95 % bootstrap
    interval, the conversations resampled (their decisions are not independent: sam_model.janus.stats)."""
    from sam_model.janus.stats import bootstrap_ci

    diffs, groups = [], []
    for line in per_query.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        diffs.append(row["methods"][a]["rr"] - row["methods"][b]["rr"])
        groups.append(row["episode_id"])
    return bootstrap_ci(diffs, groups=groups)


def with_lexical(retriever, weight: float):
    """The retriever with the store's lexical re-rank at ``weight`` (sam_model.storeconfig.StoreConfig.lexical)."""
    retriever.store.config = retriever.store.config.with_lexical(weight)  # a network's per-query weight too
    return retriever


def choose_lexical(checkpoint: Path, args) -> tuple[float, dict[float, float]]:
    """The lexical weight with the best MRR on the test worlds of the generated tool worlds (held out of every
    training run by group: domains no model has seen, and none of the benchmark's), and every weight's MRR."""
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data
    from sam_model.evaluation.run import evaluate
    from sam_model.retriever import SAMRetriever

    data = load_eval_data(f"toolworlds:{args.worlds}", "episode", None, args.seed, False, SourceOptions(split="test"))
    compare = {f"lexical={w}": with_lexical(SAMRetriever.load(checkpoint), w) for w in LEXICAL_GRID}
    report = evaluate(data, Path(args.out) / "lexical" / checkpoint.parent.name, None, baselines=[],
                      compare=compare, latency_queries=1, text_cache=TEXT_CACHE, seed=args.seed, quiet=True)
    mrr = {w: report["methods"][f"lexical={w}"]["mrr"] for w in LEXICAL_GRID}
    return max(LEXICAL_GRID, key=lambda w: (mrr[w], -w)), mrr


def share_text_caches(retrievers) -> None:
    """One in-memory text-vector cache for every frozen text encoder of the same BERT (fingerprint) run at the same
    precision (the on-disk cache's key): models trained on the same frozen MiniLM encode each memory text once
    between them, not once each."""
    from sam_model.models.text_encoder import TextEncoder

    shared: dict[tuple[str, str], dict] = {}
    for r in retrievers:
        for module in r.net.modules() if hasattr(r, "net") else ():
            if isinstance(module, TextEncoder) and module.use_cache:
                module.limit_cache(None)  # a batch job: every memory text once, however many
                cache = shared.setdefault((module.cache_key(), module.precision), module._cache)
                cache.update(module._cache)
                module._cache = cache


def lexical_spread(retriever, data) -> dict[str, float] | None:
    """The served w(v_s) over ``data``'s decisions (each query vector's last part, the weight the store's lexical
    re-rank reads: StoreConfig.lexical_per_query): mean, 10th and 90th percentile, for the pre-registered
    manipulation check (a spread under 0.02 is one scalar again); None for a store without a per-query weight."""
    import numpy as np

    if not retriever.store.lexical_per_query or not data.examples:
        return None
    exs = data.examples
    q = np.asarray(retriever.encoder.encode_queries([e.state for e in exs], [e.observation for e in exs],
                                                    steps=[e.step for e in exs],
                                                    task_starts=[e.task_start for e in exs]), dtype=np.float64)
    w = q[:, -1]
    return {"mean": float(w.mean()), "p10": float(np.percentile(w, 10)), "p90": float(np.percentile(w, 90)),
            "queries": len(w)}


def evaluate_domain(held_out: str, checkpoints: dict[str, Path], root: Path, args) -> list[dict]:
    """Every variant and every untrained baseline on the left-out domain's decisions: one row per variant."""
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data
    from sam_model.evaluation.methods import BASELINES
    from sam_model.evaluation.run import evaluate
    from sam_model.retriever import SAMRetriever

    d = DOMAINS[held_out]
    path = root / (d.eval_path or d.train)
    max_queries = args.sgd_queries if held_out == "sgd" else None
    data = load_eval_data(path, "episode", max_queries, args.seed, False, SourceOptions(split=d.eval_split))
    out = Path(args.out) / held_out
    compare, chosen = {}, {}
    for name, ckpt in checkpoints.items():
        if VARIANTS[name].lexical_cv:  # every weight of the grid; the one used is chosen on the other domains
            compare.update({grid_name(name, w): with_lexical(SAMRetriever.load(ckpt), w) for w in LEXICAL_GRID})
            continue
        compare[name] = SAMRetriever.load(ckpt)
        if VARIANTS[name].lexical:
            chosen[name] = choose_lexical(ckpt, args)
            with_lexical(compare[name], chosen[name][0])
    for extra in args.extra:  # other retrievers on the same decisions (in lodo.json, not in the table)
        compare[f"extra:{extra}"] = SAMRetriever.load(extra)
    share_text_caches(compare.values())
    report = evaluate(data, out, None, baselines=BASELINES, compare=compare, latency_queries=1, text_cache=TEXT_CACHE, seed=args.seed,
                      quiet=True, plus_used=True)  # VARIANT+used, VARIANT+used-latest beside each (README "The ordering, served")
    methods = report["methods"]
    best = max(BASELINES, key=lambda b: methods[b]["mrr"])
    rows = []
    names = list(checkpoints)
    extras = {e: {k: methods[f"extra:{e}"][k] for k in ("mrr", "recall@5")} for e in args.extra}
    for i, name in enumerate(names):
        if VARIANTS[name].lexical_cv:  # filled in by cross_validate once every domain has its grid
            rows.append({"domain": held_out, "variant": name, "label": VARIANTS[name].label,
                         "decisions": report["n_queries"], "best_baseline": best,
                         "best_baseline_mrr": methods[best]["mrr"], "checkpoint": str(checkpoints[name]),
                         "above": row_above(names, i),
                         "grid": {f"{w:g}": {k: methods[grid_name(name, w)][k] for k in ("mrr", "recall@5")}
                                  for w in LEXICAL_GRID}})
            continue
        diff = paired_difference(out / "per_query.jsonl", name, best)
        rows.append({"domain": held_out, "variant": name, "label": VARIANTS[name].label,
                     "decisions": report["n_queries"], "mrr": methods[name]["mrr"],
                     "recall@5": methods[name]["recall@5"], "best_baseline": best,
                     "best_baseline_mrr": methods[best]["mrr"], "difference": diff,
                     "baselines": {b: methods[b]["mrr"] for b in BASELINES}, "checkpoint": str(checkpoints[name])})
        above = row_above(names, i)
        if above:  # the change this row adds: paired against the row it adds to
            rows[-1]["change"] = paired_difference(out / "per_query.jsonl", name, above)
        if name in chosen:
            rows[-1]["lexical"] = {"weight": chosen[name][0], "worlds_mrr": chosen[name][1]}
        spread = lexical_spread(compare[name], data)
        if spread is not None:  # said now, so the fold's log holds the manipulation check
            rows[-1]["lexical_state"] = spread
            print(f"{held_out}: {name}'s served w(v_s) over {spread['queries']} queries: mean {spread['mean']:.4f}, "
                  f"p10 {spread['p10']:.4f}, p90 {spread['p90']:.4f} (spread {spread['p90'] - spread['p10']:.4f})",
                  flush=True)
        if extras:
            rows[-1]["extra"] = extras
    return rows


def row_above(names: list[str], i: int) -> str | None:
    """The row the ``i``-th variant's change is measured against: a search-time variant's own training, or the
    variant it is one change to (``on``), when that was evaluated (``lexcv`` against ``fusion``, ``explicit``
    against ``plots``, whatever ran between them), else the nearest variant before it that is not
    cross-validated (those rows are filled in later)."""
    base = VARIANTS[names[i]].same_training_as or VARIANTS[names[i]].on
    if base in names[:i]:
        return base
    return next((n for n in reversed(names[:i]) if not VARIANTS[n].lexical_cv), None)


def grid_name(variant: str, weight: float) -> str:
    """The evaluated method of ``variant`` searched with lexical weight ``weight``."""
    return f"{variant}@lexical={weight:g}"


def method_of(row: dict) -> str:
    """The per_query.jsonl method a row's figures come from (a cross-validated row: its chosen weight's)."""
    return grid_name(row["variant"], row["lexical"]["weight"]) if "grid" in row else row["variant"]


def cross_validate(rows: list[dict], out: Path) -> None:
    """Fill in every cross-validated lexical row: the weight is the one with the best mean MRR over the *other*
    left-out domains (each evaluated by a model that never trained on it either), so a domain's own decisions
    never choose the weight its figure is measured with (nested leave-one-domain-out). ``shipped`` is the weight
    with the best mean over every domain: what a model trained on all of them would use."""
    cv = [r for r in rows if "grid" in r]
    for r in cv:
        others = [o for o in cv if o["variant"] == r["variant"] and o["domain"] != r["domain"]]
        if not others:
            raise SAMFileError(f"variant {r['variant']}: its lexical weight is chosen on the other left-out domains; "
                               "leave out at least two (--domains)")
        every = others + [r]

        def mean(group, w):
            return sum(o["grid"][w]["mrr"] for o in group) / len(group)

        weight = max(r["grid"], key=lambda w: (mean(others, w), -float(w)))
        shipped = max(r["grid"], key=lambda w: (mean(every, w), -float(w)))
        per_query = out / r["domain"] / "per_query.jsonl"
        r["lexical"] = {"weight": float(weight), "chosen_on": sorted(o["domain"] for o in others),
                        "others_mrr": {w: round(mean(others, w), 4) for w in r["grid"]}, "shipped": float(shipped)}
        r["mrr"], r["recall@5"] = r["grid"][weight]["mrr"], r["grid"][weight]["recall@5"]
        r["difference"] = paired_difference(per_query, method_of(r), r["best_baseline"])
        above = next((o for o in rows if o["domain"] == r["domain"] and o["variant"] == r["above"]), None)
        if above is not None:
            r["change"] = paired_difference(per_query, method_of(r), method_of(above))


def table(rows: list[dict]) -> str:
    """The leave-one-out table as markdown."""
    lines = ["| left out | decisions | model | MRR | Recall@5 | best untrained baseline (MRR) | difference [95 % CI] "
             "| change vs the row above |", "|---|---|---|---|---|---|---|---|"]

    def ci(d) -> str:
        return f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]" if d else "–"

    for r in rows:
        lines.append(f"| {r['domain']} | {r['decisions']} | {r['label']} | {r['mrr']:.3f} | {r['recall@5']:.3f} | "
                     f"{r['best_baseline']} ({r['best_baseline_mrr']:.3f}) | {ci(r['difference'])} | "
                     f"{ci(r.get('change'))} |")
    return "\n".join(lines)


Interval = tuple[float, float, float]  # mean, low, high


def plot_differences(groups: dict[str, dict[str, Interval]], ticks: dict[str, str], path: Path, title: str,
                     name: str, tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """Per group (a left-out domain, or the average), each model's MRR difference from the best untrained
    baseline as a point with its 95 % interval bar, the baseline at 0; ``ticks``: each group's label under the
    axis. Also to the TensorBoard log ``tensorboard`` (image ``name``; scalars ``name/GROUP/MODEL`` and its interval
    ends, at step 0: a table, not a curve). Returns those scalars' lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    models = list(dict.fromkeys(m for g in groups.values() for m in g))
    lines: dict[str, list[tuple[int, float]]] = {}
    fig, ax = plt.subplots(figsize=(max(6.0, 2.5 + 1.8 * len(groups)), 4.5))
    width = 0.7 / max(len(models), 1)
    for j, model in enumerate(models):
        xs, mean, err = [], [], [[], []]
        for i, (group, got) in enumerate(groups.items()):
            if model not in got:
                continue
            m, lo, hi = got[model]
            xs.append(i + (j - (len(models) - 1) / 2) * width)
            mean.append(m)
            err[0].append(m - lo)
            err[1].append(hi - m)
            lines |= {f"{group}/{model}": [(0, m)], f"{group}/{model} 95% low": [(0, lo)],
                      f"{group}/{model} 95% high": [(0, hi)]}
        ax.errorbar(xs, mean, yerr=err, fmt="o", capsize=4, color=f"C{j}", label=model)
    ax.axhline(0, color="0.4", lw=1, ls="--", label="best untrained baseline")
    ax.set_xticks(range(len(groups)), [ticks.get(g, g) for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("MRR − best untrained baseline (95 % interval)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(fig, path)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, name, lines, path)
    return lines


def plot(rows: list[dict], path: Path, tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """lodo.png from the table's rows (``lodo.json``, as saved): per left-out domain, each variant's paired MRR
    difference from that domain's best untrained baseline with its 95 % interval. Rows without a difference yet
    (a cross-validated row before every domain ran) are left out."""
    groups: dict[str, dict[str, Interval]] = {}
    ticks = {}
    for r in rows:
        if r.get("difference") is None:
            continue
        groups.setdefault(r["domain"], {})[r["variant"]] = tuple(r["difference"])
        ticks[r["domain"]] = (f"{r['domain']} ({r['decisions']} decisions)\nbaseline: {r['best_baseline']} "
                              f"{r['best_baseline_mrr']:.3f}")
    return plot_differences(groups, ticks, path, "Leave one domain out: zero-shot MRR against the best untrained "
                                                 "baseline", "lodo", tensorboard)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.lodo"),
                                description="Leave-one-domain-out benchmark: train each model variant on every "
                                            "domain but one (train.py), evaluate it zero-shot on the one left out "
                                            "next to every untrained baseline (evaluate.py's code path), and "
                                            "print one table (also OUT/lodo.md and OUT/lodo.json, drawn in "
                                            "OUT/lodo.png).",
                                formatter_class=DefaultsHelp)
    p.add_argument("--out", default="runs/lodo", help="output folder: per-domain evaluations, logs, the table")
    p.add_argument("--data-root", default=os.environ.get("SAM_SHARED_DATA", "../shared/data"),
                   help="folder holding sgd/, tau-bench/ and coding-agents/ (default $SAM_SHARED_DATA or "
                        "../shared/data)")
    p.add_argument("--domains", default=",".join(DOMAINS),
                   help=f"comma-separated domains to leave out in turn (default {','.join(DOMAINS)})")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated model variants, cumulative: " +
                        "; ".join(f"{k}: {v.label}" for k, v in VARIANTS.items()).replace("%", "%%") +  # "30 %"
                        f" (default {','.join(VARIANTS)})")
    p.add_argument("--worlds", type=int, default=600,
                   help="generated tool-world conversations of the variants that use them (default 600)")
    p.add_argument("--sgd-every", type=int, default=12,
                   help="train on one SGD train dialogue in K (default 12: ~1,000 dialogues, every service)")
    p.add_argument("--sgd-queries", type=int, default=600,
                   help="SGD left out: a seeded sample of this many SGD dev decisions (default 600)")
    p.add_argument("--max-epochs", type=int, default=None, help="override trainer.max_epochs of configs/lodo.yaml")
    p.add_argument("--seed", type=int, default=0, help="training seed and evaluation sample seed (default 0)")
    p.add_argument("--extra", action="append", default=[], metavar="RETRIEVER",
                   help="also evaluate this retriever (export folder, .ckpt or packaged name) on the same decisions, "
                        "e.g. sam-general on SGD dev; its figures go to lodo.json, not the table; repeatable")
    p.add_argument("--reuse", action="store_true",
                   help="evaluate the best checkpoints an earlier run left in checkpoints/lodo-* instead of training")
    tensorboard_log.add_option(p, "lodo.png's figures (each variant's difference from the best baseline and its "
                                  "interval, per domain) and the PNG")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for name, known, what in ((domains, DOMAINS, "domain"), (variants, VARIANTS, "variant")):
        bad = [n for n in name if n not in known]
        if bad or not name:
            p.error(f"--{what}s: unknown or none {bad}; choose from {', '.join(known)}")
    if why := tensorboard_log.problem(args.tensorboard):  # before hours of training, not after
        p.error(why)
    root = Path(args.data_root)
    for d in domains:
        if not (root / DOMAINS[d].train).exists():
            raise SAMFileError(f"{root / DOMAINS[d].train} not found: give --data-root, the folder with sgd/, "
                               "tau-bench/ and coding-agents/")
    rows: list[dict] = []
    for held in domains:
        checkpoints: dict[str, Path] = {}
        for v in variants:  # a search-time variant evaluates the checkpoint of the variant it names
            same = VARIANTS[v].same_training_as
            if VARIANTS[v].sgd_mix:  # a second pass on that variant's checkpoint
                base = checkpoints[same] if same in checkpoints else train(held, same, root, args)
                checkpoints[v] = sgd_mixed(held, base, VARIANTS[v].sgd_mix, root, args)
                continue
            checkpoints[v] = checkpoints[same] if same in checkpoints else train(held, v, root, args)
        rows += evaluate_domain(held, checkpoints, root, args)
        out = Path(args.out)
        atomic_write_text(out / "lodo.json", json.dumps(rows, indent=2))
    if any(VARIANTS[v].lexical_cv for v in variants):
        cross_validate(rows, Path(args.out))
        atomic_write_text(Path(args.out) / "lodo.json", json.dumps(rows, indent=2))
    atomic_write_text(Path(args.out) / "lodo.md", table(rows) + "\n")
    plot(rows, Path(args.out) / "lodo.png", args.tensorboard)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_cli(main, None))
