"""Learning curve of adaptation: held-out MRR of a domain after adapting a general model to 0, 10, 30, 60 and all
of its conversations, with the training time.

Each point is the README recipe as a user runs it, ``train.py fit --config configs/adapt.yaml --data.train
[LOGS]`` (from ``--init``, the general model, with its vocabularies extended), on the first N conversations of
the domain's fixed train split (``data.max_dialogues``), once per training seed (``--seeds``); 0 is the general
model itself. Every point and every untrained baseline is evaluated by ``evaluate.py``'s one code path on the same
held-out decisions (the fixed test split), each adapted export as it serves: its store searches with the ordering
its fit chose on the run's held-out conversations (adapt.yaml's ``export.used_order: auto``, written to its
config.json ``store.used_order``), and the table says which ordering each seed's export chose::

    python -m sam_model.bench.adapt_curve --init sam-general --seeds 0,1,2 \\
        --data ../shared/data/coding-agents/autocoderover-gpt4-swebench-lite-train.chat.jsonl.gz --out runs/curve

It prints the table and writes it to ``OUT/curve.md`` and ``OUT/curve.json``, and the curve to ``OUT/curve.png`` (the
mean MRR over the seeds with its 95 % interval, Recall@5, against the conversations; the best untrained baseline's
MRR as a line); ``--tensorboard LOGDIR`` logs the same lines as scalars (step: the point's position, 0 = the general
model) and the PNG as an image. Why seeds: two trainings of one recipe differ by about as much as ten more
conversations do, so one seed a point shows the curve's shape, not a point.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sam_model import tensorboard_log
from sam_model.io import DefaultsHelp, SAMFileError, atomic_write_text, cli_name, run_cli

TEXT_CACHE = "~/.cache/sam_model/text"  # the frozen-BERT vector cache training fills (evaluate.py's default)
MAX_SEED = 2 ** 32 - 1  # seed_everything refuses a training seed outside 0 .. 2**32 - 1 (numpy's range)


def adapt(init: str, data: str, n: int | None, seed: int, args) -> tuple[Path, float]:
    """Adapt ``init`` to the first ``n`` (None: all) train-split conversations of ``data`` with training seed
    ``seed``: (export, seconds)."""
    run = f"{args.name}-n{'all' if n is None else n}-s{seed}"
    from sam_model.bench.lodo import fit

    cmd = ["--config", "configs/adapt.yaml", "--run", run, "--seed_everything", str(seed),
           "--model.init_from", init, "--data.train", json.dumps([data]), "--data.transcript_split", "train"]
    if n is not None:
        cmd += ["--data.max_dialogues", str(n)]
    if args.lexical is not None:
        cmd += ["--export.lexical", args.lexical]
    print(f"[curve] adapting {init} to {'all' if n is None else n} conversations, seed {seed}", flush=True)
    code, seconds, log = fit(cmd, Path(args.out) / "logs" / f"{run}.log")
    export = Path("checkpoints") / run / "export"
    if code != 0 or not export.is_dir():
        raise SAMFileError(f"adaptation {run} failed (exit {code}); see {log}")
    return export, seconds


def served_order(retriever, export: Path | None = None) -> dict:
    """The store ordering ``retriever`` searches with, which its plain row in the evaluation is scored through (as
    it serves: evaluation.methods.StoreReplay takes the store's settings), and, for an ``export`` a fit chose it
    for (configs/adapt.yaml's ``export.used_order: auto``), the validation figures it was chosen by (its
    training.json ``used_order_chosen``). The export's config.json must name the same ordering as the loaded store:
    else the curve would score something the export does not serve."""
    order, lexical = retriever.store.config.used_order or "off", float(retriever.store.config.lexical)
    record: dict = {"used_order": order, "lexical": lexical, "validation": None}
    if export is None:
        return record
    store = json.loads((export / "config.json").read_text(encoding="utf-8")).get("store", {})
    written = store.get("used_order")
    if (written or "off") != order:
        raise SAMFileError(f"{export / 'config.json'}: store.used_order {written!r}, but the loaded store searches "
                           f"with {order!r}; the curve scores what the export serves: re-export the run")
    if float(store.get("lexical", 0.0)) != lexical:
        raise SAMFileError(f"{export / 'config.json'}: store.lexical {store.get('lexical')!r}, but the loaded store "
                           f"searches with {lexical:g}; the curve scores what the export serves: re-export the run")
    training = export / "training.json"
    chosen = json.loads(training.read_text(encoding="utf-8")).get("used_order_chosen") if training.is_file() else None
    if chosen:
        weight = chosen.get("lexical")  # a joint choice (choose_order's grid): the orderings at the chosen weight
        record["validation"] = {r["used_order"]: round(r["mrr"], 4) for r in chosen["table"]
                                if r.get("lexical", weight) == weight}
        record["validation_decisions"] = chosen.get("log", {}).get("decision_points")
    return record


def ordering_alone(retriever, export: Path):
    """``retriever`` (an export whose fit chose the lexical weight with the ordering: ``--lexical auto``) as the
    ordering-alone choice would have exported the same network: the ordering its fit's record picks at the store's
    own weight (sam_model.choose_order.order_alone), so a paired difference is the export's choice alone, not a
    second training's noise. None where the fit recorded no choice."""
    import dataclasses

    from sam_model.choose_order import order_alone
    from sam_model.retriever import SAMRetriever

    training = export / "training.json"
    record = json.loads(training.read_text(encoding="utf-8")).get("used_order_chosen") if training.is_file() else None
    if not record:
        return None
    try:
        row = order_alone(record)
    except SAMFileError as exc:  # the file it was read from, in the one line
        raise SAMFileError(f"{training}: used_order_chosen: {exc}") from None
    config = dataclasses.replace(retriever.store.config, used_order=None if row["used_order"] == "off"
                                 else row["used_order"], lexical=record.get("lexical_own", row["lexical"]))
    return SAMRetriever(retriever.net, config)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.adapt_curve"),
                                description="Adapt a general retriever to 0, 10, 30, 60 and all conversations of a "
                                            "domain (configs/adapt.yaml), once per training seed, and evaluate each "
                                            "on the domain's held-out test split beside the untrained baselines, "
                                            "each as its export serves it (its store ordering); prints one table "
                                            "(also OUT/curve.md, OUT/curve.json) and draws it (OUT/curve.png).",
                                formatter_class=DefaultsHelp)
    p.add_argument("--init", default="sam-general",
                   help="the general model to adapt: a packaged name or an export folder (default sam-general)")
    p.add_argument("--data", required=True, help="the domain's tool-call transcript file (split by group)")
    p.add_argument("--sizes", default="0,10,30,60,all",
                   help="comma-separated conversation counts; 0 = the general model, all = the whole train split")
    p.add_argument("--out", default="runs/curve", help="output folder (evaluation, logs, the table, curve.png)")
    p.add_argument("--name", default="curve", help="run-name prefix of the adaptation runs (checkpoints/NAME-nN-sS)")
    p.add_argument("--seeds", default="0",
                   help="comma-separated training seeds: each point is adapted once per seed and reported as the "
                        "mean with a 95 %% t-interval over the seeds and conversations (one seed: over the "
                        "conversations); the first also seeds the evaluation's tie-break (default 0)")
    p.add_argument("--lexical", default=None, metavar="auto|W",
                   help="each fit's export.lexical: auto (the store's lexical weight chosen with the ordering on the "
                        "run's held-out conversations; each adapted export is also scored as the ordering alone "
                        "exports it, rows n=N-sS-order, for python -m sam_model.bench.paired) or a weight; "
                        "default: unset, adapt.yaml's")
    tensorboard_log.add_option(p, "the curve (MRR, Recall@5 and the best baseline's MRR by point) and curve.png")
    return p


