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

Two *recipes*, each trained with several seeds: give A and B as comma-separated methods of the one evaluation,
seed by seed (``sam,s0,s2`` against ``shipped,g0,g2``: the i-th of A is paired with the i-th of B). Each figure is
then the mean over seeds, and its interval a two-level bootstrap (seeds drawn with replacement, then the
decisions, one draw for all of them: one evaluation, the same decisions; sam_model.bench.seeds.two_level), since two trainings of one recipe differ by about as
much as a change does and an interval over decisions alone would hide that::

    python evaluate.py --retriever A_SEED1 --compare a0=A_SEED0 --compare a2=A_SEED2 --compare b1=B_SEED1 ...
    python -m sam_model.bench.paired runs/eval/sgd sam,a0,a2 b1,b0,b2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sam_model.bench.chunk_table import METRICS, fmt, per_query
from sam_model.bench.seeds import ci, two_level
from sam_model.io import cli_name
from sam_model.janus.stats import bootstrap_ci


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
    lines = [f"{len(keys)} decisions; means with 95 % bootstrap intervals", "", head, "|---|---|---|---|"]
    for key, title in METRICS:
        x, y = methods[a][key], others[b][key]
        lines.append(f"| {title} | {fmt(bootstrap_ci(x))} | {fmt(bootstrap_ci(y))} | "
                     f"{fmt(bootstrap_ci([p - q for p, q in zip(x, y)]), True)} |")
    return "\n".join(lines)


def seeds_table(folder: Path, a: list[str], b: list[str], boot: int = 4000) -> str:
    """The markdown table of two recipes over seeds: ``a[i]`` and ``b[i]`` are seed i of each (see the module
    doc); means over seeds with two-level bootstrap intervals, and the difference A − B paired by seed and
    decision."""
    if len(a) != len(b):
        raise SystemExit(f"error: A has {len(a)} seeds ({','.join(a)}) and B {len(b)} ({','.join(b)}); give as many "
                         "of each, seed by seed")
    keys, methods = per_query(folder)
    for name in a + b:
        if name not in methods:
            raise SystemExit(f"error: {folder / 'per_query.jsonl'} has no method {name!r} (it has: "
                             f"{', '.join(methods)}); give those names")
    lines = [f"{len(keys)} decisions, {len(a)} seeds each; means over seeds with 95 % intervals (seeds, then "
             "decisions, resampled)", "", f"| metric | A: {', '.join(a)} | B: {', '.join(b)} | A − B |",
             "|---|---|---|---|"]
    for key, title in METRICS:
        seeds = [{"a": np.asarray(methods[x][key]), "b": np.asarray(methods[y][key])} for x, y in zip(a, b)]
        reps = two_level(seeds, np.random.default_rng(0), boot, shared=True)  # one evaluation: the same decisions
        point = {m: float(np.mean([s[m].mean() for s in seeds])) for m in ("a", "b")}
        per = {m: " / ".join(f"{s[m].mean():.3f}" for s in seeds) for m in ("a", "b")}
        lines.append(f"| {title} | {fmt(ci(point['a'], reps['a']))} ({per['a']}) | "
                     f"{fmt(ci(point['b'], reps['b']))} ({per['b']}) | "
                     f"{fmt(ci(point['a'] - point['b'], reps['a'] - reps['b']), True)} |")
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
