"""Paired runs of the served-memory load bench: B − A with a 95 % t-interval, per figure.

    python -m sam_model.bench.serve_pairs 'runs/thr/p*-t1.json' 'runs/thr/p*-t2.json' [--names "1 thread,2 threads"]

A and B are the ``--json`` files of ``python -m sam_model.bench.serve load`` runs made in alternating pairs (A then
B, B then A, ...: the order cancels a machine that speeds up or slows down during the slot); each argument is a
glob or a comma-separated list, and the i-th file of A (sorted by name) is paired with the i-th of B (each file's
first think time: run one ``--think-ms`` per file). A latency percentile moves by tens of ms between two runs of
one configuration (a 40-s run's p99 is its 3-6 slowest searches), so one pair says little; the paired difference
over several pairs, and its interval, say whether B differs from A. The interval is Student's t over the pairs'
differences (mean ± t₀.₉₇₅,ₙ₋₁ · s / √n); an interval that holds 0 is no difference. Printed: a markdown table,
one row per figure (requests/s, search p50/p99/mean, add p99, the in-process encode of 16 queries), with A's and
B's mean and each run's value.
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

from sam_model.io import DefaultsHelp, cli_name, given_twice
from sam_model.janus.stats import t_interval

FIGURES = {  # name: where it is in a load run's JSON (the run's first think time)
    "requests/s": ("run", "qps"),
    "search p50 ms": ("run", "search", "p50_ms"),
    "search p99 ms": ("run", "search", "p99_ms"),
    "search mean ms": ("run", "search", "mean_ms"),
    "add p99 ms": ("run", "add", "p99_ms"),
    "16 queries in one forward, in-process ms": ("breakdown", "encode_16_in_one_forward_ms"),
}


def files(spec: str) -> list[Path]:
    """A glob or a comma-separated list of files, sorted by name."""
    names = sorted(glob.glob(spec)) if any(c in spec for c in "*?[") else [s for s in spec.split(",") if s]
    if not names:
        raise SystemExit(f"serve_pairs: no file matches {spec!r}; give the --json files of load runs")
    if (twice := given_twice(names)) is not None:  # one run paired twice: a difference it does not have
        raise SystemExit(f"serve_pairs: {twice} is given twice in {spec!r}; give each load run once")
    return [Path(n) for n in names]


def figure(run: dict, path: tuple[str, ...], source: Path) -> float:
    """One figure of a load run's JSON; a file that is not one is named."""
    node = {"run": (run.get("runs") or [{}])[0], "breakdown": run.get("breakdown", {})}
    try:
        for key in path:
            node = node[key]
        return float(node)
    except (KeyError, TypeError, ValueError):
        raise SystemExit(f"{source}: no {'.'.join(path)} in it; give the --json files of "
                         "`python -m sam_model.bench.serve load` runs") from None


def table(a: list[str | Path], b: list[str | Path], names: tuple[str, str] = ("A", "B")) -> str:
    """The markdown table of A's and B's means and B − A with its 95 % t-interval over the pairs."""
    a, b = [Path(x) for x in a], [Path(x) for x in b]
    if len(a) != len(b) or len(a) < 2:
        raise SystemExit(f"serve_pairs: give as many B runs as A runs, at least two each (got {len(a)} and {len(b)})")
    runs = []
    for path in a + b:
        try:
            runs.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as err:
            raise SystemExit(f"{path}: cannot read it as JSON ({err}); give the --json files of load runs") from None
    ra, rb = runs[:len(a)], runs[len(a):]
    head = f"| figure | {names[0]}: each run | mean | {names[1]}: each run | mean | {names[1]} − {names[0]} [95 % CI] |"
    lines = [head, "|---|---|---|---|---|---|"]
    for name, path in FIGURES.items():
        xa = [figure(r, path, p) for r, p in zip(ra, a)]
        xb = [figure(r, path, p) for r, p in zip(rb, b)]
        d, lo, hi = t_interval([y - x for x, y in zip(xa, xb)])
        lines.append(f"| {name} | {' / '.join(f'{x:g}' for x in xa)} | {sum(xa) / len(xa):.1f} | "
                     f"{' / '.join(f'{x:g}' for x in xb)} | {sum(xb) / len(xb):.1f} | "
                     f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]{'' if lo <= 0 <= hi else ' *'} |")
    return "\n".join(lines) + f"\n\n{len(a)} pairs; * marks an interval without 0 (a difference)."


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.serve_pairs"),
                                description=__doc__.split("\n\n")[0],
                                formatter_class=DefaultsHelp)
    p.add_argument("a", help="A's --json files of load runs: a glob (quoted) or a comma-separated list")
    p.add_argument("b", help="B's, as many, paired in the order of their names with A's")
    p.add_argument("--names", default="A,B", help="the two columns' names, comma-separated")
    args = p.parse_args(argv)
    names = tuple(args.names.split(",", 1)) if "," in args.names else (args.names, "B")
    print(table(files(args.a), files(args.b), names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
