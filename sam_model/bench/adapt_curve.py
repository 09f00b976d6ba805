"""Learning curve of adaptation: held-out MRR of a domain after adapting a general model to 0, 10, 30, 60 and all
of its conversations, with the training time.

Each point is the README recipe as a user runs it, ``train.py fit --config configs/adapt.yaml --data.train
[LOGS]`` (from ``--init``, the general model, with its vocabularies extended), on the first N conversations of
the domain's fixed train split (``data.max_dialogues``); 0 is the general model itself. Every point and every
untrained baseline is evaluated by ``evaluate.py``'s one code path on the same held-out decisions (the fixed
test split)::

    python -m sam_model.bench.adapt_curve --init sam-general \\
        --data ../shared/data/coding-agents/autocoderover-gpt4-swebench-lite-train.chat.jsonl.gz --out runs/curve

It prints the table and writes it to ``OUT/curve.md`` and ``OUT/curve.json``, and the curve to ``OUT/curve.png`` (MRR and
Recall@5 against the conversations, the best untrained baseline's MRR as a line); ``--tensorboard LOGDIR`` logs the
same lines as scalars (step: the point's position, 0 = the general model) and the PNG as an image.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sam_model import tensorboard_log
from sam_model.io import DefaultsHelp, SAMFileError, atomic_write_text, cli_name, run_cli

TEXT_CACHE = "~/.cache/sam_model/text"  # the frozen-BERT vector cache training fills (evaluate.py's default)


def adapt(init: str, data: str, n: int | None, args) -> tuple[Path, float]:
    """Adapt ``init`` to the first ``n`` (None: all) train-split conversations of ``data``: (export, seconds)."""
    run = f"{args.name}-n{'all' if n is None else n}-s{args.seed}"
    from sam_model.bench.lodo import fit

    cmd = ["--config", "configs/adapt.yaml", "--run", run, "--seed_everything", str(args.seed),
           "--model.init_from", init, "--data.train", json.dumps([data]), "--data.transcript_split", "train"]
    if n is not None:
        cmd += ["--data.max_dialogues", str(n)]
    print(f"[curve] adapting {init} to {'all' if n is None else n} conversations", flush=True)
    code, seconds, log = fit(cmd, Path(args.out) / "logs" / f"{run}.log")
    export = Path("checkpoints") / run / "export"
    if code != 0 or not export.is_dir():
        raise SAMFileError(f"adaptation {run} failed (exit {code}); see {log}")
    return export, seconds


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.adapt_curve"),
                                description="Adapt a general retriever to 0, 10, 30, 60 and all conversations of a "
                                            "domain (configs/adapt.yaml) and evaluate each on the domain's held-out "
                                            "test split beside the untrained baselines; prints one table (also "
                                            "OUT/curve.md, OUT/curve.json) and draws it (OUT/curve.png).",
                                formatter_class=DefaultsHelp)
    p.add_argument("--init", default="sam-general",
                   help="the general model to adapt: a packaged name or an export folder (default sam-general)")
    p.add_argument("--data", required=True, help="the domain's tool-call transcript file (split by group)")
    p.add_argument("--sizes", default="0,10,30,60,all",
                   help="comma-separated conversation counts; 0 = the general model, all = the whole train split")
    p.add_argument("--out", default="runs/curve", help="output folder (evaluation, logs, the table, curve.png)")
    p.add_argument("--name", default="curve", help="run-name prefix of the adaptation runs (checkpoints/NAME-nN-sS)")
    p.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    tensorboard_log.add_option(p, "the curve (MRR, Recall@5 and the best baseline's MRR by point) and curve.png")
    return p


def main(argv: list[str] | None = None) -> int:
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
    if why := tensorboard_log.problem(args.tensorboard):  # before hours of adaptation, not after
        p.error(why)
    data = load_eval_data(args.data, "episode", None, args.seed, False, SourceOptions(split="test"))
    models, seconds = {}, {}
    for n in sizes:
        name = f"n={'all' if n is None else n}"
        if n == 0:
            models[name], seconds[name] = SAMRetriever.load(args.init), 0.0
        else:
            export, seconds[name] = adapt(args.init, args.data, n, args)
            models[name] = SAMRetriever.load(export)
    report = evaluate(data, Path(args.out) / "eval", None, baselines=BASELINES, compare=models, latency_queries=1, text_cache=TEXT_CACHE,
                      seed=args.seed, quiet=True)
    print(write_curve(report, list(models), seconds, Path(args.out), args.tensorboard))
    return 0


def write_curve(report: dict, names: list[str], seconds: dict[str, float], out: Path,
                tensorboard: str | None = None) -> str:
    """OUT/curve.json, the table OUT/curve.md (returned) and the curve OUT/curve.png (and to the TensorBoard log
    ``tensorboard``) from the evaluation's ``report`` of the models ``names`` ("n=10", ..., "n=all")."""
    from sam_model.evaluation.methods import BASELINES

    methods = report["methods"]
    best = max(BASELINES, key=lambda b: methods[b]["mrr"])
    rows = [{"conversations": name[2:], "mrr": methods[name]["mrr"], "recall@5": methods[name]["recall@5"],
             "train_seconds": round(seconds[name], 1)} for name in names]
    lines = [f"held-out decisions: {report['n_queries']}; best untrained baseline: {best} "
             f"(MRR {methods[best]['mrr']:.3f})", "",
             "| conversations | MRR | Recall@5 | adaptation time |", "|---|---|---|---|"]
    lines += [f"| {r['conversations']} | {r['mrr']:.3f} | {r['recall@5']:.3f} | "
              f"{r['train_seconds'] / 60:.1f} min |" for r in rows]
    atomic_write_text(out / "curve.json", json.dumps({"best_baseline": best, "baseline_mrr": methods[best]["mrr"],
                                                      "decisions": report["n_queries"], "rows": rows}, indent=2))
    atomic_write_text(out / "curve.md", "\n".join(lines) + "\n")
    plot(rows, best, methods[best]["mrr"], out / "curve.png", tensorboard)
    return "\n".join(lines)


def plot(rows: list[dict], baseline: str, baseline_mrr: float, path: Path,
         tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """The learning curve: held-out MRR and Recall@5 after each number of conversations (evenly spaced, "all"
    last), the best untrained baseline's MRR as a line; also to the TensorBoard log ``tensorboard``, x the point's
    position (its step). Returns the lines drawn, by label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    x = range(len(rows))
    lines = {"MRR": [(i, r["mrr"]) for i, r in zip(x, rows)],
             "Recall@5": [(i, r["recall@5"]) for i, r in zip(x, rows)],
             "best untrained baseline MRR": [(i, baseline_mrr) for i in x]}
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(x, [r["mrr"] for r in rows], marker="o", label="MRR")
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
