"""The long-horizon table: one evaluation per life size, one table.

    python -m sam_model.bench.lives --retriever checkpoints/tools/export --data ../shared/data/sgd/dev \\
        --compare content-only=checkpoints/tools_content_only/export --lives 1,4,8,16 --out runs/lives/sgd-dev

Each life size is a plain ``evaluate.py`` run (``--life N``: every N consecutive episodes concatenated into
one agent life, sam_model.data.lives) written to ``OUT/life-N/``; the table printed at the end (and written
to ``OUT/lives.md``) has one row per method and life size.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sam_model.io import DefaultsHelp, atomic_write_text

COLUMNS = ("mrr", "recall@1", "recall@5", "recall@10", "coverage@5", "grounding@5")


def table(out: Path, lives: list[int]) -> str:
    """Markdown: method × life size, from ``OUT/life-N/report.json``."""
    rows, cols = [], None
    for n in lives:
        report = json.loads((out / f"life-{n}" / "report.json").read_text())
        cols = cols or [c for c in COLUMNS if any(c in v for v in report["methods"].values())]
        for method, values in report["methods"].items():
            rows.append([method, str(n), f"{report['n_queries']}", *(f"{values[c]:.3f}" if c in values else "–"
                                                                      for c in cols)])
    head = ["method", "life", "decisions", *(cols or [])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in sorted(rows, key=lambda r: (r[0], int(r[1])))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.lives",
                                description="Run evaluate.py once per life size and print one table (long horizon).",
                                formatter_class=DefaultsHelp)
    p.add_argument("--retriever", required=True, help="the exported SAM retriever under test")
    p.add_argument("--data", required=True, help="agent log, transcript file or SGD split folder")
    p.add_argument("--out", required=True, help="output folder: OUT/life-N/ per life size, OUT/lives.md")
    p.add_argument("--lives", default="1,4,8,16", help="comma-separated life sizes (default 1,4,8,16)")
    p.add_argument("--split", default="all", choices=("all", "train", "test"), help="transcripts: the fixed split")
    p.add_argument("--compare", action="append", default=[], metavar="NAME=DIR", help="more retrievers, as evaluate.py")
    p.add_argument("--baselines", default="recency,bm25,dense", help="baselines, as evaluate.py (default "
                                                                     "recency,bm25,dense)")
    p.add_argument("--latency-queries", type=int, default=20, help="queries timed per run (default 20)")
    p.add_argument("--task-start", choices=("known", "unknown"), default="known",
                   help="whether queries say where their task began (as evaluate.py; default known)")
    p.add_argument("--table-only", action="store_true", help="only print the table of runs already in OUT")
    args = p.parse_args(argv)
    try:
        lives = [int(x) for x in args.lives.split(",") if x.strip()]
    except ValueError:
        p.error(f"--lives must be comma-separated integers, got {args.lives!r}")
    if not lives or min(lives) < 1:
        p.error("--lives needs life sizes >= 1")
    out = Path(args.out)
    if not args.table_only:
        from sam_model.evaluation.run import main as evaluate

        for n in lives:
            print(f"== life {n}", file=sys.stderr, flush=True)
            code = evaluate(["--retriever", args.retriever, "--data", args.data, "--split", args.split,
                             "--life", str(n), "--out", str(out / f"life-{n}"), "--baselines", args.baselines,
                             "--latency-queries", str(args.latency_queries), "--tsne-points", "500",
                             "--task-start", args.task_start,
                             *[x for c in args.compare for x in ("--compare", c)]])
            if code:
                return code
    md = table(out, lives)
    atomic_write_text(out / "lives.md", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
