"""Where one method beats another: the decisions of an evaluation split by what their label is.

A mean MRR hides which decisions a change wins and which it loses. Each decision point is put in one group, by the
first that holds one of its labels (``relevant``): ``used`` (a memory an earlier call of its task took values from,
sam_model.evaluation.ranking.used_memories: what ``used-first`` puts first), ``opening`` (its task's opening, the
first user event: what ``task-first`` puts first), ``recent`` (one of the ``--recent`` newest memories before it) or
``other``; ``label not used, task has used`` and ``label not used, no used`` split the last three by whether the task
had any used memory (there a used-first ordering ranks the label below every used one). ``--by origin`` groups the
decisions instead by where their labels come from, the kinds of the labels' memories (``result``, ``user``,
``result+user``, ...): a model that ranks what users said first loses where every needed value is in a tool result
(the freight walkthrough, README "Why sam-general loses on the freight desk"). Per group: the decisions,
each method's MRR, and what the group adds to A − B over all decisions (its decisions' summed difference / all
decisions), so the groups' contributions add up to the whole difference.

Reads the ``per_query.jsonl`` of ``evaluate.py`` runs (or bench.lodo's fold folders) and the data that made them, read
again as evaluate.py read it (the same ``--split``, ``--max-queries`` and seed: bench.lodo's SGD sample is seeded by
the run's seed). Several runs (seeds) are averaged, each with its own seed::

    python -m sam_model.bench.label_groups runs/served-used/lodo-used-s0/sgd runs/served-used/lodo-used-s1/sgd \\
        --seeds 0,1 --data ../shared/data/sgd/dev --max-queries 600 \\
        --methods reuse+used-latest,used-first,task-first --a reuse+used-latest --b used-first
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sam_model.data.examples import MemoryRecord, RetrievalExample
from sam_model.evaluation.ranking import task_statement, used_memories
from sam_model.io import cli_name

GROUPS = ("used", "opening", "recent", "other")
BY = ("group", "origin")  # --by: the label groups above, or the kinds of the labels' memories
SPLITS = ("label not used, task has used", "label not used, no used")


def label_group(memories: Sequence[MemoryRecord], ex: RetrievalExample, recent: int = 2) -> tuple[str, bool]:
    """The decision's group (:data:`GROUPS`, the first that holds one of its labels) and whether its task had any
    used memory. ``recent``: how many of the newest memories before the decision count as recent."""
    used = {memories[p].id for p in used_memories(memories, ex)}
    opening = {memories[p].id for p in task_statement(memories, ex)}
    newest = {memories[p].id for p in range(max(ex.episode_start, ex.cutoff - recent), ex.cutoff)}
    for name, ids in zip(GROUPS, (used, opening, newest)):
        if ex.relevant_ids & ids:
            return name, bool(used)
    return "other", bool(used)


def label_origin(by_id: dict[str, MemoryRecord], ex: RetrievalExample) -> str:
    """Where the decision's labels come from: their memories' kinds, sorted, joined by "+" ("result+user")."""
    return "+".join(sorted({by_id[i].kind for i in ex.relevant_ids if i in by_id})) or "none"


def rows_with_groups(per_query: Path, memories: Sequence[MemoryRecord], examples: Sequence[RetrievalExample],
                     recent: int = 2) -> list[dict]:
    """The lines of ``per_query`` (a file or the folder holding it), each with its ``group``, ``has_used`` and
    ``origin``."""
    path = per_query / "per_query.jsonl" if per_query.is_dir() else per_query
    by_key = {(ex.episode_id, ex.step): ex for ex in examples}
    by_id = {m.id: m for m in memories}
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        ex = by_key.get((row["episode_id"], row["step"]))
        if ex is None:
            raise SystemExit(f"error: {path}:{n}: decision {row['episode_id']} step {row['step']} is not in the data "
                             "given; give the --data, --split, --max-queries and --seeds the run evaluated")
        row["group"], row["has_used"] = label_group(memories, ex, recent)
        row["origin"] = label_origin(by_id, ex)
        rows.append(row)
    return rows


def table(runs: Sequence[list[dict]], methods: Sequence[str], a: str, b: str, by: str = "group") -> str:
    """The markdown table: per group (``by``: the label groups, or the labels' origins, the most decisions first),
    decisions per run, each method's MRR and the group's share of A − B (both means over the runs)."""
    for rows in runs:
        for name in {*methods, a, b}:
            if rows and name not in rows[0]["methods"]:
                raise SystemExit(f"error: per_query.jsonl has no method {name!r} (it has: "
                                 f"{', '.join(rows[0]['methods'])}); give one of those names")

    def select(rows: list[dict], group: str) -> list[dict]:
        if group == "all":
            return rows
        if by == "origin":
            return [r for r in rows if r["origin"] == group]
        if group in SPLITS:
            return [r for r in rows if r["group"] != "used" and r["has_used"] == (group == SPLITS[0])]
        return [r for r in rows if r["group"] == group]

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs)

    counts = Counter(r["origin"] for rows in runs for r in rows)
    names = (*GROUPS, "all", *SPLITS) if by == "group" else (*sorted(counts, key=lambda o: (-counts[o], o)), "all")
    lines = [f"| {by} | decisions | {' | '.join(methods)} | share of {a} − {b} |",
             "|---|---|" + "---|" * len(methods) + "---|"]
    for group in names:
        picked = [select(rows, group) for rows in runs]
        n = mean([len(p) for p in picked])
        if n == 0:
            continue
        mrr = [mean([mean([r["methods"][m]["rr"] for r in p]) for p in picked if p]) for m in methods]
        share = mean([sum(r["methods"][a]["rr"] - r["methods"][b]["rr"] for r in p) / len(rows)
                      for p, rows in zip(picked, runs)])
        lines.append(f"| {group} | {n:.0f} | " + " | ".join(f"{x:.3f}" for x in mrr) + f" | {share:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import build_eval_data, load_episodes

    p = argparse.ArgumentParser(prog=cli_name("sam_model.bench.label_groups"), description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="per_query.jsonl files or the folders holding them")
    p.add_argument("--data", required=True, help="the log the runs evaluated")
    p.add_argument("--split", default="test", help="its split, as evaluate.py's --split (default test)")
    p.add_argument("--max-queries", type=int, default=None, help="the runs' decision sample (evaluate.py's)")
    p.add_argument("--seeds", default="0", help="each run's seed, comma-separated (one for all; default 0)")
    p.add_argument("--methods", required=True, help="the methods whose MRR to show, comma-separated")
    p.add_argument("--a", required=True, help="A of the A − B column")
    p.add_argument("--b", required=True, help="B of the A − B column")
    p.add_argument("--recent", type=int, default=2, help="newest memories before a decision counted recent (default 2)")
    p.add_argument("--by", choices=BY, default="group",
                   help="split by the label groups, or by the labels' origin: their memories' kinds (default group)")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    if len(seeds) == 1:
        seeds *= len(args.runs)
    if len(seeds) != len(args.runs):
        p.error(f"--seeds: {len(seeds)} seeds for {len(args.runs)} runs; give one, or one per run")
    episodes, _ = load_episodes(args.data, False, SourceOptions(split=args.split), False)
    runs = []
    for run, seed in zip(args.runs, seeds):
        data = build_eval_data(args.data, episodes, "episode", args.max_queries, seed)
        runs.append(rows_with_groups(run, data.memories, data.examples, args.recent))
    print(table(runs, [m.strip() for m in args.methods.split(",")], args.a, args.b, args.by))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
