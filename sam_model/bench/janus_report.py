"""The Janus benchmarks' tables and plot: what a run prints and draws from its per-seed results.

Kept apart from the runners (:mod:`sam_model.bench.janus_head`, :mod:`sam_model.bench.janus_bank`) so that the
report can be redrawn from a saved ``janus.json`` without running anything. With ``tensorboard`` (the benchmark's
``--tensorboard LOGDIR``) a plot also logs its curves as scalars (step: the stream's t) and its PNG as an image.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sam_model import tensorboard_log
from sam_model.janus.stats import fmt_ci, fmt_diff


def _curves(ax, results: dict[str, dict]) -> dict[str, list[tuple[int, float]]]:
    """One accuracy curve per policy (ablations dashed, MMT bold), labelled with its comparisons; returns them by
    policy as (t, accuracy %)."""
    lines = {}
    for name, r in results.items():
        lines[name] = [(p["t"], 100 * p["accuracy"]) for p in r["accuracy_curve"]]
        ts, acc = zip(*lines[name]) if lines[name] else ((), ())
        style = "--" if name.startswith("mmt-no-") else "-"
        ax.plot(ts, acc, style, label=f"{name} ({r['comparisons']} comparisons)", lw=2 if name == "mmt" else 1.2)
    return lines


def _plot(results: dict[str, dict], path: Path, tensorboard: str | None, marks: Callable[[Any], None],
          xlabel: str, ylabel: str, title: str) -> dict[str, list[tuple[int, float]]]:
    """One seed's figure, drawn alike for both streams: the policies' curves (:func:`_curves`), then ``marks(ax)``
    (what the stream marks along t: domains, faults), the labels, the legend beside the axes, the PNG written
    atomically, and the curves and PNG logged to TensorBoard. Returns the curves by policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    fig, ax = plt.subplots(figsize=(11, 4.8))
    lines = _curves(ax, results)
    marks(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, "janus_accuracy", lines, path)
    return lines


def plot_head(per_seed: dict[int, dict[str, dict]], path: Path,
              tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """The head stream's dev accuracy along the stream, one line per policy, on the first seed, domains marked;
    also to the TensorBoard log ``tensorboard``. Returns the lines drawn, by policy."""
    seed = next(iter(per_seed))
    results = per_seed[seed]
    doms = next(iter(results.values()))["domain_at"]

    def domains(ax) -> None:  # after the curves: a domain's name sits at the bottom of their y range
        for i in range(1, len(doms)):
            if doms[i] != doms[i - 1]:
                ax.axvline(i + 0.5, color="0.85", lw=0.8, zorder=0)
        starts = [0] + [i for i in range(1, len(doms)) if doms[i] != doms[i - 1]]
        for a, b in zip(starts, starts[1:] + [len(doms)]):
            ax.text((a + b) / 2 + 0.5, ax.get_ylim()[0], doms[a][:6], ha="center", va="bottom", fontsize=7,
                    color="0.4", rotation=90)

    return _plot(results, path, tensorboard, domains, "update step t (stream ordered by service domain)",
                 "dev top-1 accuracy, all domains (%)", f"Janus on the SGD domain stream (seed {seed})")


def print_head_table(console, summary: dict[str, dict], tg: dict, noisy: bool = False, stats: dict | None = None,
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


def plot_bank(report: dict, path: Path, tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """The bank stream's held-out recall along the stream, one line per policy, on the report's first seed, with
    its fault batches marked: where a policy falls (a deleting prune it let through) is what the table's final
    figure cannot show. Also to the TensorBoard log ``tensorboard``; returns the lines drawn, by policy."""
    seed = next(iter(report["per_seed"]))

    def faults(ax) -> None:
        for t, fault in sorted((int(t), f) for t, f in report.get("faults", {}).get(seed, {}).items()):
            ax.axvline(t, color={"prune": "tab:red", "misread": "tab:orange"}.get(fault, "0.6"), lw=0.8, alpha=0.5,
                       zorder=0)
            ax.text(t, 1.0, fault, transform=ax.get_xaxis_transform(), rotation=90, fontsize=7, color="0.4",
                    ha="right", va="top")

    return _plot(report["per_seed"][seed], path, tensorboard, faults, "batch t (faults marked)",
                 "held-out recall (%)", f"Janus on the memory-bank stream (seed {seed})")


def share(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def bank_table(report: dict) -> str:
    """The bank benchmark's tables in markdown: policies with intervals and costs, paired differences, the
    regime."""
    per_seed = report["per_seed"]
    seeds = list(per_seed)
    lines = [f"Held-out recall accuracy, {len(seeds)} seeds ({', '.join(seeds)}); mean [95% bootstrap interval]",
             "", "| policy | gate | final acc. % | old / new dialogues % | mean over stream % | comparisons | "
             "faulty deployed | tasks scored (φ) | cost vs always |", "|---|---|---|---|---|---|---|---|---|"]
    for name, st in report["statistics"].items():
        rs = [per_seed[s][name] for s in seeds]
        age = {k: 100 * np.mean([r["accuracy_by_age"].get(k, np.nan) for r in rs]) for k in ("old", "new")}
        cost = st.get("cost_vs_always")
        lines.append(f"| {name} | {rs[0]['gate']} | {fmt_ci((st['mean'], *st['ci']))} | {age['old']:.1f} / "
                     f"{age['new']:.1f} | {100 * np.mean([r['mean_accuracy'] for r in rs]):.1f} | "
                     f"{np.mean([r['comparisons'] for r in rs]):.1f} / {rs[0]['steps']} | "
                     f"{np.mean([r['faulty']['deployed'] for r in rs]):.1f} / {rs[0]['faulty']['n']} | "
                     f"{st['total_tasks']:.0f} ({st['phi_tasks']:.0f}) | "
                     f"{'' if cost is None else f'{100 * cost:.0f}%'} |")
    lines += ["", "| paired difference (points) | mean [95% interval] | verdict |", "|---|---|---|"]
    lines += [f"| {p['a']} − {p['b']} | {fmt_diff((p['mean'], *p['ci']))} | {p['verdict']} |" for p in report["paired"]]
    if report.get("regime"):
        lines += ["", "| always-trigger candidates | judged | win on E_t | tie | raise held-out acc. |",
                  "|---|---|---|---|---|"]
        orc = report.get("oracle_regime", {})
        for label, r in report["regime"].items():
            o = orc.get(label, {})
            lines.append(f"| {label} | {r['candidates']} | {share(r['won_share'])} | {share(r['tied_share'])} | "
                         f"{share(o.get('helps_share'))} |")
    if report.get("targets"):
        lines += ["", f"targets: {json.dumps(report['targets'])}"]
    return "\n".join(lines)
