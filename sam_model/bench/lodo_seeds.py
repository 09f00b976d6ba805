"""Leave-one-domain-out over seeds: one variant against a reference and the untrained baselines, every figure a
mean over training seeds with a 95 % interval that holds both the seed-to-seed and the decision-to-decision
spread.

    python -m sam_model.bench.lodo --out runs/lodo-s0 --variants fusion,plots --seed 0     # and --seed 1, 2
    python -m sam_model.bench.lodo_seeds runs/lodo-s0 runs/lodo-s1 runs/lodo-s2 --variant plots --reference fusion
    python -m sam_model.bench.lodo_seeds runs/new-s0 runs/new-s1 --variant new --reference old \
        --reference-from runs/old-s0 runs/old-s1     # the reference from an earlier run of the same seeds

One ``bench.lodo`` run is one training seed, and its intervals are over decisions only: two trainings of the same
recipe differ by about as much as a change does (±0.04 MRR on the 127 airline decisions). Here each run folder
is a seed, and the interval is a Student-t interval over the seeds (sam_model.bench.seeds): the variance of the
seeds' means, plus, where every seed ranked the same decisions (airline's and coding's fixed test splits), the
variance of those decisions' mean with the conversations as units; every difference is taken decision by decision
within a seed, so it stays paired. The average over domains is the mean of the domains' estimates (their variances
over the number of domains squared), so its interval is that of the figure the target names (issue 21: SAM − the
best untrained baseline, averaged over the left-out domains). Each seed's best baseline is the one its own run
picked. (Until stop 50's review the interval was a two-level percentile bootstrap, whose seed part is 2.7 times too
narrow with three seeds.) With ``--out`` the table is also drawn, ``lodo_seeds.png``: per domain and on average,
the variant's and the reference's difference from the best baseline with its interval (:func:`plot`, redrawable
from a saved ``lodo_seeds.json``); ``--tensorboard LOGDIR`` logs those figures and the PNG.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sam_model import tensorboard_log
from sam_model.bench.chunk_table import per_query
from sam_model.bench.seeds import Estimate, average, over_seeds
from sam_model.io import atomic_write_text, cli_name, given_twice

Seed = dict[str, np.ndarray]  # variant, reference, baseline: one reciprocal rank per decision


def load(runs: list[Path], variant: str, reference: str, reference_runs: list[Path] | None = None
         ) -> tuple[dict[str, list[Seed]], dict[str, list[str] | None]]:
    """Per domain, per seed (run): reciprocal ranks of the variant, the reference and the run's best baseline;
    and per domain, where every seed ranked the same decisions, each decision's conversation (else None).
    ``reference_runs``: the reference read from these runs instead, the i-th for the i-th of ``runs`` (the same
    seed of an earlier measurement), each domain's decisions checked to be the same, in the same order."""
    if reference_runs is not None and len(reference_runs) != len(runs):
        raise SystemExit(f"error: {len(runs)} runs but {len(reference_runs)} --reference-from runs; give one for each "
                         "run, seed by seed")
    out: dict[str, list[Seed]] = {}
    keys: dict[str, list] = {}
    for i, run in enumerate(runs):
        rows = json.loads((run / "lodo.json").read_text(encoding="utf-8"))
        for domain in dict.fromkeys(r["domain"] for r in rows):
            best = next(r["best_baseline"] for r in rows if r["domain"] == domain)
            decisions, methods = per_query(run / domain)
            keys.setdefault(domain, []).append(decisions)
            ref = methods
            if reference_runs is not None:
                other = reference_runs[i] / domain
                if not (other / "per_query.jsonl").is_file():
                    raise SystemExit(f"error: {other / 'per_query.jsonl'} not found: {reference_runs[i]} did not "
                                     f"leave out {domain}; give the reference's run of the same domains")
                ref_decisions, ref = per_query(other)
                if ref_decisions != decisions:
                    raise SystemExit(f"error: {other} and {run / domain} ranked different "
                                     "decisions; give the reference's run of the same seed, data and --sgd-queries")
                seed, ref_seed = run_seed(run / domain), run_seed(other)
                if None not in (seed, ref_seed) and seed != ref_seed:
                    raise SystemExit(f"error: {run / domain} is seed {seed} but {other} is seed {ref_seed}; give "
                                     "--reference-from's runs in the order of the runs, seed by seed")
            for name, have, where in ((variant, methods, run), (reference, ref, (reference_runs or runs)[i]),
                                      (best, methods, run)):
                if name not in have:
                    raise SystemExit(f"error: {where / domain / 'per_query.jsonl'} has no method {name!r} (it has: "
                                     f"{', '.join(have)}); run bench.lodo with --variants {reference},{variant}")
            out.setdefault(domain, []).append({"variant": np.asarray(methods[variant]["rr"]),
                                               "reference": np.asarray(ref[reference]["rr"]),
                                               "baseline": np.asarray(methods[best]["rr"])})
    for domain, seeds in out.items():
        if len(seeds) != len(runs):
            raise SystemExit(f"error: domain {domain} is in {len(seeds)} of the {len(runs)} runs; give runs that "
                             "left out the same domains")
    return out, {d: [e for e, _ in ks[0]] if all(k == ks[0] for k in ks) else None for d, ks in keys.items()}


