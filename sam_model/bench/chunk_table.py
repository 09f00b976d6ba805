"""The chunking table: every method of two evaluations of one log, whole memories against chunks.

Reads the ``per_query.jsonl`` of an ``evaluate.py`` run without ``--chunking`` and of one with it (the same
log and split, so the same decision points in the same order) and prints, per method, MRR and Recall@5 with
95 % bootstrap intervals over the decisions, and the paired difference chunked − whole of each (inside the
interval of 0 = no difference). A method run only on one side gets its figures and no difference. With
``--against NAME`` a second table gives, on each side, every method's paired difference against the method
``NAME`` (say two models of one evaluation: ``--compare`` runs them on the same decisions). ::

    python -m sam_model.bench.chunk_table runs/eval/coding-off runs/eval/coding-on [--against coding]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sam_model.janus.stats import bootstrap_ci

METRICS = (("rr", "MRR"), ("recall@5", "Recall@5"))


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


def fmt(ci: tuple[float, float, float], sign: bool = False) -> str:
    f = "{:+.3f}" if sign else "{:.3f}"
    return f"{f.format(ci[0])} [{f.format(ci[1])}, {f.format(ci[2])}]"


def table(whole: Path, chunked: Path) -> str:
    keys_w, w = per_query(whole)
    keys_c, c = per_query(chunked)
    if keys_w != keys_c:
        raise SystemExit(f"error: {whole} and {chunked} evaluated different decision points ({len(keys_w)} and "
                         f"{len(keys_c)}); run both on the same log, split and --max-queries")
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


def against(whole: Path, chunked: Path, reference: str) -> str:
    """Every method minus ``reference``, decision by decision: whole − its whole, chunked − its chunked, and
    chunked − its whole (a model trained on chunks searching chunks against one searching whole memories)."""
    w, c = per_query(whole)[1], per_query(chunked)[1]
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
    args = ap.parse_args(argv)
    for folder in (args.whole, args.chunked):
        if not (folder / "per_query.jsonl").is_file():
            ap.error(f"{folder / 'per_query.jsonl'} not found: give evaluate.py --out folders")
    print(table(args.whole, args.chunked))
    if args.against:
        print("\n" + against(args.whole, args.chunked, args.against))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
