"""The chunking table: every method of two evaluations of one log, whole memories against chunks.

Reads the ``per_query.jsonl`` of an ``evaluate.py`` run without ``--chunking`` and of one with it (the same
log and split, so the same decision points in the same order) and prints, per method, MRR and Recall@5 with
95 % bootstrap intervals over the decisions, and the paired difference chunked − whole of each (inside the
interval of 0 = no difference). A method run only on one side gets its figures and no difference. With
``--against NAME`` a second table gives, on each side, every method's paired difference against the method
``NAME`` (say two models of one evaluation: ``--compare`` runs them on the same decisions). ``--mean
NAME=A,B,C`` adds a method whose value at each decision is the mean of methods A, B, C (runs of one recipe with
other seeds), so a recipe is compared over its seeds, still decision by decision. ::

    python -m sam_model.bench.chunk_table runs/eval/coding-off runs/eval/coding-on [--against coding]
        [--mean coding3=coding,coding-s1,coding-s2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sam_model.janus.stats import bootstrap_ci

METRICS = (("rr", "MRR"), ("recall@5", "Recall@5"))


Means = dict[str, list[str]]


def per_query(folder: Path, means: Means | None = None
              ) -> tuple[list[tuple[str, int]], dict[str, dict[str, list[float]]]]:
    """The decisions (episode, step) of an evaluation and, per method and metric, one value per decision
    (with ``means``: also each named mean of methods, decision by decision)."""
    rows = [json.loads(line) for line in (folder / "per_query.jsonl").read_text(encoding="utf-8").splitlines()]
    keys = [(r["episode_id"], r["step"]) for r in rows]
    out: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        for name, m in r["methods"].items():
            for key, _ in METRICS:
                out.setdefault(name, {}).setdefault(key, []).append(float(m[key]))
    for name, parts in (means or {}).items():
        if not all(p in out for p in parts):
            continue  # a side that did not run them all gets no mean
        out[name] = {key: [sum(v) / len(parts) for v in zip(*(out[p][key] for p in parts))] for key, _ in METRICS}
    return keys, out


def fmt(ci: tuple[float, float, float], sign: bool = False) -> str:
    f = "{:+.3f}" if sign else "{:.3f}"
    return f"{f.format(ci[0])} [{f.format(ci[1])}, {f.format(ci[2])}]"


def table(whole: Path, chunked: Path, means: Means | None = None) -> str:
    keys_w, w = per_query(whole, means)
    keys_c, c = per_query(chunked, means)
    if keys_w != keys_c:
        raise SystemExit(f"error: {whole} and {chunked} evaluated different decision points ({len(keys_w)} and "
                         f"{len(keys_c)}); run both on the same log, split and --max-queries")
    for name, parts in (means or {}).items():
        if name not in w and name not in c:
            raise SystemExit(f"error: --mean {name}: {whole} and {chunked} neither ran all of: "
                             f"{', '.join(parts)}; give methods one evaluation ran")
    head = "| method | " + " | ".join(f"{t} whole | {t} chunked | {t} chunked − whole" for _, t in METRICS) + " |"
    lines = [f"{len(keys_w)} decisions; means with 95 % bootstrap intervals", "", head,
             "|---|" + "---|" * (3 * len(METRICS))]
    for name in list(w) + [n for n in c if n not in w]:
        cells = []
        for key, _ in METRICS:
            a, b = w.get(name, {}).get(key), c.get(name, {}).get(key)
            cells += [fmt(bootstrap_ci(a)) if a else "—", fmt(bootstrap_ci(b)) if b else "—",
                      fmt(bootstrap_ci([y - x for x, y in zip(a, b)]), True) if a and b else "—"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def against(whole: Path, chunked: Path, reference: str, means: Means | None = None) -> str:
    """Every method minus ``reference``, decision by decision: whole − its whole, chunked − its chunked, and
    chunked − its whole (a model trained on chunks searching chunks against one searching whole memories)."""
    w, c = per_query(whole, means)[1], per_query(chunked, means)[1]
    if reference not in w and reference not in c:
        raise SystemExit(f"error: no method {reference!r} in {whole} or {chunked}; give one of the methods they ran")
    pairs = (("whole", w, "whole", w), ("chunked", c, "chunked", c), ("chunked", c, "whole", w))
    head = "| method | " + " | ".join(f"{t} {a} − {reference} {b}" for _, t in METRICS for a, _, b, _ in pairs) + " |"
    lines = [f"paired differences against {reference}; means with 95 % bootstrap intervals", "", head,
             "|---|" + "---|" * (len(pairs) * len(METRICS))]
    for name in dict.fromkeys([n for side in (w, c) for n in side if n != reference]):
        cells = []
        for key, _ in METRICS:
            for _, side, _, ref in pairs:
                a, b = ref.get(reference, {}).get(key), side.get(name, {}).get(key)
                cells.append(fmt(bootstrap_ci([y - x for x, y in zip(a, b)]), True) if a and b else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.chunk_table", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
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
