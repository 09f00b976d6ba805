"""The chunking table: every method of two evaluations of one log, whole memories against chunks.

Reads the ``per_query.jsonl`` of an ``evaluate.py`` run without ``--chunking`` and of one with it (the same
log and split, so the same decision points in the same order) and prints, per method, MRR and Recall@5 with
95 % bootstrap intervals over the decisions, and the paired difference chunked − whole of each (inside the
interval of 0 = no difference). A method run only on one side gets its figures and no difference. With
``--against NAME`` a second table gives, on each side, every method's paired difference against the method
``NAME`` (say two models of one evaluation: ``--compare`` runs them on the same decisions). ``--mean
NAME=A,B,C`` adds a method whose value at each decision is the mean of methods A, B, C (runs of one recipe with
other seeds), so a recipe is compared over its seeds, still decision by decision; its intervals are Student-t intervals over
the seeds and the conversations (sam_model.bench.seeds.over_seeds), and a difference between two such
recipes pairs their i-th seeds, as ``bench.paired A0,A1,A2 B0,B1,B2`` does. (Until 2026-12-05 a mean's
interval was drawn over the decisions alone, as if its seeds were one run: 2.6 times narrower on the coding
seeds' table, README "Why MRR stays under 0.93"; until stop 50's review it was a two-level percentile bootstrap, whose
seed part is 2.7 times too narrow with three seeds.) A single run's interval resamples its conversations, not its
decisions (sam_model.janus.stats.bootstrap_ci). ::

    python -m sam_model.bench.chunk_table runs/eval/coding-off runs/eval/coding-on [--against coding]
        [--mean coding3=coding,coding-s1,coding-s2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sam_model.bench.seeds import over_seeds
from sam_model.io import RawDefaultsHelp
from sam_model.janus.stats import bootstrap_ci

METRICS = (("rr", "MRR"), ("recall@5", "Recall@5"))


Means = dict[str, list[str]]


def per_query(folder: Path) -> tuple[list[tuple[str, int]], dict[str, dict[str, list[float]]]]:
    """The decisions (episode, step) of an evaluation and, per method and metric, one value per decision."""
    rows = [json.loads(line) for line in (folder / "per_query.jsonl").read_text(encoding="utf-8").splitlines()]
    keys = [(r["episode_id"], r["step"]) for r in rows]
    out: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        for name, m in r["methods"].items():
            for key, _ in METRICS:
                out.setdefault(name, {}).setdefault(key, []).append(float(m[key]))
    return keys, out


Seeds = dict[str, dict[str, list[np.ndarray]]]  # method -> metric -> one array per seed (one for a plain method)


def by_seed(methods: dict[str, dict[str, list[float]]], means: Means | None = None) -> Seeds:
    """Each method as a list of runs: a plain method one, a ``--mean`` its methods (seeds), where the side ran
    them all."""
    out = {name: {key: [np.asarray(v)] for key, v in m.items()} for name, m in methods.items()}
    for name, parts in (means or {}).items():
        if all(p in methods for p in parts):  # a side that did not run them all gets no mean
            out[name] = {key: [np.asarray(methods[p][key]) for p in parts] for key, _ in METRICS}
    return out


def interval(runs: list[np.ndarray], groups: list[str]) -> tuple[float, float, float]:
    """Mean with a 95 % interval: one run's over its conversations (each decision's, ``groups``), resampled; several
    runs' (seeds: they ranked the same decisions) a t-interval over the seeds and conversations, the point being the
    mean over seeds."""
    if len(runs) == 1:
        return bootstrap_ci(runs[0].tolist(), groups=groups)
    return over_seeds(runs, groups, shared=True).ci()


def minus(a: list[np.ndarray], b: list[np.ndarray], names: str) -> list[np.ndarray]:
    """Per decision a − b, run by run: the i-th seed of one with the i-th of the other, or every seed against a
    single run."""
    if len(a) != len(b) and 1 not in (len(a), len(b)):
        raise SystemExit(f"error: {names}: {len(a)} and {len(b)} seeds; pair recipes of as many seeds")
    n = max(len(a), len(b))
    return [a[i % len(a)] - b[i % len(b)] for i in range(n)]


def fmt(ci: tuple[float, float, float], sign: bool = False) -> str:
    f = "{:+.3f}" if sign else "{:.3f}"
    return f"{f.format(ci[0])} [{f.format(ci[1])}, {f.format(ci[2])}]"


def table(whole: Path, chunked: Path, means: Means | None = None) -> str:
    keys_w, w = per_query(whole)
    keys_c, c = per_query(chunked)
    w, c = by_seed(w, means), by_seed(c, means)
    if keys_w != keys_c:
        raise SystemExit(f"error: {whole} and {chunked} evaluated different decision points ({len(keys_w)} and "
                         f"{len(keys_c)}); run both on the same log, split and --max-queries")
    for name, parts in (means or {}).items():
        if name not in w and name not in c:
            raise SystemExit(f"error: --mean {name}: {whole} and {chunked} neither ran all of: "
                             f"{', '.join(parts)}; give methods one evaluation ran")
    head = "| method | " + " | ".join(f"{t} whole | {t} chunked | {t} chunked − whole" for _, t in METRICS) + " |"
    groups = [episode for episode, _ in keys_w]
    lines = [f"{len(keys_w)} decisions of {len(set(groups))} conversations; means with 95 % intervals (one run's: its "
             "conversations resampled; a --mean's: a t-interval over its seeds and the conversations)", "", head, "|---|" + "---|" * (3 * len(METRICS))]
    for name in list(w) + [n for n in c if n not in w]:
        cells = []
        for key, _ in METRICS:
            a, b = w.get(name, {}).get(key), c.get(name, {}).get(key)
            cells += [fmt(interval(a, groups)) if a else "—", fmt(interval(b, groups)) if b else "—",
                      fmt(interval(minus(b, a, name), groups), True) if a and b else "—"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def against(whole: Path, chunked: Path, reference: str, means: Means | None = None) -> str:
    """Every method minus ``reference``, decision by decision: whole − its whole, chunked − its chunked, and
    chunked − its whole (a model trained on chunks searching chunks against one searching whole memories)."""
    keys, w = per_query(whole)
    w, c = by_seed(w, means), by_seed(per_query(chunked)[1], means)
    groups = [episode for episode, _ in keys]
    if reference not in w and reference not in c:
        raise SystemExit(f"error: no method {reference!r} in {whole} or {chunked}; give one of the methods they ran")
    pairs = (("whole", w, "whole", w), ("chunked", c, "chunked", c), ("chunked", c, "whole", w))
    head = "| method | " + " | ".join(f"{t} {a} − {reference} {b}" for _, t in METRICS for a, _, b, _ in pairs) + " |"
    lines = [f"paired differences against {reference}; means with 95 % intervals (as above)", "", head,
             "|---|" + "---|" * (len(pairs) * len(METRICS))]
    for name in dict.fromkeys([n for side in (w, c) for n in side if n != reference]):
        cells = []
        for key, _ in METRICS:
            for _, side, _, ref in pairs:
                a, b = ref.get(reference, {}).get(key), side.get(name, {}).get(key)
                cells.append(fmt(interval(minus(b, a, f"{name} − {reference}"), groups), True) if a and b else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.chunk_table", description=__doc__,
                                 formatter_class=RawDefaultsHelp)
    ap.add_argument("whole", type=Path, help="evaluate.py --out folder of the run with whole memories")
    ap.add_argument("chunked", type=Path, help="evaluate.py --out folder of the run with --chunking")
    ap.add_argument("--against", metavar="NAME", default=None,
                    help="also print every method's paired difference against the method NAME on each side")
    ap.add_argument("--mean", action="append", default=[], metavar="NAME=A,B,...",
                    help="add a method NAME: per decision the mean of methods A, B, ... (seeds of one recipe); "
                         "repeat for several")
    args = ap.parse_args(argv)
    means: Means = {}
    for item in args.mean:
        name, _, parts = item.partition("=")
        if not name or len([p for p in parts.split(",") if p]) < 2:
            ap.error(f"--mean takes NAME=A,B[,...] (two or more methods), got {item!r}")
        means[name] = [p for p in parts.split(",") if p]
    for folder in (args.whole, args.chunked):
        if not (folder / "per_query.jsonl").is_file():
            ap.error(f"{folder / 'per_query.jsonl'} not found: give evaluate.py --out folders")
    print(table(args.whole, args.chunked, means))
    if args.against:
        print("\n" + against(args.whole, args.chunked, args.against, means))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
