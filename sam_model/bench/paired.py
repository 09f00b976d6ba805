"""Two methods of one evaluation, decision by decision: MRR and Recall@5 of each with 95 % bootstrap intervals,
and the paired difference A − B (inside an interval that holds 0 = no difference).

Reads the ``per_query.jsonl`` of one ``evaluate.py`` run in which both methods ranked the same decision points,
e.g. a candidate retriever and the shipped one (``--compare shipped=sam-general``), or B from a second run over
the same decisions (``--b-from``: the same log, split and sample, checked decision by decision)::

    python evaluate.py --retriever checkpoints/sam-general3/export --compare shipped=sam-general \\
        --data ../shared/data/sgd/dev --max-queries 600 --seed 0 --baselines none --out runs/eval/sgd
    python -m sam_model.bench.paired runs/eval/sgd sam shipped
    python -m sam_model.bench.paired runs/lodo-new/coding fusion fusion --b-from runs/lodo-old/coding

Pairing matters: two models on the same 600 decisions differ far less than two unpaired intervals suggest,
because most of the spread is in the decisions (some are hard for every model), which the difference cancels.

Every interval counts the conversations, not the decisions, as the units drawn: a conversation's decisions share
its memories and difficulty, so drawn one by one they understate the spread (sam_model.janus.stats.bootstrap_ci).

Two *recipes*, each trained with several seeds: give A and B as comma-separated methods of the one evaluation,
seed by seed (``sam,s0,s2`` against ``shipped,g0,g2``: the i-th of A is paired with the i-th of B). Each figure is
then the mean over seeds, and its interval a Student-t interval that holds the seeds' spread and the decisions'
(sam_model.bench.seeds: with three seeds t is 4.30), since two trainings of one recipe differ by about as much as a
change does and an interval over decisions alone would hide that::

    python evaluate.py --retriever A_SEED1 --compare a0=A_SEED0 --compare a2=A_SEED2 --compare b1=B_SEED1 ...
    python -m sam_model.bench.paired runs/eval/sgd sam,a0,a2 b1,b0,b2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sam_model.bench.chunk_table import METRICS, fmt, per_query
from sam_model.bench.seeds import over_seeds
from sam_model.io import cli_name
from sam_model.janus.stats import bootstrap_ci, paired


def table(folder: Path, a: str, b: str, b_from: Path | None = None) -> str:
    """The markdown table of ``a``, ``b`` and ``a − b`` over the decisions of ``folder/per_query.jsonl`` (``b``
    from ``b_from/per_query.jsonl`` when given: it must hold the same decisions in the same order)."""
    keys, methods = per_query(folder)
    others = methods
    if b_from is not None:
        keys_b, others = per_query(b_from)
        if keys_b != keys:
            raise SystemExit(f"error: {folder} and {b_from} evaluated different decision points ({len(keys)} and "
                             f"{len(keys_b)}); run both on the same log, split and --max-queries")
    for name, where, have in ((a, folder, methods), (b, b_from or folder, others)):
        if name not in have:
            raise SystemExit(f"error: {where / 'per_query.jsonl'} has no method {name!r} (it has: "
                             f"{', '.join(have)}); give one of those names")
    head = "| metric | " + (f"{a} | {b} | {a} − {b} |" if b_from is None else
                             f"{a} ({folder}) | {b} ({b_from}) | difference |")
    groups = [episode for episode, _ in keys]
    lines = [f"{len(keys)} decisions of {len(set(groups))} conversations; means with 95 % bootstrap intervals "
             "(conversations resampled)", "", head, "|---|---|---|---|"]
    for key, title in METRICS:
        x, y = methods[a][key], others[b][key]
        lines.append(f"| {title} | {fmt(bootstrap_ci(x, groups=groups))} | {fmt(bootstrap_ci(y, groups=groups))} | "
                     f"{fmt(paired(x, y, groups=groups), True)} |")
    return "\n".join(lines)


def seeds_table(folder: Path, a: list[str], b: list[str]) -> str:
    """The markdown table of two recipes over seeds: ``a[i]`` and ``b[i]`` are seed i of each (see the module
    doc); means over seeds with 95 % t-intervals over seeds and conversations (sam_model.bench.seeds), and the
    difference A − B paired by seed and decision."""
    if len(a) != len(b):
        raise SystemExit(f"error: A has {len(a)} seeds ({','.join(a)}) and B {len(b)} ({','.join(b)}); give as many "
                         "of each, seed by seed")
    keys, methods = per_query(folder)
    for name in a + b:
        if name not in methods:
            raise SystemExit(f"error: {folder / 'per_query.jsonl'} has no method {name!r} (it has: "
                             f"{', '.join(methods)}); give those names")
    groups = [episode for episode, _ in keys]
    lines = [f"{len(keys)} decisions of {len(set(groups))} conversations, {len(a)} seeds each; means over seeds with "
             "95 % t-intervals (the seeds' spread and the conversations')", "",
             f"| metric | A: {', '.join(a)} | B: {', '.join(b)} | A − B |", "|---|---|---|---|"]
    for key, title in METRICS:
        runs = {m: [np.asarray(methods[x][key]) for x in names] for m, names in (("a", a), ("b", b))}
        est = {m: over_seeds(r, groups, shared=True) for m, r in runs.items()}  # one evaluation: the same decisions
        diff = over_seeds([x - y for x, y in zip(runs["a"], runs["b"])], groups, shared=True)
        per = {m: " / ".join(f"{r.mean():.3f}" for r in runs[m]) for m in runs}
        lines.append(f"| {title} | {fmt(est['a'].ci())} ({per['a']}) | {fmt(est['b'].ci())} ({per['b']}) | "
                     f"{fmt(diff.ci(), True)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.paired"), description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, help="evaluate.py --out folder (its per_query.jsonl)")
    ap.add_argument("a", help="the method under test, as per_query.jsonl names it (the --retriever is 'sam'); "
                              "comma-separated: one recipe's seeds (then B must list as many)")
    ap.add_argument("b", help="the method it is compared with (a --compare NAME or a baseline); comma-separated: "
                              "the other recipe's seeds, in the same seed order as A")
    ap.add_argument("--b-from", type=Path, default=None, metavar="FOLDER",
                    help="read B from this other evaluate.py --out folder (the same decisions) instead of FOLDER")
    args = ap.parse_args(argv)
    for folder in (args.folder, args.b_from):
        if folder is not None and not (folder / "per_query.jsonl").is_file():
            ap.error(f"{folder / 'per_query.jsonl'} not found: give an evaluate.py --out folder")
    a, b = args.a.split(","), args.b.split(",")
    if len(a) > 1 or len(b) > 1:
        if args.b_from is not None:
            ap.error("--b-from compares two single methods; give the seeds of both recipes in one evaluation")
        print(seeds_table(args.folder, a, b))
    else:
        print(table(args.folder, args.a, args.b, args.b_from))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