def run_seed(folder: Path) -> int | None:
    """The seed an evaluation folder's report.json records (bench.lodo's --seed; None where it holds none). Why:
    --reference-from pairs by seed, and on a fixed test split (coding's, airline's) the decisions alone cannot tell
    a reference run of another seed from the same seed's."""
    path = folder / "report.json"
    return json.loads(path.read_text(encoding="utf-8")).get("seed") if path.is_file() else None


PAIRS = {"variant - baseline": ("variant", "baseline"), "variant - reference": ("variant", "reference"),
         "reference - baseline": ("reference", "baseline")}


def summarise(data: dict[str, list[Seed]], shared: dict[str, list[str] | None] | None = None) -> dict[str, dict]:
    """Per domain and on average: each method's mean MRR over seeds, variant − baseline, variant − reference,
    reference − baseline, each (mean, low, high); and the per-seed MRRs. ``shared``: per domain, the conversation
    of each decision where the seeds ranked the same decisions, else None (sam_model.bench.seeds.over_seeds)."""
    out: dict[str, dict] = {}
    diffs_by_domain: list[dict[str, Estimate]] = []
    for domain, seeds in data.items():
        groups = (shared or {}).get(domain)
        est = {m: over_seeds([s[m] for s in seeds], groups, groups is not None) for m in seeds[0]}
        diffs = {name: over_seeds([s[a] - s[b] for s in seeds], groups, groups is not None)
                 for name, (a, b) in PAIRS.items()}
        out[domain] = {"seeds": len(seeds), "decisions": [len(s["variant"]) for s in seeds],
                       "per_seed": {m: [round(float(s[m].mean()), 4) for s in seeds] for m in est},
                       **{m: e.ci() for m, e in est.items()}, **{n: e.ci() for n, e in diffs.items()}}
        diffs_by_domain.append(diffs)
    out["average"] = {n: average([d[n] for d in diffs_by_domain]).ci() for n in PAIRS}
    return out


