"""Where does the state help? Mean reciprocal rank of every method of an evaluation on subsets of
its decision points, read from ``per_query.jsonl``.

The mean over all decisions hides the case SAM is built for: a decision whose own words say
nothing about the memory it needs ("ok, go ahead"). The subsets are fixed by the log, never by
the results:

- the observation shares no content word (3+ letters, not a stop word) with any relevant memory,
  or it shares one;
- the decision needs one memory, or several;
- at most two, or three or more, earlier memories of the episode set slot values (how many
  plausible "the user gave a value here" candidates a prior alone must choose between).

    python -m sam_model.bench.subsets EVAL_DIR LOG [--versus content-only] [--skip-bad-lines]

``EVAL_DIR`` is an ``evaluate.py --out`` folder (episode scope) and ``LOG`` the log it evaluated.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from sam_model.evaluation.data import load_eval_data
from sam_model.io import SAMFileError

STOP = frozenset("the a an and or to of for in on at is it i me my you your we be can that this with "
                 "please yes no ok okay".split())


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in STOP}


def subset_table(eval_dir: str | Path, log: str | Path, skip_bad_lines: bool = False
                 ) -> tuple[list[str], dict, list[dict]]:
    """(method names, {subset: [n, {method: MRR}]}, the per-query rows) for ``eval_dir/per_query.jsonl``."""
    path = Path(eval_dir) / "per_query.jsonl"
    if not path.exists():
        raise SAMFileError(f"{path} not found: run evaluate.py --out {eval_dir} first (it writes per_query.jsonl)")
    report = Path(eval_dir) / "report.json"
    if report.exists() and json.loads(report.read_text()).get("scope") != "episode":
        raise SAMFileError(f"{report}: this evaluation is not in episode scope; the subsets count a decision's "
                           "episode memories, so run evaluate.py with --scope episode")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise SAMFileError(f"{path} is empty: nothing to split")
    data = load_eval_data(log, "episode", skip_bad_lines=skip_bad_lines)
    memory = {m.id: m for m in data.memories}
    example = {(e.episode_id, e.step): e for e in data.examples}
    names = list(rows[0]["methods"])
    groups: dict[str, list[dict]] = defaultdict(list)
    for i, row in enumerate(rows, start=1):
        ex = example.get((row["episode_id"], row["step"]))
        if ex is None:
            raise SAMFileError(f"{path}:{i}: decision ({row['episode_id']}, step {row['step']}) is not in {log}: "
                               "give the log this evaluation was run on")
        relevant_words = set().union(*(words(memory[r].content) for r in row["relevant"]))
        setters = sum(1 for j in ex.candidate_range("episode") if data.memories[j].sets)
        groups["all"].append(row)
        groups["observation shares a word with a relevant memory" if words(row["observation"]) & relevant_words
               else "observation shares no word with any relevant memory"].append(row)
        groups["needs several memories" if len(row["relevant"]) > 1 else "needs one memory"].append(row)
        groups["3+ earlier memories set slots" if setters >= 3 else "0-2 earlier memories set slots"].append(row)
    table = {k: [len(v), {n: sum(r["methods"][n]["rr"] for r in v) / len(v) for n in names}]
             for k, v in groups.items()}
    return names, table, rows


def head_to_head(rows: list[dict], a: str, b: str) -> tuple[int, int, int]:
    """Decisions where method ``a`` puts the first relevant memory higher than ``b``, lower, the same."""
    better = sum(r["methods"][a]["rr"] > r["methods"][b]["rr"] for r in rows)
    worse = sum(r["methods"][a]["rr"] < r["methods"][b]["rr"] for r in rows)
    return better, worse, len(rows) - better - worse


def to_markdown(names: list[str], table: dict) -> str:
    lines = ["| decisions | n | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for subset, (n, mrr) in table.items():
        lines.append(f"| {subset} | {n} | " + " | ".join(f"{mrr[m]:.3f}" for m in names) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.subsets",
                                 description="MRR of every method of an evaluate.py run on subsets of its "
                                             "decision points (see the module docstring); prints a markdown table.")
    ap.add_argument("eval_dir", help="an evaluate.py --out folder (episode scope) holding per_query.jsonl")
    ap.add_argument("log", help="the agent log (or SGD split folder) that evaluation read")
    ap.add_argument("--versus", default="content-only", metavar="NAME",
                    help="also count the decisions where the first method (sam) ranks better or worse than "
                         "this one (default content-only; skipped when the evaluation has no such method)")
    ap.add_argument("--skip-bad-lines", action="store_true", help="skip malformed log lines, as evaluate.py did")
    args = ap.parse_args(argv)
    try:
        names, table, rows = subset_table(args.eval_dir, args.log, args.skip_bad_lines)
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(to_markdown(names, table))
    if args.versus in names and args.versus != names[0]:
        better, worse, same = head_to_head(rows, names[0], args.versus)
        print(f"\n{names[0]} vs {args.versus}: first relevant memory ranked higher on {better} decisions, "
              f"lower on {worse}, the same on {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