def main(argv: list[str] | None = None) -> int:
    from sam_model.bench.chunk_table import per_query
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data
    from sam_model.evaluation.methods import BASELINES
    from sam_model.evaluation.run import evaluate
    from sam_model.retriever import SAMRetriever

    p = build_parser()
    args = p.parse_args(argv)
    try:
        sizes = [None if s.strip() == "all" else int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes: integers or 'all', got {args.sizes!r}")
    if not sizes or any(s is not None and s < 0 for s in sizes):
        p.error(f"--sizes: counts >= 0 or 'all', got {args.sizes!r}")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        p.error(f"--seeds: comma-separated integers, got {args.seeds!r}")
    if not seeds or len(set(seeds)) != len(seeds):
        p.error(f"--seeds: one or more distinct integers, got {args.seeds!r}")
    if any(not 0 <= s <= MAX_SEED for s in seeds):  # else the fit of that seed fails, after the points before it
        p.error(f"--seeds: each from 0 to {MAX_SEED} (the training seed's range), got {args.seeds!r}")
    if args.lexical is not None:  # each fit's export.lexical: a value it refuses fails now, not at the first fit
        from sam_model.training.export_order import lexical_choice

        try:
            lexical_choice(args.lexical, "auto")  # adapt.yaml's export.used_order
        except SAMFileError as exc:
            p.error(f"--lexical: {str(exc).split(': ', 1)[-1]}")
    if why := tensorboard_log.problem(args.tensorboard):  # before hours of adaptation, not after
        p.error(why)
    data = load_eval_data(args.data, "episode", None, seeds[0], False, SourceOptions(split="test"))
    models, seconds, orders, points = {}, {}, {}, {}
    for n in sizes:
        label = "all" if n is None else str(n)
        if n == 0:  # the general model as it ships: one model, no seed
            points[label] = ["n=0"]
            models["n=0"], seconds["n=0"] = SAMRetriever.load(args.init), 0.0
            orders["n=0"] = served_order(models["n=0"])
            continue
        points[label] = []
        for seed in seeds:
            name = f"n={label}" if len(seeds) == 1 else f"n={label}-s{seed}"  # one seed: the names runs had before
            export, seconds[name] = adapt(args.init, args.data, n, seed, args)
            models[name] = SAMRetriever.load(export)
            orders[name] = served_order(models[name], export)
            points[label].append(name)
            if args.lexical == "auto" and (alone := ordering_alone(models[name], export)) is not None:
                models[f"{name}-order"] = alone  # the pair: the same network, the ordering chosen alone
    # each model's plain row searches its store as loaded, so with the ordering its export chose (one code path)
    report = evaluate(data, Path(args.out) / "eval", None, baselines=BASELINES, compare=models, latency_queries=1,
                      text_cache=TEXT_CACHE, seed=seeds[0], quiet=True)
    keys, scores = per_query(Path(args.out) / "eval")
    print(write_curve(report, scores, [episode for episode, _ in keys], points, seconds, orders, Path(args.out),
                      args.tensorboard))
    return 0


def write_curve(report: dict, scores: dict[str, dict[str, list[float]]], groups: list[str],
                points: dict[str, list[str]], seconds: dict[str, float], orders: dict[str, dict], out: Path,
                tensorboard: str | None = None) -> str:
    """OUT/curve.json, the table OUT/curve.md (returned) and the curve OUT/curve.png (and to the TensorBoard log
    ``tensorboard``) from the evaluation's ``report`` and its per-decision ``scores`` (method -> "rr" or "recall@5" -> values,
    ``groups`` each decision's conversation) of the models of each point (``points``: "0", "10", ..., "all" -> its
    methods, one per seed), with their adaptation ``seconds`` and the ordering each served (``orders``,
    :func:`served_order`). A point's figure is the mean over its seeds with a 95 % interval (bench.chunk_table's:
    over the conversations for one run, a t-interval over the seeds and conversations for several)."""
    import numpy as np

    from sam_model.bench.chunk_table import fmt, interval, minus
    from sam_model.evaluation.methods import BASELINES

    methods = report["methods"]
    best = max(BASELINES, key=lambda b: methods[b]["mrr"])
    base = [np.asarray(scores[best]["rr"])]  # per decision: the reciprocal rank
    rows = []
    for label, names in points.items():
        runs = {k: [np.asarray(scores[n][s]) for n in names] for k, s in (("mrr", "rr"), ("recall@5", "recall@5"))}
        mrr, recall = interval(runs["mrr"], groups), interval(runs["recall@5"], groups)
        rows.append({"conversations": label, "methods": names, "mrr": mrr[0], "mrr_ci": list(mrr[1:]),
                     "mrr_per_seed": [float(r.mean()) for r in runs["mrr"]], "recall@5": recall[0],
                     "recall@5_ci": list(recall[1:]),
                     "minus_best_baseline": list(interval(minus(runs["mrr"], base, label), groups)),
                     "used_order": [orders[n]["used_order"] for n in names],
                     "lexical": [orders[n].get("lexical", 0.0) for n in names],
                     "validation": [orders[n].get("validation") for n in names],
                     "validation_decisions": [orders[n].get("validation_decisions") for n in names],
                     "train_seconds": round(float(np.mean([seconds[n] for n in names])), 1),
                     "train_seconds_per_seed": [round(seconds[n], 1) for n in names]})
    seeds = max(len(names) for names in points.values())
    lines = [f"held-out decisions: {report['n_queries']}; best untrained baseline: {best} "
             f"(MRR {methods[best]['mrr']:.3f}); {seeds} seed(s) a point: means, 95 % intervals over the "
             f"{'seeds and ' if seeds > 1 else ''}conversations", "",
             f"| conversations | MRR [95 % CI] (per seed) | Recall@5 [95 % CI] | − {best} [95 % CI] | "
             "ordering served (per seed) | adaptation time |", "|---|---|---|---|---|---|"]
    for r in rows:
        per_seed = " / ".join(f"{m:.3f}" for m in r["mrr_per_seed"]) if len(r["methods"]) > 1 else ""
        lines.append(f"| {r['conversations']} | {fmt((r['mrr'], *r['mrr_ci']))}"
                     f"{f' ({per_seed})' if per_seed else ''} | {fmt((r['recall@5'], *r['recall@5_ci']))} | "
                     f"{fmt(tuple(r['minus_best_baseline']), True)} | {served(r)} | "
                     f"{r['train_seconds'] / 60:.1f} min |")
    atomic_write_text(out / "curve.json", json.dumps({"best_baseline": best, "baseline_mrr": methods[best]["mrr"],
                                                      "decisions": report["n_queries"], "seeds": seeds,
                                                      "rows": rows}, indent=2))
    atomic_write_text(out / "curve.md", "\n".join(lines) + "\n")
    plot(rows, best, methods[best]["mrr"], out / "curve.png", tensorboard)
    return "\n".join(lines)


def served(row: dict) -> str:
    """The table's "ordering served" cell: each seed's ordering, with its lexical weight where one is not 0."""
    return " / ".join(o + (f" (lexical {w:g})" if w else "")
                      for o, w in zip(row["used_order"], row.get("lexical") or [0.0] * len(row["used_order"])))


def plot(rows: list[dict], baseline: str, baseline_mrr: float, path: Path,
         tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """The learning curve: held-out MRR (the mean over seeds, its 95 % interval as error bars) and Recall@5 after
    each number of conversations (evenly spaced, "all" last), the best untrained baseline's MRR as a line; also to
    the TensorBoard log ``tensorboard``, x the point's position (its step). Returns the lines drawn, by label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    x = range(len(rows))
    lines = {"MRR": [(i, r["mrr"]) for i, r in zip(x, rows)],
             "Recall@5": [(i, r["recall@5"]) for i, r in zip(x, rows)],
             "best untrained baseline MRR": [(i, baseline_mrr) for i in x]}
    below = [r["mrr"] - r["mrr_ci"][0] if r.get("mrr_ci") else 0.0 for r in rows]
    above = [r["mrr_ci"][1] - r["mrr"] if r.get("mrr_ci") else 0.0 for r in rows]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.errorbar(x, [r["mrr"] for r in rows], yerr=[below, above], marker="o", capsize=3,
                label="MRR (95 % interval)")
    ax.plot(x, [r["recall@5"] for r in rows], marker="s", ls="--", label="Recall@5")
    ax.axhline(baseline_mrr, color="0.5", ls=":", label=f"best untrained baseline ({baseline}), MRR")
    ax.set_xticks(list(x), [r["conversations"] for r in rows])
    ax.set_xlabel("conversations adapted on (0: the general model)")
    ax.set_ylabel("held-out score")
    ax.set_ylim(0, 1)
    ax.set_title("Adaptation learning curve")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    save_figure(fig, path)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, "curve", lines, path)
    return lines


if __name__ == "__main__":
    raise SystemExit(run_cli(main, None))