def table(summary: dict[str, dict], variant: str, reference: str) -> str:
    def f(c) -> str:
        return f"{c[0]:+.3f} [{c[1]:+.3f}, {c[2]:+.3f}]"

    lines = [f"| left out | seeds | {variant} MRR (per seed) | {reference} MRR (per seed) | best baseline MRR | "
             f"{variant} − best baseline | {reference} − best baseline | {variant} − {reference} |",
             "|---|---|---|---|---|---|---|---|"]
    for d, s in summary.items():
        if d == "average":
            continue
        per = {m: " / ".join(f"{v:.3f}" for v in s["per_seed"][m]) for m in ("variant", "reference")}
        lines.append(f"| {d} | {s['seeds']} | {s['variant'][0]:.3f} ({per['variant']}) | {s['reference'][0]:.3f} "
                     f"({per['reference']}) | {s['baseline'][0]:.3f} | {f(s['variant - baseline'])} | "
                     f"{f(s['reference - baseline'])} | {f(s['variant - reference'])} |")
    a = summary["average"]
    lines.append(f"| **average** | | | | | **{f(a['variant - baseline'])}** | {f(a['reference - baseline'])} | "
                 f"{f(a['variant - reference'])} |")
    return "\n".join(lines)


def plot(summary: dict[str, dict], path: Path, variant: str = "variant", reference: str = "reference",
         tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """lodo_seeds.png from :func:`summarise`'s figures (``lodo_seeds.json``, as saved; it does not hold the two
    names, given here): per left-out domain and on average, the variant's and the reference's MRR difference from
    the best untrained baseline with its 95 % interval over seeds."""
    from sam_model.bench.lodo import plot_differences

    groups = {d: {variant: s["variant - baseline"], reference: s["reference - baseline"]} for d, s in summary.items()}
    ticks = {d: f"{d} ({s['seeds']} seeds)\nbaseline MRR {s['baseline'][0]:.3f}" for d, s in summary.items()
             if d != "average"}
    ticks["average"] = "average over\nthe domains"
    return plot_differences(groups, ticks, path, f"Leave one domain out, mean over seeds: {variant} and the "
                                                 f"reference, {reference}",
                            "lodo_seeds", tensorboard)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.lodo_seeds"), description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="bench.lodo --out folders, one per training seed")
    ap.add_argument("--variant", required=True, help="the variant under test (a bench.lodo --variants name)")
    ap.add_argument("--reference", required=True, help="the variant it is compared with, trained in the same runs")
    ap.add_argument("--reference-from", nargs="+", type=Path, default=None, metavar="RUN",
                    help="read the reference from these bench.lodo --out folders instead, one per run in the same seed "
                         "order (an earlier measurement of the same seeds and decisions: still paired)")
    ap.add_argument("--out", type=Path, default=None,
                    help="also write the table, its figures and its plot here (.md, .json, .png; default: none)")
    tensorboard_log.add_option(ap, "lodo_seeds.png's figures (the differences from the best baseline and their "
                                   "intervals, per domain) and the PNG, with --out")
    args = ap.parse_args(argv)
    if (twice := given_twice(args.runs)) is not None:  # one seed counted twice: an interval too narrow
        ap.error(f"{twice} is given twice; give each bench.lodo --out folder once (one per training seed)")
    for run in args.runs:
        if not (run / "lodo.json").is_file():
            ap.error(f"{run / 'lodo.json'} not found: give bench.lodo --out folders")
    if args.tensorboard and not args.out:  # the log's image is the PNG --out writes
        ap.error("--tensorboard needs --out (the folder lodo_seeds.png is drawn into)")
    if why := tensorboard_log.problem(args.tensorboard):
        ap.error(why)
    for run in args.reference_from or ():
        if not run.is_dir():
            ap.error(f"--reference-from {run}: not a folder; give bench.lodo --out folders")
    if args.reference_from and (twice := given_twice(args.reference_from)) is not None:  # one seed's reference twice
        ap.error(f"--reference-from {twice} is given twice; give each reference run once, seed by seed")
    data, shared = load(args.runs, args.variant, args.reference, args.reference_from)
    summary = summarise(data, shared)
    text = table(summary, args.variant, args.reference)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "lodo_seeds.md", text + "\n")
        atomic_write_text(args.out / "lodo_seeds.json", json.dumps(summary, indent=1))
        plot(summary, args.out / "lodo_seeds.png", args.variant, args.reference, args.tensorboard)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
